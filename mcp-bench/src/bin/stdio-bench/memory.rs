//! `stdio-bench memory`: RSS per initialized client, measured in a
//! process of its own (`hold`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_bench::era::Era;
use mcp_bench::proc::status_bytes;
use mcp_bench::report::{kib, median_f64, ratio};
use mcp_bench::theirs::{self, Rmcp};
use mcp_bench::{ours, runtime};
use mcp_client_stdio::StdioClient;

use crate::clients::{spawn_ours, spawn_rmcp};
use crate::flags::Config;
use crate::server::ServerSpec;

pub(crate) fn memory(config: &Config) -> Result<String, String> {
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

/// `hold ours|rmcp N SERVER`: a process holding N initialized clients to N
/// servers; prints `baseline_rss rss_after` in bytes.
pub(crate) fn hold(args: &[String]) -> Result<(), String> {
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
