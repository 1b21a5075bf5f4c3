//! The HTTP driver, run in-process with `serve_http` (and once as the
//! binary), spoken to with a bare hyper HTTP/1.1 client, as a client would.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use mcp_testkit::{HttpConfig, HttpServerHandle, Redirect, ReplyMode, serve_http};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;

/// The longest a test waits for a response or an event.
pub(crate) const WAIT: Duration = Duration::from_secs(5);
const BOTH: &str = "application/json, text/event-stream";

async fn start(config: HttpConfig) -> HttpServerHandle {
    serve_http(config).await.expect("the server starts")
}

/// Sends one request on a fresh connection (with a `host` header unless
/// one is given), within [`WAIT`].
pub(crate) async fn send(
    addr: SocketAddr,
    method: Method,
    target: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Response<Incoming> {
    let exchange = async {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(connection);
        let mut builder = Request::builder().method(method).uri(target);
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            builder = builder.header("host", addr.to_string());
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let body = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        sender.send_request(builder.body(Full::new(body)).unwrap()).await.unwrap()
    };
    tokio::time::timeout(WAIT, exchange).await.expect("a response in time")
}

/// POSTs a message with the headers a Streamable HTTP client sends.
async fn post(addr: SocketAddr, session: Option<&str>, message: &Value) -> Response<Incoming> {
    let mut headers = vec![("accept", BOTH), ("content-type", "application/json")];
    if let Some(id) = session {
        headers.push(("mcp-session-id", id));
        headers.push(("mcp-protocol-version", "2025-11-25"));
    }
    send(addr, Method::POST, "/mcp", &headers, Some(message)).await
}

async fn text_of(response: Response<Incoming>) -> String {
    let body =
        tokio::time::timeout(WAIT, response.into_body().collect()).await.expect("body in time");
    String::from_utf8(body.unwrap().to_bytes().to_vec()).unwrap()
}

async fn json_of(response: Response<Incoming>) -> Value {
    assert_eq!(response.headers()["content-type"], "application/json");
    serde_json::from_str(&text_of(response).await).unwrap()
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize(id: i64) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "http-tests", "version": "1.0"},
        }),
    )
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
}

fn header<'a>(response: &'a Response<Incoming>, name: &str) -> Option<&'a str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

/// Initializes a session (JSON or SSE reply) and sends `initialized`;
/// returns the session id.
async fn open_session(addr: SocketAddr) -> String {
    let response = post(addr, None, &initialize(0)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = header(&response, "mcp-session-id").expect("a session id").to_owned();
    assert!(!id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
    let _ = text_of(response).await;
    let done =
        post(addr, Some(&id), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    assert_eq!(done.status(), StatusCode::ACCEPTED);
    id
}

/// One server-sent event.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    event: Option<String>,
    retry: Option<u64>,
    data: String,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {:?}", self.data))
    }
}

/// An SSE body read event by event.
struct Sse {
    body: Incoming,
    buffer: String,
    /// The stream ended without a clean end of the body.
    cut: bool,
}

impl Sse {
    fn new(response: Response<Incoming>) -> Sse {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, "content-type"), Some("text/event-stream"));
        Sse { body: response.into_body(), buffer: String::new(), cut: false }
    }

    /// The next event; `None` when the stream ends (cleanly or not).
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event::default();
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => event.id = Some(value.to_owned()),
                        "event" => event.event = Some(value.to_owned()),
                        "retry" => event.retry = value.parse().ok(),
                        "data" => event.data.push_str(value),
                        _ => {}
                    }
                }
                return Some(event);
            }
            match tokio::time::timeout(WAIT, self.body.frame()).await.expect("an event in time") {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
                Some(Err(_)) => {
                    self.cut = true;
                    return None;
                }
                None => return None,
            }
        }
    }

    /// Every remaining event.
    async fn rest(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

async fn resume(addr: SocketAddr, session: &str, last_event_id: &str) -> Response<Incoming> {
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-11-25"),
        ("last-event-id", last_event_id),
    ];
    send(addr, Method::GET, "/mcp", &headers, None).await
}

