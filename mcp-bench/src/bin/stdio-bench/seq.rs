//! `stdio-bench seq`: sequential calls, each timed, of every contender in
//! turn, pinned and not; p50, p99, calls per second and client CPU per
//! call, and the JSON floor.

use std::time::Instant;

use mcp_bench::MESSAGE;
use mcp_bench::era::Era;
use mcp_bench::proc::{cpu_time, pin, unpin};
use mcp_bench::report::{cpus, median_f64, quantile_us, rate, ratio, us_f64};
use mcp_bench::wire::Replies;
use serde_json::{Value, json};

use crate::contenders::{Contenders, NAMES};
use crate::era_note;
use crate::flags::Config;
use crate::server::{ServerSpec, servers};

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

pub(crate) fn sequential(config: &Config) -> Result<String, String> {
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
