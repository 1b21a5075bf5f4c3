//! OAuth through `mcp-auth`, end to end on loopback: the testkit's MCP
//! server requires a bearer token and points its 401 at a minimal
//! authorization server written here (protected resource metadata,
//! authorization server metadata, dynamic registration, an authorization
//! endpoint that approves at once, a token endpoint that checks PKCE and
//! `resource`). The client discovers, registers, authorizes through the
//! headless handler, exchanges the code and sends the request again with
//! `Authorization: Bearer`; the token never reaches the authorization
//! server (another origin), a log line or an error.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::mcp_auth::s256_challenge;
use mcp_http::mcp_auth::url::query_params;
use mcp_http::{Error, HttpOptions, OAuthOptions, StaticAuth};
use mcp_test_support::{LogCapture, bounded_by};
use mcp_testkit::{HttpConfig, HttpServerHandle, serve_http};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const TOKEN: &str = "oauth-access-token-secret-1";

/// What the authorization server saw and handed out.
#[derive(Default)]
struct AsState {
    base: String,
    /// The MCP server URL, as the protected resource metadata gives it.
    resource: String,
    /// (code, PKCE challenge) of each approved authorization.
    codes: Vec<(String, String)>,
    /// Every request: path and its `Authorization` header.
    seen: Vec<(String, Option<String>)>,
    /// Every code verifier the token endpoint got.
    verifiers: Vec<String>,
    /// The `resource` of each token request.
    token_resources: Vec<String>,
    /// The authorization servers the protected resource metadata names
    /// (`None`: this one).
    names: Option<Vec<String>>,
    /// Where the authorization server metadata redirects (`None`: it does
    /// not).
    redirect_metadata: Option<String>,
}

type Shared = Arc<Mutex<AsState>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, AsState> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

fn json_reply(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .expect("a valid response")
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn handle(state: Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    lock(&state).seen.push((path.clone(), auth));
    let body = match tokio::time::timeout(Duration::from_secs(5), req.into_body().collect()).await {
        Ok(Ok(b)) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        _ => String::new(),
    };
    let base = lock(&state).base.clone();
    match path.as_str() {
        "/prm" => {
            let resource = lock(&state).resource.clone();
            let names = lock(&state).names.clone().unwrap_or_else(|| vec![base]);
            json_reply(
                StatusCode::OK,
                json!({"resource": resource, "authorization_servers": names, "scopes_supported": ["mcp"]}),
            )
        }
        "/.well-known/oauth-authorization-server" if lock(&state).redirect_metadata.is_some() => {
            let to = lock(&state).redirect_metadata.clone().unwrap_or_default();
            Response::builder()
                .status(StatusCode::TEMPORARY_REDIRECT)
                .header("location", to)
                .body(Full::new(Bytes::new()))
                .expect("a valid response")
        }
        "/.well-known/oauth-authorization-server" => json_reply(
            StatusCode::OK,
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        "/register" => {
            let asked: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            json_reply(
                StatusCode::CREATED,
                json!({
                    "client_id": "registered-client",
                    "token_endpoint_auth_method": "none",
                    "redirect_uris": asked.get("redirect_uris").cloned().unwrap_or(json!([])),
                }),
            )
        }
        "/authorize" => {
            let params = query_params(&query);
            let mut st = lock(&state);
            let ok = param(&params, "code_challenge_method") == Some("S256")
                && param(&params, "resource") == Some(st.resource.as_str())
                && param(&params, "client_id") == Some("registered-client");
            let (Some(challenge), Some(redirect), Some(client_state), true) = (
                param(&params, "code_challenge"),
                param(&params, "redirect_uri"),
                param(&params, "state"),
                ok,
            ) else {
                return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_request"}));
            };
            let code = format!("authorization-code-{}", st.codes.len() + 1);
            st.codes.push((code.clone(), challenge.to_owned()));
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", format!("{redirect}?code={code}&state={client_state}"))
                .body(Full::new(Bytes::new()))
                .expect("a valid response")
        }
        "/token" => {
            let params = query_params(&body);
            let mut st = lock(&state);
            let verifier = param(&params, "code_verifier").unwrap_or("").to_owned();
            let code = param(&params, "code").unwrap_or("");
            let resource = param(&params, "resource").unwrap_or("").to_owned();
            let pkce_ok =
                st.codes.iter().any(|(c, ch)| c == code && *ch == s256_challenge(&verifier));
            st.verifiers.push(verifier);
            st.token_resources.push(resource.clone());
            if param(&params, "grant_type") != Some("authorization_code")
                || !pkce_ok
                || resource != st.resource
            {
                return json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
            }
            json_reply(
                StatusCode::OK,
                json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
            )
        }
        _ => json_reply(StatusCode::NOT_FOUND, json!({"error": "not found"})),
    }
}

/// Starts the authorization server on a free loopback port.
async fn authorization_server() -> Shared {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    let state: Shared =
        Arc::new(Mutex::new(AsState { base: format!("http://{addr}"), ..Default::default() }));
    let shared = state.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let state = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(state, req).await) }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    state
}

