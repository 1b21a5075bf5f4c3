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
//!
//! One file a job: the flags and what a phase measures (`flags.rs`); one
//! phase, its server and rounds (`phase.rs`); the SDKs' scripts
//! (`scripts.rs`); ours in this process (`ours.rs`); here, the tables.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The layout of `run_ours`'s future (two clients' call futures in one
// enum, spawned per worker) needs a deeper query than the default.
#![recursion_limit = "256"]

mod flags;
mod ours;
mod phase;
mod scripts;

use std::time::Duration;

use mcp_bench::era::Era;
use mcp_bench::report::{cpus, rate, ratio, us_f64};
use mcp_bench::wire::Replies;

use crate::flags::{Config, ServerKind, Transport, counts};
use crate::phase::{Medians, NAMES, Phase};

/// The longest a whole run may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Calls in flight in the throughput phase.
pub(crate) const DEPTH: usize = 64;

fn main() {
    mcp_bench::main("sdk-bench", WALL_LIMIT, run);
}

fn run(args: &[String]) -> Result<(), String> {
    let config = Config::from_args(args)?;
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

pub(crate) fn era_label(era: Era) -> String {
    format!("{} ({})", era.name(), era.revision())
}
