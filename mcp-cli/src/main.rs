//! `mcpc`: list Model Context Protocol servers and their tools, call a
//! tool, ping a server, from the command line.
//!
//! It is a thin shell over `mcp-registry`: the servers come from a
//! configuration (`--config PATH`, else `./mcp.toml`, else
//! `mcpc/mcp.toml` in the user's config directory; `[mcp_client]` TOML, or
//! the `mcpServers` JSON of Claude Desktop, Cursor and VS Code), or from
//! one `--server SPEC` (a URL, or a command to spawn). With neither, it
//! talks to the demo server it embeds (the `mcp-testkit` server without its
//! `http` feature, run over stdio by spawning this same executable with a
//! hidden subcommand), so it
//! works on a fresh machine with no set-up and no network:
//!
//! ```sh
//! cargo run -p mcpc -- tools
//! cargo run -p mcpc -- call demo echo message=hi
//! cargo run -p mcpc -- call demo add a=2 b=3 --output json
//! cargo run -p mcpc -- --server 'npx -y @modelcontextprotocol/server-everything' tools
//! cargo run -p mcpc -- --server https://example.com/mcp -H 'X-Api-Key: ...' tools
//! ```
//!
//! Results are rendered with `mcp_proto::render_tool_result` (every content
//! kind shown; `structuredContent` pretty-printed in text mode; the raw
//! result in `--output json` mode). Calls that report progress get a
//! progress bar on stderr, slow ones a spinner (`--progress`, `NO_COLOR`).
//!
//! Wherever a connection was made, the protocol version the server speaks
//! and its era are shown: `modern` (2026-07-28, stateless, found by the
//! `server/discover` probe) or `legacy` (the `initialize` handshake):
//! `tools` and `ping` end their lines with `(VERSION, ERA era)`,
//! `servers --connect` adds a column, and the JSON objects carry
//! `protocol_version` and `era`.
//!
//! Exit codes: 0 success, 1 the tool reported `isError`, 2 usage or
//! configuration error, 3 connection, protocol or authorization failure,
//! 130 interrupted (Ctrl-C; the servers are closed first).
//!
//! # OAuth
//!
//! Servers configured with `auth = { kind = "oauth", ... }` need a login
//! once: `mcpc login SERVER` listens on `http://127.0.0.1:<random
//! port>/callback` (`mcp-auth`'s loopback handler), prints the
//! authorization URL on stderr ("Open this URL to log in: ..."), and also
//! tries to open it in the browser (`open` on macOS, `xdg-open` elsewhere
//! on Unix when a display is set; spawned without a shell, output
//! discarded, failure ignored; `MCPC_NO_BROWSER=1` turns this off). It waits
//! at most `--timeout SECS` (default 300) for the browser's redirect, then
//! exchanges the code and keeps the tokens in
//! `$XDG_DATA_HOME/mcpc/oauth` (else `~/.local/share/mcpc/oauth`; on macOS
//! `~/Library/Application Support/mcpc/oauth`, on Windows
//! `%APPDATA%\mcpc\oauth`), one file per server and issuer, `0600`. It
//! prints `logged in to SERVER`. Later commands use and refresh the stored
//! tokens; when a server needs a new login they fail (exit 3) with "run
//! `mcpc login SERVER`" instead of prompting in the middle of a call.
//!
//! `mcpc logout [SERVER]` revokes the server's tokens where its
//! authorization server offers RFC 7009 revocation, and deletes them from
//! the store (also when the revocation fails, with a warning).
//!
//! The hidden `login --headless` option is for tests and CI only: instead
//! of a browser it fetches the authorization URL itself and reads the
//! redirect (authorization servers that approve at once).

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod progress;

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use mcp_auth::loopback::LoopbackHandler;
use mcp_auth::{FileTokenStore, MemoryTokenStore, TokenStore};
use mcp_client_stdio::ServerCommand;
use mcp_host_registry::{
    ClientIdentity, Config, DefaultConnector, LoadOptions, OAuthHandler, Registry, RegistryOptions,
    Revocation, ServerConfig, ServerStatus, TransportConfig, Warning, default_token_dir,
    parse_server_spec,
};
use mcp_proto::client::RequestOptions;
use mcp_proto::types::{JsonObject, Tool};
use serde_json::{Value, json};

