//! rmcp's client as the benchmarks start and call it: pinned to an era
//! (`initialize`, or `server/discover` with no fallback), the echo call.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{Peer, RoleClient, ServiceExt};

use crate::echo_args;
use crate::era::Era;

/// A running rmcp client with no handler of its own.
pub type Rmcp = RunningService<RoleClient, ()>;

/// rmcp's stateless era: `server/discover` (no fallback to `initialize`),
/// then the client context in every request's `_meta` (and, over HTTP,
/// the `Mcp-Method`/`Mcp-Name` headers).
pub fn discover_mode() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// rmcp's client on `transport`, past `initialize` (handshake era) or
/// `server/discover` (stateless era); errors start with `label`.
pub async fn serve<T, E, A>(transport: T, era: Era, label: &str) -> Result<Rmcp, String>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match era {
        Era::Legacy => ().serve(transport).await.map_err(|e| format!("{label}: initialize: {e}")),
        Era::Modern => {
            ().serve_with_lifecycle(transport, discover_mode())
                .await
                .map_err(|e| format!("{label}: server/discover: {e}"))
        }
    }
}

/// One `tools/call echo`; a failure ends the benchmark.
pub async fn echo_or_panic(peer: &Peer<RoleClient>) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = Some(echo_args());
    match peer.call_tool(params).await {
        Ok(r) if r.is_error != Some(true) => {}
        Ok(_) => panic!("rmcp: echo failed: it answered isError"),
        Err(e) => panic!("rmcp: echo failed: {e}"),
    }
}

/// `n` [`echo_or_panic`] calls in turn, each timed into `lat`: the timed
/// loop of the sequential phases, the call awaited directly in it.
pub async fn timed_echoes(peer: &Peer<RoleClient>, n: usize, lat: &mut Vec<Duration>) {
    for _ in 0..n {
        let start = Instant::now();
        echo_or_panic(peer).await;
        lat.push(start.elapsed());
    }
}

/// `n` [`echo_or_panic`] calls in turn: one worker of an in-flight phase,
/// spawned as it is (it owns its peer).
pub async fn echoes(peer: Peer<RoleClient>, n: usize) {
    for _ in 0..n {
        echo_or_panic(&peer).await;
    }
}
