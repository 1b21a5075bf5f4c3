//! Typed errors that keep secrets out: a 401's parsed challenge, a
//! forbidden scope, a status with an excerpt, bad configuration refused up
//! front, connect errors.

use std::net::Ipv4Addr;
use std::sync::Arc;

use http::StatusCode;
use mcp_http::{Error, StaticAuth};
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;

use crate::client_support::{TEST_TIMEOUT, echo, header, options, server};

#[tokio::test]
async fn unauthorized_reports_the_parsed_challenge() {
    bounded_by(TEST_TIMEOUT, async {
        let challenge = r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#;
        let config = HttpConfig {
            require_auth: Some("s3cr3t-token".into()),
            challenge: Some(challenge.into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        let Error::Unauthorized { ref bearer, ref challenges, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(challenges.len(), 1);
        assert_eq!(bearer.as_ref().unwrap().scope.as_deref(), Some(&["mcp:tools".to_owned()][..]));
        assert_eq!(
            err.resource_metadata(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(err.status(), Some(StatusCode::UNAUTHORIZED));

        let mut o = options();
        o.auth = StaticAuth::Bearer("s3cr3t-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert_eq!(echo(&client, "in").await.unwrap(), "in");
        for r in server.requests().iter().rev().take(3) {
            assert_eq!(header(&r.headers, "authorization"), Some("Bearer s3cr3t-token"));
        }
    })
    .await;
}

#[tokio::test]
async fn forbidden_scope_is_its_own_error() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            require_auth: Some("tok-abcd".into()),
            forbid_scope: true,
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Bearer("tok-abcd".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::InsufficientScope { .. }), "{err:?}");
        assert!(err.bearer_challenge().unwrap().is_insufficient_scope());
        assert!(!err.to_string().contains("tok-abcd"));
    })
    .await;
}

#[tokio::test]
async fn status_errors_are_redacted_and_carry_an_excerpt() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { status: Some(500), ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Query { name: "api_key".into(), value: "qu3ry-s3cret".into() };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert_eq!(err.status(), Some(StatusCode::INTERNAL_SERVER_ERROR), "{err:?}");
        let text = err.to_string();
        let base = format!("http://{}", server.local_addr());
        assert!(text.contains(&base), "{text}");
        assert!(!text.contains("/mcp") && !text.contains("qu3ry-s3cret"), "{text}");
        assert_eq!(err.endpoint(), Some(base.as_str()));
        let debug = format!("{client:?} {err:?}");
        assert!(!debug.contains("qu3ry-s3cret") && !debug.contains("/mcp"), "{debug}");
        // The query parameter reached the server, appended to the URL.
        let target = &server.requests()[0].target;
        assert_eq!(target, "/mcp?api_key=qu3ry-s3cret");
    })
    .await;
}

#[tokio::test]
async fn bad_configuration_is_refused_up_front() {
    let mut o = options();
    o.auth = StaticAuth::Bearer("abc\r\nInjected: yes".into());
    let err = mcp_http::connect("http://127.0.0.1:9/mcp", o).unwrap_err();
    assert!(matches!(err, Error::InvalidAuth { .. }), "{err:?}");
    assert!(!err.to_string().contains("Injected"));
    let err = mcp_http::connect("http://user:pw@127.0.0.1:9/mcp", options()).unwrap_err();
    assert!(matches!(err, Error::InvalidEndpoint { .. }));
    assert!(!err.to_string().contains("pw"));
    let err = mcp_http::connect("ftp://127.0.0.1/", options()).unwrap_err();
    assert!(matches!(err, Error::InvalidEndpoint { .. }));
}

#[tokio::test]
async fn a_caller_tls_config_is_used_and_connect_errors_are_typed() {
    bounded_by(TEST_TIMEOUT, async {
        // A port nothing listens on (bound, then released).
        let port = {
            let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            l.local_addr().unwrap().port()
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let mut o = options();
        o.tls = Some(Arc::new(tls));
        o.auth = StaticAuth::Bearer("tls-token".into());
        let url = format!("https://127.0.0.1:{port}/mcp?k=v");
        let client = mcp_http::connect(&url, o).unwrap();
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("MCP server https://127.0.0.1:{port}: ")), "{text}");
        assert!(!text.contains("tls-token") && !text.contains("k=v"), "{text}");
    })
    .await;
}
