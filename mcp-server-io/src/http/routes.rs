//! Where the messages of one HTTP session go: the routing table of a
//! Streamable HTTP (or legacy HTTP+SSE) session.
//!
//! A reply goes to the POST that carried its request (a JSON body, that
//! POST's SSE stream, or a stateless-era POST's channel); a message related
//! to a request answered over SSE goes on that stream before the reply;
//! everything else (messages related to no request, and those related to a
//! request answered with a JSON body, which cannot carry them) goes on the
//! session's standalone GET stream, where it waits for a GET if none is
//! connected. In legacy mode every message goes on the one GET stream.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use mcp_proto::hash::SeededMap;
use mcp_proto::jsonrpc::{Message, RequestId};
use tokio::sync::{mpsc, oneshot};

use super::stream::EventStream;
use crate::session::RequestKey;

/// The most reply streams a session keeps for resumption; older ones are
/// forgotten.
pub const STREAM_CAP: usize = 256;

/// Where a request's reply goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum Route {
    /// The POST waits for one JSON body.
    Json(oneshot::Sender<Bytes>),
    /// The POST's SSE stream.
    Sse(Arc<EventStream>),
    /// A stateless-era POST: every message related to the request, each
    /// with whether it is the reply; the POST decides between a JSON body
    /// and an SSE stream on the first.
    Stream(mpsc::UnboundedSender<(Bytes, bool)>),
    /// A handshake-era POST that answers with one JSON body when the reply
    /// is the first thing about its request, else with an SSE stream: the
    /// first message goes through this channel, with whether it is the
    /// reply; what comes after it is [`Route::Held`] until the POST moves
    /// the route to its stream ([`Routes::upgrade_held`]).
    First(oneshot::Sender<(Bytes, bool)>),
    /// The messages after a [`Route::First`] one, each with whether it is
    /// the reply, waiting for the POST's stream.
    Held(Vec<(Bytes, bool)>),
}

/// The routing table of one session.
#[derive(Debug)]
pub struct Routes {
    legacy: bool,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Looked up twice a request, so with a fast hasher: keyed by the
    /// client's ids, it holds the session's requests not yet answered,
    /// no more than its cap on requests in flight.
    by_request: SeededMap<RequestKey, Route>,
    standalone: Arc<EventStream>,
    /// Every resumable stream by name (the standalone one included).
    streams: HashMap<String, Arc<EventStream>>,
    /// Reply stream names, oldest first.
    order: VecDeque<String>,
    closed: bool,
}

impl Routes {
    /// A table whose standalone stream is named `standalone` (its event ids
    /// `<name>-<n>`; none in `legacy` mode, where it carries everything).
    pub fn new(standalone: String, legacy: bool) -> Self {
        let standalone = Arc::new(EventStream::new(standalone, legacy));
        let mut streams = HashMap::new();
        streams.insert(standalone.name().to_owned(), standalone.clone());
        let inner = Inner {
            by_request: SeededMap::default(),
            standalone,
            streams,
            order: VecDeque::new(),
            closed: false,
        };
        Routes { legacy, inner: Mutex::new(inner) }
    }

    /// The GET stream (legacy: the only stream).
    pub fn standalone(&self) -> Arc<EventStream> {
        self.lock().standalone.clone()
    }

    /// A stream by name, for `Last-Event-ID`.
    pub fn stream(&self, name: &str) -> Option<Arc<EventStream>> {
        self.lock().streams.get(name).cloned()
    }

    /// A new reply stream, kept for resumption (the oldest beyond
    /// [`STREAM_CAP`] forgotten).
    pub fn open_reply_stream(&self, name: String) -> Arc<EventStream> {
        let stream = Arc::new(EventStream::new(name.clone(), false));
        let mut inner = self.lock();
        inner.streams.insert(name.clone(), stream.clone());
        inner.order.push_back(name);
        if inner.order.len() > STREAM_CAP
            && let Some(old) = inner.order.pop_front()
        {
            inner.streams.remove(&old);
        }
        stream
    }

    /// Registers where the reply to a request goes; `false` once the
    /// session has ended.
    pub fn register(&self, key: RequestKey, route: Route) -> bool {
        let mut inner = self.lock();
        if inner.closed {
            return false;
        }
        inner.by_request.insert(key, route);
        true
    }

