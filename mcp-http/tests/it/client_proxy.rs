//! HTTP proxies (feature `proxy`): a tunnel made with CONNECT and kept,
//! `no_proxy`, a refused tunnel a connect error.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use mcp_http::Error;
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;

use crate::client_support::{TEST_TIMEOUT, echo, options, proxy_authorization, read_head, server};

#[cfg(feature = "proxy")]
/// A CONNECT proxy that only tunnels to loopback, and logs each CONNECT
/// line with its Proxy-Authorization value.
async fn connect_proxy() -> (SocketAddr, Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>) {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let Some(head) = read_head(&mut client).await else { return };
                let target = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                let auth = proxy_authorization(&head).map(str::to_owned);
                seen.lock().unwrap().push((target.clone(), auth));
                if !head.starts_with("CONNECT ") || !target.starts_with("127.0.0.1:") {
                    let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
                    return;
                }
                let Ok(mut upstream) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await.is_err() {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (addr, log)
}

#[cfg(feature = "proxy")]
#[tokio::test]
async fn a_configured_proxy_tunnels_with_connect() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let (proxy, log) = connect_proxy().await;
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: format!("http://scott:tiger@{proxy}"),
            no_proxy: None,
        };
        // Tunnels are counted: the standalone stream would hold one of its own.
        o.event_stream = false;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert!(client.transport().is_proxied());
        for i in 0..5 {
            assert_eq!(echo(&client, &format!("p{i}")).await.unwrap(), format!("p{i}"));
        }
        let log = log.lock().unwrap().clone();
        // One tunnel, kept alive for every call.
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0].0, server.local_addr().to_string());
        assert_eq!(log[0].1.as_deref(), Some("Basic c2NvdHQ6dGlnZXI="));

        // no_proxy bypasses it; a bad proxy URL is refused without echoing it.
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: format!("http://{proxy}"),
            no_proxy: Some("127.0.0.1".into()),
        };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert!(!client.transport().is_proxied());
        client.ping().await.unwrap();
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: "socks4://u:hidden@127.0.0.1:1".into(),
            no_proxy: None,
        };
        let err = mcp_http::connect(&server.url(), o).unwrap_err();
        assert!(matches!(err, Error::InvalidProxy { .. }) && !err.to_string().contains("hidden"));
    })
    .await;
}

#[cfg(feature = "proxy")]
#[tokio::test]
async fn a_refused_tunnel_is_a_connect_error() {
    bounded_by(TEST_TIMEOUT, async {
        let (proxy, _) = connect_proxy().await;
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url { url: format!("http://{proxy}"), no_proxy: None };
        // The test proxy only tunnels to 127.0.0.1; nothing is contacted there.
        let client = mcp_http::connect("http://localhost:9/mcp", o).unwrap();
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        assert!(err.to_string().starts_with("MCP server http://localhost:9: "), "{err}");
    })
    .await;
}
