//! `stdio-bench`: `mcp-stdio` against rmcp's child-process client and the raw
//! limit (the same request and reply bytes ping-ponged over a pipe to a
//! process that answers each line with a fixed line), all on the same
//! `mcp-testkit stdio` server binary, alternating clients within each round.
//!
//! Usage: `stdio-bench [--quick] [--server PATH] [--era legacy|modern] seq|throughput|startup|memory`
//! prints one Markdown table on stdout (progress on stderr). `--era` pins
//! every contender (and the server) to one protocol era: the handshake era
//! by default, `modern` for the stateless 2026-07-28 revision (`seq` and
//! `throughput`; `startup` measures both, `memory` the handshake era).
//! Hidden modes: `raw-answer CALL [INIT [DISCOVER]]` (answers every stdin
//! line with a fixed reply, for the raw limit), `hold ours|rmcp N SERVER` (a
//! process holding N initialized clients; prints its RSS growth per client)
//! and `--profile ours|rmcp N [DEPTH]` (N calls, DEPTH of them in flight (1
//! by default), against the fixed-reply answerer of the `--era` given, for
//! callgrind), and `--profile-start ours|rmcp|raw N` (N starts against
//! `mcp-testkit stdio` of the `--era` given, for callgrind and `strace -c`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_bench::args::{has, mode};
use mcp_bench::era::Era;
use mcp_bench::proc::{cpu_time, pin, status_bytes, testkit_path, unpin};
use mcp_bench::report::{cpus, kib, median_f64, ms, quantile_us, rate, ratio, us_f64};
use mcp_bench::theirs::{self, Rmcp};
use mcp_bench::wire::{self, Replies, Template, id_span};
use mcp_bench::{MESSAGE, ours, runtime};
use mcp_client_stdio::mcp_peer::EraChoice;
use mcp_client_stdio::{ServerCommand, StdioClient, StdioOptions};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(20 * 60);

fn main() {
    mcp_bench::main("stdio-bench", WALL_LIMIT, |args| match args.first().map(String::as_str) {
        Some("raw-answer") => raw_answer(&args[1..]),
        Some("hold") => hold(&args[1..]),
        _ => run(args),
    });
}

struct Config {
    quick: bool,
    testkit: PathBuf,
    era: Era,
}

fn run(args: &[String]) -> Result<(), String> {
    let config = Config {
        quick: has(args, "--quick"),
        testkit: testkit_path(args),
        era: Era::from_args(args)?,
    };
    if let Some(i) = args.iter().position(|a| a == "--profile-start") {
        let which = args.get(i + 1).map(String::as_str).unwrap_or("ours");
        let n = args.get(i + 2).and_then(|n| n.parse().ok()).unwrap_or(100);
        return profile_start(&config, which, n);
    }
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        let which = args.get(i + 1).map(String::as_str).unwrap_or("ours");
        let n = args.get(i + 2).and_then(|n| n.parse().ok()).unwrap_or(20_000);
        let depth = args.get(i + 3).and_then(|n| n.parse().ok()).unwrap_or(1);
        return profile(&config, which, n, depth);
    }
    let table = match mode(args, &["--server", "--era"]) {
        Some("seq") => sequential(&config)?,
        Some("throughput") => throughput(&config)?,
        Some("startup") => startup(&config)?,
        Some("memory") => memory(&config)?,
        _ => {
            return Err(
                "usage: stdio-bench [--quick] [--server PATH] [--era legacy|modern] seq|throughput|startup|memory".into(),
            );
        }
    };
    print!("{table}");
    Ok(())
}

/// The request line a client sends for one echo call (id 1), and what the
/// raw ping-pong replays: in the stateless era with the `_meta` every
/// request carries.
fn request_line(era: Era) -> String {
    format!("{}\n", wire::call_request(1, &era.raw_meta()))
}

/// A child process spoken to with blocking line I/O.
struct Pipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Pipe {
    fn spawn(mut command: Command) -> Result<Pipe, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("spawn: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Pipe { child, stdin, stdout, line: String::with_capacity(1024) })
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        self.stdin.write_all(line.as_bytes()).map_err(|e| format!("write: {e}"))
    }

