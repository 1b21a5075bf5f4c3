//! `mcpc`: every Model Context Protocol method from the command line:
//! servers, tools and calls, resources, prompts, completion, tasks, the
//! server's notifications, OAuth login.
//!
//! It is a thin shell over `mcp-registry`: the servers come from a
//! configuration (`--config PATH` or `$MCPC_CONFIG`, else `./mcp.toml`,
//! else `mcpc/mcp.toml` in the user's config directory; `[mcp_client]`
//! TOML, or the `mcpServers` JSON of Claude Desktop, Cursor and VS Code),
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
//! The host's side of the protocol is declared and answered (`host.rs`):
//! roots (the current directory, or each `--root`), elicitation (a form on
//! the terminal, built from the request's schema), sampling (declined:
//! there is no model here).
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
//! port>/callback` (`mcp-auth`'s loopback handler), prints the
//! authorization URL on stderr and tries to open it in the browser
//! (`MCPC_NO_BROWSER=1` turns this off), waits at most `--timeout SECS`
//! (default 300), then keeps the tokens in the user's data directory
//! (`mcpc/oauth`, one `0600` file per server and issuer). Later commands
//! use and refresh them; when a server needs a new login they fail (exit
//! 3) with "run `mcpc login SERVER`". `mcpc logout [SERVER]` revokes and
//! deletes them.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod commands;
mod failure;
mod form;
mod host;
mod methods;
mod output;
mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{FileTokenStore, MemoryTokenStore, TokenStore};
use mcp_client_stdio::ServerCommand;
use mcp_host_registry::{
    ClientIdentity, Config, DefaultConnector, FilePinStore, LoadOptions, Registry, RegistryOptions,
    ServerConfig, TransportConfig, Warning, default_token_dir, parse_server_spec,
};
use mcp_proto::types::LoggingLevel;

use crate::cli::{Cli, Command, DEMO_SERVER, Global};
use crate::failure::{
    EXIT_CONNECTION, EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, Failure, Kind,
};
use crate::output::{emit_json, report};

/// The name of the server given with `--server`.
const SPEC_SERVER: &str = "server";
/// The name of the embedded demo server.
const DEMO: &str = "demo";

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
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .without_time()
        .try_init();
}

/// The hidden subcommand: the testkit's server on this process's stdio.
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

