//! `sdk-bench`: ours (`mcp-stdio`, `mcp-http`) against the clients most
//! hosts are written with: the TypeScript SDK v2 client
//! (`@modelcontextprotocol/client` on Node.js) and the Python SDK client
//! (PyPI `mcp`), over stdio and Streamable HTTP, in both protocol eras, on
//! the fixed-reply answerers of `stdio-bench` and `http-bench` and on
//! `mcp-testkit`.
//!
//! Usage: `sdk-bench [--quick] [--server PATH] --node NODE --ts-script FILE
//! --python PYTHON --py-script FILE` prints Markdown on stdout (the summary
//! table first) and progress on stderr. Each SDK is driven by its script
//! (`xtask/bench/sdks/`), a new process per round: it connects (not timed),
//! warms up, makes the calls asked and prints one JSON line of results.
//! Ours runs in this process on a current-thread Tokio runtime, as in
//! `stdio-bench` and `http-bench`. Sequential phases are pinned (this
//! process, the scripts and every server they start on CPU 0); the 64 in
//! flight phases are not.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The layout of `run_ours`'s future (two clients' call futures in one
// enum, spawned per worker) needs a deeper query than the default.
#![recursion_limit = "256"]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_bench::args::{has, value_of};
use mcp_bench::era::Era;
use mcp_bench::ours::{self, Ours};
use mcp_bench::proc::{HttpServer, beside, cpu_time, pin, testkit_path, unpin};
use mcp_bench::report::{cpus, median_f64, quantile_us, rate, ratio, us_f64};
use mcp_bench::wire::Replies;
use mcp_client_stdio::{ServerCommand, StdioOptions};
use mcp_http::HttpOptions;
use serde_json::Value;

/// The longest a whole run may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(30 * 60);
/// The longest one script run may take before it is killed.
const SCRIPT_LIMIT: Duration = Duration::from_secs(180);
/// Calls in flight in the throughput phase.
const DEPTH: usize = 64;

fn main() {
    mcp_bench::main("sdk-bench", WALL_LIMIT, run);
}

/// Where everything is.
struct Config {
    quick: bool,
    testkit: PathBuf,
    node: PathBuf,
    ts_script: PathBuf,
    python: PathBuf,
    py_script: PathBuf,
}

fn arg(args: &[String], name: &str) -> Result<PathBuf, String> {
    value_of(args, name).map(PathBuf::from).ok_or_else(|| format!("{name} is required\n{USAGE}"))
}

const USAGE: &str = "usage: sdk-bench [--quick] [--server PATH] --node NODE --ts-script FILE --python PYTHON --py-script FILE";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "Streamable HTTP",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ServerKind {
    Answerer,
    Testkit,
}

impl ServerKind {
    fn label(self) -> &'static str {
        match self {
            ServerKind::Answerer => "fixed-reply answerer",
            ServerKind::Testkit => "mcp-testkit",
        }
    }
}

/// The contenders, in the order of every table.
const NAMES: [&str; 3] = ["ours", "TypeScript SDK", "Python SDK"];

