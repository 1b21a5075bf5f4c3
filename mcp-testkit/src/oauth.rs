//! A minimal OAuth 2.1 authorization server on loopback, for OAuth client
//! tests: protected resource metadata (`/prm`), authorization server
//! metadata, dynamic client registration, an authorization endpoint that
//! approves at once (a `302` to the redirect URI with a code and the
//! client's `state`), and a token endpoint that hands out one fixed access
//! token for a code it issued.
//!
//! Pair it with [`serve_http`](crate::serve_http) and
//! [`HttpConfig::require_auth`](crate::HttpConfig::require_auth) set to the
//! same token, and [`HttpConfig::challenge`](crate::HttpConfig::challenge)
//! set to [`FakeAuthServer::challenge`]. It checks the parameters a client
//! must send (`S256`, `resource`, `state`, a verifier, the issued code, the
//! registered client id) but does not recompute the PKCE challenge: a
//! client's PKCE is its own crate's test.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use mcp_testkit::oauth::FakeAuthServer;
//! use mcp_testkit::{HttpConfig, serve_http};
//!
//! let auth = FakeAuthServer::start("test-token").await?;
//! let server = serve_http(HttpConfig {
//!     require_auth: Some("test-token".into()),
//!     challenge: Some(auth.challenge()),
//!     ..HttpConfig::default()
//! })
//! .await?;
//! auth.set_resource(server.url());
//! # Ok(()) }
//! ```

use std::convert::Infallible;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The client id the registration endpoint hands out.
pub const REGISTERED_CLIENT_ID: &str = "registered-client";

#[derive(Default)]
struct State {
    base: String,
    token: String,
    resource: String,
    codes: Vec<String>,
    paths: Vec<String>,
    authorize_scopes: Vec<Option<String>>,
    tokens_issued: usize,
}

/// A running fake authorization server (see the [module](self) docs). It
/// stops when the runtime that started it shuts down.
#[derive(Clone)]
pub struct FakeAuthServer {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for FakeAuthServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeAuthServer").field("base", &self.lock().base).finish_non_exhaustive()
    }
}

impl FakeAuthServer {
    /// Starts the server on a free `127.0.0.1` port; its token endpoint
    /// hands out `token`.
    pub async fn start(token: impl Into<String>) -> io::Result<FakeAuthServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let state = Arc::new(Mutex::new(State { base, token: token.into(), ..Default::default() }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, req).await) }
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(FakeAuthServer { state })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The issuer URL (`http://127.0.0.1:<port>`).
    pub fn base(&self) -> String {
        self.lock().base.clone()
    }

    /// The `WWW-Authenticate` value an MCP server protected by this server
    /// answers a 401 with (pointing at `/prm`).
    pub fn challenge(&self) -> String {
        format!("Bearer resource_metadata=\"{}/prm\", scope=\"mcp\"", self.base())
    }

    /// Sets the MCP server URL the protected resource metadata names (and
    /// the `resource` the endpoints require).
    pub fn set_resource(&self, resource: impl Into<String>) {
        self.lock().resource = resource.into();
    }

    /// How many access tokens the token endpoint handed out.
    pub fn tokens_issued(&self) -> usize {
        self.lock().tokens_issued
    }

    /// The paths requested so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.lock().paths.clone()
    }

    /// The `scope` parameter of each authorization request so far, in order
    /// (`None` where it was absent).
    pub fn authorize_scopes(&self) -> Vec<Option<String>> {
        self.lock().authorize_scopes.clone()
    }
}

fn reply(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn bad_request(error: &str) -> Response<Full<Bytes>> {
    reply(StatusCode::BAD_REQUEST, json!({ "error": error }))
}

/// `application/x-www-form-urlencoded` pairs (query strings and form
/// bodies).
fn form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn get<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn handle(state: &Mutex<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    lock().paths.push(path.clone());
    let body = match tokio::time::timeout(Duration::from_secs(5), req.into_body().collect()).await {
        Ok(Ok(b)) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        _ => String::new(),
    };
    let base = lock().base.clone();
    match path.as_str() {
        "/prm" => reply(
            StatusCode::OK,
            json!({
                "resource": lock().resource,
                "authorization_servers": [base],
                "scopes_supported": ["mcp"],
            }),
        ),
        "/.well-known/oauth-authorization-server" => reply(
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
            reply(
                StatusCode::CREATED,
                json!({
                    "client_id": REGISTERED_CLIENT_ID,
                    "token_endpoint_auth_method": "none",
                    "redirect_uris": asked.get("redirect_uris").cloned().unwrap_or(json!([])),
                }),
            )
        }
        "/authorize" => {
            let params = form(&query);
            let mut st = lock();
            st.authorize_scopes.push(get(&params, "scope").map(str::to_owned));
            let valid = get(&params, "response_type") == Some("code")
                && get(&params, "code_challenge_method") == Some("S256")
                && get(&params, "code_challenge").is_some_and(|c| !c.is_empty())
                && get(&params, "resource") == Some(st.resource.as_str())
                && get(&params, "client_id") == Some(REGISTERED_CLIENT_ID);
            let (true, Some(redirect), Some(client_state)) =
                (valid, get(&params, "redirect_uri"), get(&params, "state"))
            else {
                return bad_request("invalid_request");
            };
            let code = format!("code-{}", st.codes.len() + 1);
            st.codes.push(code.clone());
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", format!("{redirect}?code={code}&state={client_state}"))
                .body(Full::new(Bytes::new()))
                .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
        }
        "/token" => {
            let params = form(&body);
            let mut st = lock();
            let code = get(&params, "code").unwrap_or("");
            let valid = get(&params, "grant_type") == Some("authorization_code")
                && get(&params, "code_verifier").is_some_and(|v| !v.is_empty())
                && get(&params, "resource") == Some(st.resource.as_str())
                && st.codes.iter().any(|c| c == code);
            if !valid {
                return bad_request("invalid_grant");
            }
            st.codes.retain(|c| c != code);
            st.tokens_issued += 1;
            reply(
                StatusCode::OK,
                json!({"access_token": st.token, "token_type": "Bearer", "expires_in": 3600}),
            )
        }
        _ => reply(StatusCode::NOT_FOUND, json!({"error": "not found"})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_decoding() {
        assert_eq!(
            form("a=1&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&s=x+y&e=%&t=%zz&"),
            vec![
                ("a".into(), "1".into()),
                ("redirect_uri".into(), "http://127.0.0.1:1/cb".into()),
                ("s".into(), "x y".into()),
                ("e".into(), "%".into()),
                ("t".into(), "%zz".into()),
            ]
        );
    }
}