use crate::args::{Cli, Command, DEMO_SERVER, Output, ProgressMode, USAGE};
use crate::progress::Progress;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The name of the server given with `--server`.
const SPEC_SERVER: &str = "server";
/// The name of the embedded demo server.
const DEMO: &str = "demo";

/// Exit codes.
const EXIT_TOOL_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_CONNECTION: u8 = 3;
/// Interrupted by Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;
/// SIGTERM (128 + 15).
const EXIT_TERMINATED: u8 = 143;
/// SIGHUP (128 + 1).
const EXIT_HANGUP: u8 = 129;

/// A failure and its exit code.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    fn usage(message: impl std::fmt::Display) -> Failure {
        Failure { code: EXIT_USAGE, error: anyhow!("{message}") }
    }

    /// A registry error: the caller's mistake (2) or a failure to reach or
    /// talk to the server (3). Its message already carries its causes.
    fn registry(e: mcp_host_registry::Error) -> Failure {
        let code = if e.is_usage() { EXIT_USAGE } else { EXIT_CONNECTION };
        Failure { code, error: anyhow!("{e}") }
    }
}

fn main() -> ExitCode {
    let raw: Result<Vec<String>, _> =
        std::env::args_os().skip(1).map(|a| a.into_string()).collect();
    let Ok(raw) = raw else {
        eprintln!("mcpc: arguments must be valid UTF-8");
        return ExitCode::from(EXIT_USAGE);
    };
    let cli = match args::parse(raw) {
        Ok(cli) => cli,
        Err(message) => {
            eprintln!("mcpc: {message}\n\n{USAGE}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match cli.command {
        Command::Help => {
            emit(USAGE.trim_end());
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            emit(&format!("mcpc {VERSION}"));
            return ExitCode::SUCCESS;
        }
        Command::DemoServer => return run_demo_server(),
        _ => {}
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpc: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_CONNECTION);
        }
    };
    ExitCode::from(runtime.block_on(run(cli)))
}

