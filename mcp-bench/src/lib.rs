//! Benchmarks of the workspace against the crates other MCP clients use.
//!
//! Never published. Each benchmark is a plain timing binary (warm-up, then
//! several alternating runs, medians) that prints a Markdown table; `cargo
//! xtask bench <name>` builds it in release mode, runs it and records the
//! table in `BENCHMARKS.md`. This library holds what the binaries share.
//!
//! - `sse-bench`: `text/event-stream` decoding, `mcp-sse` against
//!   `sse-stream` 0.2 (rmcp's) and `eventsource-stream` 0.2.
//! - `stdio-bench`: `mcp-stdio` against rmcp's child-process transport and a
//!   raw pipe ping-pong, on the `mcp-testkit` server: sequential latency and
//!   CPU per call (pinned to one CPU and not), throughput with 1, 16 and 64
//!   calls in flight, spawn + initialize, memory per client.
//! - `http-bench`: `mcp-http` against rmcp's Streamable HTTP client (its
//!   default and with a pooled `reqwest::Client`) and raw hyper POSTs, on
//!   the `mcp-testkit` HTTP server with JSON and SSE replies: sequential
//!   latency, throughput at 1, 16 and 64 in flight, initialize, memory per
//!   idle session.
//! - `sdk-bench`: `mcp-stdio` and `mcp-http` against the TypeScript SDK v2
//!   and Python SDK clients (each driven by its script in
//!   `xtask/bench/sdks/`), over stdio and Streamable HTTP, on the
//!   fixed-reply answerers of `stdio-bench` and `http-bench` and on
//!   `mcp-testkit`: pinned sequential latency, 64 calls in flight.
//! - `fleet-bench`: `mcp-host-registry` starting 50 `mcp-testkit` stdio
//!   servers at once (`initialize_all`), against the slowest of the same
//!   servers started one at a time.
//! - `bridge-bench`: `mcpc serve` against the Node bridges `mcp-remote` and
//!   `supergateway` in front of the same `mcp-testkit`, and against calling
//!   it directly: added latency, startup and RSS, and a soak of the bridge.
//! - `soak` (`cargo xtask soak`): many calls over stdio and Streamable HTTP
//!   in both eras with a server restart half way, checking that RSS,
//!   descriptors and tasks come back to their first sample.
//!
//! The round-trip measures run in either protocol era (`--era
//! legacy|modern`, see [`era::Era`]), every contender pinned to it.
//!
//! What the binaries share, once: [`alternating`] runs, the echo call
//! ([`MESSAGE`], [`echo_args`]), [`runtime`] and [`main`] (here); flags
//! and the mode word ([`args`]); CPU time, memory, affinity, the testkit
//! and server processes ([`proc`]); medians, quantiles and the tables'
//! number formats ([`report`]); the era ([`era`]); our clients ([`ours`])
//! and rmcp's ([`theirs`]) as every benchmark connects and calls them; the
//! raw JSON-RPC texts and the fixed-reply answerers' templates ([`wire`]).

pub mod args;
pub mod era;
pub mod ours;
pub mod proc;
pub mod report;
pub mod theirs;
pub mod wire;

use std::time::{Duration, Instant};

use mcp_proto::types::JsonObject;
use serde_json::Value;

/// The echoed message: the size of a short tool argument.
pub const MESSAGE: &str = "the quick brown fox jumps over the lazy dog";

/// The arguments of one echo call: `{"message": MESSAGE}`.
pub fn echo_args() -> JsonObject {
    let mut args = JsonObject::new();
    args.insert("message".into(), Value::String(MESSAGE.into()));
    args
}

/// The runtime a benchmark's clients run on: current-thread, I/O and
/// time enabled.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime")
}

/// A benchmark binary's `main`: the wall-clock [`proc::watchdog`] of
/// `limit`, then `run` on the arguments; an error goes to stderr as
/// `name: error` and ends the process with exit code 1.
#[allow(clippy::print_stderr)]
pub fn main(name: &str, limit: Duration, run: impl FnOnce(&[String]) -> Result<(), String>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    proc::watchdog(limit);
    if let Err(e) = run(&args) {
        eprintln!("{name}: {e}");
        std::process::exit(1);
    }
}

