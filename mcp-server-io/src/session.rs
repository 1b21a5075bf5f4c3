//! The server session core for both eras: a [`Session`] is fed each
//! message (`handle`, `handle_json`), answers what every server answers
//! alike, hands every other request to its [`Handler`], and queues what
//! goes out for a driver ([`Outgoing`]).
//!
//! What it does itself:
//!
//! - Handshake era: `initialize` (checked, negotiated, answered once),
//!   `ping`, `-32600` for anything else before `initialize`,
//!   `logging/setLevel` when the handler declares `logging`,
//!   `notifications/cancelled` (the named request's task is aborted and
//!   never answered), and the client's answers to the session's own
//!   requests ([`Context::request`], with a deadline).
//! - Stateless era (2026-07-28): the per-request `_meta` read and checked
//!   (`-32602`, `-32022`), `server/discover`, `subscriptions/listen` (the
//!   acknowledgement, then [`Session::broadcast`] until cancelled or
//!   [`Session::close_subscriptions`]), and `resultType` and `serverInfo`
//!   on every result. `initialize` to a stateless-only server gets
//!   `-32022` naming the versions spoken.
//!
//! Requests are keyed by their id and an origin ([`RequestKey`]): a
//! driver that serves several clients from one session (the stateless era
//! over HTTP, one origin per POST) gives each its own, since two clients
//! may use the same id.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use mcp_proto::hash::SeededMap;
use mcp_proto::jsonrpc::{
    DecodeError, ErrorObject, ErrorResponse, Message, Notification, RawRequest, Received,
    ReceivedIncoming, Request, RequestId, Response, decode_received, error_code,
};
use mcp_proto::methods;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::era::{self, ServeEra};
use crate::handler::{Handler, RawReplyFuture, Reply, ReplyFuture};
use crate::inflight::{self, DEFAULT_MAX_IN_FLIGHT};
use crate::logging;
use crate::outgoing::{self, Outgoing, OutgoingQueue, OutgoingSender};
use crate::params::{Head, Params};
pub use crate::running::CancelHook;
use crate::running::{Beside, Job, Running};
use crate::stateless::{self, Change, Filter, RequestMeta};

pub use crate::context::Context;

/// How long [`Context::request`] waits by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A client request as the session keys it: where it came in and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestKey {
    /// The origin given to [`Session::handle_from`] (0 for
    /// [`Session::handle`]).
    pub origin: u64,
    /// The client's id.
    pub id: RequestId,
}

impl std::fmt::Display for RequestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.id.fmt(f)
    }
}

/// How a session behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionOptions {
    /// The eras served.
    pub era: ServeEra,
    /// How long [`Context::request`] waits for the client's answer.
    pub request_timeout: Duration,
    /// The most requests the session runs at once (0 is taken as 1): one
    /// more is answered at once with
    /// [`SERVER_BUSY`](crate::inflight::SERVER_BUSY) (see [`inflight`]).
    pub max_in_flight: usize,
}

impl SessionOptions {
    /// Options serving `era`, with the default request timeout and cap on
    /// requests in flight ([`DEFAULT_MAX_IN_FLIGHT`]).
    pub fn new(era: ServeEra) -> Self {
        SessionOptions {
            era,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }

    /// These options with another cap on the requests run at once.
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// These options with another deadline for requests to the client.
    pub fn with_request_timeout(mut self, request_timeout: Duration) -> Self {
        self.request_timeout = request_timeout;
        self
    }
}

/// The client did not answer a server-to-client request in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Duration);

impl std::fmt::Display for RequestTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the client did not answer within {} ms", self.0.as_millis())
    }
}

impl std::error::Error for RequestTimeout {}

/// One client session of a server. Cheap to clone (clones share it); every
/// method must be called within a Tokio runtime (waiting answers are
/// spawned on it).
pub struct Session<H> {
    inner: Arc<Inner<H>>,
}

impl<H> Clone for Session<H> {
    fn clone(&self) -> Self {
        Session { inner: self.inner.clone() }
    }
}

impl<H> std::fmt::Debug for Session<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("options", &self.inner.options).finish_non_exhaustive()
    }
}

struct Inner<H> {
    handler: H,
    options: SessionOptions,
    out: OutgoingSender,
    state: Mutex<State>,
    /// Replies sent so far: counted, and each sent, under a lock of their
    /// own (see [`Session::count_reply`]).
    replies: Mutex<u64>,
    next_server_request: AtomicU64,
    /// The handler's `serverInfo` as JSON text, for the stateless era's
    /// results given as text (encoded once).
    server_info_text: OnceLock<Box<RawValue>>,
    /// The runner of requests beside the driver, when one is attached.
    beside: Beside,
}