    /// Reads one line; an end of file is an error (the peer died).
    fn receive(&mut self) -> Result<&str, String> {
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) => Err("the child closed its stdout".into()),
            Ok(_) => Ok(&self.line),
            Err(e) => Err(format!("read: {e}")),
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server a phase talks to: a program and its arguments.
#[derive(Clone)]
struct ServerSpec {
    program: PathBuf,
    args: Vec<String>,
    /// What the tables call it.
    label: &'static str,
    /// The era it serves (and every client is pinned to).
    era: Era,
}

impl ServerSpec {
    fn testkit(testkit: &Path, era: Era) -> ServerSpec {
        let mut args = vec!["stdio".to_owned()];
        args.extend(era.testkit_args().iter().map(|a| (*a).to_owned()));
        ServerSpec { program: testkit.to_owned(), args, label: "mcp-testkit", era }
    }

    /// This binary's `raw-answer` mode, answering with the testkit's own
    /// reply lines.
    fn answerer(replies: &Replies) -> Result<ServerSpec, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut args = vec!["raw-answer".to_owned(), replies.call.clone(), replies.init.clone()];
        args.extend(replies.discover.clone());
        Ok(ServerSpec { program: exe, args, label: "fixed-reply answerer", era: replies.era })
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }
}

/// `raw-answer CALL_REPLY INIT_REPLY [DISCOVER_REPLY [LIST_REPLY]]`: answers
/// each request line with a fixed reply, its `"id"` value replaced by the
/// request's (byte search, no JSON parsing): INIT_REPLY for `initialize`,
/// DISCOVER_REPLY (when given and not `-`) for `server/discover`,
/// LIST_REPLY (when given; `sdk-bench`'s Python SDK client lists the tools
/// before its first call) for `tools/list`, CALL_REPLY for anything else;
/// lines without an id (notifications) get no answer. Runs until stdin
/// closes.
fn raw_answer(args: &[String]) -> Result<(), String> {
    let template = |reply: &str| Template::new(reply, b"\n");
    let call = template(args.first().map(String::as_str).unwrap_or("{}"));
    let init = template(args.get(1).map(String::as_str).unwrap_or("{}"));
    let discover = args.get(2).filter(|d| *d != "-").map(|d| template(d));
    let list = args.get(3).map(|l| template(l));
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
        if let Some((a, b)) = id_span(&line) {
            // One search for the method, whichever the era.
            let method = wire::after_method(&line);
            let template = match (&discover, &list) {
                (Some(d), _) if method.starts_with(b"server/discover\"") => d,
                (_, Some(l)) if method.starts_with(b"tools/list\"") => l,
                _ if method.starts_with(b"initialize\"") => &init,
                _ => &call,
            };
            output.write_all(&template.head).map_err(|e| e.to_string())?;
            output.write_all(&line[a..b]).map_err(|e| e.to_string())?;
            output.write_all(&template.tail).map_err(|e| e.to_string())?;
        }
        // Flush once every complete line already read has been answered.
        if input.buffer().is_empty() {
            output.flush().map_err(|e| e.to_string())?;
        }
    }
}

async fn spawn_ours(server: &ServerSpec) -> Result<StdioClient, String> {
    spawn_ours_with(server, None).await
}

/// Ours, pinned to the server's era unless `choice` says otherwise.
async fn spawn_ours_with(
    server: &ServerSpec,
    choice: Option<EraChoice>,
) -> Result<StdioClient, String> {
    let command =
        ServerCommand::new(server.program.to_string_lossy()).args(server.args.iter().cloned());
    let mut options = StdioOptions::new("bench");
    options.client.era = choice.unwrap_or(server.era.choice());
    ours::spawn_stdio(command, options, "ours").await
}

async fn spawn_rmcp(server: &ServerSpec) -> Result<Rmcp, String> {
    let command = tokio::process::Command::new(&server.program).configure(|c| {
        c.args(&server.args);
    });
    let transport = TokioChildProcess::new(command).map_err(|e| format!("rmcp: spawn: {e}"))?;
    theirs::serve(transport, server.era, "rmcp").await
}

