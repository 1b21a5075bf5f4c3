//! `mcpc`: every Model Context Protocol method from the command line:
//! servers, tools and calls, resources, prompts, completion, tasks, the
//! server's notifications, OAuth login.
//!
//! It is a thin shell over `mcp-registry`: the servers come from a
//! configuration (`--config PATH` or `$MCPC_CONFIG`, else the project's
//! `mcp.toml`, `.mcp.json`, `.cursor/mcp.json` or `.vscode/mcp.json` in or
//! above the working directory, which starts nothing until approved, else
//! `mcpc/mcp.toml` in the user's config directory; `[mcp_client]` TOML, or
//! the `mcpServers` JSON of Claude Desktop, Cursor and VS Code),
//! or from one `--server SPEC` (a URL, or a shell-quoted command to
//! spawn). With neither, it talks to the demo server it embeds (the
//! `mcp-testkit` server without its `http` feature, run over stdio by
//! spawning this same executable with a hidden subcommand), so it works on
//! a fresh machine with no set-up and no network:
//!
//! ```sh
//! cargo run -p mcpc -- tools
//! cargo run -p mcpc -- call demo echo message=hi
//! cargo run -p mcpc -- resources read test://static/text/1
//! cargo run -p mcpc -- --server 'npx -y @modelcontextprotocol/server-everything' info
//! ```
//!
//! `mcpc serve` turns it around (`serve/`): the servers served to a host
//! that speaks MCP on stdin and stdout, one with its names unchanged or
//! several as one, in either protocol era.
//!
//! The host's side of the protocol is declared and answered (`host.rs`):
//! roots (the current directory, or each `--root`), elicitation (a form on
//! the terminal, built from the request's schema), sampling (declined:
//! there is no model here).
//!
//! Everything it prints goes through one module (`output.rs`), which
//! shows what a server sends (names, descriptions, results, log messages,
//! questions) with every control character made visible, so no server can
//! write escape sequences to the terminal; `--output json` prints the
//! typed results as JSON.
//!
//! Errors name the server (and an HTTP server's URL with its path, never
//! its credentials or query); with `--output json` they are a JSON object
//! on stdout (`failure.rs`). Exit codes: 0 success, 1 the tool reported
//! `isError`, 2 usage or configuration error, 3 connection, protocol or
//! authorization failure or timeout, 130/143/129 interrupted by
//! SIGINT/SIGTERM/SIGHUP (the servers are closed first).
//!
//! # OAuth
//!
//! Servers configured with `auth = { kind = "oauth", ... }` need a login
//! once: `mcpc login SERVER` listens on `http://127.0.0.1:<random
//! port>/callback` (or the configured `redirect_uri`/`redirect_port`;
//! `mcp-auth`'s loopback handler), prints the
//! authorization URL on stderr and tries to open it in the browser
//! (`MCPC_NO_BROWSER=1` turns this off), waits at most `--timeout SECS`
//! (default 300), then keeps the tokens in the user's data directory
//! (`mcpc/oauth`, one `0600` file per server, issuer and account). Later
//! commands use and refresh them; when a server needs a new login they
//! fail (exit 3) with "run `mcpc login SERVER`". `mcpc logout [SERVER]`
//! revokes and deletes them. `--account LABEL` on `login` and `logout`
//! acts on one account (a server's `account` key selects the one its
//! commands use); `mcpc accounts [SERVER]` lists the accounts holding
//! tokens.

mod add;
mod approve;
mod cli;
mod commands;
mod consent;
mod ctx;
mod failure;
mod form;
mod host;
mod inputs;
// The one module that prints (the workspace denies `print!`, `println!`,
// `eprint!`, `eprintln!` everywhere else): what a server sends reaches the
// terminal through it, made safe.
#[allow(clippy::print_stdout, clippy::print_stderr)]
mod output;
mod progress;
mod serve;
mod setup;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{Cli, Command, DEMO_SERVER};
use crate::failure::{
    EXIT_CONNECTION, EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, Failure, Kind,
};
use crate::output::{emit_json, report};

