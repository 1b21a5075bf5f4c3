//! What to spawn: the program, its arguments, the variables set for it and
//! its working directory. Plain data, shared by the crates that read a
//! server's command from a configuration (`mcp-registry`) and the one that
//! spawns it (`mcp-stdio`, which re-exports it).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The server process to start.
///
/// ```
/// use mcp_spawn_env::ServerCommand;
///
/// let command = ServerCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("LOG_LEVEL", "debug");
/// assert_eq!(command.args.len(), 2);
/// assert_eq!(command.cwd, None);
/// ```
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
