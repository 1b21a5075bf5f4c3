//! Tools: definitions, listing and calling.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::{ContentBlock, Cursor, Icon, JsonObject, Meta, TaskMetadata, TextContent};

/// A tool the client can call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The programmatic name.
    pub name: String,
    /// A human-readable display name (takes precedence over
    /// `annotations.title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (a hint to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the tool's arguments. A server that omits it gets
    /// `{"type": "object"}`.
    #[serde(default)]
    pub input_schema: ToolSchema,
    /// Execution-related properties (task support).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// The JSON Schema of `structuredContent` in the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<ToolSchema>,
    /// Hints about the tool's behaviour. Untrusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons a user interface may show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Tool {
    /// The name to show a user: `title`, else `annotations.title`, else
    /// `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }
}

fn object_type() -> String {
    "object".to_owned()
}

/// A tool's `inputSchema` or `outputSchema`: a JSON Schema object whose root
/// is `type: "object"`.
///
/// The known top-level keywords have fields; every other keyword
/// (`additionalProperties`, `$defs`, `description`, ...) is kept in `extra`,
/// and property schemas are kept whole, so a schema re-encodes as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The `$schema` dialect URI (JSON Schema 2020-12 when absent).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The root type: `"object"` (the default when absent; kept as sent
    /// otherwise).
    #[serde(rename = "type", default = "object_type")]
    pub schema_type: String,
    /// Property schemas by name, kept whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<JsonObject>,
    /// Names of the required properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Every other keyword, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Default for ToolSchema {
    /// `{"type": "object"}`.
    fn default() -> Self {
        ToolSchema {
            schema: None,
            schema_type: object_type(),
            properties: None,
            required: None,
            extra: JsonObject::new(),
        }
    }
}

/// Additional properties describing a tool. All are hints: never trust them
/// from an untrusted server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true; meaningful
    /// only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect
    /// (default false; meaningful only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default
    /// true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_string_enum! {
    /// Whether a tool supports task-augmented execution.
    pub enum TaskSupport {
        /// The tool does not support tasks (the default when absent).
        Forbidden => "forbidden",
        /// The tool may be called as a task.
        Optional => "optional",
        /// The tool must be called as a task.
        Required => "required",
    }
}

/// Execution-related properties of a tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support (`"forbidden"` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// The position after this page; more results may follow if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The name of the tool.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Present to ask for task-augmented execution (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Metadata; `progressToken` asks for progress notifications.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolRequestParams {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Option<JsonObject>) -> Self {
        CallToolRequestParams { name: name.into(), arguments, ..Default::default() }
    }
}

/// The result of `tools/call`.
///
/// A tool failure is a result with `isError: true`, not a protocol error.
/// `content` defaults to empty when a server omits it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The unstructured result.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The structured result (an object, conforming to the tool's
    /// `outputSchema` if it has one). Any JSON value is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call ended in an error (false when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(CallToolResult {
    content: "content",
    structured_content: "structuredContent",
    is_error: "isError",
    meta: "_meta",
});

impl CallToolResult {
    /// Decodes a result from its JSON text: what `serde_json::from_str`
    /// gives, the same value or the same error. The usual result, text
    /// blocks only (`{"content":[{"type":"text","text":"..."}]}`, any
    /// number of blocks, each block's two members either way round, then
    /// perhaps `"isError"`, with no whitespace and strings without escapes
    /// or control characters), is read by a scan without serde's
    /// member-by-member decoding; any other text is decoded by serde.
    ///
    /// ```
    /// use mcp_proto::types::{CallToolResult, ContentBlock};
    ///
    /// let text = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;
    /// let result = CallToolResult::from_json(text).unwrap();
    /// assert_eq!(result.content, vec![ContentBlock::text("hi")]);
    /// assert_eq!(result, serde_json::from_str(text).unwrap());
    /// ```
    pub fn from_json(text: &str) -> Result<CallToolResult, serde_json::Error> {
        match plain_text_result(text) {
            Some(result) => Ok(result),
            None => serde_json::from_str(text),
        }
    }

    /// Decodes the result into `T`: from `structuredContent` when the server
    /// sent it, otherwise from the JSON text of the only content block when
    /// there is exactly one and it is text (what a server that predates
    /// structured content sends).
    ///
    /// `isError` is not looked at: a failed call decodes like any other, so
    /// check [`is_error`](Self::is_error) first when it matters. When
    /// `structuredContent` is present but does not decode, the text block is
    /// not tried.
    ///
    /// ```
    /// use mcp_proto::types::{CallToolResult, ContentBlock};
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, Debug, PartialEq)]
    /// struct Weather {
    ///     celsius: f64,
    /// }
    ///
    /// let result = CallToolResult {
    ///     content: vec![ContentBlock::text(r#"{"celsius": 21.5}"#)],
    ///     ..Default::default()
    /// };
    /// assert_eq!(result.structured_as::<Weather>().unwrap(), Weather { celsius: 21.5 });
    /// ```
    pub fn structured_as<T: DeserializeOwned>(&self) -> Result<T, StructuredError> {
        if let Some(structured) = &self.structured_content {
            return T::deserialize(structured)
                .map_err(|e| StructuredError::Structured { reason: e.to_string() });
        }
        match self.content.as_slice() {
            [ContentBlock::Text(text)] => serde_json::from_str(&text.text)
                .map_err(|e| StructuredError::Text { reason: e.to_string() }),
            blocks => Err(StructuredError::NoStructuredContent { blocks: blocks.len() }),
        }
    }
}