/// A raw pipe to the server, past its handshake (in the stateless era,
/// past one `server/discover`, as the clients do).
fn raw_pipe(server: &ServerSpec) -> Result<Pipe, String> {
    let mut pipe = Pipe::spawn(server.command())?;
    match server.era {
        Era::Legacy => {
            pipe.send(&format!("{}\n", wire::initialize_request()))?;
            pipe.receive()?;
            pipe.send(&format!("{}\n", wire::INITIALIZED))?;
        }
        Era::Modern => {
            pipe.send(&format!("{}\n", wire::discover_request()))?;
            pipe.receive()?;
        }
    }
    Ok(pipe)
}

/// The three contenders of one phase, each with its own server.
struct Contenders {
    rt: Runtime,
    ours: StdioClient,
    rmcp: Rmcp,
    raw: Pipe,
    /// The raw pipe's request line.
    request: String,
}

const NAMES: [&str; 3] = ["mcp-stdio (ours)", "rmcp", "raw pipe"];

impl Contenders {
    fn start(server: &ServerSpec) -> Result<Contenders, String> {
        let rt = runtime();
        let ours = rt.block_on(spawn_ours(server))?;
        let rmcp = rt.block_on(spawn_rmcp(server))?;
        let raw = raw_pipe(server)?;
        Ok(Contenders { rt, ours, rmcp, raw, request: request_line(server.era) })
    }

    /// `n` sequential calls of contender `which`, each timed into `lat`.
    fn sequential(
        &mut self,
        which: usize,
        n: usize,
        lat: &mut Vec<Duration>,
    ) -> Result<(), String> {
        match which {
            0 => self.rt.block_on(async {
                for _ in 0..n {
                    let start = Instant::now();
                    ours::echo_or_panic(&self.ours).await;
                    lat.push(start.elapsed());
                }
            }),
            1 => self.rt.block_on(async {
                let peer = self.rmcp.peer();
                for _ in 0..n {
                    let start = Instant::now();
                    theirs::echo_or_panic(peer).await;
                    lat.push(start.elapsed());
                }
            }),
            _ => {
                let request = &self.request;
                for _ in 0..n {
                    let start = Instant::now();
                    self.raw.send(request)?;
                    self.raw.receive()?;
                    lat.push(start.elapsed());
                }
            }
        }
        Ok(())
    }

    /// `n` calls with `depth` in flight; the time they took.
    fn in_flight(&mut self, which: usize, n: usize, depth: usize) -> Result<Duration, String> {
        let start = Instant::now();
        let per_worker = n / depth;
        match which {
            0 => self.rt.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for _ in 0..depth {
                    let client = self.ours.clone();
                    set.spawn(async move {
                        for _ in 0..per_worker {
                            ours::echo_or_panic(&client).await;
                        }
                    });
                }
                while let Some(done) = set.join_next().await {
                    done.expect("an ours worker panicked");
                }
            }),
            1 => self.rt.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for _ in 0..depth {
                    let peer = self.rmcp.peer().clone();
                    set.spawn(async move {
                        for _ in 0..per_worker {
                            theirs::echo_or_panic(&peer).await;
                        }
                    });
                }
                while let Some(done) = set.join_next().await {
                    done.expect("an rmcp worker panicked");
                }
            }),
            _ => {
                // Pipelined: keep `depth` lines outstanding.
                let request = self.request.clone();
                let total = per_worker * depth;
                let mut sent = 0;
                while sent < depth.min(total) {
                    self.raw.send(&request)?;
                    sent += 1;
                }
                for _ in 0..total {
                    self.raw.receive()?;
                    if sent < total {
                        self.raw.send(&request)?;
                        sent += 1;
                    }
                }
            }
        }
        Ok(start.elapsed())
    }

    fn close(self) {
        let Contenders { rt, ours, rmcp, raw, .. } = self;
        rt.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), ours.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp.cancel()).await;
        });
        drop(raw);
    }
}