#[tokio::test]
async fn json_mode_session_lifecycle_and_errors() {
    let server = start(HttpConfig::default()).await;
    let addr = server.local_addr();
    assert_eq!(server.url(), format!("http://{addr}/mcp"));
    let session = open_session(addr).await;
    assert_eq!(server.session_count(), 1);

    let list =
        json_of(post(addr, Some(&session), &request(1, "tools/list", json!({}))).await).await;
    assert!(list["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"));
    let echo = post(addr, Some(&session), &call(2, "echo", json!({"message": "hi"}))).await;
    assert_eq!(echo.status(), StatusCode::OK);
    let echo = json_of(echo).await;
    assert_eq!(echo["id"], 2);
    assert_eq!(echo["result"]["content"][0]["text"], "hi");
    let headers = server.last_request_headers().unwrap();
    assert_eq!(headers["mcp-session-id"], session.as_str());
    assert_eq!(headers["mcp-protocol-version"], "2025-11-25");

    let ping = request(3, "ping", json!({}));
    assert_eq!(post(addr, None, &ping).await.status(), StatusCode::BAD_REQUEST);
    assert_eq!(post(addr, Some("nope"), &ping).await.status(), StatusCode::NOT_FOUND);
    let bad_version = [
        ("accept", BOTH),
        ("content-type", "application/json"),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "1999-01-01"),
    ];
    let response = send(addr, Method::POST, "/mcp", &bad_version, Some(&ping)).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let json_only = [("accept", "application/json"), ("content-type", "application/json")];
    let response = send(addr, Method::POST, "/mcp", &json_only, Some(&ping)).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let form = [("accept", BOTH), ("content-type", "text/plain")];
    let response = send(addr, Method::POST, "/mcp", &form, Some(&ping)).await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let garbage = [
        ("accept", BOTH),
        ("content-type", "application/json"),
        ("mcp-session-id", session.as_str()),
    ];
    let response = send(addr, Method::POST, "/mcp", &garbage, Some(&json!("not a message"))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(response).await["error"]["code"], -32600);

    let delete = [("mcp-session-id", session.as_str())];
    assert_eq!(send(addr, Method::DELETE, "/mcp", &delete, None).await.status(), StatusCode::OK);
    assert_eq!(server.deletes(), 1);
    assert_eq!(server.session_count(), 0);
    assert_eq!(post(addr, Some(&session), &ping).await.status(), StatusCode::NOT_FOUND);
    let methods = server.rpc_methods();
    assert_eq!(
        &methods[..4],
        ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    );
    assert_eq!(server.request_count(&Method::POST), 11);
    server.shutdown().await;
}

#[tokio::test]
async fn sse_mode_sends_priming_progress_then_the_reply() {
    let config = HttpConfig {
        reply: ReplyMode::Sse,
        priming: true,
        retry_ms: Some(250),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let mut slow = call(1, "slow", json!({"ms": 60, "steps": 3}));
    slow["params"]["_meta"] = json!({"progressToken": "tok"});
    let mut sse = Sse::new(post(addr, Some(&session), &slow).await);
    let events = sse.rest().await;
    assert!(!sse.cut);
    assert_eq!(events.len(), 5, "{events:?}");
    assert_eq!(events[0].retry, Some(250));
    assert_eq!(events[0].data, "");
    for event in &events[1..4] {
        let progress = event.json();
        assert_eq!(progress["method"], "notifications/progress");
        assert_eq!(progress["params"]["progressToken"], "tok");
    }
    assert_eq!(events[4].json()["result"]["content"][0]["text"], "done");
    // Every event has an id `<stream>-<n>`, numbered in order.
    let stream = events[0].id.as_deref().unwrap().rsplit_once('-').unwrap().0.to_owned();
    for (n, event) in events.iter().enumerate() {
        assert_eq!(event.id.as_deref(), Some(format!("{stream}-{n}").as_str()));
    }
    let echo = post(addr, Some(&session), &call(2, "echo", json!({"message": "sse"}))).await;
    let reply = Sse::new(echo).rest().await;
    assert_eq!(reply.last().unwrap().json()["result"]["content"][0]["text"], "sse");
    server.shutdown().await;
}

#[tokio::test]
async fn close_after_priming_is_resumed_with_last_event_id() {
    let config = HttpConfig {
        reply: ReplyMode::Sse,
        close_after_priming: true,
        retry_ms: Some(10),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let mut sse = Sse::new(post(addr, Some(&session), &call(1, "slow", json!({"ms": 100}))).await);
    let events = sse.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].data, "");
    assert_eq!(events[0].retry, Some(10));
    let last = events[0].id.clone().unwrap();
    // The reply was not sent yet: the resumed stream waits for it.
    let mut resumed = Sse::new(resume(addr, &session, &last).await);
    let rest = resumed.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0].json()["id"], 1);
    assert_eq!(rest[0].json()["result"]["content"][0]["text"], "done");
    assert_eq!(server.last_request_headers().unwrap()["last-event-id"], last.as_str());
    // A replay of the same stream after it finished gives the reply again.
    let mut again = Sse::new(resume(addr, &session, &last).await);
    assert_eq!(again.rest().await.len(), 1);
    let unknown = resume(addr, &session, "zz-3").await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    server.shutdown().await;
}

