//! The client's decisions (`mcp_proto::client::decide`), each checked on a
//! table of cases: every condition both ways.
//! The errors and transport facts the tables share are here; the tables
//! are in `decide/`, one file per decision.

#[path = "decide/eras.rs"]
mod eras;
#[path = "decide/input.rs"]
mod input;
#[path = "decide/opening.rs"]
mod opening;
#[path = "decide/probe.rs"]
mod probe;
#[path = "decide/recovery.rs"]
mod recovery;
#[path = "decide/results.rs"]
mod results;

use std::time::Duration;

use mcp_proto::client::ClientError;
use mcp_proto::client::decide::{Attempt, Failure, TransportFacts};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::{Era, ProtocolVersion as V, error_code};
use serde_json::json;

const ALL: &[V] = V::SUPPORTED;
const LEGACY_ONLY: &[V] = &[V::V2025_06_18, V::V2025_11_25];
const MODERN_ONLY: &[V] = &[V::V2026_07_28];

fn rpc(code: i64) -> ClientError {
    ClientError::from_rpc("m", ErrorObject::new(code, "no"))
}

fn refused(listed: &[&str]) -> ClientError {
    let mut error = ErrorObject::new(error_code::UNSUPPORTED_PROTOCOL_VERSION, "unsupported");
    error.data = Some(json!({"supported": listed, "requested": "2026-07-28"}));
    ClientError::from_rpc("server/discover", error)
}

fn header_mismatch() -> ClientError {
    rpc(error_code::HEADER_MISMATCH)
}

fn missing_capability() -> ClientError {
    rpc(error_code::MISSING_CLIENT_CAPABILITY)
}

fn closed() -> ClientError {
    ClientError::Closed { method: "m".into() }
}

fn timeout() -> ClientError {
    ClientError::Timeout { method: "m".into(), after: Duration::from_secs(1) }
}

const NOTHING: TransportFacts =
    TransportFacts { refusal: false, stream_lost: false, session_expired: false };
const REFUSAL: TransportFacts = TransportFacts { refusal: true, ..NOTHING };
const STREAM_LOST: TransportFacts = TransportFacts { stream_lost: true, ..NOTHING };
const SESSION_EXPIRED: TransportFacts = TransportFacts { session_expired: true, ..NOTHING };

fn attempt<'a>(method: &'a str, era: Option<Era>, failure: Failure<'a>) -> Attempt<'a> {
    Attempt {
        method,
        era,
        failure,
        already_retried: false,
        has_tool: false,
        lost_connection: false,
        transport_resends_after_loss: false,
    }
}