/// Calls per run, warm-up calls, rounds: sequential, then in flight.
fn counts(quick: bool, transport: Transport) -> ((usize, usize), (usize, usize), usize) {
    match (quick, transport) {
        (true, _) => ((20, 5), (DEPTH, DEPTH), 1),
        (false, Transport::Stdio) => ((2_000, 200), (4_096, 256), 3),
        (false, Transport::Http) => ((500, 100), (1_024, 128), 3),
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let config = Config {
        quick: has(args, "--quick"),
        testkit: testkit_path(args),
        node: arg(args, "--node")?,
        ts_script: arg(args, "--ts-script")?,
        python: arg(args, "--python")?,
        py_script: arg(args, "--py-script")?,
    };
    let mut summary = String::from(
        "| transport | era | server | p50 µs, pinned (ours / TS / Python) | TS ÷ ours | Python ÷ ours | \
         calls/s, 64 in flight (ours / TS / Python) | ours ÷ TS | ours ÷ Python | client CPU µs/call, pinned (ours / TS / Python) |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut full = String::from(
        "| transport | era | server | CPUs | in flight | client | p50 µs | p99 µs | calls/s | client CPU µs/call |\n\
         |---|---|---|---|---:|---|---:|---:|---:|---:|\n",
    );
    let mut under = Vec::new();
    let mut versions = (String::new(), String::new());
    for transport in [Transport::Stdio, Transport::Http] {
        for era in Era::BOTH {
            // The smoke checks that every script runs over each transport
            // and in each era: the handshake era over stdio, the stateless
            // one over HTTP, on the answerer only.
            if config.quick && (era == Era::Legacy) != (transport == Transport::Stdio) {
                continue;
            }
            let replies = Replies::learn(&config.testkit, era)?;
            let servers: &[ServerKind] = if config.quick {
                &[ServerKind::Answerer]
            } else {
                &[ServerKind::Answerer, ServerKind::Testkit]
            };
            for &server in servers {
                let phase = Phase { config: &config, transport, era, server, replies: &replies };
                let seq = phase.measure(1)?;
                let thr = phase.measure(DEPTH)?;
                let era_name = era_label(era);
                for (depth, results) in [(1, &seq), (DEPTH, &thr)] {
                    for (name, r) in NAMES.iter().zip(results.iter()) {
                        full.push_str(&format!(
                            "| {} | {era_name} | {} | {} | {depth} | {name} | {} | {} | {} | {} |\n",
                            transport.label(),
                            server.label(),
                            cpus(depth == 1),
                            if depth == 1 { us_f64(r.p50) } else { "–".to_owned() },
                            if depth == 1 { us_f64(r.p99) } else { "–".to_owned() },
                            rate(r.rate),
                            us_f64(r.cpu),
                        ));
                    }
                }
                for r in seq.iter().chain(thr.iter()) {
                    if !r.runtime.is_empty() && r.name == NAMES[1] {
                        versions.0.clone_from(&r.runtime);
                    } else if !r.runtime.is_empty() {
                        versions.1.clone_from(&r.runtime);
                    }
                }
                let p50_ts = seq[1].p50 / seq[0].p50;
                let p50_py = seq[2].p50 / seq[0].p50;
                let thr_ts = thr[0].rate / thr[1].rate;
                let thr_py = thr[0].rate / thr[2].rate;
                let row = format!("{} {} {}", transport.label(), era_name, server.label());
                for (what, x) in [
                    ("p50 against the TypeScript SDK", p50_ts),
                    ("p50 against the Python SDK", p50_py),
                    ("64 in flight against the TypeScript SDK", thr_ts),
                    ("64 in flight against the Python SDK", thr_py),
                ] {
                    if x < 3.0 {
                        under.push(format!("{row}, {what}: {x:.2}x"));
                    }
                }
                summary.push_str(&format!(
                    "| {} | {era_name} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    transport.label(),
                    server.label(),
                    each(&seq, |r| us_f64(r.p50)),
                    ratio(seq[1].p50, seq[0].p50),
                    ratio(seq[2].p50, seq[0].p50),
                    each(&thr, |r| rate(r.rate)),
                    ratio(thr[0].rate, thr[1].rate),
                    ratio(thr[0].rate, thr[2].rate),
                    each(&seq, |r| us_f64(r.cpu)),
                ));
            }
        }
    }
    let ((seq_stdio, warm_stdio), (thr_stdio, _), rounds) = counts(config.quick, Transport::Stdio);
    let ((seq_http, warm_http), (thr_http, _), _) = counts(config.quick, Transport::Http);
    let under = if under.is_empty() {
        "Every ratio is at least 3x.".to_owned()
    } else {
        format!("Ratios under 3x: {}.", under.join("; "))
    };
    print!(
        "{summary}\n\
         \"÷\" columns: how many times better ours is (above 1x, ours is better). Runtimes: {ts}; {py}. \
         rmcp on the same servers: the stdio and Streamable HTTP tables. {under}\n\n\
         ### All rows\n\n{full}\n\
         Each SDK is driven by its script in `xtask/bench/sdks/` (`ts-client.mjs`, `py_client.py`), a new process per round that connects \
         (not timed: spawn, handshake or `server/discover`), warms up, times its calls and prints one JSON line; ours (`mcp-client-stdio`, \
         `mcp-http`) runs in the benchmark process on a current-thread Tokio runtime, connected once per phase. \
         Sequential: {seq_stdio} calls over stdio ({seq_http} over HTTP) per client per round after {warm_stdio} ({warm_http}) warm-up calls, \
         latency of each call as its client measures it (`Instant`, `process.hrtime`, `time.perf_counter_ns`), pinned: the benchmark, the \
         scripts and every server they start restricted to CPU 0 (inherited, as under `taskset -c 0`). In flight: {thr_stdio} calls over \
         stdio ({thr_http} over HTTP) with {DEPTH} outstanding (64 tasks, promises or asyncio tasks calling in a loop), unpinned. Medians \
         of {rounds} rounds in which the clients take turns. Client CPU: user + system time of the client process per call \
         (`getrusage`, `process.cpuUsage`, `time.process_time`), the server's not counted. \
         Servers: the fixed-reply answerers (`stdio-bench raw-answer`, `http-bench answer json`: the testkit's own reply bytes, only the \
         `id` spliced in, no JSON work), which isolate the clients, and `mcp-testkit stdio` / `mcp-testkit http --reply json` (one \
         current-thread runtime), whose own work is in every round trip. Eras: the handshake era is `EraChoice::Legacy` for ours, \
         the TypeScript SDK's default and the Python SDK's `mode=\"legacy\"`; the stateless era is `EraChoice::Modern` for ours, \
         `versionNegotiation: {{ mode: {{ pin: '2026-07-28' }} }}` for the TypeScript SDK and `mode=\"auto\"` for the Python SDK (one \
         `server/discover` at connect for all three; each script checks the version negotiated).\n",
        ts = if versions.0.is_empty() { "Node.js ?".to_owned() } else { versions.0 },
        py = if versions.1.is_empty() { "Python ?".to_owned() } else { versions.1 },
    );
    Ok(())
}

/// One figure of every contender, in the order of [`NAMES`]: `a / b / c`.
fn each(results: &[Medians; 3], figure: impl Fn(&Medians) -> String) -> String {
    results.iter().map(figure).collect::<Vec<_>>().join(" / ")
}

fn era_label(era: Era) -> String {
    format!("{} ({})", era.name(), era.revision())
}

/// One contender's medians over the rounds of a phase.
#[derive(Default)]
struct Medians {
    name: &'static str,
    p50: f64,
    p99: f64,
    rate: f64,
    cpu: f64,
    /// The runtime a script reported (`Node.js 22.x`, `Python 3.x`).
    runtime: String,
}

/// One run of one contender.
#[derive(Clone, Copy, Default)]
struct Run {
    p50: f64,
    p99: f64,
    rate: f64,
    cpu: f64,
}

/// One transport, era and server.
struct Phase<'a> {
    config: &'a Config,
    transport: Transport,
    era: Era,
    server: ServerKind,
    replies: &'a Replies,
}

