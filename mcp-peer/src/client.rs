//! The one client: the session driver around the sans-IO core, generic over
//! a [`Transport`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::ops;
use mcp_proto::client::{
    ClientCore, ClientError, DriverWork, Event, ListKind, RequestOptions, ServerNotification,
};
use mcp_proto::jsonrpc::{IncomingOf, Message, Notification, Request, RequestId};
use mcp_proto::methods;
use mcp_proto::types::{DiscoverResult, InitializeResult, InputRequiredResult, ResultKind, Tool};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;

use crate::options::{ClientOptions, EraChoice};
use crate::transport::{Link, LinkTarget, OutgoingRequest, Transport, TransportError};

pub(crate) type Outcome = Result<Box<RawValue>, ClientError>;
type Waiter = oneshot::Sender<Outcome>;

/// How long [`Client::close`] waits for what the core queued to be sent.
const CLOSE_FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How many notifications a slow [`notifications`](Client::notifications)
/// subscriber may fall behind before it skips the oldest.
const NOTIFICATION_BUFFER: usize = 256;

/// The current time on tokio's clock (so a paused clock in tests pauses the
/// deadlines too), as the core takes it.
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A client of one MCP server, over any [`Transport`].
///
/// It owns the protocol core (ids, the handshake, deadlines, routing) and
/// everything that drives it: the handshake runs once before the first
/// request (concurrent callers share it), every request waits under its
/// deadline and sends `notifications/cancelled` when it expires or when its
/// future is dropped, the server's requests (roots, sampling, elicitation)
/// go to the host's handlers as tasks, and notifications reach the
/// [`on_event`](ClientOptions::on_event) callback and the
/// [`notifications`](Self::notifications) streams.
///
/// Cheap to clone: clones share the connection. Dropping the last clone
/// drops the transport (which ends its connection); [`close`](Self::close)
/// ends it gracefully.
///
/// Must be used within a Tokio runtime.
pub struct Client<T: Transport> {
    pub(crate) inner: Arc<Inner<T>>,
}

impl<T: Transport> Clone for Client<T> {
    fn clone(&self) -> Self {
        Client { inner: self.inner.clone() }
    }
}

impl<T: Transport + fmt::Debug> fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.inner.options.name)
            .field("transport", &self.inner.transport)
            .field("protocol_version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner<T: Transport> {
    me: Weak<Inner<T>>,
    pub(crate) transport: T,
    pub(crate) options: ClientOptions,
    pub(crate) core: Mutex<ClientCore<Waiter>>,
    /// The open `subscriptions/listen` streams, by request id.
    pub(crate) listeners: crate::subscription::Listeners,
    /// The server, as the result cache's keys name it.
    pub(crate) cache_server: String,
    /// What `tool_list_with` found missing, so a call to an unlisted tool
    /// (or while listing fails) does not list the tools before every call.
    tool_misses: Mutex<ToolMisses>,
    state: Mutex<State>,
    init_lock: tokio::sync::Mutex<()>,
    server_tasks: Mutex<HashMap<RequestId, AbortHandle>>,
    /// Made on the first [`Client::notifications`] call: the channel's ring
    /// of 256 slots is most of a client's memory, and most hosts never
    /// subscribe.
    notifications: std::sync::OnceLock<broadcast::Sender<ServerNotification>>,
}

#[derive(Debug, Default)]
struct State {
    closed: bool,
    /// A handshake failure that no new handshake can mend.
    fatal: Option<ClientError>,
    /// Counts connections: a request knows which one it was sent in.
    epoch: u64,
}

impl<T: Transport> Drop for Inner<T> {
    fn drop(&mut self) {
        for (_, task) in lock(&self.server_tasks).drain() {
            task.abort();
        }
    }
}

/// How long a failed listing keeps `tool_list_with` from listing again.
const LISTING_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Tools a call's headers could not be read from, for one tool-list
/// generation (a `list_changed` or a new connection forgets them).
#[derive(Debug, Default)]
struct ToolMisses {
    generation: u64,
    /// Names the server's list does not have.
    names: std::collections::HashSet<String>,
    /// When listing last failed.
    failed_at: Option<Instant>,
}

impl ToolMisses {
    /// Forgets what belongs to another generation.
    fn at(&mut self, generation: u64) -> &mut ToolMisses {
        if self.generation != generation {
            *self = ToolMisses { generation, ..ToolMisses::default() };
        }
        self
    }
}

/// What the era probe found.
enum Probed {
    /// The stateless era, entered.
    Modern(Arc<InitializeResult>),
    /// A handshake-era server: `initialize` comes next.
    Legacy,
}

/// Whether a transport error carries an error only a stateless-era server
/// sends.
fn is_modern<E: TransportError>(e: &E) -> bool {
    e.protocol_error().is_some_and(ClientError::is_modern_error)
}

/// How one attempt at a request failed.
pub(crate) enum Fail<E> {
    /// The transport failed to carry it.
    Transport(E),
    /// The protocol says no (or the connection closed under it).
    Client(ClientError),
}

/// A request's parameters: a value, or any serialisable type encoded
/// straight into the message when the transport does not need a value.
pub(crate) enum Params<'a, P: ?Sized> {
    Value(Option<Value>),
    Typed(&'a P),
}

impl<T: Transport> Client<T> {
    /// A client over `transport`. Nothing is sent yet: the handshake runs
    /// before the first request, or with [`initialize`](Self::initialize).
    pub fn new(transport: T, options: ClientOptions) -> Client<T> {
        let core = ClientCore::new(options.core_config());
        let cache_server =
            format!("{}|{}", options.name, transport.era_cache_key().unwrap_or_default());
        let inner = Arc::new_cyclic(|me: &Weak<Inner<T>>| Inner {
            me: me.clone(),
            transport,
            options,
            core: Mutex::new(core),
            state: Mutex::new(State::default()),
            init_lock: tokio::sync::Mutex::new(()),
            server_tasks: Mutex::new(HashMap::new()),
            listeners: Mutex::new(HashMap::new()),
            cache_server,
            tool_misses: Mutex::new(ToolMisses::default()),
            notifications: std::sync::OnceLock::new(),
        });
        let weak: Weak<dyn LinkTarget> = Arc::downgrade(&inner) as Weak<dyn LinkTarget>;
        inner.transport.attach(Link::new(weak));
        Client { inner }
    }

