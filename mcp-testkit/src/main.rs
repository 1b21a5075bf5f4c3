//! `mcp-testkit stdio [options]`: the scriptable MCP test server on stdio.
//! See the library documentation for the tools and options.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use mcp_testkit::{Command, USAGE, parse_args, run_stdio};

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned());
    match parse_args(args) {
        Ok(Command::Stdio(config)) => {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("mcp-testkit: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(run_stdio(config)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcp-testkit: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("mcp-testkit {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("mcp-testkit: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