/// A stdio server command, or an HTTP server already listening.
enum Target {
    Stdio(PathBuf, Vec<String>),
    Http(HttpServer),
}

impl Phase<'_> {
    /// The server of this phase: for stdio the command each client spawns,
    /// for HTTP a server started now (under the affinity of the phase).
    fn target(&self) -> Result<Target, String> {
        let r = self.replies;
        match (self.transport, self.server) {
            (Transport::Stdio, ServerKind::Testkit) => {
                let mut args = vec!["stdio".to_owned()];
                args.extend(self.era.testkit_args().iter().map(|a| (*a).to_owned()));
                Ok(Target::Stdio(self.config.testkit.clone(), args))
            }
            (Transport::Stdio, ServerKind::Answerer) => {
                let discover = r.discover.clone().unwrap_or_else(|| "-".to_owned());
                let args = vec![
                    "raw-answer".to_owned(),
                    r.call.clone(),
                    r.init.clone(),
                    discover,
                    r.list.clone(),
                ];
                Ok(Target::Stdio(beside("stdio-bench")?, args))
            }
            (Transport::Http, ServerKind::Testkit) => {
                let mut args = vec!["--reply", "json"];
                args.extend(self.era.testkit_args());
                Ok(Target::Http(HttpServer::start(&self.config.testkit, &args)?))
            }
            (Transport::Http, ServerKind::Answerer) => {
                let mut command = Command::new(beside("http-bench")?);
                command.args(["answer", "json"]).args([
                    if self.era == Era::Legacy { r.init.as_str() } else { "-" },
                    r.discover.as_deref().unwrap_or("-"),
                    r.list.as_str(),
                    r.call.as_str(),
                ]);
                Ok(Target::Http(HttpServer::spawn(command)?))
            }
        }
    }

    /// Every contender's medians with `depth` calls in flight (1: pinned,
    /// sequential; more: unpinned).
    fn measure(&self, depth: usize) -> Result<[Medians; 3], String> {
        pin(depth == 1)?;
        let result = self.measure_with(depth);
        unpin()?;
        result
    }

    fn measure_with(&self, depth: usize) -> Result<[Medians; 3], String> {
        let ((seq, seq_warm), (thr, thr_warm), rounds) = counts(self.config.quick, self.transport);
        let (calls, warm) = if depth == 1 { (seq, seq_warm) } else { (thr, thr_warm) };
        let target = self.target()?;
        let rt = mcp_bench::runtime();
        let ours = rt.block_on(connect_ours(&target, self.era))?;
        rt.block_on(run_ours(&ours, warm, depth, None));
        let mut runs: [Vec<Run>; 3] = Default::default();
        let mut runtimes = [String::new(), String::new(), String::new()];
        for round in 0..rounds {
            eprintln!(
                "sdk-bench: {} {} {}, {} in flight, round {}/{rounds}",
                self.transport.label(),
                era_label(self.era),
                self.server.label(),
                depth,
                round + 1
            );
            let mut lat = Vec::with_capacity(if depth == 1 { calls } else { 0 });
            let cpu0 = cpu_time();
            let start = Instant::now();
            let done = rt.block_on(run_ours(&ours, calls, depth, (depth == 1).then_some(&mut lat)));
            let wall = start.elapsed();
            let cpu = cpu_time().saturating_sub(cpu0);
            runs[0].push(Run {
                p50: quantile_us(&mut lat, 0.5),
                p99: quantile_us(&mut lat, 0.99),
                rate: done as f64 / wall.as_secs_f64().max(1e-9),
                cpu: cpu.as_secs_f64() * 1e6 / done.max(1) as f64,
            });
            for which in 1..3 {
                let (run, runtime) = self.script(which, &target, calls, warm, depth)?;
                runs[which].push(run);
                runtimes[which] = runtime;
            }
        }
        rt.block_on(async {
            ours.close().await;
        });
        drop(target);
        let med = |v: &[Run], f: fn(&Run) -> f64| median_f64(&v.iter().map(f).collect::<Vec<_>>());
        let mut out: [Medians; 3] = Default::default();
        for (which, o) in out.iter_mut().enumerate() {
            *o = Medians {
                name: NAMES[which],
                p50: med(&runs[which], |r| r.p50),
                p99: med(&runs[which], |r| r.p99),
                rate: med(&runs[which], |r| r.rate),
                cpu: med(&runs[which], |r| r.cpu),
                runtime: std::mem::take(&mut runtimes[which]),
            };
        }
        Ok(out)
    }

    /// One run of an SDK's script (1: TypeScript, 2: Python).
    fn script(
        &self,
        which: usize,
        target: &Target,
        calls: usize,
        warm: usize,
        depth: usize,
    ) -> Result<(Run, String), String> {
        let mut cmd = if which == 1 {
            let mut c = Command::new(&self.config.node);
            c.arg(&self.config.ts_script);
            c
        } else {
            let mut c = Command::new(&self.config.python);
            c.arg(&self.config.py_script);
            c
        };
        cmd.args([
            "--era",
            self.era.name(),
            "--calls",
            &calls.to_string(),
            "--warm",
            &warm.to_string(),
        ]);
        cmd.args(["--depth", &depth.to_string()]);
        match target {
            Target::Stdio(program, args) => {
                cmd.arg("--").arg(program).args(args);
            }
            Target::Http(server) => {
                cmd.args(["--url", &server.url]);
            }
        }
        let line = run_bounded(cmd, NAMES[which])?;
        let v: Value = serde_json::from_str(line.trim())
            .map_err(|e| format!("{}: not a result line ({e}): {line:.300}", NAMES[which]))?;
        let num = |k: &str| v[k].as_f64().unwrap_or(0.0);
        if v["negotiated"].as_str() != Some(self.era.revision()) || num("calls") <= 0.0 {
            return Err(format!("{}: unexpected result {line:.300}", NAMES[which]));
        }
        let runtime = match (v["node"].as_str(), v["python"].as_str()) {
            (Some(n), _) => format!("Node.js {n}"),
            (_, Some(p)) => format!("Python {p}"),
            _ => String::new(),
        };
        Ok((
            Run {
                p50: num("p50_us"),
                p99: num("p99_us"),
                rate: num("calls_per_s"),
                cpu: num("cpu_us_per_call"),
            },
            runtime,
        ))
    }
}

