//! `mcpc tools --schema-for TARGET`: each allowed tool's input schema
//! shaped for a model provider (`mcp_host_registry::shape`).

use mcp_host_registry::shape::{SchemaTarget, ShapeLimits, shape_tool};
use serde_json::{Value, json};

use crate::cli::Output;
use crate::ctx::Ctx;
use crate::failure::{EXIT_CONNECTION, Failure};
use crate::output::{emit, emit_json, warn_line};

/// The shaped schemas of one server's tools. A schema that cannot be
/// shaped (a cycle, a foreign reference, too deep or too large) is
/// reported beside the others and makes the exit code 3: the server sent
/// it.
pub(crate) async fn schemas(
    ctx: &Ctx<'_>,
    server: Option<&str>,
    target: SchemaTarget,
) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    ctx.connect(&server).await?;
    let tools = ctx.registry.list_tools(&server).await.map_err(|e| ctx.fail(e))?;
    let limits = ShapeLimits::default();
    let mut code = 0;
    let mut listed = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        match shape_tool(tool, target, &limits) {
            Ok(shaped) => match ctx.output() {
                Output::Json => listed.push(json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": shaped.schema,
                })),
                Output::Text => {
                    if i > 0 {
                        emit("");
                    }
                    emit(&format!("{}:", tool.name));
                    let pretty = serde_json::to_string_pretty(&shaped.schema)
                        .unwrap_or_else(|_| shaped.schema.to_string());
                    emit(&pretty);
                }
            },
            Err(e) => {
                code = EXIT_CONNECTION;
                let message = format!("{server}/{}: {e}", tool.name);
                if ctx.output() == Output::Json {
                    listed.push(json!({"name": tool.name, "error": e.to_string()}));
                }
                warn_line(&message);
            }
        }
    }
    if ctx.output() == Output::Json {
        emit_json(
            &json!({"server": server, "target": target.name(), "tools": Value::Array(listed)}),
        );
    }
    Ok(code)
}