    /// The transport (to reach what only its kind offers).
    pub fn transport(&self) -> &T {
        &self.inner.transport
    }

    /// The server's name (from the options), as logs and errors show it.
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// The options the client was made with.
    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        lock(&self.inner.core).protocol_version()
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        lock(&self.inner.core).initialize_result().cloned()
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.inner.state).closed
    }

    /// Runs the handshake if it has not run yet (concurrent callers share
    /// one), and returns the server's answer.
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, T::Error> {
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        let _guard = self.inner.init_lock.lock().await;
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        self.check_open()?;
        self.handshake().await
    }

    /// A stream of the server's notifications, typed
    /// ([`ServerNotification`]): progress, log messages, resource updates,
    /// list changes, cancellations, task status, elicitation completion and
    /// any other, from now on. Each call gives a new, independent subscriber; one that
    /// falls more than 256 notifications behind skips the oldest (logged).
    pub fn notifications(&self) -> crate::Notifications {
        let sender =
            self.inner.notifications.get_or_init(|| broadcast::channel(NOTIFICATION_BUFFER).0);
        crate::Notifications::new(sender.subscribe())
    }

    /// Sends a request and waits for its result (initializing first if
    /// needed), as a JSON value. Dropping the future sends
    /// `notifications/cancelled`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, T::Error> {
        let tool = match method {
            methods::TOOLS_CALL if self.inner.transport.wants_params() => {
                let name = params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
                match name {
                    Some(name) => self.tool_list_with(name).await,
                    None => None,
                }
            }
            _ => None,
        };
        let raw = self.request_raw::<()>(method, Params::Value(params), tool, options).await?;
        mcp_proto::client::ops::parse_result(method, &raw)
            .map_err(|e| self.inner.transport.client_error(e))
    }

    /// Sends a request whose parameters are any serialisable value and
    /// decodes its result into `R`.
    pub async fn request_typed<P, R>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, T::Error>
    where
        P: Serialize + Sync + ?Sized,
        R: serde::de::DeserializeOwned,
    {
        let raw = self.request_raw(method, Params::Typed(params), None, options).await?;
        mcp_proto::client::ops::parse_result(method, &raw)
            .map_err(|e| self.inner.transport.client_error(e))
    }

    /// Sends a notification (initializing first if needed).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), T::Error> {
        self.initialize().await?;
        let queued = lock(&self.inner.core).queue_notification(Notification::new(method, params));
        queued.map_err(|e| self.inner.transport.client_error(e))?;
        self.inner.transport.flush().await
    }

    /// Ends the connection: what the core queued (the
    /// `notifications/cancelled` of requests given up on just before) is
    /// sent first, waiting requests fail, the server's requests in
    /// progress are abandoned, and the transport closes (a child process is
    /// shut down, an HTTP session deleted). Idempotent.
    pub async fn close(&self) -> Result<(), T::Error> {
        {
            let mut state = lock(&self.inner.state);
            if state.closed {
                return Ok(());
            }
            state.closed = true;
        }
        // A timeout or a dropped call queues its cancellation for a flush
        // of its own, which may not have run yet: the server is told before
        // the connection ends (bounded: a server that stopped reading does
        // not hold the close).
        match tokio::time::timeout(CLOSE_FLUSH_WAIT, self.inner.transport.flush()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!(server = %self.name(), error = %e, "sending the messages queued before closing failed");
            }
            Err(_) => {
                tracing::debug!(server = %self.name(), "the messages queued before closing were not sent in time");
            }
        }
        for (_, task) in lock(&self.inner.server_tasks).drain() {
            task.abort();
        }
        let events = {
            let mut core = lock(&self.inner.core);
            core.close();
            drain_events(&mut core)
        };
        self.inner.deliver(events);
        self.inner.transport.close().await
    }

    fn check_open(&self) -> Result<(), T::Error> {
        let state = lock(&self.inner.state);
        if let Some(fatal) = &state.fatal {
            return Err(self.inner.transport.client_error(fatal.clone()));
        }
        if state.closed {
            return Err(self
                .inner
                .transport
                .client_error(ClientError::Closed { method: methods::INITIALIZE.into() }));
        }
        Ok(())
    }

    /// Opens the conversation in the era the options choose (probing when
    /// they leave it open). Called under `init_lock`.
    async fn handshake(&self) -> Result<Arc<InitializeResult>, T::Error> {
        let options = &self.inner.options;
        let key = self.inner.transport.era_cache_key();
        let known_legacy = key.as_deref().is_some_and(crate::era::known_legacy);
        match options.era {
            EraChoice::Legacy => return self.handshake_legacy().await,
            EraChoice::Auto if known_legacy || !self.speaks_modern() => {
                let outcome = self.handshake_legacy().await;
                // A remembered era that no longer holds is probed again.
                match &outcome {
                    Err(e) if known_legacy && (e.is_refusal() || is_modern(e)) => {
                        if let Some(key) = &key {
                            crate::era::forget(key);
                        }
                        tracing::info!(server = %options.name, "the server no longer answers initialize; probing its era again");
                    }
                    _ => return outcome,
                }
            }
            _ => {}
        }
        match self.probe().await? {
            Probed::Modern(result) => Ok(result),
            Probed::Legacy => {
                if let Some(key) = &key {
                    crate::era::remember_legacy(key);
                }
                self.handshake_legacy().await
            }
        }
    }

    /// Whether the options accept a stateless-era version.
    fn speaks_modern(&self) -> bool {
        self.inner.options.supported_versions.iter().any(|v| v.is_modern())
    }

    /// The stateless era's probe: `server/discover` asking for the
    /// preferred modern version. A discovery, or an error only a
    /// stateless-era server sends, means the stateless era (a version both
    /// sides speak is chosen, once more if the server named others); any
    /// other error, a refusal or no answer within the probe timeout means
    /// the handshake era (unless the options pin the stateless era).
    async fn probe(&self) -> Result<Probed, T::Error> {
        let inner = &self.inner;
        let options = &inner.options;
        let pinned = options.era == EraChoice::Modern;
        let supported = &options.supported_versions;
        let mut version = if options.protocol_version.is_modern() {
            options.protocol_version
        } else {
            supported
                .iter()
                .copied()
                .filter(|v| v.is_modern())
                .max()
                .unwrap_or(ProtocolVersion::LATEST)
        };
        let mut tries = 0;
        loop {
            tries += 1;
            let outcome = self.discover_once(version).await;
            let error = match outcome {
                Ok(raw) => {
                    let discovered: Result<DiscoverResult, _> = serde_json::from_str(raw.get());
                    match discovered {
                        Ok(d) => {
                            match mcp_proto::select_version(
                                &d.supported_versions,
                                supported,
                                !pinned,
                            ) {
                                Some(v) if v.is_modern() => return self.enter_modern(v, Some(d)),
                                Some(_) => return Ok(Probed::Legacy),
                                None => {
                                    let e = ClientError::UnsupportedProtocolVersion {
                                        method: methods::SERVER_DISCOVER.into(),
                                        supported: d.supported_versions.clone(),
                                        requested: version.as_str().into(),
                                        client_versions: self.probe_versions().into(),
                                        error: Box::new(mcp_proto::jsonrpc::ErrorObject::new(
                                            mcp_proto::jsonrpc::error_code::UNSUPPORTED_PROTOCOL_VERSION,
                                            "no protocol version in common",
                                        )),
                                    };
                                    return Err(self.fatal(e));
                                }
                            }
                        }
                        Err(e) if pinned => {
                            let e = ClientError::InvalidResult {
                                method: methods::SERVER_DISCOVER.into(),
                                reason: e.to_string(),
                            };
                            return Err(self.fatal(e));
                        }
                        Err(e) => {
                            tracing::debug!(server = %options.name, error = %e, "the server/discover answer is no discovery: a handshake-era server");
                            return Ok(Probed::Legacy);
                        }
                    }
                }
                Err(e) => e,
            };
            let protocol = match &error {
                Fail::Client(e) => Some(e),
                Fail::Transport(e) => e.protocol_error(),
            };
            if let Some(ClientError::UnsupportedProtocolVersion { supported: listed, .. }) =
                protocol
            {
                match mcp_proto::select_version(listed, supported, !pinned) {
                    // Once more with the version chosen from the list (even
                    // the same one: a server may refuse a first request).
                    Some(v) if v.is_modern() && (v != version || tries == 1) && tries < 3 => {
                        version = v;
                        continue;
                    }
                    Some(v) if !v.is_modern() => return Ok(Probed::Legacy),
                    _ => {}
                }
            }
            if protocol.is_some_and(ClientError::is_modern_error) {
                // A stateless-era server that will not serve this client.
                let ours = self.probe_versions();
                return Err(match error {
                    Fail::Client(e) => self.fatal(e.with_client_versions(&ours, Some(version))),
                    Fail::Transport(e) => match e.protocol_error() {
                        Some(p @ ClientError::UnsupportedProtocolVersion { .. }) => {
                            let p = p.clone().with_client_versions(&ours, Some(version));
                            inner.transport.client_error(p)
                        }
                        _ => e,
                    },
                });
            }
            let legacy_sign = match &error {
                Fail::Client(
                    ClientError::Rpc { .. }
                    | ClientError::Timeout { .. }
                    | ClientError::InvalidResult { .. },
                ) => true,
                Fail::Client(_) => false,
                Fail::Transport(e) => {
                    e.is_refusal() || protocol.is_some_and(|p| p.rpc_error().is_some())
                }
            };
            if !legacy_sign {
                return Err(match error {
                    Fail::Client(e) => inner.transport.client_error(e),
                    Fail::Transport(e) => e,
                });
            }
            if pinned {
                // No discovery, but the era is pinned: speak it and let
                // each request find out.
                tracing::debug!(server = %options.name, "server/discover failed; speaking the stateless era as pinned");
                return self.enter_modern(version, None);
            }
            tracing::debug!(server = %options.name, "the era probe found a handshake-era server");
            return Ok(Probed::Legacy);
        }
    }

    /// The versions the probe may settle on: every accepted version, or
    /// only the stateless era's when the options pin it.
    fn probe_versions(&self) -> Vec<ProtocolVersion> {
        let options = &self.inner.options;
        let pinned = options.era == EraChoice::Modern;
        options.supported_versions.iter().copied().filter(|v| !pinned || v.is_modern()).collect()
    }

    /// One `server/discover` exchange under the probe timeout.
    async fn discover_once(
        &self,
        version: ProtocolVersion,
    ) -> Result<Box<RawValue>, Fail<T::Error>> {
        let inner = &self.inner;
        let (tx, rx) = oneshot::channel();
        let timeout = inner.options.probe_timeout.min(inner.options.request_timeout);
        let (request, events) = {
            let mut core = lock(&inner.core);
            if !core.is_fresh() {
                core.reset();
            }
            let request = core.start_probe(version, timeout, tx, now());
            (request, drain_events(&mut core))
        };
        inner.deliver(events);
        let request = request.map_err(Fail::Client)?;
        let body = encode(&request, &inner.transport).map_err(Fail::Transport)?;
        let wants = inner.transport.wants_params();
        let outgoing = OutgoingRequest {
            id: &request.id,
            method: methods::SERVER_DISCOVER,
            body,
            params: if wants { request.params.as_ref() } else { None },
            tool: None,
            protocol_version: Some(version),
        };
        inner.exchange(&request.id, rx, outgoing).await
    }

    fn enter_modern(
        &self,
        version: ProtocolVersion,
        discover: Option<DiscoverResult>,
    ) -> Result<Probed, T::Error> {
        let entered = {
            let mut core = lock(&self.inner.core);
            core.enter_modern(version, discover).map(|()| core.initialize_result().cloned())
        };
        match entered {
            Ok(Some(result)) => {
                tracing::debug!(server = %self.inner.options.name, %version, "speaking the stateless era");
                Ok(Probed::Modern(result))
            }
            Ok(None) => Err(self
                .inner
                .transport
                .client_error(ClientError::Closed { method: methods::SERVER_DISCOVER.into() })),
            Err(e) => Err(self.fatal(e)),
        }
    }

    /// Remembers a failure no new attempt can mend, and returns it.
    fn fatal(&self, e: ClientError) -> T::Error {
        if e.is_fatal_handshake() {
            lock(&self.inner.state).fatal = Some(e.clone());
        }
        self.inner.transport.client_error(e)
    }

    /// The `initialize` exchange. Called under `init_lock`.
    async fn handshake_legacy(&self) -> Result<Arc<InitializeResult>, T::Error> {
        let inner = &self.inner;
        let (tx, rx) = oneshot::channel();
        let (request, events) = {
            let mut core = lock(&inner.core);
            if !core.is_fresh() {
                // A connection that was lost starts again from a fresh core.
                core.reset();
            }
            let request = core.initialize(tx, now());
            (request, drain_events(&mut core))
        };
        inner.deliver(events);
        let request = request.map_err(|e| inner.transport.client_error(e))?;
        let body = encode(&request, &inner.transport)?;
        let wants = inner.transport.wants_params();
        let outgoing = OutgoingRequest {
            id: &request.id,
            method: methods::INITIALIZE,
            body,
            params: if wants { request.params.as_ref() } else { None },
            tool: None,
            protocol_version: None,
        };
        let exchange = inner.transport.send_request(outgoing);
        match inner.wait(&request.id, rx, exchange).await {
            Ok(_) => {
                // notifications/initialized goes out before any other request.
                if let Err(e) = inner.transport.flush().await {
                    tracing::debug!(server = %inner.options.name, error = %e, "sending notifications/initialized failed");
                }
                let result = lock(&inner.core).initialize_result().cloned();
                let result = result.ok_or_else(|| {
                    inner
                        .transport
                        .client_error(ClientError::Closed { method: methods::INITIALIZE.into() })
                })?;
                inner.transport.initialized().await;
                Ok(result)
            }
            Err(Fail::Transport(e)) => {
                inner.forget(&request.id, "the initialize exchange failed");
                Err(e)
            }
            Err(Fail::Client(e)) => {
                if e.is_fatal_handshake() {
                    lock(&inner.state).fatal = Some(e.clone());
                }
                Err(inner.transport.client_error(e))
            }
        }
    }

    /// Starts a new connection after the server dropped the one `epoch`
    /// counted (unless another caller already did), and runs the handshake.
    async fn renew(&self, epoch: u64) -> Result<(), T::Error> {
        let _guard = self.inner.init_lock.lock().await;
        self.check_open()?;
        let reset = {
            let mut state = lock(&self.inner.state);
            let reset = state.epoch == epoch;
            if reset {
                state.epoch += 1;
            }
            reset
        };
        if reset {
            let events = {
                let mut core = lock(&self.inner.core);
                core.reset();
                drain_events(&mut core)
            };
            self.inner.deliver(events);
        }
        if self.initialize_result().is_none() {
            self.handshake().await?;
        }
        Ok(())
    }

    fn epoch(&self) -> u64 {
        lock(&self.inner.state).epoch
    }

    /// Whether the connection the request was sent in is gone (and the
    /// client is not closed).
    fn lost_since(&self, epoch: u64) -> bool {
        let state = lock(&self.inner.state);
        !state.closed && state.epoch != epoch
    }

    /// Sends a request (initializing first) and waits for its answer, as
    /// JSON text. A request the server refused because its session expired
    /// is sent again once in a new session; one that was out when the
    /// connection was lost is sent again once when the transport allows it
    /// and the method is idempotent.
    pub(crate) async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'_, P>,
        tool: Option<(Arc<[Tool]>, usize)>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        self.request_inner(method, params, tool, options, true).await
    }

    /// [`request_raw`](Self::request_raw); with `poll_tasks` false, a task
    /// handle (the tasks extension's `resultType: "task"`) is returned as
    /// it came instead of being followed to its end.
    pub(crate) async fn request_inner<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'_, P>,
        tool: Option<(Arc<[Tool]>, usize)>,
        options: RequestOptions,
        poll_tasks: bool,
    ) -> Result<Box<RawValue>, T::Error> {
        #[cfg(feature = "otel")]
        let options = crate::otel::with_trace_context(options);
        let mut tool = tool;
        let transport = &self.inner.transport;
        let mut params = params;
        let mut again = false;
        let mut rounds = 0usize;
        self.initialize().await?;
        let mut cache_key = self.cache_key(method, &params, &options);
        if let (Some(key), Some(cache)) = (&cache_key, &self.inner.options.cache)
            && !options.no_cache
            && let Some(hit) = cache.get(key, now())
        {
            tracing::trace!(server = %self.name(), method, "answered from the cache");
            return Ok(hit);
        }
        loop {
            self.initialize().await?;
            let epoch = self.epoch();
            let called = tool.as_ref().map(|(list, i)| &list[*i]);
            let (outcome, back) = self.attempt(method, params, called, &options).await;
            params = back;
            match outcome {
                Ok(raw) => {
                    if !lock(&self.inner.core).is_modern() {
                        return Ok(raw);
                    }
                    match mcp_proto::types::result_kind(raw.get()) {
                        Ok(ResultKind::Complete) => {
                            if let (Some(key), Some(cache)) =
                                (cache_key.take(), &self.inner.options.cache)
                            {
                                let hint = crate::cache::hint_of(&raw);
                                if let Some(ttl) = hint.ttl_ms.filter(|t| *t > 0) {
                                    let ttl = std::time::Duration::from_millis(ttl);
                                    cache.put(key, &raw, hint, ttl, now());
                                }
                            }
                            return Ok(raw);
                        }
                        Ok(ResultKind::InputRequired) => {
                            // A retry's answer depends on its input: never cached.
                            cache_key = None;
                            rounds += 1;
                            let next = self.fulfil(method, &raw, params, rounds).await;
                            params =
                                Params::Value(Some(next.map_err(|e| transport.client_error(e))?));
                        }
                        Ok(ResultKind::Task) => {
                            if method != methods::TOOLS_CALL || !self.declares_tasks() {
                                let e = ClientError::InvalidResult {
                                    method: method.into(),
                                    reason:
                                        "a task handle, which this request may not be answered with"
                                            .into(),
                                };
                                return Err(transport.client_error(e));
                            }
                            if !poll_tasks {
                                return Ok(raw);
                            }
                            return self.follow_task(method, raw).await;
                        }
                        Err(e) => {
                            let e = ClientError::InvalidResult {
                                method: method.into(),
                                reason: e.to_string(),
                            };
                            return Err(transport.client_error(e));
                        }
                    }
                }
                Err(Fail::Transport(e))
                    if !again
                        && matches!(
                            e.protocol_error(),
                            Some(ClientError::HeaderMismatch { .. })
                        )
                        && tool.is_some() =>
                {
                    // The tool's definition may have changed (its
                    // `x-mcp-header` annotations): list again, and send
                    // again once when it did.
                    again = true;
                    let Some((list, i)) = &tool else { return Err(e) };
                    let old = &list[*i];
                    let fresh = self.relist_tools().await;
                    match fresh.ok().and_then(|l| {
                        let j = l.iter().position(|t| t.name == old.name)?;
                        (l[j] != *old).then_some((l, j))
                    }) {
                        Some(changed) => {
                            tracing::info!(server = %self.name(), tool = %old.name, "the server refused the call's headers and the tool changed; sending again");
                            tool = Some(changed);
                        }
                        None => return Err(e),
                    }
                }
                Err(Fail::Transport(e)) if e.is_stream_lost() && !again && self.is_modern() => {
                    if !methods::is_idempotent(method) {
                        return Err(e);
                    }
                    tracing::info!(server = %self.name(), method, "the answer's stream broke; sending the request again with a new id");
                    again = true;
                }
                Err(Fail::Client(ClientError::UnsupportedProtocolVersion {
                    supported, ..
                })) if !again && self.is_modern() => {
                    // The server changed its mind on versions: probe again.
                    tracing::info!(server = %self.name(), method, ?supported, "the server refused the protocol version; discovering again");
                    again = true;
                    self.renew(epoch).await?;
                }
                Err(Fail::Transport(e)) if e.is_session_expired() && !again => {
                    tracing::info!(server = %self.name(), method, "the server ended the session; starting a new one");
                    again = true;
                    self.renew(epoch).await?;
                }
                Err(Fail::Transport(e)) => return Err(e),
                Err(Fail::Client(ClientError::Closed { .. }))
                    if self.lost_since(epoch) && transport.resends_after_loss() =>
                {
                    if again || !methods::is_idempotent(method) {
                        let lost = ClientError::ConnectionLost { method: method.into() };
                        return Err(transport.client_error(lost));
                    }
                    again = true;
                    self.renew(epoch).await?;
                }
                Err(Fail::Client(ClientError::NotInitialized { .. })) if !again => {
                    // The connection was renewed between the check and the
                    // send: initialize and go on in the new one.
                    again = true;
                }
                Err(Fail::Client(e)) => return Err(transport.client_error(e)),
            }
        }
    }

    /// The result-cache key of a request, when its answer may come from
    /// (and go to) the cache: the stateless era, a cacheable method, and
    /// nothing in the call beyond method and parameters.
    fn cache_key<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &Params<'_, P>,
        options: &RequestOptions,
    ) -> Option<crate::cache::CacheKey> {
        self.inner.options.cache.as_ref()?;
        if !crate::cache::is_cacheable(method)
            || options.meta.is_some()
            || options.on_progress.is_some()
            || options.reset_timeout_on_progress
            || !self.is_modern()
        {
            return None;
        }
        let params = match params {
            Params::Value(v) => crate::cache::key_params(v.as_ref()),
            Params::Typed(p) => crate::cache::key_params(serde_json::to_value(p).ok().as_ref()),
        };
        Some(crate::cache::CacheKey {
            server: self.inner.cache_server.clone(),
            method: method.to_owned(),
            params,
        })
    }

    /// The tool list from the server, boxed: a request may need it while
    /// it is itself one of the requests listing makes.
    fn relist_tools(&self) -> mcp_proto::client::BoxFuture<'_, Result<Arc<[Tool]>, T::Error>> {
        *lock(&self.inner.tool_misses) = ToolMisses::default();
        Box::pin(ops::list_tools_fresh(self, RequestOptions::default()))
    }

    /// Whether the connection speaks the stateless era.
    fn is_modern(&self) -> bool {
        lock(&self.inner.core).is_modern()
    }

    /// Fulfils an `input_required` result through the host's handlers and
    /// returns the parameters of the retry: the original ones with
    /// `inputResponses` (when the server asked for input) and the exact
    /// `requestState` (only when the server sent one).
    async fn fulfil<P: Serialize + ?Sized>(
        &self,
        method: &str,
        raw: &RawValue,
        params: Params<'_, P>,
        rounds: usize,
    ) -> Result<Value, ClientError> {
        if !methods::may_require_input(method) {
            return Err(ClientError::InvalidResult {
                method: method.into(),
                reason: "input_required is not an answer this method may give".into(),
            });
        }
        let max = self.inner.options.max_input_rounds;
        if rounds > max {
            return Err(ClientError::TooManyInputRounds { method: method.into(), rounds: max });
        }
        let asked: InputRequiredResult = serde_json::from_str(raw.get()).map_err(|e| {
            ClientError::InvalidResult { method: method.into(), reason: e.to_string() }
        })?;
        if asked.input_requests.is_none() && asked.request_state.is_none() {
            return Err(ClientError::InvalidResult {
                method: method.into(),
                reason: "input_required with neither inputRequests nor requestState".into(),
            });
        }
        let requests = asked.input_requests.iter().flatten();
        let responses = self.answer_inputs(method, requests).await?;
        let mut obj = match params {
            Params::Value(None) => serde_json::Map::new(),
            Params::Value(Some(Value::Object(obj))) => obj,
            Params::Value(Some(other)) => {
                return Err(ClientError::InvalidParams {
                    method: method.into(),
                    reason: format!("parameters must be an object, not {other}"),
                });
            }
            Params::Typed(p) => match serde_json::to_value(p) {
                Ok(Value::Object(obj)) => obj,
                Ok(Value::Null) => serde_json::Map::new(),
                Ok(_) | Err(_) => {
                    return Err(ClientError::InvalidParams {
                        method: method.into(),
                        reason: "parameters must be an object".into(),
                    });
                }
            },
        };
        // Nothing of an earlier round is carried over: each retry holds
        // only what the latest answer asked for.
        obj.remove("inputResponses");
        obj.remove("requestState");
        if asked.input_requests.is_some() {
            obj.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = asked.request_state {
            obj.insert("requestState".into(), Value::String(state));
        }
        // The protocol's own `_meta` members are added again on sending.
        Ok(Value::Object(obj))
    }

    /// Answers a server's input requests (of an `input_required` result or
    /// of a task) through the host's handlers, by their keys.
    pub(crate) async fn answer_inputs<'r>(
        &self,
        method: &str,
        requests: impl Iterator<Item = (&'r String, &'r mcp_proto::types::InputRequest)>,
    ) -> Result<serde_json::Map<String, Value>, ClientError> {
        let mut responses = serde_json::Map::new();
        let handlers = &self.inner.options.handlers;
        for (key, request) in requests {
            tracing::debug!(server = %self.name(), method, key, input = %request.method, "fulfilling an input request");
            match handlers.handle(&request.method, request.params.clone()).await {
                Ok(result) => {
                    responses.insert(key.clone(), result);
                }
                Err(error) => {
                    return Err(ClientError::InputRequestFailed {
                        method: method.into(),
                        key: key.clone(),
                        input_method: request.method.clone(),
                        error: Box::new(error),
                    });
                }
            }
        }
        Ok(responses)
    }

    /// One attempt at a request. Gives the parameters back for another.
    async fn attempt<'p, P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'p, P>,
        tool: Option<&Tool>,
        options: &RequestOptions,
    ) -> (Result<Box<RawValue>, Fail<T::Error>>, Params<'p, P>) {
        let inner = &self.inner;
        let (tx, rx) = oneshot::channel();
        let modern = {
            let core = lock(&inner.core);
            core.protocol_version().filter(|_| core.is_modern())
        };
        if !inner.transport.wants_params()
            && let Params::Typed(p) = &params
        {
            let started = lock(&inner.core).start_request_encoded(method, p, options, tx, now());
            let (id, body) = match started {
                Ok(s) => s,
                Err(e) => return (Err(Fail::Client(e)), params),
            };
            let outgoing = OutgoingRequest {
                id: &id,
                method,
                body,
                params: None,
                tool: None,
                protocol_version: modern,
            };
            return (inner.exchange(&id, rx, outgoing).await, params);
        }
        let value = match params {
            Params::Value(v) => v,
            Params::Typed(p) => match serde_json::to_value(p) {
                Ok(v) => Some(v),
                Err(e) => {
                    let e =
                        ClientError::InvalidParams { method: method.into(), reason: e.to_string() };
                    return (Err(Fail::Client(e)), params);
                }
            },
        };
        let started = lock(&inner.core).start_request(method, value, options, tx, now());
        let request = match started {
            Ok(r) => r,
            Err(e) => return (Err(Fail::Client(e)), Params::Value(None)),
        };
        let body = match encode(&request, &inner.transport) {
            Ok(b) => b,
            Err(e) => {
                inner.forget(&request.id, "the request could not be encoded");
                return (Err(Fail::Transport(e)), Params::Value(request.params));
            }
        };
        let outgoing = OutgoingRequest {
            id: &request.id,
            method,
            body,
            params: if inner.transport.wants_params() { request.params.as_ref() } else { None },
            tool,
            protocol_version: modern,
        };
        let outcome = inner.exchange(&request.id, rx, outgoing).await;
        (outcome, Params::Value(request.params))
    }

    /// The cached tool list and the index of `name` in it, listing the
    /// tools first when the cache lacks it. `None` when the listing fails
    /// or the server does not list the tool (logged).
    pub(crate) async fn tool_list_with(&self, name: &str) -> Option<(Arc<[Tool]>, usize)> {
        let (cached, generation) = {
            let core = lock(&self.inner.core);
            (core.cached_tools(), core.tools_generation())
        };
        if let Some(tools) = &cached
            && let Some(i) = tools.iter().position(|t| t.name == name)
        {
            return Some((tools.clone(), i));
        }
        {
            // Listing again for every call to a tool the list lacks (or
            // while listing fails) would double each call's round trips.
            let mut misses = lock(&self.inner.tool_misses);
            let misses = misses.at(generation);
            let failed_lately = misses.failed_at.is_some_and(|t| t.elapsed() < LISTING_RETRY_AFTER);
            if failed_lately || (cached.is_some() && misses.names.contains(name)) {
                return None;
            }
        }
        match mcp_proto::client::ops::list_tools_fresh(self, RequestOptions::default()).await {
            Ok(tools) => match tools.iter().position(|t| t.name == name) {
                Some(i) => Some((tools, i)),
                None => {
                    tracing::debug!(server = %self.name(), tool = name, "the server does not list the tool");
                    lock(&self.inner.tool_misses).at(generation).names.insert(name.to_owned());
                    None
                }
            },
            Err(e) => {
                tracing::debug!(server = %self.name(), error = %e, "listing the tools failed");
                lock(&self.inner.tool_misses).at(generation).failed_at = Some(Instant::now());
                None
            }
        }
    }
}

