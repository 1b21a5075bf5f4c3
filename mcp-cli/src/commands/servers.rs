//! `mcpc servers`: the configured servers, and with `--connect` the
//! protocol each speaks; those the managed policy blocked, with why.

use std::time::Duration;

use mcp_host_registry::{ServerConfig, TransportConfig};
use serde_json::{Value, json};

use crate::cli::Output;
use crate::ctx::Ctx;
use crate::failure::{Failure, Kind};
use crate::output::{add_protocol, emit, emit_json, table, warn_line};

/// `mcpc servers`: the configured servers; with `--connect`, each one
/// connected (concurrently, bounded) and shown with the protocol version
/// and era it speaks. A server that cannot be reached is reported on stderr
/// (and in the JSON) and makes the exit code 3; the others are still shown.
pub(crate) async fn servers(ctx: &Ctx<'_>, connect: bool) -> Result<u8, Failure> {
    let registry = ctx.registry;
    let mut errors = std::collections::HashMap::new();
    let mut code = 0;
    if connect {
        let limit = Duration::from_secs_f64(ctx.g.connect_timeout);
        let all = tokio::time::timeout(limit, registry.initialize_all()).await.map_err(|_| {
            Failure::new(
                Kind::Timeout,
                format!(
                    "the servers did not all connect within {}s (--connect-timeout)",
                    ctx.g.connect_timeout
                ),
            )
        })?;
        for r in all {
            if let Err(e) = r.result {
                let failure = ctx.fail(e);
                code = code.max(failure.code);
                warn_line(&failure.message);
                errors.insert(r.server, failure);
            }
        }
    }
    let statuses = registry.statuses().await;
    match ctx.output() {
        Output::Json => {
            let list: Vec<Value> = registry
                .list()
                .zip(&statuses)
                .map(|(server, status)| {
                    let mut v = server_json(server);
                    v["connected"] = json!(status.connected);
                    add_protocol(&mut v, status);
                    if let Some(error) = errors.get(&server.name) {
                        v["error"] = json!(error.message);
                        v["error_kind"] = json!(error.kind.as_str());
                    }
                    v
                })
                .collect();
            let blocked = registry
                .blocked()
                .into_iter()
                .map(|b| json!({"name": b.server, "blocked": b.reason}));
            emit_json(&Value::Array(list.into_iter().chain(blocked).collect()));
        }
        Output::Text => {
            let any_pinned = registry.list().any(|s| s.protocol.is_some());
            let rows: Vec<Vec<String>> = registry
                .list()
                .zip(&statuses)
                .map(|(s, status)| {
                    let (kind, target) = target(s);
                    let mut protocol = match (status.protocol_version, status.era) {
                        (Some(version), Some(era)) => format!("{version} {era}"),
                        _ if errors.contains_key(&s.name) => "unreachable".to_owned(),
                        _ => String::new(),
                    };
                    if let Some(pinned) = s.protocol {
                        let sep = if protocol.is_empty() { "" } else { ", " };
                        protocol = format!("{protocol}{sep}pinned {pinned}");
                    }
                    let description = s.description.clone().unwrap_or_default();
                    let mut row = vec![s.name.clone(), kind.to_owned(), target];
                    if connect || any_pinned {
                        row.push(protocol);
                    }
                    row.push(description);
                    row
                })
                .collect();
            // What the administrator's policy kept out, and why.
            let mut rows = rows;
            for b in registry.blocked() {
                rows.push(vec![b.server, "blocked".to_owned(), b.reason]);
            }
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
    Ok(code)
}

/// The transport kind and what it points at: a command line, or an
/// endpoint without credentials or query.
fn target(server: &ServerConfig) -> (&'static str, String) {
    match &server.transport {
        TransportConfig::Stdio(c) => {
            let mut words = vec![c.command.clone()];
            words.extend(c.args.iter().cloned());
            ("stdio", shell_words::join(words))
        }
        TransportConfig::Http { endpoint, .. } => ("http", mcp_http::redact_endpoint(endpoint)),
        _ => ("other", String::new()),
    }
}

fn server_json(server: &ServerConfig) -> Value {
    let mut v = json!({
        "name": server.name,
        "description": server.description,
        "timeout_secs": server.timeout.as_secs(),
        "allowed_tools": server.policy.allowed(),
        "disallowed_tools": server.policy.denied(),
        "protocol": server.protocol.map_or_else(|| "auto".to_owned(), |v| v.to_string()),
    });
    match &server.transport {
        TransportConfig::Stdio(c) => {
            v["transport"] = json!("stdio");
            v["command"] = json!(c.command);
            v["args"] = json!(c.args);
        }
        TransportConfig::Http { endpoint, .. } => {
            v["transport"] = json!("http");
            v["endpoint"] = json!(mcp_http::redact_endpoint(endpoint));
        }
        _ => v["transport"] = json!("other"),
    }
    v
}
