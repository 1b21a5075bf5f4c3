//! `cargo xtask`: the workspace's developer commands.
//!
//! `cargo xtask ci` checks everything a change must pass; the other commands
//! run one part of it on its own. Each step prints its name and how long it
//! took, and the first failing step stops the run with its own output above.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod steps;

use std::process::ExitCode;

use steps::{Outcome, Step};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci        every check: fmt, clippy, tests, docs, packaging
  fmt       cargo fmt --check
  lint      cargo clippy with warnings denied
  test      the workspace's tests (nextest when installed) and doc tests
  doc       cargo doc with warnings denied
  package   cargo package of every publishable crate
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
        "test" => vec![steps::test()],
        "doc" => vec![steps::doc()],
        "package" => vec![steps::package()],
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