#[derive(Default)]
struct State {
    /// The revision answered to `initialize`; `None` before it.
    version: Option<String>,
    /// The `capabilities` the client declared in `initialize`.
    client_capabilities: Option<Value>,
    client_initialized: bool,
    /// Requests answered later, by key: looked up three times a request,
    /// so with a fast hasher; the keys are the client's ids, and the map
    /// holds no more than the cap on requests in flight (plus the one
    /// being admitted), which bounds what chosen keys could cost.
    in_flight: SeededMap<RequestKey, Running>,
    /// Server-to-client requests awaiting the client's answer.
    pending: HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>,
    /// The lowest log level the client asked for (`logging/setLevel`).
    min_log_level: usize,
    /// Open `subscriptions/listen` streams, by the listen request.
    listens: BTreeMap<RequestKey, Filter>,
    /// The number the last request admitted by [`Session::forward`] got.
    forwards: u64,
    /// The forwarded request answered last while its forwarding was still
    /// under way (its hook not yet given): the hook of a call over need
    /// not run.
    answered_early: Option<u64>,
}

impl State {
    /// The places taken under the cap on requests in flight.
    fn open(&self) -> usize {
        self.in_flight.len() + self.listens.len()
    }
}

impl<H: Handler> Session<H> {
    /// A session in its pre-`initialize` state, and the queue of what it
    /// sends.
    pub fn new(handler: H, options: SessionOptions) -> (Self, OutgoingQueue) {
        let (out, queue) = outgoing::queue();
        let inner = Inner {
            handler,
            options,
            out,
            state: Mutex::new(State::default()),
            replies: Mutex::new(0),
            next_server_request: AtomicU64::new(1),
            server_info_text: OnceLock::new(),
            beside: Beside::default(),
        };
        (Session { inner: Arc::new(inner) }, queue)
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.inner.handler
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.inner.options
    }

    /// The revision answered to `initialize`, once it has been.
    pub fn negotiated_version(&self) -> Option<String> {
        self.state().version.clone()
    }

    /// The capabilities the client declared in `initialize` (handshake
    /// era; `None` before it, and in the stateless era, where each request
    /// carries its own: [`Context::meta`]).
    pub fn client_capabilities(&self) -> Option<Value> {
        self.state().client_capabilities.clone()
    }

    /// Whether `notifications/initialized` arrived.
    pub fn client_initialized(&self) -> bool {
        self.state().client_initialized
    }