#[tokio::test]
async fn id_only_events_end_every_stream_after_a_fresh_id_and_retry_0() {
    let server = start(HttpConfig { id_only_events: true, ..HttpConfig::default() }).await;
    let addr = server.local_addr();
    // The handshake is served as usual (a JSON reply).
    let session = open_session(addr).await;
    let only_id = |events: &[Event]| {
        assert_eq!(events.len(), 1, "{events:?}");
        let e = &events[0];
        assert!(e.data.is_empty() && e.event.is_none(), "{e:?}");
        assert_eq!(e.retry, Some(0));
        e.id.clone().expect("an id")
    };
    // A request: one event, then the clean end; no reply.
    let mut sse =
        Sse::new(post(addr, Some(&session), &call(1, "echo", json!({"message": "x"}))).await);
    let first = only_id(&sse.rest().await);
    assert!(!sse.cut);
    // Its resumption, and the next: the same, each with a new id.
    let mut ids = vec![first];
    for _ in 0..2 {
        let last = ids.last().unwrap().clone();
        let mut resumed = Sse::new(resume(addr, &session, &last).await);
        ids.push(only_id(&resumed.rest().await));
    }
    // The standalone stream too.
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut standalone = Sse::new(send(addr, Method::GET, "/mcp", &headers, None).await);
    ids.push(only_id(&standalone.rest().await));
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    // The request never reached the core.
    assert_eq!(server.rpc_methods(), ["initialize", "notifications/initialized", "tools/call"]);
    server.shutdown().await;
}

#[tokio::test]
async fn close_after_events_cuts_each_connection() {
    let config =
        HttpConfig { reply: ReplyMode::Sse, close_after_events: Some(2), ..HttpConfig::default() };
    let server = start(config).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let mut slow = call(1, "slow", json!({"ms": 30, "steps": 3}));
    slow["params"]["_meta"] = json!({"progressToken": 7});
    let mut sse = Sse::new(post(addr, Some(&session), &slow).await);
    let first = sse.rest().await;
    assert!(sse.cut, "the body must end without its last chunk");
    assert_eq!(first.len(), 2);
    let mut all = first;
    while all.last().unwrap().json().get("result").is_none() {
        let last = all.last().unwrap().id.clone().unwrap();
        let mut resumed = Sse::new(resume(addr, &session, &last).await);
        let more = resumed.rest().await;
        assert!(!more.is_empty() && more.len() <= 2);
        all.extend(more);
    }
    assert_eq!(all.len(), 4);
    assert_eq!(all[3].json()["result"]["content"][0]["text"], "done");
    server.shutdown().await;
}

#[tokio::test]
async fn standalone_get_stream_carries_unrelated_and_json_mode_messages() {
    let server = start(HttpConfig::default()).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    // In JSON mode, `change`'s list_changed goes on the GET stream, which
    // keeps it until a GET arrives.
    let changed = json_of(post(addr, Some(&session), &call(1, "change", json!({}))).await).await;
    assert_eq!(changed["id"], 1);
    let headers = [("accept", "text/event-stream"), ("mcp-session-id", session.as_str())];
    let mut sse = Sse::new(send(addr, Method::GET, "/mcp", &headers, None).await);
    let event = sse.next().await.unwrap();
    assert_eq!(event.json()["method"], "notifications/tools/list_changed");
    assert!(event.id.is_some());
    let no_accept = [("accept", "application/json"), ("mcp-session-id", session.as_str())];
    let response = send(addr, Method::GET, "/mcp", &no_accept, None).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    // Shutdown ends the open stream.
    server.shutdown().await;
    assert!(sse.next().await.is_none());
}

