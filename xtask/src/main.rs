//! `cargo xtask`: the workspace's developer commands.
//!
//! `cargo xtask ci` checks everything a change must pass; the other commands
//! run one part of it on its own. Each step prints its name and how long it
//! took, and the first failing step stops the run with its own output above.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod benchdoc;
mod conformance;
mod conformance_server;
mod fuzz;
mod idp;
mod interop;
mod interop_hosts;
mod keychain;
mod mutants;
mod publish;
mod steps;
mod tools;

use std::process::ExitCode;

use steps::{Outcome, Step};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci        every check: fmt, clippy, tests (also with the optional features), fuzz, bench
            and soak smoke, interop, idp, keychain, conformance, docs, publish --dry-run
  fmt       cargo fmt --check
  lint      cargo clippy with warnings denied
  test      the workspace's tests (nextest when installed), doc tests, the crates
            with optional features (schema, blocking) linted and tested with them on, and
            mcp-host-registry, mcp-testkit and mcp-server-io with their default features cut down
  doc       cargo doc with warnings denied
  package   cargo publish --dry-run of every publishable crate, in dependency order,
            each one built from its packaged sources (nothing is uploaded)
  interop   install the pinned third-party servers (npm) and run the interop tests, then the
            TypeScript SDK v2 and Python SDK clients (npm, PyPI, pinned) as hosts of mcpc serve
  interop-hosts  only those hosts (installing what they need)
  conformance  the official MCP conformance suite (npm, pinned) against our client, and its
            server scenarios against mcp-testkit over HTTP and through mcpc serve --http
  conformance-server  only the server scenarios: against mcp-testkit over HTTP, then
            through mcpc serve --http fronting it over stdio
  idp       install the pinned OpenID provider (npm) and run the OAuth tests against it
  keychain  the token store in a real keychain: on Linux, gnome-keyring and dbus (Debian's
            packages, installed with apt-get when missing) on a private session bus
  fuzz      fuzz <target>|all [seconds], or fuzz --minutes N [target...] (a
            campaign with a table of executions, corpus and crashes): libFuzzer
  bench     bench [all|stdio|http|startup|fleet|memory|weight|sse|bridge|sdks]... [--quick] [--no-build]:
            ours, rmcp and the raw limits side by side (bridge: mcpc serve against the
            pinned mcp-remote and supergateway, npm; sdks: the pinned TypeScript and
            Python SDK clients, installed as interop installs them); each measure rewrites its
            summary table at the top of BENCHMARKS.md and its full tables below,
            dated, with the load at the start and the end (--quick: a smoke run
            whose output goes to target/bench-quick/; --summaries-only: measure
            nothing, make the summaries again from the full tables in the file;
            --no-node: bridge without the Node bridges, nothing installed)
  soak      soak [--quick] [--calls N]: many calls over stdio and HTTP in both
            eras with a server restart, checking RSS, descriptors and tasks;
            soak bridge [--quick] [--minutes N]: 64 calls in flight through mcpc serve
            for N minutes (10; --quick: 20 s), checking its RSS, descriptors and threads
  mutants   mutants [--list] [--jobs N] [FILE...]: cargo-mutants over the parsers,
            mcp-auth, the client core and the wire rules; each file must catch
            95 % (hours on two cores: not part of ci)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let plan: Vec<Step> = match command.as_str() {
        "ci" => steps::ci(),
        "fmt" => vec![steps::fmt()],
        "lint" => vec![steps::clippy()],
        "test" => vec![steps::test(), steps::features()],
        "doc" => vec![steps::doc()],
        "package" => vec![publish::dry_run()],
        "interop" => interop::steps(),
        "interop-hosts" => vec![interop_hosts::step()],
        "idp" => idp::steps(),
        "keychain" => keychain::steps(),
        "conformance" => conformance::steps(),
        "conformance-server" => vec![conformance_server::step(), conformance_server::bridge_step()],
        "fuzz" => return finish(fuzz::fuzz_command(&args[1..])),
        "bench" => return finish(bench::bench_command(&args[1..])),
        "soak" => return finish(bench::soak_command(&args[1..])),
        "mutants" => return finish(mutants::mutants_command(&args[1..])),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => {
            eprintln!("xtask: unknown command {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match steps::run_all(&plan) {
        Outcome::Passed => ExitCode::SUCCESS,
        Outcome::Failed => ExitCode::FAILURE,
    }
}

/// Turns a command's result into the process exit code.
fn finish(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("xtask: {why}");
            ExitCode::FAILURE
        }
    }
}
