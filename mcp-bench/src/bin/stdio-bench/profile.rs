//! `stdio-bench --profile` and `--profile-start`: one contender alone, for
//! callgrind and `strace -c`.

use mcp_bench::era::Era;
use mcp_bench::report::median_f64;
use mcp_bench::theirs;
use mcp_bench::wire::Replies;
use mcp_bench::{ours, runtime};

use crate::clients::{spawn_ours, spawn_rmcp};
use crate::flags::Config;
use crate::server::ServerSpec;
use crate::startup::{start_once, startup_servers};

/// `--profile ours|rmcp N`: N sequential calls of one client against the
/// fixed-reply answerer, for callgrind.
pub(crate) fn profile(config: &Config, which: &str, n: usize, depth: usize) -> Result<(), String> {
    let server = ServerSpec::answerer(&Replies::learn(&config.testkit, config.era)?)?;
    let rt = runtime();
    let per_task = n.min(1_000_000) / depth.max(1);
    rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        if which == "rmcp" {
            let client = spawn_rmcp(&server).await?;
            for _ in 0..depth.max(1) {
                set.spawn(theirs::echoes(client.peer().clone(), per_task));
            }
            set.join_all().await;
            let _ = client.cancel().await;
        } else {
            let client = spawn_ours(&server).await?;
            for _ in 0..depth.max(1) {
                set.spawn(ours::echoes(client.clone(), per_task));
            }
            set.join_all().await;
            let _ = client.close().await;
        }
        Ok(())
    })
}

/// `--profile-start ours|rmcp|raw N`: N starts (spawn + handshake + close)
/// of one contender against `mcp-testkit stdio` of the `--era` given, for
/// callgrind and `strace -c`; prints the median start in µs on stderr.
pub(crate) fn profile_start(config: &Config, which: &str, n: usize) -> Result<(), String> {
    let rt = runtime();
    let servers = startup_servers(config);
    let base = match which {
        "ours" => 0,
        "rmcp" => 1,
        "raw" => 2,
        other => return Err(format!("--profile-start: unknown contender {other}")),
    };
    let which = base + if config.era == Era::Modern { 3 } else { 0 };
    let mut times = Vec::new();
    for _ in 0..n.clamp(1, 100_000) {
        times.push(start_once(&rt, &servers, which)?.as_secs_f64() * 1e6);
    }
    eprintln!("stdio-bench: {} starts, median {:.1} µs", times.len(), median_f64(&times));
    Ok(())
}