#[tokio::test]
async fn resource_updates_and_task_status_go_on_the_get_stream() {
    let server = start(HttpConfig { reply: ReplyMode::Sse, ..HttpConfig::default() }).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let headers = [("accept", "text/event-stream"), ("mcp-session-id", session.as_str())];
    let mut get = Sse::new(send(addr, Method::GET, "/mcp", &headers, None).await);
    let uri = "test://static/text/3";

    let subscribe = request(1, "resources/subscribe", json!({"uri": uri}));
    let reply = Sse::new(post(addr, Some(&session), &subscribe).await).rest().await;
    assert_eq!(reply.last().unwrap().json()["result"], json!({}));
    // The touch reply's stream carries only the reply; the update is on GET.
    let touch = Sse::new(post(addr, Some(&session), &call(2, "touch", json!({"uri": uri}))).await)
        .rest()
        .await;
    assert_eq!(touch.len(), 1, "{touch:?}");
    assert_eq!(touch[0].json()["result"]["content"][0]["text"], "touched");
    let update = get.next().await.unwrap().json();
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], uri);

    // A task: created on the POST stream, its status change on GET, its
    // result from tasks/result.
    let mut task_call = call(3, "slow", json!({"ms": 30}));
    task_call["params"]["task"] = json!({"ttl": 5000});
    let created = Sse::new(post(addr, Some(&session), &task_call).await).rest().await;
    assert_eq!(created.len(), 1, "{created:?}");
    let task_id = created[0].json()["result"]["task"]["taskId"].clone();
    assert!(task_id.is_string(), "{:?}", created[0]);
    let status = get.next().await.unwrap().json();
    assert_eq!(status["method"], "notifications/tasks/status");
    assert_eq!(status["params"]["taskId"], task_id);
    assert_eq!(status["params"]["status"], "completed");
    let result = request(4, "tasks/result", json!({"taskId": task_id}));
    let reply = Sse::new(post(addr, Some(&session), &result).await).rest().await;
    let result = reply.last().unwrap().json()["result"].clone();
    assert_eq!(result["content"][0]["text"], "done");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id);
    server.shutdown().await;
}

#[tokio::test]
async fn get_delete_and_session_switches() {
    let config = HttpConfig { get_stream: false, delete: false, ..HttpConfig::default() };
    let server = start(config).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let get = [("accept", "text/event-stream"), ("mcp-session-id", session.as_str())];
    let response = send(addr, Method::GET, "/mcp", &get, None).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let delete = [("mcp-session-id", session.as_str())];
    let response = send(addr, Method::DELETE, "/mcp", &delete, None).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&response, "allow"), Some("GET, POST"));
    server.shutdown().await;

    let server = start(HttpConfig { sessions: false, ..HttpConfig::default() }).await;
    let addr = server.local_addr();
    let response = post(addr, None, &initialize(0)).await;
    assert!(header(&response, "mcp-session-id").is_none());
    assert_eq!(json_of(response).await["result"]["protocolVersion"], "2025-11-25");
    let pong = json_of(post(addr, None, &request(1, "ping", json!({}))).await).await;
    assert_eq!(pong["result"], json!({}));
    server.shutdown().await;
}

#[tokio::test]
async fn expired_sessions_answer_404() {
    let server = start(HttpConfig { expire_session_after: Some(3), ..HttpConfig::default() }).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let ping = request(1, "ping", json!({}));
    assert_eq!(post(addr, Some(&session), &ping).await.status(), StatusCode::OK);
    assert_eq!(post(addr, Some(&session), &ping).await.status(), StatusCode::NOT_FOUND);
    // A fresh initialize works.
    let again = open_session(addr).await;
    assert_ne!(again, session);
    server.shutdown().await;
}

