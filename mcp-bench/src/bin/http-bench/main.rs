//! `http-bench`: `mcp-http` against rmcp's Streamable HTTP client (its
//! default, and with a pooled `reqwest::Client` passed in) and the raw limit
//! (plain hyper POSTs of the same bytes on kept-alive connections), all on
//! the same `mcp-testkit http` server binary, alternating clients within
//! each round.
//!
//! Usage: `http-bench [--quick] [--server PATH] [--server-threads N] [--era legacy|modern] seq|throughput|startup|memory`
//! prints one Markdown table on stdout (progress on stderr). `--era` pins
//! every contender (and the server) to one protocol era: the handshake era
//! by default, `modern` for the stateless 2026-07-28 revision (no session;
//! `seq` and `throughput`; `startup` measures both, `memory` the handshake
//! era). Hidden modes:
//! `hold ours|rmcp|rmcp-pooled N URL` (a process holding N initialized idle
//! sessions; prints its memory), `--profile json|sse|raw N` (N sequential
//! calls of ours, or of raw hyper, for callgrind) and `--profile
//! start|start-raw|start-raw-same|start-pooled|start-rmcp-pooled N` (N
//! start-ups of ours, of raw hyper, of raw hyper making every exchange ours
//! makes in the handshake era, or of ours and rmcp each sharing one pool);
//! `--placement same|split` puts a profile's client and server on one CPU
//! or on two (CPU 0, and CPU 1 for the server). With
//! `BENCH_NO_EVENT_STREAM` set, our client does not open the standalone GET
//! stream (`HttpOptions::event_stream = false`), to measure what it costs;
//! with `BENCH_WAIT_EVENT_STREAM` set, its handshake waits for the stream
//! to open (`HttpOptions::wait_for_event_stream`).
//!
//! One file a job: the flags (`flags.rs`); the contenders, ours and rmcp's
//! (`clients.rs`) and raw hyper (`raw.rs`), and the four of them on one
//! server (`contenders.rs`); the fixed-reply answerer (`answer.rs`); a file
//! a mode: `seq.rs`, `throughput.rs`, `startup.rs`, `memory.rs` (with
//! `hold`), `profile.rs`.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The layout of the in-flight workers' futures (three clients' call
// futures in one enum, spawned per worker) needs a deeper query than the
// default.
#![recursion_limit = "256"]

mod answer;
mod clients;
mod contenders;
mod flags;
mod memory;
mod profile;
mod raw;
mod seq;
mod startup;
mod throughput;

use std::time::Duration;

use mcp_bench::era::Era;

use crate::flags::Config;

/// The most calls in flight measured (and rmcp's `max_concurrent_requests`
/// in its pooled configuration, so it is not capped below that).
const MAX_DEPTH: usize = 64;
/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(20 * 60);
/// Every raw exchange is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

const USAGE: &str = "usage: http-bench [--quick] [--server PATH] [--server-threads N] [--era legacy|modern] seq|throughput|startup|memory";

fn main() {
    mcp_bench::main("http-bench", WALL_LIMIT, |args| match args.first().map(String::as_str) {
        Some("hold") => memory::hold(&args[1..]),
        Some("answer") => answer::answer(&args[1..]),
        _ => run(args),
    });
}

fn run(args: &[String]) -> Result<(), String> {
    let config = Config::from_args(args)?;
    if let Some(p) = mcp_bench::args::profile(args, "--profile") {
        return profile::profile(&config, p.which.unwrap_or("json"), p.n.unwrap_or(5_000));
    }
    let valued = ["--server", "--reply", "--server-threads", "--era", "--only", "--placement"];
    let table = match mcp_bench::args::mode(args, &valued) {
        Some("seq") => seq::sequential(&config)?,
        Some("throughput") => throughput::throughput(&config)?,
        Some("startup") => startup::startup(&config)?,
        Some("memory") => memory::memory(&config)?,
        _ => return Err(USAGE.into()),
    };
    print!("{table}");
    Ok(())
}

/// What a table's notes say of the era it was measured in.
pub(crate) fn era_note(era: Era) -> String {
    match era {
        Era::Legacy => format!(
            "Era: every contender pinned to the handshake era ({}; ours with `EraChoice::Legacy`, so no `server/discover` probe before `initialize`): \
             one session per client, `Mcp-Session-Id` and `MCP-Protocol-Version` on every POST.",
            era.revision()
        ),
        Era::Modern => format!(
            "Era: every contender pinned to the stateless era ({rev}; ours with `EraChoice::Modern`, rmcp with `ClientLifecycleMode::Discover`, \
             the server `mcp-testkit http --era modern`): one `server/discover` at start-up, no session, and every POST carries \
             `MCP-Protocol-Version: {rev}`, `Mcp-Method` and `Mcp-Name` headers and the `_meta` members (protocol version, client capabilities, \
             client info; raw hyper sends the same headers and members); every result carries `resultType`.",
            rev = era.revision()
        ),
    }
}
