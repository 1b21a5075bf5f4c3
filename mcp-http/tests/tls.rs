//! HTTPS against the testkit's server with a CA made here: a valid chain
//! connects, a certificate from an unknown CA, an expired one and one for
//! another host name each fail at once with an error naming the cause, and
//! HTTP/2 is negotiated by ALPN when the `http2` feature is on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Version;
use mcp_http::{Error, HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_proto::types::ContentBlock;
use mcp_testkit::{HttpConfig, HttpServerHandle, ReplyMode, TlsConfig, serve_http};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::CertificateDer;
use serde_json::json;

/// Every test is bounded by this.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);
/// A refused certificate must fail the call well within this (the request
/// timeout is far longer, so a hang or a retry loop shows).
const FAIL_FAST: Duration = Duration::from_secs(5);

/// A certificate authority made for one test.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    der: CertificateDer<'static>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { issuer: Issuer::new(params, key), der: cert.der().clone() }
    }

    /// An intermediate CA signed by this one, and its certificate.
    fn intermediate(&self, name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Ca { issuer: Issuer::new(params, key), der: cert.der().clone() }
    }

    /// A server certificate for these names, valid from `not_before` to
    /// `not_after` (`None`: rcgen's defaults, 1975 to 4096), and its key.
    fn leaf(&self, names: &[&str], validity: Option<(i32, i32)>) -> (Vec<u8>, Vec<u8>) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, "mcp test server");
        if let Some((from, to)) = validity {
            params.not_before = rcgen::date_time_ymd(from, 1, 1);
            params.not_after = rcgen::date_time_ymd(to, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.der().to_vec(), key.serialize_der())
    }

    /// A client TLS configuration trusting only this CA (no ALPN: the
    /// client sets it).
    fn client_config(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    }
}

/// The names a good server certificate is for.
const LOOPBACK: &[&str] = &["127.0.0.1", "localhost"];

async fn https_server(tls: TlsConfig, reply: ReplyMode) -> HttpServerHandle {
    let config = HttpConfig { tls: Some(tls), reply, ..HttpConfig::default() };
    let server = serve_http(config).await.expect("the test server starts");
    assert!(server.url().starts_with("https://127.0.0.1:"), "{}", server.url());
    server
}

fn options(tls: Option<Arc<rustls::ClientConfig>>) -> HttpOptions {
    let mut o = HttpOptions::new("tls");
    o.request_timeout = Duration::from_secs(15);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o.proxy = mcp_http::ProxyConfig::None;
    o.tls = tls;
    o
}

async fn echo(client: &HttpClient, message: &str) -> Result<String, Error> {
    let args = json!({ "message": message }).as_object().cloned();
    let result = client.call_tool_with("echo", args, RequestOptions::default()).await?;
    Ok(result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect())
}

async fn bounded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(TEST_TIMEOUT, f).await.expect("the test finished in time");
}

/// Connects with `tls` to a server presenting `chain`, expects the
/// handshake to be refused: the error, quickly, before any HTTP request
/// reached the server. Checks that it is a connect error about this
/// endpoint whose text names the cause (each of `causes`).
async fn refused(
    chain: Vec<Vec<u8>>,
    key: Vec<u8>,
    tls: Option<Arc<rustls::ClientConfig>>,
    causes: &[&str],
) {
    let server = https_server(TlsConfig::new(chain, key), ReplyMode::Json).await;
    let client = HttpClient::connect(&server.url(), options(tls)).unwrap();
    let endpoint = format!("https://{}", server.local_addr());
    let check = |err: &Error| {
        let Error::Connect { endpoint: at, method, reason } = err else {
            panic!("expected Error::Connect, got {err:?}");
        };
        assert_eq!(*at, endpoint);
        // A call that finds no session starts with the handshake.
        assert_eq!(method, "initialize");
        let shown = err.to_string();
        let head = format!("MCP server {endpoint}: initialize failed to connect: ");
        assert!(shown.starts_with(&head), "{shown}");
        for cause in causes {
            assert!(reason.contains(cause), "expected {cause:?} in {reason:?}");
            assert!(shown.contains(cause), "expected {cause:?} in {shown:?}");
        }
        assert!(!err.is_timeout());
    };
    let started = Instant::now();
    let err = client.initialize().await.expect_err("the certificate is refused");
    assert!(started.elapsed() < FAIL_FAST, "took {:?}: {err}", started.elapsed());
    check(&err);
    // A later call fails the same way, as quickly.
    let started = Instant::now();
    let again = echo(&client, "x").await.expect_err("still refused");
    assert!(started.elapsed() < FAIL_FAST, "took {:?}: {again}", started.elapsed());
    check(&again);
    assert!(server.requests().is_empty(), "no request got through: {:?}", server.requests());
    server.shutdown().await;
}

