//! `http-bench startup`: from nothing to a session ready for requests, for
//! every contender in both eras.

use std::time::{Duration, Instant};

use mcp_bench::era::Era;
use mcp_bench::proc::{HttpServer, unpin};
use mcp_bench::report::{median_f64, ms, ratio};
use mcp_bench::{runtime, start_rounds};
use mcp_http::mcp_peer::EraChoice;
use mcp_http::{HttpOptions, HttpPool};

use crate::clients::{
    connect_ours, connect_ours_in, connect_ours_with, connect_rmcp_default, connect_rmcp_pooled,
    pooled_reqwest,
};
use crate::flags::Config;
use crate::raw::{Raw, RawSame};

/// `startup`: a new client to a ready session, in both eras, and a second
/// client sharing a pool.
pub(crate) fn startup(config: &Config) -> Result<String, String> {
    unpin()?;
    let (starts, rounds) = if config.quick { (2, 1) } else { (20, 5) };
    let servers = [
        HttpServer::start(&config.testkit, Era::Legacy.testkit_args())?,
        HttpServer::start(&config.testkit, Era::Modern.testkit_args())?,
    ];
    let rt = runtime();
    let shared = pooled_reqwest();
    // Ours with a pool every one of its clients shares, as rmcp pooled
    // shares its `reqwest::Client`.
    let pool = HttpPool::new(&HttpOptions::new("bench")).map_err(|e| e.to_string())?;
    // Contenders 0-3: ours, rmcp default, rmcp pooled, raw on the
    // handshake-era server; 4-7 the same on the stateless one; 8: ours
    // left to probe (`EraChoice::Auto`, the default) on the handshake-era
    // server; 9 and 10: ours with the shared pool, in each era; 11: raw
    // hyper making every exchange ours makes in the handshake era.
    let once = |which: usize| -> Result<Duration, String> {
        let era = if (4..8).contains(&which) || which == 10 { Era::Modern } else { Era::Legacy };
        let url = &servers[usize::from(era == Era::Modern)].url;
        rt.block_on(async {
            let start = Instant::now();
            let time = match which % 4 {
                _ if which == 11 => {
                    let raw = RawSame::connect(url).await?;
                    let time = start.elapsed();
                    raw.close().await?;
                    time
                }
                _ if which >= 9 => {
                    let client = connect_ours_in(url, era.choice(), Some(&pool)).await?;
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    time
                }
                0 => {
                    let client = if which == 8 {
                        connect_ours_with(url, EraChoice::Auto).await?
                    } else {
                        connect_ours(url, era).await?
                    };
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
                    time
                }
                1 | 2 => {
                    let client = if which % 4 == 1 {
                        connect_rmcp_default(url, era).await?
                    } else {
                        connect_rmcp_pooled(url, shared.clone(), era).await?
                    };
                    let time = start.elapsed();
                    let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
                    time
                }
                _ => {
                    let raw = Raw::connect(url, era).await?;
                    let time = start.elapsed();
                    drop(raw);
                    time
                }
            };
            Ok(time)
        })
    };
    let times = start_rounds("http-bench", 12, rounds, starts, once)?;
    drop(servers);
    let m: Vec<f64> = times.iter().map(|t| median_f64(t)).collect();
    let d = |s: f64| ms(Duration::from_secs_f64(s));
    // `same`: raw hyper making our client's exchanges (in the stateless era
    // the raw contender is that already: one `server/discover`).
    let row = |label: &str, m: &[f64], same: f64| {
        format!(
            "| {label} | {} ms | {} ms | {} ms | {} ms | {} ms | {} | {} | {} |\n",
            d(m[0]),
            d(m[1]),
            d(m[2]),
            d(m[3]),
            d(same),
            ratio(m[1], m[0]),
            ratio(m[0], m[3]),
            ratio(m[0], same),
        )
    };
    Ok(format!(
        "| transport | mcp-http (ours) | rmcp default | rmcp pooled (client shared) | raw hyper | raw hyper, same exchanges | rmcp default / ours | ours / raw | ours / raw, same exchanges |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n\
         {}{}\n\
         Raw hyper makes the fewest exchanges the era allows (handshake era: `initialize` and `notifications/initialized` \
         on one connection). \"Same exchanges\" is raw hyper making every exchange our client makes, in its order: in the \
         handshake era also the standalone GET after `initialized`, started in a task of its own and not waited for \
         (ours opens the stream in the background, as rmcp does), and at close, untimed, the GET given up and the \
         session's `DELETE` (on the first connection if the GET had not taken it yet); in the stateless era \
         ours makes raw's one `server/discover`, and the column repeats raw's figure.\n\n\
         Ours left to find the era (`EraChoice::Auto`, the default) on the handshake-era server: {} ms. Over HTTP the client \
         remembers a handshake-era origin for the life of the process, so only the first client of a process pays the \
         `server/discover` round trip; the median here is of later clients.\n\n\
         | second client, same origin, shared pool | mcp-http (ours, one `HttpPool`) | rmcp pooled (one `reqwest::Client`) | rmcp pooled / ours |\n|---|---:|---:|---:|\n\
         | handshake era: new client + initialize | {} ms | {} ms | {} |\n\
         | stateless era: new client + `server/discover` | {} ms | {} ms | {} |\n",
        row(
            "HTTP: new client + initialize (+ `initialized`; all pinned to the handshake era)",
            &m[0..4],
            m[11],
        ),
        row(
            "HTTP: new client + `server/discover` (`--era modern`; all pinned to the stateless era)",
            &m[4..8],
            m[7],
        ),
        d(m[8]),
        d(m[9]),
        d(m[2]),
        ratio(m[2], m[9]),
        d(m[10]),
        d(m[6]),
        ratio(m[6], m[10]),
    ))
}
