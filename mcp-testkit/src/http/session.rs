//! One session: a [`Server`] core, the task that routes its outgoing queue,
//! and the streams its messages go to.
//!
//! Routing: a reply goes to the POST that carried its request (a JSON body
//! or that POST's SSE stream); a message related to a request answered over
//! SSE goes on that stream before the reply; everything else (messages
//! related to no request, and those related to a request answered with a
//! JSON body, which cannot carry them) goes on the session's standalone GET
//! stream, where it waits for a GET if none is connected. In legacy mode
//! every message goes on the one GET stream.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use mcp_proto::jsonrpc::{Message, RequestId};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use mcp_server_io::http::stream::EventStream;
use mcp_server_io::{Outgoing, OutgoingQueue};

use super::Shared;
use crate::config::Config;
use crate::server::{Addr, Server};

/// The most reply streams a session keeps for resumption.
const STREAM_CAP: usize = 256;

/// Where a request's reply goes.
#[derive(Debug)]
pub(crate) enum Route {
    /// The POST waits for one JSON body.
    Json(oneshot::Sender<Bytes>),
    /// The POST's SSE stream.
    Sse(Arc<EventStream>),
    /// A stateless-era POST: every message related to the request, each
    /// with whether it is the reply; the POST decides between a JSON body
    /// and an SSE stream on the first. (Each POST is an origin of its own,
    /// so its route is never another POST's that uses the same id.)
    Stream(mpsc::UnboundedSender<(Bytes, bool)>),
}

/// One MCP session over HTTP.
#[derive(Debug)]
pub(crate) struct Session {
    /// The `Mcp-Session-Id` (legacy: the `sessionId` query value); `None`
    /// when sessions are off.
    pub(crate) id: Option<String>,
    pub(crate) server: Server,
    legacy: bool,
    posts: AtomicU64,
    routes: Mutex<Routes>,
    router: Mutex<Option<AbortHandle>>,
}

#[derive(Debug)]
struct Routes {
    /// By request: its origin (see [`Server::handle_from`]; 0 but for
    /// stateless-era POSTs) and id.
    by_request: HashMap<Addr, Route>,
    standalone: Arc<EventStream>,
    /// Every resumable stream by name (the standalone one included).
    streams: HashMap<String, Arc<EventStream>>,
    /// Reply stream names, oldest first.
    order: VecDeque<String>,
    closed: bool,
}

impl Session {
    /// A session with a fresh server core and its routing task.
    pub(crate) fn start(
        shared: &Arc<Shared>,
        id: Option<String>,
        config: Config,
        legacy: bool,
    ) -> Arc<Session> {
        let (server, queue) = Server::new(config);
        let standalone = Arc::new(EventStream::new(shared.stream_name(), legacy));
        let mut streams = HashMap::new();
        streams.insert(standalone.name().to_owned(), standalone.clone());
        let session = Arc::new(Session {
            id,
            server,
            legacy,
            posts: AtomicU64::new(0),
            routes: Mutex::new(Routes {
                by_request: HashMap::new(),
                standalone,
                streams,
                order: VecDeque::new(),
                closed: false,
            }),
            router: Mutex::new(None),
        });
        let task = tokio::spawn(route(shared.clone(), session.clone(), queue));
        *lock(&session.router) = Some(task.abort_handle());
        session
    }