/// Per contender and round: p50, p99, calls/s, CPU µs per call.
#[derive(Default, Clone)]
struct SeqRound {
    p50: Vec<f64>,
    p99: Vec<f64>,
    rate: Vec<f64>,
    cpu: Vec<f64>,
}

fn sequential_phase(
    config: &Config,
    server: &ServerSpec,
    pinned: bool,
) -> Result<Vec<SeqRound>, String> {
    pin(pinned)?;
    let (calls, rounds, warm) = seq_counts(config.quick);
    let mut c = Contenders::start(server)?;
    let mut lat = Vec::with_capacity(calls);
    for which in 0..3 {
        c.sequential(which, warm, &mut lat)?;
        lat.clear();
    }
    let mut out = vec![SeqRound::default(); 3];
    for round in 0..rounds {
        eprintln!(
            "stdio-bench: sequential, {}, {} round {}/{rounds}",
            server.label,
            if pinned { "pinned" } else { "unpinned" },
            round + 1
        );
        for (which, stats) in out.iter_mut().enumerate() {
            lat.clear();
            let cpu0 = cpu_time();
            let start = Instant::now();
            c.sequential(which, calls, &mut lat)?;
            let wall = start.elapsed();
            let cpu = cpu_time().saturating_sub(cpu0);
            stats.rate.push(calls as f64 / wall.as_secs_f64());
            stats.cpu.push(cpu.as_secs_f64() * 1e6 / calls as f64);
            stats.p50.push(quantile_us(&mut lat, 0.5));
            stats.p99.push(quantile_us(&mut lat, 0.99));
        }
    }
    c.close();
    unpin()?;
    Ok(out)
}

/// Calls per round, rounds, warm-up calls.
fn seq_counts(quick: bool) -> (usize, usize, usize) {
    if quick { (200, 1, 50) } else { (5_000, 7, 1_000) }
}

/// Both servers: the real one, and the fixed-reply answerer that shows
/// what the clients alone cost.
fn servers(config: &Config) -> Result<[ServerSpec; 2], String> {
    let replies = Replies::learn(&config.testkit, config.era)?;
    Ok([ServerSpec::answerer(&replies)?, ServerSpec::testkit(&config.testkit, config.era)])
}

/// The JSON work no JSON-RPC client can skip, measured alone: encode one
/// request (a `serde_json::Value` tree) and parse one reply line into a
/// `serde_json::Value`, in memory, no I/O. Median µs per call of 5 runs.
fn json_floor(reply: &str, calls: usize, era: Era) -> f64 {
    let mut runs = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for id in 0..calls {
            let mut params = json!({ "name": "echo", "arguments": { "message": MESSAGE } });
            if era == Era::Modern {
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": era.revision(),
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
                });
            }
            let request = json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params,
            });
            let mut line = serde_json::to_vec(&request).expect("a JSON value encodes");
            line.push(b'\n');
            std::hint::black_box(&line);
            let parsed: Value = serde_json::from_str(reply).expect("the reply is JSON");
            std::hint::black_box(parsed);
        }
        runs.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
    }
    median_f64(&runs)
}

