//! One session: a [`Server`] core, the task that routes its outgoing queue,
//! and the streams its messages go to (`mcp_server_io::http::routes`,
//! which says where each goes). The testkit's part is padding replies
//! (`--oversized-body`) and what an exit request does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use mcp_proto::jsonrpc::{Message, RequestId};
use serde_json::Value;
use tokio::task::AbortHandle;

pub(crate) use mcp_server_io::http::routes::Route;
use mcp_server_io::http::routes::{Routes, is_reply};
use mcp_server_io::http::stream::EventStream;
use mcp_server_io::{Outgoing, OutgoingQueue};

use super::Shared;
use crate::config::Config;
use crate::server::{Addr, Server};

/// One MCP session over HTTP.
#[derive(Debug)]
pub(crate) struct Session {
    /// The `Mcp-Session-Id` (legacy: the `sessionId` query value); `None`
    /// when sessions are off.
    pub(crate) id: Option<String>,
    pub(crate) server: Server,
    posts: AtomicU64,
    routes: Routes,
    router: Mutex<Option<AbortHandle>>,
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
        let session = Arc::new(Session {
            id,
            server,
            posts: AtomicU64::new(0),
            routes: Routes::new(shared.stream_name(), legacy),
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
        self.routes.standalone()
    }

    /// A stream by name, for `Last-Event-ID`.
    pub(crate) fn stream(&self, name: &str) -> Option<Arc<EventStream>> {
        self.routes.stream(name)
    }

    /// A new reply stream, kept for resumption.
    pub(crate) fn open_reply_stream(&self, name: String) -> Arc<EventStream> {
        self.routes.open_reply_stream(name)
    }

    /// Registers where the reply to request `id` from `origin` goes;
    /// `false` if the session has ended.
    pub(crate) fn register(&self, origin: u64, id: RequestId, route: Route) -> bool {
        self.routes.register(Addr { origin, id }, route)
    }

    /// Removes the stateless-era route of request `id` from `origin`;
    /// `true` if it was there (the request is unanswered).
    pub(crate) fn take_stream_route(&self, origin: u64, id: RequestId) -> bool {
        self.routes.take_stream_route(&Addr { origin, id })
    }

    /// Ends the session: running calls are aborted, waiting POSTs dropped,
    /// and every stream's connection ended (cleanly, or cut with `abort`).
    pub(crate) fn close(&self, abort: bool) {
        if let Some(router) = lock(&self.router).take() {
            router.abort();
        }
        self.server.abort_all();
        self.routes.close(abort);
    }

    /// Sends one outgoing message where it belongs, a reply padded to
    /// `pad_to` bytes.
    fn dispatch(
        &self,
        message: &Message,
        related: Option<RequestId>,
        origin: u64,
        pad_to: Option<usize>,
    ) {
        let is_reply = is_reply(message, related.as_ref());
        let json = match serde_json::to_value(message) {
            Ok(value) => encode(value, pad_to.filter(|_| is_reply)),
            Err(_) => return,
        };
        self.routes.dispatch(json, is_reply, related, origin);
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
