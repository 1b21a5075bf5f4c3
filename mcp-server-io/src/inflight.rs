//! The cap on the requests one session runs at once, as a decision on
//! data: how many are open, the cap, and the answer to one more.
//!
//! A request takes a place while it runs, answered later
//! ([`Reply::Later`](crate::Reply::Later), [`Session::spawn_request`](crate::Session::spawn_request),
//! as a task or beside the driver), until it is answered, cancelled or
//! aborted; so does a `subscriptions/listen` until its stream ends. A
//! request answered at once, and what the session answers itself
//! (`initialize`, `ping`, `server/discover`, every error it makes), takes
//! none: it holds nothing once answered. Notifications
//! (`notifications/cancelled` above all) are never refused, so a client at
//! the cap can always free a place.
//!
//! A request over the cap is answered at once with [`SERVER_BUSY`]: its
//! future is dropped before it is first polled (the request never starts),
//! nothing else is lost, and the client may send it again once one of its
//! requests is answered. The session decides under the lock it takes to
//! record a running request, so the cap holds exactly however many tasks
//! hand it requests at once.
//!
//! ```
//! use mcp_server_io::inflight::{SERVER_BUSY, admit};
//!
//! assert!(admit(255, 256).is_ok());
//! let busy = admit(256, 256).unwrap_err();
//! assert_eq!(busy.code, SERVER_BUSY);
//! assert_eq!(busy.data, Some(serde_json::json!({ "maxInFlight": 256 })));
//! ```

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::json;

/// The default cap on the requests one session runs at once.
///
/// Four times what the busiest clients keep open (the host registry's fan-out
/// and the benches keep 64 in flight; a host behind the bridge, a few dozen),
/// and small enough that a session's open requests stay bounded in memory and
/// tasks.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// The error code of a request refused because its session runs its cap
/// of requests already (mcp-proto's
/// [`error_code::SERVER_BUSY`](mcp_proto::jsonrpc::error_code::SERVER_BUSY),
/// where the reasoning for the value is; named here too for servers).
pub use mcp_proto::jsonrpc::error_code::SERVER_BUSY;

/// Whether a session with `open` requests open may start one more under a
/// cap of `cap` (a cap of 0 is taken as 1): `Err` with the error to answer
/// it with when the cap is reached.
pub fn admit(open: usize, cap: usize) -> Result<(), ErrorObject> {
    let cap = cap.max(1);
    if open < cap { Ok(()) } else { Err(busy(cap)) }
}

/// The error of a request over the cap: the cap in its message and in its
/// data (`maxInFlight`).
fn busy(cap: usize) -> ErrorObject {
    let message = format!(
        "server busy: this session already runs its cap of {cap} requests at once; \
         retry once one of them is answered"
    );
    ErrorObject {
        data: Some(json!({ "maxInFlight": cap })),
        ..ErrorObject::new(SERVER_BUSY, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_admitted_below_the_cap_only() {
        // (open, cap, admitted, cap named in the refusal)
        let table = [
            (0, 1, true, 0),
            (1, 1, false, 1),
            (0, 0, true, 0),
            (1, 0, false, 1),
            (0, 256, true, 0),
            (255, 256, true, 0),
            (256, 256, false, 256),
            (257, 256, false, 256),
            (usize::MAX, usize::MAX, false, usize::MAX),
            (usize::MAX - 1, usize::MAX, true, 0),
        ];
        for (open, cap, admitted, named) in table {
            let decision = admit(open, cap);
            assert_eq!(decision.is_ok(), admitted, "open {open}, cap {cap}");
            if let Err(error) = decision {
                assert_eq!(error.code, SERVER_BUSY);
                assert_eq!(error.data, Some(json!({ "maxInFlight": named })));
                assert!(error.message.contains(&format!("cap of {named} requests")));
                assert!(error.message.contains("retry"));
            }
        }
    }

    #[test]
    fn the_code_is_one_implementations_may_use() {
        assert!((-32019..=-32000).contains(&SERVER_BUSY));
        for taken in [-32000, -32001, -32002] {
            assert_ne!(SERVER_BUSY, taken);
        }
    }
}
