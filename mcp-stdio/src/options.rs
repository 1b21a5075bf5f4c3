//! What to spawn and how to talk to it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{EventCallback, Handlers};
use mcp_proto::types::{ClientCapabilities, Implementation};

/// The default maximum length of one line from the server (16 MiB).
pub const DEFAULT_MAX_LINE_LENGTH: usize = 16 * 1024 * 1024;
/// The default size of the kept stderr tail (64 KiB).
pub const DEFAULT_STDERR_TAIL: usize = 64 * 1024;
/// The variables a clean environment keeps from the host's (Unix).
pub const CLEAN_ENV_ALLOWLIST: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// The variables a clean environment keeps from the host's (Windows).
pub const CLEAN_ENV_ALLOWLIST_WINDOWS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "WINDIR",
];

/// The server process to start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program: a name searched on PATH, or a path (relative to `cwd`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, on top of the inherited (or clean) environment.
    /// A `PATH` here wins over the discovered one.
    pub env: BTreeMap<String, String>,
    /// Its working directory (the host's when `None`).
    pub cwd: Option<PathBuf>,
}

impl ServerCommand {
    /// A command with no arguments.
    pub fn new(command: impl Into<String>) -> Self {
        ServerCommand { command: command.into(), ..Default::default() }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
}

/// What happens to the server's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Read continuously, forwarded to `tracing` (target `mcp::stderr`) with
    /// the server's name, and the tail kept for error messages (default).
    #[default]
    Capture,
    /// Written to the host's own stderr.
    Inherit,
    /// Dropped.
    Discard,
}

/// The environment the server starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EnvMode {
    /// The host's whole environment (default).
    #[default]
    Inherit,
    /// Only [`CLEAN_ENV_ALLOWLIST`] (on Windows [`CLEAN_ENV_ALLOWLIST_WINDOWS`]).
    Clean,
}

/// Restarting a server that died, bounded so a crash loop gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// At most this many restarts...
    pub max_restarts: u32,
    /// ...within this window.
    pub window: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy { max_restarts: 3, window: Duration::from_secs(60) }
    }
}

/// How the client runs one stdio server.
#[derive(Clone)]
pub struct StdioOptions {
    /// The server's name, in logs and errors.
    pub name: String,
    /// `clientInfo` sent in `initialize`.
    pub client_info: Implementation,
    /// The host's name, in the guidance shown when the command is missing.
    pub host_name: String,
    /// The default request timeout (30 s).
    pub request_timeout: Duration,
    /// The longest line accepted from the server (16 MiB).
    pub max_line_length: usize,
    /// What happens to stderr.
    pub stderr: StderrMode,
    /// How many bytes of stderr to keep for error messages (64 KiB).
    pub stderr_tail: usize,
    /// The environment the server starts with.
    pub env: EnvMode,
    /// Whether PATH is rebuilt with `mcp-spawn-env` (the login shell's PATH
    /// and the usual tool directories; default true). Otherwise the host's
    /// PATH is used.
    pub discover_path: bool,
    /// How long each shutdown stage waits: after closing stdin, after SIGTERM (2 s).
    pub shutdown_grace: Duration,
    /// Whether a server that died is started again on the next call (off).
    pub restart: Option<RestartPolicy>,
    /// The host's answers to server requests; they decide the declared capabilities.
    pub handlers: Handlers,
    /// Capabilities declared beyond the handlers' (`tasks`, `experimental`,
    /// `roots.listChanged`): see [`mcp_peer::ClientOptions::capabilities`].
    pub capabilities: ClientCapabilities,
    /// The protocol version offered.
    pub protocol_version: ProtocolVersion,
    /// The protocol versions accepted.
    pub supported_versions: Vec<ProtocolVersion>,
    /// Hears list changes, log messages and other notifications.
    pub on_event: Option<EventCallback>,
}

impl StdioOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        StdioOptions {
            name: name.into(),
            client_info: Implementation::new("mcp-stdio", env!("CARGO_PKG_VERSION")),
            host_name: "this application".into(),
            request_timeout: mcp_proto::client::DEFAULT_REQUEST_TIMEOUT,
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            stderr: StderrMode::default(),
            stderr_tail: DEFAULT_STDERR_TAIL,
            env: EnvMode::default(),
            discover_path: true,
            shutdown_grace: Duration::from_secs(2),
            restart: None,
            handlers: Handlers::default(),
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST,
            supported_versions: ProtocolVersion::SUPPORTED.to_vec(),
            on_event: None,
        }
    }
}

impl StdioOptions {
    /// The session's share of these options, for [`mcp_peer::Client::new`].
    pub fn client_options(&self) -> mcp_peer::ClientOptions {
        let mut o = mcp_peer::ClientOptions::new(self.name.clone());
        o.client_info = self.client_info.clone();
        o.handlers = self.handlers.clone();
        o.capabilities = self.capabilities.clone();
        o.on_event = self.on_event.clone();
        o.protocol_version = self.protocol_version;
        o.supported_versions = self.supported_versions.clone();
        o.request_timeout = self.request_timeout;
        o
    }
}

impl fmt::Debug for StdioOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioOptions")
            .field("name", &self.name)
            .field("client_info", &self.client_info)
            .field("request_timeout", &self.request_timeout)
            .field("max_line_length", &self.max_line_length)
            .field("stderr", &self.stderr)
            .field("env", &self.env)
            .field("discover_path", &self.discover_path)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("restart", &self.restart)
            .field("handlers", &self.handlers)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}
