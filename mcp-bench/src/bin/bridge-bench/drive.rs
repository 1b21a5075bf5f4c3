//! `bridge-bench drive`: our client calling through any command line (a
//! bridge under a profiler, say), and what that process spends per call.

use std::path::PathBuf;

use mcp_bench::args::{has, number};
use mcp_bench::proc::pin_to_cpu0;
use mcp_bench::runtime;

use crate::flags::command_after_dashes;
use crate::latency::{timed_in_flight, timed_sequential};
use crate::route::{BridgeUrl, Reach, Role, Route, connect};

/// `drive [--calls N] [--depth D] [--pin] [--http] -- PROGRAM ARGS...`: our stdio client
/// spawns `PROGRAM ARGS` (a bridge, a relay, a server; or any of them under
/// `valgrind` or `perf`); with `--http`, the command is an HTTP-host bridge
/// that prints `serving on URL` on its stderr (`mcpc serve --http
/// 127.0.0.1:0 ...`), started first and called by our HTTP client. Then
/// warm-up calls, then `N` sequential echo
/// calls (20,000 by default), and prints their p50 and what the spawned
/// process spent per call: CPU time and context switches (all its
/// threads, read from `/proc` before and after). `--depth D`: the calls
/// made `D` at a time (each of `D` workers makes `N / D` in turn), the p50
/// then counting the queueing. `--pin`: everything on CPU 0.
pub(crate) fn drive(args: &[String]) -> Result<(), String> {
    let (program, rest) = command_after_dashes(args)?;
    let head = &args[..args.iter().position(|a| a == "--").unwrap_or(args.len())];
    let depth: usize = number(head, "--depth")?.unwrap_or(1).max(1);
    // Whole rounds of `depth` calls, so the count per call is exact.
    let calls: usize = number(head, "--calls")?.unwrap_or(20_000).max(depth) / depth * depth;
    if has(head, "--pin") {
        pin_to_cpu0()?;
    }
    let (program, args) = (PathBuf::from(program), rest.to_vec());
    let http = has(head, "--http");
    let reach = match http {
        true => Reach::HttpBridge { program, args, url: BridgeUrl::Stderr },
        false => Reach::Stdio { program, args },
    };
    let route = Route { label: "driven", role: Role::Bridge, reach };
    let rt = runtime();
    let line = rt.block_on(async {
        let conn = connect(&route).await?;
        let pid = conn.bridge_pid().ok_or("the spawned process has no id")?;
        timed_sequential(&conn.client, 1_000.min(calls)).await?;
        if depth > 1 {
            timed_in_flight(&conn.client, 1_000.min(calls) / depth * depth, depth).await?;
        }
        let before = Spent::of(pid).ok_or("cannot read /proc for the spawned process")?;
        let p50 = match depth {
            1 => timed_sequential(&conn.client, calls).await?,
            _ => timed_in_flight(&conn.client, calls, depth).await?,
        };
        let after = Spent::of(pid).ok_or("the spawned process is gone")?;
        if http {
            // Ended as an operator would (SIGTERM), and given the time a
            // profiler needs to write its output before the kill that
            // `close` sends.
            end_gently(pid).await;
        }
        conn.close().await;
        let per = |a: u64, b: u64| a.saturating_sub(b) as f64 / calls as f64;
        Ok::<_, String>(format!(
            "calls {calls}, {depth} in flight: p50 {p50:.1} µs; the spawned process per call: CPU {:.2} µs, \
             context switches {:.2} voluntary + {:.2} involuntary\n",
            per(after.cpu_ns, before.cpu_ns) / 1000.0,
            per(after.voluntary, before.voluntary),
            per(after.involuntary, before.involuntary),
        ))
    })?;
    print!("{line}");
    Ok(())
}

/// How long an HTTP bridge may take to exit after SIGTERM (a profiler
/// writing its output).
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Sends `pid` SIGTERM and waits until it has exited (a zombie, reaped by
/// the caller), at most [`EXIT_WAIT`].
async fn end_gently(pid: u32) {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    while sent && std::time::Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the command's closing parenthesis.
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        if matches!(state, None | Some("Z" | "X")) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// What a process has spent so far, summed over its threads.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    /// Time on a CPU (`/proc/PID/task/TID/schedstat`, nanoseconds).
    cpu_ns: u64,
    voluntary: u64,
    involuntary: u64,
}

impl Spent {
    fn of(pid: u32) -> Option<Spent> {
        let mut spent = Spent::default();
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
            let dir = task.ok()?.path();
            let Ok(status) = std::fs::read_to_string(dir.join("status")) else { continue };
            let field = |name: &str| -> u64 {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            };
            spent.voluntary += field("voluntary_ctxt_switches");
            spent.involuntary += field("nonvoluntary_ctxt_switches");
            let schedstat = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
            spent.cpu_ns +=
                schedstat.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0);
        }
        Some(spent)
    }
}
