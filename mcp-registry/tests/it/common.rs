//! What the supervision and reload tests share: testkit servers, the
//! default connector without the PATH probe, a stdio server's process id,
//! the testkit server in this process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_client_stdio::ServerCommand;
use mcp_host_registry::{BoxTransport, DefaultConnector, Registry, TransportError};
use mcp_proto::types::JsonObject;
use serde_json::Value;

pub(crate) fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

/// `mcp-testkit stdio` with these options.
pub(crate) fn testkit(args: &[&str]) -> ServerCommand {
    ServerCommand::new(mcp_testkit::binary_path().to_string_lossy().into_owned())
        .arg("stdio")
        .args(args.iter().copied())
}

/// The default connector, without the login-shell PATH probe (the testkit
/// is an absolute path).
pub(crate) fn stdio_connector() -> DefaultConnector {
    let mut connector = DefaultConnector::default();
    connector.discover_path = false;
    connector
}

/// The stdio server's process id (connecting if needed).
pub(crate) async fn pid(registry: &Registry, server: &str) -> Option<u32> {
    registry
        .with_client(server, |c| async move {
            // Through the box: the box itself is a transport too.
            let transport: &dyn mcp_host_registry::DynTransport<TransportError> = &**c.transport();
            Ok(transport
                .as_any()
                .downcast_ref::<mcp_client_stdio::StdioTransport>()
                .and_then(|t| t.pid()))
        })
        .await
        .unwrap()
}

/// A transport to a testkit server in this process (`mcp-peer`'s
/// in-memory pair, pumped by two tasks). While `mute` is set the server
/// reads and drops every message.
pub(crate) fn memory_testkit(mute: Arc<AtomicBool>) -> BoxTransport {
    let (transport, mut end) = mcp_peer::memory::pair();
    let sender = end.sender();
    let (testkit, mut queue) = mcp_testkit::Server::new(mcp_testkit::Config::default());
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            if !mute.load(Ordering::SeqCst) {
                testkit.handle_json(&bytes);
            }
        }
    });
    tokio::spawn(async move {
        while let Some(item) = queue.recv().await {
            match item {
                mcp_testkit::Outgoing::Message { .. } | mcp_testkit::Outgoing::RawReply { .. } => {
                    let mut json = Vec::new();
                    if item.encode_into(&mut json).unwrap_or(false) {
                        sender.send(&json);
                    }
                }
                // The `crash` tool: what a process's end is to a client.
                mcp_testkit::Outgoing::Exit(_) => {
                    sender.drop_connection();
                    return;
                }
                _ => {}
            }
        }
    });
    Box::new(transport)
}
