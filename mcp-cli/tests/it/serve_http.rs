//! `mcpc serve --http` end to end: the toolkit's HTTP client as host (and
//! raw HTTP requests, to see every byte a host gets) to the built `mcpc
//! serve --http`, fronting the testkit over stdio (and over HTTP, with an
//! upstream secret).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_http::{HttpClient, HttpOptions, StaticAuth};
use mcp_peer::EraChoice;
use mcp_proto::ErrorObject;
use mcp_proto::client::{BoxFuture, ElicitationHandler, RequestOptions};
use mcp_proto::types::{ElicitRequestParams, ElicitResult, JsonObject};
use mcp_test_support::text_blocks;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::run::Sandbox;
use crate::serve_support::assert_arguments_arrive_as_written;

/// A running `mcpc serve --http`: its URL, the token it made up (if it
/// did), and the process (killed when dropped).
struct Served {
    url: String,
    made_up_token: Option<String>,
    child: Child,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// `host:port` of the URL.
    fn authority(&self) -> &str {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split('/').next().unwrap()
    }
}

/// Starts `mcpc serve --http ADDR ARGS` in the sandbox (with `env` set)
/// and reads the URL it prints.
fn serve(s: &Sandbox, addr: &str, args: &[&str], env: &[(&str, &str)]) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpc"));
    cmd.args(["serve", "--http", addr]).args(args).current_dir(&s.dir);
    cmd.envs(s.env());
    cmd.env_remove("MCPC_SERVE_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("mcpc serve --http starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut url = None;
    let mut made_up_token = None;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
            if url.is_some() {
                break;
            }
            continue;
        };
        if let Some(u) = line.strip_prefix("mcpc: serving on ") {
            url = Some(u.trim().to_owned());
        } else if line.contains("bearer token") {
            made_up_token = line.rsplit(' ').next().map(str::to_owned);
        }
        seen.push(line);
    }
    let url = url.unwrap_or_else(|| panic!("no URL printed: {seen:?}"));
    Served { url, made_up_token, child }
}

fn testkit_spec(extra: &str) -> String {
    format!("{} stdio {extra}", mcp_testkit::binary_path().to_string_lossy())
}

/// The host's side of an elicitation: the user accepts with `name`,
/// counting the times asked.
struct Named(&'static str, AtomicUsize);

impl ElicitationHandler for Named {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Ok(ElicitResult::accept([("name", self.0)])) })
    }
}

/// A host over HTTP speaking `era`, declaring elicitation when given.
fn host(
    url: &str,
    era: EraChoice,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    token: Option<&str>,
) -> HttpClient {
    let mut o = HttpOptions::new("bridge");
    o.era = era;
    o.request_timeout = Duration::from_secs(30);
    o.handlers.elicitation = elicitation;
    if let Some(token) = token {
        o.auth = StaticAuth::Bearer(token.to_owned());
    }
    mcp_http::connect(url, o).expect("the host's client")
}

fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

async fn call(c: &HttpClient, tool: &str, a: Value) -> String {
    let r = c
        .call_tool_with(tool, args(a), RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    text_blocks(&r)
}

/// One raw HTTP/1.1 request (`Connection: close`): the status and the
/// whole response, head and body.
async fn raw(
    authority: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        String::from_utf8_lossy(&response).into_owned()
    };
    let response = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .expect("the response within 20 s");
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response)
}

/// The value of header `name` in a raw response.
fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_of_both_eras_call_and_see_progress_over_http() {
    let s = Sandbox::new("serve-http-eras");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    assert!(served.url.starts_with("http://127.0.0.1:") && served.url.ends_with("/mcp"));
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let c = host(&served.url, era, None, None);
        let tools = c.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"), "{era:?}: {tools:?}");
        assert_eq!(c.protocol_version().map(|v| v.is_modern()), Some(era == EraChoice::Modern));
        assert_eq!(call(&c, "echo", json!({"message": "hi"})).await, "hi");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let options = RequestOptions {
            on_progress: Some({
                let seen = seen.clone();
                Arc::new(move |p| seen.lock().unwrap().push(p.progress))
            }),
            ..Default::default()
        };
        let r = c.call_tool_with("slow", args(json!({"ms": 300, "steps": 3})), options).await;
        assert_eq!(text_blocks(&r.unwrap()), "done");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0], "{era:?}");
        c.close().await.unwrap();
    }
}

