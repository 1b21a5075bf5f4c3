//! One request's exchange: the POST, and its reply as a JSON body or an
//! event stream (resumed when it breaks before the reply).

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, StatusCode};
use hyper::body::Incoming;
use mcp_proto::RequestId;
use mcp_proto::jsonrpc;
use mcp_sse::Decoder;
use serde_json::value::RawValue;

use crate::conn;
use crate::error::Error;
use crate::legacy::LegacyFail;
use crate::stream::{GetError, Pumped};
use crate::transport::{ExtraHeaders, Shared, Snapshot, lock};
use crate::wire::{self, MCP_METHOD, MediaType, SESSION_ID};

/// The most of an error body read for its JSON-RPC error.
const MAX_ERROR_BODY: usize = 64 * 1024;

impl Shared {
    /// POSTs one request and reads its reply (JSON or a stream, resuming
    /// the stream when it breaks). Returns once the client has the reply.
    pub(crate) async fn exchange(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
        initialize: bool,
    ) -> Result<(), Error> {
        if crate::legacy::post_uri(self).is_some() {
            return self.legacy_exchange(method, body, extra, snap).await;
        }
        // Kept for a fallback to the 2024-11-05 transport (a cheap clone).
        let again = initialize.then(|| body.clone());
        let mut req = self.build(Method::POST, &self.post_headers, body, snap, |h| {
            h.insert(MCP_METHOD.clone(), wire::method_value(method));
            for (name, value) in extra {
                h.insert(name, value);
            }
        });
        if mcp_proto::methods::is_idempotent(method) {
            req.extensions_mut().insert(conn::Replayable);
        }
        let resp = self.send(req, method).await?;
        if let Some(body) = again
            && matches!(resp.status().as_u16(), 400 | 404 | 405)
        {
            let refusal = match self.check_status(resp, method, false).await {
                Err(e) => e,
                Ok(_) => self.invalid(method, "unexpected status"),
            };
            tracing::info!(endpoint = %self.endpoint.redacted, error = %refusal, "initialize was refused; trying the 2024-11-05 HTTP+SSE transport");
            return match self.open_legacy(method).await {
                Ok(()) => self.legacy_exchange(method, body, Vec::new(), snap).await,
                // No legacy server either: the POST's refusal says more.
                Err(LegacyFail::NoStream(e)) => {
                    tracing::debug!(error = %e, "no 2024-11-05 SSE stream either");
                    Err(refusal)
                }
                Err(LegacyFail::Broken(e)) => Err(e),
            };
        }
        let modern = snap.version.is_some_and(mcp_proto::ProtocolVersion::is_modern);
        if modern
            && !resp.status().is_success()
            && !matches!(resp.status().as_u16(), 401 | 403 | 300..=399)
        {
            return Err(self.modern_refusal(resp, method).await);
        }
        let resp = self.check_status(resp, method, snap.session.is_some()).await?;
        if initialize && let Some(session) = resp.headers().get(&SESSION_ID) {
            if wire::valid_session_id(session) {
                lock(&self.state).session = Some(session.clone());
            } else {
                return Err(self.invalid(method, "the Mcp-Session-Id header is not visible ASCII"));
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
            MediaType::Json => {
                let bytes = conn::read_limited(resp.into_body(), self.options.max_body)
                    .await
                    .map_err(|e| self.read_error(method, e))?;
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
                self.link().feed(incoming);
                if self.is_pending(id) {
                    return Err(self.invalid(method, "the JSON body does not answer the request"));
                }
                Ok(())
            }
            MediaType::EventStream => {
                self.read_reply_stream(id, method, resp.into_body(), snap).await
            }
            _ if status == StatusCode::ACCEPTED => {
                Err(self
                    .invalid(method, "the server accepted the request (202) without answering it"))
            }
            MediaType::Other(t) => {
                Err(self.invalid(method, &format!("unexpected content type {t:?}")))
            }
            MediaType::Missing => Err(self.invalid(method, "the response has no content type")),
        }
    }

    /// A stateless-era server's refusal (a 4xx or 5xx other than the
    /// authorization ones): its JSON-RPC error when the body holds one
    /// (`-32022`, `-32020`, `-32021` become their own `ClientError`s; a
    /// `404` with `-32601` says the method is unknown), else the status
    /// with an excerpt of the body.
    async fn modern_refusal(&self, resp: http::Response<Incoming>, method: &str) -> Error {
        let status = resp.status();
        let body = tokio::time::timeout(
            crate::send::EXCERPT_WAIT,
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
            return self.map_error(mcp_proto::client::ClientError::from_rpc(method, e.error));
        }
        Error::Status {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            status,
            body: self.secrets.scrub(&wire::excerpt(&bytes)),
        }
    }

    /// Reads a reply stream until the reply arrived; when it ends before,
    /// resumes it with GET and `Last-Event-ID` (the one reconnect loop,
    /// [`reopen`](Self::reopen)).
    async fn read_reply_stream(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        body: Incoming,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let weak = Arc::downgrade(self);
        let mut decoder = Decoder::with_max_event_size(self.options.max_event_size);
        let mut body = body;
        let mut retries = self.reconnects();
        loop {
            let pumped = crate::stream::pump(&weak, &mut decoder, &mut body, |s| !s.is_pending(id));
            let (messages, end) = match pumped.await {
                Pumped::Done => {
                    crate::stream::drain(weak.clone(), std::mem::take(&mut decoder), body);
                    return Ok(());
                }
                Pumped::Gone => return Ok(()),
                Pumped::Ended { messages, reason } => (messages, reason),
            };
            if !self.is_pending(id) {
                return Ok(());
            }
            // Only a message is progress: a stream that ends after each
            // event carrying nothing but a new id (and `retry: 0`) uses up
            // `max_reconnects` like one that fails to open.
            if messages {
                retries.succeeded();
            }
            let lost = |reason: String, attempts: u32| Error::StreamLost {
                endpoint: self.endpoint.redacted.clone(),
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
                        endpoint: self.endpoint.redacted.clone(),
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
