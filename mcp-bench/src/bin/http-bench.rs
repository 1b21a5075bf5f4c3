//! `http-bench`: `mcp-http` against rmcp's Streamable HTTP client (its
//! default, and with a pooled `reqwest::Client` passed in) and the raw limit
//! (plain hyper POSTs of the same bytes on kept-alive connections), all on
//! the same `mcp-testkit http` server binary, alternating clients within
//! each round.
//!
//! Usage: `http-bench [--quick] [--server PATH] [--server-threads N] seq|throughput|startup|memory`
//! prints one Markdown table on stdout (progress on stderr). Hidden modes:
//! `hold ours|rmcp|rmcp-pooled N URL` (a process holding N initialized idle
//! sessions; prints its memory) and `--profile json|sse|raw N` (N sequential
//! calls of ours, or of raw hyper, for callgrind). With
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
use mcp_bench::proc::{
    HttpServer, cpu_time, pin_to_cpu0, process_cpu_time, status_bytes, testkit_path, unpin,
};
use mcp_bench::report::{kib, median_f64, mib, ms, quantile, rate, ratio, us_f64};
use mcp_http::{HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_proto::types::JsonObject;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::runtime::Runtime;

/// The echoed message: the size of a short tool argument.
const MESSAGE: &str = "the quick brown fox jumps over the lazy dog";
/// The protocol revision the raw client speaks.
const REVISION: &str = "2025-11-25";
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
}

impl Config {
    /// Sequential: calls per round, rounds, warm-up calls, pinned phases.
    fn seq_counts(&self, reply: &str) -> (usize, usize, usize, &'static [bool]) {
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
    fn thr_counts(&self, reply: &str) -> (usize, usize) {
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
                    || !["--server", "--reply", "--server-threads"].contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.as_str());
    let table = match what {
        Some("seq") => sequential(&config)?,
        Some("throughput") => throughput(&config)?,
        Some("startup") => startup(&config)?,
        Some("memory") => memory(&config)?,
        _ => {
            return Err(
                "usage: http-bench [--quick] [--server PATH] [--server-threads N] seq|throughput|startup|memory".into(),
            );
        }
    };
    print!("{table}");
    Ok(())
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime")
}

fn echo_args() -> JsonObject {
    let mut args = JsonObject::new();
    args.insert("message".into(), Value::String(MESSAGE.into()));
    args
}

async fn connect_ours(url: &str) -> Result<HttpClient, String> {
    let mut o = HttpOptions::new("bench");
    o.event_stream = std::env::var_os("BENCH_NO_EVENT_STREAM").is_none();
    let client = HttpClient::connect(url, o).map_err(|e| format!("ours: {e}"))?;
    client.initialize().await.map_err(|e| format!("ours: initialize: {e}"))?;
    Ok(client)
}

type Rmcp = RunningService<RoleClient, ()>;

async fn connect_rmcp_default(url: &str) -> Result<Rmcp, String> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    ().serve(transport).await.map_err(|e| format!("rmcp: initialize: {e}"))
}

/// A kept-alive, pooled `reqwest::Client`, as BENCH-NOTES describes rmcp's
/// best configuration.
fn pooled_reqwest() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("a reqwest client")
}

async fn connect_rmcp_pooled(url: &str, client: reqwest::Client) -> Result<Rmcp, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .max_concurrent_requests(MAX_DEPTH);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    ().serve(transport).await.map_err(|e| format!("rmcp pooled: initialize: {e}"))
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
    session: String,
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

fn raw_request(
    authority: &str,
    path: &str,
    session: Option<&str>,
    body: String,
) -> hyper::Request<Full<Bytes>> {
    let mut builder = hyper::Request::post(path)
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        builder =
            builder.header("mcp-session-id", session).header("mcp-protocol-version", REVISION);
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

fn call_body(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"{MESSAGE}\"}}}}}}"
    )
}