#[tokio::test]
async fn auth_challenges() {
    let config = HttpConfig { require_auth: Some("s3cret".into()), ..HttpConfig::default() };
    let server = start(config).await;
    let addr = server.local_addr();
    let response = post(addr, None, &initialize(0)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!(
            "Bearer resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource\", scope=\"mcp\""
        )
    );
    let authorized = [
        ("accept", BOTH),
        ("content-type", "application/json"),
        ("authorization", "Bearer s3cret"),
    ];
    let response = send(addr, Method::POST, "/mcp", &authorized, Some(&initialize(0))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(server.last_request_headers().unwrap()["authorization"], "Bearer s3cret");
    let metadata =
        send(addr, Method::GET, "/.well-known/oauth-protected-resource", &[], None).await;
    assert_eq!(json_of(metadata).await["resource"], format!("http://{addr}/mcp"));
    server.shutdown().await;

    let config = HttpConfig {
        require_auth: Some("t".into()),
        challenge: Some("Bearer realm=\"x\"".into()),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let response = post(server.local_addr(), None, &initialize(0)).await;
    assert_eq!(header(&response, "www-authenticate"), Some("Bearer realm=\"x\""));
    server.shutdown().await;

    let config =
        HttpConfig { require_auth: Some("t".into()), forbid_scope: true, ..HttpConfig::default() };
    let server = start(config).await;
    let headers =
        [("accept", BOTH), ("content-type", "application/json"), ("authorization", "Bearer t")];
    let response =
        send(server.local_addr(), Method::POST, "/mcp", &headers, Some(&initialize(0))).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        header(&response, "www-authenticate"),
        Some("Bearer error=\"insufficient_scope\", scope=\"mcp admin\"")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn dns_rebinding_is_refused_by_origin_and_host() {
    let config = HttpConfig { allowed_hosts: vec!["mcp.test".into()], ..HttpConfig::default() };
    let server = start(config).await;
    let addr = server.local_addr();
    let port = addr.port().to_string();
    let cases = [
        (format!("127.0.0.1:{port}"), None, StatusCode::OK),
        (format!("localhost:{port}"), Some("http://localhost:3000"), StatusCode::OK),
        (format!("mcp.test:{port}"), None, StatusCode::OK),
        (format!("evil.example:{port}"), None, StatusCode::FORBIDDEN),
        (format!("127.0.0.1:{port}"), Some("http://evil.example"), StatusCode::FORBIDDEN),
    ];
    for (host, origin, status) in cases {
        let mut headers =
            vec![("accept", BOTH), ("content-type", "application/json"), ("host", host.as_str())];
        if let Some(origin) = origin {
            headers.push(("origin", origin));
        }
        let response = send(addr, Method::POST, "/mcp", &headers, Some(&initialize(1))).await;
        assert_eq!(response.status(), status, "{host} {origin:?}");
    }
    // Refused before anything was parsed: only the allowed ones made sessions.
    assert_eq!(server.session_count(), 3);
}

#[tokio::test]
async fn oversized_request_headers_get_431() {
    let server = start(HttpConfig::default()).await;
    let addr = server.local_addr();
    let big = "x".repeat(70 * 1024);
    let headers = [("accept", BOTH), ("content-type", "application/json"), ("x-big", big.as_str())];
    let response = send(addr, Method::POST, "/mcp", &headers, Some(&initialize(1))).await;
    assert_eq!(response.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(server.session_count(), 0);
}

#[tokio::test]
async fn status_redirect_and_oversized_faults() {
    let server = start(HttpConfig { status: Some(503), ..HttpConfig::default() }).await;
    let response = post(server.local_addr(), None, &initialize(0)).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(text_of(response).await.contains("503"));
    server.shutdown().await;

    let config = HttpConfig {
        redirect: Redirect::SameOrigin,
        oversized_body: Some(100_000),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let addr = server.local_addr();
    let response = post(addr, None, &initialize(0)).await;
    assert_eq!(response.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(header(&response, "location"), Some("/mcp/"));
    let headers = [("accept", BOTH), ("content-type", "application/json")];
    let response = send(addr, Method::POST, "/mcp/", &headers, Some(&initialize(0))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = text_of(response).await;
    assert_eq!(body.len(), 100_000);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    server.shutdown().await;

    let config = HttpConfig {
        redirect: Redirect::CrossOrigin("http://127.0.0.2:9/mcp".into()),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let response = post(server.local_addr(), None, &initialize(0)).await;
    assert_eq!(header(&response, "location"), Some("http://127.0.0.2:9/mcp"));
    server.shutdown().await;
}

#[tokio::test]
async fn legacy_mode_sends_the_endpoint_then_messages() {
    let server = start(HttpConfig { legacy: true, ..HttpConfig::default() }).await;
    let addr = server.local_addr();
    let response = post(addr, None, &initialize(0)).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let get = [("accept", "text/event-stream")];
    let mut sse = Sse::new(send(addr, Method::GET, "/sse", &get, None).await);
    let endpoint = sse.next().await.unwrap();
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    assert!(endpoint.data.starts_with("/message?sessionId="), "{}", endpoint.data);
    let json = [("content-type", "application/json")];
    let posted = send(addr, Method::POST, &endpoint.data, &json, Some(&initialize(0))).await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
    let reply = sse.next().await.unwrap();
    assert_eq!(reply.event.as_deref(), Some("message"));
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-11-25");
    let posted = send(
        addr,
        Method::POST,
        &endpoint.data,
        &json,
        Some(&call(1, "echo", json!({"message": "old"}))),
    )
    .await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
    assert_eq!(sse.next().await.unwrap().json()["result"]["content"][0]["text"], "old");
    let unknown =
        send(addr, Method::POST, "/message?sessionId=nope", &json, Some(&initialize(0))).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    server.shutdown().await;

    let config = HttpConfig {
        legacy: true,
        legacy_endpoint: Some("http://evil.example/message".into()),
        ..HttpConfig::default()
    };
    let server = start(config).await;
    let mut sse = Sse::new(send(server.local_addr(), Method::GET, "/mcp", &get, None).await);
    assert_eq!(sse.next().await.unwrap().data, "http://evil.example/message");
    server.shutdown().await;
}

#[tokio::test]
async fn the_binary_prints_its_url_and_serves() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-testkit"))
        .args(["http", "--port", "0", "--reply", "sse"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
    let url = line.strip_prefix("listening on ").expect("the first line names the URL");
    let authority = url.strip_prefix("http://").unwrap().strip_suffix("/mcp").unwrap();
    let addr: SocketAddr = authority.parse().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    let events = Sse::new(post(addr, None, &initialize(0)).await).rest().await;
    assert_eq!(events.last().unwrap().json()["result"]["serverInfo"]["name"], "mcp-testkit");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn https_with_an_unusable_certificate_or_key_does_not_start() {
    use mcp_testkit::TlsConfig;
    // Not DER at all: the key is refused before anything is bound.
    let tls = TlsConfig::new(vec![b"not a certificate".to_vec()], b"not a key".to_vec());
    let config = HttpConfig { tls: Some(tls), ..HttpConfig::default() };
    let err = serve_http(config).await.expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    // The key's Debug never shows it.
    let tls = TlsConfig::new(vec![vec![1, 2, 3]], b"secret key bytes".to_vec()).with_http2();
    let shown = format!("{tls:?}");
    assert!(!shown.contains("secret") && !shown.contains("115"), "{shown}");
    assert!(shown.contains("http2: true"), "{shown}");
}

#[tokio::test]
async fn plain_http_requests_are_recorded_as_http1() {
    let server = start(HttpConfig::default()).await;
    assert!(server.url().starts_with("http://127.0.0.1:"));
    let response = post(server.local_addr(), None, &initialize(1)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].version, http::Version::HTTP_11);
}

/// `oversized_body` pads a reply whose result is JSON text (`echo`'s) as
/// it pads any other.
#[tokio::test]
async fn a_reply_written_as_text_is_padded_too() {
    let config = HttpConfig { oversized_body: Some(100_000), ..HttpConfig::default() };
    let server = start(config).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let response = post(addr, Some(&session), &call(1, "echo", json!({"message": "x"}))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = text_of(response).await;
    assert_eq!(body.len(), 100_000);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["content"][0]["text"], "x");
    server.shutdown().await;
}
