//! Timeouts and cancellation: `notifications/cancelled` reaches the server
//! on every timeout and every dropped call, in both eras, even when the
//! host closes the client at once (as `mcpc` does after a failed call).

use std::time::Duration;

use mcp_http::Error;
use mcp_proto::client::RequestOptions;
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;
use serde_json::json;

use crate::client_support::{TEST_TIMEOUT, args, auto, echo, options, server};

#[tokio::test]
async fn a_timeout_names_the_method_and_cancels() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client
            .call_tool_with(
                "slow",
                args(json!({"ms": 5000})),
                RequestOptions::with_timeout(Duration::from_millis(200)),
            )
            .await
            .unwrap_err();
        let Error::Timeout { ref method, .. } = err else { panic!("{err:?}") };
        assert_eq!(method, "tools/call");
        assert!(err.to_string().contains(&format!("http://{}", server.local_addr())));
        // notifications/cancelled is POSTed in the background.
        let mut cancelled = false;
        for _ in 0..100 {
            if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
                cancelled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(cancelled);
        // The client still works.
        assert_eq!(echo(&client, "after").await.unwrap(), "after");
    })
    .await;
}

#[tokio::test]
async fn dropping_a_call_cancels_it() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.initialize().await.unwrap();
        let call = client.call_tool_with("hang", (), RequestOptions::default());
        assert!(tokio::time::timeout(Duration::from_millis(200), call).await.is_err());
        let mut cancelled = false;
        for _ in 0..100 {
            if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
                cancelled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(cancelled, "{:?}", server.rpc_methods());
    })
    .await;
}

/// How a test stops waiting for a call.
#[derive(Clone, Copy, Debug)]
enum GiveUp {
    /// The call's own timeout expires.
    Timeout,
    /// The caller drops the call's future.
    Drop,
}

/// Runs `hang`, gives up on it, closes the client at once, and says
/// whether the server then received `notifications/cancelled` (waiting
/// for it at most two seconds).
async fn cancelled_after_close(era: mcp_testkit::ServeEra, how: GiveUp) -> bool {
    let mut config = HttpConfig::default();
    config.server.era = era;
    let server = server(config).await;
    let client = mcp_http::connect(&server.url(), auto()).unwrap();
    client.initialize().await.unwrap();
    let quick = RequestOptions::with_timeout(Duration::from_millis(300));
    match how {
        GiveUp::Timeout => {
            let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
            assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        }
        GiveUp::Drop => {
            let call = client.call_tool_with("hang", (), RequestOptions::default());
            assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
        }
    }
    client.close().await.unwrap();
    for _ in 0..100 {
        if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Legacy, GiveUp::Timeout).await);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Legacy, GiveUp::Drop).await);
    })
    .await;
}

#[tokio::test]
async fn a_timed_out_stateless_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Modern, GiveUp::Timeout).await);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_stateless_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Modern, GiveUp::Drop).await);
    })
    .await;
}