/// Start-up measures: each of `contenders` starts once to warm up, then
/// `rounds` rounds of `starts` passes; in each pass every contender makes
/// one start, in an order shuffled afresh for the pass (a fixed seed, so
/// runs repeat it). No contender is always timed after the same other one
/// (whose leftovers, or whose idle server, it would inherit), nor always
/// first. `once(which)` makes one start of contender `which` and returns
/// its time. Returns each contender's times in seconds, in contender
/// order.
#[allow(clippy::print_stderr)]
pub fn start_rounds(
    name: &str,
    contenders: usize,
    rounds: usize,
    starts: usize,
    mut once: impl FnMut(usize) -> Result<Duration, String>,
) -> Result<Vec<Vec<f64>>, String> {
    for which in 0..contenders {
        once(which)?;
    }
    let mut times = vec![Vec::with_capacity(rounds * starts); contenders];
    let mut order: Vec<usize> = (0..contenders).collect();
    let mut seed = 0x853c_49e6_748f_ea9b_u64;
    for round in 0..rounds {
        eprintln!("{name}: startup round {}/{rounds}", round + 1);
        for _ in 0..starts {
            shuffle(&mut order, &mut seed);
            for &which in &order {
                times[which].push(once(which)?.as_secs_f64());
            }
        }
    }
    Ok(times)
}

/// Shuffles `items` (Fisher-Yates) with the SplitMix64 sequence that
/// `seed` carries on.
fn shuffle(items: &mut [usize], seed: &mut u64) {
    for i in (1..items.len()).rev() {
        *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The modulo's bias is below 2^-58 for these lengths.
        let j = (z % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Runs each contender once to warm up, then `rounds` rounds in which every
/// contender runs once, in turn (so that a slow phase of the machine hits
/// them all alike). Returns each contender's run times, in the given order.
///
/// A contender returns a value that the caller checks (for instance the
/// number of events it decoded); every run must return the same value as the
/// warm-up, or this panics naming the contender.
pub fn alternating<T: PartialEq + std::fmt::Debug>(
    rounds: usize,
    contenders: &mut [(&str, &mut dyn FnMut() -> T)],
) -> Vec<Vec<Duration>> {
    let expected: Vec<T> = contenders.iter_mut().map(|(_, run)| run()).collect();
    let mut times = vec![Vec::with_capacity(rounds); contenders.len()];
    for _ in 0..rounds {
        for (i, (name, run)) in contenders.iter_mut().enumerate() {
            let start = Instant::now();
            let got = std::hint::black_box(run());
            times[i].push(start.elapsed());
            assert_eq!(got, expected[i], "{name} gave a different result on a later run");
        }
    }
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_runs_every_contender_each_round() {
        let (mut a, mut b) = (0, 0);
        let mut run_a = || {
            a += 1;
            1
        };
        let mut run_b = || {
            b += 1;
            1
        };
        let times = alternating(3, &mut [("a", &mut run_a), ("b", &mut run_b)]);
        assert_eq!(times.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3]);
        assert_eq!((a, b), (4, 4));
    }

    #[test]
    fn start_rounds_interleave_the_contenders_in_shuffled_passes() {
        let mut order = Vec::new();
        let times = start_rounds("test", 4, 5, 4, |which| {
            order.push(which);
            Ok(Duration::from_millis(which as u64))
        })
        .unwrap();
        // Warm-up in contender order, then 20 passes of one start each.
        assert_eq!(order[..4], [0, 1, 2, 3]);
        let passes: Vec<&[usize]> = order[4..].chunks(4).collect();
        assert_eq!(passes.len(), 20);
        for pass in &passes {
            let mut seen = pass.to_vec();
            seen.sort_unstable();
            assert_eq!(seen, [0, 1, 2, 3], "{pass:?}");
        }
        // Every contender is first in some pass, and follows more than one
        // other contender within passes.
        for which in 0..4 {
            assert!(passes.iter().any(|p| p[0] == which), "{which} never first: {passes:?}");
            let mut before: Vec<usize> = passes
                .iter()
                .filter_map(|p| {
                    p.iter().position(|&w| w == which).filter(|&i| i > 0).map(|i| p[i - 1])
                })
                .collect();
            before.sort_unstable();
            before.dedup();
            assert!(before.len() > 1, "{which} always after {before:?}: {passes:?}");
        }
        // The same order on every run.
        let mut again = Vec::new();
        start_rounds("test", 4, 5, 4, |which| {
            again.push(which);
            Ok(Duration::ZERO)
        })
        .unwrap();
        assert_eq!(again, order);
        assert_eq!(times.iter().map(Vec::len).collect::<Vec<_>>(), [20, 20, 20, 20]);
        assert!(times[2].iter().all(|&t| (t - 0.002).abs() < 1e-9));
        assert!(start_rounds("test", 2, 1, 1, |_| Err("no".to_owned())).is_err());
    }
}

/// The repository README's quick start, compiled as doc tests. It lives in
/// this never-published crate: a published crate cannot include a file
/// from outside its own folder.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct RepositoryReadmeDoctests;
