//! Ours in this process: connected as `stdio-bench` and `http-bench`
//! connect it, and its calls, sequential or in flight.

use std::time::{Duration, Instant};

use mcp_bench::era::Era;
use mcp_bench::ours::{self, Ours};
use mcp_http::HttpOptions;

use crate::phase::Target;

/// Connected and pinned to `era`, as `stdio-bench` and `http-bench` do.
pub(crate) async fn connect_ours(target: &Target, era: Era) -> Result<Ours, String> {
    let choice = era.choice();
    match target {
        Target::Stdio(program, args) => {
            Ok(Ours::Stdio(ours::spawn_program(program, args, choice).await?))
        }
        Target::Http(server) => {
            let mut options = HttpOptions::new("bench");
            options.client.era = choice;
            Ok(Ours::Http(ours::connect_http(&server.url, options, "ours").await?))
        }
    }
}

/// One echo call of ours; a failure ends the benchmark.
async fn call(client: &Ours) {
    if let Err(e) = client.echo().await {
        panic!("ours: echo failed: {e}");
    }
}

/// `n` calls with `depth` in flight; how many were made. With `lat`, each
/// call's latency (sequential only). A failed call ends the benchmark.
pub(crate) async fn run_ours(
    ours: &Ours,
    n: usize,
    depth: usize,
    lat: Option<&mut Vec<Duration>>,
) -> usize {
    let per_worker = n / depth.max(1);
    if depth <= 1 {
        let mut lat = lat;
        for _ in 0..n {
            let start = Instant::now();
            call(ours).await;
            if let Some(lat) = lat.as_deref_mut() {
                lat.push(start.elapsed());
            }
        }
        return n;
    }
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..depth {
        let client = ours.clone();
        set.spawn(async move {
            for _ in 0..per_worker {
                call(&client).await;
            }
        });
    }
    while let Some(done) = set.join_next().await {
        done.expect("an ours worker panicked");
    }
    per_worker * depth
}
