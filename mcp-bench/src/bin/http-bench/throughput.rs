//! `http-bench throughput`: every contender's calls per second with 1, 16
//! and 64 calls in flight, and what client and server spend per call.

use std::time::Duration;

use mcp_bench::proc::{cpu_time, process_cpu_time, unpin};
use mcp_bench::report::{median_f64, rate, ratio, us_f64};

use crate::answer::learn_replies;
use crate::contenders::{Contenders, NAMES};
use crate::flags::Config;
use crate::{MAX_DEPTH, era_note};

/// `throughput`: calls per second at 1, 16 and 64 in flight, and the
/// client and server CPU per call at the deepest.
pub(crate) fn throughput(config: &Config) -> Result<String, String> {
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
        cpu_table.push_str(&format!(
            "\n| server | reply | client at {MAX_DEPTH} in flight | client CPU µs/call | server CPU µs/call | total µs/call | calls/s two CPUs allow (2 / total) |\n|---|---|---|---:|---:|---:|---:|\n"
        ));
        for (which, name) in NAMES.iter().enumerate() {
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
