//! `http-bench`: `mcp-http` against rmcp's Streamable HTTP client (its
//! default, and with a pooled `reqwest::Client` passed in) and the raw limit
//! (plain hyper POSTs of the same bytes on kept-alive connections), all on
//! the same `mcp-testkit http` server binary, alternating clients within
//! each round.
//!
//! Usage: `http-bench [--quick] [--server PATH] [--server-threads N] [--era legacy|modern] seq|throughput|startup|memory`
//! prints one Markdown table on stdout (progress on stderr). `--era` pins
//! every contender (and the server) to one protocol era: the handshake era
//! by default, `modern` for the stateless 2026-07-28 revision (no session;
//! `seq` and `throughput`; `startup` measures both, `memory` the handshake
//! era). Hidden modes:
//! `hold ours|rmcp|rmcp-pooled N URL` (a process holding N initialized idle
//! sessions; prints its memory), `--profile json|sse|raw N` (N sequential
//! calls of ours, or of raw hyper, for callgrind) and `--profile
//! start|start-raw N` (N start-ups of ours or of raw hyper). With
//! `BENCH_NO_EVENT_STREAM` set, our client does not open the standalone GET
//! stream (`HttpOptions::event_stream = false`), to measure what it costs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use mcp_bench::era::Era;
use mcp_bench::proc::{
    HttpServer, cpu_time, pin_to_cpu0, process_cpu_time, status_bytes, testkit_path, unpin,
};
use mcp_bench::report::{kib, median_f64, mib, ms, quantile, rate, ratio, us_f64};
use mcp_bench::{MESSAGE, echo_args, runtime};
use mcp_http::mcp_peer::EraChoice;
use mcp_http::{HttpClient, HttpOptions, HttpPool};
use mcp_proto::client::RequestOptions;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use tokio::runtime::Runtime;

/// The most calls in flight measured (and rmcp's `max_concurrent_requests`
/// in its pooled configuration, so it is not capped below that).
const MAX_DEPTH: usize = 64;
/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(20 * 60);
/// Every raw exchange is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    mcp_bench::proc::watchdog(WALL_LIMIT);
    let result = match args.first().map(String::as_str) {
        Some("hold") => hold(&args[1..]),
        Some("answer") => answer(&args[1..]),
        _ => run(&args),
    };
    if let Err(e) = result {
        eprintln!("http-bench: {e}");
        std::process::exit(1);
    }
}

struct Config {
    quick: bool,
    testkit: PathBuf,
    /// `--reply json|sse` limits the run to one reply mode.
    replies: Vec<&'static str>,
    /// `--server-threads N`: the throughput server's worker threads
    /// (`mcp-testkit http --threads N`; 1 by default).
    server_threads: usize,
    /// `--era legacy|modern`: the era of `seq`, `throughput` and `--profile`.
    era: Era,
    /// `--only answerer|testkit` limits `seq` and `throughput` to one server.
    servers: Vec<Server>,
}

/// The server of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    /// This binary's `answer` mode: the testkit's own reply bytes, only the
    /// id spliced in; what the clients alone cost.
    Answerer,
    /// `mcp-testkit http`: the real server, its JSON work in every call.
    Testkit,
}

impl Server {
    fn label(self) -> &'static str {
        match self {
            Server::Answerer => "fixed-reply answerer",
            Server::Testkit => "mcp-testkit",
        }
    }
}

impl Config {
    /// Sequential: calls per round, rounds, warm-up calls, pinned phases.
    fn seq_counts(&self, reply: &str, server: Server) -> (usize, usize, usize, &'static [bool]) {
        // The answerer sets TCP_NODELAY: its SSE replies never stall.
        let reply = if server == Server::Answerer { "json" } else { reply };
        match (self.quick, reply) {
            // The smoke only checks that everything runs; SSE replies may
            // stall (see below), so it makes very few of them.
            (true, "sse") => (10, 1, 5, &[true, false]),
            (true, _) => (50, 1, 20, &[true, false]),
            // SSE replies of the stock testkit stall ~40 ms on some
            // connections (see BENCHMARKS.md): fewer calls, unpinned only.
            (false, "sse") if !self.fast_sse() => (300, 3, 50, &[false]),
            _ => (3_000, 5, 500, &[true, false]),
        }
    }

    /// Throughput: calls per client per depth per round, rounds.
    fn thr_counts(&self, reply: &str, server: Server) -> (usize, usize) {
        let reply = if server == Server::Answerer { "json" } else { reply };
        match (self.quick, reply) {
            (true, "sse") => (64, 1),
            (true, _) => (128, 1),
            (false, "sse") if !self.fast_sse() => (256, 3),
            _ => (4_096, 5),
        }
    }

    /// `--fast-sse`: the server answers SSE without the stall (a testkit
    /// with TCP_NODELAY), so SSE gets the full counts.
    fn fast_sse(&self) -> bool {
        std::env::args().any(|a| a == "--fast-sse")
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let replies = match args.iter().position(|a| a == "--reply").and_then(|i| args.get(i + 1)) {
        Some(r) if r == "json" => vec!["json"],
        Some(r) if r == "sse" => vec!["sse"],
        _ => vec!["json", "sse"],
    };
    let server_threads = args
        .iter()
        .position(|a| a == "--server-threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let config = Config {
        quick: args.iter().any(|a| a == "--quick"),
        testkit: testkit_path(args),
        replies,
        server_threads,
        era: Era::from_args(args)?,
        servers: match args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)) {
            Some(s) if s == "answerer" => vec![Server::Answerer],
            Some(s) if s == "testkit" => vec![Server::Testkit],
            _ => vec![Server::Answerer, Server::Testkit],
        },
    };
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        let mode = args.get(i + 1).map(String::as_str).unwrap_or("json");
        let n = args.get(i + 2).and_then(|n| n.parse().ok()).unwrap_or(5_000);
        return profile(&config, mode, n);
    }
    let what = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with("--")
                && (*i == 0
                    || !["--server", "--reply", "--server-threads", "--era", "--only"]
                        .contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.as_str());
    let table = match what {
        Some("seq") => sequential(&config)?,
        Some("throughput") => throughput(&config)?,
        Some("startup") => startup(&config)?,
        Some("memory") => memory(&config)?,
        _ => {
            return Err(
                "usage: http-bench [--quick] [--server PATH] [--server-threads N] [--era legacy|modern] seq|throughput|startup|memory".into(),
            );
        }
    };
    print!("{table}");
    Ok(())
}

