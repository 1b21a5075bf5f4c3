//! `bridge-bench latency`: what each path adds to a call's round trip.

use std::time::Instant;

use mcp_bench::ours::Ours;
use mcp_bench::proc::{pin, unpin};
use mcp_bench::report::{cpus, median_f64, quantile_us, ratio, us_f64};
use mcp_bench::runtime;

use crate::flags::Config;
use crate::route::connect;
use crate::scenarios::{Scenario, scenarios};

/// Calls in flight in the concurrent rows.
const DEPTH: usize = 16;

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

pub(crate) async fn timed_sequential(client: &Ours, n: usize) -> Result<f64, String> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        client.echo().await.map_err(|e| format!("an echo call failed: {e}"))?;
        lat.push(start.elapsed());
    }
    Ok(quantile_us(&mut lat, 0.5))
}

/// `n` calls, `depth` at a time, each timed; their p50 (µs).
pub(crate) async fn timed_in_flight(client: &Ours, n: usize, depth: usize) -> Result<f64, String> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..depth {
        let client = client.clone();
        let per = n / depth;
        set.spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for _ in 0..per {
                let start = Instant::now();
                client.echo().await.map_err(|e| format!("an echo call failed: {e}"))?;
                lat.push(start.elapsed());
            }
            Ok::<_, String>(lat)
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(done) = set.join_next().await {
        all.extend(done.map_err(|e| format!("a worker panicked: {e}"))??);
    }
    Ok(quantile_us(&mut all, 0.5))
}

/// One scenario's rounds, pinned or not: per path, its rounds.
fn latency_phase(
    config: &Config,
    which: usize,
    pinned: bool,
) -> Result<(Scenario, Vec<LatRounds>), String> {
    pin(pinned)?;
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

/// `latency`: per scenario, what each path adds to a call, sequential and
/// with calls in flight, pinned and not.
pub(crate) fn latency(config: &Config) -> Result<String, String> {
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
                    cpus(pinned),
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
