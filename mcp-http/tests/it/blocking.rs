//! The blocking client from plain functions: the test server runs on a
//! thread of its own; nothing async in the test itself (feature
//! `blocking`).

use std::time::Duration;

use mcp_http::HttpOptions;
use mcp_http::serde_json::json;
use mcp_proto::client::ServerNotification;

/// The testkit's HTTP server on a thread with its own runtime, until the
/// returned sender is dropped.
fn server() -> (String, std::sync::mpsc::Sender<()>) {
    let (url_tx, url_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let handle = mcp_testkit::serve_http(mcp_testkit::HttpConfig::default()).await.unwrap();
            url_tx.send(handle.url()).unwrap();
            // Serve until the test drops its end.
            let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
            handle.shutdown().await;
        });
    });
    (url_rx.recv_timeout(Duration::from_secs(10)).unwrap(), stop_tx)
}

#[test]
fn a_plain_function_talks_to_an_http_server() {
    let (url, _stop) = server();
    let mut o = HttpOptions::new("testkit");
    o.request_timeout = Duration::from_secs(10);
    let client = mcp_http::blocking::connect(&url, o).unwrap();
    client.ping().unwrap();
    assert!(client.client().transport().has_session());
    let r = client.call_tool("echo", json!({"message": "plain"})).unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "plain");
    // A list change that belongs to no request comes on the standalone
    // stream, opened by itself after the handshake.
    let mut notifications = client.notifications();
    client.call_tool("change", ()).unwrap();
    let n = notifications.recv_timeout(Duration::from_secs(5));
    assert_eq!(n, Some(ServerNotification::ToolListChanged));
    client.close().unwrap();
    assert!(matches!(client.ping(), Err(mcp_http::Error::Closed { .. })));
}

#[test]
fn a_bad_url_is_an_error_of_the_transport() {
    match mcp_http::blocking::connect("ftp://example.com/mcp", HttpOptions::new("x")) {
        Err(mcp_peer::blocking::ConnectError::Transport(mcp_http::Error::InvalidEndpoint {
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
}
