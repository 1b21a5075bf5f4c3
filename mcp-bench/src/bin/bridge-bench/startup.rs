//! `bridge-bench startup`: how long each path takes to its first answer,
//! and what the bridge process holds once idle.

use std::time::{Duration, Instant};

use mcp_bench::proc::{status_bytes, unpin};
use mcp_bench::report::{kib, median_f64, ms, ratio};
use mcp_bench::runtime;

use crate::flags::Config;
use crate::route::{Route, connect};
use crate::scenarios::{Scenario, scenarios};

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
        conn.client.echo().await.map_err(|e| format!("{}: echo failed: {e}", path.label))?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        idle = conn.bridge_pid().and_then(|pid| status_bytes(Some(pid), "VmRSS"));
    }
    conn.close().await;
    Ok((took, idle))
}

/// `startup`: spawn to the first answer through each path, and the
/// bridge's idle RSS.
pub(crate) fn startup(config: &Config) -> Result<String, String> {
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
