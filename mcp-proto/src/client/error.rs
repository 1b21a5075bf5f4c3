//! The client core's error type.

use std::fmt;
use std::time::Duration;

use crate::jsonrpc::ErrorObject;
use crate::version::{ProtocolVersion, UnsupportedVersion};

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
    /// A request middleware refused the request (or panicked) before it
    /// was sent; nothing reached the server.
    Refused {
        /// The method of the request.
        method: String,
        /// Why.
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
    /// The server's answer arrived but had to be dropped (over a size
    /// limit, not valid JSON-RPC); its id could still be read, so the
    /// request fails with the reason instead of timing out.
    AnswerUnreadable {
        /// The method of the request.
        method: String,
        /// Why the answer was dropped.
        reason: String,
    },
    /// The method does not exist in the protocol revision the connection
    /// speaks (`ping`, `logging/setLevel`, `resources/subscribe`, ... in the
    /// stateless era).
    NotInEra {
        /// The method.
        method: String,
        /// The revision spoken.
        version: ProtocolVersion,
    },
    /// The server does not speak the requested protocol version
    /// (`-32022`), and no version both sides speak was left to try.
    UnsupportedProtocolVersion {
        /// The method of the request.
        method: String,
        /// The versions the server listed.
        supported: Vec<String>,
        /// The version the request asked for.
        requested: String,
        /// The versions this client would have spoken instead (empty when
        /// not known: the error as decoded, before the client added them
        /// with [`with_client_versions`](ClientError::with_client_versions)).
        client_versions: Box<[ProtocolVersion]>,
        /// The error as the server sent it.
        error: Box<ErrorObject>,
    },
    /// The server found the HTTP headers of a request unlike its body
    /// (`-32020`): a header the client derives (`Mcp-Name`,
    /// `Mcp-Param-*`, `MCP-Protocol-Version`) is missing or differs.
    HeaderMismatch {
        /// The method of the request.
        method: String,
        /// The error as the server sent it.
        error: Box<ErrorObject>,
    },
    /// The request needs a client capability that was not declared
    /// (`-32021`).
    MissingClientCapability {
        /// The method of the request.
        method: String,
        /// The capabilities the server requires
        /// (`data.requiredCapabilities`), as sent.
        required: Option<serde_json::Value>,
        /// The error as the server sent it.
        error: Box<ErrorObject>,
    },
    /// The server kept answering `input_required` beyond the configured
    /// number of rounds.
    TooManyInputRounds {
        /// The method of the request.
        method: String,
        /// How many rounds were made.
        rounds: usize,
    },
    /// An `input_required` result (or a task's status) held more input
    /// requests than one round may (refused before any was decoded or
    /// handed to a handler).
    TooManyInputRequests {
        /// The method of the request.
        method: String,
        /// How many the server sent.
        count: usize,
        /// How many one round may hold.
        max: usize,
    },
    /// The answers built for one round of input requests grew over the
    /// configured size (no more handlers were asked).
    InputAnswersTooLarge {
        /// The method of the request.
        method: String,
        /// The most bytes one round's answers may take.
        max_bytes: usize,
    },
    /// An input request of an `input_required` result could not be
    /// fulfilled (no handler for it, or the handler failed).
    InputRequestFailed {
        /// The method of the original request.
        method: String,
        /// The server's key of the input request.
        key: String,
        /// The input request's method (`elicitation/create`, ...).
        input_method: String,
        /// Why.
        error: Box<ErrorObject>,
    },
}