async fn run(cli: Cli) -> u8 {
    let output = cli.global.output;
    // For `login`, --timeout is how long the person has, not a request's.
    let login = matches!(cli.command, Command::Login { .. });
    let registry = match build_registry(&cli.global, login) {
        Ok((registry, warnings)) => {
            for w in warnings {
                output::note(&format!("mcpc: warning: {w}"));
            }
            registry
        }
        Err(f) => {
            report(output, &f);
            return f.code;
        }
    };
    let ends_on_ctrl_c = matches!(
        cli.command,
        Command::Listen { .. } | Command::Resources(cli::ResourcesCommand::Subscribe { .. })
    );
    // Ctrl-C, SIGTERM, SIGHUP: close the servers (process groups, HTTP
    // sessions) before leaving, rather than dying with them open, whatever
    // the command was doing (connecting included).
    let outcome = {
        let exec = commands::execute(&cli, &registry);
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

/// The servers: `--server`, else a configuration file, else the demo
/// (with `login`, `--timeout` bounds the login, not the servers' requests);
/// with the command-line settings applied (timeout, `-e`, `--cwd`).
fn build_registry(g: &Global, login: bool) -> Result<(Registry, Vec<Warning>), Failure> {
    let identity = ClientIdentity::new("mcpc", env!("CARGO_PKG_VERSION"));
    let mut inner = DefaultConnector::default();
    inner.host_name = "mcpc".into();
    // No OAuth handler during normal commands: a server that needs a login
    // says so (with the command to run) instead of prompting mid-call.
    inner.token_store = Some(match default_token_dir("mcpc") {
        Some(dir) => Arc::new(FileTokenStore::new(dir)) as Arc<dyn TokenStore>,
        None => Arc::new(MemoryTokenStore::new()),
    });
    let env = parse_env(&g.env)?;
    // Tool pins live beside a configuration file; a server given on the
    // command line (or the demo) is pinned for this run only.
    let mut pins = None;
    let (mut config, warnings) = if let Some(spec) = &g.server {
        if g.config.is_some() {
            return Err(Failure::usage("give --config or --server, not both"));
        }
        (spec_config(spec, &g.headers, identity)?, Vec::new())
    } else if !g.headers.is_empty() {
        return Err(Failure::usage(
            "-H is for a server given with --server URL; put headers of configured servers in the configuration",
        ));
    } else if let Some(path) = config_path(g.config.as_deref())? {
        let options =
            LoadOptions { strict: g.strict, client_identity: identity, ..Default::default() };
        let loaded = Config::load(&path, &options).map_err(|e| {
            // Most errors name the file (and line) themselves.
            let named = e.path().is_some();
            let message = if named { e.to_string() } else { format!("{}: {e}", path.display()) };
            Failure::new(Kind::Config, message)
        })?;
        pins = Some(FilePinStore::beside(&path));
        (loaded.config, loaded.warnings)
    } else {
        // The demo server is this executable: no PATH to discover.
        inner.discover_path = false;
        let exe = std::env::current_exe().map_err(|e| {
            Failure::new(
                Kind::Connection,
                format!("cannot find this executable to run the demo server: {e}"),
            )
        })?;
        let command = ServerCommand::new(exe.to_string_lossy().into_owned()).arg(DEMO_SERVER);
        let demo = ServerConfig::stdio(DEMO, command)
            .with_description("the demo server built into mcpc (mcp-testkit)");
        (Config { enabled: true, client_identity: identity, servers: vec![demo] }, Vec::new())
    };
    let cwd = match &g.cwd {
        Some(dir) if !dir.is_dir() => {
            return Err(Failure::usage(format!("--cwd {}: no such directory", dir.display())));
        }
        Some(dir) => Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
        None => None,
    };
    for server in &mut config.servers {
        if let Some(secs) = g.timeout.filter(|_| !login) {
            server.timeout = Duration::from_secs_f64(secs);
        }
        if let TransportConfig::Stdio(command) = &mut server.transport {
            command.env.extend(env.iter().cloned());
            if let Some(dir) = &cwd {
                command.cwd = Some(dir.clone());
            }
        }
    }
    let roots = if g.roots.is_empty() {
        vec![std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))]
    } else {
        let mut roots = Vec::new();
        for root in &g.roots {
            let absolute = std::path::absolute(root)
                .map_err(|e| Failure::usage(format!("--root {}: {e}", root.display())))?;
            roots.push(absolute);
        }
        roots
    };
    let settings =
        host::HostSettings { roots, accept_defaults: g.accept_defaults, open_urls: g.open };
    inner.handlers = host::handlers(&settings);
    inner.stdio_shutdown_grace = Some(host::CLOSE_GRACE);
    inner.stdio_log_level = g.log_level.map(|l| LoggingLevel::from(l.as_str()));
    let mut options = RegistryOptions::with_connector(inner);
    options.login_command = Some("mcpc login {server}".into());
    if let Some(store) = pins {
        options.pin_store = Arc::new(store);
        PINS_KEPT.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok((Registry::new(config, options), warnings))
}

/// Whether tool pins outlive this run (kept beside a configuration file):
/// without that every tool is new on every run, which is not worth showing.
pub(crate) static PINS_KEPT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// `-e KEY=VALUE` pairs.
fn parse_env(pairs: &[String]) -> Result<Vec<(String, String)>, Failure> {
    pairs
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_owned(), value.to_owned()))
            }
            _ => Err(Failure::usage(format!("-e takes KEY=VALUE, got {pair:?}"))),
        })
        .collect()
}

