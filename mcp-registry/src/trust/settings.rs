//! The host's trust settings kept in its configuration file, beside the
//! servers: `[mcp_client.approval]` (the call policy) and
//! `[mcp_client.audit]` (the audit log). The server loader
//! leaves these tables to this module.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::private_file;
use crate::trust::TrustError;
use crate::trust::approval::CallPolicy;
use crate::trust::audit::AuditConfig;

/// What a configuration file says about trust.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrustSettings {
    /// `[mcp_client.approval]` (the default policy when absent).
    pub call_policy: CallPolicy,
    /// `[mcp_client.audit]`: `None` when absent or not enabled.
    pub audit: Option<AuditConfig>,
}

impl TrustSettings {
    /// Reads the trust tables of the configuration at `path` (TOML, or
    /// JSON in the `mcp_client` shape; `mcpServers` JSON has none). An
    /// audit table without `path` logs to `default_audit_path`. Errors
    /// name the file and the table, never quote the text.
    pub fn load(
        path: &Path,
        default_audit_path: Option<PathBuf>,
    ) -> Result<TrustSettings, TrustError> {
        let corrupt = |message: String| TrustError::Corrupt { path: path.to_owned(), message };
        let root = read_root(path)?;
        let mut settings = TrustSettings::default();
        if let Some(approval) = root.get("mcp_client").and_then(|c| c.get("approval")) {
            settings.call_policy = CallPolicy::read(approval)
                .map_err(|e| corrupt(format!("[mcp_client.approval]: {e}")))?;
        }
        if let Some(audit) = root.get("mcp_client").and_then(|c| c.get("audit")) {
            let folder = path.parent().unwrap_or(Path::new(""));
            settings.audit = AuditConfig::read(audit, folder, default_audit_path)
                .map_err(|e| corrupt(format!("[mcp_client.audit]: {e}")))?;
        }
        Ok(settings)
    }
}

/// The configuration file as a JSON value (TOML or JSON); an empty or
/// missing file is `null`.
fn read_root(path: &Path) -> Result<Value, TrustError> {
    let corrupt = |message: String| TrustError::Corrupt { path: path.to_owned(), message };
    let text = private_file::read_capped(path)
        .map_err(|source| TrustError::Io { path: path.to_owned(), source })?
        .unwrap_or_default();
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim_start().starts_with('{') {
        // Comments and trailing commas as the configuration takes them.
        serde_json::from_str(&crate::config::jsonc::strip(text))
            .map_err(|e| corrupt(format!("not JSON (line {})", e.line())))
    } else {
        toml::from_str(text).map_err(|_| corrupt("not TOML".to_owned()))
    }
}

/// The trust tables of the configuration at `path` as written
/// (`{"approval": ..., "audit": ...}`), `None` when it has neither: part
/// of what a project's approval covers, so a project cannot loosen its
/// call policy or move its audit log without being asked again.
pub(crate) fn trust_tables(path: &Path) -> Result<Option<Value>, TrustError> {
    let root = read_root(path)?;
    let client = root.get("mcp_client");
    let table = |key: &str| client.and_then(|c| c.get(key)).cloned().unwrap_or(Value::Null);
    let (approval, audit) = (table("approval"), table("audit"));
    if approval.is_null() && audit.is_null() {
        return Ok(None);
    }
    Ok(Some(serde_json::json!({"approval": approval, "audit": audit})))
}