/// The authorization server and an MCP server that points its 401 at it.
async fn servers(forbid_scope: bool) -> (Shared, HttpServerHandle) {
    let auth = authorization_server().await;
    let base = lock(&auth).base.clone();
    let server = mcp_server(&format!("{base}/prm"), forbid_scope).await;
    lock(&auth).resource = server.url();
    (auth, server)
}

/// An MCP server whose 401 names `metadata` as its protected resource
/// metadata.
async fn mcp_server(metadata: &str, forbid_scope: bool) -> HttpServerHandle {
    serve_http(HttpConfig {
        require_auth: Some(TOKEN.into()),
        challenge: Some(format!("Bearer resource_metadata=\"{metadata}\", scope=\"mcp\"")),
        forbid_scope,
        ..HttpConfig::default()
    })
    .await
    .expect("the test server starts")
}

fn options() -> HttpOptions {
    let mut options =
        HttpOptions::new("oauth-test").with_oauth(OAuthOptions::new("oauth-test").headless());
    options.request_timeout = Duration::from_secs(10);
    options
}

/// Runs `f` on a current-thread runtime with every `tracing` event captured
/// at TRACE; returns the log text.
fn captured<F: std::future::Future<Output = ()>>(f: F) -> String {
    let logs = LogCapture::start(tracing::Level::TRACE);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(bounded_by(Duration::from_secs(60), f));
    drop(runtime);
    logs.text()
}

