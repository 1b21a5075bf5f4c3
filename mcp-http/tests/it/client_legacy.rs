//! The 2024-11-05 HTTP+SSE transport: the fallback, an endpoint on another
//! origin refused, a session the server ended replaced without repeating a
//! call, and a refusal reported when no legacy server answers either.

use http::{Method, StatusCode};
use mcp_http::{Error, StaticAuth};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{bounded_by, text_blocks};
use mcp_testkit::HttpConfig;
use serde_json::json;

use crate::client_support::{TEST_TIMEOUT, args, echo, header, options, server};

#[tokio::test]
async fn falls_back_to_the_2024_11_05_transport() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { legacy: true, ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Header { name: "X-Key".into(), value: "legacy-key".into() };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.initialize().await.unwrap();
        assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "add"));
        assert_eq!(echo(&client, "old").await.unwrap(), "old");
        let pong = client.call_tool_with("ask", args(json!({"what": "ping"})), Default::default());
        assert!(text_blocks(&pong.await.unwrap()).contains("\"result\""));
        let requests = server.requests();
        assert_eq!(requests[0].target, "/mcp");
        assert_eq!(requests[1].method, Method::GET);
        let later: Vec<_> = requests[2..].iter().filter(|r| r.method == Method::POST).collect();
        assert!(later.len() >= 4);
        for r in later {
            assert!(r.target.starts_with("/message?sessionId="), "{}", r.target);
            assert_eq!(header(&r.headers, "x-key"), Some("legacy-key"));
        }
        // The SSE stream that carries every reply is the event stream: asking
        // for one opens no second GET (which would start an orphan session).
        assert!(client.transport().is_legacy());
        assert!(client.transport().open_event_stream().await.unwrap());
        assert_eq!(server.request_count(&Method::GET), 1);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_cross_origin_legacy_endpoint_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            legacy: true,
            legacy_endpoint: Some("http://localhost:1/message?token=leak".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Bearer("never-sent-elsewhere".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::InvalidResponse { .. }), "{err:?}");
        assert!(text.contains("another origin") && !text.contains("leak"), "{text}");
    })
    .await;
}

#[tokio::test]
async fn a_legacy_session_the_server_ended_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { legacy: true, ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.ping().await.unwrap();
        let crashed = client.call_tool_with("crash", (), RequestOptions::default()).await;
        // A tools/call is never sent twice.
        assert!(matches!(crashed, Err(Error::SessionLost { .. })), "{crashed:?}");
        assert_eq!(echo(&client, "legacy again").await.unwrap(), "legacy again");
        assert!(server.request_count(&Method::GET) >= 2);
    })
    .await;
}

#[tokio::test]
async fn a_refused_initialize_without_a_legacy_server_reports_the_refusal() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { status: Some(400), ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        let Error::Status { status, ref body, ref method, .. } = err else { panic!("{err:?}") };
        assert_eq!((status, method.as_str()), (StatusCode::BAD_REQUEST, "initialize"));
        assert!(body.contains("on purpose"), "{body}");
        // The fallback was tried once.
        assert_eq!(server.request_count(&Method::GET), 1);
    })
    .await;
}