impl ClientError {
    /// The error for a JSON-RPC error the server answered `method` with:
    /// the codes the protocol defines (`-32020`, `-32021`, `-32022`)
    /// become their own variants, any other is [`ClientError::Rpc`].
    pub fn from_rpc(method: &str, error: ErrorObject) -> ClientError {
        use crate::jsonrpc::error_code as error_codes;
        let method = method.to_owned();
        match error.code {
            error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let data: crate::types::UnsupportedProtocolVersionData = error
                    .data
                    .clone()
                    .and_then(|d| serde_json::from_value(d).ok())
                    .unwrap_or_default();
                ClientError::UnsupportedProtocolVersion {
                    method,
                    supported: data.supported,
                    requested: data.requested,
                    client_versions: Box::default(),
                    error: Box::new(error),
                }
            }
            error_codes::HEADER_MISMATCH => {
                ClientError::HeaderMismatch { method, error: Box::new(error) }
            }
            error_codes::MISSING_CLIENT_CAPABILITY => {
                let required =
                    error.data.as_ref().and_then(|d| d.get("requiredCapabilities")).cloned();
                ClientError::MissingClientCapability { method, required, error: Box::new(error) }
            }
            _ => ClientError::Rpc { method, error },
        }
    }

    /// An [`UnsupportedProtocolVersion`](ClientError::UnsupportedProtocolVersion)
    /// error with the versions this client speaks added (and the version
    /// it asked for, when the server's error did not say); any other
    /// error unchanged.
    pub fn with_client_versions(
        self,
        versions: &[ProtocolVersion],
        asked: Option<ProtocolVersion>,
    ) -> ClientError {
        match self {
            ClientError::UnsupportedProtocolVersion {
                method, supported, requested, error, ..
            } => {
                let requested = match asked {
                    Some(asked) if requested.is_empty() => asked.as_str().to_owned(),
                    _ => requested,
                };
                ClientError::UnsupportedProtocolVersion {
                    method,
                    supported,
                    requested,
                    client_versions: versions.into(),
                    error,
                }
            }
            other => other,
        }
    }

    /// The JSON-RPC error object, when the server answered with one.
    pub fn rpc_error(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc { error, .. } => Some(error),
            ClientError::UnsupportedProtocolVersion { error, .. }
            | ClientError::HeaderMismatch { error, .. }
            | ClientError::MissingClientCapability { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the server answered with an error only a stateless-era
    /// server sends (`-32020`, `-32021`, `-32022`): proof that it speaks
    /// the modern era, whatever else went wrong.
    pub fn is_modern_error(&self) -> bool {
        matches!(
            self,
            ClientError::UnsupportedProtocolVersion { .. }
                | ClientError::HeaderMismatch { .. }
                | ClientError::MissingClientCapability { .. }
        )
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
                | ClientError::UnsupportedProtocolVersion { .. }
                | ClientError::HeaderMismatch { .. }
                | ClientError::MissingClientCapability { .. }
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
            ClientError::Refused { method, reason } => {
                write!(f, "{method} was refused before it was sent: {reason}")
            }
            ClientError::UnknownTool { name } => {
                write!(f, "the server does not list a tool named {name:?}")
            }
            ClientError::AnswerUnreadable { method, reason } => {
                write!(f, "{method} failed: the server's answer could not be read: {reason}")
            }
            ClientError::NotInEra { method, version } => {
                write!(f, "{method} does not exist in protocol revision {version}")
            }
            ClientError::UnsupportedProtocolVersion {
                method,
                supported,
                requested,
                client_versions,
                ..
            } => {
                write!(f, "{method} failed: the server refused ")?;
                if requested.is_empty() {
                    f.write_str("the protocol version asked for")?;
                } else {
                    write!(f, "protocol version {requested:?}")?;
                }
                f.write_str(" (the server lists: ")?;
                list(f, supported.iter().map(String::as_str))?;
                if !client_versions.is_empty() {
                    f.write_str("; this client speaks: ")?;
                    list(f, client_versions.iter().map(|v| v.as_str()))?;
                    f.write_str("; in common: ")?;
                    let common = client_versions
                        .iter()
                        .map(|v| v.as_str())
                        .filter(|v| supported.iter().any(|s| s == v));
                    list(f, common)?;
                }
                f.write_str(")")
            }
            ClientError::HeaderMismatch { method, error } => write!(
                f,
                "{method} failed: the server found the request's headers unlike its body: {}",
                error.message
            ),
            ClientError::MissingClientCapability { method, required, .. } => {
                write!(
                    f,
                    "{method} failed: the server needs a client capability that was not declared"
                )?;
                if let Some(required) = required {
                    write!(f, " ({required})")?;
                }
                Ok(())
            }
            ClientError::TooManyInputRounds { method, rounds } => {
                write!(f, "{method} failed: the server still asked for input after {rounds} rounds")
            }
            ClientError::TooManyInputRequests { method, count, max } => write!(
                f,
                "{method} failed: the server asked for {count} inputs in one round, more than the {max} allowed"
            ),
            ClientError::InputAnswersTooLarge { method, max_bytes } => write!(
                f,
                "{method} failed: the answers to the server's input requests grew over {max_bytes} bytes"
            ),
            ClientError::InputRequestFailed { method, key, input_method, error } => write!(
                f,
                "{method} failed: the server's input request {key:?} ({input_method}) could not be fulfilled: {}",
                error.message
            ),
        }
    }
}

