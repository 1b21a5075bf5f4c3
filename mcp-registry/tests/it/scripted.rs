//! A server scripted in the test process, joined by the in-memory
//! transport: its tool list can be changed at any time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_host_registry::{
    BoxTransport, ClientIdentity, Connector, Error, ServerClient, ServerConfig,
};
use mcp_proto::client::BoxFuture;
use serde_json::{Value, json};

/// A server whose `tools/list` answers the current `tools`, and whose
/// `tools/call` answers `called NAME`.
#[derive(Debug, Clone)]
pub(crate) struct Scripted {
    tools: Arc<Mutex<Vec<Value>>>,
    /// The open connection's sender, to announce a list change.
    sender: Arc<Mutex<Option<mcp_peer::memory::MemorySender>>>,
    /// How many `tools/list` requests were answered.
    lists: Arc<AtomicUsize>,
    /// The `_meta` of each `tools/call` (`null` when it had none).
    call_metas: Arc<Mutex<Vec<Value>>>,
}

impl Scripted {
    pub(crate) fn new(tools: Vec<Value>) -> Self {
        Scripted {
            tools: Arc::new(Mutex::new(tools)),
            sender: Arc::new(Mutex::new(None)),
            lists: Arc::new(AtomicUsize::new(0)),
            call_metas: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The `_meta` of each `tools/call` so far (`null` when it had none).
    pub(crate) fn call_metas(&self) -> Vec<Value> {
        self.call_metas.lock().unwrap().clone()
    }

    /// How many `tools/list` requests were answered so far.
    pub(crate) fn lists(&self) -> usize {
        self.lists.load(Ordering::SeqCst)
    }

    pub(crate) fn set_tools(&self, tools: Vec<Value>) {
        *self.tools.lock().unwrap() = tools;
    }

    pub(crate) fn announce_list_changed(&self) {
        let sender = self.sender.lock().unwrap().clone().expect("connected");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert!(sender.send(note.to_string().as_bytes()));
    }

    fn answer(&self, request: &Value) -> Option<Value> {
        let id = request.get("id")?.clone();
        let method = request["method"].as_str().unwrap_or_default();
        let result = match method {
            "initialize" => json!({
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "scripted", "version": "1"}
            }),
            "ping" => json!({}),
            "tools/list" => {
                self.lists.fetch_add(1, Ordering::SeqCst);
                json!({"tools": *self.tools.lock().unwrap()})
            }
            "tools/call" => {
                let name = request["params"]["name"].as_str().unwrap_or_default();
                self.call_metas.lock().unwrap().push(request["params"]["_meta"].clone());
                json!({"content": [{"type": "text", "text": format!("called {name}")}]})
            }
            _ => {
                let error = json!({"code": -32601, "message": "Method not found"});
                return Some(json!({"jsonrpc": "2.0", "id": id, "error": error}));
            }
        };
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}

impl Connector for Scripted {
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        _identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>> {
        Box::pin(async move {
            let (transport, mut end) = mcp_peer::memory::pair();
            *self.sender.lock().unwrap() = Some(end.sender());
            let script = self.clone();
            tokio::spawn(async move {
                while let Some(bytes) = end.recv().await {
                    let Ok(request) = serde_json::from_slice::<Value>(&bytes) else { continue };
                    if let Some(reply) = script.answer(&request) {
                        end.send(reply.to_string().as_bytes());
                    }
                }
            });
            Ok(mcp_peer::Client::new(
                Box::new(transport) as BoxTransport,
                mcp_peer::ClientOptions::new(server.name.clone()),
            ))
        })
    }
}
