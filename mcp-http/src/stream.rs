//! Event streams: the one pump that feeds a stream's messages to the
//! client, the one reconnect loop (GET, with `Last-Event-ID` when there is
//! one), and the standalone GET stream's reader.

use std::sync::Weak;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Incoming};
use mcp_proto::backoff::Retries;
use mcp_sse::{DecodeError, Decoder, ItemRef};

use crate::error::{Error, chain};
use crate::transport::{Shared, Snapshot, lock};
use crate::wire::{self, LAST_EVENT_ID, MediaType};

/// The longest a reply stream is drained after its reply arrived (so the
/// connection can go back to the pool and late messages are still seen).
const DRAIN_AFTER_REPLY: Duration = Duration::from_secs(5);

/// Why a GET for an event stream gave no stream.
pub(crate) enum GetError {
    /// A failure worth another try (a connection error, 5xx, 429).
    Retry(Error),
    /// 405: the server offers no GET stream.
    NotAllowed,
    /// A failure another try will not mend.
    Fatal(Error),
}

/// What one stream item was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// A comment, an error item, ...
    Nothing,
    /// An event that carried no message (a priming event, one with only an
    /// id or a `retry`, another type): no progress.
    Event,
    /// A JSON-RPC message, handed to the client.
    Message,
}

/// What became of the standalone GET stream, the server's channel for
/// messages that belong to no request
/// ([`HttpTransport::watch_event_stream`](crate::HttpTransport::watch_event_stream)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventStreamState {
    /// Not open: not asked for yet (before the handshake, or with
    /// [`HttpOptions::event_stream`](crate::HttpOptions::event_stream)
    /// off), the stateless era (which has none), or a 2024-11-05
    /// connection (whose one stream carries everything).
    NotOpen,
    /// Open, or being reopened after it ended.
    Open,
    /// The server offers none (405 to the GET).
    NotOffered,
    /// It ended for good: it was reopened
    /// [`max_reconnects`](crate::HttpOptions::max_reconnects) times in a
    /// row without delivering a message, reopening met a failure another
    /// try cannot mend, or the client was closed. Only a new session (after
    /// a renewal) opens it again.
    Ended {
        /// Why, as a person reads it (endpoint redacted, no secret).
        reason: String,
    },
}

/// How pumping one stream ended.
pub(crate) enum Pumped {
    /// The caller's condition was met (the reply arrived).
    Done,
    /// The client is gone.
    Gone,
    /// The body ended (or failed) first.
    Ended {
        /// Whether a JSON-RPC message arrived (an event without one, a
        /// priming event or one carrying only an id and a `retry`, is no
        /// progress).
        messages: bool,
        /// How it ended, scrubbed of secrets.
        reason: String,
    },
}

/// Reads an event stream's frames into `decoder`, handing each message to
/// the client; holds the transport only while a frame is handled (so
/// dropping the client ends a reader). Stops after a frame when `done`
/// says so, or when the body ends (then what the decoder still holds is
/// dispatched).
pub(crate) async fn pump(
    weak: &Weak<Shared>,
    decoder: &mut Decoder,
    body: &mut Incoming,
    mut done: impl FnMut(&Shared) -> bool,
) -> Pumped {
    let mut messages = false;
    let mut seen = |kind: Seen| messages |= kind == Seen::Message;
    let reason = loop {
        let frame = body.frame().await;
        let Some(shared) = weak.upgrade() else { return Pumped::Gone };
        match frame {
            None => break "end of stream".to_owned(),
            Some(Err(e)) => break shared.secrets.scrub(&chain(&e)),
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else { continue };
                decoder.decode_with(&data, |item| seen(shared.on_item(item)));
                if done(&shared) {
                    return Pumped::Done;
                }
            }
        }
    };
    decoder.finish();
    let Some(shared) = weak.upgrade() else { return Pumped::Gone };
    decoder.decode_with(b"", |item| seen(shared.on_item(item)));
    Pumped::Ended { messages, reason }
}

