//! HTTPS against the testkit's server with a CA made here: a valid chain
//! connects, a certificate from an unknown CA, an expired one and one for
//! another host name each fail at once with an error naming the cause, and
//! HTTP/2 is negotiated by ALPN when the `http2` feature is on. With the
//! `proxy` feature, the proxies of corporate networks, each one written
//! here: a CONNECT proxy spoken to over TLS (its CA given as a PEM file,
//! `HttpOptions::ca_file`), and a SOCKS5 proxy with username/password
//! authentication, configured and from the environment.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Version;
use mcp_http::{Error, HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{bounded_by, text_blocks};
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
    Ok(text_blocks(&result))
}

/// The full name of this module's test `name`, as the test binary knows
/// it (for a run of one test in a child process).
fn in_this_module(name: &str) -> String {
    // `module_path!()` starts with the binary's crate name, which the
    // harness leaves out.
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
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
    cause: fn(&rustls::Error) -> bool,
) {
    let server = https_server(TlsConfig::new(chain, key), ReplyMode::Json).await;
    let client = mcp_http::connect(&server.url(), options(tls)).unwrap();
    let endpoint = format!("https://{}", server.local_addr());
    let check = |err: &Error| {
        // The TLS error itself is kept: in the source chain, and found by
        // `tls_error`.
        let tls = err.tls_error().expect("the rustls error is kept");
        assert!(cause(tls), "{tls:?}");
        assert!(std::error::Error::source(err).is_some());
        let Error::Connect { endpoint: at, method, reason, .. } = err else {
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
    bounded_by(TEST_TIMEOUT, async {
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
            let client = mcp_http::connect(&url, options(Some(root.client_config()))).unwrap();
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
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server = https_server(TlsConfig::new(vec![leaf], key), ReplyMode::Json).await;
        let mut config = rustls::ClientConfig::clone(&root.client_config());
        config.alpn_protocols = vec![b"spdy/3".to_vec()];
        // The client sets ALPN itself (it used to panic in the connector).
        let client = mcp_http::connect(&server.url(), options(Some(Arc::new(config)))).unwrap();
        assert_eq!(echo(&client, "alpn").await.unwrap(), "alpn");
        client.close().await.unwrap();
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let trusted = Ca::new("mcp test root");
        let stranger = Ca::new("someone else's root");
        let (leaf, key) = stranger.leaf(LOOPBACK, None);
        let cause = ["invalid peer certificate: UnknownIssuer"];
        let unknown = |e: &rustls::Error| {
            matches!(e, rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer))
        };
        refused(vec![leaf.clone()], key.clone(), Some(trusted.client_config()), &cause, unknown)
            .await;
        // The default roots (the platform's) do not know it either.
        refused(vec![leaf], key, None, &cause, unknown).await;
    })
    .await;
}

/// The default roots are the operating system's: a CA the machine trusts
/// (here through `SSL_CERT_FILE`, which the platform store reads on
/// Linux) is trusted without `ca_file`, and `Roots::Mozilla` does not know
/// it. Run in a child process of this test binary: the environment, and
/// the store loaded once, are the process's.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_platforms_roots_are_trusted_by_default() {
    const CHILD: &str = "MCP_HTTP_TEST_PLATFORM_ROOTS_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let endpoint = std::env::var("MCP_HTTP_TEST_ENDPOINT").unwrap();
        bounded_by(TEST_TIMEOUT, async {
            let client = mcp_http::connect(&endpoint, options(None)).unwrap();
            assert_eq!(echo(&client, "platform").await.unwrap(), "platform");
            client.close().await.unwrap();
            let mut mozilla = options(None);
            mozilla.roots = mcp_http::Roots::Mozilla;
            let client = mcp_http::connect(&endpoint, mozilla).unwrap();
            let err = echo(&client, "mozilla").await.unwrap_err();
            let unknown = matches!(
                err.tls_error(),
                Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer))
            );
            assert!(unknown, "{err}");
        })
        .await;
        return;
    }
    let root = Ca::new("platform test root");
    let (leaf, key) = root.leaf(LOOPBACK, None);
    let server = https_server(TlsConfig::new(vec![leaf], key), ReplyMode::Json).await;
    let bundle = temp_file("platform-ca.pem", &pem(&root.der));
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", &in_this_module("the_platforms_roots_are_trusted_by_default")])
        .args(["--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("MCP_HTTP_TEST_ENDPOINT", server.url())
        .env("SSL_CERT_FILE", &bundle)
        .env_remove("SSL_CERT_DIR");
    let out = tokio::task::spawn_blocking(move || child.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(bundle);
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_certificate_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, Some((2020, 2021)));
        // 1609459200 is 2021-01-01T00:00:00Z.
        let causes = [
            "invalid peer certificate: certificate expired: ",
            "but certificate is not valid after 1609459200 ",
        ];
        let expired = |e: &rustls::Error| {
            matches!(
                e,
                rustls::Error::InvalidCertificate(rustls::CertificateError::ExpiredContext { .. })
            )
        };
        refused(vec![leaf], key, Some(root.client_config()), &causes, expired).await;
    })
    .await;
}

