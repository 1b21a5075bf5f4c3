//! The stdio transport's error type.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

use mcp_proto::ErrorObject;
use mcp_proto::client::ClientError;

/// How the server process ended, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit status, when the process was reaped.
    pub status: Option<ExitStatus>,
    /// The last bytes the server wrote to stderr (empty when stderr is not
    /// captured), lossily decoded.
    pub stderr_tail: String,
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "the server exited ({status})")?,
            None => f.write_str("the server closed its stdout")?,
        }
        let tail = self.stderr_tail.trim_end();
        if !tail.is_empty() {
            write!(f, "; its stderr ended with:\n{tail}")?;
        }
        Ok(())
    }
}

/// Why an operation on a stdio server failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The command could not be found; the message says what to install.
    CommandNotFound {
        /// The server's name.
        server: String,
        /// Why, with guidance for the user.
        source: mcp_spawn_env::ResolveError,
    },
    /// The process could not be started.
    Spawn {
        /// The server's name.
        server: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The server's name.
        server: String,
        /// The request's method.
        method: String,
        /// The error object.
        error: ErrorObject,
    },
    /// No answer in time (`notifications/cancelled` was sent).
    Timeout {
        /// The server's name.
        server: String,
        /// The request's method.
        method: String,
        /// How long the request waited.
        after: Duration,
    },
    /// The server process ended (or closed stdout) while the request waited,
    /// or before it was made.
    ServerExited {
        /// The server's name.
        server: String,
        /// The request's method.
        method: String,
        /// The exit status and the tail of stderr.
        exit: ExitInfo,
    },
    /// The server keeps dying: the restart limit was reached.
    RestartLimit {
        /// The server's name.
        server: String,
        /// How many restarts were made within the window.
        restarts: u32,
        /// How the server last ended.
        exit: ExitInfo,
    },
    /// The client was closed.
    Closed {
        /// The server's name.
        server: String,
    },
    /// The stream of a [`StreamTransport`](crate::StreamTransport) ended
    /// (the peer closed it, or reading it failed) while the request
    /// waited, or before it was made.
    StreamEnded {
        /// The server's name.
        server: String,
        /// The request's method.
        method: String,
    },
    /// Any other protocol failure (version negotiation, invalid results, ...).
    Protocol {
        /// The server's name.
        server: String,
        /// What went wrong.
        source: ClientError,
    },
    /// Writing to the server's stdin failed.
    Io {
        /// The server's name.
        server: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl Error {
    /// The server's name the error is about.
    pub fn server(&self) -> &str {
        match self {
            Error::CommandNotFound { server, .. }
            | Error::Spawn { server, .. }
            | Error::Rpc { server, .. }
            | Error::Timeout { server, .. }
            | Error::ServerExited { server, .. }
            | Error::RestartLimit { server, .. }
            | Error::Closed { server }
            | Error::StreamEnded { server, .. }
            | Error::Protocol { server, .. }
            | Error::Io { server, .. } => server,
        }
    }

    /// The JSON-RPC error object, when the server answered with one.
    pub fn rpc_error(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::CommandNotFound { server, source } => {
                write!(f, "MCP server {server:?}: {source}")
            }
            Error::Spawn { server, source } => {
                write!(f, "MCP server {server:?} could not be started: {source}")
            }
            Error::Rpc { server, method, error } => {
                write!(
                    f,
                    "MCP server {server:?}: {method} failed with error {}: {}",
                    error.code, error.message
                )
            }
            Error::Timeout { server, method, after } => {
                write!(
                    f,
                    "MCP server {server:?}: {method} timed out after {:.1}s",
                    after.as_secs_f64()
                )
            }
            Error::ServerExited { server, method, exit } => {
                write!(f, "MCP server {server:?}: {method} failed: {exit}")
            }
            Error::RestartLimit { server, restarts, exit } => {
                write!(
                    f,
                    "MCP server {server:?} was restarted {restarts} times and keeps failing; last: {exit}"
                )
            }
            Error::Closed { server } => write!(f, "MCP server {server:?}: the client is closed"),
            Error::StreamEnded { server, method } => {
                write!(f, "MCP server {server:?}: {method} failed: the stream to the server ended")
            }
            Error::Protocol { server, source } => write!(f, "MCP server {server:?}: {source}"),
            Error::Io { server, source } => {
                write!(f, "MCP server {server:?}: writing to its stdin failed: {source}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::CommandNotFound { source, .. } => Some(source),
            Error::Spawn { source, .. } | Error::Io { source, .. } => Some(source),
            Error::Protocol { source, .. } => Some(source),
            Error::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl mcp_peer::TransportError for Error {
    fn protocol_error(&self) -> Option<&mcp_proto::client::ClientError> {
        match self {
            Error::Protocol { source, .. } => Some(source),
            _ => None,
        }
    }
}
