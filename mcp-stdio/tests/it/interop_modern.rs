//! Interop in the stateless era over stdio: the suite of
//! `mcp_test_support::interop::sdk_v2` against the server written with the
//! TypeScript SDK v2 (`node $MCP_TS_SERVER_JS stdio`), one process per
//! client.
//!
//! `cargo xtask interop` installs the pinned SDK and runs this module with
//! `MCP_TS_SERVER_JS` set to the script's installed copy.

use mcp_client_stdio::{ServerCommand, StdioOptions, StdioTransport};
use mcp_peer::{Client, ClientOptions};
use mcp_test_support::interop::{Connect, Over, sdk_v2};

/// The server, started for each client.
#[derive(Debug)]
struct TsServer;

impl Connect for TsServer {
    type Transport = StdioTransport;

    fn over(&self) -> Over {
        Over::Stdio
    }

    async fn connect(&self, configure: impl FnOnce(&mut ClientOptions)) -> Client<StdioTransport> {
        let js = std::env::var("MCP_TS_SERVER_JS").expect(
            "MCP_TS_SERVER_JS must point at the installed ts-server.mjs: run `cargo xtask interop`",
        );
        let mut options = StdioOptions::new(sdk_v2::SERVER_NAME);
        configure(&mut options.client);
        let command = ServerCommand::new("node").arg(js).arg("stdio");
        mcp_client_stdio::spawn(command, options).await.expect("the server starts")
    }
}

mcp_test_support::sdk_v2_tests!(TsServer);
