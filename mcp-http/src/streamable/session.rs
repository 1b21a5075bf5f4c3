//! The Streamable HTTP variant's state: the session (`Mcp-Session-Id`,
//! counted in epochs), the standalone GET stream and what became of it,
//! and the session's end (`DELETE`).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use mcp_peer::Link;
use mcp_proto::ProtocolVersion;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::error::Error;
use crate::request::{Http, Snapshot, lock};

/// The Streamable HTTP transport of one endpoint, over the shared
/// request layer.
pub(crate) struct Streamable {
    pub(crate) http: Arc<Http>,
    pub(crate) state: Mutex<State>,
    /// The standalone GET stream's task.
    pub(crate) listener: Mutex<Option<AbortHandle>>,
    /// The task opening the standalone GET stream after the handshake
    /// ([`open_in_background`](Streamable::open_in_background)).
    pub(crate) opener: Mutex<Option<AbortHandle>>,
    /// Held while the standalone stream is being opened, so concurrent
    /// openers share one GET.
    pub(crate) opening: tokio::sync::Mutex<()>,
    /// What became of the standalone GET stream, and the channel that
    /// tells its watchers.
    event_stream: Mutex<EventStream>,
}

impl Drop for Streamable {
    fn drop(&mut self) {
        self.stop_opening();
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) session: Option<HeaderValue>,
    /// Counts sessions (each `initialize` starts one): a stream knows which
    /// session it belongs to.
    pub(crate) epoch: u64,
    /// The server answered the standalone GET with 405 in this session:
    /// it has no such stream, and is not asked again.
    pub(crate) no_event_stream: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("session", &self.session.as_ref().map(|_| "<set>"))
            .field("epoch", &self.epoch)
            .field("no_event_stream", &self.no_event_stream)
            .finish()
    }
}

/// The standalone GET stream's state as last published. The watch channel
/// is made by the first [`HttpTransport::watch_event_stream`](crate::HttpTransport::watch_event_stream)
/// call: its shared state (nine `Notify`s) costs every session a few
/// hundred bytes, and most hosts never watch.
struct EventStream {
    state: EventStreamState,
    watch: Option<watch::Sender<EventStreamState>>,
}

impl EventStream {
    fn new() -> EventStream {
        EventStream { state: EventStreamState::NotOpen, watch: None }
    }

    fn set(&mut self, state: EventStreamState) {
        if let Some(watch) = &self.watch {
            watch.send_replace(state.clone());
        }
        self.state = state;
    }
}

/// What became of the standalone GET stream, the server's channel for
/// messages that belong to no request
/// ([`HttpTransport::watch_event_stream`](crate::HttpTransport::watch_event_stream)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventStreamState {
    /// Not open: not asked for yet (before the handshake, or with
    /// [`HttpOptions::event_stream`](crate::HttpOptions::event_stream)
    /// off), being opened (the GET sent after the handshake and not
    /// answered yet), the stateless era (which has none), or a 2024-11-05
    /// connection (whose one stream carries everything).
    NotOpen,
    /// Open, or being reopened after it ended.
    Open,
    /// The server offers none (405 to the GET).
    NotOffered,
    /// It ended for good: it was reopened
    /// [`max_reconnects`](crate::HttpOptions::max_reconnects) times in a
    /// row without delivering a message, reopening met a failure another
    /// try cannot mend, its opening after the handshake failed (an error
    /// status other than 405, a lost connection, the request timeout), or
    /// the client was closed (while it was open or being opened). Only a
    /// new session (after a renewal) opens it by itself again.
    Ended {
        /// Why, as a person reads it (endpoint redacted, no secret).
        reason: String,
    },
}

impl Streamable {
    pub(crate) fn new(http: Arc<Http>) -> Streamable {
        Streamable {
            http,
            state: Mutex::new(State::default()),
            listener: Mutex::new(None),
            opener: Mutex::new(None),
            opening: tokio::sync::Mutex::new(()),
            event_stream: Mutex::new(EventStream::new()),
        }
    }

