//! Which era a connection opens in first.
//!
//! A host pins the era or leaves it to the probe ([`EraChoice`]). A server
//! remembered to speak the handshake era (the caller's era memory: over
//! HTTP, per origin) gets `initialize` at once; when that no longer holds
//! (its `initialize` is refused, or answered with an error only a
//! stateless-era server sends) the memory is dropped and the server
//! probed ([`probe_after_failed_handshake`]).

use super::Failure;
use crate::version::ProtocolVersion;

/// Which protocol era a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraChoice {
    /// Find out: probe with `server/discover` (the stateless era's request)
    /// and fall back to the `initialize` handshake when the answer is not
    /// one only a stateless-era server gives. A server found to speak the
    /// handshake era is remembered (by the client's era memory) and sent
    /// `initialize` at once next time (probed again if that fails).
    #[default]
    Auto,
    /// The handshake era only (`initialize`; 2024-11-05 to 2025-11-25).
    Legacy,
    /// The stateless era only (2026-07-28): no fallback to `initialize`.
    Modern,
}

/// How a connection opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenStep {
    /// `initialize`. With `probe_if_refused`, a refusal sends the probe
    /// next (see [`probe_after_failed_handshake`]).
    Handshake {
        /// Whether the era was only remembered, not pinned.
        probe_if_refused: bool,
    },
    /// The era probe (`server/discover`); a handshake-era server gets
    /// `initialize` after it.
    Probe,
}

/// How a connection opens: pinned to the handshake era, or a server
/// remembered to speak it, or a client that accepts no stateless-era
/// version: `initialize`; otherwise the probe.
pub fn first_step(
    choice: EraChoice,
    supported: &[ProtocolVersion],
    remembered_legacy: bool,
) -> OpenStep {
    let speaks_modern = supported.iter().any(|v| v.is_modern());
    match choice {
        EraChoice::Legacy => OpenStep::Handshake { probe_if_refused: false },
        EraChoice::Auto if remembered_legacy || !speaks_modern => {
            OpenStep::Handshake { probe_if_refused: remembered_legacy }
        }
        _ => OpenStep::Probe,
    }
}

/// Whether a failed `initialize` opened by `step` is followed by the probe
/// (and the memory of the server dropped): only when the era was
/// remembered, and the server refused the request or answered with an
/// error only a stateless-era server sends.
pub fn probe_after_failed_handshake(step: OpenStep, failure: Failure<'_>) -> bool {
    let OpenStep::Handshake { probe_if_refused: true } = step else { return false };
    failure.transport_facts().is_some_and(|f| f.refusal) || failure.is_modern_error()
}
