//! `mcpc ping`: a round trip, timed apart from connecting.

use std::time::Instant;

use serde_json::json;

use crate::cli::Output;
use crate::ctx::Ctx;
use crate::failure::Failure;
use crate::output::{add_protocol, emit, emit_json, protocol_suffix};

/// `mcpc ping [SERVER]`.
pub(crate) async fn ping(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    let connected = ctx.connect(&server).await?;
    let start = Instant::now();
    ctx.registry.ping(&server).await.map_err(|e| ctx.fail(e))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let connect_ms = connected.as_secs_f64() * 1000.0;
    let status = ctx.registry.status(&server).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Text => emit(&format!(
            "{server}: pong in {ms:.1} ms, connected in {connect_ms:.1} ms{}",
            protocol_suffix(&status)
        )),
        Output::Json => {
            let mut v = json!({"server": server, "ok": true, "ms": ms, "connect_ms": connect_ms});
            add_protocol(&mut v, &status);
            emit_json(&v);
        }
    }
    Ok(0)
}
