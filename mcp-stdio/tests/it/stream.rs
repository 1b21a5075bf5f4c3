//! The transport over any reader and writer: a testkit process the test
//! spawned itself (its pipes are just a stream), and a Unix socket.

use std::process::Stdio;
use std::time::Duration;

use mcp_client_stdio::{Error, StreamOptions, connect_stream};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{bounded_by, text_blocks};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

const TEST_TIMEOUT: Duration = Duration::from_secs(30);

fn options() -> StreamOptions {
    let mut o = StreamOptions::new("stream");
    o.request_timeout = Duration::from_secs(10);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o
}

/// `mcp-testkit stdio` with piped stdin and stdout, started here.
fn testkit() -> Child {
    Command::new(mcp_testkit::binary_path())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the testkit starts")
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

#[tokio::test]
async fn a_host_s_own_pipes_carry_the_protocol_and_their_end_fails_the_calls() {
    bounded_by(TEST_TIMEOUT, async {
        let mut child = testkit();
        let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let mut o = options();
        o.max_line_length = 32 * 1024;
        let client = connect_stream(stdout, stdin, o);
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        let r = client.call_tool_with(
            "echo",
            args(json!({"message": "piped"})),
            RequestOptions::default(),
        );
        assert_eq!(text_blocks(&r.await.unwrap()), "piped");
        // Garbage and an over-long line are skipped and counted, as over stdio.
        let noisy = args(json!({"lines": 0, "long_line_bytes": 100_000}));
        let r = client.call_tool_with("noisy", noisy, RequestOptions::default()).await.unwrap();
        assert_eq!(r.is_error, None);
        assert!(client.transport().dropped_lines() >= 2, "{}", client.transport().dropped_lines());
        client.ping().await.unwrap();
        // The peer goes away: what waits, and what comes after, fails.
        let hang = client.call_tool_with("hang", None::<()>, RequestOptions::default());
        let kill = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            child.kill().await.unwrap();
        };
        let (hung, ()) = tokio::join!(hang, kill);
        assert!(
            matches!(hung, Err(Error::StreamEnded { ref method, .. }) if method == "tools/call"),
            "{hung:?}"
        );
        let after = client.ping().await.unwrap_err();
        assert!(matches!(after, Error::StreamEnded { .. } | Error::Io { .. }), "{after:?}");
        assert!(after.to_string().contains("stream"), "{after}");
        client.close().await.unwrap();
        assert!(matches!(client.ping().await.unwrap_err(), Error::Closed { .. }));
    })
    .await;
}

#[tokio::test]
async fn close_ends_the_peer_s_input() {
    bounded_by(TEST_TIMEOUT, async {
        let mut child = testkit();
        let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = connect_stream(stdout, stdin, options());
        client.ping().await.unwrap();
        client.close().await.unwrap();
        // The testkit exits at the end of its input.
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        assert!(status.expect("the peer saw the end of its input").unwrap().success());
    })
    .await;
}

#[cfg(unix)]
#[tokio::test]
async fn over_a_unix_socket() {
    bounded_by(TEST_TIMEOUT, async {
        let dir = mcp_test_support::TempDir::new("stdio-stream-socket");
        let socket = dir.path().join("mcp.sock");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        // The server side: each connection is a testkit's stdio.
        tokio::spawn(async move {
            let (conn, _) = listener.accept().await.unwrap();
            let mut child = testkit();
            let (mut out, mut inp) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
            let (mut read, mut write) = conn.into_split();
            let _ = tokio::join!(
                tokio::io::copy(&mut read, &mut inp),
                tokio::io::copy(&mut out, &mut write)
            );
            drop(child);
        });
        let (read, write) = tokio::net::UnixStream::connect(&socket).await.unwrap().into_split();
        let client = connect_stream(read, write, options());
        let r = client.call_tool_with(
            "echo",
            args(json!({"message": "socket"})),
            RequestOptions::default(),
        );
        assert_eq!(text_blocks(&r.await.unwrap()), "socket");
        client.close().await.unwrap();
    })
    .await;
}