// Only mcpc's own words: the runtime that failed to start.
#[allow(clippy::print_stderr)]
fn main() -> ExitCode {
    let matches = match <Cli as clap::CommandFactory>::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return clap_failure(e),
    };
    let mut cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    // `--server` wins over `$MCPC_CONFIG`, not over `--config`.
    let config_from_env =
        matches.value_source("config") == Some(clap::parser::ValueSource::EnvVariable);
    if cli.global.server.is_some() && config_from_env {
        cli.global.config = None;
    }
    // `serve`: stdout is the protocol's, errors go to stderr only.
    if matches!(cli.command, Command::Serve { .. }) {
        cli.global.output = cli::Output::Text;
    }
    match &cli.command {
        Command::DemoServer => return run_demo_server(),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut command, "mcpc", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    init_tracing(cli.global.verbose);
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpc: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_CONNECTION);
        }
    };
    let code = runtime.block_on(run(cli));
    // A question still waiting for a line on the terminal (Ctrl-C during
    // an elicitation form) does not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(100));
    ExitCode::from(code)
}

/// A command line clap refused: help and version are printed (exit 0);
/// anything else is a usage error (exit 2), as JSON on stdout when
/// `--output json` was asked for.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let json = {
        let args: Vec<String> = std::env::args().collect();
        args.windows(2).any(|w| w[0] == "--output" && w[1] == "json")
            || args.iter().any(|a| a == "--output=json")
    };
    if json {
        let message = e.kind().to_string();
        let detail = e.to_string();
        let first = detail.lines().next().unwrap_or(&message).trim_start_matches("error: ");
        emit_json(&Failure::usage(first).to_json());
    }
    let _ = e.print();
    ExitCode::from(EXIT_USAGE)
}

/// Diagnostics on stderr: `RUST_LOG` when set, else warnings (so dropped
/// lines and events show), `-v` info (a stdio server's stderr too), `-vv`
/// debug, `-vvv` trace. The server's own log messages are shown by
/// `--log-level`, not here.
fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn,mcp_host_registry=error,mcp::server=off",
        1 => "info,mcp::server=off",
        2 => "debug,mcp::server=off",
        _ => "trace",
    };
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty() && verbose == 0)
        .and_then(|v| tracing_subscriber::EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(output::diagnostics)
        .with_ansi(false)
        .with_target(true)
        .without_time()
        .try_init();
}