/// Reads what follows a reply on its stream, for a bounded time, in the
/// background.
pub(crate) fn drain(weak: Weak<Shared>, mut decoder: Decoder, mut body: Incoming) {
    if body.is_end_stream() {
        return;
    }
    tokio::spawn(async move {
        let _ = tokio::time::timeout(
            DRAIN_AFTER_REPLY,
            pump(&weak, &mut decoder, &mut body, |_| false),
        )
        .await;
    });
}

/// Reads the standalone GET stream, and reopens it when it ends; says in
/// [`EventStreamState`] when it gives up.
pub(crate) async fn listen(weak: Weak<Shared>, body: Incoming, mut epoch: u64) {
    let (max_event, mut retries) = match weak.upgrade() {
        Some(shared) => (shared.options.max_event_size, shared.reconnects()),
        None => return,
    };
    let mut decoder = Decoder::with_max_event_size(max_event);
    let mut body = body;
    loop {
        // Only a message counts: a server that sends a fresh event id (or
        // a priming event) on every connection and nothing else must not
        // keep the reconnect loop going for ever (the failures in a row are
        // capped by `max_reconnects`, with a growing delay).
        let messages = match pump(&weak, &mut decoder, &mut body, |_| false).await {
            Pumped::Ended { messages, .. } => messages,
            Pumped::Done | Pumped::Gone => return,
        };
        if messages {
            retries.succeeded();
        }
        let Some(shared) = weak.upgrade() else { return };
        let snap = shared.snapshot();
        if snap.epoch != epoch {
            // A new session: the old stream's event ids mean nothing.
            decoder = Decoder::with_max_event_size(max_event);
            epoch = snap.epoch;
        }
        let last = decoder.last_event_id().to_owned();
        let last = (!last.is_empty()).then_some(last.as_str());
        let retry = decoder.retry();
        // Boxed: the reopening (a whole request, OAuth rounds and redirects
        // included) is a large future; a reader spends its life pumping, so
        // it holds the space only while it reopens.
        let reopen = Box::pin(shared.reopen("GET", last, retry, &snap, &mut retries));
        let reason = match reopen.await {
            Ok(next) => {
                body = next;
                continue;
            }
            Err(GetError::NotAllowed) => {
                shared.event_stream.send_replace(EventStreamState::NotOffered);
                return;
            }
            Err(GetError::Retry(e)) => {
                tracing::debug!(endpoint = %shared.endpoint.redacted, error = %e, attempts = retries.attempts(), "the standalone event stream ended and could not be reopened");
                format!(
                    "it ended {} times in a row without a message and was given up \
                     (HttpOptions::max_reconnects); last: {e}",
                    retries.failures()
                )
            }
            Err(GetError::Fatal(e)) => {
                tracing::warn!(endpoint = %shared.endpoint.redacted, error = %e, "the standalone event stream stopped");
                e.to_string()
            }
        };
        shared.event_stream.send_replace(EventStreamState::Ended { reason });
        return;
    }
}

impl Shared {
    /// Acts on one stream item and says what it was. Items come borrowed
    /// (`Decoder::decode_with`): an event's JSON is parsed straight from
    /// the body frame when it lies whole in it.
    pub(crate) fn on_item(&self, item: ItemRef<'_>) -> Seen {
        match item {
            ItemRef::Event(event) => {
                // Priming events (an id and empty data) are never parsed.
                if event.data.is_empty() {
                    return Seen::Event;
                }
                if event.event != "message" {
                    tracing::debug!(endpoint = %self.endpoint.redacted, event = %event.event, "ignoring a server-sent event of another type");
                    return Seen::Event;
                }
                match self.link().feed_slice(event.data.as_bytes()) {
                    Ok(()) => Seen::Message,
                    Err(e) => {
                        tracing::warn!(endpoint = %self.endpoint.redacted, error = %e, "skipping an event that is not a JSON-RPC message");
                        // An answer whose id can still be read fails its
                        // request now, with the cause, not at its deadline.
                        let reason = format!("it is not a valid JSON-RPC message: {e}");
                        self.link().fail_unreadable_text(event.data.as_bytes(), &reason);
                        Seen::Event
                    }
                }
            }
            ItemRef::NoData { .. } => Seen::Event,
            ItemRef::Error(DecodeError::EventTooLarge { limit, head }) => {
                tracing::error!(endpoint = %self.endpoint.redacted, limit, "dropped a server-sent event over the size limit");
                // An answer whose id can be read from the event's start
                // fails its request now, with the cause, not at its
                // deadline.
                let reason = format!(
                    "it was a server-sent event over the {limit}-byte limit (HttpOptions::max_event_size)"
                );
                self.link().fail_unreadable_text(&head, &reason);
                Seen::Nothing
            }
            ItemRef::Error(e) => {
                tracing::warn!(endpoint = %self.endpoint.redacted, error = %e, "event stream");
                Seen::Nothing
            }
            _ => Seen::Nothing,
        }
    }