/// The usual tool result (see [`CallToolResult::from_json`]) read by a
/// scan; `None` for any other text, which serde decodes instead.
fn plain_text_result(text: &str) -> Option<CallToolResult> {
    let mut rest = text.strip_prefix(r#"{"content":["#)?;
    let mut content = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        rest = after;
    } else {
        loop {
            let (block, after) = plain_text_block(rest)?;
            if content.is_empty() {
                content.reserve_exact(1);
            }
            content.push(ContentBlock::Text(TextContent::new(block)));
            let next = *after.as_bytes().first()?;
            // An ASCII byte: a character boundary.
            rest = &after[1..];
            match next {
                b',' => continue,
                b']' => break,
                _ => return None,
            }
        }
    }
    let is_error = match rest {
        "}" => None,
        r#","isError":true}"# => Some(true),
        r#","isError":false}"# => Some(false),
        _ => return None,
    };
    Some(CallToolResult { content, is_error, ..CallToolResult::default() })
}

/// A text block, `{"type":"text","text":"S"}` or `{"text":"S","type":"text"}`
/// (S without escapes or control characters): S and the text after it.
fn plain_text_block(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = text.strip_prefix(r#"{"type":"text","text":"#) {
        let (s, rest) = plain_str(rest)?;
        return Some((s, rest.strip_prefix('}')?));
    }
    let rest = text.strip_prefix(r#"{"text":"#)?;
    let (s, rest) = plain_str(rest)?;
    Some((s, rest.strip_prefix(r#","type":"text"}"#)?))
}

/// The string at the start of `text` (a quote), when it has no escapes and
/// no control characters, and the text after it.
fn plain_str(text: &str) -> Option<(&str, &str)> {
    let (s, end) = crate::jsonrpc::scan::plain_string(text.as_bytes(), 0)?;
    // Without an early exit: the compiler checks many bytes at a time.
    if s.iter().fold(false, |control, &b| control | (b < 0x20)) {
        return None;
    }
    // Both ends are ASCII quotes: character boundaries.
    Some((&text[1..end - 1], &text[end..]))
}

/// Why [`CallToolResult::structured_as`] could not decode a result: which
/// source it tried, and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StructuredError {
    /// There is no `structuredContent`, and `content` is not exactly one
    /// text block.
    NoStructuredContent {
        /// How many content blocks the result has (1 when the only block is
        /// not text).
        blocks: usize,
    },
    /// `structuredContent` does not decode into the type asked for.
    Structured {
        /// The decoder's message.
        reason: String,
    },
    /// There is no `structuredContent`, and the only content block's text is
    /// not JSON of the type asked for.
    Text {
        /// The decoder's message.
        reason: String,
    },
}

impl fmt::Display for StructuredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StructuredError::NoStructuredContent { blocks: 1 } => f.write_str(
                "the tool result has no structuredContent and its only content block is not text",
            ),
            StructuredError::NoStructuredContent { blocks } => write!(
                f,
                "the tool result has no structuredContent and {blocks} content blocks \
                 (a single text block is needed)"
            ),
            StructuredError::Structured { reason } => {
                write!(f, "the tool result's structuredContent does not decode: {reason}")
            }
            StructuredError::Text { reason } => {
                write!(f, "the tool result's text content does not decode as JSON: {reason}")
            }
        }
    }
}

impl std::error::Error for StructuredError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan takes only the usual result, and gives what serde gives;
    /// `from_json` gives serde's value or error for every text.
    #[test]
    fn the_usual_result_read_by_a_scan_is_what_serde_decodes() {
        // (text, whether the scan takes it)
        let cases: &[(&str, bool)] = &[
            (r#"{"content":[{"type":"text","text":"hi"}]}"#, true),
            (r#"{"content":[{"text":"hi","type":"text"}]}"#, true),
            (r#"{"content":[]}"#, true),
            (r#"{"content":[],"isError":true}"#, true),
            (r#"{"content":[{"type":"text","text":""}],"isError":false}"#, true),
            (
                r#"{"content":[{"type":"text","text":"a"},{"text":"b","type":"text"},{"type":"text","text":"ü €"}]}"#,
                true,
            ),
            (r#"{"content":[{"type":"text","text":"a}]},\u0000"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"a\"b"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"a\nb"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"tab	here"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi","text":"again"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}],"content":[]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}],"isError":true,"isError":false}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}],"x":1}"#, false),
            (r#"{"content":[{"type":"text","text":"hi","annotations":{}}]}"#, false),
            (r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}],"isError":null}"#, false),
            (r#"{"content": [{"type":"text","text":"hi"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}]} "#, false),
            (r#"{"isError":true,"content":[]}"#, false),
            (r#"{"structuredContent":{"a":1},"content":[]}"#, false),
            // Not a result, or not JSON: serde's error, both ways.
            (r#"{"content":[{"type":"text","text":"hi"}]"#, false),
            (r#"{"content":[{"type":"text","text":"hi"},]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}]}}"#, false),
            (r#"{"content":[{"type":"text","text":"hi}]}"#, false),
            (r#"{"content":[{"type":"text","text":"hi"}],"isError":tru}"#, false),
            (r#"{"content":[{"type":"text"}]}"#, false),
            (r#"{"content":[{"type":"text","text":7}]}"#, false),
            (r#"{"content":"no"}"#, false),
            (r#"{"content":["#, false),
            ("", false),
            ("null", false),
        ];
        for (text, scanned) in cases {
            let scan = plain_text_result(text);
            let serde = serde_json::from_str::<CallToolResult>(text);
            assert_eq!(scan.is_some(), *scanned, "{text}");
            if let Some(scan) = &scan {
                assert_eq!(Some(scan), serde.as_ref().ok(), "{text}");
            }
            match (CallToolResult::from_json(text), serde) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {a:?} against {b:?}"),
            }
        }
    }
}
