//! The sans-IO client state machine.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::client::ClientError;
use crate::jsonrpc::{
    ErrorObject, ErrorResponse, IncomingOf, Message, MessageOf, Notification, Request, RequestId,
    Response, ResultBody, write_json, write_json_str,
};
use crate::methods;
use crate::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, CancelledNotificationParams,
    ClientCapabilities, DiscoverResult, Implementation, InitializeRequestParams, InitializeResult,
    LOG_LEVEL_META_KEY, LoggingLevel, LoggingMessageNotificationParams, PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY, ProgressNotificationParams, ProgressToken, SUBSCRIPTION_ID_META_KEY,
    Tool,
};
use crate::version::{ProtocolVersion, negotiate};

/// The default time a request may wait for its answer.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A callback that receives the progress notifications of one request.
pub type ProgressCallback = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// How the client presents itself and what it accepts.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `clientInfo` of the `initialize` request.
    pub client_info: Implementation,
    /// The capabilities declared in `initialize`. A server request that needs
    /// a capability not declared here (`roots`, `sampling`, `elicitation`) is
    /// answered with -32601 by the core itself.
    pub capabilities: ClientCapabilities,
    /// The version offered in `initialize` (the newest by default).
    pub protocol_version: ProtocolVersion,
    /// The versions accepted in the server's answer.
    pub supported_versions: Vec<ProtocolVersion>,
    /// The default time a request may wait for its answer.
    pub request_timeout: Duration,
    /// Stateless era: the least level of the log messages the server may
    /// send for each request (`_meta` `io.modelcontextprotocol/logLevel`);
    /// `None` asks for none.
    pub log_level: Option<LoggingLevel>,
}

impl CoreConfig {
    /// The version `initialize` offers: the preferred version when it is of
    /// the handshake era, else the newest handshake-era version accepted.
    pub fn legacy_offer(&self) -> ProtocolVersion {
        if !self.protocol_version.is_modern() {
            return self.protocol_version;
        }
        self.supported_versions
            .iter()
            .copied()
            .filter(|v| !v.is_modern())
            .max()
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
    }

    /// A configuration with the given identity and the defaults: every
    /// supported version accepted, the latest offered, no capabilities, 30 s
    /// timeout.
    pub fn new(client_info: Implementation) -> Self {
        CoreConfig {
            client_info,
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST,
            supported_versions: ProtocolVersion::SUPPORTED.to_vec(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            log_level: None,
        }
    }

    /// The `_meta` members every stateless-era request carries for
    /// `version`: the version, the capabilities, `clientInfo` and the log
    /// level when set.
    pub fn modern_meta(&self, version: ProtocolVersion) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(PROTOCOL_VERSION_META_KEY.into(), Value::from(version.as_str()));
        meta.insert(
            CLIENT_CAPABILITIES_META_KEY.into(),
            serde_json::to_value(&self.capabilities).unwrap_or_else(|_| Value::Object(Map::new())),
        );
        if let Ok(info) = serde_json::to_value(&self.client_info) {
            meta.insert(CLIENT_INFO_META_KEY.into(), info);
        }
        if let Some(level) = &self.log_level
            && let Ok(level) = serde_json::to_value(level)
        {
            meta.insert(LOG_LEVEL_META_KEY.into(), level);
        }
        meta
    }

    /// [`modern_meta`](Self::modern_meta) as JSON text, encoded from the
    /// configuration without building the map.
    pub fn modern_meta_text(&self, version: ProtocolVersion) -> Vec<u8> {
        let members = ModernMetaRef {
            version: version.as_str(),
            capabilities: &self.capabilities,
            client_info: &self.client_info,
            log_level: self.log_level.as_ref(),
        };
        serde_json::to_vec(&members)
            .or_else(|_| serde_json::to_vec(&self.modern_meta(version)))
            .unwrap_or_else(|_| b"{}".to_vec())
    }
}

/// [`CoreConfig::modern_meta`], borrowed, for encoding straight to text.
#[derive(Serialize)]
struct ModernMetaRef<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: &'a str,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: &'a ClientCapabilities,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    client_info: &'a Implementation,
    #[serde(rename = "io.modelcontextprotocol/logLevel", skip_serializing_if = "Option::is_none")]
    log_level: Option<&'a LoggingLevel>,
}

/// Per-request options.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// How long to wait for the answer; the configured default when `None`.
    pub timeout: Option<Duration>,
    /// Whether each progress notification restarts the timeout.
    pub reset_timeout_on_progress: bool,
    /// With `reset_timeout_on_progress`, the most the request may wait in all.
    pub max_total_timeout: Option<Duration>,
    /// Receives the request's progress notifications. When set (or when
    /// `reset_timeout_on_progress` is), the request carries a
    /// `_meta.progressToken`.
    pub on_progress: Option<ProgressCallback>,
    /// Extra `_meta` members for this request (W3C trace context
    /// `traceparent`/`tracestate`/`baggage`, a per-call
    /// `io.modelcontextprotocol/logLevel`, ...), merged into the
    /// parameters' `_meta`. The protocol's own members (version,
    /// capabilities, client identity) take precedence; a log level given
    /// here replaces the client's for this request.
    pub meta: Option<Map<String, Value>>,
    /// Stateless era: ask the server even when a fresh cached result is
    /// held (the answer still refreshes the cache).
    pub no_cache: bool,
    /// Extra HTTP headers for this request, `(name, value)` (Streamable
    /// HTTP; other transports carry none). The transport's own headers
    /// (`Content-Type`, `Accept`, `Host`, `Authorization`, `Mcp-*`, ...)
    /// cannot be set here: such a request fails before it is sent. Values
    /// are sent marked sensitive.
    pub headers: Vec<(String, String)>,
}

impl RequestOptions {
    /// Options with the given timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        RequestOptions { timeout: Some(timeout), ..Default::default() }
    }
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("on_progress", &self.on_progress.as_ref().map(|_| "<callback>"))
            .field("meta", &self.meta)
            .field("no_cache", &self.no_cache)
            .field("headers", &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>())
            .finish()
    }
}

/// Which cached list a `list_changed` notification invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

/// A request from the server that the host's handlers must answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// The server's id for it; pass it back to [`ClientCore::respond`].
    pub id: RequestId,
    /// `roots/list`, `sampling/createMessage` or `elicitation/create`.
    pub method: String,
    /// The request's parameters.
    pub params: Option<Value>,
}

