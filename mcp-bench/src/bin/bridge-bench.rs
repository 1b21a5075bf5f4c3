//! `bridge-bench`: `mcpc serve` against the Node bridges `mcp-remote` and
//! `supergateway`, each bridging the same `mcp-testkit` server the same
//! way, and against calling that server directly; one client (ours) drives
//! every path, so only the bridge differs.
//!
//! Usage: `bridge-bench [--quick] --server TESTKIT --mcpc MCPC (--node NODE
//! --bridges DIR | --no-node) [--scenario KEY]... latency|startup|soak
//! [--seconds N]` prints Markdown on stdout (progress on stderr). `DIR`
//! holds the pinned npm packages (`node_modules/mcp-remote`,
//! `node_modules/supergateway`); `NODE` is the Node.js they run on;
//! `--no-node` leaves their rows out. `--scenario stdio-http|stdio-stdio|http-stdio`
//! runs only the scenarios named (default: all three).
//!
//! The upstream server is `mcp-testkit` (the real server) rather than the
//! fixed-reply answerer: it is the one server that answers both over stdio
//! and over Streamable HTTP with the same handler, so every scenario has the
//! same server behind it, and its own cost cancels out of the added latency
//! (bridge p50 − direct p50).
//!
//! - `latency`: per scenario, sequential and 16-in-flight p50 per call of
//!   each path, pinned (client, bridge and server on CPU 0) and unpinned.
//!   stdio to stdio has the floor beside `mcpc serve`: a byte relay
//!   (`relay`, this same executable) that parses nothing.
//! - `startup`: spawn of the bridge to the first `tools/list` answer through
//!   it, and the bridge process's RSS once idle.
//! - `soak`: 64 calls in flight through `mcpc serve` to a stdio server for
//!   `--seconds` (600 by default), sampling the bridge's RSS, descriptors and
//!   threads; exits 1 when they grow past the bounds.
//! - `relay [--threads] -- PROGRAM ARGS...`: the byte relay itself.
//! - `drive [--calls N] [--pin] -- PROGRAM ARGS...`: N sequential calls
//!   through any command line (a bridge under `valgrind --tool=callgrind`,
//!   say), printing their p50 and the spawned process's CPU time and
//!   context switches per call.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_bench::proc::{HttpServer, pin_to_cpu0, status_bytes, testkit_path, unpin};
use mcp_bench::report::{kib, median_f64, mib, ms, quantile, ratio, us_f64};
use mcp_bench::{echo_args, runtime};
use mcp_client_stdio::mcp_peer::EraChoice;
use mcp_client_stdio::{ServerCommand, StdioClient, StdioOptions};
use mcp_http::{HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;

/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(40 * 60);

/// Calls in flight in the concurrent rows.
const DEPTH: usize = 16;

/// Calls in flight in the soak.
const SOAK_DEPTH: usize = 64;

/// The most the bridge's RSS may grow over the soak, after its warm-up.
const RSS_DRIFT: u64 = 1024 * 1024;

/// Threads the bridge may add over the soak: the runtime's blocking pool
/// (stdin, stdout, the server's pipes) starts one more when all of its
/// threads are busy and keeps it while it is used; a leak grows past this.
const THREAD_SLACK: usize = 2;

/// How long a bridge's HTTP port may take to open.
const PORT_WAIT: Duration = Duration::from_secs(20);

const USAGE: &str = "usage: bridge-bench [--quick] --server TESTKIT --mcpc MCPC (--node NODE --bridges DIR | --no-node) \
                     [--scenario stdio-http|stdio-stdio|http-stdio]... latency|startup|soak [--seconds N]\n\
                     \x20      bridge-bench relay [--threads] -- PROGRAM ARGS...\n\
                     \x20      bridge-bench drive [--calls N] [--pin] -- PROGRAM ARGS...";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    mcp_bench::proc::watchdog(WALL_LIMIT);
    if let Err(e) = run(&args) {
        eprintln!("bridge-bench: {e}");
        std::process::exit(1);
    }
}

/// Where everything is.
struct Config {
    quick: bool,
    testkit: PathBuf,
    mcpc: PathBuf,
    /// Node.js and the directory of the pinned Node bridges; `None` with
    /// `--no-node` (their rows are left out).
    node: Option<(PathBuf, PathBuf)>,
    /// Whether this `mcpc` has `serve --http`.
    mcpc_http: bool,
    /// The scenarios asked for (`--scenario KEY`, repeatable); empty: all.
    only: Vec<String>,
}

/// The scenarios' keys for `--scenario`, in the order they run.
const SCENARIO_KEYS: [&str; 3] = ["stdio-http", "stdio-stdio", "http-stdio"];

impl Config {
    /// `node_modules/<package>/<file>` of the pinned bridges, and the Node.js
    /// to run it; `None` with `--no-node`.
    fn node_script(&self, script: &str) -> Option<(PathBuf, String)> {
        let (node, dir) = self.node.as_ref()?;
        let path = dir.join("node_modules").join(script);
        Some((node.clone(), path.to_string_lossy().into_owned()))
    }

    fn mcp_remote(&self) -> Option<(PathBuf, String)> {
        self.node_script("mcp-remote/dist/proxy.js")
    }

    fn supergateway(&self) -> Option<(PathBuf, String)> {
        self.node_script("supergateway/dist/index.js")
    }

