//! The keep-alive pool: connections reused, shared by clients of one
//! `HttpPool`, dropped when idle too long, replaced when the server closed
//! them, and a read that met a closing connection sent once more.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_test_support::bounded_by;
use serde_json::{Value, json};

use crate::client_support::{TEST_TIMEOUT, counting_server, options};

#[tokio::test]
async fn sequential_calls_reuse_one_connection() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        // Connections are counted: no standalone stream to hold one open.
        let mut o = options();
        o.event_stream = false;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        for _ in 0..50 {
            client.ping().await.unwrap();
        }
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        // No session id was given: none is sent, and close sends no DELETE.
        assert!(!client.transport().has_session());
        client.close().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    })
    .await;
}

#[tokio::test]
async fn clients_sharing_a_pool_share_its_connection() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let pool = mcp_http::HttpPool::new(&options()).unwrap();
        assert_eq!(pool.connections(), 0);
        let shared = || {
            // Connections are counted: no standalone stream to hold one open.
            let mut o = options().with_pool(pool.clone());
            o.event_stream = false;
            mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap()
        };
        let (a, b) = (shared(), shared());
        for _ in 0..5 {
            a.ping().await.unwrap();
            b.ping().await.unwrap();
        }
        // Two sessions (each initialized), one connection between them.
        assert_eq!(a.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        assert_eq!(b.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        assert_eq!(pool.connections(), 1);
        // A client that closes (and is dropped) leaves the pool to the
        // others, and to clients made from it later.
        a.close().await.unwrap();
        drop(a);
        b.ping().await.unwrap();
        let c = shared();
        c.ping().await.unwrap();
        b.close().await.unwrap();
        drop(b);
        c.ping().await.unwrap();
        c.close().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        // A client without the pool opens its own connection.
        let mut o = options();
        o.event_stream = false;
        let own = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        own.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        assert_eq!(pool.connections(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_pool_outlives_its_clients() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let pool = mcp_http::HttpPool::new(&options()).unwrap();
        let shared = || {
            let mut o = options().with_pool(pool.clone());
            o.event_stream = false;
            mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap()
        };
        // Concurrent calls of two clients open a few connections; later
        // clients find them kept after their makers are gone.
        let (a, b) = (shared(), shared());
        a.initialize().await.unwrap();
        b.initialize().await.unwrap();
        let calls = (0..8).map(|i| {
            let client = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { client.ping().await })
        });
        for call in calls {
            call.await.unwrap().unwrap();
        }
        let opened = connections.load(Ordering::SeqCst);
        assert!((1..=9).contains(&opened), "{opened} connections for 8 concurrent calls");
        drop((a, b));
        let c = shared();
        for _ in 0..10 {
            c.ping().await.unwrap();
        }
        assert_eq!(connections.load(Ordering::SeqCst), opened);
        assert!(format!("{pool:?}").starts_with("HttpPool"));
    })
    .await;
}

#[tokio::test]
async fn concurrent_calls_open_connections_that_later_calls_reuse() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let mut o = options();
        o.event_stream = false;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.ping().await.unwrap();
        let burst = || async {
            let mut calls = tokio::task::JoinSet::new();
            for _ in 0..8 {
                let client = client.clone();
                calls.spawn(async move { client.ping().await });
            }
            while let Some(result) = calls.join_next().await {
                result.unwrap().unwrap();
            }
        };
        burst().await;
        let opened = connections.load(Ordering::SeqCst);
        assert!((1..=9).contains(&opened), "{opened} connections for 8 concurrent calls");
        // The connections are kept: more bursts and calls open none.
        burst().await;
        for _ in 0..20 {
            client.ping().await.unwrap();
        }
        assert_eq!(connections.load(Ordering::SeqCst), opened);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_connection_idle_longer_than_the_pool_timeout_is_not_reused() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let mut o = options();
        o.event_stream = false;
        o.pool_idle_timeout = Duration::from_millis(50);
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.ping().await.unwrap();
        client.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(120)).await;
        client.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        client.close().await.unwrap();
    })
    .await;
}

/// A server that answers one request per connection (JSON, keep-alive
/// implied) and then closes the connection silently after `linger`.
async fn one_shot_server(linger: Duration) -> (SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then a body of Content-Length bytes.
                let (head_end, length) = loop {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let message: Value = serde_json::from_slice(&buf[head_end..head_end + length])
                    .unwrap_or(Value::Null);
                let reply = match message.get("id") {
                    None => String::new(),
                    Some(id) => {
                        let result = if message["method"] == "initialize" {
                            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                   "serverInfo": {"name": "one-shot", "version": "1"}})
                        } else {
                            json!({})
                        };
                        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
                    }
                };
                let status = if reply.is_empty() { "202 Accepted" } else { "200 OK" };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                    reply.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                tokio::time::sleep(linger).await;
            });
        }
    });
    (addr, connections)
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        // The server closes each connection after its reply (at once, or a
        // little later) without saying so; by the next call the client has
        // seen the close, drops the connection and opens another.
        for linger in [Duration::ZERO, Duration::from_millis(5)] {
            let (addr, connections) = one_shot_server(linger).await;
            let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
            client.initialize().await.unwrap();
            for i in 0..10 {
                tokio::time::sleep(linger + Duration::from_millis(20)).await;
                client.ping().await.unwrap_or_else(|e| panic!("call {i} (linger {linger:?}): {e}"));
            }
            // One connection per exchange: initialize, 10 pings, and
            // `notifications/initialized`, sent right after initialize's
            // reply, unless it met the connection the server was closing
            // at that moment (the keep-alive race: it was written, so it is
            // not sent again, and its failure is only logged).
            let opened = connections.load(Ordering::SeqCst);
            assert!((11..=12).contains(&opened), "linger {linger:?}: {opened} connections");
            client.close().await.unwrap();
        }
    })
    .await;
}

#[tokio::test]
async fn a_read_that_met_a_closing_kept_connection_is_sent_again() {
    bounded_by(TEST_TIMEOUT, async {
        // Back to back, with no pause: a ping often goes out on the
        // connection the server is closing (the keep-alive race). A ping is
        // idempotent, so it is sent again on a new connection, and every
        // one is answered.
        let (addr, connections) = one_shot_server(Duration::ZERO).await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        client.initialize().await.unwrap();
        for i in 0..50 {
            client.ping().await.unwrap_or_else(|e| panic!("ping {i}: {e}"));
        }
        assert!(connections.load(Ordering::SeqCst) >= 51);
        client.close().await.unwrap();
    })
    .await;
}
