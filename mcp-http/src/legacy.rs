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
use crate::request::{EXCERPT_WAIT, ExtraHeaders, GetError, Http, Pumped, Snapshot, lock, pump};
use crate::wire::{self, MCP_METHOD};

/// Why the 2024-11-05 transport could not be set up.
pub(crate) enum LegacyFail {
    /// The server has no legacy SSE stream at the URL.
    NoStream(Error),
    /// It has one, but it is unusable.
    Broken(Error),
}

/// A 2024-11-05 connection: POSTs go to `post_uri`, replies come as
/// `message` events on the GET stream a task reads.
#[derive(Debug)]
pub(crate) struct Legacy {
    post_uri: http::Uri,
    reader: Mutex<Option<AbortHandle>>,
}

impl Legacy {
    /// Where POSTs go.
    pub(crate) fn post_uri(&self) -> &http::Uri {
        &self.post_uri
    }

    /// Ends the stream (which ends a 2024-11-05 session).
    pub(crate) fn stop(&self) {
        if let Some(task) = lock(&self.reader).take() {
            task.abort();
        }
    }

    /// POSTs a request over the 2024-11-05 transport: the server accepts it
    /// and the reply comes on the GET stream, so this never returns `Ok`
    /// (the client's deadline bounds the wait).
    pub(crate) async fn exchange(
        &self,
        http: &Http,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let req = http.build(Method::POST, &self.post_uri, &http.post_headers, body, snap, |h| {
            h.insert(MCP_METHOD.clone(), wire::method_value(method));
            for (name, value) in extra {
                h.insert(name, value);
            }
        });
        let resp = http.send(req, method).await?;
        let resp = http.check_status(resp, method, false).await?;
        let body = resp.into_body();
        if !body.is_end_stream() {
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        std::future::pending::<Result<(), Error>>().await
    }

    /// Opens the 2024-11-05 SSE stream at the endpoint URL, reads its
    /// `endpoint` event (bounded by the request timeout), and starts the
    /// task that reads the rest. When that stream ends, the task calls
    /// `retire`, which says whether this connection was still the one in
    /// use (and stops using it): only then is the client told that the
    /// connection was lost.
    pub(crate) async fn open(
        http: &Arc<Http>,
        method: &str,
        retire: impl FnOnce(&Arc<Legacy>) -> bool + Send + 'static,
    ) -> Result<Arc<Legacy>, LegacyFail> {
        // No session, no version: nothing was negotiated yet.
        let snap = Snapshot { session: None, version: None, epoch: 0 };
        let mut body = match http.open_get(method, None, &snap).await {
            Ok(body) => body,
            Err(GetError::NotAllowed) => {
                return Err(LegacyFail::NoStream(http.invalid(method, "GET is not allowed (405)")));
            }
            Err(GetError::Fatal(e) | GetError::Retry(e)) => return Err(LegacyFail::NoStream(e)),
        };
        let mut decoder = Decoder::with_max_event_size(http.options.max_event_size);
        let found = tokio::time::timeout(http.options.request_timeout, async {
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
                    http.invalid(method, "the SSE stream ended before its endpoint event"),
                ));
            }
            Err(_) => {
                return Err(LegacyFail::Broken(Error::Timeout {
                    endpoint: http.endpoint.redacted.clone(),
                    method: method.into(),
                    after: http.options.request_timeout,
                }));
            }
        };
        let mut post = Endpoint {
            uri: crate::endpoint::resolve_same_origin(&http.endpoint.uri, &reference).map_err(
                |reason| {
                    LegacyFail::Broken(
                        http.invalid(method, &format!("the endpoint event: {reason}")),
                    )
                },
            )?,
            redacted: http.endpoint.redacted.clone(),
        };
        if let StaticAuth::Query { name, value } = &http.options.auth {
            post = post
                .with_query_param(name, value)
                .map_err(|reason| LegacyFail::Broken(http.invalid(method, &reason)))?;
        }
        let legacy = Arc::new(Legacy { post_uri: post.uri, reader: Mutex::new(None) });
        let reader = read(Arc::downgrade(http), legacy.clone(), decoder, body, retire);
        let task = tokio::spawn(reader);
        *lock(&legacy.reader) = Some(task.abort_handle());
        Ok(legacy)
    }
}

/// Reads a 2024-11-05 SSE stream after its `endpoint` event: `message`
/// events go to the client. When it ends, the session is over: the client
/// is told the connection was lost (waiting reads are sent again in a new
/// session, other requests fail).
async fn read(
    weak: Weak<Http>,
    legacy: Arc<Legacy>,
    mut decoder: Decoder,
    mut body: Incoming,
    retire: impl FnOnce(&Arc<Legacy>) -> bool,
) {
    // What the endpoint event's chunk held after it (an empty chunk reads
    // what the decoder holds).
    if let Some(http) = weak.upgrade() {
        decoder.decode_with(b"", |item| {
            http.on_item(item);
        });
    }
    if let Pumped::Gone = pump(&weak, &mut decoder, &mut body, |_| false).await {
        return;
    }
    let Some(http) = weak.upgrade() else { return };
    tracing::info!(endpoint = %http.endpoint.redacted, "the 2024-11-05 SSE stream ended");
    if retire(&legacy) && !http.is_closed() {
        http.link().connection_lost();
    }
}