    /// Whether the scenario `key` is asked for.
    fn wants(&self, key: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|k| k == key)
    }

    /// The testkit's stdio server as one shell-quoted command line.
    fn stdio_server_line(&self) -> String {
        format!("{} stdio", shell_quote(&self.testkit.to_string_lossy()))
    }
}

fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(String::as_str)
}

fn run(args: &[String]) -> Result<(), String> {
    // The helpers run as this same executable: no configuration needed.
    match args.first().map(String::as_str) {
        Some("relay") => {
            let (program, rest) = command_after_dashes(args)?;
            return relay::run(args.iter().any(|a| a == "--threads"), program, rest);
        }
        Some("drive") => return drive(args),
        _ => {}
    }
    let need = |flag: &str| {
        value_of(args, flag).map(PathBuf::from).ok_or_else(|| format!("{flag} is needed\n{USAGE}"))
    };
    let mcpc = need("--mcpc")?;
    let mcpc_http = Command::new(&mcpc)
        .args(["serve", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("--http"))
        .unwrap_or(false);
    let node = match args.iter().any(|a| a == "--no-node") {
        true => None,
        false => Some((need("--node")?, need("--bridges")?)),
    };
    let only: Vec<String> =
        args.windows(2).filter(|w| w[0] == "--scenario").map(|w| w[1].clone()).collect();
    if let Some(unknown) = only.iter().find(|k| !SCENARIO_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "--scenario takes one of {}, not {unknown:?}",
            SCENARIO_KEYS.join(", ")
        ));
    }
    let config = Config {
        quick: args.iter().any(|a| a == "--quick"),
        testkit: testkit_path(args),
        mcpc,
        node,
        mcpc_http,
        only,
    };
    let valued = ["--server", "--mcpc", "--node", "--bridges", "--seconds", "--scenario"];
    let what = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !valued.contains(&args[i - 1].as_str())))
        .map(|(_, a)| a.as_str());
    let out = match what {
        Some("latency") => latency(&config)?,
        Some("startup") => startup(&config)?,
        Some("soak") => {
            let default = if config.quick { 20 } else { 600 };
            let seconds = match value_of(args, "--seconds") {
                Some(s) => s.parse().map_err(|_| format!("--seconds takes a number, not {s:?}"))?,
                None => default,
            };
            soak(&config, seconds)?
        }
        _ => return Err(USAGE.into()),
    };
    print!("{out}");
    Ok(())
}

/// The command line after `--`: its program and arguments.
fn command_after_dashes(args: &[String]) -> Result<(&str, &[String]), String> {
    let at = args
        .iter()
        .position(|a| a == "--")
        .ok_or_else(|| format!("-- PROGRAM is needed\n{USAGE}"))?;
    match &args[at + 1..] {
        [program, rest @ ..] => Ok((program.as_str(), rest)),
        [] => Err(format!("a program is needed after --\n{USAGE}")),
    }
}

/// POSIX shell quoting of one word (for `--server "<command>"` specs).
fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@".contains(&b))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// How the client reaches the server: a command it spawns and speaks
/// stdio to, or a URL (of the server, or of a bridge it starts first).
#[derive(Clone)]
enum Reach {
    /// Spawn `program args` and speak stdio to it.
    Stdio { program: PathBuf, args: Vec<String> },
    /// Speak Streamable HTTP to this URL (a server already running).
    Url(String),
    /// Start `program args` (an HTTP-host bridge), learn its URL, then
    /// speak Streamable HTTP to it.
    HttpBridge { program: PathBuf, args: Vec<String>, url: BridgeUrl },
}

/// How an HTTP-host bridge's URL is learnt.
#[derive(Clone)]
enum BridgeUrl {
    /// From `mcpc: serving on URL` on its stderr.
    Stderr,
    /// A port chosen beforehand (given in its arguments), polled until open.
    Port(u16),
}

/// What stands between the client and the server on a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Nothing: the client speaks to the server itself.
    Direct,
    /// A process that copies bytes both ways and parses nothing (the
    /// least any process in the middle can add).
    Floor,
    /// A bridge.
    Bridge,
}

/// One way to the server, as a row calls it.
#[derive(Clone)]
struct Route {
    label: &'static str,
    role: Role,
    reach: Reach,
}

impl Route {
    /// Whether a process stands between the client and the server.
    fn in_between(&self) -> bool {
        self.role != Role::Direct
    }

    /// Whether the path is a bridge compared with mcpc's.
    fn bridge(&self) -> bool {
        self.role == Role::Bridge
    }
}

/// A connected client, and the bridge process behind it when there is one.
struct Conn {
    client: AnyClient,
    /// The bridge process this side started (HTTP-host bridges).
    child: Option<Child>,
}

#[derive(Clone)]
enum AnyClient {
    Stdio(StdioClient),
    Http(HttpClient),
}

impl AnyClient {
    async fn echo(&self) -> bool {
        let args = Some(echo_args());
        let ok = |r: &mcp_proto::types::CallToolResult| !r.is_error.unwrap_or(false);
        match self {
            AnyClient::Stdio(c) => c
                .call_tool_with("echo", args, RequestOptions::default())
                .await
                .is_ok_and(|r| ok(&r)),
            AnyClient::Http(c) => c
                .call_tool_with("echo", args, RequestOptions::default())
                .await
                .is_ok_and(|r| ok(&r)),
        }
    }

