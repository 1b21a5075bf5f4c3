//! `mcpc tools`: the tools of one server or all, each with its pin;
//! `tools --search`; `mcpc pins approve`.

use std::time::Duration;

use mcp_host_registry::{PinPolicy, PinStatus, ToolIndex};
use mcp_proto::types::Tool;
use serde_json::{Value, json};

use crate::cli::Output;
use crate::ctx::Ctx;
use crate::failure::{Failure, Kind};
use crate::output::{
    add_protocol, emit, emit_json, plural, protocol_suffix, summary, table, warn_line,
};

/// `mcpc tools [SERVER]`: every allowed tool with its pin (withheld ones
/// under the `block` policy shown apart); of every server when none is
/// named, where one that cannot be reached is reported and makes the exit
/// code 3.
pub(crate) async fn tools(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let registry = ctx.registry;
    let names: Vec<String> = match server {
        Some(name) => vec![ctx.pick(Some(name))?],
        None => registry.list().map(|s| s.name.clone()).collect(),
    };
    if names.is_empty() {
        return Err(Failure::new(Kind::Config, "no servers are configured"));
    }
    let single = server.is_some() || names.len() == 1;
    // Every allowed tool with its pin (reviewed once, so a tool seen for
    // the first time shows as new), withheld ones included.
    let results: Vec<(String, Result<Vec<PinnedTool>, Failure>)> = if single {
        let name = names[0].clone();
        let result = match ctx.connect(&name).await {
            Ok(_) => registry.list_tools_with_pins(&name).await.map_err(|e| ctx.fail(e)),
            Err(f) => Err(f),
        };
        vec![(name, result)]
    } else {
        let limit = Duration::from_secs_f64(ctx.g.connect_timeout + ctx.g.timeout.unwrap_or(30.0));
        let all = futures_util::future::join_all(names.iter().map(|name| async move {
            let result = registry.list_tools_with_pins(name).await.map_err(|e| ctx.fail(e));
            (name.clone(), result)
        }));
        match tokio::time::timeout(limit, all).await {
            Ok(all) => all,
            Err(_) => {
                return Err(Failure::new(Kind::Timeout, "the servers did not all answer in time"));
            }
        }
    };
    let mut code = 0;
    let mut json_out = Vec::new();
    for (i, (name, result)) in results.into_iter().enumerate() {
        match result {
            Ok(pinned) => {
                let status = registry.status(&name).await.map_err(|e| ctx.fail(e))?;
                // Under the `block` policy a changed tool is withheld.
                let block =
                    registry.pin_policy(&name).map_err(|e| ctx.fail(e))? == PinPolicy::Block;
                let (withheld, shown): (Vec<&PinnedTool>, Vec<&PinnedTool>) =
                    pinned.iter().partition(|(_, pin)| block && pin.is_changed());
                let tools: Vec<&Tool> = shown.iter().map(|(t, _)| t).collect();
                let pin_of =
                    |tool: &str| pinned.iter().find(|(t, _)| t.name == tool).map(|(_, p)| p);
                match ctx.output() {
                    Output::Json => {
                        let mut v = json!({"server": name});
                        add_protocol(&mut v, &status);
                        let mut listed = Vec::with_capacity(tools.len());
                        for tool in &tools {
                            let mut t = json!(*tool);
                            if let Some(pin) = pin_of(&tool.name) {
                                t["pin"] = pin_json(pin);
                            }
                            if let Some(ui) = tool.ui() {
                                t["app"] = json!({
                                    "view": ui.resource_uri,
                                    "app_only": ui.is_app_only(),
                                });
                            }
                            listed.push(t);
                        }
                        v["tools"] = Value::Array(listed);
                        if !withheld.is_empty() {
                            v["withheld"] = withheld
                                .iter()
                                .map(|(t, p)| json!({"name": t.name, "pin": pin_json(p)}))
                                .collect();
                        }
                        json_out.push(v);
                    }
                    Output::Text => {
                        if i > 0 {
                            emit("");
                        }
                        emit(&format!(
                            "{name}: {} tool{}{}",
                            tools.len(),
                            plural(tools.len()),
                            protocol_suffix(&status)
                        ));
                        let mut rows: Vec<Vec<String>> = tools
                            .iter()
                            .map(|t| {
                                let pin = pin_of(&t.name)
                                    .map(|p| pin_mark(p, ctx.pins_kept))
                                    .unwrap_or_default();
                                let marks: Vec<&str> = [pin.as_str(), app_mark(t)]
                                    .into_iter()
                                    .filter(|m| !m.is_empty())
                                    .collect();
                                vec![
                                    format!("  {}", t.name),
                                    marks.join(" "),
                                    summary(t.description.as_deref()),
                                ]
                            })
                            .collect();
                        rows.extend(withheld.iter().map(|(t, p)| {
                            vec![
                                format!("  {}", t.name),
                                format!("{}, withheld", pin_mark(p, ctx.pins_kept)),
                                format!("approve: mcpc pins approve {name} {}", t.name),
                            ]
                        }));
                        for line in table(&rows) {
                            emit(&line);
                        }
                    }
                }
            }
            Err(failure) if single => return Err(failure),
            Err(failure) => {
                code = code.max(failure.code);
                if ctx.output() == Output::Json {
                    json_out.push(json!({"server": name, "error": failure.message, "error_kind": failure.kind.as_str()}));
                }
                warn_line(&failure.message);
            }
        }
    }
    if ctx.output() == Output::Json {
        emit_json(&Value::Array(json_out));
    }
    Ok(code)
}

