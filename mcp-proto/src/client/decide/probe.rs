//! The era probe: `server/discover`, asked at most [`MAX_PROBES`] times.
//!
//! [`ProbeState`] says which version to ask for
//! ([`version`](ProbeState::version)); the driver sends the probe and
//! hands in what came back ([`handle_answer`](ProbeState::handle_answer),
//! or [`handle_discovery`](ProbeState::handle_discovery) with the usual
//! answer's discovery decoded straight from the message
//! ([`usual_discovery`]), or [`handle_failure`](ProbeState::handle_failure)); the
//! [`ProbeStep`] says what follows:
//! - a discovery: the stateless era, with the newest version both sides
//!   list ([`select_version`]); a dual-era server listing only
//!   handshake-era versions both speak gets `initialize`; no version in
//!   common fails the connection;
//! - `-32022` naming versions: once more with the one both speak (even the
//!   same one: a server may refuse a first request), while it changes;
//! - another error only a stateless-era server sends (`-32020`, `-32021`):
//!   it will not serve this client;
//! - any other JSON-RPC error, an answer that is no discovery, a refusal,
//!   or silence until the probe's timeout: a handshake-era server (unless
//!   the era is pinned: then the stateless era is spoken anyway);
//! - anything else (the connection closed, ...): the probe's failure is
//!   the connection's.

use super::{Failure, Origin};
use crate::client::ClientError;
use crate::jsonrpc::{ErrorObject, error_code};
use crate::methods;
use crate::types::DiscoverResult;
use crate::version::{ProtocolVersion, select_version};

/// The most `server/discover` requests one probe sends.
pub const MAX_PROBES: u32 = 3;

/// The discovery in `result`, the result's text of the usual answer to
/// the probe ([`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer)),
/// decoded once, straight from the message, for
/// [`ProbeState::handle_discovery`]. `None` when it does not decode as a
/// [`DiscoverResult`]: the general decoding then decides about the text as
/// about any other ([`jsonrpc::decode_slice_as`](crate::jsonrpc::decode_slice_as),
/// then [`ProbeState::handle_answer`]). A result that decodes was one JSON
/// value, so the message was a valid answer, and the step is the general
/// path's.
pub fn usual_discovery(result: &str) -> Option<DiscoverResult> {
    // The usual shape by a scan, anything else by serde_json.
    crate::client::core::usual_init::usual_discover_result(result)
        .or_else(|| serde_json::from_str(result).ok())
}

/// What follows a probe's answer or failure.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProbeStep {
    /// Speak the stateless era in `version`, with the server's discovery
    /// when there was one.
    Enter {
        /// The version to speak.
        version: ProtocolVersion,
        /// The server's answer to `server/discover`.
        discovered: Option<Box<DiscoverResult>>,
    },
    /// A handshake-era server: send `initialize`.
    Legacy,
    /// Probe again, asking for this version.
    Retry(ProtocolVersion),
    /// The connection fails with this error (one a new handshake cannot
    /// mend when [`ClientError::is_fatal_handshake`]).
    Fail(ClientError),
    /// The connection fails with the probe's failure as it came.
    FailAsItCame,
}

/// The era probe of one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeState {
    supported: Vec<ProtocolVersion>,
    pinned: bool,
    version: ProtocolVersion,
    tries: u32,
}

impl ProbeState {
    /// A probe asking first for `preferred` when it is of the stateless
    /// era, else for the newest stateless-era version in `supported` (the
    /// latest when there is none). `pinned`: the stateless era is pinned
    /// (never fall back to `initialize`).
    pub fn new(preferred: ProtocolVersion, supported: &[ProtocolVersion], pinned: bool) -> Self {
        let version = if preferred.is_modern() {
            preferred
        } else {
            supported
                .iter()
                .copied()
                .filter(|v| v.is_modern())
                .max()
                .unwrap_or(ProtocolVersion::LATEST)
        };
        ProbeState { supported: supported.to_vec(), pinned, version, tries: 1 }
    }

