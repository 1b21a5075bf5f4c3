//! `bridge-bench drive`: our client calling through any command line (a
//! bridge under a profiler, say), and what that process spends per call.

use std::path::PathBuf;

use mcp_bench::args::{has, number};
use mcp_bench::proc::pin_to_cpu0;
use mcp_bench::runtime;

use crate::flags::command_after_dashes;
use crate::latency::timed_sequential;
use crate::route::{Reach, Role, Route, connect};

/// `drive [--calls N] [--pin] -- PROGRAM ARGS...`: our stdio client spawns
/// `PROGRAM ARGS` (a bridge, a relay, a server; or any of them under
/// `valgrind` or `perf`), makes warm-up calls, then `N` sequential echo
/// calls (20,000 by default), and prints their p50 and what the spawned
/// process spent per call: CPU time and context switches (all its
/// threads, read from `/proc` before and after). `--pin`: everything on
/// CPU 0.
pub(crate) fn drive(args: &[String]) -> Result<(), String> {
    let (program, rest) = command_after_dashes(args)?;
    let head = &args[..args.iter().position(|a| a == "--").unwrap_or(args.len())];
    let calls: usize = number(head, "--calls")?.unwrap_or(20_000);
    if has(head, "--pin") {
        pin_to_cpu0()?;
    }
    let route = Route {
        label: "driven",
        role: Role::Bridge,
        reach: Reach::Stdio { program: PathBuf::from(program), args: rest.to_vec() },
    };
    let rt = runtime();
    let line = rt.block_on(async {
        let conn = connect(&route).await?;
        let pid = conn.bridge_pid().ok_or("the spawned process has no id")?;
        timed_sequential(&conn.client, 1_000.min(calls.max(1))).await?;
        let before = Spent::of(pid).ok_or("cannot read /proc for the spawned process")?;
        let p50 = timed_sequential(&conn.client, calls.max(1)).await?;
        let after = Spent::of(pid).ok_or("the spawned process is gone")?;
        conn.close().await;
        let per = |a: u64, b: u64| a.saturating_sub(b) as f64 / calls.max(1) as f64;
        Ok::<_, String>(format!(
            "calls {calls}: p50 {p50:.1} µs; the spawned process per call: CPU {:.2} µs, \
             context switches {:.2} voluntary + {:.2} involuntary\n",
            per(after.cpu_ns, before.cpu_ns) / 1000.0,
            per(after.voluntary, before.voluntary),
            per(after.involuntary, before.involuntary),
        ))
    })?;
    print!("{line}");
    Ok(())
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
