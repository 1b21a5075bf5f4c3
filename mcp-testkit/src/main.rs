//! `mcp-testkit stdio [options]` and `mcp-testkit http [options]`: the
//! scriptable MCP test server on stdio or over HTTP. See the library
//! documentation for the tools and options.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "http")]
use std::io::Write as _;
use std::process::ExitCode;

use mcp_testkit::{Command, USAGE, parse_args, run_stdio};
#[cfg(feature = "http")]
use mcp_testkit::{HttpConfig, serve_http};

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
        #[cfg(feature = "http")]
        Ok(Command::Http(config)) => run_http(config),
        #[cfg(not(feature = "http"))]
        Ok(Command::Http(_)) => {
            eprintln!("mcp-testkit: built without the `http` feature; only `stdio` is served");
            ExitCode::from(2)
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

/// Serves HTTP until the process is killed; the first stdout line is the
/// endpoint URL.
#[cfg(feature = "http")]
fn run_http(mut config: HttpConfig) -> ExitCode {
    // `crash` and `--exit-after` end the process, as for stdio.
    config.exit_process = true;
    let runtime = if config.threads > 1 {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.threads)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-testkit: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let server = match serve_http(config).await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("mcp-testkit: cannot listen: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("listening on {}", server.url());
        let _ = std::io::stdout().flush();
        // Serve until killed.
        std::future::pending::<()>().await;
        drop(server);
        ExitCode::SUCCESS
    })
}