    /// Counts a POST; returns how many the session has seen.
    pub(crate) fn count_post(&self) -> u64 {
        self.posts.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The GET stream (legacy: the only stream).
    pub(crate) fn standalone(&self) -> Arc<EventStream> {
        lock(&self.routes).standalone.clone()
    }

    /// A stream by name, for `Last-Event-ID`.
    pub(crate) fn stream(&self, name: &str) -> Option<Arc<EventStream>> {
        lock(&self.routes).streams.get(name).cloned()
    }

    /// A new reply stream, kept for resumption.
    pub(crate) fn open_reply_stream(&self, name: String) -> Arc<EventStream> {
        let stream = Arc::new(EventStream::new(name.clone(), false));
        let mut routes = lock(&self.routes);
        routes.streams.insert(name.clone(), stream.clone());
        routes.order.push_back(name);
        if routes.order.len() > STREAM_CAP
            && let Some(old) = routes.order.pop_front()
        {
            routes.streams.remove(&old);
        }
        stream
    }

    /// Registers where the reply to request `id` from `origin` goes;
    /// `false` if the session has ended.
    pub(crate) fn register(&self, origin: u64, id: RequestId, route: Route) -> bool {
        let mut routes = lock(&self.routes);
        if routes.closed {
            return false;
        }
        routes.by_request.insert(Addr { origin, id }, route);
        true
    }

    /// Removes the stateless-era route of request `id` from `origin`;
    /// `true` if it was there (the request is unanswered).
    pub(crate) fn take_stream_route(&self, origin: u64, id: RequestId) -> bool {
        let addr = Addr { origin, id };
        let mut routes = lock(&self.routes);
        match routes.by_request.get(&addr) {
            Some(Route::Stream(_)) => {
                routes.by_request.remove(&addr);
                true
            }
            _ => false,
        }
    }

    /// Ends the session: running calls are aborted, waiting POSTs dropped,
    /// and every stream's connection ended (cleanly, or cut with `abort`).
    pub(crate) fn close(&self, abort: bool) {
        if let Some(router) = lock(&self.router).take() {
            router.abort();
        }
        self.server.abort_all();
        let streams: Vec<Arc<EventStream>> = {
            let mut routes = lock(&self.routes);
            routes.closed = true;
            routes.by_request.clear();
            routes.streams.values().cloned().collect()
        };
        for stream in streams {
            if abort { stream.abort() } else { stream.disconnect() }
        }
    }

    /// Sends one outgoing message where it belongs.
    fn dispatch(
        &self,
        message: &Message,
        related: Option<RequestId>,
        origin: u64,
        pad_to: Option<usize>,
    ) {
        let is_reply = match message {
            Message::Response(r) => related.as_ref() == Some(&r.id),
            Message::Error(e) => e.id.is_some() && e.id == related,
            _ => false,
        };
        let json = match serde_json::to_value(message) {
            Ok(value) => encode(value, pad_to.filter(|_| is_reply)),
            Err(_) => return,
        };
        let mut routes = lock(&self.routes);
        if !self.legacy
            && let Some(id) = related
        {
            let key = Addr { origin, id };
            if is_reply {
                match routes.by_request.remove(&key) {
                    Some(Route::Json(tx)) => {
                        let _ = tx.send(json);
                        return;
                    }
                    Some(Route::Sse(stream)) => {
                        drop(routes);
                        stream.push_message(&json);
                        stream.finish();
                        return;
                    }
                    Some(Route::Stream(tx)) => {
                        let _ = tx.send((json, true));
                        return;
                    }
                    None => {}
                }
            } else {
                match routes.by_request.get(&key) {
                    Some(Route::Sse(stream)) => {
                        let stream = stream.clone();
                        drop(routes);
                        stream.push_message(&json);
                        return;
                    }
                    Some(Route::Stream(tx)) => {
                        let _ = tx.send((json, false));
                        return;
                    }
                    _ => {}
                }
            }
        }
        let standalone = routes.standalone.clone();
        drop(routes);
        standalone.push_message(&json);
    }
}

/// The session's routing task: drains the core's queue.
async fn route(shared: Arc<Shared>, session: Arc<Session>, mut queue: OutgoingQueue) {
    let pad_to = shared.config.oversized_body;
    while let Some(item) = queue.recv().await {
        match item {
            Outgoing::Message { message, related, origin, .. } => {
                session.dispatch(&message, related, origin, pad_to)
            }
            Outgoing::Exit(code) => {
                if shared.config.exit_process {
                    // Let the connections write what was queued before.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    std::process::exit(code);
                }
                shared.end_session(&session, true);
                return;
            }
            // Raw lines are a stdio fault; HTTP has no place for them.
            _ => {}
        }
    }
}

/// Serializes a message, padding it to `pad_to` bytes with a `_meta.padding`
/// string in a result (`data.padding` in an error).
fn encode(mut value: Value, pad_to: Option<usize>) -> Bytes {
    let Some(size) = pad_to else {
        return Bytes::from(value.to_string());
    };
    let (outer, inner) = if value.get("result").is_some_and(Value::is_object) {
        ("result", "_meta")
    } else if value.get("error").is_some_and(Value::is_object) {
        ("error", "data")
    } else {
        return Bytes::from(value.to_string());
    };
    let set = |value: &mut Value, padding: String| {
        let slot = value[outer]
            .as_object_mut()
            .map(|o| o.entry(inner).or_insert_with(|| Value::Object(Default::default())));
        if let Some(Value::Object(slot)) = slot {
            slot.insert("padding".into(), Value::String(padding));
        }
    };
    set(&mut value, String::new());
    let base = value.to_string().len();
    set(&mut value, "x".repeat(size.saturating_sub(base)));
    Bytes::from(value.to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn padding_reaches_the_exact_size() {
        let reply = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let bytes = encode(reply.clone(), Some(5000));
        assert_eq!(bytes.len(), 5000);
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back["result"]["content"], json!([]));
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m"}});
        assert_eq!(encode(error, Some(300)).len(), 300);
        assert_eq!(encode(reply.clone(), None), Bytes::from(reply.to_string()));
    }
}
