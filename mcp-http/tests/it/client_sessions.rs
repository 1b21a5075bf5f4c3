//! Sessions: an expired one renewed once for every request waiting on it,
//! one the server ended replaced, one that expires again at once an error.

use mcp_http::Error;
use mcp_proto::client::RequestOptions;
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;

use crate::client_support::{TEST_TIMEOUT, echo, options, server};

#[tokio::test]
async fn an_expired_session_is_renewed_and_the_request_retried() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { expire_session_after: Some(4), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        for i in 0..6 {
            assert_eq!(echo(&client, &format!("s{i}")).await.unwrap(), format!("s{i}"));
        }
        let inits = server.rpc_methods().iter().filter(|m| *m == "initialize").count();
        assert!(inits >= 2, "{inits}");
    })
    .await;
}

#[tokio::test]
async fn a_session_that_expires_again_at_once_is_an_error() {
    bounded_by(TEST_TIMEOUT, async {
        // initialize and notifications/initialized use up the session.
        let config = HttpConfig { expire_session_after: Some(2), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, Error::SessionExpired { .. }), "{err:?}");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "initialize").count(), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_one_session_renewal() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { expire_session_after: Some(12), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.initialize().await.unwrap();
        for round in 0..3 {
            // Pings: a read may be sent again when a concurrent renewal
            // ended its session while it was out.
            let calls = (0..8).map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.ping().await })
            });
            for call in calls {
                call.await.unwrap().unwrap();
            }
            assert_eq!(echo(&client, &format!("r{round}")).await.unwrap(), format!("r{round}"));
        }
        let inits = server.rpc_methods().iter().filter(|m| *m == "initialize").count();
        // 27 calls and 2 handshake messages per session of 12 POSTs: a few
        // renewals, never one per request.
        assert!((2..=6).contains(&inits), "{inits}");
    })
    .await;
}

#[tokio::test]
async fn a_session_the_server_ended_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.ping().await.unwrap();
        // `crash` ends the server's session (and the connection of the call).
        let crashed = client.call_tool_with("crash", (), RequestOptions::default()).await;
        assert!(crashed.is_err());
        assert_eq!(echo(&client, "after crash").await.unwrap(), "after crash");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "initialize").count(), 2);
    })
    .await;
}
