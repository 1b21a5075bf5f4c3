//! One request's exchange over Streamable HTTP: the POST, and its reply as
//! a JSON body or an event stream (resumed when it breaks before the
//! reply).

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use hyper::body::Incoming;
use mcp_proto::RequestId;
use mcp_proto::jsonrpc;
use mcp_sse::Decoder;
use serde_json::value::RawValue;

use crate::conn;
use crate::error::Error;
use crate::request::{EXCERPT_WAIT, ExtraHeaders, GetError, Pumped, Snapshot, drain, lock, pump};
use crate::wire::{self, MCP_METHOD, MediaType, SESSION_ID};

use super::session::Streamable;

/// The most of an error body read for its JSON-RPC error.
const MAX_ERROR_BODY: usize = 64 * 1024;

impl Streamable {
    /// POSTs one request to the endpoint; its reply is for
    /// [`reply`](Self::reply).
    pub(crate) async fn post(
        &self,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
    ) -> Result<Response<Incoming>, Error> {
        let http = &self.http;
        let mut req =
            http.build(Method::POST, &http.endpoint.uri, &http.post_headers, body, snap, |h| {
                h.insert(MCP_METHOD.clone(), wire::method_value(method));
                for (name, value) in extra {
                    h.insert(name, value);
                }
            });
        if mcp_proto::methods::is_idempotent(method) {
            req.extensions_mut().insert(conn::Replayable);
        }
        http.send(req, method).await
    }

    /// Reads a request's reply (JSON or a stream, resuming the stream when
    /// it breaks), keeping the session id an `initialize` reply gives.
    /// Returns once the client has the reply.
    pub(crate) async fn reply(
        &self,
        id: &RequestId,
        method: &str,
        resp: Response<Incoming>,
        snap: &Snapshot,
        initialize: bool,
    ) -> Result<(), Error> {
        let http = &self.http;
        let modern = snap.version.is_some_and(mcp_proto::ProtocolVersion::is_modern);
        if modern
            && !resp.status().is_success()
            && !matches!(resp.status().as_u16(), 401 | 403 | 300..=399)
        {
            return Err(Box::pin(self.modern_refusal(resp, method)).await);
        }
        let resp = http.check_status(resp, method, snap.session.is_some()).await?;
        if initialize && let Some(session) = resp.headers().get(&SESSION_ID) {
            if wire::valid_session_id(session) {
                lock(&self.state).session = Some(session.clone());
            } else {
                return Err(http.invalid(method, "the Mcp-Session-Id header is not visible ASCII"));
            }
        }
        // The initialize reply's stream is resumed within the new session.
        let resumed;
        let snap = if initialize {
            resumed = Snapshot { session: lock(&self.state).session.clone(), ..snap.clone() };
            &resumed
        } else {
            snap
        };
        let status = resp.status();
        match wire::media_type(resp.headers()) {
            MediaType::Json => http.read_json(id, method, resp.into_body()).await,
            // Boxed: a stream's reader is a large future, which a JSON
            // reply's request would otherwise carry (and copy) too.
            MediaType::EventStream => {
                Box::pin(self.read_reply_stream(id, method, resp.into_body(), snap)).await
            }
            _ if status == StatusCode::ACCEPTED => {
                Err(http
                    .invalid(method, "the server accepted the request (202) without answering it"))
            }
            MediaType::Other(t) => {
                Err(http.invalid(method, &format!("unexpected content type {t:?}")))
            }
            MediaType::Missing => Err(http.invalid(method, "the response has no content type")),
        }
    }

    /// A stateless-era server's refusal (a 4xx or 5xx other than the
    /// authorization ones): its JSON-RPC error when the body holds one
    /// (`-32022`, `-32020`, `-32021` become their own `ClientError`s; a
    /// `404` with `-32601` says the method is unknown), else the status
    /// with an excerpt of the body.
    async fn modern_refusal(&self, resp: Response<Incoming>, method: &str) -> Error {
        let http = &self.http;
        let status = resp.status();
        let body = tokio::time::timeout(
            EXCERPT_WAIT,
            conn::read_limited(resp.into_body(), MAX_ERROR_BODY),
        )
        .await;
        let bytes = match body {
            Ok(Ok(bytes)) => bytes,
            _ => Bytes::new(),
        };
        if let Ok(incoming) = jsonrpc::decode_slice_as::<Box<RawValue>>(&bytes)
            && let jsonrpc::IncomingOf::Single(jsonrpc::MessageOf::Error(e)) = incoming
        {
            return http.map_error(mcp_proto::client::ClientError::from_rpc(method, e.error));
        }
        Error::Status {
            endpoint: http.endpoint.redacted.clone(),
            method: method.into(),
            status,
            body: http.scrub(&wire::excerpt(&bytes)),
        }
    }

    /// Reads a reply stream until the reply arrived; when it ends before,
    /// resumes it with GET and `Last-Event-ID` (the one reconnect loop,
    /// [`reopen`](Self::reopen)).
    async fn read_reply_stream(
        &self,
        id: &RequestId,
        method: &str,
        body: Incoming,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let http = &self.http;
        let weak = Arc::downgrade(http);
        let mut decoder = Decoder::with_max_event_size(http.options.max_event_size);
        let mut body = body;
        let mut retries = self.reconnects();
        loop {
            let pumped = pump(&weak, &mut decoder, &mut body, |s| !s.is_pending(id));
            let (messages, end) = match pumped.await {
                Pumped::Done => {
                    drain(weak.clone(), std::mem::take(&mut decoder), body);
                    return Ok(());
                }
                Pumped::Gone => return Ok(()),
                Pumped::Ended { messages, reason } => (messages, reason),
            };
            if !http.is_pending(id) {
                return Ok(());
            }
            // Only a message is progress: a stream that ends after each
            // event carrying nothing but a new id (and `retry: 0`) uses up
            // `max_reconnects` like one that fails to open.
            if messages {
                retries.succeeded();
            }
            let lost = |reason: String, attempts: u32| Error::StreamLost {
                endpoint: http.endpoint.redacted.clone(),
                method: method.into(),
                attempts,
                reason,
            };
            if snap.version.is_some_and(mcp_proto::ProtocolVersion::is_modern) {
                // 2026-07-28 streams are not resumed: the request is lost.
                return Err(lost(
                    format!(
                        "the stream ended ({end}) before the reply; 2026-07-28 streams are not resumed"
                    ),
                    retries.attempts(),
                ));
            }
            let last = decoder.last_event_id().to_owned();
            if last.is_empty() {
                return Err(lost(
                    format!(
                        "the stream ended ({end}) before the reply, with no event id to resume from"
                    ),
                    retries.attempts(),
                ));
            }
            let retry = decoder.retry();
            body = match self.reopen(method, Some(&last), retry, snap, &mut retries).await {
                Ok(body) => body,
                // The server has the request: only a read may be sent again
                // in a new session.
                Err(GetError::Fatal(Error::SessionExpired { .. }))
                    if !mcp_proto::methods::is_idempotent(method) =>
                {
                    return Err(Error::SessionLost {
                        endpoint: http.endpoint.redacted.clone(),
                        method: method.into(),
                    });
                }
                Err(GetError::Fatal(e)) => return Err(e),
                Err(GetError::NotAllowed) => {
                    return Err(lost(
                        "the server does not allow GET (405), so the stream cannot be resumed"
                            .into(),
                        retries.attempts(),
                    ));
                }
                Err(GetError::Retry(_)) => {
                    return Err(lost(
                        format!("the stream ended ({end}) and could not be resumed"),
                        retries.attempts(),
                    ));
                }
            };
        }
    }
}
