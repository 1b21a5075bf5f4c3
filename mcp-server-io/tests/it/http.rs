//! The HTTP service over real TCP: a handler served with `http::serve`,
//! spoken to by the toolkit's own HTTP client (`mcp-http`, on `mcp-peer`)
//! and by hand-written HTTP/1.1 requests where the exact status, headers
//! and body matter.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::request::Parts;
use mcp_http::StaticAuth;
use mcp_peer::{EraChoice, RequestOptions, ServerNotification};
use mcp_server_io::http::{
    BearerToken, HttpHooks, HttpOptions, HttpServer, HttpService, ReplyMode, serve,
    serve_with_hooks,
};
use mcp_server_io::{Context, Handler, Params, Reply, ServeEra, ServerInfo};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::stdio::Tools;

/// Every exchange is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

fn tools() -> Tools {
    Tools(ServerInfo::new("tools", "1"))
}

async fn listener() -> TcpListener {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap()
}

async fn start(options: HttpOptions) -> HttpServer<Tools> {
    serve(listener().await, options, tools).await.expect("the server starts")
}

fn client(url: &str, era: EraChoice) -> mcp_http::HttpClient {
    let mut options = mcp_http::HttpOptions::new("http-test");
    options.request_timeout = TIMEOUT;
    options.client.era = era;
    mcp_http::connect(url, options).unwrap()
}

async fn echo(client: &mcp_http::HttpClient, message: &str) -> String {
    let call = client.call_tool_with("echo", json!({ "message": message }), Default::default());
    let result = tokio::time::timeout(TIMEOUT, call).await.expect("in time").unwrap();
    mcp_proto::render_tool_result(&result).text
}

/// A response read whole: status, head (lower case), body.
struct Raw {
    status: u16,
    head: String,
    body: String,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| line.strip_prefix(&format!("{name}: ")))
    }
}

/// One HTTP/1.1 request to `/mcp` on its own connection (closed after the
/// response, so the body is what comes before the end).
async fn raw(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Raw {
    let request = request_text(addr, method, headers, body);
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).await.unwrap();
        bytes
    };
    let bytes = tokio::time::timeout(TIMEOUT, exchange).await.expect("in time");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    Raw { status: head[9..12].parse().unwrap(), head: head.to_ascii_lowercase(), body: body.into() }
}

