//! The client core driven with a virtual clock and no process: a scripted
//! server answers through plain values. This file holds the shared rig;
//! the tests are in `client_core/`, one file per subject.

#[path = "client_core/deadlines.rs"]
mod deadlines;
/// The decisions of `mcp_proto::client::decide`, on tables of cases.
#[path = "client_core/decide.rs"]
mod decide;
#[path = "client_core/handshake.rs"]
mod handshake;
#[path = "client_core/notifications.rs"]
mod notifications;
#[path = "client_core/requests.rs"]
mod requests;
#[path = "client_core/server_requests.rs"]
mod server_requests;
#[path = "client_core/stateless.rs"]
mod stateless;

use std::time::Instant;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{ClientCore, CoreConfig, Event};
use mcp_proto::jsonrpc::{Message, RequestId};
use mcp_proto::types::Implementation;
use serde_json::{Value, json};

type Core = ClientCore<&'static str>;

fn config() -> CoreConfig {
    CoreConfig::new(Implementation::new("test-client", "1.0.0"))
}

fn msg(v: Value) -> Message {
    serde_json::from_value(v).unwrap()
}

fn transmitted(core: &mut Core) -> Vec<Value> {
    std::iter::from_fn(|| core.poll_transmit()).map(|m| serde_json::to_value(&m).unwrap()).collect()
}

fn events(core: &mut Core) -> Vec<Event<&'static str>> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

fn init_reply(id: &RequestId, version: &str) -> Message {
    msg(json!({"jsonrpc":"2.0","id":id,"result":{
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "srv", "version": "0.1"}
    }}))
}

/// A core in the stateless era (no discovery result).
fn stateless() -> Core {
    let mut core = Core::new(config());
    core.enter_modern(ProtocolVersion::LATEST, None).unwrap();
    core
}

/// A core that finished the handshake at `t0`.
fn ready(t0: Instant) -> Core {
    ready_with(json!({}), t0)
}

/// A core that declared `capabilities` and finished the handshake at `t0`.
fn ready_with(capabilities: Value, t0: Instant) -> Core {
    let mut config = config();
    config.capabilities = serde_json::from_value(capabilities).unwrap();
    let mut core = Core::new(config);
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(init_reply(&req.id, "2025-11-25"), t0);
    let _ = transmitted(&mut core);
    let _ = events(&mut core);
    assert!(core.is_ready());
    core
}