impl<T: Transport> Inner<T> {
    /// Sends a started request and waits for its answer under its
    /// deadline; cancels it when the caller stops waiting.
    pub(crate) async fn exchange(
        &self,
        id: &RequestId,
        rx: oneshot::Receiver<Outcome>,
        outgoing: OutgoingRequest<'_>,
    ) -> Result<Box<RawValue>, Fail<T::Error>> {
        let mut guard = CancelOnDrop { inner: self.me.clone(), id: Some(id.clone()) };
        let exchange = self.transport.send_request(outgoing);
        let outcome = self.wait(id, rx, exchange).await;
        guard.id = None;
        if let Err(Fail::Transport(_)) = &outcome {
            self.forget(id, "the transport failed to carry the request");
        }
        outcome
    }

    /// Waits for a request's outcome while its exchange runs, expiring
    /// deadlines as they pass.
    async fn wait(
        &self,
        id: &RequestId,
        mut rx: oneshot::Receiver<Outcome>,
        exchange: impl Future<Output = Result<(), T::Error>>,
    ) -> Result<Box<RawValue>, Fail<T::Error>> {
        let closed = || ClientError::Closed { method: String::new() };
        tokio::pin!(exchange);
        let mut running = true;
        loop {
            let deadline = lock(&self.core).deadline(id);
            let Some(deadline) = deadline else { break };
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    return outcome.unwrap_or_else(|_| Err(closed())).map_err(Fail::Client);
                }
                result = &mut exchange, if running => {
                    running = false;
                    if let Err(e) = result {
                        return Err(Fail::Transport(e));
                    }
                }
                () = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {
                    let (events, flush) = {
                        let mut core = lock(&self.core);
                        core.handle_timeout(now());
                        (drain_events(&mut core), core.has_transmit())
                    };
                    self.deliver(events);
                    if flush {
                        self.spawn_flush();
                    }
                }
            }
        }
        rx.await.unwrap_or_else(|_| Err(closed())).map_err(Fail::Client)
    }

    /// Stops waiting for a request (sending `notifications/cancelled`).
    fn forget(&self, id: &RequestId, reason: &str) {
        let (events, flush) = {
            let mut core = lock(&self.core);
            if core.deadline(id).is_none() {
                return;
            }
            core.cancel(id, reason);
            (drain_events(&mut core), core.has_transmit())
        };
        self.deliver(events);
        if flush {
            self.spawn_flush();
        }
    }

    fn spawn_flush(&self) {
        let Some(me) = self.me.upgrade() else { return };
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        handle.spawn(async move {
            if let Err(e) = me.transport.flush().await {
                tracing::debug!(server = %me.options.name, error = %e, "sending a message to the server failed");
            }
        });
    }

    /// Drops the cached results an event says changed.
    fn invalidate(&self, event: &Event<Waiter>) {
        use crate::cache::Invalidation;
        let Some(cache) = &self.options.cache else { return };
        let server = self.cache_server.clone();
        let what = match event {
            Event::ListChanged(ListKind::Tools) => {
                Invalidation::Method { server, method: methods::TOOLS_LIST }
            }
            Event::ListChanged(ListKind::Prompts) => {
                Invalidation::Method { server, method: methods::PROMPTS_LIST }
            }
            Event::ListChanged(ListKind::Resources) => {
                cache.invalidate(&Invalidation::Method {
                    server: server.clone(),
                    method: methods::RESOURCES_TEMPLATES_LIST,
                });
                Invalidation::Method { server, method: methods::RESOURCES_LIST }
            }
            Event::Notification(n) if n.method == methods::NOTIFICATION_RESOURCES_UPDATED => {
                let uri = n.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str);
                match uri {
                    Some(uri) => Invalidation::Resource { server, uri: uri.to_owned() },
                    None => return,
                }
            }
            _ => return,
        };
        cache.invalidate(&what);
    }

    /// Acts on the core's events outside its lock.
    fn deliver(&self, events: Vec<Event<Waiter>>) {
        for event in events {
            self.invalidate(&event);
            if let Some(sender) = self.notifications.get()
                && sender.receiver_count() > 0
                && let Some(notification) = notification_of(&event)
            {
                let _ = sender.send(notification);
            }
            let work = event.deliver(self.options.on_event.as_ref(), |waiter, outcome| {
                let _ = waiter.send(outcome);
            });
            match work {
                Some(DriverWork::AnswerServerRequest(request)) => self.answer(request),
                Some(DriverWork::StopServerRequest(id)) => {
                    if let Some(task) = lock(&self.server_tasks).remove(&id) {
                        task.abort();
                    }
                }
                Some(DriverWork::Subscription { id, notification }) => {
                    let listener = lock(&self.listeners).get(&id).cloned();
                    match listener {
                        Some(listener) => listener.deliver(&notification),
                        None => {
                            tracing::debug!(server = %self.options.name, %id, method = %notification.method, "a notification for a subscription that is not open")
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Runs the host's handler for a server request as a task that answers
    /// through the core.
    fn answer(&self, request: mcp_proto::client::ServerRequest) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let weak = self.me.clone();
        let handlers = self.options.handlers.clone();
        let id = request.id.clone();
        // Held while spawning, so the task cannot remove its entry before it
        // is inserted (which would leave a stale entry).
        let mut tasks = lock(&self.server_tasks);
        let task = handle.spawn(async move {
            let outcome = handlers.handle(&request.method, request.params).await;
            let Some(inner) = weak.upgrade() else { return };
            lock(&inner.server_tasks).remove(&request.id);
            lock(&inner.core).respond(request.id, outcome);
            if let Err(e) = inner.transport.flush().await {
                tracing::debug!(server = %inner.options.name, error = %e, "sending an answer to the server failed");
            }
        });
        tasks.insert(id, task.abort_handle());
    }
}

impl<T: Transport> LinkTarget for Inner<T> {
    fn feed(&self, incoming: IncomingOf<Box<RawValue>>) {
        let (events, flush) = {
            let mut core = lock(&self.core);
            core.handle_incoming(incoming, now());
            (drain_events(&mut core), core.has_transmit())
        };
        self.deliver(events);
        if flush {
            self.spawn_flush();
        }
    }

    fn answer_undecodable(&self, reply: mcp_proto::jsonrpc::ErrorResponse) {
        tracing::warn!(server = %self.options.name, "the server sent a request whose id cannot be read; answering -32600");
        lock(&self.core).queue_error_response(reply);
        self.spawn_flush();
    }

    fn poll_transmit(&self) -> Option<Message> {
        lock(&self.core).poll_transmit()
    }

    fn has_transmit(&self) -> bool {
        lock(&self.core).has_transmit()
    }

    fn is_pending(&self, id: &RequestId) -> bool {
        lock(&self.core).deadline(id).is_some()
    }

    fn protocol_version(&self) -> Option<ProtocolVersion> {
        lock(&self.core).protocol_version()
    }

    fn connection_lost(&self) {
        {
            let mut state = lock(&self.state);
            if state.closed {
                return;
            }
            state.epoch += 1;
        }
        for (_, task) in lock(&self.server_tasks).drain() {
            task.abort();
        }
        let events = {
            let mut core = lock(&self.core);
            core.reset();
            drain_events(&mut core)
        };
        self.deliver(events);
    }

    fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    fn flush_soon(&self) {
        self.spawn_flush();
    }

    fn fail_unreadable(&self, id: &RequestId, reason: &str) -> bool {
        let (failed, events) = {
            let mut core = lock(&self.core);
            let failed = core.fail_unreadable(id, reason);
            (failed, drain_events(&mut core))
        };
        self.deliver(events);
        failed
    }
}

/// The target of a link that was never attached.
pub(crate) struct Detached;

impl LinkTarget for Detached {
    fn feed(&self, _: IncomingOf<Box<RawValue>>) {}
    fn answer_undecodable(&self, _: mcp_proto::jsonrpc::ErrorResponse) {}
    fn poll_transmit(&self) -> Option<Message> {
        None
    }
    fn has_transmit(&self) -> bool {
        false
    }
    fn is_pending(&self, _: &RequestId) -> bool {
        false
    }
    fn protocol_version(&self) -> Option<ProtocolVersion> {
        None
    }
    fn connection_lost(&self) {}
    fn is_closed(&self) -> bool {
        true
    }
    fn flush_soon(&self) {}
    fn fail_unreadable(&self, _: &RequestId, _: &str) -> bool {
        false
    }
}

/// Cancels a request whose caller stopped waiting (its future was dropped).
struct CancelOnDrop<T: Transport> {
    inner: Weak<Inner<T>>,
    id: Option<RequestId>,
}

impl<T: Transport> Drop for CancelOnDrop<T> {
    fn drop(&mut self) {
        let (Some(id), Some(inner)) = (self.id.take(), self.inner.upgrade()) else { return };
        inner.forget(&id, "the client stopped waiting");
    }
}

/// The typed notification an event carries, for the notification streams.
fn notification_of(event: &Event<Waiter>) -> Option<ServerNotification> {
    Some(match event {
        Event::ListChanged(ListKind::Tools) => ServerNotification::ToolListChanged,
        Event::ListChanged(ListKind::Prompts) => ServerNotification::PromptListChanged,
        Event::ListChanged(ListKind::Resources) => ServerNotification::ResourceListChanged,
        Event::Log(params) => ServerNotification::LogMessage(params.clone()),
        Event::Progress { params, .. } => ServerNotification::Progress(params.clone()),
        Event::ServerRequestCancelled { id, reason } => ServerNotification::Cancelled(
            mcp_proto::types::CancelledNotificationParams::new(id.clone(), reason.clone()),
        ),
        Event::Notification(n) => match ServerNotification::from_notification(n) {
            Ok(typed) => typed,
            Err(e) => {
                tracing::warn!(error = %e, "a notification of the wrong shape; passed on as it came");
                ServerNotification::Other(n.clone())
            }
        },
        _ => return None,
    })
}

fn drain_events(core: &mut ClientCore<Waiter>) -> Vec<Event<Waiter>> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

fn encode<T: Transport>(request: &Request, transport: &T) -> Result<Vec<u8>, T::Error> {
    serde_json::to_vec(request).map_err(|e| {
        transport.client_error(ClientError::InvalidParams {
            method: request.method.clone(),
            reason: e.to_string(),
        })
    })
}

impl<T: Transport> mcp_proto::client::ops::Requester for Client<T> {
    type Error = T::Error;

    fn client_error(&self, error: ClientError) -> T::Error {
        self.inner.transport.client_error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        self.request_raw::<()>(method, Params::Value(params), None, options).await
    }

    async fn request_with_params<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        self.request_raw(method, Params::Typed(params), None, options).await
    }

    /// In the stateless era the assembled list is not kept: its pages are,
    /// in the result cache, for as long as their `ttlMs` says.
    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        let core = lock(&self.inner.core);
        if core.is_modern() { None } else { core.cached_tools() }
    }

    fn tools_generation(&self) -> u64 {
        lock(&self.inner.core).tools_generation()
    }

    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        lock(&self.inner.core).store_tools(generation, tools)
    }
}
