//! The state a client's clones share: the protocol core behind its lock,
//! the connection's state, and the delivery of what the server sends
//! (replies to their waiters, notifications to their listeners, the
//! server's requests to the host's handlers). What goes out is in `send`.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use mcp_proto::client::decide::probe::usual_discovery;
use mcp_proto::client::decide::result::ResultContext;
use mcp_proto::client::decide::{EraRules, rules};
use mcp_proto::client::{ClientCore, ClientError, DriverWork, Event, ListKind, ServerNotification};
use mcp_proto::jsonrpc::{self, IncomingOf, Message, RequestId};
use mcp_proto::methods;
use mcp_proto::types::{CallToolResult, DiscoverResult, InitializeResult};
use mcp_proto::{Era, ProtocolVersion};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;

use crate::listeners::Listeners;
use crate::options::ClientOptions;
use crate::send::Fail;
use crate::sync::{lock, now};
use crate::transport::{Link, LinkTarget, Transport, TransportError};

/// A request's outcome as its waiter gets it.
pub(crate) type Outcome = Result<Reply, ClientError>;

/// A result as its waiter gets it.
pub(crate) enum Reply {
    /// As JSON text (checked to be JSON).
    Raw(Box<RawValue>),
    /// A `tools/call` result decoded straight from the answer's text
    /// (for a waiter that asked for it: [`Waiter::tool_result`]).
    Tool(CallToolResult),
    /// The era probe's discovery decoded straight from the answer's text
    /// (boxed: rare, and every reply would carry its size).
    Discovery(Box<DiscoverResult>),
    /// The result of `initialize` decoded straight from the answer's
    /// text, as the core keeps it.
    Initialize(Arc<InitializeResult>),
}

impl Reply {
    /// The result as JSON text. A decoded `tools/call` result goes only to
    /// waiters that take it as such: encoding it again serves the rest.
    pub(crate) fn into_raw(self) -> Box<RawValue> {
        match self {
            Reply::Raw(raw) => raw,
            Reply::Tool(result) => serde_json::value::to_raw_value(&result)
                .unwrap_or_else(|_| RawValue::NULL.to_owned()),
            Reply::Discovery(result) => serde_json::value::to_raw_value(&result)
                .unwrap_or_else(|_| RawValue::NULL.to_owned()),
            Reply::Initialize(result) => serde_json::value::to_raw_value(result.as_ref())
                .unwrap_or_else(|_| RawValue::NULL.to_owned()),
        }
    }
}

/// What a request's entry in the core holds: where its outcome goes, and
/// how it takes a result.
pub(crate) struct Waiter {
    pub(crate) to: To,
    /// The result of this `tools/call` is wanted as a [`CallToolResult`]
    /// and nothing else reads its text (no middleware, no cache): the
    /// usual answer's result is decoded straight into one as it is read
    /// (`feed_usual_answer`), once, when the era's rules deliver it as it
    /// came (`EraRules::delivers_as_it_came`: in the stateless era, a
    /// complete result).
    pub(crate) tool_result: bool,
}

impl Waiter {
    pub(crate) fn new(tx: oneshot::Sender<Outcome>, tool_result: bool) -> Waiter {
        Waiter { to: To::Caller(tx), tool_result }
    }

    /// A forwarded request's entry: its outcome goes to `sink`
    /// ([`crate::forward`]).
    pub(crate) fn sink(sink: Sink) -> Waiter {
        Waiter { to: To::Sink(sink), tool_result: false }
    }

    /// Whether the entry is a forwarded request's.
    pub(crate) fn is_sink(&self) -> bool {
        matches!(self.to, To::Sink(_))
    }
}

/// A forwarded request's sink, as its entry holds it: called once, with
/// the result's text or the error the general path would give, the
/// transport's error as `Some` in an `Option<T::Error>` (taken out by the
/// sink that [`forward_tool_call`](crate::Client::forward_tool_call)
/// made: the entry's type names no transport).
pub(crate) type Sink = Box<dyn FnOnce(Result<&RawValue, &mut dyn Any>) + Send>;

