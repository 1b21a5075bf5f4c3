//! `soak`: many calls over each transport and era, with a server restart in
//! the middle, sampling what a long-running host would see grow.
//!
//! For stdio and Streamable HTTP, each in the handshake era (2025-11-25)
//! and the stateless era (2026-07-28), against the `mcp-testkit` binary: a
//! warm-up, a first sample (RSS, open file descriptors, live tokio tasks),
//! `N` `tools/call echo` with 16 in flight, the server process killed and
//! started again half way (the client reconnects by itself: stdio through
//! its restart policy, HTTP with a new connection and, in the handshake
//! era, a new session), and a last sample after the connections settle.
//!
//! `soak [--calls N] [--quick]`: prints a Markdown table; exits 1 when a
//! check fails: descriptors and tasks back at their first count, and
//! (without `--quick`, where RSS means little) RSS at most 1 MiB above it.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_bench::args::{after, has};
use mcp_bench::era::Era;
use mcp_bench::ours::Ours;
use mcp_bench::proc::{self, HttpServer};
use mcp_client_stdio::{RestartPolicy, ServerCommand, StdioOptions};
use mcp_http::HttpOptions;

/// Calls in flight at once.
const DEPTH: usize = 16;
/// Calls before the first sample.
const WARM_UP: u64 = 2_000;
/// The most RSS may grow from the first sample to the last.
const RSS_DRIFT: u64 = 1024 * 1024;

#[derive(Debug, Clone, Copy)]
struct Sample {
    rss: u64,
    fds: usize,
    tasks: usize,
}

fn sample() -> Sample {
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    Sample { rss: proc::status_bytes(None, "VmRSS").unwrap_or(0), fds, tasks }
}

/// One row of the table.
struct Row {
    name: String,
    calls: u64,
    failed: u64,
    took: Duration,
    first: Sample,
    last: Sample,
}

impl Row {
    fn problems(&self, quick: bool) -> Vec<String> {
        let mut out = Vec::new();
        if self.last.fds > self.first.fds {
            out.push(format!("{} more open descriptors", self.last.fds - self.first.fds));
        }
        if self.last.tasks > self.first.tasks {
            out.push(format!("{} more live tasks", self.last.tasks - self.first.tasks));
        }
        let drift = self.last.rss.saturating_sub(self.first.rss);
        if !quick && drift > RSS_DRIFT {
            out.push(format!("RSS grew by {} KiB", drift / 1024));
        }
        // Calls lost to the restart (out when the server died) are
        // expected; a few per in-flight slot at most.
        if self.failed > 4 * DEPTH as u64 {
            out.push(format!("{} calls failed", self.failed));
        }
        out
    }
}

/// `count` calls, `DEPTH` at a time; the failures.
async fn calls(client: &Ours, count: u64) -> u64 {
    let next = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..DEPTH)
        .map(|_| {
            let (client, next, failed) = (client.clone(), next.clone(), failed.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < count {
                    if client.echo().await.is_err() {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.await;
    }
    failed.load(Ordering::Relaxed)
}

async fn soak_stdio(testkit: &Path, era: Era, n: u64) -> Result<Row, String> {
    let command = ServerCommand::new(testkit.to_string_lossy().into_owned())
        .arg("stdio")
        .args(["--era", era.arg()]);
    let mut o = StdioOptions::new("soak");
    o.discover_path = false;
    o.era = era.choice();
    o.restart = Some(RestartPolicy { max_restarts: 3, window: Duration::from_secs(600) });
    let client = mcp_client_stdio::spawn(command, o).await.map_err(|e| e.to_string())?;
    let any = Ours::Stdio(client.clone());
    calls(&any, WARM_UP).await;
    let first = settle_and_sample().await;
    let started = Instant::now();
    let mut failed = calls(&any, n / 2).await;
    // The server dies: the next calls start a new one.
    if let Some(pid) = client.transport().pid() {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    failed += calls(&any, n - n / 2).await;
    let took = started.elapsed();
    let last = settle_and_sample().await;
    any.close().await;
    Ok(Row { name: format!("stdio, {} era", era.arg()), calls: n, failed, took, first, last })
}

async fn soak_http(testkit: &Path, era: Era, n: u64) -> Result<Row, String> {
    let extra = ["--era", era.arg()];
    let server = HttpServer::start(testkit, &extra)?;
    let port = server.url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap_or("");
    let port = port.to_owned();
    let mut o = HttpOptions::new("soak");
    o.era = era.choice();
    let client = mcp_http::connect(&server.url, o).map_err(|e| e.to_string())?;
    let any = Ours::Http(client);
    calls(&any, WARM_UP).await;
    let first = settle_and_sample().await;
    let started = Instant::now();
    let mut failed = calls(&any, n / 2).await;
    // The server process restarts on the same port.
    drop(server);
    let mut restart = ["--port", port.as_str()].to_vec();
    restart.extend(extra);
    // `HttpServer::start` asks for port 0 first; the later `--port` wins.
    let server = HttpServer::start(testkit, &restart)?;
    failed += calls(&any, n - n / 2).await;
    let took = started.elapsed();
    let last = settle_and_sample().await;
    any.close().await;
    drop(server);
    Ok(Row { name: format!("HTTP, {} era", era.arg()), calls: n, failed, took, first, last })
}

/// A sample after background work (connection drains, closed streams)
/// had time to finish.
async fn settle_and_sample() -> Sample {
    tokio::time::sleep(Duration::from_secs(6)).await;
    sample()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = has(&args, "--quick");
    let n: u64 = match after(&args, "--calls") {
        Some(v) => v.and_then(|v| v.parse().ok()).unwrap_or(100_000),
        None if quick => 2_000,
        None => 100_000,
    };
    proc::watchdog(Duration::from_secs(if quick { 300 } else { 3600 }));
    let testkit: PathBuf = proc::testkit_path(&args);
    let runtime = mcp_bench::runtime();
    let rows = runtime.block_on(async {
        let mut rows = Vec::new();
        for era in Era::BOTH {
            rows.push(soak_stdio(&testkit, era, n).await);
            rows.push(soak_http(&testkit, era, n).await);
        }
        rows
    });
    println!("| run | calls | failed | calls/s | RSS first → last (KiB) | fds | tasks | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut ok = true;
    for row in rows {
        match row {
            Ok(r) => {
                let problems = r.problems(quick);
                ok &= problems.is_empty();
                println!(
                    "| {} | {} | {} | {:.0} | {} → {} | {} → {} | {} → {} | {} |",
                    r.name,
                    r.calls,
                    r.failed,
                    r.calls as f64 / r.took.as_secs_f64(),
                    r.first.rss / 1024,
                    r.last.rss / 1024,
                    r.first.fds,
                    r.last.fds,
                    r.first.tasks,
                    r.last.tasks,
                    if problems.is_empty() { "ok".to_owned() } else { problems.join("; ") },
                );
            }
            Err(e) => {
                ok = false;
                println!("| (failed to run) | | | | | | | {e} |");
            }
        }
    }
    if !ok {
        std::process::exit(1);
    }
}