/// Something the driver must act on.
pub enum Event<W> {
    /// A request finished: deliver `outcome` to `waiter`.
    Reply {
        /// The request's id.
        id: RequestId,
        /// What the driver attached to the request.
        waiter: W,
        /// The result as JSON text (decode it with
        /// [`ops::parse_result`](crate::client::ops::parse_result)), or why
        /// there is none.
        outcome: Result<Box<RawValue>, ClientError>,
    },
    /// A progress notification for a request that asked for progress.
    Progress {
        /// The request it belongs to.
        id: RequestId,
        /// The request's callback, if it has one.
        callback: Option<ProgressCallback>,
        /// The notification's parameters.
        params: ProgressNotificationParams,
    },
    /// The server asks the host something (see [`crate::client::Handlers`]).
    ServerRequest(ServerRequest),
    /// The server cancelled one of its requests: stop handling it (its
    /// answer will not be sent).
    ServerRequestCancelled {
        /// The server's id of the cancelled request.
        id: RequestId,
        /// The reason the server gave.
        reason: Option<String>,
    },
    /// A list the server offers has changed; the cached copy was dropped.
    ListChanged(ListKind),
    /// A log message from the server (also forwarded to `tracing`).
    Log(LoggingMessageNotificationParams),
    /// Any other notification (`resources/updated`, `elicitation/complete`, ...).
    Notification(Notification),
    /// A notification that belongs to a `subscriptions/listen` stream
    /// (2026-07-28: its `_meta` names the stream's request id). It is also
    /// delivered as the event its method makes (`ListChanged`, ...).
    Subscription {
        /// The id of the `subscriptions/listen` request.
        id: RequestId,
        /// The notification.
        notification: Notification,
    },
}

impl<W> fmt::Debug for Event<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Reply { id, outcome, .. } => {
                f.debug_struct("Reply").field("id", id).field("outcome", outcome).finish()
            }
            Event::Progress { id, params, .. } => {
                f.debug_struct("Progress").field("id", id).field("params", params).finish()
            }
            Event::ServerRequest(r) => f.debug_tuple("ServerRequest").field(r).finish(),
            Event::ServerRequestCancelled { id, reason } => f
                .debug_struct("ServerRequestCancelled")
                .field("id", id)
                .field("reason", reason)
                .finish(),
            Event::ListChanged(k) => f.debug_tuple("ListChanged").field(k).finish(),
            Event::Log(p) => f.debug_tuple("Log").field(p).finish(),
            Event::Notification(n) => f.debug_tuple("Notification").field(n).finish(),
            Event::Subscription { id, notification } => f
                .debug_struct("Subscription")
                .field("id", id)
                .field("notification", notification)
                .finish(),
        }
    }
}

/// What a host may want to hear of the server besides answers: the
/// notifications the core does not consume itself.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A list the server offers has changed (caches were already dropped).
    ListChanged(ListKind),
    /// A log message (already forwarded to `tracing`).
    Log(LoggingMessageNotificationParams),
    /// Any other notification.
    Notification(Notification),
}

impl<W> Event<W> {
    /// The host-facing part of this event, for `ListChanged`, `Log` and
    /// `Notification`.
    pub fn server_event(&self) -> Option<ServerEvent> {
        match self {
            Event::ListChanged(k) => Some(ServerEvent::ListChanged(*k)),
            Event::Log(p) => Some(ServerEvent::Log(p.clone())),
            Event::Notification(n) => Some(ServerEvent::Notification(n.clone())),
            _ => None,
        }
    }

    /// Does, in one place for every driver, everything an event asks that
    /// needs no runtime: a reply goes to `reply` with its waiter, progress to
    /// the request's callback, list changes, logs and other notifications to
    /// `on_event`. What is left needs the driver's runtime (starting or
    /// stopping the task that answers a server request) and comes back as
    /// [`DriverWork`].
    ///
    /// Call it outside any lock: the callbacks are the host's code.
    pub fn deliver(
        self,
        on_event: Option<&EventCallback>,
        reply: impl FnOnce(W, Result<Box<RawValue>, ClientError>),
    ) -> Option<DriverWork> {
        if let Some(server_event) = self.server_event() {
            if let Some(cb) = on_event {
                cb(&server_event);
            }
            return None;
        }
        match self {
            Event::Reply { waiter, outcome, .. } => {
                reply(waiter, outcome);
                None
            }
            Event::Progress { callback, params, .. } => {
                if let Some(cb) = callback {
                    cb(&params);
                }
                None
            }
            Event::ServerRequest(request) => Some(DriverWork::AnswerServerRequest(request)),
            Event::ServerRequestCancelled { id, .. } => Some(DriverWork::StopServerRequest(id)),
            Event::Subscription { id, notification } => {
                Some(DriverWork::Subscription { id, notification })
            }
            Event::ListChanged(_) | Event::Log(_) | Event::Notification(_) => None,
        }
    }
}

/// What [`Event::deliver`] leaves to the driver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DriverWork {
    /// Run [`Handlers::handle`](crate::client::Handlers::handle) for it (as a
    /// task that can be aborted) and pass the outcome to
    /// [`ClientCore::respond`].
    AnswerServerRequest(ServerRequest),
    /// The server cancelled this request: abort its task.
    StopServerRequest(RequestId),
    /// Hand this notification to the `subscriptions/listen` stream `id`.
    Subscription {
        /// The id of the `subscriptions/listen` request.
        id: RequestId,
        /// The notification.
        notification: Notification,
    },
}

/// A callback that hears [`ServerEvent`]s.
pub type EventCallback = std::sync::Arc<dyn Fn(&ServerEvent) + Send + Sync>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Fresh,
    /// The stateless era's probe (`server/discover`) is out.
    Probing(i64),
    Initializing(i64),
    Ready,
    Failed,
    Closed,
}

struct Pending<W> {
    method: Cow<'static, str>,
    waiter: W,
    started: Instant,
    timeout: Duration,
    deadline: Instant,
    hard_deadline: Option<Instant>,
    reset_on_progress: bool,
    on_progress: Option<ProgressCallback>,
}

/// The client side of one MCP connection, with no I/O.
///
/// It allocates ids, matches answers to requests, runs the `initialize`
/// handshake and version negotiation, answers `ping`, routes server requests
/// and notifications, and times requests out (sending
/// `notifications/cancelled`). Time is an argument, never read from a clock,
/// so it runs the same under a virtual clock in tests.
///
/// `W` is whatever the driver attaches to a request to deliver its outcome
/// (a oneshot sender, typically); it comes back in [`Event::Reply`].
///
/// The driver's loop:
/// 1. make requests with [`initialize`](Self::initialize) and
///    [`start_request`](Self::start_request) and send what they return;
/// 2. feed every incoming message to [`handle_message`](Self::handle_message)
///    and call [`handle_timeout`](Self::handle_timeout) at
///    [`poll_timeout`](Self::poll_timeout);
/// 3. after each of those, send everything [`poll_transmit`](Self::poll_transmit)
///    gives and act on everything [`poll_event`](Self::poll_event) gives.
pub struct ClientCore<W> {
    config: CoreConfig,
    phase: Phase,
    negotiated: Option<ProtocolVersion>,
    init_result: Option<Arc<InitializeResult>>,
    next_id: i64,
    pending: HashMap<i64, Pending<W>, BuildHasherDefault<IdHasher>>,
    timers: BinaryHeap<Reverse<(Instant, i64)>>,
    inbound: HashMap<RequestId, Box<str>>,
    transmit: VecDeque<Message>,
    events: VecDeque<Event<W>>,
    tools: Option<Arc<[Tool]>>,
    tools_generation: u64,
    /// In the stateless era: the `_meta` members every request carries, as
    /// a map (merged into value parameters) and as JSON text (spliced into
    /// encoded ones).
    modern: Option<ModernMeta>,
    /// The stateless era's `_meta` made for the probe, for
    /// [`enter_modern`](ClientCore::enter_modern) in the same version
    /// (the same members: made once).
    probe_meta: Option<(ProtocolVersion, ModernMeta)>,
}

