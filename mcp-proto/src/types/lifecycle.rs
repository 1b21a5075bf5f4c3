//! The `initialize` handshake: capabilities, parameters and result.
//!
//! Capability objects are open sets: members this crate does not know are
//! kept in `extra` (and `experimental` is kept whole), so nothing a peer
//! declares is lost.

use serde::{Deserialize, Serialize};

use crate::types::{Implementation, JsonObject, Meta};

/// Capabilities a client may support.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the client supports listing roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client supports sampling from an LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client supports elicitation from the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Present if the client supports task-augmented requests (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
    /// The extensions the client supports (2026-07-28), by identifier
    /// (`io.modelcontextprotocol/tasks`, ...), each with its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Capabilities this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `roots` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client notifies changes to the roots list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `sampling` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Present if the client supports context inclusion (`includeContext`
    /// other than `"none"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present if the client supports tool use (`tools` and `toolChoice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `elicitation` capability. An empty object means form mode
/// only (the 2025-06-18 meaning).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Present if the client supports form-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present if the client supports URL-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `tasks` capability (experimental).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTasksCapability {
    /// Present if the client supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the client supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which request types can be augmented with tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequestsCapability>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Which server-to-client requests the client accepts as tasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTaskRequestsCapability {
    /// Task support for sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<TaskSamplingCapability>,
    /// Task support for elicitation requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<TaskElicitationCapability>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Task support for sampling requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSamplingCapability {
    /// Present if task-augmented `sampling/createMessage` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Task support for elicitation requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskElicitationCapability {
    /// Present if task-augmented `elicitation/create` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Capabilities a server may support.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the server can send log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present if the server supports task-augmented requests (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
    /// The extensions the server supports (2026-07-28), by identifier,
    /// each with its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Capabilities this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(ServerCapabilities {
    experimental: "experimental",
    logging: "logging",
    completions: "completions",
    prompts: "prompts",
    resources: "resources",
    tools: "tools",
    tasks: "tasks",
    extensions: "extensions",
});

/// The server's `prompts` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server notifies changes to the prompt list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(PromptsCapability { list_changed: "listChanged" });

/// The server's `resources` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether the server supports `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server notifies changes to the resource list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(ResourcesCapability { subscribe: "subscribe", list_changed: "listChanged" });

/// The server's `tools` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server notifies changes to the tool list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(ToolsCapability { list_changed: "listChanged" });

/// The server's `tasks` capability (experimental).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTasksCapability {
    /// Present if the server supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the server supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which request types can be augmented with tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequestsCapability>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(ServerTasksCapability {
    list: "list",
    cancel: "cancel",
    requests: "requests"
});

/// Which client-to-server requests the server accepts as tasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTaskRequestsCapability {
    /// Task support for tool requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<TaskToolsCapability>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(ServerTaskRequestsCapability { tools: "tools" });

/// Task support for tool requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskToolsCapability {
    /// Present if task-augmented `tools/call` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(TaskToolsCapability { call: "call" });

/// Parameters of an `initialize` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The latest protocol version the client supports.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InitializeRequestParams {
    /// Parameters with the given version, capabilities and client identity.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            ..Default::default()
        }
    }
}

/// The server's reply to `initialize`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The protocol version the server will speak; if the client does not
    /// support it, it must disconnect.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server and its features: a hint a host may add to the
    /// system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(InitializeResult {
    protocol_version: "protocolVersion" required,
    capabilities: "capabilities" required,
    server_info: "serverInfo" required,
    instructions: "instructions",
    meta: "_meta",
});
