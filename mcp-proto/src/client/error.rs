//! The client core's error type.

use std::fmt;
use std::time::Duration;

use crate::jsonrpc::ErrorObject;
use crate::version::UnsupportedVersion;

/// Why a request made through the client core did not produce a result.
///
/// Transports wrap this in their own error type and add what only they know
/// (the server's name, the child's exit status, the HTTP status, ...).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The method of the request.
        method: String,
        /// The error the server sent.
        error: ErrorObject,
    },
    /// No answer arrived in time; `notifications/cancelled` was sent.
    Timeout {
        /// The method of the request.
        method: String,
        /// How long the request waited in all.
        after: Duration,
    },
    /// The caller cancelled the request; `notifications/cancelled` was sent.
    Cancelled {
        /// The method of the request.
        method: String,
    },
    /// The connection ended before the answer arrived.
    Closed {
        /// The method of the request.
        method: String,
    },
    /// The connection (a child process, an HTTP session) was lost while the
    /// request was out: the server may have acted on it, so it was not sent
    /// again.
    ConnectionLost {
        /// The method of the request.
        method: String,
    },
    /// The server chose a protocol version the client does not speak.
    UnsupportedVersion(UnsupportedVersion),
    /// A request other than `ping` was made before the handshake finished.
    NotInitialized {
        /// The method of the request.
        method: String,
    },
    /// `initialize` was called on a connection that already started it.
    AlreadyInitialized,
    /// The server's result does not have the shape the method's result must have.
    InvalidResult {
        /// The method of the request.
        method: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The parameters could not be encoded as a JSON object.
    InvalidParams {
        /// The method of the request.
        method: String,
        /// What was wrong with them.
        reason: String,
    },
    /// `tools/call` named a tool the server does not list.
    UnknownTool {
        /// The tool's name.
        name: String,
    },
}

impl ClientError {
    /// The JSON-RPC error object, when the server answered with one.
    pub fn rpc_error(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether this error, as the outcome of `initialize`, means the
    /// server cannot be spoken to on this connection at all (no common
    /// protocol version, an answer of the wrong shape, a JSON-RPC error):
    /// the client remembers it and fails later requests with it instead of
    /// trying the handshake again.
    pub fn is_fatal_handshake(&self) -> bool {
        matches!(
            self,
            ClientError::UnsupportedVersion(_)
                | ClientError::InvalidResult { .. }
                | ClientError::Rpc { .. }
        )
    }

    /// Whether this is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Rpc { method, error } => {
                write!(
                    f,
                    "{method} failed: the server answered error {}: {}",
                    error.code, error.message
                )
            }
            ClientError::Timeout { method, after } => {
                write!(f, "{method} timed out after {:.1}s", after.as_secs_f64())
            }
            ClientError::Cancelled { method } => write!(f, "{method} was cancelled"),
            ClientError::Closed { method } => {
                write!(f, "{method} failed: the connection closed before the answer arrived")
            }
            ClientError::ConnectionLost { method } => write!(
                f,
                "{method} failed: the connection was lost while it was out, and it is not safe to send again"
            ),
            ClientError::UnsupportedVersion(e) => e.fmt(f),
            ClientError::NotInitialized { method } => {
                write!(f, "{method} was sent before the initialize handshake finished")
            }
            ClientError::AlreadyInitialized => {
                f.write_str("initialize was already sent on this connection")
            }
            ClientError::InvalidResult { method, reason } => {
                write!(f, "{method} returned an invalid result: {reason}")
            }
            ClientError::InvalidParams { method, reason } => {
                write!(f, "{method} parameters are invalid: {reason}")
            }
            ClientError::UnknownTool { name } => {
                write!(f, "the server does not list a tool named {name:?}")
            }
        }
    }
}

impl std::error::Error for ClientError {}