/// A tool and how it compares with its pin.
type PinnedTool = (Tool, PinStatus);

/// A tool's pin as shown in the listing: nothing when it matches.
fn pin_mark(pin: &PinStatus, kept: bool) -> String {
    match pin {
        PinStatus::Pinned => String::new(),
        PinStatus::New if !kept => String::new(),
        other => format!("[{other}]"),
    }
}

/// An MCP App tool's mark: `[app]` for a tool with a view, `[app only]`
/// for one only the view may see (a model is not shown it).
fn app_mark(tool: &Tool) -> &'static str {
    match tool.ui() {
        Some(ui) if ui.is_app_only() => "[app only]",
        Some(ui) if ui.resource_uri.is_some() => "[app]",
        _ => "",
    }
}

/// A tool's pin in JSON: `"new"`, `"pinned"` or `{"changed": [fields]}`.
fn pin_json(pin: &PinStatus) -> Value {
    match pin {
        PinStatus::Changed { fields } => {
            json!({"changed": fields.iter().map(|f| f.as_str()).collect::<Vec<_>>()})
        }
        other => json!(other.to_string()),
    }
}

/// `tools --search QUERY`: the allowed tools (of one server, or all) that
/// best match, best first.
pub(crate) async fn search(
    ctx: &Ctx<'_>,
    server: Option<&str>,
    query: &str,
    limit: usize,
) -> Result<u8, Failure> {
    let only = match server {
        Some(name) => Some(ctx.pick(Some(name))?),
        None => None,
    };
    let limit_time = Duration::from_secs_f64(ctx.g.connect_timeout + ctx.g.timeout.unwrap_or(30.0));
    let hits = match &only {
        // One server: its tools alone are indexed.
        Some(name) => {
            ctx.connect(name).await?;
            let tools = ctx.registry.list_tools(name).await.map_err(|e| ctx.fail(e))?;
            let mut index = ToolIndex::new();
            for tool in &tools {
                index.add(name, tool);
            }
            index.search(query, limit)
        }
        None => tokio::time::timeout(limit_time, ctx.registry.search_tools(query, limit))
            .await
            .map_err(|_| Failure::new(Kind::Timeout, "the servers did not all answer in time"))?,
    };
    match ctx.output() {
        Output::Json => {
            let list: Vec<Value> = hits
                .iter()
                .map(|h| json!({"server": h.server, "tool": h.tool, "score": h.score}))
                .collect();
            emit_json(&Value::Array(list));
        }
        Output::Text => {
            if hits.is_empty() {
                warn_line(&format!("no tool matches {query:?}"));
            }
            let rows: Vec<Vec<String>> = hits
                .iter()
                .map(|h| vec![h.server.clone(), h.tool.clone(), format!("{:.2}", h.score)])
                .collect();
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
    Ok(0)
}

/// `pins approve SERVER [TOOL]`.
pub(crate) async fn approve_pins(
    ctx: &Ctx<'_>,
    server: &str,
    tool: Option<&str>,
) -> Result<u8, Failure> {
    let server = ctx.pick(Some(server))?;
    ctx.connect(&server).await?;
    let approved = ctx.registry.approve_pins(&server, tool).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Json => emit_json(&json!({"server": server, "approved": approved})),
        Output::Text if approved.is_empty() => {
            emit(&format!("{server}: every definition already matches its pin"))
        }
        Output::Text => emit(&format!("{server}: pinned {}", approved.join(", "))),
    }
    Ok(0)
}