/// Ours pinned to `era`.
async fn connect_ours(url: &str, era: Era) -> Result<HttpClient, String> {
    connect_ours_with(
        url,
        match era {
            Era::Legacy => EraChoice::Legacy,
            Era::Modern => EraChoice::Modern,
        },
    )
    .await
}

async fn connect_ours_with(url: &str, choice: EraChoice) -> Result<HttpClient, String> {
    connect_ours_in(url, choice, None).await
}

/// Ours, through `pool` when one is given (shared with earlier clients).
async fn connect_ours_in(
    url: &str,
    choice: EraChoice,
    pool: Option<&HttpPool>,
) -> Result<HttpClient, String> {
    let mut o = HttpOptions::new("bench");
    o.client.era = choice;
    o.pool = pool.cloned();
    o.event_stream = std::env::var_os("BENCH_NO_EVENT_STREAM").is_none();
    let client = mcp_http::connect(url, o).map_err(|e| format!("ours: {e}"))?;
    client.initialize().await.map_err(|e| format!("ours: initialize: {e}"))?;
    Ok(client)
}

type Rmcp = RunningService<RoleClient, ()>;

async fn connect_rmcp_default(url: &str, era: Era) -> Result<Rmcp, String> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    match era {
        Era::Legacy => ().serve(transport).await.map_err(|e| format!("rmcp: initialize: {e}")),
        Era::Modern => {
            ().serve_with_lifecycle(transport, rmcp_modern())
                .await
                .map_err(|e| format!("rmcp: server/discover: {e}"))
        }
    }
}

/// rmcp's stateless era: `server/discover` (no fallback to `initialize`),
/// then the client context in every request's `_meta` and the
/// `Mcp-Method`/`Mcp-Name` headers.
fn rmcp_modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// A kept-alive, pooled `reqwest::Client`, as BENCH-NOTES describes rmcp's
/// best configuration.
fn pooled_reqwest() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("a reqwest client")
}

async fn connect_rmcp_pooled(url: &str, client: reqwest::Client, era: Era) -> Result<Rmcp, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .max_concurrent_requests(MAX_DEPTH);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    match era {
        Era::Legacy => {
            ().serve(transport).await.map_err(|e| format!("rmcp pooled: initialize: {e}"))
        }
        Era::Modern => {
            ().serve_with_lifecycle(transport, rmcp_modern())
                .await
                .map_err(|e| format!("rmcp pooled: server/discover: {e}"))
        }
    }
}

async fn call_ours(client: &HttpClient) {
    let result = client.call_tool_with("echo", Some(echo_args()), RequestOptions::default()).await;
    if let Err(e) = &result {
        panic!("ours: echo failed: {e}");
    }
    assert!(result.is_ok_and(|r| !r.is_error.unwrap_or(false)), "ours: echo failed");
}

async fn call_rmcp(peer: &rmcp::Peer<RoleClient>) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = Some(echo_args());
    let result = peer.call_tool(params).await;
    if let Err(e) = &result {
        panic!("rmcp: echo failed: {e}");
    }
    assert!(result.is_ok_and(|r| r.is_error != Some(true)), "rmcp: echo failed");
}

/// Plain hyper: kept-alive HTTP/1.1 connections, one per call in flight,
/// posting the same request bytes a client sends and reading the whole
/// reply body (JSON or SSE) without decoding it.
struct Raw {
    authority: String,
    path: String,
    addr: String,
    /// The handshake era's session; none in the stateless era.
    session: Option<String>,
    era: Era,
    conns: Vec<Option<SendRequest<Full<Bytes>>>>,
    next_id: Arc<AtomicU64>,
}

async fn raw_connection(addr: &str) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream =
        tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("raw: connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("raw: handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(send)
}

/// A POST of `body`. The handshake era: the session and version headers
/// once a session exists. The stateless era: no session; the version,
/// `Mcp-Method` and (`tools/call`) `Mcp-Name` headers on every request.
fn raw_request(
    authority: &str,
    path: &str,
    era: Era,
    session: Option<&str>,
    method: &str,
    body: String,
) -> hyper::Request<Full<Bytes>> {
    let mut builder = hyper::Request::post(path)
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", era.revision());
    }
    if era == Era::Modern {
        builder =
            builder.header("mcp-protocol-version", era.revision()).header("mcp-method", method);
        if method == "tools/call" {
            builder = builder.header("mcp-name", "echo");
        }
    }
    builder.body(Full::new(Bytes::from(body))).expect("a valid request")
}

/// POSTs and reads the whole body; returns the status, the session header
/// and the body.
async fn raw_post(
    send: &mut SendRequest<Full<Bytes>>,
    request: hyper::Request<Full<Bytes>>,
) -> Result<(u16, Option<String>, Bytes), String> {
    let exchange = async {
        send.ready().await.map_err(|e| format!("raw: {e}"))?;
        let response = send.send_request(request).await.map_err(|e| format!("raw: {e}"))?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body =
            response.into_body().collect().await.map_err(|e| format!("raw: body: {e}"))?.to_bytes();
        Ok((status, session, body))
    };
    tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| "raw: timed out".to_owned())?
}