/// A host's `tools/call` arguments reach the server byte for byte through
/// `mcpc serve --http`, in either era (as through `mcpc serve` over stdio:
/// `serve_forward::arguments_reach_the_server_as_the_host_wrote_them`):
/// the testkit's `annotated` tool answers its arguments' text as it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_reach_the_server_as_the_host_wrote_them_over_http() {
    let s = Sandbox::new("serve-http-arguments");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let c = host(&served.url, era, None, None);
        assert_arguments_arrive_as_written(&c, era).await;
        c.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_request_goes_to_the_session_whose_call_asked() {
    let s = Sandbox::new("serve-http-isolation");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    let ada = Arc::new(Named("Ada", AtomicUsize::new(0)));
    let bob = Arc::new(Named("Bob", AtomicUsize::new(0)));
    let a = host(&served.url, EraChoice::Legacy, Some(ada.clone()), None);
    let b = host(&served.url, EraChoice::Legacy, Some(bob.clone()), None);
    a.initialize().await.unwrap();
    b.initialize().await.unwrap();

    // Each session's call asks its own host.
    let r = call(&a, "ask", json!({"what": "elicit"})).await;
    assert!(r.contains("Ada"), "{r}");
    let r = call(&b, "ask", json!({"what": "elicit"})).await;
    assert!(r.contains("Bob"), "{r}");
    assert_eq!((ada.1.load(Ordering::SeqCst), bob.1.load(Ordering::SeqCst)), (1, 1));

    // Both sessions with calls running: which one asked is unknown, and
    // the request is refused rather than sent to either.
    let a_progress = Arc::new(Mutex::new(0));
    let slow = {
        let a_progress = a_progress.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |_| *a_progress.lock().unwrap() += 1)),
            ..Default::default()
        };
        a.call_tool_with("slow", args(json!({"ms": 1500, "steps": 3})), options)
    };
    let asked = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call(&b, "ask", json!({"what": "elicit"})).await
    };
    let (slow, asked) = tokio::join!(slow, asked);
    assert_eq!(text_blocks(&slow.unwrap()), "done");
    assert!(asked.contains("several host sessions"), "{asked}");
    assert_eq!((ada.1.load(Ordering::SeqCst), bob.1.load(Ordering::SeqCst)), (1, 1));
    assert_eq!(*a_progress.lock().unwrap(), 3);

    // A ended: B alone is asked again.
    a.close().await.unwrap();
    let r = call(&b, "ask", json!({"what": "elicit"})).await;
    assert!(r.contains("Bob"), "{r}");
    b.close().await.unwrap();
}

/// A session opened by raw HTTP (a host that never cancels on its own)
/// and its call of `hang`, which never ends: the session id and the POST.
async fn hanging_session(at: &str) -> (String, tokio::task::JoinHandle<(u16, String)>) {
    let (status, response) = raw(at, "POST", &[], Some(&initialize())).await;
    assert_eq!(status, 200, "{response}");
    let session = header(&response, "mcp-session-id").expect("a session").to_owned();
    let hang = tokio::spawn({
        let (at, session) = (at.to_owned(), session.clone());
        async move {
            let with =
                [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
            let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "hang"}});
            raw(&at, "POST", &with, Some(&call)).await
        }
    });
    (session, hang)
}

