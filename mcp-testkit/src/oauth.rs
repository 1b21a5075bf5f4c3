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
//! Switches for the other paths a client must handle: the user denies
//! ([`FakeAuthServer::deny_authorizations`]), and DPoP (RFC 9449,
//! [`FakeAuthServer::require_dpop`]: a proof on the token request, a
//! `use_dpop_nonce` challenge, a DPoP-bound token). [`check_dpop_proof`]
//! checks a proof's claims, for a test resource server that requires DPoP.
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
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
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
    /// Authorization requests are answered with `error=access_denied`.
    deny: bool,
    /// DPoP is required, with this nonce in the proofs.
    dpop_nonce: Option<String>,
    /// The public key the last DPoP-bound token was bound to.
    dpop_jwk: Option<Value>,
    dpop_nonce_challenges: usize,
    dpop_refusals: Vec<String>,
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

    /// Starts this server and, with [`serve_http`](crate::serve_http), an
    /// MCP server it protects: `config` with
    /// [`require_auth`](crate::HttpConfig::require_auth) set to `token` and
    /// its 401 pointing here; the protected resource metadata names the MCP
    /// server's URL.
    pub async fn with_protected_server(
        token: &str,
        config: crate::HttpConfig,
    ) -> io::Result<(FakeAuthServer, crate::HttpServerHandle)> {
        let auth = FakeAuthServer::start(token).await?;
        let server = crate::serve_http(crate::HttpConfig {
            require_auth: Some(token.to_owned()),
            challenge: Some(auth.challenge()),
            ..config
        })
        .await?;
        auth.set_resource(server.url());
        Ok((auth, server))
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

    /// With `true`, the user says no: the authorization endpoint redirects
    /// to the redirect URI with `error=access_denied` and the client's
    /// `state`, and issues no code.
    pub fn deny_authorizations(&self, deny: bool) {
        self.lock().deny = deny;
    }

    /// Requires DPoP (RFC 9449): the metadata lists
    /// `dpop_signing_alg_values_supported: ["ES256"]` and the protected
    /// resource metadata `dpop_bound_access_tokens_required`; a token
    /// request needs a `DPoP` proof ([`check_dpop_proof`] for `POST` and
    /// the token endpoint) carrying `nonce`: one without it is answered with
    /// `use_dpop_nonce` and a `DPoP-Nonce` header, an invalid one with
    /// `invalid_dpop_proof`. The token is then of type `DPoP`, bound to the
    /// proof's key ([`dpop_jwk`](Self::dpop_jwk)).
    pub fn require_dpop(&self, nonce: impl Into<String>) {
        self.lock().dpop_nonce = Some(nonce.into());
    }

    /// The public key (JWK) of the proof the last DPoP-bound token was
    /// issued for.
    pub fn dpop_jwk(&self) -> Option<Value> {
        self.lock().dpop_jwk.clone()
    }

    /// How many token requests were answered with `use_dpop_nonce`.
    pub fn dpop_nonce_challenges(&self) -> usize {
        self.lock().dpop_nonce_challenges
    }

    /// Why token requests' DPoP proofs were refused (`invalid_dpop_proof`),
    /// in order.
    pub fn dpop_refusals(&self) -> Vec<String> {
        self.lock().dpop_refusals.clone()
    }
}

/// Why [`check_dpop_proof`] refused a proof.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopRefusal {
    /// The proof is well formed but lacks the server's nonce (answer
    /// `use_dpop_nonce`).
    Nonce,
    /// The proof is missing or wrong (answer `invalid_dpop_proof`); the
    /// reason names the member, never a credential.
    Invalid(String),
}

/// The header and the claims of a compact JWT, without checking its
/// signature; `None` when it is not three base64url segments with JSON
/// objects in the first two.
pub fn jwt_parts(jwt: &str) -> Option<(Value, Value)> {
    let mut segments = jwt.split('.');
    let mut part = || -> Option<Value> {
        let bytes = URL_SAFE_NO_PAD.decode(segments.next()?).ok()?;
        serde_json::from_slice::<Value>(&bytes).ok().filter(Value::is_object)
    };
    let (header, claims) = (part()?, part()?);
    (segments.next().is_some_and(|s| !s.is_empty()) && segments.next().is_none())
        .then_some((header, claims))
}

