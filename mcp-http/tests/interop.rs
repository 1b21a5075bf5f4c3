//! Interop: the Streamable HTTP client against
//! `@modelcontextprotocol/server-everything` from npm, a server nobody in
//! this project wrote, in its `streamableHttp` mode on a free loopback port.
//!
//! `cargo xtask interop` installs the pinned version and runs this file with
//! `MCP_EVERYTHING_JS` set to its entry point.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_http::{HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_proto::render_tool_result;
use serde_json::json;

/// How long the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(15);

/// The node process; killed when dropped (a failing test too).
struct Everything {
    child: Child,
    port: u16,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// Starts `node $MCP_EVERYTHING_JS streamableHttp` on a free port and
    /// waits until it accepts connections.
    fn start() -> Everything {
        let js = std::env::var("MCP_EVERYTHING_JS").expect(
            "MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`",
        );
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new("node")
            .arg(js)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let mut server = Everything { child, port };
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
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

fn client(server: &Everything) -> HttpClient {
    let mut options = HttpOptions::new("everything");
    options.request_timeout = Duration::from_secs(20);
    HttpClient::connect(&server.url(), options).expect("a valid endpoint")
}

#[tokio::test]
async fn handshake_tools_echo_and_sum() {
    let server = Everything::start();
    let c = client(&server);
    tokio::time::timeout(Duration::from_secs(60), async {
        let init = c.initialize().await.unwrap();
        assert!(init.server_info.name.contains("everything"), "{:?}", init.server_info);
        assert!(init.capabilities.tools.is_some());
        assert!(c.has_session());

        let tools = c.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in ["echo", "get-sum", "trigger-long-running-operation", "get-tiny-image"] {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }

        let echo = c
            .call_tool_with(
                "echo",
                json!({"message": "hello over HTTP"}).as_object().cloned(),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert!(render_tool_result(&echo).text.contains("hello over HTTP"), "{echo:?}");

        let sum = c
            .call_tool_with(
                "get-sum",
                json!({"a": 19, "b": 23}).as_object().cloned(),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert!(render_tool_result(&sum).text.contains("42"), "{sum:?}");

        c.ping().await.unwrap();
        c.close().await.unwrap();
    })
    .await
    .expect("the exchange finished in time");
}

#[tokio::test]
async fn long_running_tool_reports_progress_over_sse() {
    let server = Everything::start();
    let c = client(&server);
    tokio::time::timeout(Duration::from_secs(60), async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push(p.progress))),
            ..Default::default()
        };
        let result = c
            .call_tool_with(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 4}).as_object().cloned(),
                options,
            )
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 4, "one progress notification per step: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "progress increases: {seen:?}");
        c.close().await.unwrap();
    })
    .await
    .expect("the call finished in time");
}
