//! The servers `mcpc` talks to, from the command line and the
//! configuration: `--server SPEC`, else a configuration file, else the demo
//! server it embeds; with the command line's settings applied (timeouts,
//! `-e`, `--cwd`, roots, the host's handlers, tokens and pins).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_auth::TokenStore;
use mcp_client_stdio::ServerCommand;
use mcp_host_registry::{
    Approver, AuditLog, AuthConfig, ClientIdentity, Config, DefaultConnector, FileApprovalStore,
    FileConsentStore, FilePinStore, LoadOptions, ManagedPolicy, Registry, RegistryOptions,
    ServerConfig, SpillDir, Supervision, TokenStoreConfig, TransportConfig, TrustOptions,
    TrustSettings, Warning, parse_server_spec,
};
use mcp_proto::client::Handlers;
use mcp_proto::types::LoggingLevel;

use crate::cli::{DEMO_SERVER, Global};
use crate::failure::{self, Failure, Kind};
use crate::host;

/// The name of the server given with `--server`.
const SPEC_SERVER: &str = "server";
/// The name of the embedded demo server.
const DEMO: &str = "demo";

/// The application name tokens are kept under (its data directory, its
/// keychain service).
pub(crate) const APP: &str = "mcpc";

/// The token store settings of this run's configuration.
static TOKEN_SETTINGS: OnceLock<TokenStoreConfig> = OnceLock::new();
/// The token store this run opened from them.
static TOKEN_STORE: OnceLock<Arc<dyn TokenStore>> = OnceLock::new();

/// Where `mcpc` keeps OAuth tokens: the store the configuration chose
/// (`mcp_client.token_store`) once it is opened, else files in its data
/// directory (memory for this run without a home).
pub(crate) fn token_store() -> Arc<dyn TokenStore> {
    match TOKEN_STORE.get() {
        Some(store) => store.clone(),
        None => TokenStoreConfig::file_store(APP),
    }
}

/// The token store settings of this run's configuration (the defaults
/// before one is loaded, or without one).
pub(crate) fn token_store_config() -> TokenStoreConfig {
    TOKEN_SETTINGS.get().cloned().unwrap_or_default()
}

/// Opens the store `settings` ask for, once per run: `keychain` fails when
/// the keychain cannot be used, `auto` falls back to the files with a
/// warning that says why.
fn open_token_store(settings: &TokenStoreConfig) -> Result<Arc<dyn TokenStore>, Failure> {
    if let Some(store) = TOKEN_STORE.get() {
        return Ok(store.clone());
    }
    let chosen = settings.open(APP).map_err(|e| {
        Failure::new(
            Kind::Auth,
            format!(
                "{e} (mcp_client.token_store = \"{}\"; with \"auto\" the token files are used instead)",
                settings.kind
            ),
        )
    })?;
    Ok(TOKEN_STORE.get_or_init(|| chosen.store).clone())
}

/// The registry a run uses, and what was found while building it.
pub(crate) struct Setup {
    /// The servers.
    pub(crate) registry: Registry,
    /// Warnings about the configuration, to show before anything else.
    pub(crate) warnings: Vec<Warning>,
    /// Whether tool pins outlive this run (kept beside a configuration
    /// file): without that every tool is new on every run, which is not
    /// worth showing.
    pub(crate) pins_kept: bool,
}

/// Who answers the servers' requests and asks for call approvals when it
/// is not the terminal: `mcpc serve` passes its host's side, and its
/// servers are supervised (restarted when they crash).
pub(crate) struct HostSide {
    /// The answers to roots, sampling and elicitation requests.
    pub(crate) handlers: Handlers,
    /// Asks for the calls the approval policy marks `ask`.
    pub(crate) approver: Arc<dyn Approver>,
    /// Whether each stdio server's stdout is read on a thread of its own
    /// (`DefaultConnector::stdio_reader_thread`): for a host on stdio,
    /// whose forwarded calls' answers are written to it from where they
    /// are read. An answer for a host over HTTP wakes that host's task
    /// instead, which the runtime's own reader does more cheaply.
    pub(crate) stdio_reader_thread: bool,
}