/// The stateless era's `_meta` members of every request: made as JSON
/// text (spliced into encoded requests), and as a map only when a request
/// made by value first needs one.
struct ModernMeta {
    text: Box<[u8]>,
    map: std::sync::OnceLock<Map<String, Value>>,
}

impl ModernMeta {
    fn new(config: &CoreConfig, version: ProtocolVersion) -> ModernMeta {
        let text = config.modern_meta_text(version).into_boxed_slice();
        ModernMeta { text, map: std::sync::OnceLock::new() }
    }

    /// The members as a map (made from the text once).
    fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| serde_json::from_slice(&self.text).unwrap_or_default())
    }
}

impl<W> fmt::Debug for ClientCore<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCore")
            .field("phase", &self.phase)
            .field("negotiated", &self.negotiated)
            .field("pending", &self.pending.len())
            .field("inbound", &self.inbound.len())
            .finish_non_exhaustive()
    }
}

impl<W> ClientCore<W> {
    /// A fresh connection state.
    pub fn new(config: CoreConfig) -> Self {
        ClientCore {
            config,
            phase: Phase::Fresh,
            negotiated: None,
            init_result: None,
            next_id: 0,
            pending: HashMap::default(),
            timers: BinaryHeap::new(),
            inbound: HashMap::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            tools: None,
            tools_generation: 0,
            modern: None,
            probe_meta: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.config
    }

    /// The negotiated protocol version, once the handshake succeeded.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.negotiated
    }

    /// The server's answer to `initialize`, once the handshake succeeded.
    /// In the stateless era, made of the answer to `server/discover` (see
    /// [`enter_modern`](Self::enter_modern)), or empty but for the version
    /// when there was none.
    pub fn initialize_result(&self) -> Option<&Arc<InitializeResult>> {
        self.init_result.as_ref()
    }

    /// Whether the connection speaks the stateless era (2026-07-28): every
    /// request carries its `_meta`, there is no `initialize`.
    pub fn is_modern(&self) -> bool {
        self.modern.is_some()
    }

    /// Starts the stateless era's probe: returns the `server/discover`
    /// request to send, asking for `version` in its `_meta`.
    ///
    /// The core does not judge the answer: the waiter gets it, the core
    /// returns to its fresh state, and the driver then calls
    /// [`enter_modern`](Self::enter_modern) or
    /// [`initialize`](Self::initialize). A probe that times out or is
    /// cancelled sends no `notifications/cancelled` (a handshake-era
    /// server must see nothing before `initialize`).
    pub fn start_probe(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<Request, ClientError> {
        let id = self.probe(version, timeout, waiter, now)?;
        let meta = self.probe_meta.as_ref().map(|(_, m)| m.map().clone()).unwrap_or_default();
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(meta));
        Ok(Request {
            id: RequestId::Number(id),
            method: methods::SERVER_DISCOVER.into(),
            params: Some(Value::Object(params)),
        })
    }

    /// [`start_probe`](Self::start_probe), the request encoded straight to
    /// JSON text (no [`Value`] is built): its id and the message.
    pub fn start_probe_encoded(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let n = self.probe(version, timeout, waiter, now)?;
        let id = RequestId::Number(n);
        let meta = self.probe_meta.as_ref().map(|(_, m)| &*m.text);
        let text = request_text(&id, methods::SERVER_DISCOVER, &(), meta.or(Some(b"{}")));
        match text {
            Ok(Some(text)) => Ok((id, text)),
            // `null` parameters always take a `_meta`: not reached.
            Ok(None) => Err(self.unsent(n, methods::SERVER_DISCOVER, "unencodable".into())),
            Err(e) => Err(self.unsent(n, methods::SERVER_DISCOVER, e.to_string())),
        }
    }

    /// Registers the probe asking for `version`, and makes the era's
    /// `_meta` it carries; returns its id.
    fn probe(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<i64, ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::SERVER_DISCOVER.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        let meta = match self.probe_meta.take() {
            Some((v, meta)) if v == version => meta,
            _ => ModernMeta::new(&self.config, version),
        };
        self.probe_meta = Some((version, meta));
        let id = self.allocate_id();
        let options = RequestOptions::with_timeout(timeout);
        self.register(id, methods::SERVER_DISCOVER, waiter, &options, now);
        self.phase = Phase::Probing(id);
        Ok(id)
    }

    /// Forgets a request registered but never sent (its encoding failed),
    /// giving the error its caller gets; the phase it started is undone.
    fn unsent(&mut self, id: i64, method: &str, reason: String) -> ClientError {
        self.pending.remove(&id);
        if matches!(self.phase, Phase::Probing(n) | Phase::Initializing(n) if n == id) {
            self.phase = Phase::Fresh;
        }
        ClientError::InvalidParams { method: method.into(), reason }
    }