    /// The version the next (or current) probe asks for.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// How many probes were sent, counting the current one.
    pub fn tries(&self) -> u32 {
        self.tries
    }

    /// The versions the probe may settle on: every accepted version, or
    /// only the stateless era's when it is pinned.
    pub fn client_versions(&self) -> Vec<ProtocolVersion> {
        self.supported.iter().copied().filter(|v| !self.pinned || v.is_modern()).collect()
    }

    /// The probe was answered with `raw` (a result's JSON text).
    pub fn handle_answer(&mut self, raw: &str) -> ProbeStep {
        match serde_json::from_str::<DiscoverResult>(raw) {
            Ok(discovered) => self.handle_discovery(discovered),
            Err(e) if self.pinned => ProbeStep::Fail(ClientError::InvalidResult {
                method: methods::SERVER_DISCOVER.into(),
                reason: e.to_string(),
            }),
            Err(e) => {
                tracing::debug!(error = %e, "the server/discover answer is no discovery: a handshake-era server");
                ProbeStep::Legacy
            }
        }
    }

    /// The probe was answered with a discovery the driver decoded itself,
    /// straight from the message ([`usual_discovery`]): the step
    /// [`handle_answer`](Self::handle_answer) takes on its text.
    pub fn handle_discovery(&mut self, discovered: DiscoverResult) -> ProbeStep {
        match select_version(&discovered.supported_versions, &self.supported, !self.pinned) {
            Some(v) if v.is_modern() => {
                ProbeStep::Enter { version: v, discovered: Some(Box::new(discovered)) }
            }
            Some(_) => ProbeStep::Legacy,
            None => ProbeStep::Fail(ClientError::UnsupportedProtocolVersion {
                method: methods::SERVER_DISCOVER.into(),
                supported: discovered.supported_versions,
                requested: self.version.as_str().into(),
                client_versions: self.client_versions().into(),
                error: Box::new(ErrorObject::new(
                    error_code::UNSUPPORTED_PROTOCOL_VERSION,
                    "no protocol version in common",
                )),
            }),
        }
    }

    /// The probe failed.
    pub fn handle_failure(&mut self, failure: Failure<'_>) -> ProbeStep {
        if let Some(ClientError::UnsupportedProtocolVersion { supported: listed, .. }) =
            failure.error
        {
            match select_version(listed, &self.supported, !self.pinned) {
                Some(v)
                    if v.is_modern()
                        && (v != self.version || self.tries == 1)
                        && self.tries < MAX_PROBES =>
                {
                    self.version = v;
                    self.tries += 1;
                    return ProbeStep::Retry(v);
                }
                Some(v) if !v.is_modern() => return ProbeStep::Legacy,
                _ => {}
            }
        }
        if let Some(e) = failure.error.filter(|e| e.is_modern_error()) {
            // A stateless-era server that will not serve this client.
            return match (e, failure.origin) {
                (ClientError::UnsupportedProtocolVersion { .. }, _) | (_, Origin::Core) => {
                    ProbeStep::Fail(
                        e.clone().with_client_versions(&self.client_versions(), Some(self.version)),
                    )
                }
                _ => ProbeStep::FailAsItCame,
            };
        }
        let legacy_sign = match failure.origin {
            Origin::Core => matches!(
                failure.error,
                Some(
                    ClientError::Rpc { .. }
                        | ClientError::Timeout { .. }
                        | ClientError::InvalidResult { .. }
                )
            ),
            Origin::Transport(facts) => {
                facts.refusal || failure.error.is_some_and(|e| e.rpc_error().is_some())
            }
        };
        if !legacy_sign {
            return ProbeStep::FailAsItCame;
        }
        if self.pinned {
            // No discovery, but the era is pinned: speak it and let each
            // request find out.
            tracing::debug!("server/discover failed; speaking the stateless era as pinned");
            return ProbeStep::Enter { version: self.version, discovered: None };
        }
        tracing::debug!("the era probe found a handshake-era server");
        ProbeStep::Legacy
    }
}