/// Runs a script to its end (killed after [`SCRIPT_LIMIT`]); its stdout.
fn run_bounded(mut cmd: Command, name: &str) -> Result<String, String> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| format!("{name}: cannot start {cmd:?}: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("{name}: {e}"))? {
            Some(status) => break status,
            None if start.elapsed() > SCRIPT_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{name}: killed after {}s", SCRIPT_LIMIT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = reader.join().map_err(|_| format!("{name}: the stdout reader panicked"))?;
    if !status.success() {
        return Err(format!("{name} exited with {status}"));
    }
    Ok(out)
}

/// Connected and pinned to `era`, as `stdio-bench` and `http-bench` do.
async fn connect_ours(target: &Target, era: Era) -> Result<Ours, String> {
    let choice = era.choice();
    match target {
        Target::Stdio(program, args) => {
            let command = ServerCommand::new(program.to_string_lossy()).args(args.iter().cloned());
            let mut options = StdioOptions::new("bench");
            options.client.era = choice;
            Ok(Ours::Stdio(ours::spawn_stdio(command, options, "ours").await?))
        }
        Target::Http(server) => {
            let mut options = HttpOptions::new("bench");
            options.client.era = choice;
            Ok(Ours::Http(ours::connect_http(&server.url, options, "ours").await?))
        }
    }
}

/// One echo call of ours; a failure ends the benchmark.
async fn call(client: &Ours) {
    if let Err(e) = client.echo().await {
        panic!("ours: echo failed: {e}");
    }
}

/// `n` calls with `depth` in flight; how many were made. With `lat`, each
/// call's latency (sequential only). A failed call ends the benchmark.
async fn run_ours(ours: &Ours, n: usize, depth: usize, lat: Option<&mut Vec<Duration>>) -> usize {
    let per_worker = n / depth.max(1);
    if depth <= 1 {
        let mut lat = lat;
        for _ in 0..n {
            let start = Instant::now();
            call(ours).await;
            if let Some(lat) = lat.as_deref_mut() {
                lat.push(start.elapsed());
            }
        }
        return n;
    }
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..depth {
        let client = ours.clone();
        set.spawn(async move {
            for _ in 0..per_worker {
                call(&client).await;
            }
        });
    }
    while let Some(done) = set.join_next().await {
        done.expect("an ours worker panicked");
    }
    per_worker * depth
}