    /// Enters the stateless era speaking `version` (a modern one): requests
    /// may be sent at once, each with the era's `_meta`. Allowed on a fresh
    /// core and on a modern one (to change the version after an
    /// `UnsupportedProtocolVersion` error).
    ///
    /// `discover` is the server's answer to `server/discover`, when there
    /// was one. It is kept once, as the
    /// [`initialize_result`](Self::initialize_result) a host reads in
    /// either era: its capabilities, instructions and `_meta` moved there,
    /// `serverInfo` read from that `_meta`, and its other members
    /// (`supportedVersions`, `resultType`, ...) in `extra` as sent.
    pub fn enter_modern(
        &mut self,
        version: ProtocolVersion,
        discover: Option<DiscoverResult>,
    ) -> Result<(), ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Ready if self.modern.is_some() => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::SERVER_DISCOVER.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        if !version.is_modern() {
            return Err(ClientError::UnsupportedVersion(crate::version::UnsupportedVersion {
                offered: version.as_str().into(),
                supported: self.config.supported_versions.clone(),
            }));
        }
        let meta = match self.probe_meta.take() {
            Some((v, meta)) if v == version => meta,
            _ => ModernMeta::new(&self.config, version),
        };
        self.modern = Some(meta);
        if let Some(d) = discover {
            // What a host reads of `initialize` in the handshake era, made
            // of the discovery (moved, not copied): one place to ask
            // whatever the era.
            self.init_result = Some(Arc::new(discovered(version, d)));
        } else if self.init_result.is_none() {
            self.init_result = Some(Arc::new(InitializeResult {
                protocol_version: version.as_str().into(),
                capabilities: Default::default(),
                server_info: Implementation::new("", ""),
                instructions: None,
                meta: None,
                extra: Map::new(),
            }));
        } else if let Some(r) = &mut self.init_result {
            Arc::make_mut(r).protocol_version = version.as_str().into();
        }
        self.negotiated = Some(version);
        self.phase = Phase::Ready;
        Ok(())
    }

    /// Whether the handshake finished and requests may be sent.
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Whether the handshake has not been started (or the state was reset).
    pub fn is_fresh(&self) -> bool {
        self.phase == Phase::Fresh
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// How many requests wait for an answer.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// How many deadline entries the core keeps (live and stale): bounded
    /// by twice the waiting requests plus a constant, however many requests
    /// were made. For tests and diagnostics.
    pub fn timer_entries(&self) -> usize {
        self.timers.len()
    }

    /// Drops the entries of finished requests (and of moved deadlines) once
    /// they outnumber the live ones, so the heap never grows with the
    /// number of requests made (amortised O(1) a request).
    fn prune_timers(&mut self) {
        if self.timers.len() < 2 * self.pending.len() + 64 {
            return;
        }
        let pending = &self.pending;
        self.timers.retain(|Reverse((deadline, id))| {
            pending.get(id).is_some_and(|p| p.deadline == *deadline)
        });
    }

    fn allocate_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Starts the handshake: returns the `initialize` request to send.
    ///
    /// When its answer arrives, the version is negotiated; on success
    /// `notifications/initialized` is queued for sending and the waiter gets
    /// the raw result, on failure it gets the error and the core refuses
    /// further requests until [`reset`](Self::reset).
    pub fn initialize(&mut self, waiter: W, now: Instant) -> Result<Request, ClientError> {
        let (n, params) = self.start_initialize(waiter, now)?;
        match serde_json::to_value(&params) {
            Ok(params) => Ok(Request {
                id: RequestId::Number(n),
                method: methods::INITIALIZE.into(),
                params: Some(params),
            }),
            Err(e) => Err(self.unsent(n, methods::INITIALIZE, e.to_string())),
        }
    }

    /// [`initialize`](Self::initialize), the request encoded straight to
    /// JSON text (no [`Value`] is built): its id and the message.
    pub fn initialize_encoded(
        &mut self,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let (n, params) = self.start_initialize(waiter, now)?;
        let id = RequestId::Number(n);
        match request_text(&id, methods::INITIALIZE, &params, None) {
            Ok(Some(text)) => Ok((id, text)),
            // Without a `_meta` to add, the text is always made: not reached.
            Ok(None) => Err(self.unsent(n, methods::INITIALIZE, "unencodable".into())),
            Err(e) => Err(self.unsent(n, methods::INITIALIZE, e.to_string())),
        }
    }

    /// Registers the `initialize` request; returns its id and parameters.
    fn start_initialize(
        &mut self,
        waiter: W,
        now: Instant,
    ) -> Result<(i64, InitializeRequestParams), ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::INITIALIZE.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        // A probe found a handshake-era server: its `_meta` is not needed.
        self.probe_meta = None;
        let params = InitializeRequestParams::new(
            self.config.legacy_offer().as_str(),
            self.config.capabilities.clone(),
            self.config.client_info.clone(),
        );
        let id = self.allocate_id();
        self.register(id, methods::INITIALIZE, waiter, &RequestOptions::default(), now);
        self.phase = Phase::Initializing(id);
        Ok((id, params))
    }

    /// Starts a request: returns the message to send.
    ///
    /// Only `ping` may be sent before the handshake finished. When the options
    /// ask for progress, `_meta.progressToken` (the request's id) is added to
    /// the parameters, which must then be an object or absent.
    pub fn start_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        waiter: W,
        now: Instant,
    ) -> Result<Request, ClientError> {
        self.check_can_send(method)?;
        let id = self.allocate_id();
        let wants_progress = options.on_progress.is_some() || options.reset_timeout_on_progress;
        let params =
            if wants_progress { Some(with_progress_token(method, params, id)?) } else { params };
        let params = match (&self.modern, &options.meta) {
            (None, None) => params,
            (modern, extra) => Some(with_meta(
                method,
                params,
                extra.as_ref(),
                modern.as_ref().map(ModernMeta::map),
            )?),
        };
        self.register(id, method, waiter, options, now);
        Ok(Request { id: RequestId::Number(id), method: method.into(), params })
    }

    /// [`start_request`](Self::start_request) with parameters of any
    /// serialisable type, encoded straight to JSON text (no [`Value`] is
    /// built): returns the request's id and the encoded message (without a
    /// line ending). When the options ask for progress, the parameters go
    /// through a `Value` to receive `_meta.progressToken`.
    pub fn start_request_encoded<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
        options: &RequestOptions,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let invalid = |e: serde_json::Error| ClientError::InvalidParams {
            method: method.into(),
            reason: e.to_string(),
        };
        let by_value = |core: &mut Self, waiter: W| {
            let params = serde_json::to_value(params).map_err(invalid)?;
            let request = core.start_request(method, Some(params), options, waiter, now)?;
            let text = request_text(&request.id, method, &request.params, None)
                .map_err(invalid)?
                .ok_or_else(|| invalid(serde::ser::Error::custom("unreachable")))?;
            Ok((request.id, text))
        };
        let wants_progress = options.on_progress.is_some() || options.reset_timeout_on_progress;
        if (wants_progress || options.meta.is_some())
            && !meta_text_fits(options.meta.as_ref(), wants_progress, self.modern.as_ref())
        {
            return by_value(self, waiter);
        }
        self.check_can_send(method)?;
        // An id lost to a failed encoding is never reused: ids stay unique.
        let n = self.allocate_id();
        let id = RequestId::Number(n);
        let joined;
        let meta = if wants_progress || options.meta.is_some() {
            let progress = wants_progress.then_some(n);
            let modern = self.modern.as_ref().map(|m| &*m.text);
            joined = meta_text(progress, options.meta.as_ref(), modern).map_err(invalid)?;
            Some(&joined[..])
        } else {
            self.modern.as_ref().map(|m| &*m.text)
        };
        match request_text(&id, method, params, meta).map_err(invalid)? {
            Some(text) => {
                self.register(n, method, waiter, options, now);
                Ok((id, text))
            }
            // The parameters carry a `_meta` of their own: merged by value.
            None => by_value(self, waiter),
        }
    }

    /// Only `ping` may be sent before the handshake finished, nothing after
    /// `close`; in the stateless era, nothing that era lacks (`ping`,
    /// `logging/setLevel`, `resources/subscribe`, ...).
    fn check_can_send(&self, method: &str) -> Result<(), ClientError> {
        if let Some(version) = self.negotiated.filter(|v| v.is_modern())
            && !methods::exists_in_modern_era(method)
        {
            return Err(ClientError::NotInEra { method: method.into(), version });
        }
        match self.phase {
            Phase::Ready => Ok(()),
            Phase::Closed => Err(ClientError::Closed { method: method.into() }),
            _ if method == methods::PING => Ok(()),
            _ => Err(ClientError::NotInitialized { method: method.into() }),
        }
    }

    fn register(
        &mut self,
        id: i64,
        method: &str,
        waiter: W,
        options: &RequestOptions,
        now: Instant,
    ) {
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let deadline = now + timeout;
        let hard_deadline = if options.reset_timeout_on_progress {
            options.max_total_timeout.map(|max| now + max.max(timeout))
        } else {
            None
        };
        self.prune_timers();
        self.timers.push(Reverse((deadline, id)));
        self.pending.insert(
            id,
            Pending {
                method: method_name(method),
                waiter,
                started: now,
                timeout,
                deadline,
                hard_deadline,
                reset_on_progress: options.reset_timeout_on_progress,
                on_progress: options.on_progress.clone(),
            },
        );
    }

    /// The time of the next request deadline, if any request waits.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        while let Some(Reverse((deadline, id))) = self.timers.peek().copied() {
            match self.pending.get(&id) {
                Some(p) if p.deadline == deadline => return Some(deadline),
                // The request finished, or its deadline moved: a stale entry.
                _ => {
                    self.timers.pop();
                }
            }
        }
        None
    }

    /// The current deadline of one request, if it still waits.
    pub fn deadline(&self, id: &RequestId) -> Option<Instant> {
        match id {
            RequestId::Number(n) => self.pending.get(n).map(|p| p.deadline),
            RequestId::String(_) => None,
        }
    }

    /// Times out every request whose deadline is at or before `now`: each
    /// gets [`ClientError::Timeout`], and `notifications/cancelled` is queued
    /// for it (except for `initialize`, which must not be cancelled).
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(Reverse((deadline, id))) = self.timers.peek().copied() {
            if deadline > now {
                break;
            }
            self.timers.pop();
            let due = matches!(self.pending.get(&id), Some(p) if p.deadline == deadline);
            if !due {
                continue;
            }
            let Some(p) = self.pending.remove(&id) else { continue };
            let after = now.saturating_duration_since(p.started);
            tracing::debug!(id, method = &*p.method, ?after, "request timed out");
            if &*p.method == methods::INITIALIZE {
                self.phase = Phase::Failed;
            } else if self.phase == Phase::Probing(id) {
                self.phase = Phase::Fresh;
            } else {
                self.queue_cancelled(
                    RequestId::Number(id),
                    format!("timed out after {:.1}s", after.as_secs_f64()),
                );
            }
            self.events.push_back(Event::Reply {
                id: RequestId::Number(id),
                waiter: p.waiter,
                outcome: Err(ClientError::Timeout { method: p.method.into(), after }),
            });
        }
    }

    /// Cancels a request the caller no longer waits for: it is forgotten,
    /// `notifications/cancelled` is queued, and its waiter gets
    /// [`ClientError::Cancelled`]. Unknown ids are ignored.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) {
        let RequestId::Number(n) = id else { return };
        let Some(p) = self.pending.remove(n) else { return };
        if &*p.method == methods::INITIALIZE {
            // initialize must not be cancelled; the connection is unusable.
            self.phase = Phase::Failed;
        } else if self.phase == Phase::Probing(*n) {
            self.phase = Phase::Fresh;
        } else {
            self.queue_cancelled(id.clone(), reason.to_owned());
        }
        self.events.push_back(Event::Reply {
            id: id.clone(),
            waiter: p.waiter,
            outcome: Err(ClientError::Cancelled { method: p.method.into() }),
        });
    }

    /// Forgets a request whose transport failed to carry it, without
    /// `notifications/cancelled`: in the stateless era the broken exchange
    /// is what tells the server, and a notice would only open another
    /// connection to say it again. Its waiter gets
    /// [`ClientError::Cancelled`]. Unknown ids are ignored.
    pub fn abandon(&mut self, id: &RequestId) {
        let RequestId::Number(n) = id else { return };
        let Some(p) = self.pending.remove(n) else { return };
        if self.phase == Phase::Initializing(*n) {
            self.phase = Phase::Failed;
        } else if self.phase == Phase::Probing(*n) {
            self.phase = Phase::Fresh;
        }
        self.events.push_back(Event::Reply {
            id: id.clone(),
            waiter: p.waiter,
            outcome: Err(ClientError::Cancelled { method: p.method.into() }),
        });
    }

    /// Fails a waiting request whose answer arrived but could not be read
    /// (the transport had to drop it: see
    /// [`jsonrpc::response_id_of_prefix`](crate::jsonrpc::response_id_of_prefix)):
    /// its waiter gets [`ClientError::AnswerUnreadable`] with `reason`. No
    /// `notifications/cancelled` is sent (the server has answered). Unknown
    /// ids are ignored; returns whether a request was failed.
    pub fn fail_unreadable(&mut self, id: &RequestId, reason: &str) -> bool {
        let RequestId::Number(n) = id else { return false };
        let Some(p) = self.pending.remove(n) else { return false };
        let error =
            ClientError::AnswerUnreadable { method: p.method.to_string(), reason: reason.into() };
        if self.phase == Phase::Initializing(*n) {
            self.phase = Phase::Failed;
        } else if self.phase == Phase::Probing(*n) {
            self.phase = Phase::Fresh;
        }
        self.events.push_back(Event::Reply {
            id: id.clone(),
            waiter: p.waiter,
            outcome: Err(error),
        });
        true
    }

    fn queue_cancelled(&mut self, id: RequestId, reason: String) {
        let params = CancelledNotificationParams::new(id, Some(reason));
        let params = serde_json::to_value(params).ok();
        self.transmit.push_back(Message::Notification(Notification::new(
            methods::NOTIFICATION_CANCELLED,
            params,
        )));
    }

    /// Feeds what one incoming JSON text held (a message or a batch).
    ///
    /// Results may come as [`Value`]s or as JSON text (`Box<RawValue>`, from
    /// [`decode_slice_as`](crate::jsonrpc::decode_slice_as)); drivers use
    /// the latter, which spares building a `Value` of each result.
    pub fn handle_incoming<R: ResultBody>(&mut self, incoming: IncomingOf<R>, now: Instant) {
        match incoming {
            IncomingOf::Single(m) => self.handle_message_as(m, now),
            IncomingOf::Batch(items) => {
                for item in items {
                    match item {
                        Ok(m) => self.handle_message_as(m, now),
                        Err(e) => {
                            tracing::warn!(error = %e, "skipping an invalid message in a batch")
                        }
                    }
                }
            }
        }
    }

    /// Feeds one incoming message.
    pub fn handle_message(&mut self, message: Message, now: Instant) {
        self.handle_message_as(message, now);
    }

    fn handle_message_as<R: ResultBody>(&mut self, message: MessageOf<R>, now: Instant) {
        match message {
            MessageOf::Response(r) => self.handle_outcome(r.id, Ok(r.result.into_raw())),
            MessageOf::Error(e) => match e.id {
                Some(id) => self.handle_outcome(id, Err(e.error)),
                None => tracing::warn!(
                    code = e.error.code,
                    message = %e.error.message,
                    "the server sent an error that answers no request"
                ),
            },
            MessageOf::Request(r) => self.handle_server_request(r),
            MessageOf::Notification(n) => self.handle_notification(n, now),
        }
    }

    /// The waiter of request `id` while it waits for a result the driver
    /// may read itself (see [`take_answered`](Self::take_answered)); `None`
    /// when no such request waits, and for the era probe and `initialize`,
    /// whose results the core reads.
    pub fn waiter(&self, id: i64) -> Option<&W> {
        if matches!(self.phase, Phase::Probing(n) | Phase::Initializing(n) if n == id) {
            return None;
        }
        self.pending.get(&id).map(|p| &p.waiter)
    }

    /// Finishes request `id`, answered with a result the driver read
    /// itself from the message (the usual answer,
    /// [`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer), its result
    /// decoded straight into the type the caller waits for): the request
    /// is done as [`handle_incoming`](Self::handle_incoming) finishes one
    /// on a result, and its waiter is given back instead of coming in an
    /// [`Event::Reply`]. `None`, with nothing changed, where
    /// [`waiter`](Self::waiter) says `None`.
    pub fn take_answered(&mut self, id: i64) -> Option<W> {
        self.waiter(id)?;
        self.pending.remove(&id).map(|p| p.waiter)
    }

    /// Whether `id` is the era probe in flight (whose answer's discovery
    /// the driver may decode itself:
    /// [`usual_discovery`](crate::client::decide::probe::usual_discovery)).
    pub fn is_probe(&self, id: i64) -> bool {
        self.phase == Phase::Probing(id)
    }

    /// Finishes `initialize` `id`, answered with the usual answer whose
    /// result's text is `result`
    /// ([`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer)), the
    /// result decoded once, straight from the message: the handshake is
    /// finished as [`handle_incoming`](Self::handle_incoming) finishes it
    /// on that result (the version negotiated, the result kept and
    /// `notifications/initialized` queued, or the handshake failed), and
    /// its waiter is given back with the outcome instead of coming in an
    /// [`Event::Reply`]. `None`, with nothing changed, when `id` is not the
    /// `initialize` in flight or `result` does not decode as an
    /// [`InitializeResult`]: the general decoding then decides about the
    /// text as about any other. A result that decodes was one JSON value,
    /// so the message was a valid answer, and the outcome is the general
    /// path's.
    pub fn take_usual_initialize(
        &mut self,
        id: i64,
        result: &str,
    ) -> Option<(W, Result<Arc<InitializeResult>, ClientError>)> {
        if !self.is_initialize(id) {
            return None;
        }
        let result: InitializeResult = serde_json::from_str(result).ok()?;
        let waiter = self.pending.remove(&id)?.waiter;
        Some((waiter, self.finish_initialize(result)))
    }

    /// Whether `id` is the `initialize` in flight (see
    /// [`take_usual_initialize`](Self::take_usual_initialize)).
    pub fn is_initialize(&self, id: i64) -> bool {
        self.phase == Phase::Initializing(id)
    }

    /// Finishes the era probe `id`, answered with a discovery the driver
    /// decoded itself from the message
    /// ([`usual_discovery`](crate::client::decide::probe::usual_discovery)):
    /// the probe is done as [`handle_incoming`](Self::handle_incoming)
    /// finishes it on a result, and its waiter is given back instead of
    /// coming in an [`Event::Reply`]. `None`, with nothing changed, when
    /// `id` is not the probe in flight.
    pub fn take_probe_answered(&mut self, id: i64) -> Option<W> {
        if !self.is_probe(id) {
            return None;
        }
        let waiter = self.pending.remove(&id)?.waiter;
        self.phase = Phase::Fresh;
        Some(waiter)
    }

    fn handle_outcome(&mut self, id: RequestId, outcome: Result<Box<RawValue>, ErrorObject>) {
        let found = match &id {
            RequestId::Number(n) => self.pending.remove(n).map(|p| (*n, p)),
            RequestId::String(_) => None,
        };
        let Some((n, p)) = found else {
            tracing::debug!(%id, "dropping an answer for an unknown or finished request");
            return;
        };
        let outcome = match outcome {
            Err(error) => Err(ClientError::from_rpc(&p.method, error)),
            Ok(value) => Ok(value),
        };
        if self.phase == Phase::Probing(n) {
            self.phase = Phase::Fresh;
        }
        let outcome = if self.phase == Phase::Initializing(n) {
            self.finish_handshake(outcome)
        } else {
            outcome
        };
        self.events.push_back(Event::Reply { id, waiter: p.waiter, outcome });
    }

    fn finish_handshake(
        &mut self,
        outcome: Result<Box<RawValue>, ClientError>,
    ) -> Result<Box<RawValue>, ClientError> {
        let value = match outcome {
            Ok(v) => v,
            Err(e) => {
                self.phase = Phase::Failed;
                return Err(e);
            }
        };
        let result: InitializeResult = match serde_json::from_str(value.get()) {
            Ok(r) => r,
            Err(e) => {
                self.phase = Phase::Failed;
                return Err(ClientError::InvalidResult {
                    method: methods::INITIALIZE.into(),
                    reason: e.to_string(),
                });
            }
        };
        self.finish_initialize(result).map(|_| value)
    }

    /// The handshake finished with `result`: the version negotiated, the
    /// result kept and `notifications/initialized` queued, or the handshake
    /// failed.
    fn finish_initialize(
        &mut self,
        result: InitializeResult,
    ) -> Result<Arc<InitializeResult>, ClientError> {
        match negotiate(&result.protocol_version, &self.config.supported_versions) {
            Ok(version) => {
                let result = Arc::new(result);
                self.negotiated = Some(version);
                self.init_result = Some(Arc::clone(&result));
                self.phase = Phase::Ready;
                self.transmit.push_back(Message::Notification(Notification::new(
                    methods::NOTIFICATION_INITIALIZED,
                    None,
                )));
                Ok(result)
            }
            Err(e) => {
                self.phase = Phase::Failed;
                Err(ClientError::UnsupportedVersion(e))
            }
        }
    }

    fn handle_server_request(&mut self, r: Request) {
        let caps = &self.config.capabilities;
        let declared = match r.method.as_str() {
            methods::PING => {
                self.transmit
                    .push_back(Message::Response(Response::new(r.id, Value::Object(Map::new()))));
                return;
            }
            methods::ROOTS_LIST => caps.roots.is_some(),
            methods::SAMPLING_CREATE_MESSAGE => caps.sampling.is_some(),
            methods::ELICITATION_CREATE => caps.elicitation.is_some(),
            _ => false,
        };
        if !declared {
            tracing::debug!(method = %r.method, "answering a server request with method-not-found");
            self.transmit.push_back(Message::Error(ErrorResponse::new(
                Some(r.id),
                ErrorObject::method_not_found(&r.method),
            )));
            return;
        }
        self.inbound.insert(r.id.clone(), r.method.as_str().into());
        self.events.push_back(Event::ServerRequest(ServerRequest {
            id: r.id,
            method: r.method,
            params: r.params,
        }));
    }

    /// Answers a server request delivered as [`Event::ServerRequest`]. Ignored
    /// when the server cancelled it meanwhile (no answer may be sent then).
    pub fn respond(&mut self, id: RequestId, outcome: Result<Value, ErrorObject>) {
        if self.inbound.remove(&id).is_none() {
            tracing::debug!(%id, "not answering a server request that was cancelled or is unknown");
            return;
        }
        self.transmit.push_back(match outcome {
            Ok(result) => Message::Response(Response::new(id, result)),
            Err(error) => Message::Error(ErrorResponse::new(Some(id), error)),
        });
    }

    fn handle_notification(&mut self, n: Notification, now: Instant) {
        if let Some(id) = subscription_id(&n) {
            self.events.push_back(Event::Subscription { id, notification: n.clone() });
        }
        match n.method.as_str() {
            methods::NOTIFICATION_PROGRESS => self.handle_progress(n, now),
            methods::NOTIFICATION_TOOLS_LIST_CHANGED => {
                self.tools = None;
                self.tools_generation += 1;
                self.events.push_back(Event::ListChanged(ListKind::Tools));
            }
            methods::NOTIFICATION_PROMPTS_LIST_CHANGED => {
                self.events.push_back(Event::ListChanged(ListKind::Prompts))
            }
            methods::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                self.events.push_back(Event::ListChanged(ListKind::Resources))
            }
            methods::NOTIFICATION_MESSAGE => {
                match n.params.map(serde_json::from_value::<LoggingMessageNotificationParams>) {
                    Some(Ok(p)) => {
                        log_server_message(&p);
                        self.events.push_back(Event::Log(p));
                    }
                    _ => tracing::debug!("ignoring a notifications/message without valid params"),
                }
            }
            methods::NOTIFICATION_CANCELLED => {
                match n.params.map(serde_json::from_value::<CancelledNotificationParams>) {
                    Some(Ok(p)) => {
                        let Some(id) = p.request_id else { return };
                        if self.inbound.remove(&id).is_some() {
                            self.events
                                .push_back(Event::ServerRequestCancelled { id, reason: p.reason });
                        } else if let RequestId::Number(n) = &id
                            && self
                                .pending
                                .get(n)
                                .is_some_and(|p| &*p.method == methods::SUBSCRIPTIONS_LISTEN)
                            && let Some(p) = self.pending.remove(n)
                        {
                            // stdio, 2026-07-28: the server ends one of the
                            // client's subscriptions.
                            self.events.push_back(Event::Reply {
                                id,
                                waiter: p.waiter,
                                outcome: Err(ClientError::Cancelled { method: p.method.into() }),
                            });
                        }
                    }
                    _ => tracing::debug!("ignoring a notifications/cancelled without valid params"),
                }
            }
            _ => self.events.push_back(Event::Notification(n)),
        }
    }

    fn handle_progress(&mut self, n: Notification, now: Instant) {
        let Some(Ok(params)) = n.params.map(serde_json::from_value::<ProgressNotificationParams>)
        else {
            tracing::debug!("ignoring a progress notification without valid params");
            return;
        };
        let id = match &params.progress_token {
            ProgressToken::Number(id) => *id,
            ProgressToken::String(_) => {
                tracing::debug!(token = %params.progress_token, "progress for a token this client did not issue");
                return;
            }
        };
        let Some(p) = self.pending.get_mut(&id) else {
            tracing::debug!(id, "progress for a request that is not pending");
            return;
        };
        if p.reset_on_progress {
            let mut deadline = now + p.timeout;
            if let Some(hard) = p.hard_deadline {
                deadline = deadline.min(hard);
            }
            if deadline > p.deadline {
                p.deadline = deadline;
                self.timers.push(Reverse((deadline, id)));
            }
        }
        let callback = p.on_progress.clone();
        self.events.push_back(Event::Progress { id: RequestId::Number(id), callback, params });
    }

    /// The next message to send, if any.
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.transmit.pop_front()
    }

    /// Queues a notification the host sends (after whatever is queued
    /// already); it leaves through [`poll_transmit`](Self::poll_transmit).
    /// Refused before the handshake finished and after close.
    pub fn queue_notification(&mut self, notification: Notification) -> Result<(), ClientError> {
        match self.phase {
            Phase::Ready => {
                self.transmit.push_back(Message::Notification(notification));
                Ok(())
            }
            Phase::Closed => Err(ClientError::Closed { method: notification.method }),
            _ => Err(ClientError::NotInitialized { method: notification.method }),
        }
    }

    /// Queues an answer to a message the core could not take (see
    /// [`jsonrpc::invalid_request_reply`](crate::jsonrpc::invalid_request_reply));
    /// it leaves through [`poll_transmit`](Self::poll_transmit). Dropped
    /// after close.
    pub fn queue_error_response(&mut self, response: ErrorResponse) {
        if self.phase != Phase::Closed {
            self.transmit.push_back(Message::Error(response));
        }
    }

    /// Whether messages wait in [`poll_transmit`](Self::poll_transmit).
    pub fn has_transmit(&self) -> bool {
        !self.transmit.is_empty()
    }

    /// The next event to act on, if any.
    pub fn poll_event(&mut self) -> Option<Event<W>> {
        self.events.pop_front()
    }

    /// The connection ended: every waiting request gets
    /// [`ClientError::Closed`], server requests are forgotten, and nothing
    /// more may be sent.
    pub fn close(&mut self) {
        self.fail_pending();
        self.phase = Phase::Closed;
        self.transmit.clear();
    }

    /// Starts over on the same configuration (a new session, a new child):
    /// every waiting request gets [`ClientError::Closed`], the handshake and
    /// the caches are forgotten. Ids keep increasing.
    pub fn reset(&mut self) {
        self.fail_pending();
        self.phase = Phase::Fresh;
        self.negotiated = None;
        self.init_result = None;
        self.modern = None;
        self.probe_meta = None;
        self.transmit.clear();
        self.tools = None;
        self.tools_generation += 1;
    }

    fn fail_pending(&mut self) {
        let mut ids: Vec<i64> = self.pending.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(p) = self.pending.remove(&id) {
                self.events.push_back(Event::Reply {
                    id: RequestId::Number(id),
                    waiter: p.waiter,
                    outcome: Err(ClientError::Closed { method: p.method.into() }),
                });
            }
        }
        self.timers.clear();
        self.inbound.clear();
    }

    /// The cached tool list, if one was stored and no `list_changed` came since.
    pub fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        self.tools.clone()
    }

    /// A counter that changes whenever the tool cache is invalidated; pass the
    /// value read before listing to [`store_tools`](Self::store_tools).
    pub fn tools_generation(&self) -> u64 {
        self.tools_generation
    }

    /// Stores a freshly listed tool list, unless the list changed while it was
    /// being fetched (then the list is returned but not cached).
    pub fn store_tools(&mut self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        let tools: Arc<[Tool]> = tools.into();
        if generation == self.tools_generation {
            self.tools = Some(tools.clone());
        }
        tools
    }
}