    async fn list_tools(&self) -> Result<usize, String> {
        match self {
            AnyClient::Stdio(c) => c.list_tools().await.map(|t| t.len()).map_err(|e| e.to_string()),
            AnyClient::Http(c) => c.list_tools().await.map(|t| t.len()).map_err(|e| e.to_string()),
        }
        .map_err(|e| format!("tools/list: {e}"))
    }

    async fn close(&self) {
        let limit = Duration::from_secs(5);
        match self {
            AnyClient::Stdio(c) => {
                let _ = tokio::time::timeout(limit, c.close()).await;
            }
            AnyClient::Http(c) => {
                let _ = tokio::time::timeout(limit, c.close()).await;
            }
        }
    }
}

impl Conn {
    /// The bridge's process id: the process the client spawned (stdio
    /// host), or the one started for an HTTP host.
    fn bridge_pid(&self) -> Option<u32> {
        match (&self.child, &self.client) {
            (Some(child), _) => Some(child.id()),
            (None, AnyClient::Stdio(c)) => c.transport().pid(),
            (None, AnyClient::Http(_)) => None,
        }
    }

    async fn close(mut self) {
        self.client.close().await;
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn connect(path: &Route) -> Result<Conn, String> {
    let label = path.label;
    match &path.reach {
        Reach::Stdio { program, args } => {
            let command = ServerCommand::new(program.to_string_lossy().into_owned())
                .args(args.iter().cloned());
            let mut options = StdioOptions::new("bench");
            options.client.era = EraChoice::Legacy;
            options.discover_path = false;
            let client = mcp_client_stdio::spawn(command, options)
                .await
                .map_err(|e| format!("{label}: spawn: {e}"))?;
            client.initialize().await.map_err(|e| format!("{label}: initialize: {e}"))?;
            Ok(Conn { client: AnyClient::Stdio(client), child: None })
        }
        Reach::Url(url) => Ok(Conn { client: http_client(label, url).await?, child: None }),
        Reach::HttpBridge { program, args, url } => {
            let mut command = Command::new(program);
            command.args(args).stdin(Stdio::null()).stdout(Stdio::null());
            let (child, url) = match url {
                BridgeUrl::Stderr => start_printing_url(command, label)?,
                BridgeUrl::Port(port) => {
                    let child = command
                        .stderr(Stdio::null())
                        .spawn()
                        .map_err(|e| format!("{label}: spawn: {e}"))?;
                    wait_for_port(*port).await.map_err(|e| format!("{label}: {e}"))?;
                    (child, format!("http://127.0.0.1:{port}/mcp"))
                }
            };
            match http_client(label, &url).await {
                Ok(client) => Ok(Conn { client, child: Some(child) }),
                Err(e) => {
                    kill(child);
                    Err(e)
                }
            }
        }
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

async fn http_client(label: &str, url: &str) -> Result<AnyClient, String> {
    let mut options = HttpOptions::new("bench");
    options.client.era = EraChoice::Legacy;
    let client = mcp_http::connect(url, options).map_err(|e| format!("{label}: {e}"))?;
    client.initialize().await.map_err(|e| format!("{label}: initialize: {e}"))?;
    Ok(AnyClient::Http(client))
}

/// Starts `command` and reads its stderr until `serving on URL` (within
/// [`PORT_WAIT`]); the rest of its stderr is drained.
fn start_printing_url(mut command: Command, label: &str) -> Result<(Child, String), String> {
    let mut child =
        command.stderr(Stdio::piped()).spawn().map_err(|e| format!("{label}: spawn: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        let mut sent = false;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_or(true, |n| n == 0) {
                break;
            }
            if !sent && let Some(at) = line.find("serving on ") {
                let _ = tx.send(line[at + "serving on ".len()..].trim().to_owned());
                sent = true;
            }
        }
    });
    match rx.recv_timeout(PORT_WAIT) {
        Ok(url) => Ok((child, url)),
        Err(_) => {
            kill(child);
            Err(format!("{label}: printed no `serving on URL` within {PORT_WAIT:?}"))
        }
    }
}

/// A loopback port free right now (bound, then let go).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("local_addr: {e}"))
}

async fn wait_for_port(port: u16) -> Result<(), String> {
    let deadline = Instant::now() + PORT_WAIT;
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("port {port} did not open within {PORT_WAIT:?}"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One comparison: the paths to one server, the first of them direct.
struct Scenario {
    title: &'static str,
    paths: Vec<Route>,
    /// What is left out of this scenario, and why.
    note: String,
    /// The HTTP server behind it, while it runs.
    _server: Option<HttpServer>,
}

/// The scenarios asked for (all three by default), each with its server
/// started (under the affinity of the caller's thread, so a pinned phase
/// pins the server too).
fn scenarios(config: &Config) -> Result<Vec<Scenario>, String> {
    let testkit = &config.testkit;
    let mcpc = &config.mcpc;
    let stdio_line = config.stdio_server_line();
    let mut out = Vec::new();

    // stdio host -> remote Streamable HTTP server.
    if config.wants("stdio-http") {
        let server = HttpServer::start(testkit, &[])?;
        let url = server.url.clone();
        let mut paths = vec![
            Route {
                label: "direct (ours over HTTP)",
                role: Role::Direct,
                reach: Reach::Url(url.clone()),
            },
            Route {
                label: "`mcpc serve --server URL`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: mcpc.clone(),
                    args: vec!["serve".into(), "--server".into(), url.clone()],
                },
            },
        ];
        if let Some((node, script)) = config.mcp_remote() {
            paths.push(Route {
                label: "`mcp-remote URL --transport http-only`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: node,
                    args: vec![
                        script,
                        url.clone(),
                        "--transport".into(),
                        "http-only".into(),
                        "--silent".into(),
                    ],
                },
            });
        }
        if let Some((node, script)) = config.supergateway() {
            paths.push(Route {
                label: "`supergateway --streamableHttp URL`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: node,
                    args: vec![
                        script,
                        "--streamableHttp".into(),
                        url.clone(),
                        "--logLevel".into(),
                        "none".into(),
                    ],
                },
            });
        }
        out.push(Scenario {
            title: "stdio host → Streamable HTTP server (`mcp-testkit http`)",
            paths,
            note: String::new(),
            _server: Some(server),
        });
    }