    /// Handles the JSON text of one frame (a stdio line, an HTTP body).
    ///
    /// Text that is not JSON is answered with `-32700`, JSON that is not a
    /// JSON-RPC message with `-32600`, with a `null` id unless the id could
    /// be read. A batch (2025-03-26) is handled element by element. A
    /// request's parameters reach the handler as the text they were
    /// written as ([`Params`]).
    pub fn handle_json(&self, bytes: &[u8]) {
        match decode_received(bytes) {
            Ok(ReceivedIncoming::Single(received)) => self.handle_received(0, received),
            Ok(ReceivedIncoming::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(received) => self.handle_received(0, received),
                        Err(e) => self.reject_invalid(None, &e),
                    }
                }
            }
            Err(DecodeError::Json(e)) => self.send_error(
                None,
                ErrorObject::new(error_code::PARSE_ERROR, format!("Parse error: {e}")),
            ),
            Err(e) => self.reject_invalid(id_of_invalid(bytes), &e),
        }
    }

    /// Handles one message read as a server reads it (a request's
    /// parameters as text), its request keyed by `origin` as well as its
    /// id (see [`handle_from`](Self::handle_from)).
    pub fn handle_received(&self, origin: u64, received: Received) {
        match received {
            Received::Request(RawRequest { id, method, params, call }) => {
                self.handle_request(origin, id, &method, Params::received(params, call))
            }
            Received::Message(message) => self.handle_from(origin, message),
        }
    }

    /// Answers a frame that was too long to read (the driver discarded it)
    /// with `-32700`.
    pub fn reject_oversized(&self, limit: usize) {
        let message = format!("Parse error: message longer than {limit} bytes was discarded");
        self.send_error(None, ErrorObject::new(error_code::PARSE_ERROR, message));
    }

    /// Handles one message from the client (origin 0).
    pub fn handle(&self, message: Message) {
        self.handle_from(0, message);
    }

    /// Handles one message from the client, its request keyed by `origin`
    /// as well as its id. A `notifications/cancelled` cancels the request
    /// of its id under its origin, else the one open request of that id
    /// under any origin (a stateless-era notification comes on its own).
    pub fn handle_from(&self, origin: u64, message: Message) {
        match message {
            Message::Request(Request { id, method, params }) => {
                self.handle_request(origin, id, &method, Params::from_value(params))
            }
            Message::Notification(notification) => self.handle_notification(origin, notification),
            Message::Response(Response { id, result }) => self.complete(id, Ok(result)),
            Message::Error(ErrorResponse { id: Some(id), error }) => self.complete(id, Err(error)),
            Message::Error(ErrorResponse { id: None, error }) => {
                self.inner.handler.stray(&format!("the client sent an error with no id: {error}"));
            }
        }
    }

    fn handle_request(&self, origin: u64, id: RequestId, method: &str, params: Params) {
        let key = RequestKey { origin, id };
        let era = self.inner.options.era;
        // Only the members the session needs are read from the text.
        let head = match era {
            ServeEra::Legacy => None,
            _ if method == methods::INITIALIZE => None,
            // A handshake-era request (no stateless key can be in its
            // text) is not parsed for a `_meta` it does not have.
            ServeEra::Both
                if !params.may_be_stateless() && !stateless::is_stateless_only(method) =>
            {
                None
            }
            _ => match params.head() {
                Ok(head) => Some(head),
                Err(error) => return self.reply(key, Err(error)),
            },
        };
        let stateless_meta = || head.as_ref().is_some_and(Head::is_stateless);
        if era.routes_stateless_by(method, stateless_meta) {
            return self.handle_stateless(key, method, params, head.unwrap_or_default());
        }
        if era == ServeEra::Modern {
            // Only `initialize` gets here.
            let params = match params.into_value() {
                Ok(params) => params,
                Err(error) => return self.reply(key, Err(error)),
            };
            return self.reply(key, Err(stateless::refuse_initialize(params.as_ref(), era)));
        }
        if self.inner.handler.ignores(method) {
            return;
        }
        let initialized = self.state().version.is_some();
        let result = match method {
            methods::INITIALIZE => {
                params.into_value().and_then(|p| self.initialize(key.clone(), p.as_ref()))
            }
            methods::PING => Ok(json!({})),
            _ if !initialized => Err(era::not_initialized(method)),
            methods::LOGGING_SET_LEVEL if self.declares_logging() => params
                .into_value()
                .and_then(|p| logging::set_level_param(p.as_ref()))
                .map(|level| {
                    self.state().min_log_level = level;
                    self.inner.handler.log_level_set(self, level);
                    json!({})
                }),
            _ => {
                let cx = self.context(key.clone(), None);
                return self.answer(key, self.inner.handler.request(cx, method, params), false);
            }
        };
        self.reply(key, result);
    }

    fn declares_logging(&self) -> bool {
        let version = self.state().version.clone();
        self.inner.handler.capabilities(version.as_deref()).get("logging").is_some()
    }

    fn initialize(&self, key: RequestKey, params: Option<&Value>) -> Result<Value, ErrorObject> {
        if self.state().version.is_some() {
            return Err(era::already_initialized());
        }
        let offered = era::check_initialize(params)?;
        let version = self.inner.handler.negotiate(offered);
        self.inner.handler.initializing(&self.context(key, None));
        let capabilities = self.inner.handler.capabilities(Some(&version));
        {
            let mut state = self.state();
            state.version = Some(version.clone());
            state.client_capabilities = params.and_then(|p| p.get("capabilities")).cloned();
        }
        let info = self.inner.handler.info();
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": info.implementation,
        });
        if let Some(instructions) = &info.instructions {
            result["instructions"] = json!(instructions);
        }
        Ok(result)
    }

    fn handle_notification(&self, origin: u64, notification: Notification) {
        let Notification { method, params } = notification;
        match method.as_str() {
            methods::NOTIFICATION_INITIALIZED => self.state().client_initialized = true,
            methods::NOTIFICATION_CANCELLED => {
                let id = params.as_ref().and_then(|p| p.get("requestId")).cloned();
                if let Some(Ok(id)) = id.map(serde_json::from_value::<RequestId>) {
                    self.cancel_by_id(origin, id);
                }
            }
            _ => {}
        }
        self.inner.handler.notification(self, &method, params.as_ref());
    }

    /// A stateless-era request: its `_meta` checked, then served with
    /// `resultType` and `serverInfo` on the result.
    fn handle_stateless(&self, key: RequestKey, method: &str, params: Params, head: Head) {
        let meta = match stateless::request_meta_of(head, self.inner.options.era) {
            Ok(meta) => meta,
            Err(error) => return self.reply(key, Err(error)),
        };
        self.inner.handler.stateless_request(&key.id, method, &meta, &params);
        match method {
            methods::SERVER_DISCOVER => {
                let info = self.inner.handler.info();
                let result = stateless::discover(
                    self.inner.options.era,
                    self.inner.handler.capabilities(None),
                    info.instructions.as_deref(),
                    info.discover_ttl_ms,
                );
                self.reply(key, self.decorate(Ok(result)));
            }
            methods::SUBSCRIPTIONS_LISTEN => match params.into_value() {
                Ok(params) => self.listen(key, params.as_ref()),
                Err(error) => self.reply(key, Err(error)),
            },
            _ => {
                let cx = self.context(key.clone(), Some(meta));
                self.answer(key, self.inner.handler.request(cx, method, params), true);
            }
        }
    }

    pub(crate) fn decorate(
        &self,
        result: Result<Value, ErrorObject>,
    ) -> Result<Value, ErrorObject> {
        stateless::decorate(result, &self.inner.handler.info().implementation)
    }

    /// Sends a handler's reply, or runs it as a task.
    fn answer(&self, key: RequestKey, reply: Reply, stateless: bool) {
        match reply {
            Reply::Now(result) if stateless => self.reply(key, self.decorate(result)),
            Reply::Now(result) => self.reply(key, result),
            Reply::Later(future) if stateless => {
                let session = self.clone();
                self.spawn_request(key, Box::pin(async move { session.decorate(future.await) }))
            }
            Reply::Later(future) => self.spawn_request(key, future),
            Reply::LaterRaw(future) if stateless => {
                self.spawn_answer(key, future, |session, key, result| {
                    session.reply_text(key, result, true)
                })
            }
            Reply::LaterRaw(future) => self.spawn_raw_request(key, future),
            Reply::Silent => {}
        }
    }

    /// How many requests take a place under the cap on requests in flight
    /// (see [`inflight`]): those running and the open listens.
    pub fn in_flight(&self) -> usize {
        self.state().open()
    }

    fn context(&self, key: RequestKey, meta: Option<RequestMeta>) -> Context<H> {
        Context::new(self.clone(), key, meta)
    }

    /// `subscriptions/listen`: acknowledges the granted filter, then carries
    /// the changes it asked for until cancelled. No reply while open.
    fn listen(&self, key: RequestKey, params: Option<&Value>) {
        let filter = match Filter::parse(params, |uri| self.inner.handler.resource_exists(uri)) {
            Ok(filter) => filter,
            Err(error) => return self.reply(key, Err(error)),
        };
        let mut state = self.state();
        if state.listens.contains_key(&key) || state.in_flight.contains_key(&key) {
            drop(state);
            let message = format!("request id {key} is already in use by an open request");
            return self.reply(key, Err(ErrorObject::new(error_code::INVALID_REQUEST, message)));
        }
        if let Err(busy) = inflight::admit(state.open(), self.inner.options.max_in_flight) {
            drop(state);
            return self.reply(key, Err(busy));
        }
        let ack = json!({
            "notifications": filter.granted(),
            "_meta": stateless::subscription_meta(&key.id),
        });
        state.listens.insert(key.clone(), filter);
        // Queued under the lock, so no change can overtake it.
        let message = Message::Notification(Notification::new(
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            Some(ack),
        ));
        self.send(Outgoing::message(message, Some(key.id), key.origin));
    }

    /// Sends a change to every open `subscriptions/listen` that asked for
    /// it, with its `subscriptionId`; returns how many got it.
    pub fn broadcast(&self, change: &Change) -> usize {
        let (method, params) = change.notification();
        let state = self.state();
        let mut sent = 0;
        for (key, filter) in &state.listens {
            if !filter.wants(change) {
                continue;
            }
            let mut params = params.clone();
            params["_meta"] = stateless::subscription_meta(&key.id);
            let message = Message::Notification(Notification::new(method, Some(params)));
            self.send(Outgoing::message(message, Some(key.id.clone()), key.origin));
            sent += 1;
        }
        sent
    }

    /// Ends every open `subscriptions/listen` gracefully, each with its
    /// result (`resultType: "complete"`, its `subscriptionId`); returns
    /// how many there were.
    pub fn close_subscriptions(&self) -> usize {
        let keys: Vec<RequestKey> = std::mem::take(&mut self.state().listens).into_keys().collect();
        for key in &keys {
            let result = json!({ "_meta": stateless::subscription_meta(&key.id) });
            self.reply(key.clone(), self.decorate(Ok(result)));
        }
        keys.len()
    }

    /// Cancels a request: a running one is aborted, an open listen ends;
    /// neither is answered. (A driver calls it when the client is gone.)
    pub fn cancel(&self, origin: u64, id: RequestId) {
        let key = RequestKey { origin, id };
        let running = {
            let mut state = self.state();
            state.listens.remove(&key);
            state.in_flight.remove(&key)
        };
        // Stopped with no lock held: a forwarded request's hook may end it
        // at once, and its end looks for it here.
        if let Some(running) = running {
            running.stop();
        }
    }

    /// `notifications/cancelled`: the request of that id from `origin`,
    /// else the only open one of that id from any origin.
    fn cancel_by_id(&self, origin: u64, id: RequestId) {
        let target = {
            let state = self.state();
            let own = RequestKey { origin, id: id.clone() };
            if state.in_flight.contains_key(&own) || state.listens.contains_key(&own) {
                Some(origin)
            } else {
                let mut open =
                    state.in_flight.keys().chain(state.listens.keys()).filter(|k| k.id == id);
                match (open.next(), open.next()) {
                    (Some(only), None) => Some(only.origin),
                    _ => None,
                }
            }
        };
        if let Some(origin) = target {
            self.cancel(origin, id);
        }
    }

    /// Aborts every running request and ends every listen (none is
    /// answered): for a driver ending the session.
    pub fn abort_all(&self) {
        let running: Vec<Running> = {
            let mut state = self.state();
            state.listens.clear();
            state.in_flight.drain().map(|(_, running)| running).collect()
        };
        // With no lock held, as `cancel` stops one.
        for running in running {
            running.stop();
        }
    }

    /// Answers a request from a task of its own, or beside the driver while
    /// [`run_requests_beside`](Self::run_requests_beside) runs; aborted by
    /// a cancellation. A second request with the id of a running one gets
    /// `-32600`; one over the cap on requests in flight gets
    /// [`SERVER_BUSY`](crate::inflight::SERVER_BUSY) at once, its future
    /// dropped unpolled.
    pub fn spawn_request(&self, key: RequestKey, future: ReplyFuture) {
        self.spawn_answer(key, future, Session::reply);
    }

    /// [`spawn_request`](Self::spawn_request) for a result that is JSON
    /// text, sent as it is ([`reply_raw`](Self::reply_raw)).
    pub fn spawn_raw_request(&self, key: RequestKey, future: RawReplyFuture) {
        self.spawn_answer(key, future, Session::reply_raw);
    }

    fn spawn_answer<R: Send + 'static>(
        &self,
        key: RequestKey,
        future: impl Future<Output = Result<R, ErrorObject>> + Send + 'static,
        reply: fn(&Self, RequestKey, Result<R, ErrorObject>),
    ) {
        let mut state = self.state();
        let open = state.open();
        // One look-up: the place found here is the one filled below.
        let place = match state.in_flight.entry(key) {
            Entry::Occupied(taken) => {
                let key = taken.key().clone();
                drop(state);
                return self.reject_reused(key);
            }
            Entry::Vacant(place) => place,
        };
        // Decided under the lock the insertion takes: never over the cap,
        // however many drivers' tasks hand requests over at once.
        if let Err(busy) = inflight::admit(open, self.inner.options.max_in_flight) {
            let key = place.into_key();
            drop(state);
            return self.reply(key, Err(busy));
        }
        let session = self.clone();
        let task_key = place.key().clone();
        // Locked until the handle is in the map, so the job (which removes
        // itself when done) never runs ahead of the insertion.
        let job: Job = Box::pin(async move {
            let result = future.await;
            // A request cancelled in the meantime gets no reply.
            let wanted = session.state().in_flight.remove(&task_key).is_some();
            if wanted {
                reply(&session, task_key, result);
            }
        });
        let running = match self.inner.beside.hand_over(job) {
            Ok(running) => running,
            Err(job) => Running::Task(tokio::spawn(job).abort_handle()),
        };
        place.insert(running);
    }

    /// Admits a request the handler forwards with no future of its own
    /// (the handler then gives [`Reply::Silent`]):
    /// under the rules of [`spawn_request`](Self::spawn_request), decided
    /// in one look-up under the lock (a reused id gets `-32600`, one over
    /// the cap [`SERVER_BUSY`](crate::inflight::SERVER_BUSY), and `start`
    /// does not run), then `start` forwards it, with no lock held (what it
    /// calls may answer at once), and gives the hook that cancels it.
    ///
    /// The request keeps its place under the cap until
    /// [`reply_forwarded`](Self::reply_forwarded) answers it, or a
    /// cancellation ([`cancel`](Self::cancel), the client's
    /// `notifications/cancelled`, [`abort_all`](Self::abort_all)) takes it
    /// out: its hook then runs (once `start` gave it, with no lock held)
    /// and it is never answered. An error from `start` is the request's
    /// answer. Gives whether `start` ran.
    pub fn forward(
        &self,
        key: &RequestKey,
        start: impl FnOnce() -> Result<CancelHook, ErrorObject>,
    ) -> bool {
        let n = {
            let mut state = self.state();
            state.forwards += 1;
            let n = state.forwards;
            let open = state.open();
            // One look-up: the place found here is the one taken.
            let place = match state.in_flight.entry(key.clone()) {
                Entry::Occupied(taken) => {
                    let key = taken.key().clone();
                    drop(state);
                    self.reject_reused(key);
                    return false;
                }
                Entry::Vacant(place) => place,
            };
            if let Err(busy) = inflight::admit(open, self.inner.options.max_in_flight) {
                let key = place.into_key();
                drop(state);
                self.reply(key, Err(busy));
                return false;
            }
            place.insert(Running::Forwarded { n, hook: None });
            n
        };
        // The hook goes where the request waits, unless it ended meanwhile
        // (its place gone, or, once gone, taken by a request of the same
        // id): cancelled, the hook runs now; answered, the call is over
        // and the hook is dropped.
        let outcome = start();
        let mut state = self.state();
        let waiting = match state.in_flight.get_mut(key) {
            Some(Running::Forwarded { n: m, hook }) if *m == n => Some(hook),
            _ => None,
        };
        match (outcome, waiting) {
            (Ok(hook), Some(place)) => *place = Some(hook),
            (Ok(hook), None) => {
                let answered = state.answered_early == Some(n);
                if answered {
                    state.answered_early = None;
                }
                drop(state);
                if !answered {
                    (hook.0)();
                }
            }
            (Err(error), Some(_)) => {
                state.in_flight.remove(key);
                drop(state);
                self.reply(key.clone(), Err(error));
            }
            (Err(_), None) => {}
        }
        true
    }

    /// `-32600` for a request whose id a running one has.
    fn reject_reused(&self, key: RequestKey) {
        let message = format!("request id {key} is already in use by a running call");
        self.reply(key, Err(ErrorObject::new(error_code::INVALID_REQUEST, message)));
    }

    /// Answers a request admitted by [`forward`](Self::forward), a result
    /// being JSON text sent as it is ([`reply_raw`](Self::reply_raw)),
    /// borrowed (copied only when the reply is queued); nothing when it
    /// was cancelled (its place is gone). Gives whether it was answered.
    ///
    /// The reply is sent with
    /// [`OutgoingSender::send_now`](crate::outgoing::OutgoingSender::send_now):
    /// under [`stdio::serve_direct`](crate::stdio::serve_direct) the
    /// calling task writes it when nothing waits to be written before it.
    pub fn reply_forwarded(&self, key: RequestKey, result: Result<&RawValue, ErrorObject>) -> bool {
        {
            let mut state = self.state();
            match state.in_flight.remove(&key) {
                None => return false,
                // Answered before its forwarding gave the hook: `forward`
                // drops it.
                Some(Running::Forwarded { n, hook: None }) => state.answered_early = Some(n),
                Some(_) => {}
            }
        }
        // Written by this task when the driver allows it and nothing waits
        // before it (`OutgoingSender::send_now`): the task that has the
        // answer is seldom the driver's.
        let out = &self.inner.out;
        self.count_reply(|| {
            let _ = match result {
                Ok(result) => out.send_raw_reply_now(key.id, result, key.origin),
                Err(error) => out.send_now(reply_item(key, Err(error))),
            };
        });
        true
    }

    /// Runs `driver` (the driver serving this session, e.g.
    /// [`stdio::serve`](crate::stdio::serve)) and, in the same task, the
    /// requests the handler answers later ([`Reply::Later`],
    /// [`Reply::LaterRaw`]), instead of a task each: a request is first
    /// polled in the wake-up that read it and its reply written in the one
    /// that ended it. Returns what the driver returns; the requests still
    /// running then are dropped, never answered (as
    /// [`abort_all`](Self::abort_all) does).
    ///
    /// Cancellation, the order of what a request sends and the rule on
    /// reused ids are those of requests run as tasks. The requests share the
    /// driver's task: a handler's future should not block the thread (as
    /// on a current-thread runtime anyway). One runner at a time: while one
    /// runs, a second one only runs its driver.
    ///
    /// The requests may be handed over from any thread, and woken from
    /// any: with the input read on a thread of its own
    /// ([`stdio::serve_direct_threaded`](crate::stdio::serve_direct_threaded))
    /// they come from that thread, and run as those read in the driver's
    /// task do. One handed over before the driver is woken is first
    /// polled before it: a request read on that thread starts before the
    /// answer to a later line is written (a client cancelling it once it
    /// has that answer finds it started, as a task of its own would be).
    ///
    /// [`Reply::Later`]: crate::Reply::Later
    /// [`Reply::LaterRaw`]: crate::Reply::LaterRaw
    pub async fn run_requests_beside<F: Future>(&self, driver: F) -> F::Output {
        let Some(mut attached) = self.inner.beside.attach() else {
            return driver.await;
        };
        // The entries of the requests dropped with the runner go with them.
        let _forget = ForgetBeside(self);
        let mut driver = std::pin::pin!(driver);
        std::future::poll_fn(|cx| attached.poll(cx, driver.as_mut())).await
    }

    /// Sends the reply to a client request.
    pub fn reply(&self, key: RequestKey, result: Result<Value, ErrorObject>) {
        self.queue_reply(reply_item(key, result));
    }

    /// Sends the reply to a client request, a result being JSON text that
    /// goes out as it is (an object, as MCP results are: not looked at).
    pub fn reply_raw(&self, key: RequestKey, result: Result<Box<RawValue>, ErrorObject>) {
        self.queue_reply(raw_reply_item(key, result));
    }

    /// Sends the reply to a stateless-era request, a result being JSON
    /// text: with `resultType` and `serverInfo` added as that era's
    /// results carry them (to the text when it has neither member, else to
    /// its decoded value). A handler answering before it returns (a result
    /// ready at once, written as text) uses it, then gives
    /// [`Reply::Silent`].
    pub fn reply_raw_stateless(&self, key: RequestKey, result: Result<Box<RawValue>, ErrorObject>) {
        self.reply_text(key, result, true);
    }

    /// Sends a result that is JSON text; in the stateless era with
    /// `resultType` and `serverInfo` added: to the text when it has neither
    /// member, else to its decoded value.
    fn reply_text(
        &self,
        key: RequestKey,
        result: Result<Box<RawValue>, ErrorObject>,
        stateless: bool,
    ) {
        let text = match result {
            Ok(text) if stateless => text,
            result => return self.reply_raw(key, result),
        };
        let info = self.inner.server_info_text.get_or_init(|| {
            let info = &self.inner.handler.info().implementation;
            serde_json::value::to_raw_value(info).unwrap_or_else(|_| RawValue::NULL.to_owned())
        });
        if let Some(decorated) = stateless::decorate_text(&text, info) {
            return self.reply_raw(key, Ok(decorated));
        }
        let value = serde_json::from_str(text.get()).map_err(|e| {
            ErrorObject::new(error_code::INTERNAL_ERROR, format!("the result is not JSON: {e}"))
        });
        self.reply(key, self.decorate(value));
    }

    fn queue_reply(&self, reply: Outgoing) {
        self.count_reply(|| {
            let _ = self.inner.out.send(reply);
        });
    }

    /// Counts a reply that `send` sends.
    ///
    /// Counting and sending under one lock keeps an exit right after the
    /// N-th reply, whichever task sends it. The lock is the replies' own,
    /// not the state's: a reply written at once (a write to the client,
    /// which wakes it) never holds up the request that follows, admitted
    /// under the state's lock meanwhile (on one CPU the client's next
    /// request is often read before the writer runs again).
    fn count_reply(&self, send: impl FnOnce()) {
        let mut answered = self.inner.replies.lock().unwrap_or_else(PoisonError::into_inner);
        *answered += 1;
        send();
        if let Some(code) = self.inner.handler.exit_after_reply(*answered) {
            let _ = self.inner.out.send(Outgoing::Exit(code));
        }
    }

    fn send_error(&self, id: Option<RequestId>, error: ErrorObject) {
        let message = Message::Error(ErrorResponse::new(id.clone(), error));
        self.send(Outgoing::message(message, id, 0));
    }

    fn reject_invalid(&self, id: Option<RequestId>, error: &DecodeError) {
        let error =
            ErrorObject::new(error_code::INVALID_REQUEST, format!("Invalid Request: {error}"));
        self.send_error(id, error);
    }

    /// Queues an item for the driver. A closed queue means the driver is
    /// gone, and there is no one left to tell.
    pub fn send(&self, item: Outgoing) {
        let _ = self.inner.out.send(item);
    }

    /// Sends a notification, related to a request or to none.
    pub fn notify(&self, method: &str, params: Option<Value>, related: Option<&RequestKey>) {
        let message = Message::Notification(Notification::new(method, params));
        let origin = related.map_or(0, |k| k.origin);
        self.send(Outgoing::message(message, related.map(|k| k.id.clone()), origin));
    }

    /// Sends a request to the client (ids `srv-1`, `srv-2`, ...), related
    /// to a request or to none, and waits for its answer: the result, or
    /// the error object the client replied with; [`RequestTimeout`] after
    /// the options' `request_timeout`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        related: Option<&RequestKey>,
    ) -> Result<Result<Value, ErrorObject>, RequestTimeout> {
        let n = self.inner.next_server_request.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        self.state().pending.insert(id.clone(), tx);
        // Removes the entry however this future ends (answer, timeout, abort).
        let _guard = PendingGuard { session: self, id: id.clone() };
        let message = Message::Request(Request::new(id, method, params));
        let origin = related.map_or(0, |k| k.origin);
        self.send(Outgoing::message(message, related.map(|k| k.id.clone()), origin));
        let timeout = self.inner.options.request_timeout;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            // The sender lives in `pending` until the answer or the guard
            // removes it, so a closed channel only means time ran out.
            Ok(Err(_)) | Err(_) => Err(RequestTimeout(timeout)),
        }
    }

    fn complete(&self, id: RequestId, answer: Result<Value, ErrorObject>) {
        let waiter = self.state().pending.remove(&id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => {
                self.inner.handler.stray(&format!("the client answered unknown request id {id}"))
            }
        }
    }

    /// Whether a log message at `level` (an index into
    /// [`logging::LOG_LEVELS`]) passes the client's `logging/setLevel`.
    pub fn log_level_enabled(&self, level: usize) -> bool {
        level >= self.state().min_log_level
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock.
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Removes the entries of the requests run beside the driver when their
/// runner ends (they are dropped with it).
struct ForgetBeside<'a, H>(&'a Session<H>);