    /// Removes a stateless-era route; `true` if it was there (the request
    /// is unanswered).
    pub fn take_stream_route(&self, key: &RequestKey) -> bool {
        let mut inner = self.lock();
        match inner.by_request.get(key) {
            Some(Route::Stream(_)) => {
                inner.by_request.remove(key);
                true
            }
            _ => false,
        }
    }

    /// Moves a request's [`Route::Held`] to an SSE stream: the messages held
    /// go on the stream first, in order, then the ones to come. `false`
    /// when the reply was among them (the stream is finished) or the
    /// session has ended.
    pub fn upgrade_held(&self, key: &RequestKey, stream: Arc<EventStream>) -> bool {
        // Under the lock, so nothing dispatched meanwhile can overtake.
        let mut inner = self.lock();
        let Some(route @ Route::Held(_)) = inner.by_request.get_mut(key) else {
            return false;
        };
        let Route::Held(held) = std::mem::replace(route, Route::Sse(stream.clone())) else {
            return false;
        };
        for (json, is_reply) in held {
            stream.push_message(&json);
            if is_reply {
                inner.by_request.remove(key);
                stream.finish();
                return false;
            }
        }
        true
    }

    /// Ends the table: waiting POSTs are dropped, and every stream's
    /// connection ended, cleanly or cut (`abort`: a hook for test servers
    /// that drop connections).
    pub fn close(&self, abort: bool) {
        let streams: Vec<Arc<EventStream>> = {
            let mut inner = self.lock();
            inner.closed = true;
            inner.by_request.clear();
            inner.streams.values().cloned().collect()
        };
        for stream in streams {
            if abort { stream.abort() } else { stream.disconnect() }
        }
    }