#[tokio::test]
async fn a_certificate_for_another_host_name_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(&["mcp.example.test"], None);
        let cause = [concat!(
            r#"invalid peer certificate: certificate not valid for name "127.0.0.1"; "#,
            r#"certificate is only valid for DnsName("mcp.example.test")"#
        )];
        let wrong_name = |e: &rustls::Error| {
            matches!(
                e,
                rustls::Error::InvalidCertificate(
                    rustls::CertificateError::NotValidForNameContext { .. }
                )
            )
        };
        refused(vec![leaf], key, Some(root.client_config()), &cause, wrong_name).await;
    })
    .await;
}

/// With the `http2` feature the client picks `h2` when the server offers
/// it: every request the server saw came over HTTP/2, the standalone GET
/// stream and the SSE replies included (multiplexed on one connection).
#[cfg(feature = "http2")]
#[tokio::test]
async fn http2_is_negotiated_by_alpn() {
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server =
            https_server(TlsConfig::new(vec![leaf], key).with_http2(), ReplyMode::Sse).await;
        let client = mcp_http::connect(&server.url(), options(Some(root.client_config()))).unwrap();
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
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server =
            https_server(TlsConfig::new(vec![leaf], key).with_http2(), ReplyMode::Sse).await;
        let client = mcp_http::connect(&server.url(), options(Some(root.client_config()))).unwrap();
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

/// The PEM text of a DER certificate.
fn pem(der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// A file of this test run's temporary directory holding `text`.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let path =
        std::env::temp_dir().join(format!("mcp-http-test-{}-{nanos}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// What a test proxy saw: one line per tunnel (`CONNECT` target and
/// `Proxy-Authorization`, or the SOCKS5 address kind and address).
#[cfg(feature = "proxy")]
type ProxyLog = Arc<std::sync::Mutex<Vec<String>>>;

/// Connects to `upstream`, tells the client with `reply`, and copies both
/// ways until either side closes.
#[cfg(feature = "proxy")]
async fn splice<S>(mut client: S, upstream: std::net::SocketAddr, reply: &[u8])
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    let Ok(mut up) = tokio::net::TcpStream::connect(upstream).await else { return };
    if client.write_all(reply).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
    }
}

/// A CONNECT proxy spoken to over TLS (certificate `chain`, `key`): every
/// tunnel goes to `upstream`, whatever it asks for.
#[cfg(feature = "proxy")]
async fn tls_connect_proxy(
    chain: Vec<Vec<u8>>,
    key: Vec<u8>,
    upstream: std::net::SocketAddr,
) -> (std::net::SocketAddr, ProxyLog) {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            chain.into_iter().map(CertificateDer::from).collect(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = ProxyLog::default();
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, seen) = (acceptor.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(mut client) = acceptor.accept(tcp).await else { return };
                let Some(head) = crate::client_support::read_head(&mut client).await else {
                    return;
                };
                let target = head.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
                let auth = crate::client_support::proxy_authorization(&head).unwrap_or("-");
                seen.lock().unwrap().push(format!("{target} {auth}"));
                splice(client, upstream, b"HTTP/1.1 200 Connection Established\r\n\r\n").await;
            });
        }
    });
    (addr, log)
}