/// The hidden subcommand: the testkit's server on this process's stdio.
#[allow(clippy::print_stderr)] // its own failure, on stderr
fn run_demo_server() -> ExitCode {
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
        .and_then(|rt| {
            rt.block_on(mcp_testkit::run_stdio(mcp_testkit::Config::default()))
                .map_err(|e| format!("the demo server failed: {e}"))
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpc {DEMO_SERVER}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::print_stderr)] // a line break after the terminal's `^C`
async fn run(cli: Cli) -> u8 {
    let output = cli.global.output;
    // For `login`, --timeout is how long the person has, not a request's.
    if let Command::Add { from, package, remote, name } = &cli.command {
        return match add::add(output, from, *package, *remote, name.as_deref()) {
            Ok(code) => code,
            Err(f) => {
                report(output, &f);
                f.code
            }
        };
    }
    if let Command::Trust { file, revoke } = &cli.command {
        return match consent::trust_command(&cli.global, file.as_deref(), *revoke) {
            Ok(code) => code,
            Err(f) => {
                report(output, &f);
                f.code
            }
        };
    }
    let login = matches!(cli.command, Command::Login { .. });
    // `login`/`logout --account`: that account's tokens, this run.
    let account = match &cli.command {
        Command::Login { account, .. } | Command::Logout { account, .. } => account.as_deref(),
        _ => None,
    };
    // `serve`: the servers' requests and call approvals go to the host.
    let link = match &cli.command {
        Command::Serve { .. } => Some(Arc::new(serve::Hosts::default())),
        _ => None,
    };
    let host = link.as_ref().map(|hosts| {
        let mut side = serve::host_side(hosts);
        // A host on stdio: the answers to its forwarded calls go to it
        // from the thread that reads them, with no turn of the runtime.
        side.stdio_reader_thread = matches!(&cli.command, Command::Serve { http: None, .. });
        side
    });
    let setup::Setup { registry, warnings, pins_kept } =
        match setup::build_registry(&cli.global, login, account, host) {
            Ok(setup) => setup,
            Err(f) => {
                report(output, &f);
                return f.code;
            }
        };
    for w in warnings {
        output::note(&format!("mcpc: warning: {w}"));
    }
    let registry = Arc::new(registry);
    let ends_on_ctrl_c = matches!(
        cli.command,
        Command::Listen { .. } | Command::Resources(cli::ResourcesCommand::Subscribe { .. })
    );
    // Ctrl-C, SIGTERM, SIGHUP: close the servers (process groups, HTTP
    // sessions) before leaving, rather than dying with them open, whatever
    // the command was doing (connecting included).
    let outcome = {
        let ctx = ctx::Ctx { g: &cli.global, registry: &registry, pins_kept };
        let exec: std::pin::Pin<Box<dyn Future<Output = Result<u8, Failure>>>> =
            match (&cli.command, &link) {
                (
                    Command::Serve {
                        only,
                        tools,
                        schema_for,
                        http,
                        token_file,
                        allow_origins,
                        max_sessions,
                        idle_timeout,
                        max_in_flight,
                        max_unsent_events,
                    },
                    Some(hosts),
                ) => {
                    let http = http.as_ref().map(|addr| serve::HttpArgs {
                        addr: addr.clone(),
                        token_file: token_file.clone(),
                        allow_origins: allow_origins.clone(),
                        max_sessions: *max_sessions,
                        idle_timeout: idle_timeout.map(|s| Duration::from_secs(s.into())),
                        max_in_flight: *max_in_flight,
                        max_unsent_events: *max_unsent_events,
                    });
                    let (registry, hosts) = (registry.clone(), hosts.clone());
                    let mode = (*tools, schema_for.target());
                    Box::pin(async move {
                        let limits = serve::Limits { max_in_flight: *max_in_flight };
                        serve::serve(
                            &cli.global,
                            registry,
                            hosts,
                            only,
                            mode,
                            limits,
                            http.as_ref(),
                        )
                        .await
                    })
                }
                _ => Box::pin(commands::execute(&ctx, &cli.command)),
            };
        tokio::pin!(exec);
        tokio::select! {
            outcome = &mut exec => outcome,
            code = terminated() => {
                progress::clear();
                eprintln!();
                if code == EXIT_INTERRUPTED && ends_on_ctrl_c {
                    // Following until Ctrl-C: that is the normal end.
                    Ok(0)
                } else {
                    let mut f = Failure::new(Kind::Interrupted, "interrupted");
                    f.code = code;
                    Err(f)
                }
            }
        }
        // The abandoned command is dropped here: a connect it was making
        // lets go of its server (and kills a child it spawned) before the
        // servers are closed.
    };
    registry.close_all().await;
    match outcome {
        Ok(code) => code,
        Err(f) => {
            report(output, &f);
            f.code
        }
    }
}

/// Waits for a terminating signal and gives the exit status it calls for:
/// 130 for SIGINT (Ctrl-C), 143 for SIGTERM, 129 for SIGHUP. Never ends when
/// the signals cannot be watched.
async fn terminated() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let hup = signal(SignalKind::hangup());
        if let (Ok(mut term), Ok(mut hup)) = (term, hup) {
            return tokio::select! {
                r = tokio::signal::ctrl_c() => match r {
                    Ok(()) => EXIT_INTERRUPTED,
                    Err(_) => std::future::pending().await,
                },
                _ = term.recv() => EXIT_TERMINATED,
                _ = hup.recv() => EXIT_HANGUP,
            };
        }
    }
    match tokio::signal::ctrl_c().await {
        Ok(()) => EXIT_INTERRUPTED,
        Err(_) => std::future::pending().await,
    }
}