    /// Sends one encoded message where it belongs: `related` and `origin`
    /// as the session queued it, `is_reply` from [`is_reply`].
    pub fn dispatch(&self, json: Bytes, is_reply: bool, related: Option<RequestId>, origin: u64) {
        let mut inner = self.lock();
        if !self.legacy
            && let Some(id) = related
        {
            let key = RequestKey { origin, id };
            if is_reply {
                match inner.by_request.remove(&key) {
                    Some(Route::Json(tx)) => {
                        let _ = tx.send(json);
                        return;
                    }
                    Some(Route::Sse(stream)) => {
                        drop(inner);
                        stream.push_message(&json);
                        stream.finish();
                        return;
                    }
                    Some(Route::Stream(tx)) => {
                        let _ = tx.send((json, true));
                        return;
                    }
                    Some(Route::First(tx)) => {
                        let _ = tx.send((json, true));
                        return;
                    }
                    Some(Route::Held(mut held)) => {
                        held.push((json, true));
                        inner.by_request.insert(key, Route::Held(held));
                        return;
                    }
                    None => {}
                }
            } else {
                match inner.by_request.get_mut(&key) {
                    Some(Route::Sse(stream)) => {
                        let stream = stream.clone();
                        drop(inner);
                        stream.push_message(&json);
                        return;
                    }
                    Some(Route::Stream(tx)) => {
                        let _ = tx.send((json, false));
                        return;
                    }
                    // The POST is gone: dropped, as its reply will be.
                    Some(Route::First(tx)) if tx.is_closed() => return,
                    Some(route @ Route::First(_)) => {
                        // The POST answers with a stream: what follows waits
                        // for it.
                        let held = std::mem::replace(route, Route::Held(Vec::new()));
                        if let Route::First(tx) = held
                            && tx.send((json, false)).is_err()
                        {
                            inner.by_request.remove(&key);
                        }
                        return;
                    }
                    Some(Route::Held(held)) => {
                        held.push((json, false));
                        return;
                    }
                    _ => {}
                }
            }
        }
        let standalone = inner.standalone.clone();
        drop(inner);
        standalone.push_message(&json);
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a message is the reply to `related` (a response or error with
/// that id).
pub fn is_reply(message: &Message, related: Option<&RequestId>) -> bool {
    match message {
        Message::Response(r) => related == Some(&r.id),
        Message::Error(e) => e.id.is_some() && e.id.as_ref() == related,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::ResponseBody;
    use http_body_util::BodyExt;

    fn key(origin: u64, id: i64) -> RequestKey {
        RequestKey { origin, id: id.into() }
    }

    #[tokio::test]
    async fn replies_go_to_their_post_and_the_rest_to_the_get_stream() {
        let routes = Routes::new("g".into(), false);
        let (json_tx, json_rx) = oneshot::channel();
        assert!(routes.register(key(0, 1), Route::Json(json_tx)));
        let sse = routes.open_reply_stream("s1".into());
        assert!(routes.register(key(0, 2), Route::Sse(sse.clone())));
        let (tx, mut rx) = mpsc::unbounded_channel();
        assert!(routes.register(key(7, 1), Route::Stream(tx)));
        // Progress of the JSON-answered request has nowhere else to go.
        routes.dispatch(Bytes::from_static(b"p1"), false, Some(1.into()), 0);
        routes.dispatch(Bytes::from_static(b"r1"), true, Some(1.into()), 0);
        routes.dispatch(Bytes::from_static(b"p2"), false, Some(2.into()), 0);
        routes.dispatch(Bytes::from_static(b"r2"), true, Some(2.into()), 0);
        routes.dispatch(Bytes::from_static(b"n7"), false, Some(1.into()), 7);
        routes.dispatch(Bytes::from_static(b"r7"), true, Some(1.into()), 7);
        assert_eq!(json_rx.await.unwrap(), "r1");
        assert_eq!(rx.recv().await.unwrap(), (Bytes::from_static(b"n7"), false));
        assert_eq!(rx.recv().await.unwrap(), (Bytes::from_static(b"r7"), true));
        let read = |stream: Arc<EventStream>| async move {
            let (tx, body) = ResponseBody::events(crate::http::service::DEFAULT_MAX_UNSENT_EVENTS);
            stream.attach(tx, None, None);
            stream.finish();
            String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap()
        };
        assert_eq!(
            read(sse).await,
            "id: s1-0\nevent: message\ndata: p2\n\nid: s1-1\nevent: message\ndata: r2\n\n"
        );
        assert_eq!(read(routes.standalone()).await, "id: g-0\nevent: message\ndata: p1\n\n");
        assert!(routes.stream("s1").is_some() && routes.stream("s9").is_none());
        routes.close(false);
        assert!(!routes.register(key(0, 3), Route::Sse(routes.standalone())));
    }

    #[tokio::test]
    async fn a_first_route_becomes_a_stream_in_order() {
        let routes = Routes::new("g".into(), false);
        let (tx, rx) = oneshot::channel();
        assert!(routes.register(key(0, 1), Route::First(tx)));
        routes.dispatch(Bytes::from_static(b"p1"), false, Some(1.into()), 0);
        routes.dispatch(Bytes::from_static(b"p2"), false, Some(1.into()), 0);
        // The first message decides: a stream; the second waits in the route.
        assert_eq!(rx.await.unwrap(), (Bytes::from_static(b"p1"), false));
        let stream = routes.open_reply_stream("s1".into());
        let (events, body) = ResponseBody::events(crate::http::service::DEFAULT_MAX_UNSENT_EVENTS);
        stream.attach(events, None, None);
        stream.push_message(b"p1");
        assert!(routes.upgrade_held(&key(0, 1), stream.clone()));
        routes.dispatch(Bytes::from_static(b"r1"), true, Some(1.into()), 0);
        let text = String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap();
        let data: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
        assert_eq!(data, ["p1", "p2", "r1"]);
        // A reply held before the stream finishes it at once, and the
        // route is gone.
        let (tx, rx) = oneshot::channel();
        assert!(routes.register(key(0, 2), Route::First(tx)));
        routes.dispatch(Bytes::from_static(b"p3"), false, Some(2.into()), 0);
        routes.dispatch(Bytes::from_static(b"r2"), true, Some(2.into()), 0);
        assert_eq!(rx.await.unwrap().0, "p3");
        let late = routes.open_reply_stream("s2".into());
        assert!(!routes.upgrade_held(&key(0, 2), late));
        assert!(!routes.lock().by_request.contains_key(&key(0, 2)));
        // A reply that comes first is the JSON body.
        let (tx, rx) = oneshot::channel();
        assert!(routes.register(key(0, 3), Route::First(tx)));
        routes.dispatch(Bytes::from_static(b"r3"), true, Some(3.into()), 0);
        assert_eq!(rx.await.unwrap(), (Bytes::from_static(b"r3"), true));
        // A POST gone before its first message: what comes is dropped, not
        // held.
        let (tx, rx) = oneshot::channel();
        assert!(routes.register(key(0, 4), Route::First(tx)));
        drop(rx);
        routes.dispatch(Bytes::from_static(b"p4"), false, Some(4.into()), 0);
        routes.dispatch(Bytes::from_static(b"r4"), true, Some(4.into()), 0);
        assert!(routes.lock().by_request.is_empty());
    }
}
