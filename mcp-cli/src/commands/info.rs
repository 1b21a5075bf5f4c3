//! `mcpc info`: the server's identity, capabilities, instructions and
//! protocol.

use mcp_proto::types::{JsonObject, ServerCapabilities};
use serde_json::json;

use crate::cli::Output;
use crate::ctx::Ctx;
use crate::failure::Failure;
use crate::output::{add_protocol, emit, emit_json, one_line};

/// `mcpc info`: who the server is, what it offers, what it asks of us.
pub(crate) async fn info(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    ctx.connect(&server).await?;
    let init = ctx.registry.initialize(&server).await.map_err(|e| ctx.fail(e))?;
    let status = ctx.registry.status(&server).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Json => {
            let mut v = json!({
                "server": server,
                "server_info": init.server_info,
                "capabilities": init.capabilities,
                "instructions": init.instructions,
            });
            add_protocol(&mut v, &status);
            emit_json(&v);
        }
        Output::Text => {
            let info = &init.server_info;
            let mut name = format!("{} {}", info.name, info.version);
            if let Some(title) = &info.title {
                name.push_str(&format!(" ({title})"));
            }
            emit(&format!("{server}: {}", one_line(&name)));
            if let (Some(version), Some(era)) = (status.protocol_version, status.era) {
                emit(&format!("  protocol      {version} ({era} era)"));
            }
            let caps = capabilities(&init.capabilities);
            emit(&format!(
                "  capabilities  {}",
                if caps.is_empty() {
                    "none".into()
                } else {
                    one_line(&caps.join(", ")).into_owned()
                }
            ));
            match init.instructions.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
                Some(instructions) => {
                    emit("  instructions");
                    for line in instructions.lines() {
                        emit(format!("    {line}").trim_end());
                    }
                }
                None => emit("  instructions  none"),
            }
        }
    }
    Ok(0)
}

/// The capabilities a server declares, by name (sorted), each with the
/// features it turns on in brackets: the members set to `true` or given
/// as objects (`resources (listChanged, subscribe)`).
fn capabilities(caps: &ServerCapabilities) -> Vec<String> {
    // The members of an object that turn something on.
    fn on(object: &JsonObject) -> impl Iterator<Item = &str> {
        object
            .iter()
            .filter(|(_, v)| v.as_bool() == Some(true) || v.is_object())
            .map(|(k, _)| k.as_str())
    }
    let flag = |name: &'static str, set: Option<bool>| (set == Some(true)).then_some(name);
    let present = |name: &'static str, set: bool| set.then_some(name);
    let mut all: Vec<(&str, Vec<&str>)> = Vec::new();
    let objects = [
        ("completions", &caps.completions),
        ("experimental", &caps.experimental),
        ("extensions", &caps.extensions),
        ("logging", &caps.logging),
    ];
    for (name, object) in objects {
        if let Some(object) = object {
            all.push((name, on(object).collect()));
        }
    }
    if let Some(p) = &caps.prompts {
        all.push((
            "prompts",
            flag("listChanged", p.list_changed).into_iter().chain(on(&p.extra)).collect(),
        ));
    }
    if let Some(r) = &caps.resources {
        let known = [flag("listChanged", r.list_changed), flag("subscribe", r.subscribe)];
        all.push(("resources", known.into_iter().flatten().chain(on(&r.extra)).collect()));
    }
    if let Some(t) = &caps.tasks {
        let known = [
            present("cancel", t.cancel.is_some()),
            present("list", t.list.is_some()),
            present("requests", t.requests.is_some()),
        ];
        all.push(("tasks", known.into_iter().flatten().chain(on(&t.extra)).collect()));
    }
    if let Some(t) = &caps.tools {
        all.push((
            "tools",
            flag("listChanged", t.list_changed).into_iter().chain(on(&t.extra)).collect(),
        ));
    }
    for (name, value) in &caps.extra {
        all.push((name, value.as_object().map(|o| on(o).collect()).unwrap_or_default()));
    }
    all.sort();
    all.into_iter()
        .map(|(name, mut flags)| {
            flags.sort_unstable();
            if flags.is_empty() {
                name.to_owned()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn capabilities_by_name_with_what_they_turn_on() {
        let check = |caps: Value, expected: &[&str]| {
            let caps: ServerCapabilities = serde_json::from_value(caps.clone()).unwrap();
            assert_eq!(capabilities(&caps), expected, "{caps:?}");
        };
        check(json!({}), &[]);
        check(
            json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": false},
                "prompts": {"listChanged": true, "paged": {}},
                "logging": {},
                "completions": {"x": false},
                "tasks": {"list": {}, "requests": {"tools": {"call": {}}}},
                "experimental": {"x": {}, "y": false, "z": true},
                "zeta": true,
                "alpha": {"on": true, "off": false, "n": 3},
            }),
            &[
                "alpha (on)",
                "completions",
                "experimental (x, z)",
                "logging",
                "prompts (listChanged, paged)",
                "resources (subscribe)",
                "tasks (list, requests)",
                "tools (listChanged)",
                "zeta",
            ],
        );
    }
}