/// Where the login shell's PATH is kept between runs, so a start with a
/// command server runs no login shell while the cached PATH is fresh (a
/// day, and no shell startup file changed): `login-shell-path` in mcpc's
/// cache directory; none with `MCPC_NO_PATH_CACHE` set (non-empty).
fn path_cache() -> Option<mcp_client_stdio::ProbeCache> {
    if std::env::var_os("MCPC_NO_PATH_CACHE").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    mcp_client_stdio::ProbeCache::default_for("mcpc")
}

/// The servers: `--server`, else a configuration file, else the demo
/// (with `login`, `--timeout` bounds the login, not the servers' requests);
/// with the command-line settings applied (timeout, `-e`, `--cwd`), and
/// the terminal's side of the protocol unless `host` takes its place.
pub(crate) fn build_registry(
    g: &Global,
    login: bool,
    account: Option<&str>,
    host: Option<HostSide>,
) -> Result<Setup, Failure> {
    let identity = ClientIdentity::new("mcpc", env!("CARGO_PKG_VERSION"));
    let mut inner = DefaultConnector::default();
    inner.host_name = "mcpc".into();
    inner.path_cache = path_cache();
    let env = parse_env(&g.env)?;
    // Tool pins live beside a configuration file; a server given on the
    // command line (or the demo) is pinned for this run only.
    let mut pins = None;
    let mut trust = trust_options(g)?;
    let (mut config, warnings) = if let Some(spec) = &g.server {
        if g.config.is_some() {
            return Err(Failure::usage("give --config or --server, not both"));
        }
        (spec_config(spec, &g.headers, identity)?, Vec::new())
    } else if !g.headers.is_empty() {
        return Err(Failure::usage(
            "-H is for a server given with --server URL; put headers of configured servers in the configuration",
        ));
    } else if let Some((path, origin)) = crate::consent::locate(g.config.as_deref())? {
        let options =
            LoadOptions { strict: g.strict, client_identity: identity, ..Default::default() };
        // A project's configuration runs nothing until approved, and asks
        // for its inputs only once approved (it is reviewed with them as
        // references).
        let loaded = if origin.needs_consent() {
            let reviewed =
                crate::consent::load(g, &path, origin, &crate::inputs::unexpanded(&options))?;
            if crate::inputs::refers_to_inputs(&reviewed.config) {
                let (asking, answers) = crate::inputs::asking_kept(&options);
                let loaded =
                    Config::load(&path, &asking).map_err(|e| Failure::new(Kind::Config, e))?;
                // Read twice: what runs must be what was approved.
                if !crate::inputs::runs_what_was_approved(
                    &reviewed.config,
                    &loaded.config,
                    &answers,
                ) {
                    return Err(Failure::new(
                        Kind::Untrusted,
                        format!(
                            "{} changed while it was read; run again to review it",
                            path.display()
                        ),
                    ));
                }
                loaded
            } else {
                reviewed
            }
        } else {
            crate::consent::load(g, &path, origin, &crate::inputs::asking(&options))?
        };
        // The call policy and the audit log kept in the same file.
        let audit_default =
            FileConsentStore::default_path("mcpc").map(|p| p.with_file_name("audit.jsonl"));
        let settings =
            TrustSettings::load(&path, audit_default).map_err(|e| Failure::new(Kind::Config, e))?;
        trust.call_policy = settings.call_policy;
        if let Some(audit) = settings.audit {
            let log = AuditLog::open(audit).map_err(|e| Failure::new(Kind::Config, e))?;
            trust.audit = Some(Arc::new(log));
        }
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
        (Config { client_identity: identity, servers: vec![demo], ..Config::default() }, Vec::new())
    };
    // No OAuth handler during normal commands: a server that needs a login
    // says so (with the command to run) instead of prompting mid-call.
    // The keychain is opened only when a server uses OAuth.
    let _ = TOKEN_SETTINGS.set(config.token_store.clone());
    inner.token_store = Some(if config.servers.iter().any(ServerConfig::uses_oauth) {
        open_token_store(&config.token_store)?
    } else {
        token_store()
    });
    let cwd = match &g.cwd {
        Some(dir) if !dir.is_dir() => {
            return Err(Failure::usage(format!("--cwd {}: no such directory", dir.display())));
        }
        Some(dir) => Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
        None => None,
    };
    for server in &mut config.servers {
        if let (Some(label), TransportConfig::Http { auth: AuthConfig::OAuth(oauth), .. }) =
            (account, &mut server.transport)
        {
            oauth.account = Some(label.to_owned());
        }
        if let Some(secs) = g.timeout.filter(|_| !login) {
            server.timeout = Duration::from_secs_f64(secs);
        }
        if let Some(pin) = g.protocol {
            server.protocol = pin.0;
        }
        if let Some(chars) = g.max_result {
            server.max_result_chars = Some(usize::try_from(chars).unwrap_or(usize::MAX));
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
    let supervised = host.is_some();
    match host {
        Some(side) => {
            inner.handlers = side.handlers;
            trust.approver = Some(side.approver);
            inner.stdio_reader_thread = side.stdio_reader_thread;
        }
        None => inner.handlers = host::handlers(&settings),
    }
    inner.stdio_shutdown_grace = Some(host::CLOSE_GRACE);
    inner.stdio_log_level = g.log_level.map(|l| LoggingLevel::from(l.as_str()));
    inner.apps = g.apps;
    // A stateless-era server may answer a call with a task: followed.
    inner.tasks = true;
    let mut options = RegistryOptions::with_connector(inner);
    if supervised {
        // Under `serve`: the servers' list changes are passed on to the
        // host, so a 2026-07-28 server is asked for them.
        options.supervision = Some(Supervision::default());
        options.listen_list_changes = true;
    }
    options.login_command = Some("mcpc login {server}".into());
    options.trust = trust;
    // A person reads these lists: tools meant only for an MCP App's view
    // are listed too (marked), and may be called.
    options.app_only_tools = true;
    // Where the whole of a result cut by `--max-result` (or a server's
    // `max_result_chars`) is kept.
    options.spill = SpillDir::default_for("mcpc");
    let pins_kept = pins.is_some();
    if let Some(store) = pins {
        options.pin_store = Arc::new(store);
    }
    Ok(Setup { registry: Registry::new(config, options), warnings, pins_kept })
}

/// Call approval: the managed policy (`$MCPC_MANAGED_POLICY`, else the
/// system's file), answers asked on the terminal (or `--yes`) and kept in
/// the user's state directory. The configuration's own policy is added
/// where it is read.
fn trust_options(g: &Global) -> Result<TrustOptions, Failure> {
    let mut trust = TrustOptions::default();
    if let Some(path) = managed_policy_path() {
        let managed = ManagedPolicy::load(&path).map_err(|e| Failure::new(Kind::Config, e))?;
        trust.managed = Arc::new(managed);
    }
    trust.approver = Some(Arc::new(crate::approve::TerminalApprover::new(g.yes)));
    if let Some(path) = FileApprovalStore::default_path("mcpc") {
        trust.approval_store = Arc::new(FileApprovalStore::new(path));
    }
    Ok(trust)
}

/// `$MCPC_MANAGED_POLICY`, else `/etc/mcpc/managed.toml`
/// (`%ProgramData%\mcpc\managed.toml` on Windows).
fn managed_policy_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCPC_MANAGED_POLICY").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    if cfg!(windows) {
        let data = std::env::var_os("ProgramData").filter(|v| !v.is_empty())?;
        return Some(PathBuf::from(data).join("mcpc").join("managed.toml"));
    }
    Some(PathBuf::from("/etc/mcpc/managed.toml"))
}

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
    Ok(Config { client_identity: identity, servers: vec![server], ..Config::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::EXIT_USAGE;

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