/// Asks the upstream testkit (through `watcher`) until it has seen one
/// cancellation, at most `within`.
async fn one_cancellation_seen(watcher: &HttpClient, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let log = call(watcher, "cancelled_log", json!({})).await;
        let ids: Vec<Value> = serde_json::from_str(&log).unwrap();
        if ids.len() == 1 {
            return;
        }
        assert!(Instant::now() < deadline, "the server saw no cancellation: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_session_has_its_upstream_calls_cancelled() {
    let s = Sandbox::new("serve-http-delete");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    let watcher = host(&served.url, EraChoice::Legacy, None, None);
    assert_eq!(call(&watcher, "cancelled_log", json!({})).await, "[]");
    // A host (raw HTTP: it never cancels on its own) with a call that
    // never ends, then DELETE of its session.
    let at = served.authority().to_owned();
    let (session, hang) = hanging_session(&at).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!hang.is_finished());
    assert_eq!(call(&watcher, "cancelled_log", json!({})).await, "[]");
    let with = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let (status, response) = raw(&at, "DELETE", &with, None).await;
    assert!(status == 200 || status == 204, "{response}");
    one_cancellation_seen(&watcher, Duration::from_secs(10)).await;
    // The hanging POST ended with its session.
    let ended = tokio::time::timeout(Duration::from_secs(10), hang).await;
    assert!(ended.is_ok(), "the hanging POST did not end");
    watcher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_has_its_upstream_calls_cancelled_with_no_new_session() {
    let s = Sandbox::new("serve-http-idle");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec, "--idle-timeout", "2"], &[]);
    // The watcher's session stays in use (it asks every 50 ms).
    let watcher = host(&served.url, EraChoice::Legacy, None, None);
    assert_eq!(call(&watcher, "cancelled_log", json!({})).await, "[]");
    // A host (raw HTTP) whose call never ends, then nothing more from it:
    // its session falls idle, and no other session is made after it.
    let at = served.authority().to_owned();
    let (session, hang) = hanging_session(&at).await;
    // The service's timer ends the idle session: its call is cancelled
    // upstream (no deadline of the test decides it: the bound is generous).
    one_cancellation_seen(&watcher, Duration::from_secs(20)).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), hang).await;
    assert!(ended.is_ok(), "the hanging POST did not end");
    // The session is gone.
    let with = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let (status, response) = raw(&at, "POST", &with, Some(&ping)).await;
    assert_eq!(status, 404, "{response}");
    watcher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_403_and_a_token_is_401_without_it() {
    let s = Sandbox::new("serve-http-guard");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    let (status, _) =
        raw(served.authority(), "POST", &[("Origin", "http://evil.example")], Some(&initialize()))
            .await;
    assert_eq!(status, 403);
    let (status, _) = raw(
        served.authority(),
        "POST",
        &[("Origin", "http://localhost:3000")],
        Some(&initialize()),
    )
    .await;
    assert_eq!(status, 200);
    drop(served);

    // A loopback bind may ask for a token too (from the environment here).
    let served =
        serve(&s, "127.0.0.1:0", &["--server", &spec], &[("MCPC_SERVE_TOKEN", "host-token-1")]);
    assert_eq!(served.made_up_token, None);
    let (status, response) = raw(served.authority(), "POST", &[], Some(&initialize())).await;
    assert_eq!(status, 401, "{response}");
    assert!(header(&response, "www-authenticate").is_some_and(|v| v.starts_with("Bearer")));
    let (status, _) =
        raw(served.authority(), "POST", &[("Authorization", "Bearer wrong")], Some(&initialize()))
            .await;
    assert_eq!(status, 401);
    let c = host(&served.url, EraChoice::Legacy, None, Some("host-token-1"));
    assert_eq!(call(&c, "echo", json!({"message": "in"})).await, "in");
    c.close().await.unwrap();
}