/// Hashes the core's own request ids: numbers it allocates in sequence,
/// which no peer chooses (an answer's id is only looked up), so one
/// multiplication serves where SipHash's resistance to chosen keys is not
/// needed.
#[derive(Default, Clone, Copy)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(ID_MIX);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = u64::from_ne_bytes(n.to_ne_bytes()).wrapping_mul(ID_MIX);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// An odd constant (2^64 / the golden ratio): consecutive ids spread over
/// the high bits a hash table tags its entries with.
const ID_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// A request's method as a pending request keeps it: the protocol's own
/// names without an allocation.
/// The discovery as the [`InitializeResult`] the core keeps: its members
/// moved, `serverInfo` read from its `_meta`, `supportedVersions` and the
/// members this crate does not know kept in `extra`.
fn discovered(version: ProtocolVersion, d: DiscoverResult) -> InitializeResult {
    let server_info = d.server_info().unwrap_or_else(|| Implementation::new("", ""));
    let DiscoverResult { supported_versions, capabilities, instructions, meta, mut extra } = d;
    let versions = supported_versions.into_iter().map(Value::String).collect();
    extra.insert("supportedVersions".into(), Value::Array(versions));
    InitializeResult {
        protocol_version: version.as_str().into(),
        capabilities,
        server_info,
        instructions,
        meta,
        extra,
    }
}