/// A SOCKS5 proxy that asks for username/password authentication
/// (`scott`/`tiger`), logs the address kind and address of each CONNECT,
/// and sends every tunnel to `upstream`.
#[cfg(feature = "proxy")]
async fn socks5_proxy(upstream: std::net::SocketAddr) -> (std::net::SocketAddr, ProxyLog) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    async fn session(client: &mut tokio::net::TcpStream, seen: &ProxyLog) -> std::io::Result<bool> {
        let mut two = [0u8; 2];
        client.read_exact(&mut two).await?;
        let mut methods = vec![0u8; usize::from(two[1])];
        client.read_exact(&mut methods).await?;
        if two[0] != 5 || !methods.contains(&2) {
            client.write_all(&[5, 0xff]).await?;
            return Ok(false);
        }
        client.write_all(&[5, 2]).await?;
        client.read_exact(&mut two).await?;
        let mut user = vec![0u8; usize::from(two[1])];
        client.read_exact(&mut user).await?;
        let mut len = [0u8; 1];
        client.read_exact(&mut len).await?;
        let mut password = vec![0u8; usize::from(len[0])];
        client.read_exact(&mut password).await?;
        let ok = user == b"scott" && password == b"tiger";
        client.write_all(&[1, if ok { 0 } else { 1 }]).await?;
        if !ok {
            seen.lock().unwrap().push("refused credentials".into());
            return Ok(false);
        }
        let mut head = [0u8; 4];
        client.read_exact(&mut head).await?;
        let address = match head[3] {
            1 => {
                let mut ip = [0u8; 4];
                client.read_exact(&mut ip).await?;
                format!("ipv4 {}", std::net::Ipv4Addr::from(ip))
            }
            4 => {
                let mut ip = [0u8; 16];
                client.read_exact(&mut ip).await?;
                format!("ipv6 {}", std::net::Ipv6Addr::from(ip))
            }
            _ => {
                client.read_exact(&mut len).await?;
                let mut name = vec![0u8; usize::from(len[0])];
                client.read_exact(&mut name).await?;
                format!("domain {}", String::from_utf8_lossy(&name))
            }
        };
        let mut port = [0u8; 2];
        client.read_exact(&mut port).await?;
        seen.lock().unwrap().push(format!("{address}:{}", u16::from_be_bytes(port)));
        Ok(head[1] == 1)
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = ProxyLog::default();
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                if matches!(session(&mut client, &seen).await, Ok(true)) {
                    splice(client, upstream, &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await;
                }
            });
        }
    });
    (addr, log)
}

