//! MCP log levels on the server side: `logging/setLevel` in the handshake
//! era, `_meta` `io.modelcontextprotocol/logLevel` in the stateless era.

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::Value;

use crate::era::invalid_params;

/// The eight syslog levels of MCP logging, lowest first: a level's index
/// is its severity.
pub const LOG_LEVELS: [&str; 8] =
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// The severity of a level name (its index in [`LOG_LEVELS`]).
pub fn level_index(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// The level of a `logging/setLevel` request, as an index into
/// [`LOG_LEVELS`]; `-32602` when `level` is missing or unknown.
pub fn set_level_param(params: Option<&Value>) -> Result<usize, ErrorObject> {
    params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .and_then(level_index)
        .ok_or_else(|| invalid_params(format!("level must be one of {}", LOG_LEVELS.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_parse_by_name() {
        assert_eq!(level_index("debug"), Some(0));
        assert_eq!(level_index("emergency"), Some(7));
        assert_eq!(set_level_param(Some(&json!({"level": "warning"}))), Ok(3));
        assert!(set_level_param(Some(&json!({"level": "loud"}))).is_err());
        assert!(set_level_param(None).is_err());
    }
}