    // stdio host -> stdio server.
    if config.wants("stdio-stdio") {
        let relay_args = |threads: bool| -> Result<Reach, String> {
            let me = std::env::current_exe().map_err(|e| format!("this executable: {e}"))?;
            let mut args = vec!["relay".to_owned()];
            if threads {
                args.push("--threads".to_owned());
            }
            args.extend(["--".to_owned(), testkit.to_string_lossy().into_owned(), "stdio".into()]);
            Ok(Reach::Stdio { program: me, args })
        };
        out.push(Scenario {
            title: "stdio host → stdio server (`mcp-testkit stdio`)",
            paths: vec![
                Route {
                    label: "direct (ours over stdio)",
                    role: Role::Direct,
                    reach: Reach::Stdio { program: testkit.clone(), args: vec!["stdio".into()] },
                },
                Route {
                    label: "byte relay, no JSON: the floor (current-thread Tokio)",
                    role: Role::Floor,
                    reach: relay_args(false)?,
                },
                Route {
                    label: "byte relay, no JSON: the floor (two blocking threads)",
                    role: Role::Floor,
                    reach: relay_args(true)?,
                },
                Route {
                    label: "`mcpc serve --server \"<stdio server>\"`",
                    role: Role::Bridge,
                    reach: Reach::Stdio {
                        program: mcpc.clone(),
                        args: vec!["serve".into(), "--server".into(), stdio_line.clone()],
                    },
                },
            ],
            note: "Neither Node bridge has a stdio → stdio mode (`supergateway --stdio` serves \
                   SSE, WebSocket or Streamable HTTP; `mcp-remote` only reaches URLs): `mcpc serve` alone. \
                   The byte relay (`bridge-bench relay`) is the least any process in the middle can add: \
                   it copies the host's bytes to the server's stdin and the server's stdout back as they come, \
                   one read and one write per chunk, parsing nothing; on a current-thread Tokio runtime \
                   with the pipes nonblocking (as `mcpc serve` reads and writes them), and with one blocking \
                   thread per direction."
                .into(),
            _server: None,
        });
    }

    // HTTP host -> stdio server.
    if config.wants("http-stdio") {
        let mut paths = vec![Route {
            label: "direct (ours over stdio)",
            role: Role::Direct,
            reach: Reach::Stdio { program: testkit.clone(), args: vec!["stdio".into()] },
        }];
        if config.mcpc_http {
            paths.push(Route {
                label: "`mcpc serve --http 127.0.0.1:0 --server \"<server>\"`",
                role: Role::Bridge,
                reach: Reach::HttpBridge {
                    program: mcpc.clone(),
                    args: vec![
                        "serve".into(),
                        "--http".into(),
                        "127.0.0.1:0".into(),
                        "--server".into(),
                        stdio_line,
                    ],
                    url: BridgeUrl::Stderr,
                },
            });
        }
        if let Some((node, script)) = config.supergateway() {
            let port = free_port()?;
            paths.push(Route {
                label: "`supergateway --stdio \"<server>\" --outputTransport streamableHttp --stateful`",
                role: Role::Bridge,
                reach: Reach::HttpBridge {
                    program: node,
                    args: vec![
                        script,
                        "--stdio".into(),
                        config.stdio_server_line(),
                        "--outputTransport".into(),
                        "streamableHttp".into(),
                        "--stateful".into(),
                        "--port".into(),
                        port.to_string(),
                        "--logLevel".into(),
                        "none".into(),
                    ],
                    url: BridgeUrl::Port(port),
                },
            });
        }
        let note = if config.mcpc_http {
            "supergateway with `--stateful` (one server process per session, as `mcpc serve` keeps one): \
             its default stateless mode starts the server again for every request."
                .to_owned()
        } else {
            "This `mcpc` has no `serve --http` yet: the `mcpc serve --http` row is left out; \
             supergateway's row stays as the Node figure. supergateway with `--stateful` (one server process per session)."
                .to_owned()
        };
        out.push(Scenario {
            title: "HTTP host → stdio server (`mcp-testkit stdio`)",
            paths,
            note,
            _server: None,
        });
    }
    Ok(out)
}

