//! DPoP (RFC 9449) end to end on loopback. A gate written here stands in
//! front of the testkit's MCP server and requires DPoP as a resource
//! server does: `Authorization: DPoP <token>` (a 401 challenging with the
//! `DPoP` scheme alone otherwise), a proof on every request whose `htm`,
//! `htu` and `ath` name that very request, whose key is the one the token
//! was bound to and whose `jti` is new, and its nonce, handed out once
//! with `use_dpop_nonce`. The testkit's authorization server requires a
//! proof (and its own nonce) on the token request and binds the token.
//! Only what passes the gate reaches the MCP server. Every `tracing` event
//! is captured: no token or proof may appear in one.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_http::mcp_auth::access_token_hash;
use mcp_http::{HttpOptions, OAuthOptions};
use mcp_test_support::LogCapture;
use mcp_testkit::oauth::{DpopRefusal, FakeAuthServer, check_dpop_proof};
use mcp_testkit::{HttpConfig, HttpServerHandle, serve_http};
use tokio::net::TcpListener;

const TOKEN: &str = "dpop-bound-access-token-3";
/// The authorization server's nonce.
const AS_NONCE: &str = "as-nonce-7";
/// The gate's nonce.
const RS_NONCE: &str = "rs-nonce-4";

type Body = BoxBody<Bytes, hyper::Error>;

/// What the gate saw.
#[derive(Default)]
struct GateLog {
    /// Every request: method, path, and the `Authorization` scheme.
    seen: Vec<(String, String, Option<String>)>,
    /// Why proofs were refused (`invalid_dpop_proof`).
    refusals: Vec<String>,
    /// `use_dpop_nonce` challenges sent.
    nonce_challenges: usize,
    /// Requests that passed and went on to the MCP server.
    forwarded: usize,
    /// Every accepted proof's `jti`.
    jtis: HashSet<String>,
    /// Every proof sent.
    proofs: Vec<String>,
}

struct Gate {
    base: String,
    upstream: String,
    auth: FakeAuthServer,
    client: Client<HttpConnector, Incoming>,
    log: Mutex<GateLog>,
}

impl Gate {
    fn log(&self) -> MutexGuard<'_, GateLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn local(status: StatusCode, headers: &[(&str, String)]) -> Response<Body> {
    let mut b = Response::builder().status(status);
    for (name, value) in headers {
        b = b.header(*name, value);
    }
    b.body(Full::new(Bytes::new()).map_err(|never| match never {}).boxed()).expect("a response")
}

