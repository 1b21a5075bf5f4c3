//! `stdio-bench sched [--server PATH] [ROUNDS [CALLS]]` (5 rounds of 5000
//! calls by default): where the scheduler puts client
//! and server in sequential rounds (unpinned; under `taskset -c 0`, pinned).
//! Each contender in turn makes
//! CALLS sequential calls against its own server (the fixed-reply
//! answerer, or `mcp-testkit stdio` with `--server`); per round and
//! contender: p50, and per call the migrations, voluntary switches and
//! CPU time (`/proc/<pid>/task/*/sched`) of the client process and of
//! its server, and the CPU each sat on last (`/proc/<pid>/stat` field 39).

use std::time::Duration;

use mcp_bench::report::quantile_us;
use mcp_bench::wire::Replies;

use crate::contenders::{Contenders, NAMES};
use crate::flags::Config;
use crate::server::ServerSpec;

/// What `/proc/<pid>/task/*/sched` says of one process, summed over its
/// threads.
#[derive(Default, Clone, Copy)]
struct Sched {
    migrations: u64,
    voluntary: u64,
    runtime_ms: f64,
}

impl Sched {
    fn of(pid: u32) -> Sched {
        let mut s = Sched::default();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return s };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("sched")) else { continue };
            for line in text.lines() {
                let Some((key, value)) = line.split_once(':') else { continue };
                let value = value.trim();
                match key.trim() {
                    "se.nr_migrations" => s.migrations += value.parse::<u64>().unwrap_or(0),
                    "nr_voluntary_switches" => s.voluntary += value.parse::<u64>().unwrap_or(0),
                    "se.sum_exec_runtime" => s.runtime_ms += value.parse::<f64>().unwrap_or(0.0),
                    _ => {}
                }
            }
        }
        s
    }

    fn minus(self, before: Sched) -> Sched {
        Sched {
            migrations: self.migrations - before.migrations,
            voluntary: self.voluntary - before.voluntary,
            runtime_ms: self.runtime_ms - before.runtime_ms,
        }
    }
}

/// The CPU each thread of `pid` last ran on, with the thread's name.
fn cpus_of(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return "-".into() };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let name = &stat[open + 1..close];
        // Field 39 is the 37th after the name (fields 1 and 2 before it).
        let cpu = stat[close + 2..].split(' ').nth(36).unwrap_or("?");
        out.push(format!("{name}@{cpu}"));
    }
    out.join(",")
}

/// The processes whose parent is this one, oldest first.
fn children() -> Vec<u32> {
    let me = std::process::id();
    let mut kids: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| {
                let close = s.rfind(')')?;
                s[close + 2..].split(' ').nth(1)?.parse::<u32>().ok()
            }) == Some(me)
        })
        .collect();
    kids.sort_unstable();
    kids
}

pub(crate) fn sched(config: &Config, args: &[String]) -> Result<String, String> {
    let numbers: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let rounds = numbers.first().copied().unwrap_or(5).clamp(1, 1_000);
    let calls = numbers.get(1).copied().unwrap_or(5_000).clamp(1, 1_000_000);
    let replies = Replies::learn(&config.testkit, config.era)?;
    let server = if mcp_bench::args::has(args, "--server") {
        ServerSpec::testkit(&config.testkit, config.era)
    } else {
        ServerSpec::answerer(&replies)?
    };
    let mut c = Contenders::start(&server)?;
    // Spawned in the order of NAMES.
    let servers = children();
    if servers.len() != 3 {
        return Err(format!("expected 3 server processes, found {servers:?}"));
    }
    let me = std::process::id();
    let mut lat: Vec<Duration> = Vec::with_capacity(calls);
    for which in 0..3 {
        c.sequential(which, 1_000, &mut lat)?;
        lat.clear();
    }
    let mut table = format!(
        "server: {}\n\n| round | client | p50 µs | p99 µs | client migr./call | server migr./call | client sleeps/call | server sleeps/call | client CPU µs/call | server CPU µs/call | threads@CPU (client; server) | load |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
        server.label
    );
    for round in 0..rounds {
        for which in 0..3 {
            lat.clear();
            let (c0, s0) = (Sched::of(me), Sched::of(servers[which]));
            c.sequential(which, calls, &mut lat)?;
            let (c1, s1) = (Sched::of(me).minus(c0), Sched::of(servers[which]).minus(s0));
            let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            let per = |x: u64| x as f64 / calls as f64;
            table.push_str(&format!(
                "| {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {}; {} | {} |\n",
                round + 1,
                NAMES[which],
                quantile_us(&mut lat, 0.5),
                quantile_us(&mut lat, 0.99),
                per(c1.migrations),
                per(s1.migrations),
                per(c1.voluntary),
                per(s1.voluntary),
                c1.runtime_ms * 1e3 / calls as f64,
                s1.runtime_ms * 1e3 / calls as f64,
                cpus_of(me),
                cpus_of(servers[which]),
                load.split(' ').next().unwrap_or("?"),
            ));
        }
    }
    c.close();
    Ok(table)
}
