//! No secret ever reaches a log line, an error's `Display` or its `Debug`:
//! every `tracing` event of runs with secrets in the URL's userinfo, in its
//! query and in each kind of static credential, successful and failing
//! (401, connection refused, timeout, HTTP 500), is captured at TRACE level
//! and searched.

use std::time::Duration;

use mcp_http::{HttpOptions, StaticAuth};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{LogCapture, bounded_by};
use mcp_testkit::{HttpConfig, serve_http};
use serde_json::json;

const USERINFO_SECRET: &str = "userinfo-secret-1";
const URL_QUERY_SECRET: &str = "url-query-secret-2";
const BEARER_SECRET: &str = "bearer-secret-3";
const BASIC_SECRET: &str = "basic-secret-4";
const HEADER_SECRET: &str = "header-secret-5";
const PARAM_SECRET: &str = "param-secret-6";
const WRONG_BEARER_SECRET: &str = "wrong-bearer-secret-7";
/// A bearer token given as a raw header (`-H 'Authorization: Bearer ...'`).
const RAW_HEADER_TOKEN: &str = "raw-header-token-8";
/// A query value of the URL the user gave.
const URL_PARAM_SECRET: &str = "url-param-secret-9";
/// Headers made at run time (a `HeaderSource`), which a server may echo too.
const SOURCED_HEADER_SECRET: &str = "sourced-header-secret-10";
const SOURCED_BEARER_SECRET: &str = "sourced-bearer-secret-11";