    /// A stream's reconnection accounting: at most
    /// [`max_reconnects`](crate::HttpOptions::max_reconnects) reopenings
    /// in a row that bring no message, waiting
    /// [`RECONNECT_BACKOFF`](wire::RECONNECT_BACKOFF) between them.
    pub(crate) fn reconnects(&self) -> Retries {
        Retries::new(wire::RECONNECT_BACKOFF, Some(self.options.max_reconnects))
    }

    /// The reconnect loop: GETs the stream again (with `Last-Event-ID` when
    /// given), after the server's `retry` delay (ms; at least 100) or a
    /// jittered backoff, until it opens, a failure that another try cannot
    /// mend, or the failures in a row that `retries` allows (it counts
    /// across calls; the caller tells it when a stream delivered a
    /// message). Gives up when the client is closed.
    pub(crate) async fn reopen(
        &self,
        method: &str,
        last: Option<&str>,
        retry: Option<u64>,
        snap: &Snapshot,
        retries: &mut Retries,
    ) -> Result<Incoming, GetError> {
        let mut last_error = None;
        loop {
            let Some(delay) = retries.next(retry.map(Duration::from_millis)) else {
                return Err(GetError::Retry(last_error.unwrap_or_else(|| {
                    self.invalid(method, "the stream kept ending without a message")
                })));
            };
            tracing::debug!(endpoint = %self.endpoint.redacted, method, ?delay, attempt = retries.attempts(), "reopening an event stream");
            tokio::time::sleep(delay).await;
            if lock(&self.state).closed {
                return Err(GetError::Fatal(Error::Closed {
                    endpoint: self.endpoint.redacted.clone(),
                }));
            }
            match self.open_get(method, last, snap).await {
                Ok(body) => return Ok(body),
                Err(GetError::Retry(e)) => {
                    tracing::debug!(method, error = %e, "reopening an event stream failed");
                    last_error = Some(e);
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// A GET for an event stream (with `Last-Event-ID` when resuming).
    pub(crate) async fn open_get(
        &self,
        method: &str,
        last: Option<&str>,
        snap: &Snapshot,
    ) -> Result<Incoming, GetError> {
        let last = match last {
            None => None,
            Some(last) => Some(HeaderValue::from_bytes(last.as_bytes()).map_err(|_| {
                GetError::Fatal(Error::StreamLost {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    attempts: 0,
                    reason: "the last event id cannot be sent as a header".into(),
                })
            })?),
        };
        let req = self.build(Method::GET, &self.get_headers, Bytes::new(), snap, |h| {
            if let Some(last) = last {
                h.insert(LAST_EVENT_ID.clone(), last);
            }
        });
        let resp = match self.send_bounded(req, method).await {
            Ok(r) => r,
            Err(e) => return Err(GetError::Retry(e)),
        };
        let status = resp.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(GetError::NotAllowed);
        }
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(match self.check_status(resp, method, false).await {
                Err(e) => GetError::Retry(e),
                Ok(_) => GetError::Retry(self.invalid(method, "unexpected status")),
            });
        }
        let resp = self
            .check_status(resp, method, snap.session.is_some())
            .await
            .map_err(GetError::Fatal)?;
        match wire::media_type(resp.headers()) {
            MediaType::EventStream => Ok(resp.into_body()),
            _ => Err(GetError::Fatal(
                self.invalid(method, "the GET stream is not text/event-stream"),
            )),
        }
    }
}