impl Raw {
    async fn connect(url: &str) -> Result<Raw, String> {
        let rest = url.strip_prefix("http://").ok_or("raw: not an http:// URL")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (authority, path) =
            (authority.to_owned(), if path.is_empty() { "/" } else { path }.to_owned());
        let addr = authority.clone();
        let mut send = raw_connection(&addr).await?;
        let init = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{REVISION}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"raw\",\"version\":\"0\"}}}}}}"
        );
        let (status, session, _) =
            raw_post(&mut send, raw_request(&authority, &path, None, init)).await?;
        let session =
            session.filter(|_| status == 200).ok_or(format!("raw: initialize got {status}"))?;
        let initialized =
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}".to_owned();
        let (status, _, _) =
            raw_post(&mut send, raw_request(&authority, &path, Some(&session), initialized))
                .await?;
        if status != 202 {
            return Err(format!("raw: notifications/initialized got {status}"));
        }
        Ok(Raw {
            authority,
            path,
            addr,
            session,
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
    session: String,
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
        let request = raw_request(&self.authority, &self.path, Some(&self.session), call_body(id));
        match raw_post(&mut self.send, request).await {
            Ok((200, _, body)) if body.len() > MESSAGE.len() => {}
            Ok((status, _, body)) => {
                panic!("raw: echo got {status}: {}", String::from_utf8_lossy(&body))
            }
            Err(e) => panic!("{e}"),
        }
    }
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
    fn start(testkit: &Path, reply: &str, threads: usize) -> Result<Contenders, String> {
        let threads = threads.to_string();
        let server = HttpServer::start(testkit, &["--reply", reply, "--threads", &threads])?;
        let rt = runtime();
        let url = server.url.clone();
        let (ours, rmcp_default, rmcp_pooled, raw) = rt.block_on(async {
            Ok::<_, String>((
                connect_ours(&url).await?,
                connect_rmcp_default(&url).await?,
                connect_rmcp_pooled(&url, pooled_reqwest()).await?,
                Raw::connect(&url).await?,
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
        "| reply | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for &reply in &config.replies {
        let (calls, rounds, warm, phases) = config.seq_counts(reply);
        notes.push_str(&format!(
            "{reply}: {calls} sequential calls per client per round after {warm} warm-up calls, medians of {rounds} rounds. "
        ));
        for &pinned in phases {
            if pinned {
                pin_to_cpu0()?;
            } else {
                unpin()?;
            }
            let mut c = Contenders::start(&config.testkit, reply, 1)?;
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
                    "http-bench: sequential {reply} pinned={pinned} round {}/{rounds}",
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
                    "| {reply} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
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
         one `mcp-testkit http --reply json|sse` server per phase. Client CPU: user + system time of the benchmark process per call. \
         rmcp default: `StreamableHttpClientTransport::from_uri` (its reqwest client keeps no idle connection); \
         rmcp pooled: `with_client` given a kept-alive `reqwest::Client` and `max_concurrent_requests({MAX_DEPTH})`. \
         All clients on a current-thread Tokio runtime.\n"
    ));
    Ok(table)
}

fn throughput(config: &Config) -> Result<String, String> {
    unpin()?;
    let depths = [1usize, 16, MAX_DEPTH];
    let mut notes = String::new();
    let mut cpu_table = String::new();
    let mut table = String::from(
        "| reply | in flight | mcp-http (ours) calls/s | rmcp default calls/s | rmcp pooled calls/s | raw hyper calls/s | ours / rmcp default | ours / rmcp pooled | ours / raw |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for &reply in &config.replies {
        let (calls, rounds) = config.thr_counts(reply);
        notes.push_str(&format!(
            "{reply}: {calls} calls per client per depth per round, medians of {rounds} rounds. "
        ));
        let mut c = Contenders::start(&config.testkit, reply, config.server_threads)?;
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
            eprintln!("http-bench: throughput {reply} round {}/{rounds}", round + 1);
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
            "\n| reply | client at {MAX_DEPTH} in flight | client CPU µs/call | server CPU µs/call | total µs/call | calls/s two CPUs allow (2 / total) |\n|---|---|---:|---:|---:|---:|\n"
        ));
        for (which, name) in names.iter().enumerate() {
            let (client, server, n) = cpu[which];
            let (client, server) = (per_call(client, n), per_call(server, n));
            cpu_table.push_str(&format!(
                "| {reply} | {name} | {} | {} | {} | {} |\n",
                us_f64(client),
                us_f64(server),
                us_f64(client + server),
                rate(2e6 / (client + server).max(f64::MIN_POSITIVE)),
            ));
        }
        for (d, depth) in depths.iter().enumerate() {
            let m: Vec<f64> = rates[d].iter().map(|r| median_f64(r)).collect();
            table.push_str(&format!(
                "| {reply} | {depth} | {} | {} | {} | {} | {} | {} | {} |\n",
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
         Server: `mcp-testkit http` on {} (`--server-threads`).\n",
        if config.server_threads > 1 {
            format!("{} worker threads", config.server_threads)
        } else {
            "one current-thread runtime".to_owned()
        }
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
    let server = HttpServer::start(&config.testkit, &[])?;
    let url = server.url.clone();
    let rt = runtime();
    let shared = pooled_reqwest();
    let mut times: [Vec<f64>; 4] = Default::default();
    let once = |which: usize| -> Result<Duration, String> {
        rt.block_on(async {
            let start = Instant::now();
            let time = match which {
                0 => {
                    let client = connect_ours(&url).await?;
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    time
                }
                1 | 2 => {
                    let client = if which == 1 {
                        connect_rmcp_default(&url).await?
                    } else {
                        connect_rmcp_pooled(&url, shared.clone()).await?
                    };
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
                    time
                }
                _ => {
                    let raw = Raw::connect(&url).await?;
                    let time = start.elapsed();
                    drop(raw);
                    time
                }
            };
            Ok(time)
        })
    };
    for which in 0..4 {
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
    drop(server);
    let m: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    Ok(format!(
        "| transport | mcp-http (ours) | rmcp default | rmcp pooled (client shared) | raw hyper | rmcp default / ours | ours / raw |\n|---|---:|---:|---:|---:|---:|---:|\n\
         | HTTP: new client + initialize (+ `initialized`) | {} ms | {} ms | {} ms | {} ms | {} | {} |\n",
        d(m[0]),
        d(m[1]),
        d(m[2]),
        d(m[3]),
        ratio(m[1], m[0]),
        ratio(m[0], m[3]),
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
                "ours" => ours.push(connect_ours(&url).await?),
                "rmcp" => theirs.push(connect_rmcp_default(&url).await?),
                _ => theirs.push(connect_rmcp_pooled(&url, shared.clone()).await?),
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
/// hyper POSTs), for callgrind.
fn profile(config: &Config, mode: &str, n: usize) -> Result<(), String> {
    // `raw` profiles the raw hyper POSTs (JSON replies) for comparison.
    let reply = if mode == "raw" { "json" } else { mode };
    let server = HttpServer::start(&config.testkit, &["--reply", reply])?;
    let rt = runtime();
    rt.block_on(async {
        if mode == "raw" {
            let mut raw = Raw::connect(&server.url).await?;
            raw.ensure_connections(1).await?;
            let mut caller = raw.caller(0);
            for _ in 0..n.min(1_000_000) {
                caller.call().await;
            }
            raw.give_back(caller);
            return Ok(());
        }
        let client = connect_ours(&server.url).await?;
        for _ in 0..n.min(1_000_000) {
            call_ours(&client).await;
        }
        let _ = client.close().await;
        Ok(())
    })
}
