//! Many stdio servers started at once through `mcp-host-registry`, against
//! the slowest of the same servers started one at a time.
//!
//! Usage: `fleet-bench [--quick] [--server PATH] [--servers N] [--delays MS,MS,...]`
//!
//! Each round starts N `mcp-testkit stdio` servers one after another, each
//! in a registry of its own (spawn, era probe, handshake: `initialize`),
//! and keeps the slowest; then N at once in one registry
//! (`Registry::initialize_all`, all N in flight), timing until the last is
//! ready. This for servers that serve as soon as they run (their start is
//! only CPU), and for servers that first wait a while (`--delays`, default
//! 100 and 500 ms: the testkit's `--start-delay-ms`), as servers started
//! through `npx`, `uvx` or `docker run` wait on the network or a daemon. The registry's default connector is used as a host would use it
//! (PATH discovery on: its one-off login-shell probe runs in the warm-up).
//! Closing is not timed. The CPU of the fleet is measured too (this
//! process's during the start, and the servers' whole lives as the
//! children's usage once they are reaped), for the floor that the
//! machine's CPUs put under N starts at once. Prints a Markdown table.

// A benchmark binary: stdout is the table, stderr the progress.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_bench::args::{after, has};
use mcp_bench::proc::{children_cpu_time, cpu_time, testkit_path, unpin};
use mcp_bench::report::{median_f64, ms, ratio};
use mcp_host_registry::{Config, Registry, RegistryOptions, ServerCommand, ServerConfig};

/// The longest any run of this binary may take (a hung server ends it).
const WALL_LIMIT: Duration = Duration::from_secs(10 * 60);

fn main() {
    mcp_bench::main("fleet-bench", WALL_LIMIT, run);
}

fn run(args: &[String]) -> Result<(), String> {
    let quick = has(args, "--quick");
    let testkit = testkit_path(args);
    let servers = match after(args, "--servers") {
        Some(n) => n
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .ok_or("--servers needs a positive number")?,
        None if quick => 5,
        None => 50,
    };
    let delays: Vec<u64> = match after(args, "--delays") {
        Some(list) => list
            .ok_or("--delays needs a list of milliseconds")?
            .split(',')
            .map(|d| {
                d.trim().parse::<u64>().map_err(|_| format!("not a number of milliseconds: {d:?}"))
            })
            .collect::<Result<_, _>>()?,
        None if quick => vec![100],
        None => vec![100, 500],
    };
    unpin()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("no Tokio runtime: {e}"))?;
    rt.block_on(async {
        // Servers whose start is only CPU: more rounds, they are short.
        let cpu_bound = measure(&testkit, servers, if quick { 1 } else { 5 }, 0).await?;
        let mut waiting = Vec::new();
        for &delay in &delays {
            waiting.push(measure(&testkit, servers, if quick { 1 } else { 3 }, delay).await?);
        }
        Ok::<_, String>(table(servers, &cpu_bound, &waiting))
    })
    .map(|table| print!("{table}"))
}

fn registry(testkit: &Path, delay_ms: u64, names: impl Iterator<Item = String>) -> Registry {
    let mut command = ServerCommand::new(testkit.to_string_lossy().into_owned()).arg("stdio");
    if delay_ms > 0 {
        command = command.arg("--start-delay-ms").arg(delay_ms.to_string());
    }
    let servers: Vec<ServerConfig> =
        names.map(|name| ServerConfig::stdio(name, command.clone())).collect();
    let mut options = RegistryOptions::default();
    options.max_concurrency = servers.len();
    Registry::new(Config { servers, ..Default::default() }, options)
}

/// Starts every server of `registry` at once; the time until the last is
/// ready (any failure ends the run).
async fn start_all(registry: &Registry) -> Result<Duration, String> {
    let start = Instant::now();
    let results = registry.initialize_all().await;
    let time = start.elapsed();
    for r in results {
        r.result.map_err(|e| format!("{}: {e}", r.server))?;
    }
    Ok(time)
}