/// Checks a DPoP proof (RFC 9449 §4.3) for one request: `typ` `dpop+jwt`,
/// `alg` ES256 with a public EC key in `jwk` (no private member), `htm`
/// the request's method, `htu` its URL without query and fragment, `iat`
/// within five minutes of now, a `jti`, `ath` when the request carries an
/// access token (`ath`: the base64url SHA-256 of it, which the caller
/// computes), and `nonce` when the server requires one. Returns the
/// proof's public key. The signature is not verified (this crate has no
/// cryptography): a client's signatures are its own crate's test.
pub fn check_dpop_proof(
    proof: Option<&str>,
    method: &str,
    url: &str,
    ath: Option<&str>,
    nonce: Option<&str>,
) -> Result<Value, DpopRefusal> {
    let invalid = |why: &str| DpopRefusal::Invalid(why.to_owned());
    let proof = proof.ok_or_else(|| invalid("no DPoP proof"))?;
    let (header, claims) = jwt_parts(proof).ok_or_else(|| invalid("not a compact JWT"))?;
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err(invalid("typ or alg"));
    }
    let jwk = &header["jwk"];
    if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk.get("d").is_some() {
        return Err(invalid("jwk"));
    }
    if claims["htm"] != method {
        return Err(invalid("htm"));
    }
    let htu = url.split(['?', '#']).next().unwrap_or(url);
    if claims["htu"] != htu {
        return Err(invalid("htu"));
    }
    if claims["jti"].as_str().is_none_or(str::is_empty) {
        return Err(invalid("jti"));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    match claims["iat"].as_u64() {
        Some(iat) if iat.abs_diff(now) <= 300 => {}
        _ => return Err(invalid("iat")),
    }
    if claims.get("ath").and_then(Value::as_str) != ath {
        return Err(invalid("ath"));
    }
    if let Some(nonce) = nonce
        && claims.get("nonce").and_then(Value::as_str) != Some(nonce)
    {
        return Err(DpopRefusal::Nonce);
    }
    Ok(jwk.clone())
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
    let mut proofs = req.headers().get_all("dpop").iter();
    let proof = match (proofs.next(), proofs.next()) {
        (Some(p), None) => p.to_str().ok().map(str::to_owned),
        _ => None,
    };
    lock().paths.push(path.clone());
    let body = match tokio::time::timeout(Duration::from_secs(5), req.into_body().collect()).await {
        Ok(Ok(b)) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        _ => String::new(),
    };
    let base = lock().base.clone();
    match path.as_str() {
        "/prm" => {
            let st = lock();
            let mut prm = json!({
                "resource": st.resource,
                "authorization_servers": [base],
                "scopes_supported": ["mcp"],
            });
            if st.dpop_nonce.is_some() {
                prm["dpop_bound_access_tokens_required"] = true.into();
            }
            reply(StatusCode::OK, prm)
        }
        "/.well-known/oauth-authorization-server" => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            });
            if lock().dpop_nonce.is_some() {
                metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            reply(StatusCode::OK, metadata)
        }
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
            let location = if st.deny {
                format!(
                    "{redirect}?error=access_denied&error_description=the+user+denied+access&state={client_state}"
                )
            } else {
                let code = format!("code-{}", st.codes.len() + 1);
                st.codes.push(code.clone());
                format!("{redirect}?code={code}&state={client_state}")
            };
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", location)
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
            let mut token_type = "Bearer";
            if let Some(nonce) = st.dpop_nonce.clone() {
                let url = format!("{base}/token");
                match check_dpop_proof(proof.as_deref(), "POST", &url, None, Some(&nonce)) {
                    Ok(jwk) => {
                        st.dpop_jwk = Some(jwk);
                        token_type = "DPoP";
                    }
                    Err(DpopRefusal::Nonce) => {
                        st.dpop_nonce_challenges += 1;
                        let mut r = bad_request("use_dpop_nonce");
                        if let Ok(v) = http::HeaderValue::from_str(&nonce) {
                            r.headers_mut().insert("dpop-nonce", v);
                        }
                        return r;
                    }
                    Err(DpopRefusal::Invalid(why)) => {
                        st.dpop_refusals.push(why);
                        return bad_request("invalid_dpop_proof");
                    }
                }
            }
            if !valid {
                return bad_request("invalid_grant");
            }
            st.codes.retain(|c| c != code);
            st.tokens_issued += 1;
            reply(
                StatusCode::OK,
                json!({"access_token": st.token, "token_type": token_type, "expires_in": 3600}),
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

    fn jwt(header: &Value, claims: &Value) -> String {
        let enc = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.c2ln", enc(header), enc(claims))
    }

    #[test]
    fn dpop_proof_checks() {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": "eA", "y": "eQ"});
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
        let claims = json!({"htm": "POST", "htu": "http://a/token", "jti": "j1", "iat": now,
            "ath": "h", "nonce": "n1"});
        let with = |k: &str, v: Value| {
            let mut c = claims.clone();
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v;
            }
            jwt(&header, &c)
        };
        let invalid = |why: &str| Err(DpopRefusal::Invalid(why.into()));
        let good = jwt(&header, &claims);
        let other_typ = jwt(&json!({"typ": "JWT", "alg": "ES256", "jwk": jwk}), &claims);
        let private = json!({"kty": "EC", "crv": "P-256", "d": "x"});
        let private = jwt(&json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private}), &claims);
        // (proof, expected ath, required nonce, outcome)
        type Case = (
            Option<String>,
            Option<&'static str>,
            Option<&'static str>,
            Result<Value, DpopRefusal>,
        );
        let cases: Vec<Case> = vec![
            (Some(good.clone()), Some("h"), Some("n1"), Ok(jwk.clone())),
            (None, Some("h"), None, invalid("no DPoP proof")),
            (Some("a.b".into()), Some("h"), None, invalid("not a compact JWT")),
            (Some(other_typ), Some("h"), None, invalid("typ or alg")),
            (Some(private), Some("h"), None, invalid("jwk")),
            (Some(with("htm", "GET".into())), Some("h"), None, invalid("htm")),
            (Some(with("htu", "http://a/other".into())), Some("h"), None, invalid("htu")),
            (Some(with("jti", Value::Null)), Some("h"), None, invalid("jti")),
            (Some(with("iat", (now - 3600).into())), Some("h"), None, invalid("iat")),
            (Some(good.clone()), None, None, invalid("ath")),
            (Some(with("nonce", Value::Null)), Some("h"), Some("n1"), Err(DpopRefusal::Nonce)),
            (Some(good), Some("h"), Some("n2"), Err(DpopRefusal::Nonce)),
        ];
        for (proof, ath, nonce, expected) in cases {
            let got = check_dpop_proof(proof.as_deref(), "POST", "http://a/token?x=1", ath, nonce);
            assert_eq!(got, expected, "{proof:?}");
        }
    }
}