/// The proxy's certificate is checked against the roots of `ca_file`; the
/// tunnel carries TLS to the server (the same CA), with the proxy's Basic
/// credentials on the CONNECT. Without the extra roots the proxy is
/// refused, and the error shows neither password nor the proxy URL.
#[cfg(feature = "proxy")]
#[tokio::test]
async fn an_https_proxy_tunnels_over_tls_trusting_the_ca_file() {
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test corporate root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server = https_server(TlsConfig::new(vec![leaf], key), ReplyMode::Json).await;
        let (proxy_leaf, proxy_key) = root.leaf(LOOPBACK, None);
        let (proxy, log) =
            tls_connect_proxy(vec![proxy_leaf], proxy_key, server.local_addr()).await;
        let ca_file = temp_file("ca.pem", &pem(&root.der));
        let proxied = |ca_file: Option<std::path::PathBuf>| {
            let mut o = options(None);
            o.ca_file = ca_file;
            o.event_stream = false;
            o.proxy = mcp_http::ProxyConfig::Url {
                url: format!("https://scott:tiger-secret@localhost:{}", proxy.port()),
                no_proxy: None,
            };
            o
        };
        let client = mcp_http::connect(&server.url(), proxied(Some(ca_file.clone()))).unwrap();
        assert!(client.transport().is_proxied());
        for i in 0..3 {
            assert_eq!(
                echo(&client, &format!("tls proxy {i}")).await.unwrap(),
                format!("tls proxy {i}")
            );
        }
        client.close().await.unwrap();
        let seen = log.lock().unwrap().clone();
        let connect = format!("CONNECT {} Basic c2NvdHQ6dGlnZXItc2VjcmV0", server.local_addr());
        assert!(!seen.is_empty() && seen.iter().all(|l| *l == connect), "{seen:?}");

        // The proxy's certificate is unknown without the extra roots.
        let before = log.lock().unwrap().len();
        let client = mcp_http::connect(&server.url(), proxied(None)).unwrap();
        let err = client.initialize().await.expect_err("the proxy is not trusted");
        let Error::Connect { reason, .. } = &err else { panic!("{err:?}") };
        assert!(reason.contains("UnknownIssuer"), "{reason}");
        assert!(
            matches!(
                err.tls_error(),
                Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer))
            ),
            "{err:?}"
        );
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("tiger-secret") && !shown.contains("scott"), "{shown}");
        assert_eq!(log.lock().unwrap().len(), before, "no CONNECT was sent");

        // A CA file with no certificate, and one that is not there, are
        // refused when the client is built.
        let empty = temp_file("empty.pem", "no certificate here\n");
        for path in [empty.clone(), ca_file.with_extension("missing")] {
            let err = mcp_http::connect(&server.url(), proxied(Some(path))).unwrap_err();
            assert!(matches!(err, Error::Tls { .. }), "{err:?}");
        }
        let mut both = proxied(Some(ca_file.clone()));
        both.tls = Some(root.client_config());
        assert!(matches!(mcp_http::connect(&server.url(), both), Err(Error::Tls { .. })));
        let _ = std::fs::remove_file(ca_file);
        let _ = std::fs::remove_file(empty);
        server.shutdown().await;
    })
    .await;
}

/// SOCKS5 with username/password: `socks5h://` hands the proxy the name,
/// `socks5://` the address it resolves to here; wrong credentials are a
/// connect error that shows no password.
#[cfg(feature = "proxy")]
#[tokio::test]
async fn a_socks5_proxy_with_credentials() {
    bounded_by(TEST_TIMEOUT, async {
        let root = Ca::new("mcp test root");
        let (leaf, key) = root.leaf(LOOPBACK, None);
        let server = https_server(TlsConfig::new(vec![leaf], key), ReplyMode::Sse).await;
        let (proxy, log) = socks5_proxy(server.local_addr()).await;
        let url = server.url().replace("127.0.0.1", "localhost");
        let port = server.local_addr().port();
        let via = |proxy_url: String| {
            let mut o = options(Some(root.client_config()));
            o.event_stream = false;
            o.proxy = mcp_http::ProxyConfig::Url { url: proxy_url, no_proxy: None };
            o
        };
        for (scheme, expected) in [
            ("socks5h", format!("domain localhost:{port}")),
            ("socks5", format!("loopback:{port}")),
        ] {
            log.lock().unwrap().clear();
            let o = via(format!("{scheme}://scott:tiger@127.0.0.1:{}", proxy.port()));
            let client = mcp_http::connect(&url, o).unwrap();
            assert!(client.transport().is_proxied());
            assert_eq!(echo(&client, scheme).await.unwrap(), scheme);
            client.close().await.unwrap();
            let seen = log.lock().unwrap().clone();
            assert!(!seen.is_empty(), "{scheme}: no tunnel");
            for line in &seen {
                if scheme == "socks5" {
                    // Resolved here: an address of localhost, never the name.
                    let (kind, rest) = line.split_once(' ').unwrap();
                    assert!(kind == "ipv4" || kind == "ipv6", "{line}");
                    let (ip, p) = rest.rsplit_once(':').unwrap();
                    assert!(ip.parse::<std::net::IpAddr>().unwrap().is_loopback(), "{line}");
                    assert_eq!(format!("loopback:{p}"), expected);
                } else {
                    assert_eq!(*line, expected);
                }
            }
        }
        let o = via(format!("socks5h://scott:wrong-secret@127.0.0.1:{}", proxy.port()));
        let client = mcp_http::connect(&url, o).unwrap();
        let started = Instant::now();
        let err = client.initialize().await.expect_err("refused credentials");
        assert!(started.elapsed() < FAIL_FAST, "took {:?}", started.elapsed());
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("wrong-secret") && !shown.contains("scott"), "{shown}");
        server.shutdown().await;
    })
    .await;
}