fn sequential(config: &Config) -> Result<String, String> {
    let (calls, _, _) = seq_counts(config.quick);
    let floor = json_floor(&Replies::learn(&config.testkit, config.era)?.call, calls, config.era);
    let mut raw_pinned_answerer = 0.0;
    let mut ours_pinned_answerer = 0.0;
    let mut table = String::from(
        "| server | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for server in servers(config)? {
        for pinned in [true, false] {
            let rounds = sequential_phase(config, &server, pinned)?;
            let p50: Vec<f64> = rounds.iter().map(|r| median_f64(&r.p50)).collect();
            if pinned && server.label != "mcp-testkit" {
                (ours_pinned_answerer, raw_pinned_answerer) = (p50[0], p50[2]);
            }
            for (which, r) in rounds.iter().enumerate() {
                table.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    server.label,
                    cpus(pinned),
                    NAMES[which],
                    us_f64(p50[which]),
                    us_f64(median_f64(&r.p99)),
                    rate(median_f64(&r.rate)),
                    us_f64(median_f64(&r.cpu)),
                    ratio(p50[which], p50[2]),
                    ratio(p50[which], p50[0]),
                ));
            }
        }
    }
    let (calls, rounds, warm) = seq_counts(config.quick);
    table.push_str(&format!(
        "\n{calls} sequential `tools/call echo` per client per round after {warm} warm-up calls; medians of {rounds} rounds in which the clients take turns. \
         Servers: `mcp-testkit stdio` (the real server: its JSON work and Tokio loop are in every round trip), and the fixed-reply answerer \
         (`stdio-bench raw-answer`: answers each line with the testkit's own reply bytes, only the `id` value spliced in by a byte search, no JSON), \
         which isolates the client. Raw pipe: the same request bytes written and the reply line read with blocking std I/O: the limit. \
         Client CPU: user + system time of the benchmark process (getrusage) per call, the server's not counted. \
         Pinned: client and server restricted to CPU 0 (`sched_setaffinity` before the spawn, inherited as under `taskset -c 0`). \
         All clients on a current-thread Tokio runtime. {era_note}\n\n\
         JSON floor (encode the request from a `serde_json::Value` and parse the reply into one, in memory, no I/O): {floor:.2} µs per call. \
         Raw pinned p50 + that floor = {:.1} µs = {} the raw pinned p50 (the least any JSON-RPC client can reach); ours is {}.\n",
        raw_pinned_answerer + floor,
        ratio(raw_pinned_answerer + floor, raw_pinned_answerer),
        ratio(ours_pinned_answerer, raw_pinned_answerer),
        era_note = era_note(config.era),
    ));
    Ok(table)
}

/// What a table's notes say of the era it was measured in.
fn era_note(era: Era) -> String {
    match era {
        Era::Legacy => format!(
            "Era: every contender pinned to the handshake era ({}; ours with `EraChoice::Legacy`, so no `server/discover` probe before `initialize`).",
            era.revision()
        ),
        Era::Modern => format!(
            "Era: every contender pinned to the stateless era ({rev}; ours with `EraChoice::Modern`, rmcp with `ClientLifecycleMode::Discover`, \
             the server `mcp-testkit stdio --era modern`): one `server/discover` at start-up, then every request carries `_meta` \
             (protocol version, client capabilities, client info; the raw pipe sends the same members) and every result `resultType`.",
            rev = era.revision()
        ),
    }
}

fn throughput(config: &Config) -> Result<String, String> {
    unpin()?;
    let (calls, rounds) = if config.quick { (256, 1) } else { (16_384, 5) };
    let depths = [1usize, 16, 64];
    let mut table = String::from(
        "| server | in flight | mcp-stdio (ours) calls/s | rmcp calls/s | raw pipe calls/s | ours / rmcp | ours / raw |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for server in servers(config)? {
        let mut c = Contenders::start(&server)?;
        for which in 0..3 {
            for &depth in &depths {
                c.in_flight(which, 1024.min(calls), depth)?;
            }
        }
        // rates[depth][contender], one per round
        let mut rates = vec![vec![Vec::new(); 3]; depths.len()];
        for round in 0..rounds {
            eprintln!("stdio-bench: throughput, {}, round {}/{rounds}", server.label, round + 1);
            for (d, &depth) in depths.iter().enumerate() {
                for (which, per_client) in rates[d].iter_mut().enumerate() {
                    let time = c.in_flight(which, calls, depth)?;
                    per_client.push((calls / depth * depth) as f64 / time.as_secs_f64());
                }
            }
        }
        c.close();
        for (d, depth) in depths.iter().enumerate() {
            let m: Vec<f64> = rates[d].iter().map(|r| median_f64(r)).collect();
            table.push_str(&format!(
                "| {} | {depth} | {} | {} | {} | {} | {} |\n",
                server.label,
                rate(m[0]),
                rate(m[1]),
                rate(m[2]),
                ratio(m[0], m[1]),
                ratio(m[0], m[2]),
            ));
        }
    }
    table.push_str(&format!(
        "\n{calls} calls per client per depth per round, unpinned; medians of {rounds} alternating rounds. \
         Clients: `depth` Tokio tasks on one current-thread runtime, each calling in a loop; raw: `depth` request lines kept outstanding on the pipe (pipelined). {}\n",
        era_note(config.era)
    ));
    Ok(table)
}

