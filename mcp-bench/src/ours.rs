//! Our clients as the benchmarks start and call them: a spawned stdio
//! client or a Streamable HTTP one, connected and past its handshake; the
//! echo call; either transport behind one face ([`Ours`]) for the
//! benchmarks that drive both.

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_client_stdio::mcp_peer::{Client, EraChoice, Transport};
use mcp_client_stdio::{ServerCommand, StdioClient, StdioOptions};
use mcp_http::{HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;

use crate::echo_args;

/// How long closing a client may take.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Spawns `command` and initializes the client (its handshake, or
/// `server/discover` in the stateless era); errors start with `label`.
pub async fn spawn_stdio(
    command: ServerCommand,
    options: StdioOptions,
    label: &str,
) -> Result<StdioClient, String> {
    let client = mcp_client_stdio::spawn(command, options)
        .await
        .map_err(|e| format!("{label}: spawn: {e}"))?;
    client.initialize().await.map_err(|e| format!("{label}: initialize: {e}"))?;
    Ok(client)
}

/// `program args...` spawned and initialized, pinned to the era `choice`:
/// ours over stdio as the round-trip benchmarks start it (errors start
/// with `ours`). The environment variable `MCP_BENCH_REPLY_SPIN_US`, when
/// set to a number, replaces the reader's default poll before parking
/// (`StdioOptions::reply_spin`), to compare settings in one build.
pub async fn spawn_program(
    program: &Path,
    args: &[String],
    choice: EraChoice,
) -> Result<StdioClient, String> {
    let command = ServerCommand::new(program.to_string_lossy()).args(args.iter().cloned());
    let mut options = StdioOptions::new("bench");
    options.client.era = choice;
    reply_spin_from_env(&mut options);
    spawn_stdio(command, options, "ours").await
}

/// The reader's poll before parking (`StdioOptions::reply_spin`) from the
/// environment variable `MCP_BENCH_REPLY_SPIN_US` when it is set to a
/// number of µs, to compare settings in one build; else left as it is.
pub fn reply_spin_from_env(options: &mut StdioOptions) {
    if let Some(us) = std::env::var("MCP_BENCH_REPLY_SPIN_US").ok().and_then(|v| v.parse().ok()) {
        options.reply_spin = Duration::from_micros(us);
    }
}

/// A client of `url`, initialized; errors start with `label`.
pub async fn connect_http(
    url: &str,
    options: HttpOptions,
    label: &str,
) -> Result<HttpClient, String> {
    let client = mcp_http::connect(url, options).map_err(|e| format!("{label}: {e}"))?;
    client.initialize().await.map_err(|e| format!("{label}: initialize: {e}"))?;
    Ok(client)
}

/// One `tools/call echo` ([`echo_args`]); an error, or a result flagged
/// `isError`, as text.
pub async fn echo<T: Transport>(client: &Client<T>) -> Result<(), String> {
    match client.call_tool_with("echo", Some(echo_args()), RequestOptions::default()).await {
        Ok(r) if !r.is_error.unwrap_or(false) => Ok(()),
        Ok(_) => Err("the echo answered isError".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// [`echo`], a failure ending the benchmark (a contender that fails is
/// not measured). The timed loops' call: written out rather than through
/// [`echo`], whose extra future layer costs about 40 instructions a call.
pub async fn echo_or_panic<T: Transport>(client: &Client<T>) {
    match client.call_tool_with("echo", Some(echo_args()), RequestOptions::default()).await {
        Ok(r) if !r.is_error.unwrap_or(false) => {}
        Ok(_) => panic!("ours: echo failed: it answered isError"),
        Err(e) => panic!("ours: echo failed: {e}"),
    }
}

/// `n` [`echo_or_panic`] calls in turn, each timed into `lat`: the timed
/// loop of the sequential phases, the call awaited directly in it.
pub async fn timed_echoes<T: Transport>(client: &Client<T>, n: usize, lat: &mut Vec<Duration>) {
    for _ in 0..n {
        let start = Instant::now();
        echo_or_panic(client).await;
        lat.push(start.elapsed());
    }
}

/// `n` [`echo_or_panic`] calls in turn: one worker of an in-flight phase,
/// spawned as it is (it owns its client).
pub async fn echoes<T: Transport>(client: Client<T>, n: usize) {
    for _ in 0..n {
        echo_or_panic(&client).await;
    }
}

/// Our client over either transport.
#[derive(Clone, Debug)]
pub enum Ours {
    /// `mcp-client-stdio`.
    Stdio(StdioClient),
    /// `mcp-http`.
    Http(HttpClient),
}

impl Ours {
    /// One [`echo`].
    pub async fn echo(&self) -> Result<(), String> {
        match self {
            Ours::Stdio(c) => echo(c).await,
            Ours::Http(c) => echo(c).await,
        }
    }

    /// `tools/list`: how many tools the server has.
    pub async fn list_tools(&self) -> Result<usize, String> {
        match self {
            Ours::Stdio(c) => c.list_tools().await.map(|t| t.len()).map_err(|e| e.to_string()),
            Ours::Http(c) => c.list_tools().await.map(|t| t.len()).map_err(|e| e.to_string()),
        }
        .map_err(|e| format!("tools/list: {e}"))
    }

    /// Closes the session (bounded in time; an error is of no interest).
    pub async fn close(&self) {
        match self {
            Ours::Stdio(c) => {
                let _ = tokio::time::timeout(CLOSE_WAIT, c.close()).await;
            }
            Ours::Http(c) => {
                let _ = tokio::time::timeout(CLOSE_WAIT, c.close()).await;
            }
        }
    }
}