    /// Publishes what became of the standalone GET stream.
    pub(crate) fn set_event_stream(&self, state: EventStreamState) {
        lock(&self.event_stream).set(state);
    }

    /// Publishes that the opening after the handshake failed
    /// ([`Ended`](EventStreamState::Ended)), unless the stream's state
    /// moved on meanwhile.
    pub(crate) fn opening_failed(&self, reason: String) {
        let mut published = lock(&self.event_stream);
        if published.state == EventStreamState::NotOpen {
            published.set(EventStreamState::Ended { reason });
        }
    }

    /// The standalone GET stream's state, and each change of it (the
    /// channel is made on the first call).
    pub(crate) fn watch_event_stream(&self) -> watch::Receiver<EventStreamState> {
        let mut published = lock(&self.event_stream);
        let published = &mut *published;
        match &published.watch {
            Some(watch) => watch.subscribe(),
            None => {
                let (watch, receiver) = watch::channel(published.state.clone());
                published.watch = Some(watch);
                receiver
            }
        }
    }

    /// What the next request goes with: the current session.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let version = self.http.link.get().and_then(Link::protocol_version);
        let state = lock(&self.state);
        Snapshot { session: state.session.clone(), version, epoch: state.epoch }
    }

    /// What a request goes with: an `initialize` starts a new session (a
    /// new epoch, no session id, no version header); a stateless-era
    /// request (`modern`, the version its `_meta` names) has no session.
    pub(crate) fn request_snapshot(
        &self,
        initialize: bool,
        modern: Option<ProtocolVersion>,
    ) -> Snapshot {
        if initialize {
            let mut state = lock(&self.state);
            state.session = None;
            state.no_event_stream = false;
            state.epoch += 1;
            Snapshot { session: None, version: None, epoch: state.epoch }
        } else if let Some(version) = modern {
            // The stateless era: no session; the version header is the one
            // the request's `_meta` names.
            Snapshot { session: None, version: Some(version), epoch: lock(&self.state).epoch }
        } else {
            self.snapshot()
        }
    }

    /// Gives up a standalone GET still being opened in the background;
    /// says whether one was.
    pub(crate) fn stop_opening(&self) -> bool {
        match lock(&self.opener).take() {
            Some(task) if !task.is_finished() => {
                task.abort();
                true
            }
            _ => false,
        }
    }

    /// Whether the server gave a session id.
    pub(crate) fn has_session(&self) -> bool {
        lock(&self.state).session.is_some()
    }

    /// Stops the standalone stream (its state becomes
    /// [`Ended`](EventStreamState::Ended) when it was open or being
    /// opened) and forgets
    /// the session, returning its id.
    pub(crate) fn stop(&self) -> Option<HeaderValue> {
        let session = lock(&self.state).session.take();
        let was_opening = self.stop_opening();
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
        let mut published = lock(&self.event_stream);
        if published.state == EventStreamState::Open
            || (was_opening && published.state == EventStreamState::NotOpen)
        {
            let reason = "the client was closed".to_owned();
            published.set(EventStreamState::Ended { reason });
        }
        session
    }

    /// Deletes a session (`DELETE`; 405 and 404 are accepted).
    pub(crate) async fn delete(&self, session: HeaderValue) -> Result<(), Error> {
        let http = &self.http;
        let version = http.link.get().and_then(Link::protocol_version);
        let snap = Snapshot { session: Some(session), version, epoch: 0 };
        let req = http.build(
            Method::DELETE,
            &http.endpoint.uri,
            &http.plain_headers,
            Bytes::new(),
            &snap,
            |_| {},
        );
        let resp = http.send_bounded(req, "DELETE").await?;
        let status = resp.status();
        if status.is_success()
            || status == StatusCode::METHOD_NOT_ALLOWED
            || status == StatusCode::NOT_FOUND
        {
            tracing::debug!(endpoint = %http.endpoint.redacted, %status, "MCP session deleted");
            return Ok(());
        }
        http.check_status(resp, "DELETE", false).await.map(drop)
    }
}
