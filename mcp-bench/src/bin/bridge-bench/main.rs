//! `bridge-bench`: `mcpc serve` against the Node bridges `mcp-remote` and
//! `supergateway`, each bridging the same `mcp-testkit` server the same
//! way, and against calling that server directly; one client (ours) drives
//! every path, so only the bridge differs.
//!
//! Usage: `bridge-bench [--quick] --server TESTKIT --mcpc MCPC (--node NODE
//! --bridges DIR | --no-node) [--scenario KEY]... latency|startup|soak
//! [--seconds N]` prints Markdown on stdout (progress on stderr). `DIR`
//! holds the pinned npm packages (`node_modules/mcp-remote`,
//! `node_modules/supergateway`); `NODE` is the Node.js they run on;
//! `--no-node` leaves their rows out. `--scenario stdio-http|stdio-stdio|http-stdio`
//! runs only the scenarios named (default: all three).
//!
//! The upstream server is `mcp-testkit` (the real server) rather than the
//! fixed-reply answerer: it is the one server that answers both over stdio
//! and over Streamable HTTP with the same handler, so every scenario has the
//! same server behind it, and its own cost cancels out of the added latency
//! (bridge p50 − direct p50).
//!
//! - `latency`: per scenario, sequential and 16-in-flight p50 per call of
//!   each path, pinned (client, bridge and server on CPU 0) and unpinned.
//!   stdio to stdio has the floor beside `mcpc serve`: a byte relay
//!   (`relay`, this same executable) that parses nothing.
//! - `startup`: spawn of the bridge to the first `tools/list` answer through
//!   it, and the bridge process's RSS once idle.
//! - `soak`: 64 calls in flight through `mcpc serve` to a stdio server for
//!   `--seconds` (600 by default), sampling the bridge's RSS, descriptors and
//!   threads; exits 1 when they grow past the bounds.
//! - `relay [--threads|--poll] -- PROGRAM ARGS...`: the byte relay itself.
//! - `drive [--calls N] [--depth D] [--pin] [--http] -- PROGRAM ARGS...`: N sequential
//!   calls through any command line (a bridge under `valgrind
//!   --tool=callgrind`, say; with `--http` an HTTP-host bridge that prints
//!   `serving on URL`, as `mcpc serve --http 127.0.0.1:0` does), printing their p50 and the spawned process's CPU time and
//!   context switches per call; `--depth D`: D calls in flight.
//!
//! `MCP_BENCH_REPLY_SPIN_US`, when set, replaces the stdio host client's
//! reader poll (`StdioOptions::reply_spin`), as in `stdio-bench`.
//!
//! One file a job: the flags (`flags.rs`); the paths to the server and the
//! client that takes them (`route.rs`); the scenarios (`scenarios.rs`); a
//! file a mode: `latency.rs`, `startup.rs`, `soak.rs`, `drive.rs`,
//! `relay.rs`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod drive;
mod flags;
mod latency;
mod relay;
mod route;
mod scenarios;
mod soak;
mod startup;

use std::time::Duration;

use mcp_bench::args::{has, mode, number};

use crate::flags::{Config, command_after_dashes};

/// The longest any run of this binary may take (a hung peer ends it).
const WALL_LIMIT: Duration = Duration::from_secs(40 * 60);

const USAGE: &str = "usage: bridge-bench [--quick] --server TESTKIT --mcpc MCPC (--node NODE --bridges DIR | --no-node) \
                     [--scenario stdio-http|stdio-stdio|http-stdio]... latency|startup|soak [--seconds N]\n\
                     \x20      bridge-bench relay [--threads|--poll] -- PROGRAM ARGS...\n\
                     \x20      bridge-bench drive [--calls N] [--depth D] [--pin] [--http] -- PROGRAM ARGS...";

fn main() {
    mcp_bench::main("bridge-bench", WALL_LIMIT, run);
}

fn run(args: &[String]) -> Result<(), String> {
    // The helpers run as this same executable: no configuration needed.
    match args.first().map(String::as_str) {
        Some("relay") => {
            let (program, rest) = command_after_dashes(args)?;
            let mode = if has(args, "--poll") {
                relay::Mode::Poll
            } else if has(args, "--threads") {
                relay::Mode::Threads
            } else {
                relay::Mode::Tokio
            };
            return relay::run(mode, program, rest);
        }
        Some("drive") => return drive::drive(args),
        _ => {}
    }
    let config = Config::from_args(args)?;
    let valued = ["--server", "--mcpc", "--node", "--bridges", "--seconds", "--scenario"];
    let out = match mode(args, &valued) {
        Some("latency") => latency::latency(&config)?,
        Some("startup") => startup::startup(&config)?,
        Some("soak") => {
            let default = if config.quick { 20 } else { 600 };
            soak::soak(&config, number(args, "--seconds")?.unwrap_or(default))?
        }
        _ => return Err(USAGE.into()),
    };
    print!("{out}");
    Ok(())
}