/// The machine's address on its default route, if it has one that is not
/// loopback.
fn non_loopback_ip() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_a_token_is_made_up_and_required() {
    // Without such an address, the rule is the option parsing's unit test
    // (`serve::http::tests::off_loopback_a_token_is_required`).
    let Some(ip) = non_loopback_ip() else { return };
    let s = Sandbox::new("serve-http-wide");
    let spec = testkit_spec("");
    let served = serve(&s, &format!("{ip}:0"), &["--server", &spec], &[]);
    let token = served.made_up_token.clone().expect("a token printed");
    assert_eq!(token.len(), 64, "{token}");
    let (status, response) = raw(served.authority(), "POST", &[], Some(&initialize())).await;
    assert_eq!(status, 401, "{response}");
    let c = host(&served.url, EraChoice::Legacy, None, Some(&token));
    assert_eq!(call(&c, "echo", json!({"message": "far"})).await, "far");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_secret_never_reaches_the_host() {
    const SECRET: &str = "upstream-secret-5c1e9a";
    let upstream =
        mcp_testkit::serve_http(mcp_testkit::HttpConfig::default()).await.expect("the testkit");
    let s = Sandbox::new("serve-http-secret");
    let auth = format!("Authorization: Bearer {SECRET}");
    let served = serve(&s, "127.0.0.1:0", &["--server", &upstream.url(), "-H", &auth], &[]);
    let at = served.authority().to_owned();
    let mut seen = String::new();
    let (status, response) = raw(&at, "POST", &[], Some(&initialize())).await;
    assert_eq!(status, 200, "{response}");
    seen.push_str(&response);
    let session = header(&response, "mcp-session-id").expect("a session").to_owned();
    let with = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    seen.push_str(&raw(&at, "POST", &with, Some(&initialized)).await.1);
    for (id, method, params) in [
        (2, "tools/list", json!({})),
        (3, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}})),
        (4, "tools/call", json!({"name": "fail", "arguments": {"message": "no"}})),
        (5, "tools/call", json!({"name": "nosuch"})),
        (6, "resources/list", json!({})),
        (7, "prompts/list", json!({})),
    ] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, response) = raw(&at, "POST", &with, Some(&request)).await;
        assert_eq!(status, 200, "{method}: {response}");
        seen.push_str(&response);
    }
    // The upstream got the secret; the host saw none of it.
    let upstream_saw = upstream.last_request_headers().expect("upstream requests");
    assert_eq!(
        upstream_saw.get("authorization").and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert!(seen.contains("\"x\""), "{seen}");
    assert!(!seen.contains(SECRET), "{seen}");
    assert!(!seen.to_ascii_lowercase().contains("authorization"), "{seen}");
    drop(served);
    upstream.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_log_messages_reach_its_session_only_and_list_changes_every_one() {
    use mcp_proto::client::ServerNotification;
    let s = Sandbox::new("serve-http-notify");
    let spec = testkit_spec("");
    let served = serve(&s, "127.0.0.1:0", &["--server", &spec], &[]);
    let a = host(&served.url, EraChoice::Legacy, None, None);
    let b = host(&served.url, EraChoice::Legacy, None, None);
    a.initialize().await.unwrap();
    b.initialize().await.unwrap();
    // The standalone streams open in the background: a list change goes
    // to the sessions whose stream is open.
    for c in [&a, &b] {
        let mut state = c.transport().watch_event_stream();
        let open = state.wait_for(|s| *s == mcp_http::EventStreamState::Open);
        tokio::time::timeout(Duration::from_secs(10), open).await.expect("open in time").unwrap();
    }
    let (mut na, mut nb) = (a.notifications(), b.notifications());
    call(&a, "log", json!({"level": "error", "message": "for-a"})).await;
    // A's own log message reaches A.
    let wait = async {
        loop {
            match na.recv().await {
                Some(ServerNotification::LogMessage(m)) => break m.data,
                Some(_) => {}
                None => panic!("A's notifications ended"),
            }
        }
    };
    let data = tokio::time::timeout(Duration::from_secs(10), wait).await.expect("A's log");
    assert_eq!(data, json!("for-a"));
    // A list change reaches both.
    call(&b, "change", json!({})).await;
    for (who, n) in [("A", &mut na), ("B", &mut nb)] {
        let wait = async {
            loop {
                match n.recv().await {
                    Some(ServerNotification::ToolListChanged) => break,
                    Some(ServerNotification::LogMessage(m)) if who == "B" => {
                        panic!("B got A's log message: {m:?}")
                    }
                    Some(_) => {}
                    None => panic!("{who}'s notifications ended"),
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait).await.expect("the list change");
    }
    // Nothing of A's reached B meanwhile.
    while let Ok(Some(n)) = tokio::time::timeout(Duration::from_millis(300), nb.recv()).await {
        assert!(!matches!(n, ServerNotification::LogMessage(_)), "B got {n:?}");
    }
    a.close().await.unwrap();
    b.close().await.unwrap();
}
