//! Connects to a Streamable HTTP server, lists its tools, and closes the
//! session. With no URL it runs the project's test server in-process, so
//! it works with no network.
//!
//! `cargo run -p mcp-http --example list_tools -- https://example.com/mcp`
//! (a bearer token, if the server wants one, from `MCP_BEARER_TOKEN`).
#![allow(clippy::print_stdout)]

use mcp_http::{HttpOptions, StaticAuth, redact_endpoint};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut local = None;
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => {
            let server = mcp_testkit::serve_http(mcp_testkit::HttpConfig::default()).await?;
            let url = server.url();
            local = Some(server);
            url
        }
    };
    let mut options = HttpOptions::new("example");
    if let Ok(token) = std::env::var("MCP_BEARER_TOKEN") {
        options.auth = StaticAuth::Bearer(token);
    }
    let client = mcp_http::connect(&url, options)?;
    let init = client.initialize().await?;
    // Never print the URL itself: it may carry a key in its query.
    println!(
        "{} {} at {} (protocol {})",
        init.server_info.name,
        init.server_info.version,
        redact_endpoint(&url),
        init.protocol_version
    );
    for tool in client.list_tools().await?.iter() {
        println!("  {:<14} {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }
    client.close().await?;
    if let Some(server) = local {
        server.shutdown().await;
    }
    Ok(())
}