/// Where a request's outcome goes.
pub(crate) enum To {
    /// A caller waiting on the channel.
    Caller(oneshot::Sender<Outcome>),
    /// A forwarded request's sink: nobody waits.
    Sink(Sink),
}

/// A forwarded request's usual answer: its entry taken and its sink given
/// the result's text, checked to be JSON first (else `None`, the entry left
/// in place for the general decoding, which then decides). Kept out of
/// [`feed_usual_answer`](LinkTarget::feed_usual_answer)'s body: an ordinary
/// client's reader never runs it.
#[inline(never)]
fn take_forwarded<'r>(
    core: &mut ClientCore<Waiter>,
    id: i64,
    result: &'r str,
) -> Option<(Sink, &'r RawValue)> {
    let mut raw: Option<&RawValue> = None;
    let taken = core.take_answered_if(id, |w| {
        raw = if w.is_sink() { jsonrpc::one_raw_value(result) } else { None };
        raw.is_some()
    })?;
    match taken.to {
        To::Sink(sink) => Some((sink, raw?)),
        To::Caller(_) => None,
    }
}

/// Counts a request that takes a decoded result in
/// [`Inner::tool_results`] for as long as it is sent or waited for.
pub(crate) struct ToolResultOut<'a>(Option<&'a AtomicUsize>);

