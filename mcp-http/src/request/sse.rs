//! Reading replies under their bounds: a JSON body's messages, an event
//! stream's messages (the one pump every stream kind uses), and a GET for
//! an event stream.

use std::sync::Weak;
use std::time::Duration;

use bytes::Bytes;
use http::header::ACCEPT;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Incoming};
use mcp_proto::RequestId;
use mcp_proto::jsonrpc;
use mcp_sse::{DecodeError, Decoder, ItemRef};
use serde_json::value::RawValue;

use crate::conn;
use crate::error::{Error, chain};
use crate::wire::{self, LAST_EVENT_ID, MediaType};

use super::base::{Http, Snapshot};

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
    weak: &Weak<Http>,
    decoder: &mut Decoder,
    body: &mut Incoming,
    mut done: impl FnMut(&Http) -> bool,
) -> Pumped {
    let mut messages = false;
    let mut seen = |kind: Seen| messages |= kind == Seen::Message;
    let reason = loop {
        let frame = body.frame().await;
        let Some(shared) = weak.upgrade() else { return Pumped::Gone };
        match frame {
            None => break "end of stream".to_owned(),
            Some(Err(e)) => break shared.scrub(&chain(&e)),
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
pub(crate) fn drain(weak: Weak<Http>, mut decoder: Decoder, mut body: Incoming) {
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

impl Http {
    /// Reads a JSON reply body (at most
    /// [`max_body`](crate::HttpOptions::max_body)) and hands its messages
    /// to the client; the request `id` must be answered by it.
    pub(crate) async fn read_json(
        &self,
        id: &RequestId,
        method: &str,
        body: Incoming,
    ) -> Result<(), Error> {
        let bytes = conn::read_limited(body, self.options.max_body)
            .await
            .map_err(|e| self.read_error(method, e))?;
        let link = self.link();
        // The usual answer to a call that waits for its decoded result is
        // decoded once, into it; anything else is decoded here.
        if !link.feed_usual_answer(&bytes) {
            let incoming = jsonrpc::decode_slice_as::<Box<RawValue>>(&bytes)
                .map_err(|e| self.invalid(method, &format!("the body is not JSON-RPC: {e}")))?;
            // An error the server could not tie to the request (a parse
            // error, say) still answers it.
            if let Some(error) = jsonrpc::unaddressed_error(&incoming) {
                return Err(Error::Rpc {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    error: self.scrub_error(error.clone()),
                });
            }
            link.feed(incoming);
        }
        if self.is_pending(id) {
            return Err(self.invalid(method, "the JSON body does not answer the request"));
        }
        Ok(())
    }

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
        let req = self.build(
            Method::GET,
            &self.endpoint.uri,
            &self.plain_headers,
            Bytes::new(),
            snap,
            |h| {
                h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
                if let Some(last) = last {
                    h.insert(LAST_EVENT_ID.clone(), last);
                }
            },
        );
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