/// Writes `items` separated by commas, or `none`.
fn list<'a>(f: &mut fmt::Formatter<'_>, items: impl Iterator<Item = &'a str>) -> fmt::Result {
    let mut empty = true;
    for item in items {
        if !empty {
            f.write_str(", ")?;
        }
        f.write_str(item)?;
        empty = false;
    }
    if empty {
        f.write_str("none")?;
    }
    Ok(())
}

impl std::error::Error for ClientError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::error_code;

    fn refusal(supported: &[&str], requested: &str) -> ClientError {
        let data = serde_json::json!({"supported": supported, "requested": requested});
        let mut error = ErrorObject::new(error_code::UNSUPPORTED_PROTOCOL_VERSION, "unsupported");
        error.data = Some(data);
        ClientError::from_rpc("tools/list", error)
    }

    /// A `-32022` refusal: the server's list, what it says was requested,
    /// the client's versions, what the client asked for, and the message's
    /// text after "tools/list failed: the server refused ".
    type Case<'a> =
        (&'a [&'a str], &'a str, &'a [ProtocolVersion], Option<ProtocolVersion>, &'a str);

    #[test]
    fn unsupported_protocol_version_names_both_sides() {
        use ProtocolVersion as V;
        let cases: &[Case<'_>] = &[
            // Decoded as it came: only the server's side is known.
            (
                &["2026-07-28"],
                "2025-01-01",
                &[],
                None,
                "protocol version \"2025-01-01\" (the server lists: 2026-07-28)",
            ),
            (
                &[],
                "2026-07-28",
                &[],
                None,
                "protocol version \"2026-07-28\" (the server lists: none)",
            ),
            // Nothing in common.
            (
                &["2027-01-01", "2028-01-01"],
                "2026-07-28",
                &[V::V2026_07_28],
                None,
                "protocol version \"2026-07-28\" (the server lists: 2027-01-01, 2028-01-01; this client speaks: 2026-07-28; in common: none)",
            ),
            // A version both speak, refused anyway.
            (
                &["2026-07-28"],
                "2026-07-28",
                &[V::V2025_11_25, V::V2026_07_28],
                None,
                "protocol version \"2026-07-28\" (the server lists: 2026-07-28; this client speaks: 2025-11-25, 2026-07-28; in common: 2026-07-28)",
            ),
            // The server did not say what was asked: the client does.
            (
                &["2026-07-28"],
                "",
                &[V::V2026_07_28],
                Some(V::V2026_07_28),
                "protocol version \"2026-07-28\" (the server lists: 2026-07-28; this client speaks: 2026-07-28; in common: 2026-07-28)",
            ),
            // What the server said was asked is kept.
            (
                &[],
                "2020-01-01",
                &[V::V2026_07_28],
                Some(V::V2026_07_28),
                "protocol version \"2020-01-01\" (the server lists: none; this client speaks: 2026-07-28; in common: none)",
            ),
            // Neither says.
            (&[], "", &[], None, "the protocol version asked for (the server lists: none)"),
        ];
        for (supported, requested, ours, asked, expected) in cases {
            let e = refusal(supported, requested);
            let e = if ours.is_empty() { e } else { e.with_client_versions(ours, *asked) };
            assert_eq!(
                e.to_string(),
                format!("tools/list failed: the server refused {expected}"),
                "{supported:?} {requested:?} {ours:?}"
            );
        }
    }

    #[test]
    fn client_versions_are_added_only_to_version_refusals() {
        let timeout = ClientError::Timeout { method: "ping".into(), after: Duration::from_secs(1) };
        let same = timeout.clone().with_client_versions(&[ProtocolVersion::LATEST], None);
        assert_eq!(same, timeout);
        let refused = refusal(&[], "x").with_client_versions(&[ProtocolVersion::LATEST], None);
        let ClientError::UnsupportedProtocolVersion { client_versions, requested, .. } = refused
        else {
            panic!("{refused:?}")
        };
        assert_eq!((&*client_versions, requested.as_str()), (&[ProtocolVersion::LATEST][..], "x"));
    }
}
