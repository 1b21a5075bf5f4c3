//! The stdio driver and the session core spoken to by the toolkit's own
//! client (`mcp-peer`), in both eras: the client's messages are written to
//! the driver as lines over an in-process pipe, and its lines go back to
//! the client.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_peer::memory::{self, MemoryTransport};
use mcp_peer::{Client, ClientOptions, EraChoice, RequestOptions};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_server_io::stdio::{self, Input};
use mcp_server_io::{
    Context, Handler, Params, Reply, ServeEra, ServerInfo, Session, SessionOptions,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// One tool, `echo`, which sends a progress notification when asked for
/// one before it answers (the HTTP tests serve it too).
pub(crate) struct Tools(pub(crate) ServerInfo);

impl Handler for Tools {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.0
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        match method {
            "tools/list" => Reply::Now(Ok(json!({ "tools": [{
                "name": "echo",
                "inputSchema": { "type": "object", "properties": { "message": { "type": "string" } } },
            }] }))),
            "tools/call" => {
                let params = match params.into_value() {
                    Ok(params) => params.unwrap_or_default(),
                    Err(e) => return Reply::Now(Err(e)),
                };
                let text = params["arguments"]["message"].as_str().unwrap_or_default().to_owned();
                let token = params.pointer("/_meta/progressToken").cloned();
                Reply::Later(Box::pin(async move {
                    if let Some(token) = token {
                        cx.progress(&token, 1.0, Some(1.0));
                    }
                    tokio::task::yield_now().await;
                    Ok(json!({ "content": [{ "type": "text", "text": text }] }))
                }))
            }
            _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
        }
    }
}

/// A client whose server is `stdio::serve` over a pipe, serving `era`.
fn client(client_era: EraChoice, era: ServeEra) -> Client<MemoryTransport> {
    client_of(client_era, era, false)
}

/// As [`client`], the requests run beside the driver when `beside`.
fn client_of(client_era: EraChoice, era: ServeEra, beside: bool) -> Client<MemoryTransport> {
    let (transport, mut end) = memory::pair();
    let mut options = ClientOptions::new("stdio-test");
    options.era = client_era;
    let client = Client::new(transport, options);
    let sender = end.sender();
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_in, server_out) = tokio::io::split(server_side);
    let (client_in, mut client_out) = tokio::io::split(client_side);
    let (session, queue) =
        Session::new(Tools(ServerInfo::new("tools", "1")), SessionOptions::new(era));
    let runner = session.clone();
    tokio::spawn(async move {
        let serving = stdio::serve(server_in, server_out, 1 << 20, queue, |input| {
            if let Input::Line(line) = input {
                session.handle_json(line);
            }
        });
        let _ = if beside { runner.run_requests_beside(serving).await } else { serving.await };
    });
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            if client_out.write_all(&bytes).await.is_err()
                || client_out.write_all(b"\n").await.is_err()
            {
                return;
            }
        }
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(client_in).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            sender.send(line.as_bytes());
        }
    });
    client
}

async fn exercise(client: Client<MemoryTransport>) {
    let run = async {
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo"]);
        let progressed = Arc::new(AtomicUsize::new(0));
        let seen = progressed.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
            })),
            ..RequestOptions::default()
        };
        let result =
            client.call_tool_with("echo", json!({"message": "hi"}), options).await.unwrap();
        assert_eq!(mcp_proto::render_tool_result(&result).text, "hi");
        assert_eq!(progressed.load(Ordering::SeqCst), 1);
        assert_eq!(client.server_info().unwrap().name, "tools");
    };
    tokio::time::timeout(Duration::from_secs(10), run).await.expect("in time");
}

#[tokio::test]
async fn a_handshake_era_client_initializes_lists_and_calls() {
    let client = client(EraChoice::Legacy, ServeEra::Legacy);
    exercise(client.clone()).await;
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
}

#[tokio::test]
async fn a_stateless_era_client_discovers_lists_and_calls() {
    let client = client(EraChoice::Auto, ServeEra::Both);
    exercise(client.clone()).await;
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
}

#[tokio::test]
async fn a_probing_client_falls_back_to_the_handshake_of_a_legacy_server() {
    let client = client(EraChoice::Auto, ServeEra::Legacy);
    exercise(client.clone()).await;
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
}

#[tokio::test]
async fn calls_run_beside_the_driver_in_both_eras_many_at_once() {
    for (client_era, era) in
        [(EraChoice::Legacy, ServeEra::Legacy), (EraChoice::Auto, ServeEra::Both)]
    {
        let client = client_of(client_era, era, true);
        exercise(client.clone()).await;
        let calls: Vec<_> = (0..32)
            .map(|n| {
                let client = client.clone();
                tokio::spawn(async move {
                    client.call_tool("echo", json!({ "message": format!("m{n}") })).await
                })
            })
            .collect();
        for (n, call) in calls.into_iter().enumerate() {
            let result =
                tokio::time::timeout(Duration::from_secs(10), call).await.expect("in time");
            assert_eq!(
                mcp_proto::render_tool_result(&result.unwrap().unwrap()).text,
                format!("m{n}")
            );
        }
    }
}
