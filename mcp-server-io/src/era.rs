//! Which protocol eras a server speaks, and the rules of the handshake era:
//! the checks on `initialize` and the revision it answers with.

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::{ProtocolVersion, methods};
use serde_json::Value;

use crate::stateless;

/// Which protocol eras a server speaks.
///
/// ```
/// use mcp_server_io::ServeEra;
///
/// assert_eq!(ServeEra::default(), ServeEra::Legacy);
/// assert_eq!("both".parse::<ServeEra>(), Ok(ServeEra::Both));
/// assert_eq!(ServeEra::Modern.supported_versions(), ["2026-07-28"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ServeEra {
    /// The handshake era only (2024-11-05 to 2025-11-25): `initialize`
    /// opens the session; a stateless-era request is answered as a legacy
    /// server answers an unknown request, so a client's era probe falls
    /// back.
    #[default]
    Legacy,
    /// The stateless era only (2026-07-28): every request carries its
    /// version and capabilities in `_meta`; `initialize` is refused.
    Modern,
    /// Both: an `initialize` opens a legacy session; a request carrying the
    /// stateless `_meta` (or a stateless-only method) is served statelessly.
    Both,
}

impl ServeEra {
    /// Whether stateless-era requests are served.
    pub fn serves_modern(self) -> bool {
        matches!(self, ServeEra::Modern | ServeEra::Both)
    }

    /// Whether `initialize` opens a legacy session.
    pub fn serves_legacy(self) -> bool {
        matches!(self, ServeEra::Legacy | ServeEra::Both)
    }

    /// Every version spoken, newest first: what `server/discover` and
    /// `-32022` list.
    pub fn supported_versions(self) -> Vec<&'static str> {
        ProtocolVersion::SUPPORTED
            .iter()
            .rev()
            .filter(|v| match self {
                ServeEra::Modern => v.is_modern(),
                ServeEra::Legacy => !v.is_modern(),
                ServeEra::Both => true,
            })
            .map(|v| v.as_str())
            .collect()
    }

    /// Whether a request is served in the stateless era: in `Modern` every
    /// request but `initialize`; in `Both` one that carries the stateless
    /// `_meta` or has a stateless-only method (`initialize` never is).
    pub fn routes_stateless(self, method: &str, params: Option<&Value>) -> bool {
        self.routes_stateless_by(method, || stateless::has_stateless_meta(params))
    }

    /// [`routes_stateless`](Self::routes_stateless), `stateless_meta`
    /// saying (when asked) whether the request's `_meta` carries a
    /// stateless-era key.
    pub(crate) fn routes_stateless_by(
        self,
        method: &str,
        stateless_meta: impl FnOnce() -> bool,
    ) -> bool {
        match self {
            ServeEra::Legacy => false,
            ServeEra::Modern => method != methods::INITIALIZE,
            ServeEra::Both => {
                method != methods::INITIALIZE
                    && (stateless::is_stateless_only(method) || stateless_meta())
            }
        }
    }
}

impl std::fmt::Display for ServeEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServeEra::Legacy => "legacy",
            ServeEra::Modern => "modern",
            ServeEra::Both => "both",
        })
    }
}

impl std::str::FromStr for ServeEra {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "legacy" => Ok(ServeEra::Legacy),
            "modern" => Ok(ServeEra::Modern),
            "both" => Ok(ServeEra::Both),
            _ => Err(()),
        }
    }
}

/// The revision answered to an `initialize` offering `offered`: the same
/// when it is a handshake revision this toolkit speaks, else the newest
/// handshake revision (the client then decides whether it speaks it).
pub fn handshake_version(offered: &str) -> ProtocolVersion {
    ProtocolVersion::parse(offered)
        .filter(|v| !v.is_modern())
        .unwrap_or(ProtocolVersion::LATEST_LEGACY)
}

/// Checks an `initialize` request's parameters (`protocolVersion`,
/// `capabilities`, `clientInfo` with `name` and `version`) and returns the
/// offered revision; `-32602` names what is missing.
pub fn check_initialize(params: Option<&Value>) -> Result<&str, ErrorObject> {
    let offered = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("initialize needs a string protocolVersion"))?;
    if !params.and_then(|p| p.get("capabilities")).is_some_and(Value::is_object) {
        return Err(invalid_params("initialize needs a capabilities object"));
    }
    let client_info = params.and_then(|p| p.get("clientInfo"));
    if !client_info.and_then(|c| c.get("name")).is_some_and(Value::is_string)
        || !client_info.and_then(|c| c.get("version")).is_some_and(Value::is_string)
    {
        return Err(invalid_params("initialize needs clientInfo with a name and a version"));
    }
    Ok(offered)
}

/// `-32600` for a second `initialize` in one session.
pub fn already_initialized() -> ErrorObject {
    ErrorObject::new(error_code::INVALID_REQUEST, "initialize may be sent only once per session")
}

/// `-32600` for a request (other than `initialize` and `ping`) before
/// `initialize`.
pub fn not_initialized(method: &str) -> ErrorObject {
    ErrorObject::new(
        error_code::INVALID_REQUEST,
        format!("Server not initialized: send initialize before {method}"),
    )
}

/// Whether revision `version` has tasks: 2025-11-25 and later, and any
/// revision this toolkit does not know.
pub fn supports_tasks(version: &str) -> bool {
    ProtocolVersion::parse(version).is_none_or(|v| v >= ProtocolVersion::V2025_11_25)
}

pub(crate) fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_handshake_answers_known_revisions_and_falls_back_to_the_latest() {
        let cases = [
            ("2024-11-05", "2024-11-05"),
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
            ("2026-07-28", "2025-11-25"),
            ("garbage", "2025-11-25"),
        ];
        for (offered, answered) in cases {
            assert_eq!(handshake_version(offered).as_str(), answered, "{offered}");
        }
    }

    #[test]
    fn initialize_parameters_are_checked() {
        let good = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "c", "version": "1"}});
        assert_eq!(check_initialize(Some(&good)), Ok("2025-06-18"));
        for bad in [
            json!({}),
            json!({"protocolVersion": "x", "clientInfo": {"name": "c", "version": "1"}}),
            json!({"protocolVersion": "x", "capabilities": {}, "clientInfo": {"name": "c"}}),
        ] {
            assert_eq!(check_initialize(Some(&bad)).unwrap_err().code, error_code::INVALID_PARAMS);
        }
        assert!(check_initialize(None).is_err());
    }

    #[test]
    fn eras_route_and_list_their_versions() {
        let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        assert!(ServeEra::Both.routes_stateless("tools/list", Some(&meta)));
        assert!(!ServeEra::Both.routes_stateless("tools/list", None));
        assert!(ServeEra::Both.routes_stateless("server/discover", None));
        assert!(!ServeEra::Both.routes_stateless("initialize", Some(&meta)));
        assert!(ServeEra::Modern.routes_stateless("ping", None));
        assert!(!ServeEra::Legacy.routes_stateless("server/discover", Some(&meta)));
        assert_eq!(
            ServeEra::Both.supported_versions(),
            ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
        );
        assert!(supports_tasks("2025-11-25") && supports_tasks("2099-01-01"));
        assert!(!supports_tasks("2025-06-18"));
    }
}