fn startup(config: &Config) -> Result<String, String> {
    unpin()?;
    let (starts, rounds) = if config.quick { (2, 1) } else { (20, 5) };
    let rt = runtime();
    let servers = startup_servers(config);
    // Contenders 0-2: ours, rmcp, raw on the handshake-era server; 3-5 the
    // same on the stateless one; 6: ours left to probe (`EraChoice::Auto`,
    // the default) on the handshake-era server.
    let mut times: [Vec<f64>; 7] = Default::default();
    let once = |which: usize| start_once(&rt, &servers, which);
    for which in 0..times.len() {
        once(which)?;
    }
    for round in 0..rounds {
        eprintln!("stdio-bench: startup round {}/{rounds}", round + 1);
        for _ in 0..starts {
            for (which, t) in times.iter_mut().enumerate() {
                t.push(once(which)?.as_secs_f64());
            }
        }
    }
    let m: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    Ok(format!(
        "| transport | mcp-stdio (ours) | rmcp | raw pipe | rmcp / ours | ours / raw |\n|---|---:|---:|---:|---:|---:|\n\
         | stdio: spawn `mcp-testkit stdio` + initialize (all pinned to the handshake era) | {} ms | {} ms | {} ms | {} | {} |\n\
         | stdio: spawn `mcp-testkit stdio --era modern` + `server/discover` (all pinned to the stateless era) | {} ms | {} ms | {} ms | {} | {} |\n\n\
         Ours left to find the era (`EraChoice::Auto`, the default) on the handshake-era server: {} ms \
         (`server/discover` answered with an error, then `initialize`: one more round trip than pinned).\n",
        d(m[0]),
        d(m[1]),
        d(m[2]),
        ratio(m[1], m[0]),
        ratio(m[0], m[2]),
        d(m[3]),
        d(m[4]),
        d(m[5]),
        ratio(m[4], m[3]),
        ratio(m[3], m[5]),
        d(m[6]),
    ))
}

/// The servers of the start-up measure: the handshake-era testkit, then the
/// stateless-era one.
fn startup_servers(config: &Config) -> [ServerSpec; 2] {
    [
        ServerSpec::testkit(&config.testkit, Era::Legacy),
        ServerSpec::testkit(&config.testkit, Era::Modern),
    ]
}

/// One start of contender `which` (0 ours, 1 rmcp, 2 the raw pipe on the
/// handshake-era server; 3-5 the same on the stateless one; 6 ours with
/// `EraChoice::Auto` on the handshake-era server): the time from the spawn
/// to the end of the handshake. Closing is not timed.
fn start_once(rt: &Runtime, servers: &[ServerSpec; 2], which: usize) -> Result<Duration, String> {
    let server = &servers[usize::from((3..6).contains(&which))];
    match which % 3 {
        0 => rt.block_on(async {
            let choice = (which == 6).then_some(EraChoice::Auto);
            let start = Instant::now();
            let client = spawn_ours_with(server, choice).await?;
            let time = start.elapsed();
            let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
            Ok(time)
        }),
        1 => rt.block_on(async {
            let start = Instant::now();
            let client = spawn_rmcp(server).await?;
            let time = start.elapsed();
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
            Ok(time)
        }),
        _ => {
            let start = Instant::now();
            let pipe = raw_pipe(server)?;
            let time = start.elapsed();
            drop(pipe);
            Ok(time)
        }
    }
}

/// `--profile-start ours|rmcp|raw N`: N starts (spawn + handshake + close)
/// of one contender against `mcp-testkit stdio` of the `--era` given, for
/// callgrind and `strace -c`; prints the median start in µs on stderr.
fn profile_start(config: &Config, which: &str, n: usize) -> Result<(), String> {
    let rt = runtime();
    let servers = startup_servers(config);
    let base = match which {
        "ours" => 0,
        "rmcp" => 1,
        "raw" => 2,
        other => return Err(format!("--profile-start: unknown contender {other}")),
    };
    let which = base + if config.era == Era::Modern { 3 } else { 0 };
    let mut times = Vec::new();
    for _ in 0..n.clamp(1, 100_000) {
        times.push(start_once(&rt, &servers, which)?.as_secs_f64() * 1e6);
    }
    eprintln!("stdio-bench: {} starts, median {:.1} µs", times.len(), median_f64(&times));
    Ok(())
}

