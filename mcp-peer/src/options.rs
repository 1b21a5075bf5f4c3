//! How a [`Client`](crate::Client) presents itself and what it accepts.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::cache::{MemoryCache, ResultCache};
use crate::era::EraMemory;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::decide::InputLimits;
use mcp_proto::client::{CoreConfig, DEFAULT_REQUEST_TIMEOUT, EventCallback, Handlers};
use mcp_proto::types::{ClientCapabilities, Implementation, LoggingLevel};

pub use mcp_proto::client::decide::EraChoice;
pub use mcp_proto::client::decide::input::{
    DEFAULT_MAX_INPUT_ANSWER_BYTES, DEFAULT_MAX_INPUT_REQUESTS, DEFAULT_MAX_INPUT_ROUNDS,
};

/// The default for [`ClientOptions::task_timeout`].
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(600);

/// The default for [`ClientOptions::probe_timeout`].
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The session's options: identity, capabilities and their handlers,
/// versions, the default timeout.
///
/// Each transport's own options (`StdioOptions`, `HttpOptions`) carry these
/// fields too and build a `ClientOptions` from them.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The server's name, as logs and errors show it.
    pub name: String,
    /// `clientInfo` of the `initialize` request.
    pub client_info: Implementation,
    /// The host's answers to the server's requests (roots, sampling,
    /// elicitation). A capability whose handler is set is declared.
    pub handlers: Handlers,
    /// Capabilities declared beyond the handlers': `tasks`, `experimental`,
    /// `roots.listChanged`, and any other member. A `roots`, `sampling` or
    /// `elicitation` capability here is declared only when its handler is
    /// set (a server is never told of what the host cannot answer); its
    /// members (`listChanged`, `form`/`url`, `tools`) then replace the
    /// handler's defaults.
    pub capabilities: ClientCapabilities,
    /// Hears the server's notifications (list changes, log messages, ...)
    /// as they arrive, besides [`Client::notifications`](crate::Client::notifications).
    pub on_event: Option<EventCallback>,
    /// The preferred version: asked for first (the newest, 2026-07-28, by
    /// default). `initialize` offers it when it is of the handshake era,
    /// else the newest handshake-era version in
    /// [`supported_versions`](Self::supported_versions).
    pub protocol_version: ProtocolVersion,
    /// The versions accepted in the server's answer.
    pub supported_versions: Vec<ProtocolVersion>,
    /// How long a request waits for its answer unless its options say
    /// otherwise.
    pub request_timeout: Duration,
    /// Which era to speak: [`EraChoice::Auto`] (probe, the default),
    /// or pinned. To pin a version, also narrow
    /// [`supported_versions`](Self::supported_versions).
    pub era: EraChoice,
    /// How long the era probe (`server/discover`) waits before the server
    /// is taken for a handshake-era one that does not answer unknown
    /// requests (5 s by default; at most the request timeout).
    pub probe_timeout: Duration,
    /// Stateless era: how many `input_required` rounds one request may
    /// take (each fulfilled by the [`handlers`](Self::handlers) and sent
    /// again) before it fails with `ClientError::TooManyInputRounds`; the
    /// input requests of a task count the same way (8 by default).
    pub max_input_rounds: usize,
    /// Stateless era: how many input requests one round (or one task
    /// status) may hold; more fail the request with
    /// `ClientError::TooManyInputRequests` before any is decoded or handed
    /// to a handler (64 by default).
    pub max_input_requests: usize,
    /// Stateless era: how many bytes (as JSON text) the handlers' answers
    /// of one round may take; more fail the request with
    /// `ClientError::InputAnswersTooLarge`, and no further handler is
    /// asked (4 MiB by default).
    pub max_input_answer_bytes: usize,
    /// Stateless era: the least level of the log messages the server may
    /// send for each request (`_meta` `io.modelcontextprotocol/logLevel`;
    /// `None`, the default, asks for none). A call can set its own through
    /// `RequestOptions::meta`.
    pub log_level: Option<LoggingLevel>,
    /// Stateless era: where cacheable results (`tools/list` pages,
    /// `resources/read`, ...) are kept while their `ttlMs` says they are
    /// fresh (see [`crate::cache`]). A [`MemoryCache`] of its own by
    /// default; `None` turns caching off; a host may bring its own.
    pub cache: Option<Arc<dyn ResultCache>>,
    /// Which servers were found to speak the handshake era, so their
    /// connections send `initialize` without probing (see [`crate::era`]):
    /// the process's shared table by default
    /// ([`era::shared`](crate::era::shared)); a host may bring its own
    /// store, or `None` to probe every connection.
    pub era_memory: Option<Arc<dyn EraMemory>>,
    /// Stateless era, tasks extension: how long a call answered with a task
    /// handle is followed (polling `tasks/get`) before it fails with a
    /// timeout (10 minutes by default; the task is then cancelled).
    pub task_timeout: Duration,
    /// Request middleware, in order ([`crate::middleware`]): none by
    /// default.
    pub middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("name", &self.name)
            .field("client_info", &self.client_info)
            .field("handlers", &self.handlers)
            .field("capabilities", &self.capabilities)
            .field("on_event", &self.on_event.as_ref().map(|_| "<callback>"))
            .field("protocol_version", &self.protocol_version)
            .field("supported_versions", &self.supported_versions)
            .field("request_timeout", &self.request_timeout)
            .field("era", &self.era)
            .field("probe_timeout", &self.probe_timeout)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("max_input_requests", &self.max_input_requests)
            .field("max_input_answer_bytes", &self.max_input_answer_bytes)
            .field("log_level", &self.log_level)
            .field("cache", &self.cache)
            .field("era_memory", &self.era_memory)
            .field("task_timeout", &self.task_timeout)
            .field("middleware", &self.middleware)
            .finish()
    }
}

