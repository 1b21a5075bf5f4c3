//! How a [`Client`](crate::Client) presents itself and what it accepts.

use std::fmt;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{CoreConfig, DEFAULT_REQUEST_TIMEOUT, EventCallback, Handlers};
use mcp_proto::types::{ClientCapabilities, Implementation};

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
    /// The version offered in `initialize` (the newest by default).
    pub protocol_version: ProtocolVersion,
    /// The versions accepted in the server's answer.
    pub supported_versions: Vec<ProtocolVersion>,
    /// How long a request waits for its answer unless its options say
    /// otherwise.
    pub request_timeout: Duration,
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
        }
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
        for (k, v) in &explicit.extra {
            caps.extra.insert(k.clone(), v.clone());
        }
        caps
    }

    /// The protocol core's configuration.
    pub fn core_config(&self) -> CoreConfig {
        let mut config = CoreConfig::new(self.client_info.clone());
        config.capabilities = self.declared_capabilities();
        config.protocol_version = self.protocol_version;
        config.supported_versions = self.supported_versions.clone();
        config.request_timeout = self.request_timeout;
        config
    }
}
