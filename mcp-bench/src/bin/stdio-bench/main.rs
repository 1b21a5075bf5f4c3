//! `stdio-bench`: `mcp-stdio` against rmcp's child-process client and the raw
//! limit (the same request and reply bytes ping-ponged over a pipe to a
//! process that answers each line with a fixed line), all on the same
//! `mcp-testkit stdio` server binary, alternating clients within each round.
//!
//! Usage: `stdio-bench [--quick] [--server PATH] [--era legacy|modern] seq|throughput|startup|memory`
//! prints one Markdown table on stdout (progress on stderr). `--era` pins
//! every contender (and the server) to one protocol era: the handshake era
//! by default, `modern` for the stateless 2026-07-28 revision (`seq` and
//! `throughput`; `startup` measures both, `memory` the handshake era).
//! Hidden modes: `raw-answer CALL [INIT [DISCOVER]]` (answers every stdin
//! line with a fixed reply, for the raw limit), `hold ours|rmcp N SERVER` (a
//! process holding N initialized clients; prints its RSS growth per client)
//! and `--profile ours|rmcp N [DEPTH]` (N calls, DEPTH of them in flight (1
//! by default), against the fixed-reply answerer of the `--era` given, for
//! callgrind), and `--profile-start ours|rmcp|raw N` (N starts against
//! `mcp-testkit stdio` of the `--era` given, for callgrind and `strace -c`),
//! and `sched [--server PATH] [ROUNDS [CALLS]]` (unpinned sequential rounds
//! against the fixed-reply answerer, or the testkit with `--server`: per
//! round and contender, p50 and where the scheduler put client and server,
//! from `/proc`; `MCP_BENCH_REPLY_SPIN_US` sets our client's reader poll).
//!
//! One file a job: the flags (`flags.rs`); the servers (`server.rs`) and
//! the fixed-reply answerer (`answer.rs`); the contenders, ours and rmcp's
//! (`clients.rs`) and the raw pipe (`raw.rs`), and the three of them on one
//! server (`contenders.rs`); a file a mode: `seq.rs`, `throughput.rs`,
//! `startup.rs`, `memory.rs` (with `hold`), `profile.rs`, `sched.rs`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod answer;
mod clients;
mod contenders;
mod flags;
mod memory;
mod profile;
mod raw;
mod sched;
mod seq;
mod server;
mod startup;
mod throughput;

use std::time::Duration;

use mcp_bench::era::Era;

use crate::flags::Config;

/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(20 * 60);

const USAGE: &str = "usage: stdio-bench [--quick] [--server PATH] [--era legacy|modern] seq|throughput|startup|memory";

fn main() {
    mcp_bench::main("stdio-bench", WALL_LIMIT, |args| match args.first().map(String::as_str) {
        Some("raw-answer") => answer::raw_answer(&args[1..]),
        Some("hold") => memory::hold(&args[1..]),
        _ => run(args),
    });
}

fn run(args: &[String]) -> Result<(), String> {
    let config = Config::from_args(args)?;
    if let Some(p) = mcp_bench::args::profile(args, "--profile-start") {
        return profile::profile_start(&config, p.which.unwrap_or("ours"), p.n.unwrap_or(100));
    }
    if let Some(p) = mcp_bench::args::profile(args, "--profile") {
        let (n, depth) = (p.n.unwrap_or(20_000), p.depth.unwrap_or(1));
        return profile::profile(&config, p.which.unwrap_or("ours"), n, depth);
    }
    let table = match mcp_bench::args::mode(args, &["--server", "--era"]) {
        Some("seq") => seq::sequential(&config)?,
        Some("throughput") => throughput::throughput(&config)?,
        Some("startup") => startup::startup(&config)?,
        Some("memory") => memory::memory(&config)?,
        Some("sched") => sched::sched(&config, args)?,
        _ => return Err(USAGE.into()),
    };
    print!("{table}");
    Ok(())
}

/// What a table's notes say of the era it was measured in.
pub(crate) fn era_note(era: Era) -> String {
    match era {
        Era::Legacy => format!(
            "Era: every contender pinned to the handshake era ({}; ours with `EraChoice::Legacy`, so no `server/discover` probe before `initialize`).",
            era.revision()
        ),
        Era::Modern => format!(
            "Era: every contender pinned to the stateless era ({rev}; ours with `EraChoice::Modern`, rmcp with `ClientLifecycleMode::Discover`, \
             the server `mcp-testkit stdio --era modern`): one `server/discover` at start-up, then every request carries `_meta` \
             (protocol version, client capabilities, client info; the raw pipe sends the same members) and every result `resultType`.",
            rev = era.revision()
        ),
    }
}