async fn handle(gate: Arc<Gate>, mut req: Request<Incoming>) -> Response<Body> {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let target = req.uri().path_and_query().map_or(path.clone(), |p| p.as_str().to_owned());
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let authorization = header("authorization").map(str::to_owned);
    let proof = header("dpop").map(str::to_owned);
    let scheme = authorization.as_deref().and_then(|a| a.split(' ').next()).map(str::to_owned);
    {
        let mut log = gate.log();
        log.seen.push((method.clone(), path.clone(), scheme));
        log.proofs.extend(proof.clone());
    }

    // An old address: sent on, before any authorization check.
    if path == "/moved" {
        return local(StatusCode::TEMPORARY_REDIRECT, &[("location", "/mcp".into())]);
    }
    // The same, handing out the gate's nonce on the way.
    if path == "/moved-with-nonce" {
        let headers = [("location", "/mcp".into()), ("dpop-nonce", RS_NONCE.into())];
        return local(StatusCode::PERMANENT_REDIRECT, &headers);
    }
    let refuse = |error: Option<&str>| {
        let mut challenge = String::from("DPoP algs=\"ES256\"");
        if let Some(e) = error {
            challenge.push_str(&format!(", error=\"{e}\""));
        }
        challenge.push_str(&format!(", resource_metadata=\"{}/prm\"", gate.auth.base()));
        let mut headers = vec![("www-authenticate", challenge)];
        if error == Some("use_dpop_nonce") {
            headers.push(("dpop-nonce", RS_NONCE.into()));
        }
        local(StatusCode::UNAUTHORIZED, &headers)
    };
    if authorization.as_deref() != Some(format!("DPoP {TOKEN}").as_str()) {
        return refuse(None);
    }
    let url = gate.url(&target);
    let ath = access_token_hash(TOKEN);
    let checked = check_dpop_proof(proof.as_deref(), &method, &url, Some(&ath), Some(RS_NONCE));
    let jwk = match checked {
        Ok(jwk) => jwk,
        Err(DpopRefusal::Nonce) => {
            gate.log().nonce_challenges += 1;
            return refuse(Some("use_dpop_nonce"));
        }
        Err(refusal) => {
            gate.log().refusals.push(format!("{method} {path}: {refusal:?}"));
            return refuse(Some("invalid_dpop_proof"));
        }
    };
    if Some(&jwk) != gate.auth.dpop_jwk().as_ref() {
        gate.log().refusals.push(format!("{method} {path}: not the token's key"));
        return refuse(Some("invalid_dpop_proof"));
    }
    let jti = proof
        .as_deref()
        .and_then(mcp_testkit::oauth::jwt_parts)
        .and_then(|(_, claims)| claims["jti"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if !gate.log().jtis.insert(jti) {
        gate.log().refusals.push(format!("{method} {path}: a replayed jti"));
        return refuse(Some("invalid_dpop_proof"));
    }
    gate.log().forwarded += 1;

    // On to the MCP server, without the credentials.
    let headers = req.headers_mut();
    for name in ["authorization", "dpop", "host"] {
        headers.remove(name);
    }
    *req.uri_mut() = format!("{}{target}", gate.upstream).parse().expect("an upstream URI");
    match gate.client.request(req).await {
        Ok(resp) => resp.map(|b| b.boxed()),
        Err(_) => local(StatusCode::BAD_GATEWAY, &[]),
    }
}

/// The authorization server (requiring DPoP), the MCP server, and the gate
/// in front of it, whose `/prm` points at the authorization server.
async fn servers() -> (FakeAuthServer, HttpServerHandle, Arc<Gate>) {
    let auth = FakeAuthServer::start(TOKEN).await.expect("the authorization server starts");
    auth.require_dpop(AS_NONCE);
    let mcp = serve_http(HttpConfig::default()).await.expect("the MCP server starts");
    let upstream = mcp.url();
    let upstream = upstream.strip_suffix("/mcp").expect("the endpoint is /mcp").to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let gate = Arc::new(Gate {
        base: format!("http://{}", listener.local_addr().expect("an address")),
        upstream,
        auth: auth.clone(),
        client: Client::builder(TokioExecutor::new()).build_http(),
        log: Mutex::default(),
    });
    let shared = gate.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let gate = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let gate = gate.clone();
                    async move { Ok::<_, Infallible>(handle(gate, req).await) }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (auth, mcp, gate)
}

fn options(follow_redirects: bool) -> HttpOptions {
    let mut options =
        HttpOptions::new("dpop-test").with_oauth(OAuthOptions::new("dpop-test").headless());
    options.request_timeout = Duration::from_secs(10);
    options.follow_redirects = follow_redirects;
    options
}

/// Connects to the gate's `path`, initializes, lists the tools, pings and
/// closes; then checks what the gate and the authorization server saw.
/// Everything the clients and servers log, on every thread of the runtime
/// the session runs on, is captured for the test alone.
fn session_through_the_gate(path: &str, follow_redirects: bool) -> Vec<String> {
    let logs = LogCapture::start(tracing::Level::TRACE);
    logs.multi_thread_runtime(2).block_on(session(&logs, path, follow_redirects, 1))
}

async fn session(
    logs: &LogCapture,
    path: &str,
    follow_redirects: bool,
    nonce_challenges: usize,
) -> Vec<String> {
    let (auth, _mcp, gate) = servers().await;
    let endpoint = gate.url(path);
    auth.set_resource(endpoint.as_str());
    let run = async {
        let client = mcp_http::connect(&endpoint, options(follow_redirects)).expect("connect");
        client.initialize().await.expect("initialize through the gate");
        let tools = client.list_tools().await.expect("tools/list");
        assert!(!tools.is_empty());
        client.ping().await.expect("ping");
        let oauth = client.transport().oauth().expect("OAuth is configured");
        let header = oauth.authorization_header().expect("a token");
        assert_eq!(header.to_str().ok(), Some(format!("DPoP {TOKEN}").as_str()));
        client.close().await.expect("close");
    };
    tokio::time::timeout(Duration::from_secs(60), run).await.expect("bounded");

    let log = gate.log();
    assert!(log.refusals.is_empty(), "refused proofs: {:?}", log.refusals);
    // The nonce was asked for (at most) once and kept for every later proof.
    assert_eq!(log.nonce_challenges, nonce_challenges);
    // initialize, notifications/initialized, tools/list, ping at least.
    assert!(log.forwarded >= 4, "{} forwarded; {:?}", log.forwarded, log.seen);
    // The token never went as a Bearer token.
    assert!(log.seen.iter().all(|(_, _, s)| s.as_deref() != Some("Bearer")), "{:?}", log.seen);
    // One token, bound at the authorization server after its own nonce.
    assert_eq!(auth.tokens_issued(), 1);
    assert_eq!(auth.dpop_nonce_challenges(), 1);
    assert!(auth.dpop_refusals().is_empty(), "{:?}", auth.dpop_refusals());

    // The flow was logged, the token and the proofs were not.
    let text = logs.text();
    assert!(text.contains("running the OAuth flow"), "{text}");
    assert!(log.proofs.len() > log.forwarded, "{} proofs", log.proofs.len());
    for secret in log.proofs.iter().map(String::as_str).chain([TOKEN]) {
        assert!(!text.contains(secret), "a secret in the logs: {secret}");
    }
    log.seen.iter().map(|(m, p, _)| format!("{m} {p}")).collect()
}

#[test]
fn a_server_that_requires_dpop_gets_a_bound_token_and_a_proof_per_request() {
    let seen = session_through_the_gate("/mcp", false);
    assert!(seen.iter().all(|s| s.ends_with(" /mcp")), "{seen:?}");
}

#[test]
fn after_a_same_origin_redirect_the_proof_names_the_redirect_target() {
    let seen = session_through_the_gate("/moved", true);
    // Every request went to the old address first, then to the new one,
    // where its proof was checked against the new URL.
    let moved = seen.iter().filter(|s| s.ends_with(" /moved")).count();
    let mcp = seen.iter().filter(|s| s.ends_with(" /mcp")).count();
    assert!(moved >= 4 && moved == mcp, "{seen:?}");
}

#[test]
fn a_nonce_on_a_redirect_is_kept_and_used_by_the_proof_for_its_target() {
    let logs = LogCapture::start(tracing::Level::TRACE);
    // The 308 that hands out the nonce comes before the first proof: no
    // proof is ever refused for want of it.
    let seen = logs.multi_thread_runtime(2).block_on(session(&logs, "/moved-with-nonce", true, 0));
    let moved = seen.iter().filter(|s| s.ends_with(" /moved-with-nonce")).count();
    assert!(moved >= 4, "{seen:?}");
}
