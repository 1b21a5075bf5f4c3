//! The 2024-11-05 HTTP+SSE transport, which the client falls back to when
//! `initialize` is refused: one GET stream whose first `endpoint` event
//! names where to POST, and whose `message` events carry every reply.

use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use http::Method;
use hyper::body::{Body as _, Incoming};
use mcp_sse::{Decoder, Item};
use tokio::task::AbortHandle;

use crate::auth::StaticAuth;
use crate::conn;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::send::EXCERPT_WAIT;
use crate::stream::{GetError, Pumped};
use crate::transport::{ExtraHeaders, Shared, Snapshot, lock};
use crate::wire::{self, MCP_METHOD};

/// A 2024-11-05 connection: POSTs go to `post_uri`, replies come as
/// `message` events on the GET stream a task reads.
#[derive(Debug)]
pub(crate) struct Legacy {
    post_uri: http::Uri,
    reader: Mutex<Option<AbortHandle>>,
}

impl Legacy {
    /// Ends the stream (which ends a 2024-11-05 session).
    pub(crate) fn stop(&self) {
        if let Some(task) = lock(&self.reader).take() {
            task.abort();
        }
    }
}

/// Why the 2024-11-05 transport could not be set up.
pub(crate) enum LegacyFail {
    /// The server has no legacy SSE stream at the URL.
    NoStream(Error),
    /// It has one, but it is unusable.
    Broken(Error),
}

/// Where POSTs go, when the server speaks the 2024-11-05 transport.
pub(crate) fn post_uri(shared: &Shared) -> Option<http::Uri> {
    lock(&shared.legacy).as_ref().map(|l| l.post_uri.clone())
}

impl Shared {
    /// POSTs a request over the 2024-11-05 transport: the server accepts it
    /// and the reply comes on the GET stream, so this never returns `Ok`
    /// (the client's deadline bounds the wait).
    pub(crate) async fn legacy_exchange(
        &self,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let req = self.build(Method::POST, &self.post_headers, body, snap, |h| {
            h.insert(MCP_METHOD.clone(), wire::method_value(method));
            for (name, value) in extra {
                h.insert(name, value);
            }
        });
        let resp = self.send(req, method).await?;
        let resp = self.check_status(resp, method, false).await?;
        let body = resp.into_body();
        if !body.is_end_stream() {
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        std::future::pending::<Result<(), Error>>().await
    }

    /// Opens the 2024-11-05 SSE stream at the endpoint URL, reads its
    /// `endpoint` event (bounded by the request timeout), and starts the
    /// task that reads the rest.
    pub(crate) async fn open_legacy(self: &Arc<Self>, method: &str) -> Result<(), LegacyFail> {
        let snap = Snapshot { session: None, version: None, epoch: lock(&self.state).epoch };
        let mut body = match self.open_get(method, None, &snap).await {
            Ok(body) => body,
            Err(GetError::NotAllowed) => {
                return Err(LegacyFail::NoStream(self.invalid(method, "GET is not allowed (405)")));
            }
            Err(GetError::Fatal(e) | GetError::Retry(e)) => return Err(LegacyFail::NoStream(e)),
        };
        let mut decoder = Decoder::with_max_event_size(self.options.max_event_size);
        let found = tokio::time::timeout(self.options.request_timeout, async {
            use http_body_util::BodyExt as _;
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else { continue };
                // The owned iterator, not `decode_with`: it can stop at the
                // endpoint event and keep what follows for the reader.
                for item in decoder.decode(&data) {
                    if let Item::Event(event) = item
                        && event.event == "endpoint"
                    {
                        return Some(event.data);
                    }
                }
            }
            None
        })
        .await;
        let reference = match found {
            Ok(Some(reference)) => reference,
            Ok(None) => {
                return Err(LegacyFail::Broken(
                    self.invalid(method, "the SSE stream ended before its endpoint event"),
                ));
            }
            Err(_) => {
                return Err(LegacyFail::Broken(Error::Timeout {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    after: self.options.request_timeout,
                }));
            }
        };
        let mut post = Endpoint {
            uri: crate::endpoint::resolve_same_origin(&self.endpoint.uri, &reference).map_err(
                |reason| {
                    LegacyFail::Broken(
                        self.invalid(method, &format!("the endpoint event: {reason}")),
                    )
                },
            )?,
            redacted: self.endpoint.redacted.clone(),
        };
        if let StaticAuth::Query { name, value } = &self.options.auth {
            post = post
                .with_query_param(name, value)
                .map_err(|reason| LegacyFail::Broken(self.invalid(method, &reason)))?;
        }
        let legacy = Arc::new(Legacy { post_uri: post.uri, reader: Mutex::new(None) });
        let task = tokio::spawn(legacy_reader(Arc::downgrade(self), legacy.clone(), decoder, body));
        *lock(&legacy.reader) = Some(task.abort_handle());
        *lock(&self.legacy) = Some(legacy);
        Ok(())
    }
}

/// Reads a 2024-11-05 SSE stream after its `endpoint` event: `message`
/// events go to the client. When it ends, the session is over: the client
/// is told the connection was lost (waiting reads are sent again in a new
/// session, other requests fail).
async fn legacy_reader(
    weak: Weak<Shared>,
    legacy: Arc<Legacy>,
    mut decoder: Decoder,
    mut body: Incoming,
) {
    // What the endpoint event's chunk held after it (an empty chunk reads
    // what the decoder holds).
    if let Some(shared) = weak.upgrade() {
        decoder.decode_with(b"", |item| {
            shared.on_item(item);
        });
    }
    if let Pumped::Gone = crate::stream::pump(&weak, &mut decoder, &mut body, |_| false).await {
        return;
    }
    let Some(shared) = weak.upgrade() else { return };
    tracing::info!(endpoint = %shared.endpoint.redacted, "the 2024-11-05 SSE stream ended");
    let current = {
        let mut current = lock(&shared.legacy);
        let is_current = current.as_ref().is_some_and(|l| Arc::ptr_eq(l, &legacy));
        if is_current {
            *current = None;
        }
        is_current
    };
    if current && !lock(&shared.state).closed {
        shared.link().connection_lost();
    }
}