fn method_name(method: &str) -> Cow<'static, str> {
    const KNOWN: &[&str] = &[
        methods::TOOLS_CALL,
        methods::RESOURCES_READ,
        methods::PROMPTS_GET,
        methods::TOOLS_LIST,
        methods::RESOURCES_LIST,
        methods::PROMPTS_LIST,
        methods::PING,
        methods::INITIALIZE,
        methods::SERVER_DISCOVER,
    ];
    match KNOWN.iter().find(|known| **known == method) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(method.to_owned()),
    }
}

/// A request as JSON text, encoded from borrowed parts.
///
/// With `meta` (a JSON object's text), the parameters get a `_meta` member
/// holding it: `null` parameters become `{"_meta":...}`, an object gets the
/// member appended. `None` when that cannot be done by appending (the
/// parameters are not an object, or already mention `_meta`): the caller
/// merges by value.
fn request_text<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
    meta: Option<&[u8]>,
) -> Result<Option<Vec<u8>>, serde_json::Error> {
    // Room for a short call and the line ending a transport adds, so the
    // buffer is not grown (and copied) while it is written.
    let mut text = Vec::with_capacity(256 + meta.map_or(0, <[u8]>::len));
    text.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_json(&mut text, id)?;
    text.extend_from_slice(b",\"method\":");
    write_json_str(&mut text, method);
    text.extend_from_slice(b",\"params\":");
    let start = text.len();
    write_json(&mut text, params)?;
    if let Some(meta) = meta {
        let written = &text[start..];
        // Raw JSON text may hold whitespace: `{ }` is an empty object too.
        let members = written.strip_prefix(b"{").and_then(|w| w.strip_suffix(b"}"));
        if written == b"null" || members.is_some_and(|m| m.iter().all(u8::is_ascii_whitespace)) {
            text.truncate(start);
            text.extend_from_slice(b"{\"_meta\":");
        } else if members.is_some() && !contains(written, b"\"_meta\"") {
            text.pop();
            text.extend_from_slice(b",\"_meta\":");
        } else {
            return Ok(None);
        }
        text.extend_from_slice(meta);
        text.push(b'}');
    }
    text.push(b'}');
    crate::jsonrpc::make_one_line(&mut text);
    Ok(Some(text))
}

