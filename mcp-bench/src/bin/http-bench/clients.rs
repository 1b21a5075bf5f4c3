//! The two clients of `http-bench`, connected as every mode connects them:
//! ours (`mcp-http`) and rmcp's Streamable HTTP client, its default and
//! pooled.

use mcp_bench::era::Era;
use mcp_bench::theirs::{self, Rmcp};
use mcp_http::mcp_peer::EraChoice;
use mcp_http::{HttpClient, HttpOptions, HttpPool};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::MAX_DEPTH;

/// Ours pinned to `era`.
pub(crate) async fn connect_ours(url: &str, era: Era) -> Result<HttpClient, String> {
    connect_ours_with(url, era.choice()).await
}

/// Ours with the era `choice` (`EraChoice::Auto`: left to find it).
pub(crate) async fn connect_ours_with(url: &str, choice: EraChoice) -> Result<HttpClient, String> {
    connect_ours_in(url, choice, None).await
}

/// Ours, through `pool` when one is given (shared with earlier clients).
pub(crate) async fn connect_ours_in(
    url: &str,
    choice: EraChoice,
    pool: Option<&HttpPool>,
) -> Result<HttpClient, String> {
    let mut o = HttpOptions::new("bench");
    o.client.era = choice;
    o.pool = pool.cloned();
    let (no_stream, wait) = *STREAM_ENV;
    o.event_stream = !no_stream;
    o.wait_for_event_stream = wait;
    mcp_bench::ours::connect_http(url, o, "ours").await
}

/// `BENCH_NO_EVENT_STREAM` and `BENCH_WAIT_EVENT_STREAM` (set or not), read
/// once: a look-up in the environment costs about as much as a thousand
/// instructions, which a start's count would carry.
static STREAM_ENV: std::sync::LazyLock<(bool, bool)> = std::sync::LazyLock::new(|| {
    let set = |name| std::env::var_os(name).is_some();
    (set("BENCH_NO_EVENT_STREAM"), set("BENCH_WAIT_EVENT_STREAM"))
});

/// rmcp's default: `StreamableHttpClientTransport::from_uri`.
pub(crate) async fn connect_rmcp_default(url: &str, era: Era) -> Result<Rmcp, String> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    theirs::serve(transport, era, "rmcp").await
}

/// A kept-alive, pooled `reqwest::Client`, as BENCH-NOTES describes rmcp's
/// best configuration.
pub(crate) fn pooled_reqwest() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("a reqwest client")
}

/// rmcp given `client` and `max_concurrent_requests(MAX_DEPTH)`.
pub(crate) async fn connect_rmcp_pooled(
    url: &str,
    client: reqwest::Client,
    era: Era,
) -> Result<Rmcp, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .max_concurrent_requests(MAX_DEPTH);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    theirs::serve(transport, era, "rmcp pooled").await
}
