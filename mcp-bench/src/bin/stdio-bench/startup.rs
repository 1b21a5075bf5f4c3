//! `stdio-bench startup`: spawn + handshake (or `server/discover`) of each
//! contender, in both eras, and ours left to find the era.

use std::time::{Duration, Instant};

use mcp_bench::era::Era;
use mcp_bench::proc::unpin;
use mcp_bench::report::{median_f64, ms, ratio};
use mcp_bench::{runtime, start_rounds};
use mcp_client_stdio::mcp_peer::EraChoice;
use tokio::runtime::Runtime;

use crate::clients::{spawn_ours_with, spawn_rmcp};
use crate::flags::Config;
use crate::raw::raw_pipe;
use crate::server::ServerSpec;

pub(crate) fn startup(config: &Config) -> Result<String, String> {
    unpin()?;
    let (starts, rounds) = if config.quick { (2, 1) } else { (20, 5) };
    let rt = runtime();
    let servers = startup_servers(config);
    // Contenders 0-2: ours, rmcp, raw on the handshake-era server; 3-5 the
    // same on the stateless one; 6: ours left to probe (`EraChoice::Auto`,
    // the default) on the handshake-era server.
    let once = |which: usize| start_once(&rt, &servers, which);
    let times = start_rounds("stdio-bench", 7, rounds, starts, once)?;
    let m: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    Ok(format!(
        "| transport | mcp-stdio (ours) | rmcp | raw pipe | rmcp / ours | ours / raw |\n|---|---:|---:|---:|---:|---:|\n\
         | stdio: spawn `mcp-testkit stdio` + initialize (all pinned to the handshake era) | {} ms | {} ms | {} ms | {} | {} |\n\
         | stdio: spawn `mcp-testkit stdio --era modern` + `server/discover` (all pinned to the stateless era) | {} ms | {} ms | {} ms | {} | {} |\n\n\
         Ours left to find the era (`EraChoice::Auto`, the default) on the handshake-era server: {} ms \
         (`server/discover` answered with an error, then `initialize`: one more round trip than pinned).\n",
        d(m[0]),
        d(m[1]),
        d(m[2]),
        ratio(m[1], m[0]),
        ratio(m[0], m[2]),
        d(m[3]),
        d(m[4]),
        d(m[5]),
        ratio(m[4], m[3]),
        ratio(m[3], m[5]),
        d(m[6]),
    ))
}

/// The servers of the start-up measure: the handshake-era testkit, then the
/// stateless-era one.
pub(crate) fn startup_servers(config: &Config) -> [ServerSpec; 2] {
    [
        ServerSpec::testkit(&config.testkit, Era::Legacy),
        ServerSpec::testkit(&config.testkit, Era::Modern),
    ]
}

/// One start of contender `which` (0 ours, 1 rmcp, 2 the raw pipe on the
/// handshake-era server; 3-5 the same on the stateless one; 6 ours with
/// `EraChoice::Auto` on the handshake-era server): the time from the spawn
/// to the end of the handshake. Closing is not timed.
pub(crate) fn start_once(
    rt: &Runtime,
    servers: &[ServerSpec; 2],
    which: usize,
) -> Result<Duration, String> {
    let server = &servers[usize::from((3..6).contains(&which))];
    match which % 3 {
        0 => rt.block_on(async {
            let choice = (which == 6).then_some(EraChoice::Auto);
            let start = Instant::now();
            let client = spawn_ours_with(server, choice).await?;
            let time = start.elapsed();
            let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
            Ok(time)
        }),
        1 => rt.block_on(async {
            let start = Instant::now();
            let client = spawn_rmcp(server).await?;
            let time = start.elapsed();
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
            Ok(time)
        }),
        _ => {
            let start = Instant::now();
            let pipe = raw_pipe(server)?;
            let time = start.elapsed();
            drop(pipe);
            Ok(time)
        }
    }
}
