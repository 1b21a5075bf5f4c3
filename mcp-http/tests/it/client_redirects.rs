//! Redirects: not followed unless asked; then same-origin only, with the
//! request unchanged, at most 5, and never a credential to another origin.

use http::{Method, StatusCode};
use mcp_http::{Error, StaticAuth};
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;

use crate::client_support::{TEST_TIMEOUT, echo, header, options, server};

#[tokio::test]
async fn redirects_are_not_followed() {
    bounded_by(TEST_TIMEOUT, async {
        let config =
            HttpConfig { redirect: mcp_testkit::Redirect::SameOrigin, ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert_eq!(err.status(), Some(StatusCode::TEMPORARY_REDIRECT), "{err:?}");
    })
    .await;
}

#[tokio::test]
async fn same_origin_redirects_are_followed_when_asked() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::SameOrigin,
            require_auth: Some("redirect-token".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        o.auth = StaticAuth::Bearer("redirect-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert_eq!(echo(&client, "moved").await.unwrap(), "moved");
        client.close().await.unwrap();

        let posts: Vec<_> =
            server.requests().into_iter().filter(|r| r.method == Method::POST).collect();
        assert!(posts.len() >= 6, "{}", posts.len());
        // Every POST to /mcp is answered 307 and sent again, the same, to /mcp/.
        for pair in posts.chunks(2) {
            let [first, second] = pair else { panic!("an unpaired POST") };
            assert_eq!((first.target.as_str(), second.target.as_str()), ("/mcp", "/mcp/"));
            for name in ["mcp-method", "authorization", "content-type", "accept", "mcp-session-id"]
            {
                assert_eq!(header(&first.headers, name), header(&second.headers, name), "{name}");
            }
        }
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "tools/call").count(), 1);
    })
    .await;
}

#[tokio::test]
async fn cross_origin_redirects_are_refused_and_get_no_credentials() {
    bounded_by(TEST_TIMEOUT, async {
        let elsewhere = server(HttpConfig::default()).await;
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::CrossOrigin(format!("{}?stolen=1", elsewhere.url())),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        o.auth = StaticAuth::Bearer("stay-home-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
        assert_eq!(err.status(), Some(StatusCode::TEMPORARY_REDIRECT));
        let text = format!("{err} {err:?}");
        assert!(text.contains("another origin"), "{text}");
        let port = elsewhere.local_addr().port().to_string();
        assert!(!text.contains(&port) && !text.contains("stolen"), "{text}");
        assert!(elsewhere.requests().is_empty(), "the other origin got a request");
        assert_eq!(server.request_count(&Method::POST), 1);
    })
    .await;
}

#[tokio::test]
async fn redirect_loops_are_bounded() {
    bounded_by(TEST_TIMEOUT, async {
        // A Location that names the endpoint itself: a loop.
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::CrossOrigin("/mcp".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
        assert!(err.to_string().contains("more than 5 redirects"), "{err}");
        assert_eq!(server.request_count(&Method::POST), 6);
    })
    .await;
}
