//! The stateless era (2026-07-28) over HTTP: `serve_http` with
//! `era: Modern` or `Both`, spoken to with a bare hyper client; and what a
//! legacy-only server answers to the probe.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use mcp_testkit::{Config, HttpConfig, HttpServerHandle, ServeEra, serve_http};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::http::WAIT;

const VERSION: &str = "2026-07-28";

async fn start(era: ServeEra) -> HttpServerHandle {
    let server = Config { era, ..Config::default() };
    serve_http(HttpConfig { server, ..HttpConfig::default() }).await.unwrap()
}

/// Sends one request to `/mcp` on a fresh connection.
async fn send(
    addr: SocketAddr,
    method: Method,
    headers: &[(&str, String)],
    body: Option<&Value>,
) -> Response<Incoming> {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    crate::http::send(addr, method, "/mcp", &headers, body).await
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "http-modern", "version": "1"},
    })
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The headers a stateless-era client sends for `message`, with
/// `overrides` replacing (or, with an empty value, removing) some.
fn headers_for(message: &Value, overrides: &[(&str, &str)]) -> Vec<(&'static str, String)> {
    let mut headers: Vec<(&'static str, String)> = vec![
        ("accept", "application/json, text/event-stream".into()),
        ("content-type", "application/json".into()),
        ("mcp-protocol-version", VERSION.into()),
        ("mcp-method", message["method"].as_str().unwrap_or("").into()),
    ];
    let params = &message["params"];
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        headers.push(("mcp-name", name.into()));
    }
    for (name, value) in overrides {
        headers.retain(|(n, _)| n != name);
        if !value.is_empty() {
            let name: &'static str = Box::leak(name.to_string().into_boxed_str());
            headers.push((name, (*value).to_owned()));
        }
    }
    headers
}

async fn post(addr: SocketAddr, message: &Value, overrides: &[(&str, &str)]) -> Response<Incoming> {
    send(addr, Method::POST, &headers_for(message, overrides), Some(message)).await
}

async fn body_json(response: Response<Incoming>) -> Value {
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = tokio::time::timeout(WAIT, response.into_body().collect()).await.unwrap().unwrap();
    serde_json::from_slice(&body.to_bytes()).unwrap()
}

/// POSTs and returns the status and the JSON body.
async fn exchange(
    addr: SocketAddr,
    message: &Value,
    overrides: &[(&str, &str)],
) -> (StatusCode, Value) {
    let response = post(addr, message, overrides).await;
    assert!(response.headers().get("mcp-session-id").is_none());
    (response.status(), body_json(response).await)
}

/// An SSE body, message by message.
struct Sse {
    body: Incoming,
    buffer: String,
}

impl Sse {
    fn new(response: Response<Incoming>) -> Sse {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Sse { body: response.into_body(), buffer: String::new() }
    }

    /// The next message's JSON; `None` at the end of the stream.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
                return Some(serde_json::from_str(data).unwrap());
            }
            match tokio::time::timeout(WAIT, self.body.frame()).await.expect("an event in time") {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
                _ => return None,
            }
        }
    }
}

/// A request, header overrides, the expected status and error code.
type Case = (Value, Vec<(&'static str, &'static str)>, StatusCode, i64);

fn call(id: i64, tool: &str, arguments: Value, capabilities: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": meta(capabilities)}),
    )
}