impl ClientOptions {
    /// Options with the given server name and the defaults: this crate as
    /// `clientInfo`, no handlers, every supported version, 30 s timeout.
    pub fn new(name: impl Into<String>) -> Self {
        ClientOptions {
            name: name.into(),
            client_info: Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            handlers: Handlers::default(),
            capabilities: ClientCapabilities::default(),
            on_event: None,
            protocol_version: ProtocolVersion::LATEST,
            supported_versions: ProtocolVersion::SUPPORTED.to_vec(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            era: EraChoice::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            max_input_requests: DEFAULT_MAX_INPUT_REQUESTS,
            max_input_answer_bytes: DEFAULT_MAX_INPUT_ANSWER_BYTES,
            log_level: None,
            cache: Some(Arc::new(MemoryCache::default())),
            era_memory: Some(crate::era::shared()),
            task_timeout: DEFAULT_TASK_TIMEOUT,
            middleware: Vec::new(),
        }
    }

    /// Declares an extension (2026-07-28) in the capabilities every request
    /// carries: `id` (`io.modelcontextprotocol/tasks`, ...) with its
    /// settings (`{}` when it has none).
    pub fn with_extension(mut self, id: &str, settings: serde_json::Value) -> Self {
        self.declare_extension(id, settings);
        self
    }

    /// Declares an extension, as [`with_extension`](Self::with_extension)
    /// does, in options held by reference.
    pub fn declare_extension(&mut self, id: &str, settings: serde_json::Value) {
        self.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(id.into(), settings);
    }

    /// Adds a request middleware after those already set
    /// ([`crate::middleware`]).
    pub fn with_middleware(mut self, middleware: Arc<dyn crate::middleware::Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Declares MCP Apps (the `io.modelcontextprotocol/ui` extension): the
    /// host can show a server's HTML views (`text/html;profile=mcp-app`).
    /// Servers may then name views in their tools' `_meta.ui` (read with
    /// [`Tool::ui`](mcp_proto::types::Tool::ui)) and list tools meant only
    /// for those views, which a host keeps from its model
    /// ([`Tool::is_visible_to_model`](mcp_proto::types::Tool::is_visible_to_model)).
    pub fn with_apps(self) -> Self {
        self.with_extension(mcp_proto::apps::EXTENSION_ID, mcp_proto::apps::client_settings())
    }

    /// The capabilities declared in `initialize`: the handlers' and the
    /// explicit ones (see [`capabilities`](Self::capabilities)).
    pub fn declared_capabilities(&self) -> ClientCapabilities {
        let mut caps = self.handlers.capabilities();
        let explicit = &self.capabilities;
        if caps.roots.is_some()
            && let Some(roots) = &explicit.roots
        {
            caps.roots = Some(roots.clone());
        }
        if caps.sampling.is_some()
            && let Some(sampling) = &explicit.sampling
        {
            caps.sampling = Some(sampling.clone());
        }
        if caps.elicitation.is_some()
            && let Some(elicitation) = &explicit.elicitation
        {
            caps.elicitation = Some(elicitation.clone());
        }
        for (name, set, handled) in [
            ("roots", explicit.roots.is_some(), self.handlers.roots.is_some()),
            ("sampling", explicit.sampling.is_some(), self.handlers.sampling.is_some()),
            ("elicitation", explicit.elicitation.is_some(), self.handlers.elicitation.is_some()),
        ] {
            if set && !handled {
                tracing::debug!(capability = name, "not declared: no handler answers it");
            }
        }
        if explicit.tasks.is_some() {
            caps.tasks = explicit.tasks.clone();
        }
        if explicit.experimental.is_some() {
            caps.experimental = explicit.experimental.clone();
        }
        if explicit.extensions.is_some() {
            caps.extensions = explicit.extensions.clone();
        }
        for (k, v) in &explicit.extra {
            caps.extra.insert(k.clone(), v.clone());
        }
        caps
    }

    /// The bounds of `input_required` rounds.
    pub fn input_limits(&self) -> InputLimits {
        InputLimits {
            max_rounds: self.max_input_rounds,
            max_requests: self.max_input_requests,
            max_answer_bytes: self.max_input_answer_bytes,
        }
    }

    /// Whether the capabilities declare the extension `id`
    /// (`io.modelcontextprotocol/tasks`, ...).
    pub(crate) fn declares_extension(&self, id: &str) -> bool {
        self.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// The protocol core's configuration.
    pub fn core_config(&self) -> CoreConfig {
        // Every member from the options: `CoreConfig::new`'s defaults (its
        // list of every supported version among them) would only be
        // replaced.
        CoreConfig {
            client_info: self.client_info.clone(),
            capabilities: self.declared_capabilities(),
            protocol_version: self.protocol_version,
            supported_versions: self.supported_versions.clone(),
            request_timeout: self.request_timeout,
            log_level: self.log_level.clone(),
        }
    }
}