/// `hold ours|rmcp N SERVER`: a process holding N initialized clients to N
/// servers; prints `baseline_rss rss_after` in bytes.
fn hold(args: &[String]) -> Result<(), String> {
    let which = args.first().map(String::as_str).unwrap_or("ours");
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10).min(1000);
    let server =
        ServerSpec::testkit(Path::new(args.get(2).ok_or("hold: no server path")?), Era::Legacy);
    let rt = runtime();
    rt.block_on(async {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let add = async |ours: &mut Vec<StdioClient>, theirs: &mut Vec<Rmcp>| {
            if which == "ours" {
                let client = spawn_ours(&server).await?;
                ours::echo_or_panic(&client).await;
                ours.push(client);
            } else {
                let client = spawn_rmcp(&server).await?;
                theirs::echo_or_panic(client.peer()).await;
                theirs.push(client);
            }
            Ok::<(), String>(())
        };
        // One client first, so code, runtime and first-use allocations are
        // in the baseline.
        add(&mut ours, &mut theirs).await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let before = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        for _ in 0..n {
            add(&mut ours, &mut theirs).await?;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let after = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        println!("{before} {after}");
        for client in ours {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
        }
        for client in theirs {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
        }
        Ok(())
    })
}

fn memory(config: &Config) -> Result<String, String> {
    let (n, rounds) = if config.quick { (3, 1) } else { (50, 3) };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut per: [Vec<f64>; 2] = Default::default();
    for round in 0..rounds {
        eprintln!("stdio-bench: memory round {}/{rounds}", round + 1);
        for (i, which) in ["ours", "rmcp"].iter().enumerate() {
            let out = Command::new(&exe)
                .args(["hold", which, &n.to_string()])
                .arg(&config.testkit)
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout);
            let nums: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            if !out.status.success() || nums.len() != 2 {
                return Err(format!("hold {which} failed: {text}"));
            }
            per[i].push((nums[1] - nums[0]) / n as f64);
        }
    }
    let m: Vec<f64> = per.iter().map(|p| median_f64(p)).collect();
    Ok(format!(
        "| measure | mcp-stdio (ours) | rmcp | rmcp / ours |\n|---|---:|---:|---:|\n\
         | client-side RSS per stdio client (initialized, one call made) | {} | {} | {} |\n\n\
         A process spawns one client (baseline), then {n} more, each to its own `mcp-testkit stdio`; \
         (VmRSS after − VmRSS before) / {n}, the servers' memory not counted; medians of {rounds} rounds.\n",
        kib(m[0]),
        kib(m[1]),
        ratio(m[1], m[0]),
    ))
}

/// `--profile ours|rmcp N`: N sequential calls of one client against the
/// fixed-reply answerer, for callgrind.
fn profile(config: &Config, which: &str, n: usize, depth: usize) -> Result<(), String> {
    let server = ServerSpec::answerer(&Replies::learn(&config.testkit, config.era)?)?;
    let rt = runtime();
    let per_task = n.min(1_000_000) / depth.max(1);
    rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        if which == "rmcp" {
            let client = spawn_rmcp(&server).await?;
            for _ in 0..depth.max(1) {
                let peer = client.peer().clone();
                set.spawn(async move {
                    for _ in 0..per_task {
                        theirs::echo_or_panic(&peer).await;
                    }
                });
            }
            set.join_all().await;
            let _ = client.cancel().await;
        } else {
            let client = spawn_ours(&server).await?;
            for _ in 0..depth.max(1) {
                let client = client.clone();
                set.spawn(async move {
                    for _ in 0..per_task {
                        ours::echo_or_panic(&client).await;
                    }
                });
            }
            set.join_all().await;
            let _ = client.close().await;
        }
        Ok(())
    })
}