fn call_body(id: u64, meta: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"{MESSAGE}\"}}{meta}}}}}"
    )
}

impl Raw {
    /// Past the handshake (`initialize` + `initialized`) or, in the
    /// stateless era, past one `server/discover`, as the clients are.
    async fn connect(url: &str, era: Era) -> Result<Raw, String> {
        let rest = url.strip_prefix("http://").ok_or("raw: not an http:// URL")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (authority, path) =
            (authority.to_owned(), if path.is_empty() { "/" } else { path }.to_owned());
        let addr = authority.clone();
        let mut send = raw_connection(&addr).await?;
        let session = match era {
            Era::Legacy => {
                let init = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"raw\",\"version\":\"0\"}}}}}}",
                    era.revision()
                );
                let request = raw_request(&authority, &path, era, None, "initialize", init);
                let (status, session, _) = raw_post(&mut send, request).await?;
                let session = session
                    .filter(|_| status == 200)
                    .ok_or(format!("raw: initialize got {status}"))?;
                let initialized =
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}".to_owned();
                let request = raw_request(
                    &authority,
                    &path,
                    era,
                    Some(&session),
                    "notifications/initialized",
                    initialized,
                );
                let (status, _, _) = raw_post(&mut send, request).await?;
                if status != 202 {
                    return Err(format!("raw: notifications/initialized got {status}"));
                }
                Some(session)
            }
            Era::Modern => {
                let discover = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":{{{}}}}}",
                    era.raw_meta().trim_start_matches(',')
                );
                let request =
                    raw_request(&authority, &path, era, None, "server/discover", discover);
                let (status, _, body) = raw_post(&mut send, request).await?;
                if status != 200 || !body.windows(17).any(|w| w == b"supportedVersions") {
                    return Err(format!(
                        "raw: server/discover got {status}: {}",
                        String::from_utf8_lossy(&body)
                    ));
                }
                None
            }
        };
        Ok(Raw {
            authority,
            path,
            addr,
            session,
            era,
            conns: vec![Some(send)],
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    async fn ensure_connections(&mut self, n: usize) -> Result<(), String> {
        while self.conns.len() < n {
            let conn = raw_connection(&self.addr).await?;
            self.conns.push(Some(conn));
        }
        Ok(())
    }

    /// Lends connection `conn` to a caller; [`Raw::give_back`] returns it.
    fn caller(&mut self, conn: usize) -> RawCaller {
        RawCaller {
            conn,
            addr: self.addr.clone(),
            send: self.conns[conn].take().expect("the connection is not lent out"),
            authority: self.authority.clone(),
            path: self.path.clone(),
            session: self.session.clone(),
            era: self.era,
            meta: self.era.raw_meta(),
            next_id: self.next_id.clone(),
        }
    }
}

impl Raw {
    fn give_back(&mut self, caller: RawCaller) {
        self.conns[caller.conn] = Some(caller.send);
    }
}

struct RawCaller {
    conn: usize,
    addr: String,
    send: SendRequest<Full<Bytes>>,
    authority: String,
    path: String,
    session: Option<String>,
    era: Era,
    /// The `_meta` member of the stateless era's requests.
    meta: String,
    next_id: Arc<AtomicU64>,
}

impl RawCaller {
    async fn call(&mut self) {
        // The server closes a connection left idle for long (while the other
        // clients take their turn): open a new one, as a pool would.
        if self.send.is_closed() {
            match raw_connection(&self.addr).await {
                Ok(send) => self.send = send,
                Err(e) => panic!("{e}"),
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = raw_request(
            &self.authority,
            &self.path,
            self.era,
            self.session.as_deref(),
            "tools/call",
            call_body(id, &self.meta),
        );
        match raw_post(&mut self.send, request).await {
            Ok((200, _, body)) if body.len() > MESSAGE.len() => {}
            Ok((status, _, body)) => {
                panic!("raw: echo got {status}: {}", String::from_utf8_lossy(&body))
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// The testkit's exact reply bodies (JSON) in one era, which the answerer
/// replays: to `initialize` (handshake era) or `server/discover` (stateless
/// era; `-` for the one the era lacks), to `tools/list` (our HTTP client
/// lists the tools once, for the `Mcp-Param-*` headers) and to one echo
/// call.
struct Replies {
    init: String,
    discover: String,
    list: String,
    call: String,
}

/// POSTs to a JSON-reply testkit of the era once to learn its replies.
fn learn_replies(testkit: &Path, era: Era) -> Result<Replies, String> {
    let mut args = vec!["--reply", "json"];
    args.extend(era.testkit_args());
    let server = HttpServer::start(testkit, &args)?;
    let url = server.url.clone();
    runtime().block_on(async {
        let raw = Raw::connect(&url, era).await?;
        let mut send = raw_connection(&raw.addr).await?;
        let text = |b: Bytes| String::from_utf8_lossy(&b).trim().to_owned();
        let first = match era {
            Era::Legacy => {
                let init = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"raw\",\"version\":\"0\"}}}}}}",
                    era.revision()
                );
                let request = raw_request(&raw.authority, &raw.path, era, None, "initialize", init);
                raw_post(&mut send, request).await?.2
            }
            Era::Modern => {
                let discover = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":{{{}}}}}",
                    era.raw_meta().trim_start_matches(',')
                );
                let request =
                    raw_request(&raw.authority, &raw.path, era, None, "server/discover", discover);
                raw_post(&mut send, request).await?.2
            }
        };
        let list = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{{{}}}}}",
            era.raw_meta().trim_start_matches(',')
        );
        let request =
            raw_request(&raw.authority, &raw.path, era, raw.session.as_deref(), "tools/list", list);
        let list = text(raw_post(&mut send, request).await?.2);
        let request = raw_request(
            &raw.authority,
            &raw.path,
            era,
            raw.session.as_deref(),
            "tools/call",
            call_body(1, &era.raw_meta()),
        );
        let (status, _, call) = raw_post(&mut send, request).await?;
        let (first, call) = (text(first), text(call));
        if status != 200
            || !call.contains(MESSAGE)
            || !first.starts_with('{')
            || !list.contains("\"tools\"")
        {
            return Err(format!(
                "unexpected testkit replies {first:?} / {list:.200?} / {status} {call:?}"
            ));
        }
        // BENCH_ANSWERER_NO_LIST: the answerer refuses `tools/list` (400).
        let list = if std::env::var_os("BENCH_ANSWERER_NO_LIST").is_some() { "-".into() } else { list };
        Ok(match era {
            Era::Legacy => Replies { init: first, discover: "-".into(), list, call },
            Era::Modern => Replies { init: "-".into(), discover: first, list, call },
        })
    })
}

/// A reply body cut around its `"id":` value.
struct Template {
    head: Bytes,
    tail: Bytes,
}

/// Where the first `"id":` value of a body starts and ends.
fn id_span(body: &[u8]) -> Option<(usize, usize)> {
    const KEY: &[u8] = b"\"id\":";
    let start = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let len = body[start..].iter().position(|&b| b == b',' || b == b'}')?;
    Some((start, start + len))
}

impl Template {
    /// `None` for `-` (a reply the era lacks).
    fn new(body: &str) -> Option<Template> {
        if body == "-" {
            return None;
        }
        let body = body.as_bytes();
        let (a, b) = id_span(body).unwrap_or((body.len(), body.len()));
        Some(Template {
            head: Bytes::copy_from_slice(&body[..a]),
            tail: Bytes::copy_from_slice(&body[b..]),
        })
    }
}

/// `answer json|sse INIT DISCOVER LIST CALL`: an HTTP/1.1 server on one
/// current-thread runtime (TCP_NODELAY on every connection) that answers
/// each POST with a fixed reply, its `"id"` value replaced by the request's
/// (byte search, no JSON parsing): INIT for `initialize` (with an
/// `Mcp-Session-Id`), DISCOVER for `server/discover`, LIST for
/// `tools/list`, CALL for anything else; `-` for a reply the era lacks
/// (answered 400). A POST without an id
/// (a notification) gets 202; GET 405 (no standalone stream); DELETE 200.
/// Prints `listening on URL` first, as the testkit does.
fn answer(args: &[String]) -> Result<(), String> {
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper::{Method, Response, StatusCode};

    let sse = args.first().is_some_and(|a| a == "sse");
    let template = |i: usize| Template::new(args.get(i).map_or("-", String::as_str));
    let templates = Arc::new((template(1), template(2), template(3), template(4)));
    let rt = runtime();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("answer: bind: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("listening on http://{addr}/mcp");
        std::io::Write::flush(&mut std::io::stdout()).map_err(|e| e.to_string())?;
        loop {
            let (stream, _) = listener.accept().await.map_err(|e| format!("answer: {e}"))?;
            let _ = stream.set_nodelay(true);
            let templates = templates.clone();
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let templates = templates.clone();
                async move {
                    let empty = |status: StatusCode| {
                        let mut response = Response::new(Full::new(Bytes::new()));
                        *response.status_mut() = status;
                        Ok::<_, hyper::Error>(response)
                    };
                    match *request.method() {
                        Method::POST => {}
                        Method::DELETE => return empty(StatusCode::OK),
                        _ => return empty(StatusCode::METHOD_NOT_ALLOWED),
                    }
                    let body = request.into_body().collect().await?.to_bytes();
                    let Some((a, b)) = id_span(&body) else {
                        return empty(StatusCode::ACCEPTED);
                    };
                    const METHOD: &[u8] = b"\"method\":\"";
                    let method = body
                        .windows(METHOD.len())
                        .position(|w| w == METHOD)
                        .map_or(&[][..], |at| &body[at + METHOD.len()..]);
                    let (init, discover, list, call) = &*templates;
                    let (template, session) = if method.starts_with(b"initialize\"") {
                        (init.as_ref(), true)
                    } else if method.starts_with(b"server/discover\"") {
                        (discover.as_ref(), false)
                    } else if method.starts_with(b"tools/list\"") {
                        (list.as_ref(), false)
                    } else {
                        (call.as_ref(), false)
                    };
                    let Some(t) = template else {
                        return empty(StatusCode::BAD_REQUEST);
                    };
                    let mut out = Vec::with_capacity(t.head.len() + t.tail.len() + 32);
                    if sse {
                        out.extend_from_slice(b"event: message\ndata: ");
                    }
                    out.extend_from_slice(&t.head);
                    out.extend_from_slice(&body[a..b]);
                    out.extend_from_slice(&t.tail);
                    if sse {
                        out.extend_from_slice(b"\n\n");
                    }
                    let mut response = Response::new(Full::new(Bytes::from(out)));
                    let content_type = if sse { "text/event-stream" } else { "application/json" };
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static(content_type),
                    );
                    if session {
                        response
                            .headers_mut()
                            .insert("mcp-session-id", http::HeaderValue::from_static("bench"));
                    }
                    Ok(response)
                }
            });
            tokio::spawn(async move {
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    })
}

const NAMES: [&str; 4] = ["mcp-http (ours)", "rmcp default", "rmcp pooled", "raw hyper"];

/// The four contenders of one phase, on one server.
struct Contenders {
    rt: Runtime,
    server: HttpServer,
    ours: HttpClient,
    rmcp_default: Rmcp,
    rmcp_pooled: Rmcp,
    raw: Raw,
}

impl Contenders {
    fn start(
        config: &Config,
        server: Server,
        reply: &str,
        threads: usize,
        replies: &Replies,
    ) -> Result<Contenders, String> {
        let era = config.era;
        let server = match server {
            Server::Testkit => {
                let threads = threads.to_string();
                let mut args = vec!["--reply", reply, "--threads", &threads];
                args.extend(era.testkit_args());
                HttpServer::start(&config.testkit, &args)?
            }
            Server::Answerer => {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let mut command = Command::new(exe);
                command.args([
                    "answer",
                    reply,
                    &replies.init,
                    &replies.discover,
                    &replies.list,
                    &replies.call,
                ]);
                HttpServer::spawn(command)?
            }
        };
        let rt = runtime();
        let url = server.url.clone();
        let (ours, rmcp_default, rmcp_pooled, raw) = rt.block_on(async {
            Ok::<_, String>((
                connect_ours(&url, era).await?,
                connect_rmcp_default(&url, era).await?,
                connect_rmcp_pooled(&url, pooled_reqwest(), era).await?,
                Raw::connect(&url, era).await?,
            ))
        })?;
        Ok(Contenders { rt, server, ours, rmcp_default, rmcp_pooled, raw })
    }

    fn rmcp(&self, which: usize) -> &Rmcp {
        if which == 1 { &self.rmcp_default } else { &self.rmcp_pooled }
    }

    fn sequential(&mut self, which: usize, n: usize, lat: &mut Vec<Duration>) {
        match which {
            0 => self.rt.block_on(async {
                for _ in 0..n {
                    let start = Instant::now();
                    call_ours(&self.ours).await;
                    lat.push(start.elapsed());
                }
            }),
            1 | 2 => self.rt.block_on(async {
                let peer = self.rmcp(which).peer();
                for _ in 0..n {
                    let start = Instant::now();
                    call_rmcp(peer).await;
                    lat.push(start.elapsed());
                }
            }),
            _ => {
                let mut caller = self.raw.caller(0);
                self.rt.block_on(async {
                    for _ in 0..n {
                        let start = Instant::now();
                        caller.call().await;
                        lat.push(start.elapsed());
                    }
                });
                self.raw.give_back(caller);
            }
        }
    }

    fn in_flight(&mut self, which: usize, n: usize, depth: usize) -> Result<Duration, String> {
        let per_worker = n / depth;
        if which == 3 {
            self.rt.block_on(self.raw.ensure_connections(depth))?;
        }
        enum Worker {
            Ours(HttpClient),
            Rmcp(rmcp::Peer<RoleClient>),
            Raw(RawCaller),
        }
        let workers: Vec<Worker> = (0..depth)
            .map(|w| match which {
                0 => Worker::Ours(self.ours.clone()),
                1 | 2 => Worker::Rmcp(self.rmcp(which).peer().clone()),
                _ => Worker::Raw(self.raw.caller(w)),
            })
            .collect();
        let start = Instant::now();
        let returned = self.rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for worker in workers {
                set.spawn(async move {
                    match worker {
                        Worker::Ours(client) => {
                            for _ in 0..per_worker {
                                call_ours(&client).await;
                            }
                            None
                        }
                        Worker::Rmcp(peer) => {
                            for _ in 0..per_worker {
                                call_rmcp(&peer).await;
                            }
                            None
                        }
                        Worker::Raw(mut caller) => {
                            for _ in 0..per_worker {
                                caller.call().await;
                            }
                            Some(caller)
                        }
                    }
                });
            }
            let mut back = Vec::new();
            while let Some(done) = set.join_next().await {
                back.extend(done.expect("a worker panicked"));
            }
            back
        });
        let time = start.elapsed();
        for caller in returned {
            self.raw.give_back(caller);
        }
        Ok(time)
    }

    fn close(self) {
        let Contenders { rt, server: _server, ours, rmcp_default, rmcp_pooled, raw } = self;
        rt.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), ours.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp_default.cancel()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp_pooled.cancel()).await;
            drop(raw);
        });
        drop(rt);
    }
}