#[test]
fn a_401_runs_the_flow_and_the_request_is_sent_again_with_the_token() {
    let mut secrets: Vec<String> = vec![TOKEN.into()];
    let logs = captured(async {
        let (auth, server) = servers(false).await;
        let client = mcp_http::connect(&server.url(), options()).expect("connect");
        client.initialize().await.expect("initialize after the OAuth flow");
        let tools = client.list_tools().await.expect("tools/list");
        assert!(!tools.is_empty());
        client.ping().await.expect("ping");
        let oauth = client.transport().oauth().expect("OAuth is configured");
        assert_eq!(oauth.granted_scopes(), vec!["mcp".to_owned()]);
        client.close().await.expect("close");

        // The MCP server: the first request went without a token, got 401,
        // and every later one carried it.
        let requests = server.requests();
        let bearer = format!("Bearer {TOKEN}");
        let with: Vec<bool> = requests
            .iter()
            .map(|r| r.headers.get("authorization").is_some_and(|v| v == bearer.as_str()))
            .collect();
        assert!(!with[0], "the first request had no token yet");
        assert!(with.len() >= 4 && with[1..].iter().all(|w| *w), "{with:?}");

        let st = lock(&auth);
        // One authorization, with PKCE and `resource` checked by the server.
        assert_eq!(st.codes.len(), 1);
        assert_eq!(st.token_resources, vec![server.url()]);
        let paths: Vec<&str> = st.seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/prm",
                "/.well-known/oauth-authorization-server",
                "/register",
                "/authorize",
                "/token"
            ]
        );
        // Nothing was sent to the authorization server's origin with the token
        // (nor any credential on discovery and registration).
        assert!(st.seen.iter().all(|(_, a)| a.is_none()), "{:?}", st.seen);
        secrets.extend(st.codes.iter().map(|(c, _)| c.clone()));
        secrets.extend(st.verifiers.iter().cloned());
    });
    assert!(logs.contains("running the OAuth flow"), "{logs}");
    assert!(secrets.len() >= 3);
    for secret in &secrets {
        for line in logs.lines() {
            assert!(!line.contains(secret.as_str()), "a secret in the log line {line}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_scope_steps_up_a_bounded_number_of_times() {
    let (auth, server) = servers(true).await;
    let client = mcp_http::connect(&server.url(), options()).expect("connect");
    let err = tokio::time::timeout(Duration::from_secs(30), client.initialize())
        .await
        .expect("bounded")
        .expect_err("every token is refused with 403");
    assert!(matches!(err, Error::Auth { status: StatusCode::FORBIDDEN, .. }), "{err:?}");
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    // The first authorization, then step-ups until the union adds nothing:
    // bounded by mcp-auth's per-request limits.
    let authorizations = lock(&auth).codes.len();
    assert!((2..=3).contains(&authorizations), "{authorizations} authorizations");
}

#[tokio::test]
async fn static_credentials_and_oauth_are_exclusive() {
    let mut options = options();
    options.auth = StaticAuth::Bearer("static-bearer-secret-2".into());
    let err = mcp_http::connect("http://127.0.0.1:9/mcp", options).expect_err("refused");
    assert!(matches!(err, Error::InvalidAuth { .. }), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("static-bearer-secret-2"), "{err}");
}

#[tokio::test]
async fn oauth_refuses_a_non_loopback_http_endpoint() {
    let err = mcp_http::connect("http://mcp.example.com/mcp", options()).expect_err("refused");
    assert!(matches!(err, Error::InvalidAuth { .. }), "{err:?}");
}

/// The refusal inside an OAuth failure.
fn refused_class(err: &Error) -> Option<mcp_http::mcp_auth::AddressClass> {
    use mcp_http::mcp_auth::{Error as AuthError, FetchError};
    match err {
        Error::Auth { source, .. } => match &**source {
            AuthError::Fetch { source: FetchError::Refused { class, .. }, .. } => Some(*class),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_may_not_send_the_client_to_cloud_metadata() {
    // The MCP server (on loopback) points its 401 at the cloud metadata
    // address: refused before anything is sent, with a typed error that
    // names the (redacted) URL and the reason.
    let server = mcp_server("https://169.254.169.254/latest/meta-data/iam?x=secret-q", false).await;
    let client = mcp_http::connect(&server.url(), options()).expect("connect");
    let err = tokio::time::timeout(Duration::from_secs(10), client.initialize())
        .await
        .expect("refused at once, not timed out")
        .expect_err("refused");
    assert_eq!(refused_class(&err), Some(mcp_http::mcp_auth::AddressClass::LinkLocal), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("https://169.254.169.254") && text.contains("link-local"), "{text}");
    assert!(!text.contains("secret-q") && !text.contains("meta-data"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_may_not_name_a_private_authorization_server_for_a_loopback_server() {
    // Loopback is the MCP server's class, so its metadata is fetched; the
    // authorization server it names on a private network is not.
    let (auth, server) = servers(false).await;
    lock(&auth).names = Some(vec!["https://10.1.2.3/".into(), "https://[fd00::1]/".into()]);
    let client = mcp_http::connect(&server.url(), options()).expect("connect");
    let err = tokio::time::timeout(Duration::from_secs(10), client.initialize())
        .await
        .expect("refused at once")
        .expect_err("refused");
    assert_eq!(refused_class(&err), Some(mcp_http::mcp_auth::AddressClass::Private), "{err:?}");
    let paths: Vec<String> = lock(&auth).seen.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(paths, ["/prm"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_cloud_metadata_is_not_followed() {
    // Every OAuth request goes through the guarded fetcher, which follows
    // no redirect: a 307 to the metadata service ends discovery there.
    let (auth, server) = servers(false).await;
    lock(&auth).redirect_metadata = Some("http://169.254.169.254/latest/meta-data/".into());
    let client = mcp_http::connect(&server.url(), options()).expect("connect");
    let err = tokio::time::timeout(Duration::from_secs(10), client.initialize())
        .await
        .expect("at once")
        .expect_err("no authorization server metadata");
    let Error::Auth { source, .. } = &err else { panic!("{err:?}") };
    assert!(
        matches!(
            **source,
            mcp_http::mcp_auth::Error::AuthorizationServerMetadataNotFound { .. }
                | mcp_http::mcp_auth::Error::HttpStatus { status: 307, .. }
        ),
        "{err:?}"
    );
    assert!(!err.to_string().contains("169.254"), "{err}");
}