#[tokio::test]
async fn a_valid_chain_connects_and_calls_a_tool() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let intermediate = root.intermediate("mcp test intermediate");
        let (leaf, key) = intermediate.leaf(LOOPBACK, None);
        // The server sends its certificate and the intermediate; the client
        // trusts only the root.
        let server = https_server(
            TlsConfig::new(vec![leaf, intermediate.der.to_vec()], key),
            ReplyMode::Json,
        )
        .await;
        for url in [server.url(), server.url().replace("127.0.0.1", "localhost")] {
            let client = HttpClient::connect(&url, options(Some(root.client_config()))).unwrap();
            let init = client.initialize().await.unwrap();
            assert_eq!(init.protocol_version, "2025-11-25");
            assert_eq!(echo(&client, "over tls").await.unwrap(), "over tls");
            client.close().await.unwrap();
        }
        let requests = server.requests();
        assert!(requests.len() >= 6, "{requests:?}");
        // HTTP/2 was not offered: everything went over HTTP/1.1.
        assert!(requests.iter().all(|r| r.version == Version::HTTP_11), "{requests:?}");
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_configuration_that_already_lists_alpn_protocols_is_taken() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server = https_server(TlsConfig::new(vec![leaf], key), ReplyMode::Json).await;
        let mut config = rustls::ClientConfig::clone(&root.client_config());
        config.alpn_protocols = vec![b"spdy/3".to_vec()];
        // The client sets ALPN itself (it used to panic in the connector).
        let client = HttpClient::connect(&server.url(), options(Some(Arc::new(config)))).unwrap();
        assert_eq!(echo(&client, "alpn").await.unwrap(), "alpn");
        client.close().await.unwrap();
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_is_refused() {
    bounded(async {
        let trusted = Ca::new("mcp test root");
        let stranger = Ca::new("someone else's root");
        let (leaf, key) = stranger.leaf(LOOPBACK, None);
        let cause = ["invalid peer certificate: UnknownIssuer"];
        refused(vec![leaf.clone()], key.clone(), Some(trusted.client_config()), &cause).await;
        // The default roots (Mozilla's) do not know it either.
        refused(vec![leaf], key, None, &cause).await;
    })
    .await;
}

#[tokio::test]
async fn an_expired_certificate_is_refused() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, Some((2020, 2021)));
        // 1609459200 is 2021-01-01T00:00:00Z.
        let causes = [
            "invalid peer certificate: certificate expired: ",
            "but certificate is not valid after 1609459200 ",
        ];
        refused(vec![leaf], key, Some(root.client_config()), &causes).await;
    })
    .await;
}

#[tokio::test]
async fn a_certificate_for_another_host_name_is_refused() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(&["mcp.example.test"], None);
        let cause = [concat!(
            r#"invalid peer certificate: certificate not valid for name "127.0.0.1"; "#,
            r#"certificate is only valid for DnsName("mcp.example.test")"#
        )];
        refused(vec![leaf], key, Some(root.client_config()), &cause).await;
    })
    .await;
}

/// With the `http2` feature the client picks `h2` when the server offers
/// it: every request the server saw came over HTTP/2, the standalone GET
/// stream and the SSE replies included (multiplexed on one connection).
#[cfg(feature = "http2")]
#[tokio::test]
async fn http2_is_negotiated_by_alpn() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server =
            https_server(TlsConfig::new(vec![leaf], key).with_http2(), ReplyMode::Sse).await;
        let client =
            HttpClient::connect(&server.url(), options(Some(root.client_config()))).unwrap();
        client.initialize().await.unwrap();
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..8 {
            let client = client.clone();
            calls.spawn(async move { (i, echo(&client, &format!("h2 {i}")).await) });
        }
        while let Some(joined) = calls.join_next().await {
            let (i, answer) = joined.unwrap();
            assert_eq!(answer.unwrap(), format!("h2 {i}"));
        }
        client.close().await.unwrap();
        let requests = server.requests();
        assert!(requests.len() >= 11, "{requests:?}");
        assert!(requests.iter().all(|r| r.version == Version::HTTP_2), "{requests:?}");
        server.shutdown().await;
    })
    .await;
}

/// Without the `http2` feature the client offers only HTTP/1.1, and a
/// server that offers `h2` too is spoken to in HTTP/1.1.
#[cfg(not(feature = "http2"))]
#[tokio::test]
async fn without_the_http2_feature_an_h2_server_is_spoken_to_in_http1() {
    bounded(async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server =
            https_server(TlsConfig::new(vec![leaf], key).with_http2(), ReplyMode::Sse).await;
        let client =
            HttpClient::connect(&server.url(), options(Some(root.client_config()))).unwrap();
        client.initialize().await.unwrap();
        assert_eq!(echo(&client, "h1").await.unwrap(), "h1");
        client.close().await.unwrap();
        let requests = server.requests();
        assert!(!requests.is_empty());
        assert!(requests.iter().all(|r| r.version == Version::HTTP_11), "{requests:?}");
        server.shutdown().await;
    })
    .await;
}