impl<'a> ToolResultOut<'a> {
    pub(crate) fn new(count: &'a AtomicUsize, tool_result: bool) -> ToolResultOut<'a> {
        if !tool_result {
            return ToolResultOut(None);
        }
        count.fetch_add(1, Ordering::Relaxed);
        ToolResultOut(Some(count))
    }
}

impl Drop for ToolResultOut<'_> {
    fn drop(&mut self) {
        if let Some(count) = self.0 {
            count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The state a client's clones share.
pub(crate) struct Inner<T: Transport> {
    pub(crate) me: Weak<Inner<T>>,
    pub(crate) transport: T,
    pub(crate) options: ClientOptions,
    pub(crate) core: Mutex<ClientCore<Waiter>>,
    /// The open `subscriptions/listen` streams, by request id.
    pub(crate) listeners: Listeners,
    /// The server, as the result cache's keys name it: made by the first
    /// request that looks in the cache ([`Inner::cache_server`]), not by
    /// every new client.
    cache_server: std::sync::OnceLock<String>,
    /// Whether the options declare the tasks extension.
    pub(crate) tasks_declared: bool,
    /// What listing the tools for a call's headers found missing.
    pub(crate) tool_misses: Mutex<ToolMisses>,
    pub(crate) state: Mutex<State>,
    /// One opening of the conversation at a time.
    pub(crate) init_lock: tokio::sync::Mutex<()>,
    server_tasks: Mutex<HashMap<RequestId, AbortHandle>>,
    /// Made on the first `Client::notifications` call: the channel's ring
    /// of 256 slots is most of a client's memory, and most hosts never
    /// subscribe.
    pub(crate) notifications: std::sync::OnceLock<broadcast::Sender<ServerNotification>>,
    /// The one timer of every request's deadline (see `timer.rs`).
    pub(crate) timer: crate::timer::Timer,
    /// How many requests taking a decoded result are being sent or waited
    /// for (a `tools/call`'s, [`Waiter::tool_result`], or the opening's:
    /// the probe's discovery, the result of `initialize`): while none are, an answer is not looked at for one
    /// (`feed_usual_answer`).
    pub(crate) tool_results: AtomicUsize,
    /// How many forwarded requests' entries are in the core (counted
    /// before each is started, uncounted as its sink is called or its
    /// start fails): while none are, an answer is looked at for one no
    /// more than for a decoded result (`feed_usual_answer`).
    pub(crate) forwards: AtomicUsize,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) closed: bool,
    /// A handshake failure that no new handshake can mend (boxed: rare,
    /// and every client would carry its size).
    pub(crate) fatal: Option<Box<ClientError>>,
    /// Counts connections: a request knows which one it was sent in.
    pub(crate) epoch: u64,
}

impl<T: Transport> Drop for Inner<T> {
    fn drop(&mut self) {
        // A forwarded request has no caller holding the client: its sink
        // gets the end a closed client gives rather than never hearing.
        if self.forwards.load(Ordering::Relaxed) > 0 {
            self.close_core();
        }
        for (_, task) in lock(&self.server_tasks).drain() {
            task.abort();
        }
        self.timer.stop();
    }
}

/// Tools a call's headers could not be read from, for one tool-list
/// generation (a `list_changed` or a new connection forgets them).
#[derive(Debug, Default)]
pub(crate) struct ToolMisses {
    generation: u64,
    /// Names the server's list does not have.
    pub(crate) names: HashSet<String>,
    /// When listing last failed.
    pub(crate) failed_at: Option<Instant>,
}

impl ToolMisses {
    /// Forgets what belongs to another generation.
    pub(crate) fn at(&mut self, generation: u64) -> &mut ToolMisses {
        if self.generation != generation {
            *self = ToolMisses { generation, ..ToolMisses::default() };
        }
        self
    }
}

impl<T: Transport> Inner<T> {
    /// A client's shared state over `transport`, attached to it.
    pub(crate) fn new(transport: T, options: ClientOptions) -> Arc<Inner<T>> {
        let core = ClientCore::new(options.core_config());
        let tasks_declared = options.declares_extension(mcp_proto::types::TASKS_EXTENSION);
        let inner = Arc::new_cyclic(|me: &Weak<Inner<T>>| Inner {
            me: me.clone(),
            transport,
            options,
            core: Mutex::new(core),
            state: Mutex::new(State::default()),
            init_lock: tokio::sync::Mutex::new(()),
            server_tasks: Mutex::new(HashMap::new()),
            listeners: Mutex::new(HashMap::new()),
            cache_server: std::sync::OnceLock::new(),
            tasks_declared,
            tool_misses: Mutex::new(ToolMisses::default()),
            notifications: std::sync::OnceLock::new(),
            timer: crate::timer::Timer::default(),
            tool_results: AtomicUsize::new(0),
            forwards: AtomicUsize::new(0),
        });
        let weak: Weak<dyn LinkTarget> = Arc::downgrade(&inner) as Weak<dyn LinkTarget>;
        inner.transport.attach(Link::new(weak));
        inner
    }

    /// The era the connection speaks, once opened.
    pub(crate) fn era(&self) -> Option<Era> {
        lock(&self.core).protocol_version().map(ProtocolVersion::era)
    }

    /// The rules of the era the connection speaks, once opened.
    pub(crate) fn rules(&self) -> Option<&'static dyn EraRules> {
        self.era().map(rules)
    }

    /// Stops waiting for a request (sending `notifications/cancelled`).
    pub(crate) fn forget(&self, id: &RequestId, reason: &str) {
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

    /// Times out every request whose deadline has passed (sending
    /// `notifications/cancelled` for each).
    pub(crate) fn expire(&self) {
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

    /// Stops waiting for a request whose transport failed to carry it,
    /// telling the server nothing (see `ClientCore::abandon`).
    pub(crate) fn abandon(&self, id: &RequestId) {
        let events = {
            let mut core = lock(&self.core);
            core.abandon(id);
            drain_events(&mut core)
        };
        self.deliver(events);
    }

    /// Flushes what the core queued, here; when dropped before it is
    /// done, the rest goes on in a task of its own (what it took from the
    /// core is not lost).
    pub(crate) async fn flush_here(&self) {
        let Some(me) = self.me.upgrade() else { return };
        let mut flush = Detached(Some(Box::pin(async move {
            if let Err(e) = me.transport.flush().await {
                tracing::debug!(server = %me.options.name, error = %e, "sending a message to the server failed");
            }
        })));
        if let Some(rest) = &mut flush.0 {
            rest.await;
            flush.0 = None;
        }
    }

    pub(crate) fn spawn_flush(&self) {
        let Some(me) = self.me.upgrade() else { return };
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        handle.spawn(async move {
            if let Err(e) = me.transport.flush().await {
                tracing::debug!(server = %me.options.name, error = %e, "sending a message to the server failed");
            }
        });
    }

    /// Ends the connection in the core: waiting requests fail, the
    /// server's requests in progress are abandoned.
    pub(crate) fn close_core(&self) {
        for (_, task) in lock(&self.server_tasks).drain() {
            task.abort();
        }
        let events = {
            let mut core = lock(&self.core);
            core.close();
            drain_events(&mut core)
        };
        self.deliver(events);
    }

    /// Starts over in the core (a new connection): waiting requests fail,
    /// the handshake and the caches are forgotten.
    pub(crate) fn reset_core(&self) {
        let events = {
            let mut core = lock(&self.core);
            core.reset();
            drain_events(&mut core)
        };
        self.deliver(events);
    }

    /// Remembers a failure no new attempt can mend, and returns it.
    pub(crate) fn fatal(&self, e: ClientError) -> T::Error {
        if e.is_fatal_handshake() {
            lock(&self.state).fatal = Some(Box::new(e.clone()));
        }
        self.transport.client_error(e)
    }

    /// The remembered fatal failure, or the client's being closed.
    /// Gives the connection requests go out in now ([`epoch`](Self::epoch)).
    pub(crate) fn check_open(&self) -> Result<u64, T::Error> {
        let state = lock(&self.state);
        if let Some(fatal) = &state.fatal {
            return Err(self.transport.client_error(ClientError::clone(fatal)));
        }
        if state.closed {
            let e = ClientError::Closed { method: methods::INITIALIZE.into() };
            return Err(self.transport.client_error(e));
        }
        Ok(state.epoch)
    }

    /// Which connection requests go out in now.
    pub(crate) fn epoch(&self) -> u64 {
        lock(&self.state).epoch
    }

    /// The server, as the result cache's keys name it: the client's name
    /// and the transport's era cache key.
    pub(crate) fn cache_server(&self) -> String {
        self.cache_server
            .get_or_init(|| {
                let key = self.transport.era_cache_key().unwrap_or_default();
                format!("{}|{}", self.options.name, key)
            })
            .clone()
    }

    /// Whether the connection `epoch` counted is gone (and the client is
    /// not closed).
    pub(crate) fn lost_since(&self, epoch: u64) -> bool {
        let state = lock(&self.state);
        !state.closed && state.epoch != epoch
    }

    /// Drops the cached results an event says changed.
    fn invalidate(&self, event: &Event<Waiter>) {
        use crate::cache::Invalidation;
        let Some(cache) = &self.options.cache else { return };
        let server = self.cache_server();
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
    pub(crate) fn deliver(&self, events: Drained) {
        for event in events {
            self.invalidate(&event);
            if let Some(sender) = self.notifications.get()
                && sender.receiver_count() > 0
                && let Some(notification) = notification_of(&event)
            {
                let _ = sender.send(notification);
            }
            let work = event.deliver(self.options.on_event.as_ref(), |waiter, outcome| {
                self.settle(waiter, outcome.map(Reply::Raw));
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

    /// Hands a request's outcome over: to its waiting caller, or to a
    /// forwarded request's sink ([`settle_sink`](Self::settle_sink)).
    /// Inlined where it is called, so that a caller's outcome is made where
    /// it is sent; the sink's path stays out of line.
    #[inline(always)]
    pub(crate) fn settle(&self, waiter: Waiter, outcome: Outcome) {
        match waiter.to {
            To::Caller(tx) => {
                let _ = tx.send(outcome);
            }
            To::Sink(sink) => self.settle_sink(sink, outcome),
        }
    }

    /// A forwarded request's outcome to its sink, called here, with what
    /// [`call_tool_json`](crate::Client::call_tool_json) gives (a result
    /// that is not an object is `InvalidResult`; an error as the request
    /// path gives it up: [`give_up`](Self::give_up)).
    #[inline(never)]
    fn settle_sink(&self, sink: Sink, outcome: Outcome) {
        match outcome {
            Ok(reply) => self.forwarded_result(sink, &reply.into_raw()),
            Err(e) => self.forwarded_end(sink, Err(self.give_up(Fail::Client(e)))),
        }
    }

    /// A forwarded request's result to its sink: an object, or
    /// `InvalidResult` as `call_tool_json` says.
    pub(crate) fn forwarded_result(&self, sink: Sink, raw: &RawValue) {
        let outcome = match raw.get().trim_start().as_bytes().first() {
            Some(b'{') => Ok(raw),
            _ => Err(self.transport.client_error(ClientError::InvalidResult {
                method: methods::TOOLS_CALL.into(),
                reason: "the result is not a JSON object".into(),
            })),
        };
        self.forwarded_end(sink, outcome);
    }

    /// Calls a forwarded request's sink, its entry no longer counted.
    pub(crate) fn forwarded_end(&self, sink: Sink, outcome: Result<&RawValue, T::Error>) {
        self.forwards.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            Ok(raw) => sink(Ok(raw)),
            Err(e) => sink(Err(&mut Some(e))),
        }
    }

    /// The error a request given up as it came fails with; a `-32022`
    /// names the versions this client speaks too.
    pub(crate) fn give_up(&self, fail: Fail<T::Error>) -> T::Error {
        let ours = &self.options.supported_versions;
        match fail {
            Fail::Client(e) => self.transport.client_error(e.with_client_versions(ours, None)),
            Fail::Transport(e) => match e.protocol_error() {
                Some(p @ ClientError::UnsupportedProtocolVersion { .. }) => {
                    self.transport.client_error(p.clone().with_client_versions(ours, None))
                }
                _ => e,
            },
        }
    }

    /// The usual answer to the era probe, its discovery decoded once,
    /// straight from the text (`usual_discovery`); a result that does not
    /// decode as one is left to the general decoding, which then decides
    /// as it does for every message.
    fn feed_discovery(&self, id: i64, result: &str) -> bool {
        let Some(discovered) = usual_discovery(result) else { return false };
        match lock(&self.core).take_probe_answered(id) {
            Some(waiter) => self.settle(waiter, Ok(Reply::Discovery(Box::new(discovered)))),
            None => tracing::debug!(id, "dropping an answer for an unknown or finished request"),
        }
        true
    }

    /// The usual answer to `initialize`, its result decoded once, straight
    /// from the text, by the core (`take_usual_initialize`); a result that
    /// does not decode as one is left to the general decoding.
    fn feed_initialize(&self, id: i64, result: &str) -> bool {
        let Some((waiter, outcome)) = lock(&self.core).take_usual_initialize(id, result) else {
            return false;
        };
        // `notifications/initialized`, queued, is sent by the handshake
        // itself as soon as it has its answer (`open/handshake.rs`).
        self.settle(waiter, outcome.map(Reply::Initialize));
        true
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
            let opening = !core.is_ready();
            core.handle_incoming(incoming, now());
            // The answer to `initialize` queues `notifications/initialized`
            // (and maybe answers that came with it): the handshake sends
            // them itself as soon as it has its answer (`open/handshake.rs`),
            // with no task of its own.
            let handshake_done = opening && core.is_ready();
            (drain_events(&mut core), core.has_transmit() && !handshake_done)
        };
        self.deliver(events);
        if flush {
            self.spawn_flush();
        }
    }

    /// The usual answer to a `tools/call` whose waiter takes a decoded
    /// result, or to the opening's probe or `initialize`, its result
    /// decoded once, straight from the text. Anything else (another
    /// message, another waiter, a result that does not decode as what
    /// reads it or is not JSON) is left to the general decoding, which
    /// then decides as it does for every message.
    fn feed_usual_answer(&self, bytes: &[u8]) -> bool {
        // No such request out (the stateless era's, a raw call's answer):
        // nothing to look for. A hint only: the general path is right for
        // every answer.
        if self.tool_results.load(Ordering::Relaxed) == 0
            && self.forwards.load(Ordering::Relaxed) == 0
        {
            return false;
        }
        // A request from the server starts the same way: the rest tells.
        if !bytes.starts_with(br#"{"jsonrpc":"2.0","id":"#) && !bytes.starts_with(br#"{"id":"#) {
            return false;
        }
        let Some((id, result)) = std::str::from_utf8(bytes).ok().and_then(jsonrpc::usual_answer)
        else {
            return false;
        };
        let era = {
            let mut core = lock(&self.core);
            if core.is_probe(id) {
                drop(core);
                return self.feed_discovery(id, result);
            }
            if core.is_initialize(id) {
                drop(core);
                return self.feed_initialize(id, result);
            }
            if self.forwards.load(Ordering::Relaxed) > 0
                && let Some((sink, raw)) = take_forwarded(&mut core, id, result)
            {
                drop(core);
                self.forwarded_result(sink, raw);
                return true;
            }
            if !core.waiter(id).is_some_and(|w| w.tool_result) {
                return false;
            }
            core.protocol_version().map(ProtocolVersion::era)
        };
        let Some(era) = era else { return false };
        // Checked as it is decoded: a result that decodes was valid JSON.
        let Ok(decoded) = CallToolResult::from_json(result) else { return false };
        // What the era's rules make of the result (its kind, in the
        // stateless era, read from the decoded member where that is sure),
        // asked as the general path asks them (`request.rs`): anything but
        // a plain delivery is theirs to act on.
        let context = ResultContext {
            tasks_declared: self.tasks_declared,
            cacheable: false,
            // A caller that takes the rounds gets `input_required` by the
            // general path.
            rounds_to_caller: false,
        };
        let kind = decoded.extra.get("resultType");
        if !rules(era).delivers_decoded_as_it_came(methods::TOOLS_CALL, result, kind, context) {
            return false;
        }
        let result = decoded;
        // Taken only now: a request that finished in between (its deadline
        // passed) has its answer dropped, as any late answer is.
        match lock(&self.core).take_answered(id) {
            Some(waiter) => self.settle(waiter, Ok(Reply::Tool(result))),
            None => tracing::debug!(id, "dropping an answer for an unknown or finished request"),
        }
        true
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

    fn awaits_answers(&self) -> bool {
        lock(&self.core).pending_requests() > 0
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
        self.reset_core();
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

/// A future that goes on in a task of its own when it is dropped before
/// it is done (and taken out).
struct Detached(Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>);

impl Drop for Detached {
    fn drop(&mut self) {
        if let (Some(rest), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(rest);
        }
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

/// The core's events, taken out to be acted on outside its lock. The
/// common case, one answer, needs no allocation.
pub(crate) struct Drained {
    first: Option<Event<Waiter>>,
    rest: Vec<Event<Waiter>>,
}

impl IntoIterator for Drained {
    type Item = Event<Waiter>;
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<Event<Waiter>>, std::vec::IntoIter<Event<Waiter>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

pub(crate) fn drain_events(core: &mut ClientCore<Waiter>) -> Drained {
    let first = core.poll_event();
    let rest = match first {
        // An empty `collect` allocates nothing.
        Some(_) => std::iter::from_fn(|| core.poll_event()).collect(),
        None => Vec::new(),
    };
    Drained { first, rest }
}
