//! The protocol era a benchmark speaks: the handshake era (`initialize`,
//! 2025-11-25) or the stateless era (2026-07-28: no `initialize`, every
//! request carries its version, capabilities and client identity in
//! `_meta`).

use mcp_client_stdio::mcp_peer::EraChoice;
use mcp_proto::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY,
};
use serde_json::Value;

/// Which era a phase speaks; every contender is pinned to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// `initialize` + `notifications/initialized`, then plain requests.
    #[default]
    Legacy,
    /// `server/discover` once, then requests carrying the stateless `_meta`.
    Modern,
}

impl Era {
    /// Both eras, the handshake era first.
    pub const BOTH: [Era; 2] = [Era::Legacy, Era::Modern];

    /// `--era legacy|modern` among a binary's arguments (legacy when absent).
    pub fn from_args(args: &[String]) -> Result<Era, String> {
        match crate::args::after(args, "--era") {
            None => Ok(Era::Legacy),
            Some(Some("legacy")) => Ok(Era::Legacy),
            Some(Some("modern")) => Ok(Era::Modern),
            Some(v) => Err(format!("--era takes legacy or modern, not {v:?}")),
        }
    }

    /// Our clients' option that pins them to this era.
    pub fn choice(self) -> EraChoice {
        match self {
            Era::Legacy => EraChoice::Legacy,
            Era::Modern => EraChoice::Modern,
        }
    }

    /// The revision spoken.
    pub fn revision(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }

    /// The `mcp-testkit` options that make it serve this era only.
    pub fn testkit_args(self) -> &'static [&'static str] {
        match self {
            Era::Legacy => &[],
            Era::Modern => &["--era", "modern"],
        }
    }

    /// What the tables call it.
    pub fn title(self) -> &'static str {
        match self {
            Era::Legacy => "handshake era (2025-11-25, `initialize`)",
            Era::Modern => "stateless era (2026-07-28, `server/discover`, no session)",
        }
    }

    /// Its short name: `handshake` or `stateless`.
    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "handshake",
            Era::Modern => "stateless",
        }
    }

    /// `--era legacy|modern`, the argument a binary is given.
    pub fn arg(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    /// The `,"_meta":{...}` member a raw stateless-era request ends its
    /// params with (empty in the handshake era): the revision, no
    /// capabilities, the raw client's identity.
    pub fn raw_meta(self) -> String {
        match self {
            Era::Legacy => String::new(),
            Era::Modern => format!(
                ",\"_meta\":{{\"{PROTOCOL_VERSION_META_KEY}\":\"{}\",\"{CLIENT_CAPABILITIES_META_KEY}\":{{}},\"{CLIENT_INFO_META_KEY}\":{{\"name\":\"raw\",\"version\":\"0\"}}}}",
                self.revision()
            ),
        }
    }

    /// The `_meta` of [`Era::raw_meta`] as JSON, for a request built as a
    /// value; `None` in the handshake era.
    pub fn meta(self) -> Option<Value> {
        let member = self.raw_meta();
        let member = member.strip_prefix(',')?;
        let object: Value = serde_json::from_str(&format!("{{{member}}}")).ok()?;
        object.get("_meta").cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_meta_as_json_and_as_text_agree() {
        assert_eq!(Era::Legacy.meta(), None);
        let meta = Era::Modern.meta().expect("the stateless era's _meta");
        assert_eq!(meta[PROTOCOL_VERSION_META_KEY], "2026-07-28");
        assert_eq!(meta[CLIENT_INFO_META_KEY]["name"], "raw");
        assert!(meta[CLIENT_CAPABILITIES_META_KEY].is_object());
        assert_eq!(Era::Modern.choice(), EraChoice::Modern);
    }
}
