//! Interop in the handshake era over stdio: the suite of
//! `mcp_test_support::interop::everything` against
//! `@modelcontextprotocol/server-everything` from npm (`node
//! $MCP_EVERYTHING_JS stdio`), one process per client, and what only stdio
//! does: the environment the server is given.
//!
//! `cargo xtask interop` installs the pinned version and runs this module
//! with `MCP_EVERYTHING_JS` set to its entry point.

use std::collections::BTreeMap;

use mcp_client_stdio::{EnvMode, ServerCommand, StdioOptions, StdioTransport};
use mcp_peer::{Client, ClientOptions};
use mcp_test_support::bounded;
use mcp_test_support::interop::everything::{MARKER, SERVER_NAME};
use mcp_test_support::interop::{Connect, Over};

/// The server, started for each client with a clean environment and
/// [`MARKER`].
#[derive(Debug)]
struct Everything;

impl Connect for Everything {
    type Transport = StdioTransport;

    fn over(&self) -> Over {
        Over::Stdio
    }

    async fn connect(&self, configure: impl FnOnce(&mut ClientOptions)) -> Client<StdioTransport> {
        let js = std::env::var("MCP_EVERYTHING_JS").expect(
            "MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`",
        );
        let command = ServerCommand::new("node").arg(js).arg("stdio").env(MARKER.0, MARKER.1);
        let mut options = StdioOptions::new(SERVER_NAME);
        options.env = EnvMode::Clean;
        configure(&mut options.client);
        mcp_client_stdio::spawn(command, options).await.expect("server-everything starts")
    }
}

mcp_test_support::everything_tests!(Everything);

/// The server gets the variable it was given, and nothing else of ours
/// (`EnvMode::Clean`).
#[tokio::test]
async fn the_server_gets_a_clean_environment() {
    bounded(async {
        let c = Everything.connect(|_| {}).await;
        let env: BTreeMap<String, String> = c.call_tool_as("get-env", ()).await.unwrap();
        assert_eq!(env.get(MARKER.0).map(String::as_str), Some(MARKER.1), "{env:?}");
        assert!(!env.contains_key("CARGO_MANIFEST_DIR"), "the host's environment leaked");
        c.close().await.unwrap();
    })
    .await;
}