/// The text of one HTTP/1.1 request to `/mcp`, the connection closed
/// after its response.
pub(crate) fn request_text(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> String {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nconnection: close\r\ncontent-length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    request
}

pub(crate) const POST: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// Initializes a session by hand; returns its id.
async fn open_session(addr: SocketAddr) -> String {
    let reply = raw(addr, "POST", &POST, Some(&initialize())).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

fn call(id: i64, message: &str, progress: bool) -> Value {
    let mut params = json!({ "name": "echo", "arguments": { "message": message } });
    if progress {
        params["_meta"] = json!({ "progressToken": "p" });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

#[tokio::test]
async fn both_eras_are_served_to_the_toolkit_client() {
    let server = start(HttpOptions::new(ServeEra::Both)).await;
    assert!(server.url().starts_with("http://127.0.0.1:") && server.url().ends_with("/mcp"));

    let handshake = client(server.url(), EraChoice::Legacy);
    assert_eq!(echo(&handshake, "old").await, "old");
    assert_eq!(handshake.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    assert!(handshake.transport().has_session());
    assert_eq!(server.session_count(), 1);

    let stateless = client(server.url(), EraChoice::Auto);
    let progressed = Arc::new(AtomicUsize::new(0));
    let seen = progressed.clone();
    let options = RequestOptions {
        on_progress: Some(Arc::new(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })),
        ..RequestOptions::default()
    };
    let result = stateless.call_tool_with("echo", json!({ "message": "new" }), options);
    let result = tokio::time::timeout(TIMEOUT, result).await.expect("in time").unwrap();
    assert_eq!(mcp_proto::render_tool_result(&result).text, "new");
    assert_eq!(progressed.load(Ordering::SeqCst), 1, "the progress came on the POST's stream");
    assert_eq!(stateless.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
    assert!(!stateless.transport().has_session());
    assert!(server.stateless_session().is_some());
    assert_eq!(server.session_count(), 1, "the stateless era makes no session");
    server.shutdown().await;
}

#[tokio::test]
async fn replies_are_json_or_sse_as_the_options_say() {
    for (mode, progress, sse) in [
        (ReplyMode::Json, true, false),
        (ReplyMode::Sse, false, true),
        (ReplyMode::Auto, false, false),
        (ReplyMode::Auto, true, true),
    ] {
        let mut options = HttpOptions::new(ServeEra::Legacy);
        options.reply = mode;
        options.priming = true;
        let server = start(options).await;
        let addr = server.local_addr();
        let session = open_session(addr).await;
        let headers = [POST[0], POST[1], ("mcp-session-id", session.as_str())];
        let reply = raw(addr, "POST", &headers, Some(&call(2, "hi", progress))).await;
        assert_eq!(reply.status, 200, "{mode:?}");
        let kind = if sse { "text/event-stream" } else { "application/json" };
        assert_eq!(reply.header("content-type"), Some(kind), "{mode:?} {progress}");
        assert!(reply.body.contains(r#""text":"hi""#), "{mode:?}: {}", reply.body);
        if sse {
            // Resumable events: the priming one first, then the messages.
            assert!(reply.body.contains("data:\n\n"), "{}", reply.body);
            assert!(reply.body.contains("-1\nevent: message\n"), "{}", reply.body);
            assert_eq!(reply.body.contains("notifications/progress"), progress);
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn unknown_sessions_get_404_and_delete_ends_one() {
    let server = start(HttpOptions::new(ServeEra::Legacy)).await;
    let addr = server.local_addr();
    let unknown = [POST[0], POST[1], ("mcp-session-id", "0123")];
    assert_eq!(raw(addr, "POST", &unknown, Some(&call(2, "x", false))).await.status, 404);
    let session = open_session(addr).await;
    let named = [POST[0], POST[1], ("mcp-session-id", session.as_str())];
    assert_eq!(raw(addr, "POST", &named, Some(&call(2, "x", false))).await.status, 200);
    assert_eq!(raw(addr, "POST", &POST, Some(&call(3, "x", false))).await.status, 400);
    let delete = raw(addr, "DELETE", &[("mcp-session-id", session.as_str())], None).await;
    assert_eq!(delete.status, 200);
    assert_eq!(server.session_count(), 0);
    assert_eq!(raw(addr, "POST", &named, Some(&call(4, "x", false))).await.status, 404);

    // The stateless era has no GET stream and no DELETE.
    let modern = start(HttpOptions::new(ServeEra::Modern)).await;
    let reply = raw(modern.local_addr(), "DELETE", &[], None).await;
    assert_eq!((reply.status, reply.header("allow")), (405, Some("post")));
    server.shutdown().await;
    modern.shutdown().await;
}

/// Records the GETs' `Last-Event-ID`; cuts each reply stream after one
/// event.
#[derive(Default)]
struct CutStreams {
    resumed_from: Mutex<Vec<String>>,
}

impl HttpHooks<Tools> for Arc<CutStreams> {
    fn request(&self, request: &Parts) {
        if let Some(id) = request.headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
            self.resumed_from.lock().unwrap().push(id.to_owned());
        }
    }

    fn reply_stream_budget(&self) -> Option<usize> {
        Some(1)
    }
}

#[tokio::test]
async fn a_cut_stream_is_resumed_with_last_event_id() {
    let mut options = HttpOptions::new(ServeEra::Legacy);
    options.reply = ReplyMode::Sse;
    options.priming = true;
    options.retry_ms = Some(10);
    let hooks = Arc::new(CutStreams::default());
    let server = serve_with_hooks(listener().await, options, tools, hooks.clone()).await.unwrap();
    let client = client(server.url(), EraChoice::Legacy);
    assert_eq!(echo(&client, "again").await, "again");
    let before = hooks.resumed_from.lock().unwrap().len();
    assert!(before > 0, "the client resumed");
    // `tools/list` is answered at once (its stream whole before the
    // response goes out): the budget still cuts it after the priming
    // event, and the reply is read on the resumed stream.
    let listed = tokio::time::timeout(TIMEOUT, client.list_tools_fresh()).await.expect("in time");
    assert_eq!(listed.unwrap().len(), 1);
    let resumed = hooks.resumed_from.lock().unwrap().clone();
    assert!(resumed.len() > before, "the client resumed again: {resumed:?}");
    assert!(resumed.iter().all(|id| id.starts_with('s') && id.ends_with("-0")), "{resumed:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_foreign_origin_is_refused_unless_allowed() {
    let server = start(HttpOptions::new(ServeEra::Legacy)).await;
    let headers = [POST[0], POST[1], ("origin", "http://app.example")];
    let reply = raw(server.local_addr(), "POST", &headers, Some(&initialize())).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.body, "Origin not allowed\n");
    let local = [POST[0], POST[1], ("origin", "http://localhost:3000")];
    assert_eq!(raw(server.local_addr(), "POST", &local, Some(&initialize())).await.status, 200);

    let mut options = HttpOptions::new(ServeEra::Legacy);
    options.allowed_origins = vec!["http://app.example".into()];
    let allowing = start(options).await;
    assert_eq!(raw(allowing.local_addr(), "POST", &headers, Some(&initialize())).await.status, 200);
    server.shutdown().await;
    allowing.shutdown().await;
}

#[tokio::test]
async fn the_bearer_hook_answers_401_without_the_token() {
    let mut options = HttpOptions::new(ServeEra::Both);
    let check = BearerToken::new("s3cr3t").with_challenge("Bearer realm=\"test\"");
    options.authorize = Some(Arc::new(check));
    let server = start(options).await;
    let reply = raw(server.local_addr(), "POST", &POST, Some(&initialize())).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.header("www-authenticate"), Some("bearer realm=\"test\""));
    let wrong = [POST[0], POST[1], ("authorization", "Bearer s3cr3")];
    assert_eq!(raw(server.local_addr(), "POST", &wrong, Some(&initialize())).await.status, 401);

    let mut with_token = mcp_http::HttpOptions::new("http-test");
    with_token.request_timeout = TIMEOUT;
    with_token.client.era = EraChoice::Legacy;
    with_token.auth = StaticAuth::Bearer("s3cr3t".into());
    let client = mcp_http::connect(server.url(), with_token).unwrap();
    assert_eq!(echo(&client, "in").await, "in");
    server.shutdown().await;
}

#[tokio::test]
async fn sessions_are_capped() {
    let mut options = HttpOptions::new(ServeEra::Legacy);
    options.session_cap = 1;
    let server = start(options).await;
    let first = open_session(server.local_addr()).await;
    let refused = raw(server.local_addr(), "POST", &POST, Some(&initialize())).await;
    assert_eq!(refused.status, 503);
    let named = [("mcp-session-id", first.as_str())];
    assert_eq!(raw(server.local_addr(), "DELETE", &named, None).await.status, 200);
    open_session(server.local_addr()).await;
    server.shutdown().await;
}

/// Counts the sessions that ended.
#[derive(Default)]
struct Closed(AtomicUsize);

impl HttpHooks<Tools> for Arc<Closed> {
    fn session_closed(&self, _: &mcp_server_io::Session<Tools>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A POST handed to the service itself (no connection, so a paused clock
/// moves only with the test): its status and `Mcp-Session-Id`.
async fn post_to(
    service: &HttpService<Tools>,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>) {
    let mut request = http::Request::post("http://127.0.0.1/mcp");
    for (name, value) in POST {
        request = request.header(name, value);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let body = http_body_util::Full::new(bytes::Bytes::from(body.to_string()));
    let reply = service.handle(request.body(body).unwrap()).await.unwrap();
    let id = reply.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    (reply.status().as_u16(), id)
}

#[tokio::test(start_paused = true)]
async fn idle_sessions_end_on_the_services_timer() {
    let mut options = HttpOptions::new(ServeEra::Legacy);
    options.session_idle_timeout = Duration::from_secs(60);
    let closed = Arc::new(Closed::default());
    let service = HttpService::with_hooks(options, tools, closed.clone());
    let (_, a) = post_to(&service, None, &initialize()).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let (_, b) = post_to(&service, None, &initialize()).await;
    let (a, b) = (a.expect("a session"), b.expect("a session"));
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(post_to(&service, Some(&b), &call(2, "x", false)).await.0, 200);
    // A minute after its last use, `a` is ended by the timer, no new
    // session being made: closed as DELETE would close it.
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(closed.0.load(Ordering::SeqCst), 1);
    assert_eq!(service.session_count(), 1);
    assert_eq!(post_to(&service, Some(&a), &call(3, "x", false)).await.0, 404);
    // `b`, used at 50 s, lasts until 110 s.
    tokio::time::sleep(Duration::from_secs(48)).await;
    assert_eq!(closed.0.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(closed.0.load(Ordering::SeqCst), 2);
    assert_eq!(service.session_count(), 0);
    // The timer stops with the service: no task is left.
    drop(service);
    let metrics = tokio::runtime::Handle::current().metrics();
    for _ in 0..100 {
        if metrics.num_alive_tasks() == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(metrics.num_alive_tasks(), 0);
}

#[tokio::test]
async fn the_legacy_http_sse_pair_serves_an_old_client() {
    let mut options = HttpOptions::new(ServeEra::Legacy);
    options.legacy_sse = true;
    let server = start(options).await;
    // A POST to the SSE URL is refused, so the client falls back to the
    // 2024-11-05 transport: GET for the stream, POSTs to its endpoint.
    let reply = raw(server.local_addr(), "POST", &POST, Some(&initialize())).await;
    assert_eq!((reply.status, reply.header("allow")), (405, Some("get")));
    let client = client(server.url(), EraChoice::Legacy);
    assert_eq!(echo(&client, "older").await, "older");
    assert_eq!(server.session_count(), 1, "the GET stream's session");
    server.shutdown().await;
}

/// A handler whose `hold` call waits for the test to release it (saying
/// when it started), whose `echo` answers after a yield, and whose `later`
/// answers at once, then, once released, sends a notification related to
/// no request (it goes on the GET stream).
struct Held {
    info: ServerInfo,
    started: tokio::sync::mpsc::UnboundedSender<()>,
    release: Arc<tokio::sync::Notify>,
}

impl Handler for Held {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": { "listChanged": true } })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        let params = match params.into_value() {
            Ok(params) => params,
            Err(e) => return Reply::Now(Err(e)),
        };
        let text = |t: &str| Ok(json!({ "content": [{ "type": "text", "text": t }] }));
        let name = params.as_ref().and_then(|p| p["name"].as_str()).unwrap_or_default();
        match (method, name) {
            ("tools/call", "hold") => {
                let (started, release) = (self.started.clone(), self.release.clone());
                Reply::Later(Box::pin(async move {
                    let _ = started.send(());
                    release.notified().await;
                    text("held")
                }))
            }
            ("tools/call", "echo") => {
                let message = params.as_ref().and_then(|p| p["arguments"]["message"].as_str());
                let message = message.unwrap_or_default().to_owned();
                Reply::Later(Box::pin(async move {
                    tokio::task::yield_now().await;
                    text(&message)
                }))
            }
            ("tools/call", "later") => {
                let (session, _, _) = cx.into_parts();
                let release = self.release.clone();
                tokio::spawn(async move {
                    release.notified().await;
                    session.notify("notifications/tools/list_changed", None, None);
                });
                Reply::Now(text("later"))
            }
            _ => Reply::Now(Err(mcp_proto::jsonrpc::ErrorObject::method_not_found(method))),
        }
    }
}

async fn call_text(client: &mcp_http::HttpClient, name: &str, message: &str) -> String {
    let call = client.call_tool_with(name, json!({ "message": message }), Default::default());
    let result = tokio::time::timeout(TIMEOUT, call).await.expect("in time").unwrap();
    mcp_proto::render_tool_result(&result).text
}

#[tokio::test]
async fn a_post_waiting_for_its_reply_routes_the_replies_of_the_others() {
    for reply in [ReplyMode::Json, ReplyMode::Sse] {
        let (started, mut was_started) = tokio::sync::mpsc::unbounded_channel();
        let release = Arc::new(tokio::sync::Notify::new());
        let release_in = release.clone();
        let factory = move || Held {
            info: ServerInfo::new("held", "1"),
            started: started.clone(),
            release: release_in.clone(),
        };
        let mut options = HttpOptions::new(ServeEra::Legacy);
        options.reply = reply;
        let server = serve(listener().await, options, factory).await.unwrap();
        let client = client(server.url(), EraChoice::Legacy);
        // JSON: the held call waits first: its POST drains the session's
        // queue while it waits, so every other reply passes through its task.
        // SSE: no POST waits; each routes what its handler answers at once
        // (`later`), the routing task the rest.
        let held = tokio::spawn({
            let client = client.clone();
            async move { call_text(&client, "hold", "").await }
        });
        tokio::time::timeout(TIMEOUT, was_started.recv()).await.expect("in time");
        let calls = (0..24).map(|i| {
            let client = client.clone();
            tokio::spawn(async move { (i, call_text(&client, "echo", &format!("m{i}")).await) })
        });
        for call in calls.collect::<Vec<_>>() {
            let (i, text) = call.await.unwrap();
            assert_eq!(text, format!("m{i}"), "each POST gets its own reply");
        }
        assert!(!held.is_finished());
        release.notify_one();
        assert_eq!(held.await.unwrap(), "held");
        // With no POST waiting, what the session sends still goes out: a
        // notification related to no request, on the GET stream (open in
        // the background after the handshake: waited for).
        let mut state = client.transport().watch_event_stream();
        let open = state.wait_for(|s| *s == mcp_http::EventStreamState::Open);
        tokio::time::timeout(TIMEOUT, open).await.expect("open in time").unwrap();
        let mut notifications = client.notifications();
        assert_eq!(call_text(&client, "later", "").await, "later");
        release.notify_one();
        let seen = async {
            loop {
                if let Some(ServerNotification::ToolListChanged) = notifications.recv().await {
                    return;
                }
            }
        };
        tokio::time::timeout(TIMEOUT, seen).await.expect("the notification comes");
        assert_eq!(call_text(&client, "echo", "after").await, "after");
        server.shutdown().await;
    }
}

/// The events of an SSE body, each with its id replaced by its number
/// alone (stream names differ between POSTs).
fn events(body: &str) -> Vec<String> {
    body.split_terminator("\n\n")
        .map(|event| {
            event
                .lines()
                .map(|line| match line.strip_prefix("id: ") {
                    Some(id) => format!("id: #{}", id.rsplit_once('-').map_or("?", |(_, n)| n)),
                    None => line.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// The body of a chunked response, its chunks joined.
fn unchunked(body: &str) -> String {
    let mut rest = body;
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").expect("a chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

#[tokio::test]
async fn an_sse_reply_given_at_once_goes_out_whole_with_the_same_events() {
    // `tools/list` is answered at once (the reply is on the stream before
    // the response goes out: a fixed body); `tools/call echo` later (a
    // stream, chunked). Both carry the same events.
    for priming in [false, true] {
        let mut options = HttpOptions::new(ServeEra::Legacy);
        options.reply = ReplyMode::Sse;
        options.priming = priming;
        options.retry_ms = priming.then_some(25);
        let server = start(options).await;
        let addr = server.local_addr();
        let session = open_session(addr).await;
        let headers = [POST[0], POST[1], ("mcp-session-id", session.as_str())];
        let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
        let now = raw(addr, "POST", &headers, Some(&list)).await;
        let later = raw(addr, "POST", &headers, Some(&call(3, "hi", false))).await;
        for reply in [&now, &later] {
            assert_eq!(reply.status, 200);
            assert_eq!(reply.header("content-type"), Some("text/event-stream"));
            assert_eq!(reply.header("cache-control"), Some("no-cache"));
        }
        assert_eq!(now.header("content-length"), Some(now.body.len().to_string().as_str()));
        assert_eq!(now.header("transfer-encoding"), None);
        assert_eq!(later.header("transfer-encoding"), Some("chunked"));
        let (now, later) = (events(&now.body), events(&unchunked(&later.body)));
        let priming_event = priming.then(|| "id: #0\nretry: 25\ndata:".to_owned());
        let message = |id: usize| format!("id: #{id}\nevent: message");
        for (events, result) in [(&now, r#""tools":["#), (&later, r#""text":"hi""#)] {
            assert_eq!(events.len(), 1 + usize::from(priming), "{events:?}");
            assert_eq!(events.first().filter(|_| priming), priming_event.as_ref(), "{events:?}");
            let last = events.last().unwrap();
            assert!(last.starts_with(&message(usize::from(priming))), "{events:?}");
            assert!(last.contains(result), "{events:?}");
        }
        server.shutdown().await;
    }
}
