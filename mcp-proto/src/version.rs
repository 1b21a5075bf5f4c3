//! Protocol revisions and version negotiation.
//!
//! The revision is a value the rest of the toolkit carries: everything that
//! differs between revisions (which headers a transport sends, whether batches
//! may arrive) is asked of [`ProtocolVersion`], not spread through the code.

use std::fmt;
use std::str::FromStr;

/// A protocol revision this toolkit speaks.
///
/// Ordered by date, so `a < b` means `a` is the older revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the HTTP+SSE transport, no authorization spec.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, OAuth 2.1, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: no batches, `MCP-Protocol-Version` header, structured tool output.
    V2025_06_18,
    /// 2025-11-25: URL elicitation, tasks, icons, SSE polling. The last
    /// revision of the handshake era.
    V2025_11_25,
    /// 2026-07-28: the stateless (modern) era: no `initialize`, no session;
    /// every request carries its version, capabilities and `clientInfo` in
    /// `_meta`; `server/discover`; `input_required` results;
    /// `subscriptions/listen`.
    V2026_07_28,
}

/// The two eras of the protocol.
///
/// A server speaks one or both; a client finds out which by probing (see
/// `mcp_peer`), or a host pins it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2024-11-05 to 2025-11-25: an `initialize` handshake opens a session.
    Legacy,
    /// 2026-07-28 and later: no handshake; every request carries its own
    /// version, capabilities and identity in `_meta`.
    Modern,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

impl ProtocolVersion {
    /// Every revision this toolkit supports, oldest first.
    pub const SUPPORTED: &'static [ProtocolVersion] = &[
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest supported revision: what a client asks for first.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest revision of the handshake era: what `initialize` offers
    /// by default.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's date string, as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era the revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether the revision is of the stateless era (no `initialize`,
    /// per-request `_meta`).
    pub const fn is_modern(self) -> bool {
        matches!(self.era(), Era::Modern)
    }

    /// Parses a wire string; `None` for a revision this toolkit does not know.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::SUPPORTED.iter().copied().find(|v| v.as_str() == s)
    }

    /// Whether a peer of this revision may send JSON-RPC batches
    /// (only 2025-03-26 allowed them).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Whether HTTP requests after initialization carry the
    /// `MCP-Protocol-Version` header (2025-06-18 and later).
    pub const fn sends_protocol_version_header(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_06_18
                | ProtocolVersion::V2025_11_25
                | ProtocolVersion::V2026_07_28
        )
    }

    /// Whether the revision has sessions (`Mcp-Session-Id`, DELETE), the
    /// standalone GET stream and resumable SSE streams (`Last-Event-ID`):
    /// the handshake era's Streamable HTTP.
    pub const fn has_sessions(self) -> bool {
        !self.is_modern()
    }

    /// Whether the revision uses the Streamable HTTP transport (2025-03-26
    /// and later); 2024-11-05 uses HTTP+SSE.
    pub const fn uses_streamable_http(self) -> bool {
        !matches!(self, ProtocolVersion::V2024_11_05)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnsupportedVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::parse(s).ok_or_else(|| UnsupportedVersion {
            offered: s.to_owned(),
            supported: ProtocolVersion::SUPPORTED.to_vec(),
        })
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The server answered with a revision the client does not speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedVersion {
    /// What the server offered, verbatim.
    pub offered: String,
    /// What the client would have accepted.
    pub supported: Vec<ProtocolVersion>,
}

impl fmt::Display for UnsupportedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server chose protocol version {:?}, but this client supports only ",
            self.offered
        )?;
        for (i, v) in self.supported.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(v.as_str())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnsupportedVersion {}

/// Accepts the server's answer to `initialize` if it is one of `supported`.
///
/// The client offers the newest revision it speaks; the server answers with
/// that one or another it prefers. The connection may go on only when the
/// client speaks the answer too; otherwise the error names both sides. A
/// revision of the stateless era is never an answer to `initialize`.
pub fn negotiate(
    server_answer: &str,
    supported: &[ProtocolVersion],
) -> Result<ProtocolVersion, UnsupportedVersion> {
    supported.iter().copied().find(|v| !v.is_modern() && v.as_str() == server_answer).ok_or_else(
        || UnsupportedVersion {
            offered: server_answer.to_owned(),
            supported: supported.iter().copied().filter(|v| !v.is_modern()).collect(),
        },
    )
}