impl<H> Drop for ForgetBeside<'_, H> {
    fn drop(&mut self) {
        let mut state = self.0.inner.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A task of its own and a forwarded request do not go with it.
        state.in_flight.retain(|_, running| !matches!(running, Running::Beside(_)));
    }
}

struct PendingGuard<'a, H> {
    session: &'a Session<H>,
    id: RequestId,
}

impl<H> Drop for PendingGuard<'_, H> {
    fn drop(&mut self) {
        let mut state = self.session.inner.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.pending.remove(&self.id);
    }
}

/// The reply to a client request, as its driver's item.
fn reply_item(key: RequestKey, result: Result<Value, ErrorObject>) -> Outgoing {
    let RequestKey { origin, id } = key;
    let message = match result {
        Ok(result) => Message::Response(Response::new(id.clone(), result)),
        Err(error) => Message::Error(ErrorResponse::new(Some(id.clone()), error)),
    };
    Outgoing::message(message, Some(id), origin)
}

/// The reply to a client request whose result is JSON text sent as it is.
fn raw_reply_item(key: RequestKey, result: Result<Box<RawValue>, ErrorObject>) -> Outgoing {
    match result {
        Ok(result) => Outgoing::raw_reply(key.id, result, key.origin),
        Err(error) => reply_item(key, Err(error)),
    }
}

/// The id of a JSON object that is not a valid message, when it has a usable
/// one (JSON-RPC answers an invalid request with its id if it can be read).
fn id_of_invalid(bytes: &[u8]) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    serde_json::from_value(value.get("id")?.clone()).ok()
}