/// Whether a request's `_meta` can be written as text
/// ([`meta_text`]) rather than merged into its parameters as a value: no
/// member of the caller's `_meta` is one the progress token or the
/// stateless era's `_meta` also sets (where the value merge decides which
/// wins).
fn meta_text_fits(
    extra: Option<&Map<String, Value>>,
    progress: bool,
    modern: Option<&ModernMeta>,
) -> bool {
    extra.into_iter().flatten().all(|(k, _)| {
        !(progress && k == PROGRESS_TOKEN_META_KEY)
            && modern.is_none_or(|m| !m.map().contains_key(k))
    })
}

/// A request's `_meta` object as text: the progress token (the request's
/// id), the caller's members, the stateless era's (its text as the core
/// keeps it). The same members [`with_progress_token`] and [`with_meta`]
/// give the value when [`meta_text_fits`].
fn meta_text(
    progress: Option<i64>,
    extra: Option<&Map<String, Value>>,
    modern: Option<&[u8]>,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut text = Vec::with_capacity(64 + modern.map_or(0, <[u8]>::len));
    text.push(b'{');
    if let Some(id) = progress {
        write_json_str(&mut text, PROGRESS_TOKEN_META_KEY);
        text.push(b':');
        write_json(&mut text, &id)?;
        text.push(b',');
    }
    for (k, v) in extra.into_iter().flatten() {
        write_json_str(&mut text, k);
        text.push(b':');
        write_json(&mut text, v)?;
        text.push(b',');
    }
    let members = modern
        .and_then(|m| m.trim_ascii().strip_prefix(b"{")?.strip_suffix(b"}"))
        .filter(|m| !m.trim_ascii().is_empty());
    match members {
        Some(members) => text.extend_from_slice(members),
        // Nothing after the last comma (or an empty object).
        None if text.len() > 1 => {
            text.pop();
        }
        None => {}
    }
    text.push(b'}');
    Ok(text)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Merges `protocol` (the era's members) and then `extra` (the caller's)
/// into the parameters' `_meta`; the caller cannot change the version,
/// capabilities or identity the era's members give.
fn with_meta(
    method: &str,
    params: Option<Value>,
    extra: Option<&Map<String, Value>>,
    protocol: Option<&Map<String, Value>>,
) -> Result<Value, ClientError> {
    let mut obj = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(_) => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "_meta needs object parameters".into(),
            });
        }
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(ClientError::InvalidParams {
            method: method.into(),
            reason: "_meta must be an object".into(),
        });
    };
    for (k, v) in protocol.into_iter().flatten() {
        meta.insert(k.clone(), v.clone());
    }
    // The caller's members go on top, but for the version, capabilities
    // and identity the connection speaks with (a per-call log level, say,
    // replaces the client's).
    for (k, v) in extra.into_iter().flatten() {
        if protocol.is_none()
            || ![PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]
                .contains(&k.as_str())
        {
            meta.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(obj))
}