/// The hidden subcommand: the testkit's server on this process's stdio.
fn run_demo_server() -> ExitCode {
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .and_then(|rt| {
            rt.block_on(mcp_testkit::run_stdio(mcp_testkit::Config::default()))
                .context("the demo server failed")
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpc {DEMO_SERVER}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Colours on stderr: when it is a terminal and `NO_COLOR` is unset or empty.
fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes a line to stdout; a closed pipe (`mcpc tools | head`) is not an
/// error.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

fn report_error(error: &anyhow::Error) {
    let label = if stderr_color() { "\x1b[31merror\x1b[0m" } else { "error" };
    eprintln!("mcpc: {label}: {error:#}");
}

async fn run(cli: Cli) -> u8 {
    let registry = match build_registry(&cli) {
        Ok((registry, warnings)) => {
            for w in warnings {
                eprintln!("mcpc: warning: {w}");
            }
            registry
        }
        Err(f) => {
            report_error(&f.error);
            return f.code;
        }
    };
    // Ctrl-C, SIGTERM, SIGHUP: close the servers (process groups, HTTP
    // sessions) before leaving, rather than dying with them open, whatever
    // the command was doing (connecting included).
    let outcome = {
        let exec = execute(&cli, &registry);
        tokio::pin!(exec);
        tokio::select! {
            outcome = &mut exec => outcome,
            code = terminated() => {
                eprintln!();
                Err(Failure { code, error: anyhow!("interrupted") })
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
            report_error(&f.error);
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

/// The servers: `--server`, else a configuration file, else the demo.
fn build_registry(cli: &Cli) -> Result<(Registry, Vec<Warning>), Failure> {
    let identity = ClientIdentity::new("mcpc", VERSION);
    let mut connector = DefaultConnector::default();
    connector.host_name = "mcpc".into();
    // No handler during normal commands: a server that needs a login says
    // so (with the command below) instead of prompting mid-call.
    connector.token_store = Some(match default_token_dir("mcpc") {
        Some(dir) => Arc::new(FileTokenStore::new(dir)) as Arc<dyn TokenStore>,
        None => Arc::new(MemoryTokenStore::new()),
    });
    let (config, warnings) = if let Some(spec) = &cli.server {
        if cli.config.is_some() {
            return Err(Failure::usage("give --config or --server, not both"));
        }
        let server = parse_server_spec(SPEC_SERVER, spec, &cli.headers).map_err(Failure::usage)?;
        (Config { enabled: true, client_identity: identity, servers: vec![server] }, Vec::new())
    } else if !cli.headers.is_empty() {
        return Err(Failure::usage(
            "-H is for a server given with --server URL; put headers of configured servers in the configuration",
        ));
    } else if let Some(path) = config_path(cli.config.as_deref())? {
        let options =
            LoadOptions { strict: cli.strict, client_identity: identity, ..Default::default() };
        let loaded = Config::load(&path, &options)
            .map_err(|e| Failure { code: EXIT_USAGE, error: anyhow!("{e}") })?;
        (loaded.config, loaded.warnings)
    } else {
        // The demo server is this executable: no PATH to discover.
        connector.discover_path = false;
        let exe = std::env::current_exe().map_err(|e| Failure {
            code: EXIT_CONNECTION,
            error: anyhow!("cannot find this executable to run the demo server: {e}"),
        })?;
        let command = ServerCommand::new(exe.to_string_lossy().into_owned()).arg(DEMO_SERVER);
        let demo = ServerConfig::stdio(DEMO, command)
            .with_description("the demo server built into mcpc (mcp-testkit)");
        (Config { enabled: true, client_identity: identity, servers: vec![demo] }, Vec::new())
    };
    let mut options = RegistryOptions::with_connector(connector);
    options.login_command = Some("mcpc login {server}".into());
    let registry = Registry::new(config, options);
    Ok((registry, warnings))
}

/// `--config PATH` (must exist), else `./mcp.toml`, else the user's
/// `mcpc/mcp.toml`; `None` means the demo.
fn config_path(explicit: Option<&Path>) -> Result<Option<PathBuf>, Failure> {
    if let Some(path) = explicit {
        if !path.is_file() {
            return Err(Failure::usage(format!(
                "the configuration {} does not exist",
                path.display()
            )));
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

async fn execute(cli: &Cli, registry: &Registry) -> Result<u8, Failure> {
    match &cli.command {
        Command::Servers => servers(cli.output, registry, cli.connect).await,
        Command::Tools(server) => tools(cli.output, registry, server.as_deref()).await,
        Command::Call(positional) => call(cli, registry, positional).await,
        Command::Ping(server) => {
            let server = pick_server(registry, server.as_deref())?;
            let start = Instant::now();
            registry.ping(&server).await.map_err(Failure::registry)?;
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            let status = registry.status(&server).await.map_err(Failure::registry)?;
            match cli.output {
                Output::Text => {
                    emit(&format!("{server}: pong in {ms:.1} ms{}", protocol_suffix(&status)))
                }
                Output::Json => {
                    let mut v = json!({"server": server, "ok": true, "ms": ms});
                    add_protocol(&mut v, &status);
                    emit(&v.to_string());
                }
            }
            Ok(0)
        }
        Command::Login(server) => {
            let config = registry.get(server).ok_or_else(|| {
                Failure::registry(mcp_host_registry::Error::UnknownServer {
                    server: server.clone(),
                })
            })?;
            if !config.uses_oauth() {
                return Err(Failure::usage(format!(
                    "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log in to"
                )));
            }
            login(cli, registry, server).await
        }
        Command::Logout(server) => {
            let server = pick_server(registry, server.as_deref())?;
            if !registry.get(&server).is_some_and(|c| c.uses_oauth()) {
                return Err(Failure::usage(format!(
                    "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log out of"
                )));
            }
            logout(cli.output, registry, &server).await
        }
        Command::Help | Command::Version | Command::DemoServer => Ok(0),
    }
}

/// How long the token exchanges of a login may take beyond the user's
/// part (`--timeout`).
const LOGIN_GRACE: Duration = Duration::from_secs(60);

/// `mcpc login SERVER`: the loopback handler (or the hidden headless one),
/// the tokens into the file store.
async fn login(cli: &Cli, registry: &Registry, server: &str) -> Result<u8, Failure> {
    let handler = if cli.headless {
        OAuthHandler::Headless(None)
    } else {
        let handler = LoopbackHandler::bind(cli.login_timeout)
            .await
            .map_err(|e| Failure { code: EXIT_CONNECTION, error: anyhow!("{e}") })?
            .on_url(|url| {
                eprintln!("Open this URL to log in:\n  {url}");
                open_browser(url);
            });
        OAuthHandler::Custom(Arc::new(handler))
    };
    registry
        .login(server, Some(handler), cli.login_timeout + LOGIN_GRACE)
        .await
        .map_err(Failure::registry)?;
    match cli.output {
        Output::Text => emit(&format!("logged in to {server}")),
        Output::Json => emit(&json!({"server": server, "logged_in": true}).to_string()),
    }
    Ok(0)
}

/// How long a logout (discovery and revocation) may take.
const LOGOUT_TIMEOUT: Duration = Duration::from_secs(60);

/// `mcpc logout SERVER`: revocation where offered, then the tokens deleted
/// from the store (also when the revocation failed: that is a warning).
async fn logout(output: Output, registry: &Registry, server: &str) -> Result<u8, Failure> {
    let revocation = registry.logout(server, LOGOUT_TIMEOUT).await.map_err(Failure::registry)?;
    let revoked = match &revocation {
        Revocation::Revoked => Some(true),
        Revocation::NotOffered => None,
        Revocation::Failed(e) => {
            eprintln!("warning: {server}: the tokens could not be revoked: {e}");
            Some(false)
        }
        _ => None,
    };
    match output {
        Output::Text => emit(&match revoked {
            Some(true) => format!("logged out of {server} (tokens revoked and deleted)"),
            Some(false) => format!("logged out of {server} (tokens deleted; not revoked)"),
            None => format!("logged out of {server} (tokens deleted)"),
        }),
        Output::Json => {
            emit(&json!({"server": server, "logged_out": true, "revoked": revoked}).to_string())
        }
    }
    Ok(0)
}

/// Opens `url` in the browser when that is cheap: `open` on macOS,
/// `xdg-open` on other Unix systems with a display, spawned without a
/// shell, its output discarded, any failure ignored (the URL is printed
/// anyway). Off with `MCPC_NO_BROWSER`, and on other platforms.
fn open_browser(url: &str) {
    if std::env::var_os("MCPC_NO_BROWSER").is_some_and(|v| !v.is_empty()) {
        return;
    }
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(unix)
        && (std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some())
    {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped in the background; the login does not wait for it.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

/// The named server, or the only one.
fn pick_server(registry: &Registry, name: Option<&str>) -> Result<String, Failure> {
    let names: Vec<&str> = registry.list().map(|s| s.name.as_str()).collect();
    match name {
        Some(name) if names.contains(&name) => Ok(name.to_owned()),
        Some(name) => Err(Failure::usage(format!(
            "no server is named {name:?} (servers: {})",
            list_or_none(&names)
        ))),
        None => match names.as_slice() {
            [only] => Ok((*only).to_owned()),
            [] => Err(Failure::usage("no servers are configured")),
            _ => Err(Failure::usage(format!("name a SERVER: {}", names.join(", ")))),
        },
    }
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

/// `mcpc servers`: the configured servers; with `--connect`, each one
/// connected (concurrently, bounded) and shown with the protocol version
/// and era it speaks. A server that cannot be reached is reported on stderr
/// (and in the JSON) and makes the exit code 3; the others are still shown.
async fn servers(output: Output, registry: &Registry, connect: bool) -> Result<u8, Failure> {
    let mut errors = std::collections::HashMap::new();
    let mut code = 0;
    if connect {
        for r in registry.initialize_all().await {
            if let Err(e) = r.result {
                let failure = Failure::registry(e);
                code = code.max(failure.code);
                report_error(&failure.error);
                errors.insert(r.server, format!("{:#}", failure.error));
            }
        }
    }
    let statuses = registry.statuses().await;
    match output {
        Output::Json => {
            let list: Vec<Value> = registry
                .list()
                .zip(&statuses)
                .map(|(server, status)| {
                    let mut v = server_json(server);
                    v["connected"] = json!(status.connected);
                    add_protocol(&mut v, status);
                    if let Some(error) = errors.get(&server.name) {
                        v["error"] = json!(error);
                    }
                    v
                })
                .collect();
            emit(&Value::Array(list).to_string());
        }
        Output::Text => {
            let rows: Vec<(String, &str, String, String, String)> = registry
                .list()
                .zip(&statuses)
                .map(|(s, status)| {
                    let (kind, target) = target(s);
                    let protocol = match (status.protocol_version, status.era) {
                        (Some(version), Some(era)) => format!("{version} {era}"),
                        _ if errors.contains_key(&s.name) => "unreachable".to_owned(),
                        _ => String::new(),
                    };
                    let description = s.description.clone().unwrap_or_default();
                    (s.name.clone(), kind, target, protocol, description)
                })
                .collect();
            let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            let w2 = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
            let w3 = rows.iter().map(|r| r.3.len()).max().unwrap_or(0);
            for (name, kind, target, protocol, description) in rows {
                let line = if connect {
                    format!("{name:w0$}  {kind:5}  {target:w2$}  {protocol:w3$}  {description}")
                } else {
                    format!("{name:w0$}  {kind:5}  {target:w2$}  {description}")
                };
                emit(line.trim_end());
            }
        }
    }
    Ok(code)
}

/// ` (2025-11-25, legacy era)`: the protocol a connected server speaks, for
/// the end of a line; empty when it is not known.
fn protocol_suffix(status: &ServerStatus) -> String {
    match (status.protocol_version, status.era) {
        (Some(version), Some(era)) => format!(" ({version}, {era} era)"),
        _ => String::new(),
    }
}

/// Adds `protocol_version` and `era` (`"modern"`/`"legacy"`, or null when
/// not connected) to a JSON object.
fn add_protocol(v: &mut Value, status: &ServerStatus) {
    v["protocol_version"] = json!(status.protocol_version.map(|p| p.as_str()));
    v["era"] = json!(status.era.map(|e| e.to_string()));
}

/// The transport kind and what it points at; an endpoint shows only its
/// scheme and host (a path or query may hold a key).
fn target(server: &ServerConfig) -> (&'static str, String) {
    match &server.transport {
        TransportConfig::Stdio(c) => {
            let mut words = vec![c.command.clone()];
            words.extend(c.args.iter().cloned());
            ("stdio", words.join(" "))
        }
        TransportConfig::Http { endpoint, .. } => ("http", mcp_http::redact_endpoint(endpoint)),
        _ => ("other", String::new()),
    }
}

fn server_json(server: &ServerConfig) -> Value {
    let mut v = json!({
        "name": server.name,
        "description": server.description,
        "timeout_secs": server.timeout.as_secs(),
        "allowed_tools": server.policy.allowed(),
        "disallowed_tools": server.policy.denied(),
    });
    match &server.transport {
        TransportConfig::Stdio(c) => {
            v["transport"] = json!("stdio");
            v["command"] = json!(c.command);
            v["args"] = json!(c.args);
        }
        TransportConfig::Http { endpoint, .. } => {
            v["transport"] = json!("http");
            v["endpoint"] = json!(mcp_http::redact_endpoint(endpoint));
        }
        _ => v["transport"] = json!("other"),
    }
    v
}

async fn tools(output: Output, registry: &Registry, server: Option<&str>) -> Result<u8, Failure> {
    let results: Vec<(String, Result<Vec<Tool>, mcp_host_registry::Error>)> = match server {
        Some(name) => {
            let name = pick_server(registry, Some(name))?;
            let result = registry.list_tools(&name).await;
            vec![(name, result)]
        }
        None => registry.list_all_tools().await.into_iter().map(|r| (r.server, r.result)).collect(),
    };
    if results.is_empty() {
        return Err(Failure::usage("no servers are configured"));
    }
    let mut code = 0;
    let mut json_out = Vec::new();
    let single = results.len() == 1;
    for (i, (name, result)) in results.into_iter().enumerate() {
        match result {
            Ok(tools) => {
                let status = registry.status(&name).await.map_err(Failure::registry)?;
                match output {
                    Output::Json => {
                        let mut v = json!({"server": name});
                        add_protocol(&mut v, &status);
                        v["tools"] = json!(tools);
                        json_out.push(v);
                    }
                    Output::Text => {
                        if i > 0 {
                            emit("");
                        }
                        emit(&format!(
                            "{name}: {} tool{}{}",
                            tools.len(),
                            plural(tools.len()),
                            protocol_suffix(&status)
                        ));
                        let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
                        for tool in &tools {
                            let line = format!("  {:width$}  {}", tool.name, summary(tool));
                            emit(line.trim_end());
                        }
                    }
                }
            }
            Err(e) => {
                let failure = Failure::registry(e);
                if single {
                    return Err(failure);
                }
                code = code.max(failure.code);
                if output == Output::Json {
                    json_out.push(json!({"server": name, "error": format!("{:#}", failure.error)}));
                }
                report_error(&failure.error);
            }
        }
    }
    if output == Output::Json {
        emit(&Value::Array(json_out).to_string());
    }
    Ok(code)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The first line of a tool's description, at most 100 characters.
fn summary(tool: &Tool) -> String {
    let first = tool.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
    let text = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 100 {
        let cut: String = text.chars().take(99).collect();
        format!("{cut}…")
    } else {
        text
    }
}

async fn call(cli: &Cli, registry: &Registry, positional: &[String]) -> Result<u8, Failure> {
    // `call SERVER TOOL ...`, or `call TOOL ...` when there is one server.
    let (server, tool, pairs) = match positional {
        [first, rest @ ..] if registry.get(first).is_some() => match rest {
            [tool, pairs @ ..] => (first.clone(), tool.clone(), pairs),
            [] => return Err(Failure::usage(format!("call {first} needs a TOOL"))),
        },
        [tool, pairs @ ..] if registry.list().len() == 1 && !tool.contains('=') => {
            (pick_server(registry, None)?, tool.clone(), pairs)
        }
        [first, ..] => {
            let names: Vec<&str> = registry.list().map(|s| s.name.as_str()).collect();
            return Err(Failure::usage(format!(
                "no server is named {first:?} (servers: {})",
                list_or_none(&names)
            )));
        }
        [] => return Err(Failure::usage("call needs a TOOL")),
    };
    let mut arguments = match &cli.json {
        None => JsonObject::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Failure::usage("--json must be a JSON object")),
            Err(e) => return Err(Failure::usage(format!("--json is not valid JSON: {e}"))),
        },
    };
    let mut raw_pairs = Vec::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Failure::usage(format!("expected key=value, got {pair:?}")));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(Failure::usage(format!("the argument {pair:?} has no key")));
        }
        raw_pairs.push((key.to_owned(), value.to_owned()));
    }
    let policy_allows = registry.get(&server).is_some_and(|s| s.policy.is_allowed(&tool));
    if !raw_pairs.is_empty() && policy_allows {
        // The tool's schema says which values are strings.
        let tools = registry.list_tools(&server).await.map_err(Failure::registry)?;
        let schema =
            tools.iter().find(|t| t.name == tool).and_then(|t| t.input_schema.properties.clone());
        for (key, value) in raw_pairs {
            let property = schema.as_ref().and_then(|p| p.get(&key));
            let value = coerce(&key, &value, property).map_err(Failure::usage)?;
            arguments.insert(key, value);
        }
    } else {
        for (key, value) in raw_pairs {
            let value = coerce(&key, &value, None).map_err(Failure::usage)?;
            arguments.insert(key, value);
        }
    }

    let show_progress = match cli.progress {
        ProgressMode::Always => true,
        ProgressMode::Never => false,
        ProgressMode::Auto => std::io::stderr().is_terminal(),
    };
    let progress =
        show_progress.then(|| Progress::start(format!("{server}/{tool}"), stderr_color()));
    let mut options = RequestOptions::default();
    if let Some(p) = &progress {
        let p = p.clone();
        options.on_progress = Some(Arc::new(move |params| p.update(params)));
    }
    let result = registry.call_tool_with(&server, &tool, Some(arguments), options).await;
    if let Some(p) = &progress {
        p.finish();
    }
    let result = result.map_err(Failure::registry)?;
    let rendered = mcp_proto::render_tool_result(&result);
    match cli.output {
        Output::Json => emit(&rendered.raw.to_string()),
        Output::Text => {
            let pretty = rendered
                .structured_content
                .as_ref()
                .map(|v| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
            match (result.content.is_empty(), pretty) {
                // No blocks: the text is the structured content, compact.
                (true, Some(pretty)) => emit(&pretty),
                (false, Some(pretty)) => {
                    emit(&rendered.text);
                    emit("");
                    emit("structuredContent:");
                    emit(&pretty);
                }
                (_, None) => emit(&rendered.text),
            }
        }
    }
    Ok(if rendered.is_error { EXIT_TOOL_ERROR } else { 0 })
}

/// A `key=value` value as the tool's schema wants it: a string property
/// takes the text as is; a number, integer, boolean, array or object
/// property takes JSON; without a schema, JSON when it parses, else text.
fn coerce(key: &str, value: &str, property: Option<&Value>) -> Result<Value, String> {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"string") {
        return Ok(Value::String(value.to_owned()));
    }
    match serde_json::from_str::<Value>(value) {
        Ok(parsed) if types.is_empty() || types.iter().any(|t| json_type_matches(t, &parsed)) => {
            Ok(parsed)
        }
        _ if types.is_empty() => Ok(Value::String(value.to_owned())),
        _ => Err(format!("argument {key:?} must be {} (got {value:?})", types.join(" or "))),
    }
}

fn json_type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coercion_follows_the_schema() {
        let s = |t: Value| json!({ "type": t });
        let cases: Vec<(&str, Option<Value>, Result<Value, ()>)> = vec![
            ("hi", Some(s(json!("string"))), Ok(json!("hi"))),
            ("123", Some(s(json!("string"))), Ok(json!("123"))),
            ("2.5", Some(s(json!("number"))), Ok(json!(2.5))),
            ("7", Some(s(json!("integer"))), Ok(json!(7))),
            ("7.5", Some(s(json!("integer"))), Err(())),
            ("x", Some(s(json!("number"))), Err(())),
            ("true", Some(s(json!("boolean"))), Ok(json!(true))),
            ("[1,2]", Some(s(json!("array"))), Ok(json!([1, 2]))),
            ("{\"a\":1}", Some(s(json!("object"))), Ok(json!({"a": 1}))),
            ("5", Some(s(json!(["string", "null"]))), Ok(json!("5"))),
            ("5", None, Ok(json!(5))),
            ("hello", None, Ok(json!("hello"))),
            ("null", None, Ok(Value::Null)),
        ];
        for (input, property, expected) in cases {
            let got = coerce("k", input, property.as_ref()).map_err(|_| ());
            assert_eq!(got, expected, "{input} with {property:?}");
        }
    }
}
