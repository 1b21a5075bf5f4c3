//! Interop in the stateless era (2026-07-28) over Streamable HTTP: the
//! suite of `mcp_test_support::interop::sdk_v2` against the server written
//! with the TypeScript SDK v2 in its `http` mode (the SDK's
//! `createMcpHandler` on `/mcp`), on a loopback port the server picks, one
//! server per test. In the stateless era there is no session, no GET
//! stream, every request its own POST; the SDK serves the handshake era on
//! the same endpoint statelessly (its legacy leg).
//!
//! `cargo xtask interop` installs the pinned SDK and runs this module with
//! `MCP_TS_SERVER_JS` set to the script's installed copy.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_http::{HttpOptions, HttpTransport};
use mcp_peer::{Client, ClientOptions};
use mcp_test_support::interop::{Connect, Over, sdk_v2};

/// How long the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(15);

/// The node process; killed when dropped (a failing test too).
#[derive(Debug)]
struct TsServer {
    child: Child,
    url: String,
}

impl Drop for TsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TsServer {
    /// Starts `node $MCP_TS_SERVER_JS http` on a port of its choosing and
    /// waits for the line that says where it listens.
    fn start() -> TsServer {
        let js = std::env::var("MCP_TS_SERVER_JS").expect(
            "MCP_TS_SERVER_JS must point at the installed ts-server.mjs: run `cargo xtask interop`",
        );
        let mut child = Command::new("node")
            .arg(js)
            .arg("http")
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep reading so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let mut server = TsServer { child, url: String::new() };
        match rx.recv_timeout(STARTUP) {
            Ok(line) => {
                let url = line
                    .strip_prefix("listening on ")
                    .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"));
                server.url = url.to_owned();
            }
            Err(_) => {
                let status = server.child.try_wait();
                panic!("the server did not listen within {STARTUP:?} ({status:?})");
            }
        }
        server
    }
}

impl Connect for TsServer {
    type Transport = HttpTransport;

    fn over(&self) -> Over {
        Over::StreamableHttp
    }

    async fn connect(&self, configure: impl FnOnce(&mut ClientOptions)) -> Client<HttpTransport> {
        let mut options = HttpOptions::new(sdk_v2::SERVER_NAME);
        configure(&mut options.client);
        mcp_http::connect(&self.url, options).expect("a valid endpoint")
    }

    /// No session, not the 2024-11-05 transport, no GET stream (405).
    async fn assert_stateless(&self, client: &Client<HttpTransport>) {
        assert!(!client.transport().has_session());
        assert!(!client.transport().is_legacy());
        client.initialize().await.unwrap();
        assert!(!client.transport().open_event_stream().await.unwrap());
    }
}

mcp_test_support::sdk_v2_tests!(TsServer::start());