fn sequential(config: &Config) -> Result<String, String> {
    let mut notes = String::new();
    let mut table = String::from(
        "| server | reply | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let replies = learn_replies(&config.testkit, config.era)?;
    for (server, &reply) in
        config.servers.iter().flat_map(|s| config.replies.iter().map(move |r| (*s, r)))
    {
        let (calls, rounds, warm, phases) = config.seq_counts(reply, server);
        notes.push_str(&format!(
            "{}, {reply}: {calls} sequential calls per client per round after {warm} warm-up calls, medians of {rounds} rounds. ",
            server.label()
        ));
        for &pinned in phases {
            if pinned {
                pin_to_cpu0()?;
            } else {
                unpin()?;
            }
            let mut c = Contenders::start(config, server, reply, 1, &replies)?;
            let mut lat = Vec::with_capacity(calls);
            for which in 0..4 {
                c.sequential(which, warm, &mut lat);
                lat.clear();
            }
            let mut p50 = vec![Vec::new(); 4];
            let mut p99 = vec![Vec::new(); 4];
            let mut rates = vec![Vec::new(); 4];
            let mut cpus = vec![Vec::new(); 4];
            for round in 0..rounds {
                eprintln!(
                    "http-bench: sequential {} {reply} pinned={pinned} round {}/{rounds}",
                    server.label(),
                    round + 1
                );
                for which in 0..4 {
                    lat.clear();
                    let cpu0 = cpu_time();
                    let start = Instant::now();
                    c.sequential(which, calls, &mut lat);
                    let wall = start.elapsed();
                    let cpu = cpu_time().saturating_sub(cpu0);
                    rates[which].push(calls as f64 / wall.as_secs_f64());
                    cpus[which].push(cpu.as_secs_f64() * 1e6 / calls as f64);
                    p50[which].push(quantile(&mut lat, 0.5).as_secs_f64() * 1e6);
                    p99[which].push(quantile(&mut lat, 0.99).as_secs_f64() * 1e6);
                }
            }
            c.close();
            let m50: Vec<f64> = p50.iter().map(|v| median_f64(v)).collect();
            for which in 0..4 {
                table.push_str(&format!(
                    "| {} | {reply} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    server.label(),
                    if pinned { "pinned (1 CPU)" } else { "unpinned" },
                    NAMES[which],
                    us_f64(m50[which]),
                    us_f64(median_f64(&p99[which])),
                    rate(median_f64(&rates[which])),
                    us_f64(median_f64(&cpus[which])),
                    ratio(m50[which], m50[3]),
                    ratio(m50[which], m50[0]),
                ));
            }
        }
    }
    unpin()?;
    table.push_str(&format!(
        "\n{notes}The clients take turns within each round; \
         one server per phase: `mcp-testkit http --reply json|sse` (the real server), or the fixed-reply answerer \
         (`http-bench answer`: a hyper HTTP/1.1 server on one current-thread runtime, TCP_NODELAY, answering each POST with the testkit's own reply bytes, \
         only the `id` value spliced in by a byte search, no JSON; 405 to GET), which isolates the clients. Client CPU: user + system time of the benchmark process per call. \
         rmcp default: `StreamableHttpClientTransport::from_uri` (its reqwest client keeps no idle connection); \
         rmcp pooled: `with_client` given a kept-alive `reqwest::Client` and `max_concurrent_requests({MAX_DEPTH})`. \
         All clients on a current-thread Tokio runtime. {}\n",
        era_note(config.era)
    ));
    Ok(table)
}

/// What a table's notes say of the era it was measured in.
fn era_note(era: Era) -> String {
    match era {
        Era::Legacy => format!(
            "Era: every contender pinned to the handshake era ({}; ours with `EraChoice::Legacy`, so no `server/discover` probe before `initialize`): \
             one session per client, `Mcp-Session-Id` and `MCP-Protocol-Version` on every POST.",
            era.revision()
        ),
        Era::Modern => format!(
            "Era: every contender pinned to the stateless era ({rev}; ours with `EraChoice::Modern`, rmcp with `ClientLifecycleMode::Discover`, \
             the server `mcp-testkit http --era modern`): one `server/discover` at start-up, no session, and every POST carries \
             `MCP-Protocol-Version: {rev}`, `Mcp-Method` and `Mcp-Name` headers and the `_meta` members (protocol version, client capabilities, \
             client info; raw hyper sends the same headers and members); every result carries `resultType`.",
            rev = era.revision()
        ),
    }
}

fn throughput(config: &Config) -> Result<String, String> {
    unpin()?;
    let depths = [1usize, 16, MAX_DEPTH];
    let mut notes = String::new();
    let mut cpu_table = String::new();
    let mut table = String::from(
        "| server | reply | in flight | mcp-http (ours) calls/s | rmcp default calls/s | rmcp pooled calls/s | raw hyper calls/s | ours / rmcp default | ours / rmcp pooled | ours / raw |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let replies = learn_replies(&config.testkit, config.era)?;
    for (server, &reply) in
        config.servers.iter().flat_map(|s| config.replies.iter().map(move |r| (*s, r)))
    {
        let (calls, rounds) = config.thr_counts(reply, server);
        notes.push_str(&format!(
            "{}, {reply}: {calls} calls per client per depth per round, medians of {rounds} rounds. ",
            server.label()
        ));
        let mut c = Contenders::start(config, server, reply, config.server_threads, &replies)?;
        for which in 0..4 {
            for &depth in &depths {
                c.in_flight(which, 256.min(calls), depth)?;
            }
        }
        let mut rates = vec![vec![Vec::new(); 4]; depths.len()];
        // At the deepest level: client and server CPU per call, summed over the rounds.
        let mut cpu = [(Duration::ZERO, Duration::ZERO, 0usize); 4];
        let server_pid = c.server.pid();
        for round in 0..rounds {
            eprintln!(
                "http-bench: throughput {} {reply} round {}/{rounds}",
                server.label(),
                round + 1
            );
            for (d, &depth) in depths.iter().enumerate() {
                for (which, per_client) in rates[d].iter_mut().enumerate() {
                    let (client0, server0) = (cpu_time(), process_cpu_time(server_pid));
                    let time = c.in_flight(which, calls, depth)?;
                    let done = calls / depth * depth;
                    per_client.push(done as f64 / time.as_secs_f64());
                    if depth == MAX_DEPTH {
                        let server = process_cpu_time(server_pid)
                            .zip(server0)
                            .map_or(Duration::ZERO, |(b, a)| b.saturating_sub(a));
                        cpu[which].0 += cpu_time().saturating_sub(client0);
                        cpu[which].1 += server;
                        cpu[which].2 += done;
                    }
                }
            }
        }
        c.close();
        let per_call = |t: Duration, n: usize| t.as_secs_f64() * 1e6 / n.max(1) as f64;
        let names = ["mcp-http (ours)", "rmcp default", "rmcp pooled", "raw hyper"];
        cpu_table.push_str(&format!(
            "\n| server | reply | client at {MAX_DEPTH} in flight | client CPU µs/call | server CPU µs/call | total µs/call | calls/s two CPUs allow (2 / total) |\n|---|---|---|---:|---:|---:|---:|\n"
        ));
        for (which, name) in names.iter().enumerate() {
            let (client, server_cpu, n) = cpu[which];
            let (client, server_cpu) = (per_call(client, n), per_call(server_cpu, n));
            cpu_table.push_str(&format!(
                "| {} | {reply} | {name} | {} | {} | {} | {} |\n",
                server.label(),
                us_f64(client),
                us_f64(server_cpu),
                us_f64(client + server_cpu),
                rate(2e6 / (client + server_cpu).max(f64::MIN_POSITIVE)),
            ));
        }
        for (d, depth) in depths.iter().enumerate() {
            let m: Vec<f64> = rates[d].iter().map(|r| median_f64(r)).collect();
            table.push_str(&format!(
                "| {} | {reply} | {depth} | {} | {} | {} | {} | {} | {} | {} |\n",
                server.label(),
                rate(m[0]),
                rate(m[1]),
                rate(m[2]),
                rate(m[3]),
                ratio(m[0], m[1]),
                ratio(m[0], m[2]),
                ratio(m[0], m[3]),
            ));
        }
    }
    table.push_str(&format!(
        "\n{notes}Unpinned, the clients taking turns within each round: `depth` Tokio tasks \
         calling in a loop on one current-thread runtime; raw hyper uses one kept-alive connection per task. \
         Servers: the fixed-reply answerer (as above) and `mcp-testkit http` on {} (`--server-threads`). {}\n",
        if config.server_threads > 1 {
            format!("{} worker threads", config.server_threads)
        } else {
            "one current-thread runtime".to_owned()
        },
        era_note(config.era)
    ));
    table.push_str(&cpu_table);
    table.push_str(
        "\nCPU at the deepest level, over all rounds: the benchmark process's user + system time \
         (client) and the server process's (`/proc/<pid>/stat`, 10 ms ticks) per call. \
         Client and server share the machine's two CPUs, so no client can exceed 2 / (its client CPU + the server's CPU per call) calls per second.\n",
    );
    Ok(table)
}

fn startup(config: &Config) -> Result<String, String> {
    unpin()?;
    let (starts, rounds) = if config.quick { (2, 1) } else { (20, 5) };
    let servers = [
        HttpServer::start(&config.testkit, Era::Legacy.testkit_args())?,
        HttpServer::start(&config.testkit, Era::Modern.testkit_args())?,
    ];
    let rt = runtime();
    let shared = pooled_reqwest();
    // Ours with a pool every one of its clients shares, as rmcp pooled
    // shares its `reqwest::Client`.
    let pool = HttpPool::new(&HttpOptions::new("bench")).map_err(|e| e.to_string())?;
    // Contenders 0-3: ours, rmcp default, rmcp pooled, raw on the
    // handshake-era server; 4-7 the same on the stateless one; 8: ours
    // left to probe (`EraChoice::Auto`, the default) on the handshake-era
    // server; 9 and 10: ours with the shared pool, in each era.
    let mut times: [Vec<f64>; 11] = Default::default();
    let once = |which: usize| -> Result<Duration, String> {
        let era = if (4..8).contains(&which) || which == 10 { Era::Modern } else { Era::Legacy };
        let url = &servers[usize::from(era == Era::Modern)].url;
        rt.block_on(async {
            let start = Instant::now();
            let time = match which % 4 {
                _ if which >= 9 => {
                    let choice =
                        if era == Era::Modern { EraChoice::Modern } else { EraChoice::Legacy };
                    let client = connect_ours_in(url, choice, Some(&pool)).await?;
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    time
                }
                0 => {
                    let client = if which == 8 {
                        connect_ours_with(url, EraChoice::Auto).await?
                    } else {
                        connect_ours(url, era).await?
                    };
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    time
                }
                1 | 2 => {
                    let client = if which % 4 == 1 {
                        connect_rmcp_default(url, era).await?
                    } else {
                        connect_rmcp_pooled(url, shared.clone(), era).await?
                    };
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
                    time
                }
                _ => {
                    let raw = Raw::connect(url, era).await?;
                    let time = start.elapsed();
                    drop(raw);
                    time
                }
            };
            Ok(time)
        })
    };
    for which in 0..times.len() {
        once(which)?;
    }
    for round in 0..rounds {
        eprintln!("http-bench: startup round {}/{rounds}", round + 1);
        for _ in 0..starts {
            for (which, t) in times.iter_mut().enumerate() {
                t.push(once(which)?.as_secs_f64());
            }
        }
    }
    drop(servers);
    let m: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    let row = |label: &str, m: &[f64]| {
        format!(
            "| {label} | {} ms | {} ms | {} ms | {} ms | {} | {} |\n",
            d(m[0]),
            d(m[1]),
            d(m[2]),
            d(m[3]),
            ratio(m[1], m[0]),
            ratio(m[0], m[3]),
        )
    };
    Ok(format!(
        "| transport | mcp-http (ours) | rmcp default | rmcp pooled (client shared) | raw hyper | rmcp default / ours | ours / raw |\n|---|---:|---:|---:|---:|---:|---:|\n\
         {}{}\n\
         Ours left to find the era (`EraChoice::Auto`, the default) on the handshake-era server: {} ms. Over HTTP the client \
         remembers a handshake-era origin for the life of the process, so only the first client of a process pays the \
         `server/discover` round trip; the median here is of later clients.\n\n\
         | second client, same origin, shared pool | mcp-http (ours, one `HttpPool`) | rmcp pooled (one `reqwest::Client`) | rmcp pooled / ours |\n|---|---:|---:|---:|\n\
         | handshake era: new client + initialize | {} ms | {} ms | {} |\n\
         | stateless era: new client + `server/discover` | {} ms | {} ms | {} |\n",
        row(
            "HTTP: new client + initialize (+ `initialized`; all pinned to the handshake era)",
            &m[0..4]
        ),
        row(
            "HTTP: new client + `server/discover` (`--era modern`; all pinned to the stateless era)",
            &m[4..8]
        ),
        d(m[8]),
        d(m[9]),
        d(m[2]),
        ratio(m[2], m[9]),
        d(m[10]),
        d(m[6]),
        ratio(m[6], m[10]),
    ))
}

/// `hold ours|rmcp|rmcp-pooled N URL`: a process that opens N sessions
/// (initialized, then idle) and prints `baseline_rss hwm rss` in bytes.
fn hold(args: &[String]) -> Result<(), String> {
    let which = args.first().map(String::as_str).unwrap_or("ours");
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10).min(2000);
    let url = args.get(2).ok_or("hold: no URL")?.clone();
    let rt = runtime();
    rt.block_on(async {
        let shared = pooled_reqwest();
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let add = async |ours: &mut Vec<HttpClient>, theirs: &mut Vec<Rmcp>| {
            match which {
                "ours" => ours.push(connect_ours(&url, Era::Legacy).await?),
                "rmcp" => theirs.push(connect_rmcp_default(&url, Era::Legacy).await?),
                _ => theirs.push(connect_rmcp_pooled(&url, shared.clone(), Era::Legacy).await?),
            }
            Ok::<(), String>(())
        };
        add(&mut ours, &mut theirs).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        for _ in 0..n {
            add(&mut ours, &mut theirs).await?;
        }
        // Idle: let background work (streams, pools) settle.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let hwm = status_bytes(None, "VmHWM").ok_or("no VmHWM")?;
        let rss = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        println!("{before} {hwm} {rss}");
        drop(ours);
        drop(theirs);
        Ok(())
    })
}

fn memory(config: &Config) -> Result<String, String> {
    let (n, rounds) = if config.quick { (20, 1) } else { (1_000, 3) };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let kinds = ["ours", "rmcp", "rmcp-pooled"];
    let mut per: [Vec<f64>; 3] = Default::default();
    let mut hwms: [Vec<f64>; 3] = Default::default();
    let mut server_per: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        eprintln!("http-bench: memory round {}/{rounds}", round + 1);
        for (i, which) in kinds.iter().enumerate() {
            let server = HttpServer::start(&config.testkit, &[])?;
            let server_before = status_bytes(Some(server.pid()), "VmRSS").unwrap_or(0) as f64;
            let out = Command::new(&exe)
                .args(["hold", which, &n.to_string(), &server.url])
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| e.to_string())?;
            let server_after = status_bytes(Some(server.pid()), "VmHWM").unwrap_or(0) as f64;
            let text = String::from_utf8_lossy(&out.stdout);
            let nums: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            if !out.status.success() || nums.len() != 3 {
                return Err(format!("hold {which} failed: {text}"));
            }
            per[i].push((nums[1] - nums[0]) / n as f64);
            hwms[i].push(nums[1]);
            server_per[i].push((server_after - server_before) / n as f64);
        }
    }
    let m = |v: &[f64]| median_f64(v);
    Ok(format!(
        "| measure | mcp-http (ours) | rmcp default | rmcp pooled (one shared client) | rmcp default / ours |\n|---|---:|---:|---:|---:|\n\
         | peak RSS (VmHWM) of the process holding {n} idle sessions | {} | {} | {} | {} |\n\
         | client memory per idle session ((VmHWM − baseline) / {n}) | {} | {} | {} | {} |\n\
         | (for reference) testkit server growth per session | {} | {} | {} | – |\n\n\
         A process opens one session (baseline VmRSS), then {n} more (each a new client, initialized, then left idle), and reads its VmHWM; medians of {rounds} rounds, a fresh server each time.\n",
        mib(m(&hwms[0])),
        mib(m(&hwms[1])),
        mib(m(&hwms[2])),
        ratio(m(&hwms[1]), m(&hwms[0])),
        kib(m(&per[0])),
        kib(m(&per[1])),
        kib(m(&per[2])),
        ratio(m(&per[1]), m(&per[0])),
        kib(m(&server_per[0])),
        kib(m(&server_per[1])),
        kib(m(&server_per[2])),
    ))
}

