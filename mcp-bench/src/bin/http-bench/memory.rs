//! `http-bench memory`: what idle sessions cost, measured in a process of
//! their own (`http-bench hold`).

use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_bench::era::Era;
use mcp_bench::proc::{HttpServer, status_bytes};
use mcp_bench::report::{kib, median_f64, mib, ratio};
use mcp_bench::runtime;
use mcp_bench::theirs::Rmcp;
use mcp_http::HttpClient;

use crate::clients::{connect_ours, connect_rmcp_default, connect_rmcp_pooled, pooled_reqwest};
use crate::flags::Config;

/// `hold ours|rmcp|rmcp-pooled N URL`: a process that opens N sessions
/// (initialized, then idle) and prints `baseline_rss hwm rss` in bytes.
pub(crate) fn hold(args: &[String]) -> Result<(), String> {
    let which = args.first().map(String::as_str).unwrap_or("ours");
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10).min(2000);
    let url = args.get(2).ok_or("hold: no URL")?.clone();
    let rt = runtime();
    rt.block_on(async {
        let shared = pooled_reqwest();
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let add = async |ours: &mut Vec<HttpClient>, theirs: &mut Vec<Rmcp>| {
            match which {
                "ours" => ours.push(connect_ours(&url, Era::Legacy).await?),
                "rmcp" => theirs.push(connect_rmcp_default(&url, Era::Legacy).await?),
                _ => theirs.push(connect_rmcp_pooled(&url, shared.clone(), Era::Legacy).await?),
            }
            Ok::<(), String>(())
        };
        add(&mut ours, &mut theirs).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        for _ in 0..n {
            add(&mut ours, &mut theirs).await?;
        }
        // Idle: let background work (streams, pools) settle.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let hwm = status_bytes(None, "VmHWM").ok_or("no VmHWM")?;
        let rss = status_bytes(None, "VmRSS").ok_or("no VmRSS")?;
        println!("{before} {hwm} {rss}");
        drop(ours);
        drop(theirs);
        Ok(())
    })
}

/// `memory`: the memory of idle sessions, each client kind in a process
/// of its own (`hold`).
pub(crate) fn memory(config: &Config) -> Result<String, String> {
    let (n, rounds) = if config.quick { (20, 1) } else { (1_000, 3) };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let kinds = ["ours", "rmcp", "rmcp-pooled"];
    let mut per: [Vec<f64>; 3] = Default::default();
    let mut hwms: [Vec<f64>; 3] = Default::default();
    let mut server_per: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        eprintln!("http-bench: memory round {}/{rounds}", round + 1);
        for (i, which) in kinds.iter().enumerate() {
            let server = HttpServer::start(&config.testkit, &[])?;
            let server_before = status_bytes(Some(server.pid()), "VmRSS").unwrap_or(0) as f64;
            let out = Command::new(&exe)
                .args(["hold", which, &n.to_string(), &server.url])
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| e.to_string())?;
            let server_after = status_bytes(Some(server.pid()), "VmHWM").unwrap_or(0) as f64;
            let text = String::from_utf8_lossy(&out.stdout);
            let nums: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            if !out.status.success() || nums.len() != 3 {
                return Err(format!("hold {which} failed: {text}"));
            }
            per[i].push((nums[1] - nums[0]) / n as f64);
            hwms[i].push(nums[1]);
            server_per[i].push((server_after - server_before) / n as f64);
        }
    }
    let m = |v: &[f64]| median_f64(v);
    Ok(format!(
        "| measure | mcp-http (ours) | rmcp default | rmcp pooled (one shared client) | rmcp default / ours |\n|---|---:|---:|---:|---:|\n\
         | peak RSS (VmHWM) of the process holding {n} idle sessions | {} | {} | {} | {} |\n\
         | client memory per idle session ((VmHWM − baseline) / {n}) | {} | {} | {} | {} |\n\
         | (for reference) testkit server growth per session | {} | {} | {} | – |\n\n\
         A process opens one session (baseline VmRSS), then {n} more (each a new client, initialized, then left idle), and reads its VmHWM; medians of {rounds} rounds, a fresh server each time.\n",
        mib(m(&hwms[0])),
        mib(m(&hwms[1])),
        mib(m(&hwms[2])),
        ratio(m(&hwms[1]), m(&hwms[0])),
        kib(m(&per[0])),
        kib(m(&per[1])),
        kib(m(&per[2])),
        ratio(m(&per[1]), m(&per[0])),
        kib(m(&server_per[0])),
        kib(m(&server_per[1])),
        kib(m(&server_per[2])),
    ))
}
