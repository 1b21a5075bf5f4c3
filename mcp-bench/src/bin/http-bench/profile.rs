//! `http-bench --profile`: one contender alone, for callgrind and
//! `strace`.

use std::time::{Duration, Instant};

use mcp_bench::era::Era;
use mcp_bench::proc::{HttpServer, pin_to_cpu};
use mcp_bench::{ours, runtime};

use mcp_http::{HttpOptions, HttpPool};

use crate::clients::{connect_ours, connect_ours_in, connect_rmcp_pooled, pooled_reqwest};
use crate::flags::{Config, Placement};
use crate::raw::{Raw, RawSame};

/// `--profile json|sse|raw N`: N sequential calls of ours (or of the raw
/// hyper POSTs), for callgrind. `--profile start|start-raw N`: N start-ups
/// in the era of `--era` (a new client and its handshake or
/// `server/discover`, then closed; or raw hyper's), for callgrind and
/// `strace`; `start-pooled` and `start-rmcp-pooled` the same for ours with
/// one `HttpPool` and rmcp with one `reqwest::Client` that every start
/// shares (`startup`'s second-client row); each start's time goes to
/// stderr with `--times`. With `--placement`, the client and the server
/// run where it says ([`start_server`]).
pub(crate) fn profile(config: &Config, mode: &str, n: usize) -> Result<(), String> {
    if let "start-pooled" | "start-rmcp-pooled" = mode {
        return pooled_starts(config, mode, n);
    }
    // `raw` profiles the raw hyper POSTs (JSON replies) for comparison.
    let reply = if matches!(mode, "raw" | "start" | "start-raw" | "start-raw-same") {
        "json"
    } else {
        mode
    };
    if mode == "start-raw-same" && config.era != Era::Legacy {
        return Err("--profile start-raw-same: the handshake era only".to_owned());
    }
    let mut args = vec!["--reply", reply];
    args.extend(config.era.testkit_args());
    let server = start_server(config, &args)?;
    let rt = runtime();
    rt.block_on(async {
        if let "start" | "start-raw" | "start-raw-same" = mode {
            let times = std::env::args().any(|a| a == "--times");
            for _ in 0..n.min(100_000) {
                let start = Instant::now();
                if mode == "start" {
                    let client = connect_ours(&server.url, config.era).await?;
                    let took = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    if times {
                        eprintln!("{}", took.as_micros());
                    }
                } else if mode == "start-raw-same" {
                    let raw = RawSame::connect(&server.url).await?;
                    let took = start.elapsed();
                    raw.close().await?;
                    if times {
                        eprintln!("{}", took.as_micros());
                    }
                } else {
                    let raw = Raw::connect(&server.url, config.era).await?;
                    let took = start.elapsed();
                    drop(raw);
                    if times {
                        eprintln!("{}", took.as_micros());
                    }
                }
            }
            return Ok(());
        }
        if mode == "raw" {
            let mut raw = Raw::connect(&server.url, config.era).await?;
            raw.ensure_connections(1).await?;
            let mut caller = raw.caller(0);
            for _ in 0..n.min(1_000_000) {
                caller.call().await;
            }
            raw.give_back(caller);
            return Ok(());
        }
        let client = connect_ours(&server.url, config.era).await?;
        for _ in 0..n.min(1_000_000) {
            ours::echo_or_panic(&client).await;
        }
        let _ = client.close().await;
        Ok(())
    })
}

/// `--profile start-pooled|start-rmcp-pooled N`: N start-ups of ours (one
/// `HttpPool`) or of rmcp (one `reqwest::Client`), each closed before the
/// next, as `startup` times its second client on a shared pool.
fn pooled_starts(config: &Config, mode: &str, n: usize) -> Result<(), String> {
    let mut args = vec!["--reply", "json"];
    args.extend(config.era.testkit_args());
    let server = start_server(config, &args)?;
    let pool = HttpPool::new(&HttpOptions::new("bench")).map_err(|e| e.to_string())?;
    let shared = pooled_reqwest();
    let times = std::env::args().any(|a| a == "--times");
    let rt = runtime();
    rt.block_on(async {
        for _ in 0..n.min(100_000) {
            let start = Instant::now();
            let took = if mode == "start-pooled" {
                let client = connect_ours_in(&server.url, config.era.choice(), Some(&pool)).await?;
                let took = start.elapsed();
                let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                took
            } else {
                let client = connect_rmcp_pooled(&server.url, shared.clone(), config.era).await?;
                let took = start.elapsed();
                let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
                took
            };
            if times {
                eprintln!("{}", took.as_micros());
            }
        }
        Ok(())
    })
}

/// The testkit with `args`, placed as `--placement` says: with `same`, it
/// and this thread (the client's: the runtime is a current-thread one) on
/// CPU 0; with `split`, it on CPU 1 and this thread on CPU 0, so that each
/// wake-up of the other side crosses CPUs, as on an otherwise idle machine.
fn start_server(config: &Config, args: &[&str]) -> Result<HttpServer, String> {
    match config.placement {
        Placement::Free => HttpServer::start(&config.testkit, args),
        Placement::Same => {
            pin_to_cpu(0)?;
            HttpServer::start(&config.testkit, args)
        }
        Placement::Split => {
            // The server inherits the mask it is started with.
            pin_to_cpu(1)?;
            let server = HttpServer::start(&config.testkit, args)?;
            pin_to_cpu(0)?;
            Ok(server)
        }
    }
}
