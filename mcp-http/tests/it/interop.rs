//! Interop in the handshake era over HTTP: the suite of
//! `mcp_test_support::interop::everything` against
//! `@modelcontextprotocol/server-everything` from npm, a server nobody in
//! this project wrote, on a free loopback port, in both of its HTTP modes:
//! `streamableHttp` (Streamable HTTP, `/mcp`) and `sse` (the 2024-11-05
//! HTTP+SSE transport: `GET /sse`, then `POST /message`, which the client
//! falls back to when its `initialize` POST to `/sse` is refused). Every
//! test runs in each mode (the `streamable` and `legacy` modules), one
//! server per test.
//!
//! What HTTP adds to stdio is where messages travel: the server's requests
//! made inside a tool call (sampling, elicitation) and progress come on
//! that call's reply stream, while its unrelated messages (`roots/list`,
//! log messages, resource updates, task status) come on the standalone GET
//! stream (Streamable HTTP) or the one SSE stream (legacy). Each client
//! checks which transport it found and, over Streamable HTTP, that it has a
//! session.
//!
//! `cargo xtask interop` installs the pinned version and runs this module
//! with `MCP_EVERYTHING_JS` set to its entry point.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_http::{HttpOptions, HttpTransport};
use mcp_peer::{Client, ClientOptions};
use mcp_test_support::interop::everything::{MARKER, SERVER_NAME};
use mcp_test_support::interop::{Connect, Over};

/// How long the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(15);

/// The server's HTTP mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `streamableHttp`, endpoint `/mcp`.
    Streamable,
    /// `sse`, the 2024-11-05 transport, endpoint `/sse`.
    Legacy,
}

/// The node process; killed when dropped (a failing test too).
#[derive(Debug)]
struct Everything {
    child: Child,
    port: u16,
    mode: Mode,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// Starts `node $MCP_EVERYTHING_JS <mode>` on a free port and waits
    /// until it accepts connections.
    fn start(mode: Mode) -> Everything {
        let js = std::env::var("MCP_EVERYTHING_JS").expect(
            "MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`",
        );
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new("node")
            .arg(js)
            .arg(match mode {
                Mode::Streamable => "streamableHttp",
                Mode::Legacy => "sse",
            })
            .env("PORT", port.to_string())
            .env(MARKER.0, MARKER.1)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let mut server = Everything { child, port, mode };
        let started = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("server-everything exited before listening: {status}");
            }
            assert!(
                started.elapsed() < STARTUP,
                "server-everything did not listen within {STARTUP:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn url(&self) -> String {
        let path = match self.mode {
            Mode::Streamable => "mcp",
            Mode::Legacy => "sse",
        };
        format!("http://127.0.0.1:{}/{path}", self.port)
    }
}

impl Connect for Everything {
    type Transport = HttpTransport;

    fn over(&self) -> Over {
        match self.mode {
            Mode::Streamable => Over::StreamableHttp,
            Mode::Legacy => Over::HttpSse,
        }
    }

    async fn connect(&self, configure: impl FnOnce(&mut ClientOptions)) -> Client<HttpTransport> {
        let mut options = HttpOptions::new(SERVER_NAME);
        configure(&mut options.client);
        mcp_http::connect(&self.url(), options).expect("a valid endpoint")
    }

    /// The transport found is the server's mode; Streamable HTTP has a
    /// session.
    async fn opened(&self, client: &Client<HttpTransport>) {
        assert_eq!(client.transport().is_legacy(), self.mode == Mode::Legacy);
        if self.mode == Mode::Streamable {
            assert!(client.transport().has_session());
        }
    }

    /// The standalone GET stream (the SSE stream of the 2024-11-05
    /// transport) is open.
    async fn server_stream(&self, client: &Client<HttpTransport>) {
        client.initialize().await.unwrap();
        let open = client.transport().open_event_stream().await.unwrap();
        assert!(open, "the server offers a GET stream");
    }
}

mod streamable {
    mcp_test_support::everything_tests!(super::Everything::start(super::Mode::Streamable));
}

mod legacy {
    mcp_test_support::everything_tests!(super::Everything::start(super::Mode::Legacy));
}