/// `--profile json|sse|raw N`: N sequential calls of ours (or of the raw
/// hyper POSTs), for callgrind. `--profile start|start-raw N`: N start-ups
/// in the era of `--era` (a new client and its handshake or
/// `server/discover`, then closed; or raw hyper's), for callgrind and
/// `strace`; each start's time goes to stderr with `--times`.
fn profile(config: &Config, mode: &str, n: usize) -> Result<(), String> {
    // `raw` profiles the raw hyper POSTs (JSON replies) for comparison.
    let reply = if matches!(mode, "raw" | "start" | "start-raw") { "json" } else { mode };
    let mut args = vec!["--reply", reply];
    args.extend(config.era.testkit_args());
    let server = HttpServer::start(&config.testkit, &args)?;
    let rt = runtime();
    rt.block_on(async {
        if let "start" | "start-raw" = mode {
            let times = std::env::args().any(|a| a == "--times");
            for _ in 0..n.min(100_000) {
                let start = Instant::now();
                if mode == "start" {
                    let client = connect_ours(&server.url, config.era).await?;
                    let took = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    if times {
                        eprintln!("{}", took.as_micros());
                    }
                } else {
                    let raw = Raw::connect(&server.url, config.era).await?;
                    let took = start.elapsed();
                    drop(raw);
                    if times {
                        eprintln!("{}", took.as_micros());
                    }
                }
            }
            return Ok(());
        }
        if mode == "raw" {
            let mut raw = Raw::connect(&server.url, config.era).await?;
            raw.ensure_connections(1).await?;
            let mut caller = raw.caller(0);
            for _ in 0..n.min(1_000_000) {
                caller.call().await;
            }
            raw.give_back(caller);
            return Ok(());
        }
        let client = connect_ours(&server.url, config.era).await?;
        for _ in 0..n.min(1_000_000) {
            call_ours(&client).await;
        }
        let _ = client.close().await;
        Ok(())
    })
}
