//! `bridge-bench soak`: `mcpc serve` under calls in flight for a while,
//! its RSS, descriptors and threads sampled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_bench::proc::{status_bytes, unpin};
use mcp_bench::report::{kib, mib};

use crate::flags::Config;
use crate::route::{Reach, Role, Route, connect};

/// Calls in flight in the soak.
const SOAK_DEPTH: usize = 64;

/// The most the bridge's RSS may grow over the soak, after its warm-up.
const RSS_DRIFT: u64 = 1024 * 1024;

/// Threads the bridge may add over the soak: the runtime's blocking pool
/// (stdin, stdout, the server's pipes) starts one more when all of its
/// threads are busy and keeps it while it is used; a leak grows past this.
const THREAD_SLACK: usize = 2;

/// What the soak reads of the bridge process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Duration,
    rss: u64,
    fds: usize,
    threads: usize,
    calls: u64,
}

fn sample_of(pid: u32, at: Duration, calls: u64) -> Option<Sample> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count();
    Some(Sample { at, rss: status_bytes(Some(pid), "VmRSS")?, fds, threads, calls })
}

/// `mcpc serve --server "<stdio server>"` under 64 calls in flight for
/// `seconds`: samples every few seconds; the first sixth (at least 5 s) is
/// the warm-up.
pub(crate) fn soak(config: &Config, seconds: u64) -> Result<String, String> {
    unpin()?;
    let path = Route {
        label: "mcpc serve",
        role: Role::Bridge,
        reach: Reach::Stdio {
            program: config.mcpc.clone(),
            args: vec!["serve".into(), "--server".into(), config.stdio_server_line()],
        },
    };
    let total = Duration::from_secs(seconds.max(10));
    let warm = (total / 6).max(Duration::from_secs(5));
    let every = if seconds <= 60 { Duration::from_secs(2) } else { Duration::from_secs(10) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let (samples, failed) = rt.block_on(async {
        let conn = connect(&path).await?;
        let pid = conn.bridge_pid().ok_or("the bridge has no process id")?;
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..SOAK_DEPTH {
            let (client, stop, done, failed) =
                (conn.client.clone(), stop.clone(), done.clone(), failed.clone());
            workers.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let ok = client.echo().await.is_ok();
                    done.fetch_add(1, Ordering::Relaxed);
                    if !ok {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        let start = Instant::now();
        let mut samples = Vec::new();
        tokio::time::sleep(warm).await;
        while start.elapsed() < total {
            let s = sample_of(pid, start.elapsed(), done.load(Ordering::Relaxed))
                .ok_or("the bridge process is gone")?;
            eprintln!(
                "bridge-bench: soak {:>4.0}s: RSS {}, {} fds, {} threads, {} calls",
                s.at.as_secs_f64(),
                mib(s.rss as f64),
                s.fds,
                s.threads,
                s.calls
            );
            samples.push(s);
            tokio::time::sleep(every.min(total.saturating_sub(start.elapsed()))).await;
        }
        let last = sample_of(pid, start.elapsed(), done.load(Ordering::Relaxed))
            .ok_or("the bridge process is gone")?;
        samples.push(last);
        stop.store(true, Ordering::Relaxed);
        while workers.join_next().await.is_some() {}
        conn.close().await;
        Ok::<_, String>((samples, failed.load(Ordering::Relaxed)))
    })?;
    let first = samples[0];
    let last = samples[samples.len() - 1];
    let peak = samples.iter().map(|s| s.rss).max().unwrap_or(0);
    let max_fds = samples.iter().map(|s| s.fds).max().unwrap_or(0);
    let max_threads = samples.iter().map(|s| s.threads).max().unwrap_or(0);

    let drift = peak.saturating_sub(first.rss);
    let mut problems = Vec::new();
    // A dev build's RSS means little: judged in full runs only.
    if !config.quick && drift > RSS_DRIFT {
        problems.push(format!("RSS grew by {} after the warm-up", kib(drift as f64)));
    }
    if max_fds > first.fds {
        problems.push(format!("{} more open descriptors", max_fds - first.fds));
    }
    if max_threads > first.threads + THREAD_SLACK {
        problems.push(format!("{} more threads", max_threads - first.threads));
    }
    if failed > 0 {
        problems.push(format!("{failed} calls failed"));
    }
    let calls = last.calls;
    let rate = calls as f64 / last.at.as_secs_f64().max(1e-9);
    let out = format!(
        "| bridge | time | calls | calls/s | RSS after warm-up | RSS peak after | drift | descriptors first / max | threads first / max | failed | verdict |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n\
         | `mcpc serve --server \"<stdio server>\"`, {SOAK_DEPTH} in flight | {:.0} s | {calls} | {rate:.0} | {} | {} | {} | {} / {max_fds} | {} / {max_threads} | {failed} | {} |\n\n\
         {SOAK_DEPTH} `tools/call echo` kept in flight through `mcpc serve` to `mcp-testkit stdio` (our stdio client as the host), {} samples of the bridge \
         process (`/proc/PID/status` VmRSS, `/proc/PID/fd`, `/proc/PID/task`) every {} s after a {} s warm-up. \
         Bounds: RSS at most {} above the first sample (full runs; not judged with `--quick`), no more descriptors than at the first sample, \
         at most {THREAD_SLACK} more threads (the runtime's blocking pool grows to its busiest moment), no failed call.\n",
        last.at.as_secs_f64(),
        mib(first.rss as f64),
        mib(peak as f64),
        kib(drift as f64),
        first.fds,
        first.threads,
        if problems.is_empty() { "ok".to_owned() } else { problems.join("; ") },
        samples.len(),
        every.as_secs(),
        warm.as_secs(),
        mib(RSS_DRIFT as f64),
    );
    if problems.is_empty() {
        Ok(out)
    } else {
        print!("{out}");
        Err(format!("the bridge grew: {}", problems.join("; ")))
    }
}