#[tokio::test]
async fn modern_requests_are_checked_and_served_without_sessions() {
    let server = start(ServeEra::Modern).await;
    let addr = server.local_addr();

    let (status, discover) =
        exchange(addr, &request(1, "server/discover", json!({"_meta": meta(json!({}))})), &[])
            .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(discover["result"]["resultType"], "complete");
    assert_eq!(discover["result"]["supportedVersions"], json!([VERSION]));
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-testkit"
    );
    assert_eq!(discover["result"]["cacheScope"], "public");
    assert_eq!(server.session_count(), 0);

    // Each check, its status and its code.
    let list = request(2, "tools/list", json!({"_meta": meta(json!({}))}));
    let cases: Vec<Case> = vec![
        (request(3, "tools/list", json!({})), vec![], StatusCode::BAD_REQUEST, -32602),
        (list.clone(), vec![("mcp-protocol-version", "")], StatusCode::BAD_REQUEST, -32020),
        (
            list.clone(),
            vec![("mcp-protocol-version", "2025-11-25")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (list.clone(), vec![("mcp-method", "prompts/list")], StatusCode::BAD_REQUEST, -32020),
        (list.clone(), vec![("mcp-method", "")], StatusCode::BAD_REQUEST, -32020),
        (
            call(4, "echo", json!({"message": "x"}), json!({})),
            vec![("mcp-name", "add")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            call(5, "annotated", json!({"region": "eu"}), json!({})),
            vec![],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            call(6, "annotated", json!({"priority": 3}), json!({})),
            vec![("mcp-param-priority", "4")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(7, "ping", json!({"_meta": meta(json!({}))})),
            vec![],
            StatusCode::NOT_FOUND,
            -32601,
        ),
        (
            call(8, "ask", json!({"what": "sample"}), json!({})),
            vec![],
            StatusCode::BAD_REQUEST,
            -32021,
        ),
    ];
    for (message, overrides, status, code) in cases {
        let (got, body) = exchange(addr, &message, &overrides).await;
        assert_eq!(
            (got, body["error"]["code"].as_i64()),
            (status, Some(code)),
            "{message} {overrides:?}: {body}"
        );
        assert_eq!(body["id"], message["id"]);
    }
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let (status, body) = exchange(
        addr,
        &request(9, "tools/list", json!({"_meta": old})),
        &[("mcp-protocol-version", "1900-01-01")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["data"], json!({"supported": [VERSION], "requested": "1900-01-01"}));
    let init = request(
        10,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}),
    );
    let (status, body) = exchange(addr, &init, &[]).await;
    assert_eq!((status, body["error"]["code"].clone()), (StatusCode::BAD_REQUEST, json!(-32022)));

    // Headers that match, one of them base64-encoded.
    let (status, body) = exchange(
        addr,
        &call(11, "echo", json!({"message": "hi"}), json!({})),
        &[("mcp-name", "=?base64?ZWNobw==?=")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["content"][0]["text"], "hi");
    assert_eq!(body["result"]["resultType"], "complete");
    let annotated =
        call(12, "annotated", json!({"region": "eu", "priority": 3, "dry_run": true}), json!({}));
    let params =
        [("mcp-param-region", "eu"), ("mcp-param-priority", "3.0"), ("mcp-param-dry-run", "true")];
    let (status, _) = exchange(addr, &annotated, &params).await;
    assert_eq!(status, StatusCode::OK);

    // Multi round-trip over HTTP: two independent POSTs.
    let caps = json!({"roots": {}});
    let (_, first) =
        exchange(addr, &call(13, "ask", json!({"what": "roots"}), caps.clone()), &[]).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    assert_eq!(first["result"]["inputRequests"]["ask"]["method"], "roots/list");
    let mut retry = call(14, "ask", json!({"what": "roots"}), caps);
    retry["params"]["requestState"] = first["result"]["requestState"].clone();
    retry["params"]["inputResponses"] = json!({"ask": {"roots": [{"uri": "file:///w"}]}});
    let (_, done) = exchange(addr, &retry, &[]).await;
    let text: Value =
        serde_json::from_str(done["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["result"]["roots"][0]["uri"], "file:///w");
    let log = server.received_log();
    let record = log.iter().find(|r| r["id"] == 14).unwrap();
    assert_eq!(record["inputResponses"]["ask"]["roots"][0]["uri"], "file:///w");
    assert_eq!(record["requestState"], "ask:roots");
    assert_eq!(record["clientInfo"]["name"], "http-modern");

    // No GET stream, no DELETE, no batches.
    let get = [("accept", "text/event-stream".to_owned())];
    assert_eq!(send(addr, Method::GET, &get, None).await.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        send(addr, Method::DELETE, &[], None).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    let batch = json!([list.clone()]);
    let (status, body) = exchange(addr, &batch, &[("mcp-method", "tools/list")]).await;
    assert_eq!((status, body["error"]["code"].clone()), (StatusCode::BAD_REQUEST, json!(-32600)));
    server.shutdown().await;
}

#[tokio::test]
async fn request_scoped_notifications_turn_the_reply_into_a_stream() {
    let server = start(ServeEra::Modern).await;
    let addr = server.local_addr();
    let mut message = call(1, "log", json!({"level": "error", "message": "boom"}), json!({}));
    message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let response = post(addr, &message, &[]).await;
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    let mut sse = Sse::new(response);
    let log = sse.next().await.unwrap();
    assert_eq!(
        (log["method"].clone(), log["params"]["data"].clone()),
        (json!("notifications/message"), json!("boom"))
    );
    let reply = sse.next().await.unwrap();
    assert_eq!(
        (reply["id"].clone(), reply["result"]["resultType"].clone()),
        (json!(1), json!("complete"))
    );
    assert!(sse.next().await.is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn listen_streams_carry_the_asked_changes_until_closed() {
    let server = start(ServeEra::Modern).await;
    let addr = server.local_addr();
    let listen = request(
        1,
        "subscriptions/listen",
        json!({"_meta": meta(json!({})),
        "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://static/text/3"]}}),
    );
    let mut stream = Sse::new(post(addr, &listen, &[]).await);
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    let other = request(
        2,
        "subscriptions/listen",
        json!({"_meta": meta(json!({})),
        "notifications": {"promptsListChanged": true}}),
    );
    let mut prompts = Sse::new(post(addr, &other, &[]).await);
    assert_eq!(
        prompts.next().await.unwrap()["params"]["notifications"],
        json!({"promptsListChanged": true})
    );

    let (status, reply) = exchange(addr, &call(3, "change", json!({}), json!({})), &[]).await;
    assert_eq!(
        (status, reply["result"]["content"][0]["text"].clone()),
        (StatusCode::OK, json!("extra tool added"))
    );
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    exchange(addr, &call(4, "touch", json!({"uri": "test://static/text/3"}), json!({})), &[]).await;
    let updated = stream.next().await.unwrap();
    assert_eq!(
        (updated["method"].clone(), updated["params"]["uri"].clone()),
        (json!("notifications/resources/updated"), json!("test://static/text/3"))
    );
    exchange(addr, &call(5, "change", json!({"list": "prompts"}), json!({})), &[]).await;
    assert_eq!(prompts.next().await.unwrap()["method"], "notifications/prompts/list_changed");

    // Closing the stream ends the subscription: touch soon finds no one.
    drop(stream);
    let mut ended = false;
    for id in 6..60 {
        let (_, reply) = exchange(
            addr,
            &call(id, "touch", json!({"uri": "test://static/text/3"}), json!({})),
            &[],
        )
        .await;
        if reply["result"]["content"][0]["text"] == "not subscribed" {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended, "the closed listen stream still counted");

    // The server ends the other one gracefully: its result, then the end.
    let (_, reply) =
        exchange(addr, &call(100, "close_subscriptions", json!({}), json!({})), &[]).await;
    assert_eq!(reply["result"]["content"][0]["text"], "1");
    let last = prompts.next().await.unwrap();
    assert_eq!(
        (last["id"].clone(), last["result"]["resultType"].clone()),
        (json!(2), json!("complete"))
    );
    assert_eq!(last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 2);
    assert!(prompts.next().await.is_none());
    server.shutdown().await;
}

/// Clients choose their ids: two clients of one stateless server (each
/// POST on its own) may use the same id at once, for a listen stream or a
/// call, and each gets its own answers; closing one stream leaves the
/// other's subscription.
#[tokio::test]
async fn clients_may_use_the_same_ids_at_once() {
    let server = start(ServeEra::Modern).await;
    let addr = server.local_addr();
    let listen = request(
        1,
        "subscriptions/listen",
        json!({"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}),
    );
    let mut a = Sse::new(post(addr, &listen, &[]).await);
    let mut b = Sse::new(post(addr, &listen, &[]).await);
    for stream in [&mut a, &mut b] {
        let ack = stream.next().await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    }
    // A call with that id too, while both listens are open.
    let (status, reply) = exchange(addr, &call(1, "change", json!({}), json!({})), &[]).await;
    assert_eq!((status, reply["id"].clone()), (StatusCode::OK, json!(1)), "{reply}");
    for stream in [&mut a, &mut b] {
        let changed = stream.next().await.unwrap();
        assert_eq!(changed["method"], "notifications/tools/list_changed");
        assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    }
    // Two slow calls with one id: each answered on its own POST.
    let slow = |ms: u64| call(7, "slow", json!({"ms": ms}), json!({}));
    let (long, short) = (slow(300), slow(100));
    let (first, second) = tokio::join!(exchange(addr, &long, &[]), exchange(addr, &short, &[]));
    for (status, reply) in [first, second] {
        assert_eq!(status, StatusCode::OK);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    }
    // One stream closed: the other still carries changes.
    drop(a);
    tokio::time::sleep(Duration::from_millis(50)).await;
    exchange(addr, &call(2, "change", json!({}), json!({})), &[]).await;
    let changed = b.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    // Both ended by the server: only the open one was left.
    let (_, reply) =
        exchange(addr, &call(100, "close_subscriptions", json!({}), json!({})), &[]).await;
    assert_eq!(reply["result"]["content"][0]["text"], "1");
    server.shutdown().await;
}

#[tokio::test]
async fn legacy_and_dual_era_servers_answer_the_probe() {
    let probe = request(1, "server/discover", json!({"_meta": meta(json!({}))}));
    // Legacy only (the default): 400 without a JSON-RPC body, as before.
    let legacy = serve_http(HttpConfig::default()).await.unwrap();
    let response = post(legacy.local_addr(), &probe, &[]).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_ne!(response.headers()["content-type"], "application/json");
    legacy.shutdown().await;

    // Legacy and silent: no response at all.
    let mut server = Config { silent_discover: true, ..Config::default() };
    server.era = ServeEra::Legacy;
    let silent = serve_http(HttpConfig { server, ..HttpConfig::default() }).await.unwrap();
    let addr = silent.local_addr();
    let waiting = tokio::time::timeout(Duration::from_millis(300), async {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(connection);
        let mut builder =
            Request::builder().method(Method::POST).uri("/mcp").header("host", addr.to_string());
        for (name, value) in headers_for(&probe, &[]) {
            builder = builder.header(name, value);
        }
        sender.send_request(builder.body(Full::new(Bytes::from(probe.to_string()))).unwrap()).await
    })
    .await;
    assert!(waiting.is_err(), "the silent server answered");
    silent.shutdown().await;

    // Both: the probe succeeds, and an initialize still opens a session.
    let both = start(ServeEra::Both).await;
    let addr = both.local_addr();
    let (status, body) = exchange(addr, &probe, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["supportedVersions"][1], "2025-11-25");
    let init = request(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}),
    );
    let plain = [
        ("accept", "application/json, text/event-stream".to_owned()),
        ("content-type", "application/json".to_owned()),
    ];
    let response = send(addr, Method::POST, &plain, Some(&init)).await;
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(body_json(response).await["result"]["protocolVersion"], "2025-11-25");
    let mut in_session = plain.to_vec();
    in_session.push(("mcp-session-id", session.clone()));
    in_session.push(("mcp-protocol-version", "2025-11-25".to_owned()));
    let list =
        send(addr, Method::POST, &in_session, Some(&request(3, "tools/list", json!({})))).await;
    let list = body_json(list).await;
    assert!(list["result"].get("resultType").is_none());
    assert!(!list["result"]["tools"].to_string().contains("ask_twice"));
    // The legacy session keeps its GET stream; without a session, 405.
    let get = [("accept", "text/event-stream".to_owned()), ("mcp-session-id", session)];
    assert_eq!(send(addr, Method::GET, &get, None).await.status(), StatusCode::OK);
    let get = [("accept", "text/event-stream".to_owned())];
    assert_eq!(send(addr, Method::GET, &get, None).await.status(), StatusCode::METHOD_NOT_ALLOWED);
    // A sessionless legacy request is refused as before.
    let ping = send(addr, Method::POST, &plain, Some(&request(4, "ping", json!({})))).await;
    assert_eq!(ping.status(), StatusCode::BAD_REQUEST);
    both.shutdown().await;
}
