//! The sans-IO client state machine: [`ClientCore`], its state and the
//! small glue (accessors, the queues the driver polls, close and reset,
//! the tool cache). Its other jobs have a file each:
//!
//! - `config`: how the client presents itself ([`CoreConfig`]) and the
//!   stateless era's `_meta` every request carries;
//! - `options` and `event`: what a request is made with
//!   ([`RequestOptions`]) and what the driver acts on ([`Event`],
//!   [`DriverWork`]);
//! - `opening`: the era probe, discovery, `initialize` and the handshake;
//! - `requests`: starting requests, their deadlines, cancelling and
//!   abandoning them;
//! - `incoming`: answers, server requests and notifications;
//! - `encode`: a request's JSON text and its `_meta`.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::ClientError;
use crate::jsonrpc::{ErrorResponse, Message, Notification, RequestId};
use crate::types::{InitializeResult, Tool};
use crate::version::ProtocolVersion;

mod config;
mod encode;
mod event;
mod incoming;
mod opening;
mod options;
mod requests;
pub(crate) mod usual_init;

use self::config::ModernMeta;
pub use self::config::{CoreConfig, DEFAULT_REQUEST_TIMEOUT};
pub use self::event::{DriverWork, Event, EventCallback, ListKind, ServerEvent, ServerRequest};
pub use self::options::{CallerRound, ProgressCallback, RequestOptions};

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

    /// Whether the cached tool list is `tools` (the same list, compared by
    /// address: not one stored again since).
    pub fn keeps_tools(&self, tools: &Arc<[Tool]>) -> bool {
        self.tools.as_ref().is_some_and(|kept| Arc::ptr_eq(kept, tools))
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