/// Every secret, and the forms it takes on the wire.
fn secrets() -> Vec<String> {
    use base64::Engine as _;
    let mut all: Vec<String> = [
        USERINFO_SECRET,
        URL_QUERY_SECRET,
        BEARER_SECRET,
        BASIC_SECRET,
        HEADER_SECRET,
        PARAM_SECRET,
        WRONG_BEARER_SECRET,
        RAW_HEADER_TOKEN,
        URL_PARAM_SECRET,
        SOURCED_HEADER_SECRET,
        SOURCED_BEARER_SECRET,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    all.push(base64::engine::general_purpose::STANDARD.encode(format!("alice:{BASIC_SECRET}")));
    all
}

fn options(auth: StaticAuth) -> HttpOptions {
    let mut o = HttpOptions::new("secret-test");
    o.request_timeout = Duration::from_secs(5);
    o.auth = auth;
    o
}

/// Every credential kind: the accepted bearer, then those the server refuses.
fn all_auths() -> Vec<StaticAuth> {
    vec![
        StaticAuth::Bearer(BEARER_SECRET.into()),
        StaticAuth::Bearer(WRONG_BEARER_SECRET.into()),
        StaticAuth::Basic { username: "alice".into(), password: BASIC_SECRET.into() },
        StaticAuth::Header { name: "X-Api-Key".into(), value: HEADER_SECRET.into() },
        StaticAuth::Headers(vec![
            ("X-Api-Key".into(), HEADER_SECRET.into()),
            ("X-Other".into(), PARAM_SECRET.into()),
        ]),
        StaticAuth::Query { name: "api_key".into(), value: PARAM_SECRET.into() },
    ]
}

/// Runs everything, collecting what errors show (Display and Debug) and
/// the clients' Debug.
async fn run(shown: &mut Vec<String>) {
    let mut show = |what: String| shown.push(what);
    let server = serve_http(HttpConfig {
        require_auth: Some(BEARER_SECRET.into()),
        ..HttpConfig::default()
    })
    .await
    .expect("the test server starts");
    let base = server.url();
    let with_query = format!("{base}?token={URL_QUERY_SECRET}");

    // Userinfo in the URL: refused up front.
    let port = server.local_addr().port();
    let userinfo = format!("http://alice:{USERINFO_SECRET}@127.0.0.1:{port}/mcp");
    let err = mcp_http::connect(&userinfo, options(StaticAuth::None)).unwrap_err();
    show(format!("{err} {err:?}"));

    // A working session, then 401 for every credential the server refuses.
    for auth in all_auths() {
        show(format!("{auth:?} {:?}", options(auth.clone())));
        let client = mcp_http::connect(&with_query, options(auth)).unwrap();
        match client.initialize().await {
            Ok(_) => {
                let tools = client.list_tools().await.unwrap();
                assert!(!tools.is_empty());
                let echo = json!({"message": "hello"});
                client
                    .call_tool_with("echo", echo.as_object().cloned(), Default::default())
                    .await
                    .unwrap();
                let fail = client.call_tool_with("fail", (), Default::default()).await.unwrap();
                assert_eq!(fail.is_error, Some(true));
                // A timeout (and its notifications/cancelled).
                let quick = RequestOptions {
                    timeout: Some(Duration::from_millis(200)),
                    ..Default::default()
                };
                let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
                assert!(err.is_timeout(), "{err:?}");
                show(format!("{err} {err:?}"));
                let err =
                    client.request("no/such/method", None, Default::default()).await.unwrap_err();
                show(format!("{err} {err:?}"));
                show(format!("{client:?}"));
                client.close().await.unwrap();
            }
            Err(err) => {
                assert_eq!(err.status(), Some(http::StatusCode::UNAUTHORIZED), "{err:?}");
                show(format!("{err} {err:?}"));
                show(format!("{client:?}"));
            }
        }
    }

    // HTTP 500 with a body, and a server that is not there.
    let failing = serve_http(HttpConfig { status: Some(500), ..HttpConfig::default() })
        .await
        .expect("the test server starts");
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dead = format!("http://127.0.0.1:{refused}/mcp?token={URL_QUERY_SECRET}");
    let failing_url = format!("{}?token={URL_QUERY_SECRET}", failing.url());
    for url in [failing_url, dead] {
        for auth in all_auths() {
            let client = mcp_http::connect(&url, options(auth)).unwrap();
            let err = client.ping().await.unwrap_err();
            show(format!("{err} {err:?}"));
        }
    }

    // A server that echoes everything it was sent (headers and target) in
    // its error body, in a JSON-RPC error's message and data, and in a 500.
    for status in [400u16, 500] {
        let echo = echo_server(status).await;
        let url = format!("http://{echo}/mcp?api_key={URL_PARAM_SECRET}");
        let auth = StaticAuth::Header {
            name: "Authorization".into(),
            value: format!("Bearer {RAW_HEADER_TOKEN}"),
        };
        let client = mcp_http::connect(&url, options(auth)).unwrap();
        let err = client.initialize().await.unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(text.contains("<redacted>"), "the echo is there, scrubbed: {text}");
        show(text);
    }

    // Headers made at run time, echoed by the server: scrubbed as the
    // configured ones are.
    for status in [400u16, 401] {
        let echo = echo_server(status).await;
        let mut o = options(StaticAuth::None);
        o.header_source = Some(std::sync::Arc::new(FixedHeaders));
        let client = mcp_http::connect(&format!("http://{echo}/mcp"), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        let text = format!("{err} {err:?}");
        if status == 400 {
            assert!(text.contains("<redacted>"), "the echo is there, scrubbed: {text}");
        }
        show(text);
        show(format!("{client:?}"));
    }

    // A server too slow to answer the handshake in time.
    let slow = serve_http(HttpConfig {
        slow_headers: Some(Duration::from_secs(3)),
        ..HttpConfig::default()
    })
    .await
    .expect("the test server starts");
    let mut o = options(StaticAuth::Query { name: "api_key".into(), value: PARAM_SECRET.into() });
    o.request_timeout = Duration::from_millis(300);
    let client = mcp_http::connect(&format!("{}?token={URL_QUERY_SECRET}", slow.url()), o).unwrap();
    let err = client.initialize().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    show(format!("{err} {err:?}"));
}

/// A header source that always gives the same two secret headers.
#[derive(Debug)]
struct FixedHeaders;

impl mcp_http::HeaderSource for FixedHeaders {
    fn headers(&self) -> mcp_http::HeaderFuture<'_> {
        Box::pin(async {
            let headers = vec![
                (
                    http::HeaderName::from_static("x-helper-token"),
                    http::HeaderValue::from_static(SOURCED_HEADER_SECRET),
                ),
                (
                    http::header::AUTHORIZATION,
                    http::HeaderValue::from_str(&format!("Bearer {SOURCED_BEARER_SECRET}"))
                        .unwrap(),
                ),
            ];
            Ok(mcp_http::SourcedHeaders::new(headers, None))
        })
    }
}

/// A server that answers every request with `status` and a JSON-RPC error
/// whose message and data repeat the request's target and headers.
async fn echo_server(status: u16) -> std::net::SocketAddr {
    use http_body_util::Full;
    use hyper::body::{Bytes, Incoming};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: http::Request<Incoming>| async move {
                        let echoed: Vec<String> = std::iter::once(req.uri().to_string())
                            .chain(req.headers().iter().map(|(n, v)| {
                                format!("{n}: {}", String::from_utf8_lossy(v.as_bytes()))
                            }))
                            .collect();
                        // The bare token too, as a server that says "token X
                        // is invalid" would.
                        let bare = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.split_whitespace().last())
                            .unwrap_or_default()
                            .to_owned();
                        let said = format!("{}; token {bare} is invalid", echoed.join("; "));
                        let body = json!({"jsonrpc": "2.0", "id": null, "error": {
                        "code": -32600, "message": format!("you sent {said}"), "data": {"echo": said}}});
                        let mut r = http::Response::new(Full::new(Bytes::from(body.to_string())));
                        *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
                        r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                        Ok::<_, std::convert::Infallible>(r)
                    },
                );
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    addr
}

#[test]
fn no_secret_reaches_logs_or_errors() {
    let captured = LogCapture::start(tracing::Level::TRACE);
    let mut shown = Vec::new();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(bounded_by(Duration::from_secs(60), run(&mut shown)));
    // Background tasks (drains, pooled connections) end with the runtime.
    drop(runtime);
    let logs = captured.text();
    // The capture works: the client's own lines are there, endpoint redacted.
    assert!(logs.lines().count() > 10, "{logs}");
    assert!(logs.contains("http://127.0.0.1:"), "{logs}");
    assert!(shown.iter().any(|s| s.contains("401")), "{shown:?}");
    for secret in secrets() {
        for line in logs.lines() {
            assert!(!line.contains(&secret), "{secret} in the log line {line}");
        }
        for text in &shown {
            assert!(!text.contains(&secret), "{secret} in {text}");
        }
    }
}
