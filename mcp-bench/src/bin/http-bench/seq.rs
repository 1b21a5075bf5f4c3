//! `http-bench seq`: sequential calls, each timed, of every contender in
//! turn; p50, p99, calls per second and client CPU per call.

use std::time::Instant;

use mcp_bench::proc::{cpu_time, pin, unpin};
use mcp_bench::report::{cpus, median_f64, quantile_us, rate, ratio, us_f64};

use crate::answer::learn_replies;
use crate::contenders::{Contenders, NAMES};
use crate::flags::Config;
use crate::{MAX_DEPTH, era_note};

/// `seq`: sequential latency and client CPU per call, pinned and not.
pub(crate) fn sequential(config: &Config) -> Result<String, String> {
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
            pin(pinned)?;
            let mut c = Contenders::start(config, server, reply, 1, &replies)?;
            let mut lat = Vec::with_capacity(calls);
            for which in 0..4 {
                c.sequential(which, warm, &mut lat);
                lat.clear();
            }
            let mut p50 = vec![Vec::new(); 4];
            let mut p99 = vec![Vec::new(); 4];
            let mut rates = vec![Vec::new(); 4];
            let mut cpu_us = vec![Vec::new(); 4];
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
                    cpu_us[which].push(cpu.as_secs_f64() * 1e6 / calls as f64);
                    p50[which].push(quantile_us(&mut lat, 0.5));
                    p99[which].push(quantile_us(&mut lat, 0.99));
                }
            }
            c.close();
            let m50: Vec<f64> = p50.iter().map(|v| median_f64(v)).collect();
            for which in 0..4 {
                table.push_str(&format!(
                    "| {} | {reply} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    server.label(),
                    cpus(pinned),
                    NAMES[which],
                    us_f64(m50[which]),
                    us_f64(median_f64(&p99[which])),
                    rate(median_f64(&rates[which])),
                    us_f64(median_f64(&cpu_us[which])),
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