/// `all_proxy` and `NO_PROXY` from the environment (read when the client
/// is built). Run in a child process of this test binary, since the
/// environment is the process's: the parent starts the server and the
/// proxy, the child connects to `http://mcp.test:PORT/mcp` (a name only the
/// proxy knows) with the default `ProxyConfig::FromEnv`.
#[cfg(feature = "proxy")]
#[tokio::test]
async fn proxies_come_from_the_environment_and_no_proxy_bypasses_them() {
    const CHILD: &str = "MCP_HTTP_TEST_ENV_PROXY_CHILD";
    if let Ok(expect) = std::env::var(CHILD) {
        // The child: whatever the environment says.
        let endpoint = std::env::var("MCP_HTTP_TEST_ENDPOINT").unwrap();
        let mut o = HttpOptions::new("env");
        o.request_timeout = Duration::from_secs(10);
        o.client.era = mcp_peer::EraChoice::Legacy;
        o.event_stream = false;
        let client = mcp_http::connect(&endpoint, o).unwrap();
        assert_eq!(client.transport().is_proxied(), expect == "proxied");
        if expect == "proxied" {
            bounded_by(TEST_TIMEOUT, async {
                assert_eq!(echo(&client, "env").await.unwrap(), "env")
            })
            .await;
        }
        return;
    }
    // `mcp.test` is a name only the proxy knows: the server's DNS rebinding
    // guard must accept it as a host.
    let config = HttpConfig { allowed_hosts: vec!["mcp.test".into()], ..HttpConfig::default() };
    let server = serve_http(config).await.expect("the test server starts");
    let (proxy, log) = socks5_proxy(server.local_addr()).await;
    let endpoint = format!("http://mcp.test:{}/mcp", server.local_addr().port());
    let run = |expect: &str, no_proxy: &str| {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                &in_this_module("proxies_come_from_the_environment_and_no_proxy_bypasses_them"),
            ])
            .args(["--nocapture", "--test-threads", "1"])
            .env(CHILD, expect)
            .env("MCP_HTTP_TEST_ENDPOINT", &endpoint)
            .env("all_proxy", format!("socks5h://scott:tiger@127.0.0.1:{}", proxy.port()))
            .env("NO_PROXY", no_proxy)
            .env_remove("ALL_PROXY")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("no_proxy");
        child
    };
    for (expect, no_proxy) in [("proxied", ""), ("direct", "example.com, mcp.test")] {
        let mut child = run(expect, no_proxy);
        let out = tokio::task::spawn_blocking(move || child.output().unwrap()).await.unwrap();
        assert!(
            out.status.success(),
            "{expect}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("1 passed"), "{stdout}");
    }
    let seen = log.lock().unwrap().clone();
    let expected = format!("domain mcp.test:{}", server.local_addr().port());
    assert!(!seen.is_empty() && seen.iter().all(|l| *l == expected), "{seen:?}");
    server.shutdown().await;
}
