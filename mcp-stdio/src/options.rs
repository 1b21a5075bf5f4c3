//! What to spawn and how to talk to it.

use std::fmt;
use std::time::Duration;

use mcp_peer::ClientOptions;
use mcp_proto::types::Implementation;

/// What to spawn (defined in `mcp-spawn-env`, so a configuration reader can
/// build one without this crate).
pub use mcp_spawn_env::ServerCommand;

/// Where the login shell's PATH is kept between runs (defined in
/// `mcp-spawn-env`; see [`StdioOptions::path_cache`]).
pub use mcp_spawn_env::ProbeCache;

/// The default maximum length of one line from the server (16 MiB).
pub const DEFAULT_MAX_LINE_LENGTH: usize = 16 * 1024 * 1024;
/// The default size of the kept stderr tail (64 KiB).
pub const DEFAULT_STDERR_TAIL: usize = 64 * 1024;
/// How long the reader polls for the next message before it parks, by
/// default (50 µs; see [`StdioOptions::reply_spin`]).
pub const DEFAULT_REPLY_SPIN: Duration = Duration::from_micros(50);
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
    /// What every transport's client shares: the server's name, `clientInfo`,
    /// the request timeout, the host's handlers and declared capabilities,
    /// the notification callback, the protocol versions. Its fields are
    /// reached through `Deref` (`options.request_timeout = ...`).
    pub client: ClientOptions,
    /// The host's name, in the guidance shown when the command is missing.
    pub host_name: String,
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
    /// With `discover_path`, a file that keeps the login shell's PATH
    /// between runs of the host ([`ProbeCache`]; `None`, the default: the
    /// shell is probed once per process). A host that starts often (a
    /// command-line tool) sets it, so its later starts run no shell.
    pub path_cache: Option<ProbeCache>,
    /// How long each shutdown stage waits: after closing stdin, after SIGTERM (2 s).
    pub shutdown_grace: Duration,
    /// Whether a server that died is started again on the next call (off).
    pub restart: Option<RestartPolicy>,
    /// How long the reader keeps polling the server's stdout, yielding
    /// the thread between looks, after it handed over a message, before it
    /// parks, when the client awaits an answer (otherwise it parks at once) ([`DEFAULT_REPLY_SPIN`]; zero: it parks at once). Where the
    /// client and the server run on different CPUs and an idle CPU halts
    /// at once (a VM without guest halt polling), this saves one of the
    /// two slow wake-ups of a round trip. It turns itself off for the next
    /// 64 messages when it did not pay (the answer was already there, or
    /// twice in a row did not come in time), so it costs at most twice
    /// this much CPU per 64 messages then, and no more than a parked wait
    /// while it pays. Where the reader's thread may run on one CPU only
    /// (the process pinned to one CPU, read the first time the reader would
    /// poll; a one-CPU machine or quota), it parks at once whatever this
    /// says: the server could answer only once the reader gave up the CPU.
    pub reply_spin: Duration,
    /// Whether the server's stdout is read on a thread of its own
    /// (`mcp-stdio-reader`) that blocks in `read` and hands each line to
    /// the client from there (off). A message then costs that thread's
    /// `read` and no turn of the async runtime: an answer consumed where it
    /// is read (a forwarded call's sink,
    /// [`Client::forward_tool_call`](mcp_peer::Client::forward_tool_call))
    /// goes out with no wake-up of the runtime at all. An answer a task
    /// awaits wakes that task across threads instead, which costs an
    /// ordinary client on a current-thread runtime more than the runtime's
    /// own reader: keep it off unless the answers are mostly consumed on
    /// the reader (a bridge). [`reply_spin`](Self::reply_spin) does not
    /// apply (a blocking read wakes only when data comes).
    ///
    /// The thread enters the runtime the connection was started on, so
    /// what the client does on a message (spawning a handler for a
    /// server's request, waking a task) works as on the runtime's reader.
    /// The exit watch stays a task: when the server exited and its stdout
    /// stays open past the sweep of its process group (a process outside
    /// the group holds it), the connection is given up as with the
    /// runtime's reader, the thread is told to deliver nothing more, and
    /// it leaves when that holder closes the pipe. A thread never hands a
    /// line to a later connection (after a restart) or to a closed client.
    pub reader_thread: bool,
}

impl StdioOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let mut client = ClientOptions::new(name);
        client.client_info = Implementation::new("mcp-stdio", env!("CARGO_PKG_VERSION"));
        StdioOptions {
            client,
            host_name: "this application".into(),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            stderr: StderrMode::default(),
            stderr_tail: DEFAULT_STDERR_TAIL,
            env: EnvMode::default(),
            discover_path: true,
            path_cache: None,
            shutdown_grace: Duration::from_secs(2),
            restart: None,
            reply_spin: DEFAULT_REPLY_SPIN,
            reader_thread: false,
        }
    }
}

impl StdioOptions {
    /// The session's share of these options, for [`mcp_peer::Client::new`].
    pub fn client_options(&self) -> ClientOptions {
        self.client.clone()
    }
}

impl std::ops::Deref for StdioOptions {
    type Target = ClientOptions;

    fn deref(&self) -> &ClientOptions {
        &self.client
    }
}

impl std::ops::DerefMut for StdioOptions {
    fn deref_mut(&mut self) -> &mut ClientOptions {
        &mut self.client
    }
}

impl fmt::Debug for StdioOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioOptions")
            .field("client", &self.client)
            .field("max_line_length", &self.max_line_length)
            .field("stderr", &self.stderr)
            .field("env", &self.env)
            .field("discover_path", &self.discover_path)
            .field("path_cache", &self.path_cache)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("restart", &self.restart)
            .field("reply_spin", &self.reply_spin)
            .field("reader_thread", &self.reader_thread)
            .finish_non_exhaustive()
    }
}

/// What a transport keeps of its [`StdioOptions`]: the client's share
/// ([`StdioOptions::client`]) stays with the [`Client`](mcp_peer::Client),
/// but for the server's name and the request timeout, and what only the
/// first spawn needs (PATH discovery, the host's name) is dropped.
/// (Keeping the whole options cost every client about 1 KiB, and a second
/// copy of the client's strings.)
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) name: String,
    pub(crate) request_timeout: Duration,
    pub(crate) max_line_length: usize,
    pub(crate) stderr: StderrMode,
    pub(crate) stderr_tail: usize,
    pub(crate) env: EnvMode,
    pub(crate) shutdown_grace: Duration,
    pub(crate) restart: Option<RestartPolicy>,
    pub(crate) reply_spin: Duration,
    pub(crate) reader_thread: bool,
}

impl From<StdioOptions> for Settings {
    fn from(options: StdioOptions) -> Settings {
        Settings {
            name: options.client.name,
            request_timeout: options.client.request_timeout,
            max_line_length: options.max_line_length,
            stderr: options.stderr,
            stderr_tail: options.stderr_tail,
            env: options.env,
            shutdown_grace: options.shutdown_grace,
            restart: options.restart,
            reply_spin: options.reply_spin,
            reader_thread: options.reader_thread,
        }
    }
}