/// Calls per round (sequential, in flight), rounds, warm-up calls.
fn latency_counts(quick: bool) -> (usize, usize, usize, usize) {
    if quick { (40, 64, 1, 16) } else { (1_000, 1_024, 5, 200) }
}

/// Per path, per round: the sequential p50 and the in-flight p50 (µs).
#[derive(Default, Clone)]
struct LatRounds {
    seq: Vec<f64>,
    par: Vec<f64>,
}

async fn timed_sequential(client: &AnyClient, n: usize) -> Result<f64, String> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        if !client.echo().await {
            return Err("an echo call failed".into());
        }
        lat.push(start.elapsed());
    }
    Ok(quantile(&mut lat, 0.5).as_secs_f64() * 1e6)
}

/// `n` calls, `depth` at a time, each timed; their p50 (µs).
async fn timed_in_flight(client: &AnyClient, n: usize, depth: usize) -> Result<f64, String> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..depth {
        let client = client.clone();
        let per = n / depth;
        set.spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for _ in 0..per {
                let start = Instant::now();
                if !client.echo().await {
                    return Err("an echo call failed".to_owned());
                }
                lat.push(start.elapsed());
            }
            Ok(lat)
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(done) = set.join_next().await {
        all.extend(done.map_err(|e| format!("a worker panicked: {e}"))??);
    }
    Ok(quantile(&mut all, 0.5).as_secs_f64() * 1e6)
}

/// One scenario's rounds, pinned or not: per path, its rounds.
fn latency_phase(
    config: &Config,
    which: usize,
    pinned: bool,
) -> Result<(Scenario, Vec<LatRounds>), String> {
    if pinned {
        pin_to_cpu0()?;
    } else {
        unpin()?;
    }
    let (seq, par, rounds, warm) = latency_counts(config.quick);
    let mut all = scenarios(config)?;
    let scenario = all.swap_remove(which);
    drop(all);
    let rt = runtime();
    let result = rt.block_on(async {
        let mut conns = Vec::new();
        for path in &scenario.paths {
            conns.push(connect(path).await?);
        }
        for conn in &conns {
            timed_sequential(&conn.client, warm).await?;
            timed_in_flight(&conn.client, warm.max(DEPTH), DEPTH).await?;
        }
        let mut out = vec![LatRounds::default(); conns.len()];
        for round in 0..rounds {
            eprintln!(
                "bridge-bench: {}, {} round {}/{rounds}",
                scenario.title,
                if pinned { "pinned" } else { "unpinned" },
                round + 1
            );
            for (i, conn) in conns.iter().enumerate() {
                let label = scenario.paths[i].label;
                out[i].seq.push(
                    timed_sequential(&conn.client, seq)
                        .await
                        .map_err(|e| format!("{label}: {e}"))?,
                );
                out[i].par.push(
                    timed_in_flight(&conn.client, par, DEPTH)
                        .await
                        .map_err(|e| format!("{label}: {e}"))?,
                );
            }
        }
        for conn in conns {
            conn.close().await;
        }
        Ok::<_, String>(out)
    });
    unpin()?;
    Ok((scenario, result?))
}

fn latency(config: &Config) -> Result<String, String> {
    let (seq, par, rounds, warm) = latency_counts(config.quick);
    let mut out = String::new();
    let count = scenarios(config)?.len();
    for which in 0..count {
        let mut title = "";
        let mut note = String::new();
        let mut table = String::from(
            "| path | CPUs | p50 µs, sequential | added µs, sequential | p50 µs, 16 in flight | added µs, 16 in flight | added / mcpc's, sequential | added / mcpc's, 16 in flight |\n\
             |---|---|---:|---:|---:|---:|---:|---:|\n",
        );
        for pinned in [true, false] {
            let (scenario, rounds) = latency_phase(config, which, pinned)?;
            let seq50: Vec<f64> = rounds.iter().map(|r| median_f64(&r.seq)).collect();
            let par50: Vec<f64> = rounds.iter().map(|r| median_f64(&r.par)).collect();
            let mcpc = scenario.paths.iter().position(|p| p.label.starts_with("`mcpc"));
            for (i, path) in scenario.paths.iter().enumerate() {
                let added = |v: &[f64]| v[i] - v[0];
                let (added_seq, added_par) = (added(&seq50), added(&par50));
                let (vs_seq, vs_par) = match mcpc {
                    Some(m) if path.bridge() => (
                        ratio(added_seq, seq50[m] - seq50[0]),
                        ratio(added_par, par50[m] - par50[0]),
                    ),
                    _ => ("–".to_owned(), "–".to_owned()),
                };
                let show = |v: f64| if path.in_between() { us_f64(v) } else { "–".to_owned() };
                table.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {vs_seq} | {vs_par} |\n",
                    path.label,
                    if pinned { "pinned (1 CPU)" } else { "unpinned" },
                    us_f64(seq50[i]),
                    show(added_seq),
                    us_f64(par50[i]),
                    show(added_par),
                ));
            }
            title = scenario.title;
            note = scenario.note;
        }
        out.push_str(&format!("### Added latency: {title}\n\n{table}\n"));
        if !note.is_empty() {
            out.push_str(&format!("{note}\n\n"));
        }
    }
    out.push_str(&format!(
        "`tools/call echo` through each path, one client (ours: `mcp-client-stdio` to a stdio path, `mcp-http` to an HTTP one, \
         handshake era, current-thread Tokio runtime) for every row, so only the path differs. Per round and path: {seq} sequential calls \
         (p50 of each call's time), then {par} calls with {DEPTH} in flight (p50 of each call's time, queueing included); \
         medians of {rounds} rounds in which the paths take turns, after {warm} warm-up calls each. \
         Added = the path's p50 − the direct p50 in the same phase. Pinned: client, bridge and server restricted to CPU 0 \
         (`sched_setaffinity` before the server and the bridges start, inherited as under `taskset -c 0`). \
         Upstream: `mcp-testkit` (the same handler over stdio and HTTP, so each scenario has the same server behind every path; \
         its own time cancels out of the added latency). {}\n",
        if config.node.is_some() {
            "Node bridges on the pinned Node.js 22."
        } else {
            "The Node bridges were left out of this run (`--no-node`)."
        }
    ));
    Ok(out)
}