/// The one server of `--server SPEC`: a URL (without credentials in it),
/// or a command split by the shell's quoting rules.
fn spec_config(
    spec: &str,
    headers: &[String],
    identity: ClientIdentity,
) -> Result<Config, Failure> {
    let mut server = parse_server_spec(SPEC_SERVER, spec, headers).map_err(Failure::usage)?;
    match &mut server.transport {
        TransportConfig::Http { endpoint, .. } if failure::has_userinfo(endpoint) => {
            return Err(Failure::new(
                Kind::Config,
                "the --server URL has a user name or password in it, which mcpc does not send; \
                 give the credentials as a header instead: -H 'Authorization: Basic <base64 of user:password>'",
            )
            .with_server(SPEC_SERVER));
        }
        TransportConfig::Stdio(command) => {
            let words = shell_words::split(spec.trim()).map_err(|e| {
                Failure::usage(format!("--server: cannot split the command into words: {e}"))
            })?;
            let mut words = words.into_iter();
            command.command = words.next().unwrap_or_default();
            command.args = words.collect();
        }
        _ => {}
    }
    Ok(Config { enabled: true, client_identity: identity, servers: vec![server] })
}

/// `--config PATH` / `$MCPC_CONFIG` (must exist), else `./mcp.toml`, else
/// the user's `mcpc/mcp.toml`; `None` means the demo.
fn config_path(explicit: Option<&Path>) -> Result<Option<PathBuf>, Failure> {
    if let Some(path) = explicit {
        if !path.is_file() {
            return Err(Failure::new(
                Kind::Config,
                format!("the configuration {} does not exist", path.display()),
            ));
        }
        return Ok(Some(path.to_owned()));
    }
    let local = PathBuf::from("mcp.toml");
    if local.is_file() {
        return Ok(Some(local));
    }
    Ok(user_config_dir().map(|d| d.join("mcpc").join("mcp.toml")).filter(|p| p.is_file()))
}

/// `$XDG_CONFIG_HOME`, else `~/.config` (on Windows `%APPDATA%`).
fn user_config_dir() -> Option<PathBuf> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        return non_empty("APPDATA");
    }
    non_empty("XDG_CONFIG_HOME").or_else(|| non_empty("HOME").map(|h| h.join(".config")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_commands_are_split_by_the_shell_rules() {
        let identity = || ClientIdentity::new("t", "0");
        let cases: &[(&str, &[&str])] = &[
            ("node -e 'console.log(1 + 1)'", &["node", "-e", "console.log(1 + 1)"]),
            (r#"srv --root "/a b" x\ y"#, &["srv", "--root", "/a b", "x y"]),
            ("  srv  stdio ", &["srv", "stdio"]),
        ];
        for (spec, words) in cases {
            let config = spec_config(spec, &[], identity()).unwrap();
            let TransportConfig::Stdio(c) = &config.servers[0].transport else { panic!() };
            let mut got = vec![c.command.as_str()];
            got.extend(c.args.iter().map(String::as_str));
            assert_eq!(&got, words, "{spec}");
        }
        let e = spec_config("srv 'unclosed", &[], identity()).unwrap_err();
        assert_eq!(e.code, EXIT_USAGE);
        let e = spec_config("https://u:p@h.example/mcp", &[], identity()).unwrap_err();
        assert_eq!((e.kind, e.code), (Kind::Config, EXIT_USAGE));
        assert!(!e.message.contains("StaticAuth"), "{}", e.message);
    }

    #[test]
    fn env_pairs() {
        let ok = parse_env(&["A=1".into(), "B=x=y".into(), "C=".into()]).unwrap();
        assert_eq!(
            ok,
            [("A".into(), "1".into()), ("B".into(), "x=y".into()), ("C".into(), String::new())]
        );
        assert!(parse_env(&["novalue".into()]).is_err());
        assert!(parse_env(&["=1".into()]).is_err());
    }
}