/// The figures of one kind of server (medians over the rounds).
struct Figures {
    /// How long each server waits before it serves, in ms.
    delay_ms: u64,
    rounds: usize,
    /// One alone: the median start, and the slowest of the N.
    single: f64,
    slowest: f64,
    /// N at once, until the last is ready.
    fleet: f64,
    /// CPU per start: this process's, and the server process's whole life.
    client_cpu: f64,
    server_cpu: f64,
}

async fn measure(
    testkit: &Path,
    servers: usize,
    rounds: usize,
    delay_ms: u64,
) -> Result<Figures, String> {
    // Warm-up: the PATH probe, the page cache, the runtime's threads.
    let warm = registry(testkit, delay_ms, std::iter::once("warm".to_owned()));
    start_all(&warm).await?;
    warm.close_all().await;

    let mut slowest = Vec::new();
    let mut singles = Vec::new();
    let mut fleets = Vec::new();
    let mut cpus = Vec::new();
    for round in 0..rounds {
        eprintln!("fleet-bench: servers waiting {delay_ms} ms: round {}/{rounds}", round + 1);
        let mut max = Duration::ZERO;
        for i in 0..servers {
            let one = registry(testkit, delay_ms, std::iter::once(format!("s{i}")));
            let time = start_all(&one).await?;
            one.close_all().await;
            singles.push(time.as_secs_f64());
            max = max.max(time);
        }
        slowest.push(max.as_secs_f64());
        let fleet = registry(testkit, delay_ms, (0..servers).map(|i| format!("s{i}")));
        // The single starts' servers reaped first.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (before, children_before) = (cpu_time(), children_cpu_time());
        fleets.push(start_all(&fleet).await?.as_secs_f64());
        let client = cpu_time().saturating_sub(before);
        fleet.close_all().await;
        // The servers' whole lives (start, idle, shut down), once reaped.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let server = children_cpu_time().saturating_sub(children_before);
        cpus.push((client.as_secs_f64(), server.as_secs_f64()));
    }
    let per_start = |pick: fn(&(f64, f64)) -> f64| {
        median_f64(&cpus.iter().map(|c| pick(c) / servers as f64).collect::<Vec<_>>())
    };
    Ok(Figures {
        delay_ms,
        rounds,
        single: median_f64(&singles),
        slowest: median_f64(&slowest),
        fleet: median_f64(&fleets),
        client_cpu: per_start(|c| c.0),
        server_cpu: per_start(|c| c.1),
    })
}

fn table(servers: usize, cpu_bound: &Figures, waiting: &[Figures]) -> String {
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = format!(
        "| servers | rounds | one alone: median start | one alone: slowest of the {servers} | \
         {servers} at once: until the last is ready | {servers} at once / slowest single |\n\
         |---|---:|---:|---:|---:|---:|\n"
    );
    for f in std::iter::once(cpu_bound).chain(waiting) {
        let kind = match f.delay_ms {
            0 => "serve at once (start is CPU only)".to_owned(),
            ms => format!("wait {ms} ms before serving"),
        };
        out.push_str(&format!(
            "| {kind} | {} | {} ms | {} ms | {} ms | {} |\n",
            f.rounds,
            d(f.single),
            d(f.slowest),
            d(f.fleet),
            ratio(f.fleet, f.slowest),
        ));
    }
    let f = cpu_bound;
    // Only the start counts against the wall time; the server's share
    // holds its shut-down too, so this floor is a little high.
    let floor = (f.client_cpu + f.server_cpu) * servers as f64 / nproc as f64;
    out.push_str(&format!(
        "\n| CPU, servers that serve at once | time |\n|---|---:|\n\
         | per start: the client (this process, during the start) | {} ms |\n\
         | per start: the server process (its whole life, start to shut-down) | {} ms |\n\
         | floor: {servers} starts' CPU over the {nproc} CPUs | {} ms |\n\n\
         Each round starts the {servers} servers one at a time, then all at once (medians over \
         the rounds). A start is the registry's first use of a server: spawn `mcp-testkit stdio`, \
         the era probe (`server/discover`, refused by this handshake-era server) and `initialize`; \
         a waiting server sleeps before it reads stdin (`--start-delay-ms`). \
         Goal: {servers} at once within 1.2x the slowest single start.\n",
        d(f.client_cpu),
        d(f.server_cpu),
        d(floor),
    ));
    out
}