/// Spawn to the first `tools/list` answer through `path`, and (when asked)
/// the bridge's RSS once idle after one call.
async fn start_once(path: &Route, rss: bool) -> Result<(Duration, Option<u64>), String> {
    let start = Instant::now();
    let conn = connect(path).await?;
    let tools = conn.client.list_tools().await.map_err(|e| format!("{}: {e}", path.label))?;
    let took = start.elapsed();
    if tools == 0 {
        return Err(format!("{}: tools/list was empty", path.label));
    }
    let mut idle = None;
    if rss {
        if !conn.client.echo().await {
            return Err(format!("{}: echo failed", path.label));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        idle = conn.bridge_pid().and_then(|pid| status_bytes(Some(pid), "VmRSS"));
    }
    conn.close().await;
    Ok((took, idle))
}

fn startup(config: &Config) -> Result<String, String> {
    unpin()?;
    let (starts, rounds) = if config.quick { (1, 1) } else { (4, 3) };
    let rt = runtime();
    let mut out = String::from(
        "| scenario | path | spawn → first `tools/list` answer | vs mcpc's | idle RSS of the bridge process | vs mcpc's |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    let mut notes = Vec::new();
    for scenario in scenarios(config)? {
        let n = scenario.paths.len();
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut rss: Vec<Vec<f64>> = vec![Vec::new(); n];
        rt.block_on(async {
            for path in &scenario.paths {
                start_once(path, false).await?;
            }
            for round in 0..rounds {
                eprintln!(
                    "bridge-bench: startup, {}, round {}/{rounds}",
                    scenario.title,
                    round + 1
                );
                for s in 0..starts {
                    for (i, path) in scenario.paths.iter().enumerate() {
                        let (took, idle) = start_once(path, s == 0 && path.in_between()).await?;
                        times[i].push(took.as_secs_f64());
                        if let Some(bytes) = idle {
                            rss[i].push(bytes as f64);
                        }
                    }
                }
            }
            Ok::<(), String>(())
        })?;
        let t: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
        let r: Vec<f64> = rss.iter().map(|r| median_f64(r)).collect();
        let mcpc = scenario.paths.iter().position(|p| p.label.starts_with("`mcpc"));
        for (i, path) in scenario.paths.iter().enumerate() {
            let vs = |v: &[f64]| match mcpc {
                Some(m) if path.bridge() => ratio(v[i], v[m]),
                _ => "–".to_owned(),
            };
            table_row(&mut out, &scenario, path, &t, &r, i, vs(&t), vs(&r));
        }
        if !scenario.note.is_empty() {
            notes.push(scenario.note.clone());
        }
    }
    out.push_str(&format!(
        "\nSpawn → first answer: from starting the bridge (or, direct, the stdio server; or, direct over HTTP, a new client to the running server) \
         to the answer of the first `tools/list` through it, the handshake included (ours pinned to the handshake era; the bridge connects upstream as it does by default); \
         medians of {} starts per path ({rounds} rounds of {starts}, the paths taking turns), unpinned. \
         Idle RSS: `VmRSS` of the bridge process alone (not the server it spawned), 0.5 s after one call; medians of {rounds}. {}\n",
        starts * rounds,
        notes.join(" ")
    ));
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn table_row(
    out: &mut String,
    scenario: &Scenario,
    path: &Route,
    t: &[f64],
    r: &[f64],
    i: usize,
    vs_t: String,
    vs_r: String,
) {
    out.push_str(&format!(
        "| {} | {} | {} ms | {vs_t} | {} | {vs_r} |\n",
        scenario.title,
        path.label,
        ms(Duration::from_secs_f64(t[i])),
        if path.in_between() { kib(r[i]) } else { "–".to_owned() },
    ));
}

/// What the soak reads of the bridge process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Duration,
    rss: u64,
    fds: usize,
    threads: usize,
    calls: u64,
}

fn sample_of(pid: u32, at: Duration, calls: u64) -> Option<Sample> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count();
    Some(Sample { at, rss: status_bytes(Some(pid), "VmRSS")?, fds, threads, calls })
}

/// `mcpc serve --server "<stdio server>"` under 64 calls in flight for
/// `seconds`: samples every few seconds; the first sixth (at least 5 s) is
/// the warm-up.
fn soak(config: &Config, seconds: u64) -> Result<String, String> {
    unpin()?;
    let path = Route {
        label: "mcpc serve",
        role: Role::Bridge,
        reach: Reach::Stdio {
            program: config.mcpc.clone(),
            args: vec!["serve".into(), "--server".into(), config.stdio_server_line()],
        },
    };
    let total = Duration::from_secs(seconds.max(10));
    let warm = (total / 6).max(Duration::from_secs(5));
    let every = if seconds <= 60 { Duration::from_secs(2) } else { Duration::from_secs(10) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let (samples, failed) = rt.block_on(async {
        let conn = connect(&path).await?;
        let pid = conn.bridge_pid().ok_or("the bridge has no process id")?;
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..SOAK_DEPTH {
            let (client, stop, done, failed) =
                (conn.client.clone(), stop.clone(), done.clone(), failed.clone());
            workers.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let ok = client.echo().await;
                    done.fetch_add(1, Ordering::Relaxed);
                    if !ok {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        let start = Instant::now();
        let mut samples = Vec::new();
        tokio::time::sleep(warm).await;
        while start.elapsed() < total {
            let s = sample_of(pid, start.elapsed(), done.load(Ordering::Relaxed))
                .ok_or("the bridge process is gone")?;
            eprintln!(
                "bridge-bench: soak {:>4.0}s: RSS {}, {} fds, {} threads, {} calls",
                s.at.as_secs_f64(),
                mib(s.rss as f64),
                s.fds,
                s.threads,
                s.calls
            );
            samples.push(s);
            tokio::time::sleep(every.min(total.saturating_sub(start.elapsed()))).await;
        }
        let last = sample_of(pid, start.elapsed(), done.load(Ordering::Relaxed))
            .ok_or("the bridge process is gone")?;
        samples.push(last);
        stop.store(true, Ordering::Relaxed);
        while workers.join_next().await.is_some() {}
        conn.close().await;
        Ok::<_, String>((samples, failed.load(Ordering::Relaxed)))
    })?;
    let first = samples[0];
    let last = samples[samples.len() - 1];
    let peak = samples.iter().map(|s| s.rss).max().unwrap_or(0);
    let max_fds = samples.iter().map(|s| s.fds).max().unwrap_or(0);
    let max_threads = samples.iter().map(|s| s.threads).max().unwrap_or(0);

    let drift = peak.saturating_sub(first.rss);
    let mut problems = Vec::new();
    // A dev build's RSS means little: judged in full runs only.
    if !config.quick && drift > RSS_DRIFT {
        problems.push(format!("RSS grew by {} after the warm-up", kib(drift as f64)));
    }
    if max_fds > first.fds {
        problems.push(format!("{} more open descriptors", max_fds - first.fds));
    }
    if max_threads > first.threads + THREAD_SLACK {
        problems.push(format!("{} more threads", max_threads - first.threads));
    }
    if failed > 0 {
        problems.push(format!("{failed} calls failed"));
    }
    let calls = last.calls;
    let rate = calls as f64 / last.at.as_secs_f64().max(1e-9);
    let out = format!(
        "| bridge | time | calls | calls/s | RSS after warm-up | RSS peak after | drift | descriptors first / max | threads first / max | failed | verdict |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n\
         | `mcpc serve --server \"<stdio server>\"`, {SOAK_DEPTH} in flight | {:.0} s | {calls} | {rate:.0} | {} | {} | {} | {} / {max_fds} | {} / {max_threads} | {failed} | {} |\n\n\
         {SOAK_DEPTH} `tools/call echo` kept in flight through `mcpc serve` to `mcp-testkit stdio` (our stdio client as the host), {} samples of the bridge \
         process (`/proc/PID/status` VmRSS, `/proc/PID/fd`, `/proc/PID/task`) every {} s after a {} s warm-up. \
         Bounds: RSS at most {} above the first sample (full runs; not judged with `--quick`), no more descriptors than at the first sample, \
         at most {THREAD_SLACK} more threads (the runtime's blocking pool grows to its busiest moment), no failed call.\n",
        last.at.as_secs_f64(),
        mib(first.rss as f64),
        mib(peak as f64),
        kib(drift as f64),
        first.fds,
        first.threads,
        if problems.is_empty() { "ok".to_owned() } else { problems.join("; ") },
        samples.len(),
        every.as_secs(),
        warm.as_secs(),
        mib(RSS_DRIFT as f64),
    );
    if problems.is_empty() {
        Ok(out)
    } else {
        print!("{out}");
        Err(format!("the bridge grew: {}", problems.join("; ")))
    }
}

/// `drive [--calls N] [--pin] -- PROGRAM ARGS...`: our stdio client spawns
/// `PROGRAM ARGS` (a bridge, a relay, a server; or any of them under
/// `valgrind` or `perf`), makes warm-up calls, then `N` sequential echo
/// calls (20,000 by default), and prints their p50 and what the spawned
/// process spent per call: CPU time and context switches (all its
/// threads, read from `/proc` before and after). `--pin`: everything on
/// CPU 0.
fn drive(args: &[String]) -> Result<(), String> {
    let (program, rest) = command_after_dashes(args)?;
    let head = &args[..args.iter().position(|a| a == "--").unwrap_or(args.len())];
    let calls: usize = match value_of(head, "--calls") {
        Some(n) => n.parse().map_err(|_| format!("--calls takes a number, not {n:?}"))?,
        None => 20_000,
    };
    if head.iter().any(|a| a == "--pin") {
        pin_to_cpu0()?;
    }
    let route = Route {
        label: "driven",
        role: Role::Bridge,
        reach: Reach::Stdio { program: PathBuf::from(program), args: rest.to_vec() },
    };
    let rt = runtime();
    let line = rt.block_on(async {
        let conn = connect(&route).await?;
        let pid = conn.bridge_pid().ok_or("the spawned process has no id")?;
        timed_sequential(&conn.client, 1_000.min(calls.max(1))).await?;
        let before = Spent::of(pid).ok_or("cannot read /proc for the spawned process")?;
        let p50 = timed_sequential(&conn.client, calls.max(1)).await?;
        let after = Spent::of(pid).ok_or("the spawned process is gone")?;
        conn.close().await;
        let per = |a: u64, b: u64| a.saturating_sub(b) as f64 / calls.max(1) as f64;
        Ok::<_, String>(format!(
            "calls {calls}: p50 {p50:.1} µs; the spawned process per call: CPU {:.2} µs, \
             context switches {:.2} voluntary + {:.2} involuntary\n",
            per(after.cpu_ns, before.cpu_ns) / 1000.0,
            per(after.voluntary, before.voluntary),
            per(after.involuntary, before.involuntary),
        ))
    })?;
    print!("{line}");
    Ok(())
}

/// What a process has spent so far, summed over its threads.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    /// Time on a CPU (`/proc/PID/task/TID/schedstat`, nanoseconds).
    cpu_ns: u64,
    voluntary: u64,
    involuntary: u64,
}

impl Spent {
    fn of(pid: u32) -> Option<Spent> {
        let mut spent = Spent::default();
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
            let dir = task.ok()?.path();
            let Ok(status) = std::fs::read_to_string(dir.join("status")) else { continue };
            let field = |name: &str| -> u64 {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            };
            spent.voluntary += field("voluntary_ctxt_switches");
            spent.involuntary += field("nonvoluntary_ctxt_switches");
            let schedstat = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
            spent.cpu_ns +=
                schedstat.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0);
        }
        Some(spent)
    }
}

/// `relay [--threads] -- PROGRAM ARGS...`: the least a process in the
/// middle can do. It starts `PROGRAM ARGS` and copies its own stdin to the
/// program's stdin and the program's stdout to its own stdout, bytes as
/// they come (one read and one write per chunk), parsing nothing. By
/// default on a current-thread Tokio runtime with every pipe nonblocking
/// (its own stdin and stdout taken as `mcpc serve` takes them,
/// `mcp_server_io::stdio`); `--threads`: one blocking thread per direction.
/// Ends when the program's stdout closes (after the host closed stdin, or
/// the program died).
mod relay {
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::process::Stdio;
    use std::time::Duration;

    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    /// The largest chunk copied in one go.
    const CHUNK: usize = 64 * 1024;
    /// How long the program may take to end once its stdout closed.
    const EXIT_WAIT: Duration = Duration::from_secs(5);

    pub(super) fn run(threads: bool, program: &str, args: &[String]) -> Result<(), String> {
        if threads { blocking(program, args) } else { nonblocking(program, args) }
    }

    fn nonblocking(program: &str, args: &[String]) -> Result<(), String> {
        mcp_bench::runtime().block_on(async {
            let mut child = tokio::process::Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("relay: cannot start {program}: {e}"))?;
            let to_child = child.stdin.take().ok_or("relay: no stdin pipe")?;
            let from_child = child.stdout.take().ok_or("relay: no stdout pipe")?;
            let up = copy(mcp_server_io::stdio::stdin(), to_child);
            let down = copy(from_child, mcp_server_io::stdio::stdout());
            // One task polls both directions: no hop between tasks.
            let (_, _) = tokio::join!(up, down);
            let _ = tokio::time::timeout(EXIT_WAIT, child.wait()).await;
            Ok(())
        })
    }

    /// Copies until the end of `from` (then `to` is dropped, closing it).
    async fn copy<R, W>(mut from: R, mut to: W) -> std::io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = from.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            to.write_all(&buf[..n]).await?;
        }
    }

    fn blocking(program: &str, args: &[String]) -> Result<(), String> {
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("relay: cannot start {program}: {e}"))?;
        let to_child = child.stdin.take().ok_or("relay: no stdin pipe")?;
        let from_child = child.stdout.take().ok_or("relay: no stdout pipe")?;
        // Unbuffered descriptors of their own (no `LineWriter`, no lock).
        let own = |fd: std::os::fd::BorrowedFd<'_>| {
            fd.try_clone_to_owned().map(std::fs::File::from).map_err(|e| format!("relay: {e}"))
        };
        let host_in = own(std::io::stdin().as_fd())?;
        let host_out = own(std::io::stdout().as_fd())?;
        // The host's side on a thread of its own; when the host closes,
        // the program's stdin closes with it. Not joined: it may be blocked
        // reading a host that outlives the program.
        std::thread::spawn(move || copy_blocking(host_in, to_child));
        let _ = copy_blocking(from_child, host_out);
        let deadline = std::time::Instant::now() + EXIT_WAIT;
        while std::time::Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        Ok(())
    }

    fn copy_blocking(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = from.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            to.write_all(&buf[..n])?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("/a/b-c/mcp-testkit"), "/a/b-c/mcp-testkit");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
