//! Sampling (`sampling/createMessage`, server → client), with tool use.
//!
//! Deprecated by the protocol (SEP-2577, from 2026-07-28): kept working
//! in every revision that has it; build nothing new on it.

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::macros::serialize_opt_f64;
use crate::types::{
    AudioContent, ContentBlock, ImageContent, JsonObject, Meta, Role, TaskMetadata, TextContent,
    Tool,
};

open_tagged_enum! {
    /// A block of content in a sampling message.
    pub enum SamplingMessageContentBlock {
        /// `"type": "text"`.
        Text(TextContent) => "text",
        /// `"type": "image"`.
        Image(ImageContent) => "image",
        /// `"type": "audio"`.
        Audio(AudioContent) => "audio",
        /// `"type": "tool_use"`: the assistant asks for a tool call.
        ToolUse(ToolUseContent) => "tool_use",
        /// `"type": "tool_result"`: the result of a tool call.
        ToolResult(ToolResultContent) => "tool_result",
    }
}

visit_rest_via_value!(ToolUseContent, ToolResultContent);

/// The `content` of a sampling message: one block or an array of blocks, as
/// sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    Single(SamplingMessageContentBlock),
    /// An array of blocks.
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl SamplingContent {
    /// The blocks, whichever form they were sent in.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(block) => std::slice::from_ref(block),
            SamplingContent::Multiple(blocks) => blocks,
        }
    }
}

impl From<SamplingMessageContentBlock> for SamplingContent {
    fn from(block: SamplingMessageContentBlock) -> Self {
        SamplingContent::Single(block)
    }
}

impl From<Vec<SamplingMessageContentBlock>> for SamplingContent {
    fn from(blocks: Vec<SamplingMessageContentBlock>) -> Self {
        SamplingContent::Multiple(blocks)
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match Value::deserialize(deserializer)? {
            Value::Array(items) => items
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<Vec<_>, _>>()
                .map(SamplingContent::Multiple)
                .map_err(D::Error::custom),
            single => serde_json::from_value(single)
                .map(SamplingContent::Single)
                .map_err(D::Error::custom),
        }
    }
}

/// A message issued to or received from an LLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A request from the assistant to call a tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// A unique id for this tool use, matched by the tool result.
    pub id: String,
    /// The name of the tool.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata (to be preserved in later requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The result of a tool use, given back to the assistant.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The id of the tool use this answers.
    pub tool_use_id: String,
    /// The unstructured result (as in a tool call result).
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed (false when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata (to be preserved in later requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's preferences for model selection. Advisory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Hints, evaluated in order (the first match wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, from 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub intelligence_priority: Option<f64>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A hint for model selection. Keys other than `name` are left to the
/// client to interpret (kept in `extra`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A substring of a model name (`sonnet`, `claude`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_string_enum! {
    /// How the model may use tools.
    pub enum ToolChoiceMode {
        /// The model decides (the default).
        Auto => "auto",
        /// The model must use at least one tool.
        Required => "required",
        /// The model must not use tools.
        None => "none",
    }
}

/// Controls tool selection in a sampling request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode (`auto` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_string_enum! {
    /// Which servers' context to include in a sampling prompt.
    pub enum IncludeContext {
        /// No context (the default).
        None => "none",
        /// Context from the requesting server (soft-deprecated).
        ThisServer => "thisServer",
        /// Context from all servers (soft-deprecated).
        AllServers => "allServers",
    }
}

open_string_enum! {
    /// Why sampling stopped. An open set: providers may send their own.
    pub enum StopReason {
        /// The natural end of the assistant's turn.
        EndTurn => "endTurn",
        /// A stop sequence was met.
        StopSequence => "stopSequence",
        /// The token limit was reached.
        MaxTokens => "maxTokens",
        /// The model wants to use tools.
        ToolUse => "toolUse",
    }
}

/// Parameters of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences (the client may ignore them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt (the client may change or omit it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which context to include (`none` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// The sampling temperature.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub temperature: Option<f64>,
    /// The maximum number of tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata to pass through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (requires the `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model uses tools (requires the `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Present to ask for task-augmented execution (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's result of `sampling/createMessage`: the sampled message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// The model that generated the message.
    pub model: String,
    /// Why sampling stopped, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// A text message sampled from `model`, spoken by the assistant, with no
    /// stop reason (add one with [`with_stop_reason`](Self::with_stop_reason)).
    ///
    /// ```
    /// use mcp_proto::types::{CreateMessageResult, StopReason};
    ///
    /// let result = CreateMessageResult::text("claude-sonnet-4", "Paris.")
    ///     .with_stop_reason(StopReason::EndTurn);
    /// assert_eq!(
    ///     serde_json::to_value(&result).unwrap(),
    ///     serde_json::json!({
    ///         "role": "assistant",
    ///         "content": {"type": "text", "text": "Paris."},
    ///         "model": "claude-sonnet-4",
    ///         "stopReason": "endTurn"
    ///     })
    /// );
    /// ```
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::Single(SamplingMessageContentBlock::Text(TextContent::new(
                text,
            ))),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same result with a stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = Some(stop_reason);
        self
    }
}
