//! `mcpc add --from server.json`: the configuration entry of a server an
//! MCP Registry `server.json` describes, printed (never written: a person
//! appends it where it belongs).

use std::path::Path;

use mcp_host_registry::{ImportedServer, ServerJsonChoice};
use serde_json::json;

use crate::cli::Output;
use crate::failure::{Failure, Kind};
use crate::output::{emit, emit_json};

/// Prints the entry; `package` and `remote` are 1-based.
pub(crate) fn add(
    output: Output,
    from: &Path,
    package: Option<u64>,
    remote: Option<u64>,
    name: Option<&str>,
) -> Result<u8, Failure> {
    let index = |n: u64| usize::try_from(n - 1).unwrap_or(usize::MAX);
    let choice = match (package, remote) {
        (Some(n), _) => ServerJsonChoice::Package(index(n)),
        (None, Some(n)) => ServerJsonChoice::Remote(index(n)),
        (None, None) => ServerJsonChoice::First,
    };
    let imported =
        ImportedServer::from_file(from, choice, name).map_err(|e| Failure::new(Kind::Config, e))?;
    match output {
        Output::Text => emit(imported.to_toml().trim_end()),
        Output::Json => emit_json(&json!({
            "name": imported.server.name,
            "toml": imported.to_toml(),
            "variables": imported.variables.iter().map(|v| json!({
                "name": v.name,
                "required": v.required,
                "secret": v.secret,
                "default": v.default,
                "description": v.description,
            })).collect::<Vec<_>>(),
        })),
    }
    Ok(0)
}
