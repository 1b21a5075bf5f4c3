//! The host's trust settings kept in its configuration file, beside the
//! servers: `[mcp_client.approval]` (the call policy). The server loader
//! leaves these tables to this module.

use std::path::Path;

use serde_json::Value;

use crate::private_file;
use crate::trust::TrustError;
use crate::trust::approval::CallPolicy;

/// What a configuration file says about trust.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrustSettings {
    /// `[mcp_client.approval]` (the default policy when absent).
    pub call_policy: CallPolicy,
}

impl TrustSettings {
    /// Reads the trust tables of the configuration at `path` (TOML, or
    /// JSON in the `mcp_client` shape; `mcpServers` JSON has none). Errors
    /// name the file and the table, never quote the text.
    pub fn load(path: &Path) -> Result<TrustSettings, TrustError> {
        let corrupt = |message: String| TrustError::Corrupt { path: path.to_owned(), message };
        let text = private_file::read_capped(path)
            .map_err(|source| TrustError::Io { path: path.to_owned(), source })?
            .unwrap_or_default();
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let root: Value = if text.trim_start().starts_with('{') {
            serde_json::from_str(text)
                .map_err(|e| corrupt(format!("not JSON (line {})", e.line())))?
        } else {
            toml::from_str(text).map_err(|_| corrupt("not TOML".to_owned()))?
        };
        let mut settings = TrustSettings::default();
        if let Some(approval) = root.get("mcp_client").and_then(|c| c.get("approval")) {
            settings.call_policy = CallPolicy::read(approval)
                .map_err(|e| corrupt(format!("[mcp_client.approval]: {e}")))?;
        }
        Ok(settings)
    }
}
