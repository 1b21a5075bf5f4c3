//! Streamable HTTP over a Unix domain socket: the testkit's HTTP server
//! behind a socket the test listens on (`mcp_test_support::unix_relay`),
//! reached with a `unix:` endpoint.

use std::time::Duration;

use mcp_http::{Error, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{TempDir, bounded_by, text_blocks, unix_relay};
use mcp_testkit::{HttpConfig, serve_http};
use serde_json::json;

const TEST_TIMEOUT: Duration = Duration::from_secs(30);

fn options() -> HttpOptions {
    let mut o = HttpOptions::new("socket");
    o.request_timeout = Duration::from_secs(10);
    o
}

#[tokio::test]
async fn a_unix_endpoint_reaches_the_server_through_its_socket() {
    bounded_by(TEST_TIMEOUT, async {
        let server = serve_http(HttpConfig::default()).await.unwrap();
        let dir = TempDir::new("http-unix-ok");
        let socket = dir.path().join("mcp.sock");
        let connections = unix_relay(&socket, server.local_addr()).unwrap();
        // The request path after `#` (the testkit serves `/mcp`, the default).
        let endpoint = format!("unix:{}#/mcp", socket.display());
        let client = mcp_http::connect(&endpoint, options()).unwrap();
        assert_eq!(client.transport().redacted_endpoint(), format!("unix:{}", socket.display()));
        assert!(!client.transport().is_proxied());
        let args = json!({"message": "through the socket"});
        let r = client.call_tool_with("echo", args.as_object().cloned(), RequestOptions::default());
        assert_eq!(text_blocks(&r.await.unwrap()), "through the socket");
        // Kept alive: the second call takes the same connection.
        let r = client.call_tool_with("echo", args.as_object().cloned(), RequestOptions::default());
        assert_eq!(text_blocks(&r.await.unwrap()), "through the socket");
        assert!(*connections.borrow() >= 1);
        let log = server.requests();
        assert!(log.iter().all(|r| r.target.starts_with("/mcp")), "{log:?}");
        assert!(
            log.iter().all(|r| r.headers.get("host").is_some_and(|h| h == "localhost")),
            "{log:?}"
        );
        client.close().await.unwrap();
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_socket_that_is_not_there_is_a_connect_error_and_bad_forms_are_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let dir = TempDir::new("http-unix-missing");
        let endpoint = format!("unix:{}", dir.path().join("absent.sock").display());
        let client = mcp_http::connect(&endpoint, options()).unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        assert!(err.to_string().contains("unix:"), "{err}");
        // A regular file is no socket.
        let file = dir.path().join("file");
        std::fs::write(&file, "not a socket").unwrap();
        let client = mcp_http::connect(&format!("unix:{}", file.display()), options()).unwrap();
        assert!(matches!(client.list_tools().await.unwrap_err(), Error::Connect { .. }));
        for bad in ["unix:", "unix://", "unix:/run/x.sock#mcp", "unix:/run/x.sock#/a b"] {
            let err = mcp_http::connect(bad, options()).unwrap_err();
            assert!(matches!(err, Error::InvalidEndpoint { .. }), "{bad}: {err:?}");
        }
    })
    .await;
}