/// Picks the version to speak from a server's list (`supportedVersions` of
/// `server/discover`, or `supported` of an `UnsupportedProtocolVersion`
/// error): the newest the client speaks too, or `None`.
///
/// `allow_legacy` says whether a handshake-era revision may be chosen
/// (a dual-era server listing only handshake revisions is then spoken to
/// with `initialize`).
pub fn select_version(
    server_list: &[String],
    supported: &[ProtocolVersion],
    allow_legacy: bool,
) -> Option<ProtocolVersion> {
    supported
        .iter()
        .copied()
        .filter(|v| allow_legacy || v.is_modern())
        .filter(|v| server_list.iter().any(|s| s == v.as_str()))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_list_is_ordered_and_latest_is_last() {
        let list = ProtocolVersion::SUPPORTED;
        assert!(list.windows(2).all(|w| w[0] < w[1] && w[0].as_str() < w[1].as_str()));
        assert_eq!(list.last(), Some(&ProtocolVersion::LATEST));
    }

    #[test]
    fn eras_are_shown_by_name() {
        assert_eq!(Era::Legacy.to_string(), "legacy");
        assert_eq!(Era::Modern.to_string(), "modern");
    }

    #[test]
    fn negotiation_cases() {
        let all = ProtocolVersion::SUPPORTED;
        let cases: &[(&str, &[ProtocolVersion], Option<ProtocolVersion>)] = &[
            ("2025-11-25", all, Some(ProtocolVersion::V2025_11_25)),
            ("2025-06-18", all, Some(ProtocolVersion::V2025_06_18)),
            ("2025-03-26", all, Some(ProtocolVersion::V2025_03_26)),
            ("2024-11-05", all, Some(ProtocolVersion::V2024_11_05)),
            ("2026-07-28", all, None),
            ("2099-01-01", all, None),
            ("2025-11-25 ", all, None),
            ("", all, None),
            ("2024-11-05", &[ProtocolVersion::V2025_11_25], None),
        ];
        for (answer, supported, expected) in cases {
            let got = negotiate(answer, supported).ok();
            assert_eq!(got, *expected, "answer {answer:?}");
        }
    }

    #[test]
    fn unsupported_error_names_both_sides() {
        let err = negotiate("1999-01-01", ProtocolVersion::SUPPORTED).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("\"1999-01-01\""), "{text}");
        for v in ProtocolVersion::SUPPORTED {
            assert_eq!(text.contains(v.as_str()), !v.is_modern(), "{text}");
        }
    }

    #[test]
    fn revision_features() {
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(!ProtocolVersion::V2025_03_26.sends_protocol_version_header());
        assert!(ProtocolVersion::V2025_11_25.sends_protocol_version_header());
        assert!(!ProtocolVersion::V2024_11_05.uses_streamable_http());
        assert_eq!("2025-06-18".parse::<ProtocolVersion>(), Ok(ProtocolVersion::V2025_06_18));
        assert!(ProtocolVersion::V2026_07_28.is_modern());
        assert!(!ProtocolVersion::V2026_07_28.has_sessions());
        assert!(ProtocolVersion::V2025_11_25.has_sessions());
        assert!(ProtocolVersion::V2026_07_28.sends_protocol_version_header());
        assert_eq!(ProtocolVersion::LATEST_LEGACY.era(), Era::Legacy);
    }

    #[test]
    fn wire_text_and_transports_of_every_revision() {
        let expected = [
            (ProtocolVersion::V2024_11_05, "2024-11-05", false),
            (ProtocolVersion::V2025_03_26, "2025-03-26", true),
            (ProtocolVersion::V2025_06_18, "2025-06-18", true),
            (ProtocolVersion::V2025_11_25, "2025-11-25", true),
            (ProtocolVersion::V2026_07_28, "2026-07-28", true),
        ];
        assert_eq!(ProtocolVersion::SUPPORTED.len(), expected.len());
        for (v, text, streamable) in expected {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(ProtocolVersion::parse(text), Some(v));
            assert_eq!(v.uses_streamable_http(), streamable, "{text}");
        }
        let err =
            negotiate("1999-01-01", &[ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25])
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the server chose protocol version \"1999-01-01\", but this client supports only 2025-06-18, 2025-11-25"
        );
    }

    #[test]
    fn selection_cases() {
        let all = ProtocolVersion::SUPPORTED;
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: &[(Vec<String>, bool, Option<ProtocolVersion>)] = &[
            (s(&["2026-07-28"]), false, Some(ProtocolVersion::V2026_07_28)),
            (s(&["2026-07-28", "2025-11-25"]), true, Some(ProtocolVersion::V2026_07_28)),
            (s(&["2025-11-25", "2025-06-18"]), true, Some(ProtocolVersion::V2025_11_25)),
            (s(&["2025-11-25"]), false, None),
            (s(&["2099-01-01"]), true, None),
            (s(&[]), true, None),
        ];
        for (list, legacy, expected) in cases {
            assert_eq!(select_version(list, all, *legacy), *expected, "{list:?} {legacy}");
        }
    }
}