fn with_progress_token(method: &str, params: Option<Value>, id: i64) -> Result<Value, ClientError> {
    let mut obj = match params {
        None => Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(_) => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "progress needs object parameters".into(),
            });
        }
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    match meta {
        Value::Object(meta) => {
            meta.insert(PROGRESS_TOKEN_META_KEY.into(), Value::from(id));
        }
        _ => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "_meta must be an object".into(),
            });
        }
    }
    Ok(Value::Object(obj))
}

/// The `subscriptions/listen` stream a notification belongs to: its
/// `_meta` `io.modelcontextprotocol/subscriptionId`.
fn subscription_id(n: &Notification) -> Option<RequestId> {
    let id = n.params.as_ref()?.get("_meta")?.get(SUBSCRIPTION_ID_META_KEY)?;
    serde_json::from_value(id.clone()).ok()
}

fn log_server_message(p: &LoggingMessageNotificationParams) {
    let logger = p.logger.as_deref().unwrap_or("");
    let data = &p.data;
    match p.level {
        LoggingLevel::Debug => tracing::debug!(target: "mcp::server", logger, %data),
        LoggingLevel::Info | LoggingLevel::Notice => {
            tracing::info!(target: "mcp::server", logger, %data)
        }
        LoggingLevel::Warning => tracing::warn!(target: "mcp::server", logger, %data),
        _ => tracing::error!(target: "mcp::server", logger, level = ?p.level, %data),
    }
}
