//! The scripted network every test here runs on: an in-memory
//! [`HttpFetch`] that routes requests to handlers and records them, a fake
//! authorization server (metadata, authorize, token, register) with its
//! options and log, the MCP server's protected resource metadata, a clock
//! the tests move, and the token endpoints and DPoP proofs several tests
//! share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Method, Request, Response};
use mcp_auth::url::query_params;
use mcp_auth::{
    BearerChallenge, BoxFuture, Error, FetchError, HeadlessHandler, HttpFetch, MemoryTokenStore,
    OAuthClient, OAuthConfig, RequestAuth, s256_challenge,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- the network

type Handler = Arc<dyn Fn(&Request<Bytes>) -> Response<Bytes> + Send + Sync>;

#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) authorization: Option<String>,
    pub(crate) dpop: Option<String>,
    pub(crate) body: Bytes,
}

#[derive(Default)]
pub(crate) struct Net {
    routes: Mutex<HashMap<(Method, String), Handler>>,
    seen: Mutex<Vec<Seen>>,
}

impl Net {
    pub(crate) fn route(
        &self,
        method: Method,
        url: &str,
        h: impl Fn(&Request<Bytes>) -> Response<Bytes> + Send + Sync + 'static,
    ) {
        self.routes.lock().unwrap().insert((method, url.to_owned()), Arc::new(h));
    }

    pub(crate) fn json(&self, url: &str, body: Value) {
        self.route(Method::GET, url, move |_| json_response(200, &body));
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// `METHOD url-without-query` of every request, in order.
    pub(crate) fn trace(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| format!("{} {}", s.method, s.url.split('?').next().unwrap()))
            .collect()
    }

    pub(crate) fn count(&self, method: &str, url: &str) -> usize {
        self.trace().iter().filter(|t| **t == format!("{method} {url}")).count()
    }
}

impl HttpFetch for Net {
    fn fetch(&self, req: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        let url = req.uri().to_string();
        self.seen.lock().unwrap().push(Seen {
            method: req.method().clone(),
            url: url.clone(),
            authorization: req
                .headers()
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned()),
            dpop: req.headers().get("dpop").map(|v| v.to_str().unwrap().to_owned()),
            body: req.body().clone(),
        });
        let key = (req.method().clone(), url.split('?').next().unwrap().to_owned());
        let h = self.routes.lock().unwrap().get(&key).cloned();
        Box::pin(async move {
            Ok(match h {
                Some(h) => h(&req),
                None => json_response(404, &json!({"error": "not_found"})),
            })
        })
    }
}

pub(crate) fn json_response(status: u16, body: &Value) -> Response<Bytes> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

pub(crate) fn form(req: &Request<Bytes>) -> HashMap<String, String> {
    query_params(std::str::from_utf8(req.body()).unwrap()).into_iter().collect()
}

// ------------------------------------------------------ the authorization server

pub(crate) const RS: &str = "http://localhost:8000";

pub(crate) const AS: &str = "http://127.0.0.1:9000";

pub(crate) const MCP: &str = "http://localhost:8000/mcp";

pub(crate) const AS2: &str = "http://127.0.0.1:9200";

pub(crate) type TokenHook =
    Arc<dyn Fn(&HashMap<String, String>, Option<&str>) -> Option<(u16, Value)> + Send + Sync>;

pub(crate) struct AsOpts {
    /// Origin the endpoints live on.
    pub(crate) base: String,
    /// Route prefix (issuer path), e.g. `/tenant1`.
    pub(crate) prefix: String,
    /// Where the metadata is served (a path on `base`); `None`: nowhere.
    pub(crate) metadata_path: Option<String>,
    /// Members merged into the metadata.
    pub(crate) extra: Value,
    /// Registration answer: (client_id, secret, method).
    pub(crate) registration: (String, Option<String>, Option<String>),
    /// Overrides the token answer.
    pub(crate) token_hook: Option<TokenHook>,
    /// Overrides the state put on the redirect.
    pub(crate) state_override: Option<String>,
    /// Adds `iss` to the redirect.
    pub(crate) iss_param: Option<String>,
}

impl Default for AsOpts {
    fn default() -> Self {
        AsOpts {
            base: AS.to_owned(),
            prefix: String::new(),
            metadata_path: Some("/.well-known/oauth-authorization-server".to_owned()),
            extra: json!({}),
            registration: ("test-client-id".into(), Some("test-client-secret".into()), None),
            token_hook: None,
            state_override: None,
            iss_param: None,
        }
    }
}

#[derive(Default)]
pub(crate) struct AsLog {
    pub(crate) authorize: Vec<HashMap<String, String>>,
    pub(crate) token: Vec<(Option<String>, HashMap<String, String>)>,
    pub(crate) register: Vec<Value>,
    challenge: Option<String>,
    issued: usize,
}

pub(crate) fn install_as(net: &Net, opts: AsOpts) -> Arc<Mutex<AsLog>> {
    let log = Arc::new(Mutex::new(AsLog::default()));
    let base = opts.base.clone();
    let issuer = format!("{}{}", opts.base, opts.prefix);
    let ep = |p: &str| format!("{}{}{}", opts.base, opts.prefix, p);
    if let Some(path) = &opts.metadata_path {
        let mut meta = json!({
            "issuer": issuer,
            "authorization_endpoint": ep("/authorize"),
            "token_endpoint": ep("/token"),
            "registration_endpoint": ep("/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        });
        for (k, v) in opts.extra.as_object().unwrap() {
            if v.is_null() {
                meta.as_object_mut().unwrap().remove(k);
            } else {
                meta[k] = v.clone();
            }
        }
        net.json(&format!("{base}{path}"), meta);
    }
    {
        let log = log.clone();
        let state_override = opts.state_override.clone();
        let iss = opts.iss_param.clone();
        net.route(Method::GET, &ep("/authorize"), move |req| {
            let q: HashMap<String, String> =
                query_params(&req.uri().to_string()).into_iter().collect();
            let mut l = log.lock().unwrap();
            l.challenge = q.get("code_challenge").cloned();
            l.authorize.push(q.clone());
            let state =
                state_override.clone().or_else(|| q.get("state").cloned()).unwrap_or_default();
            let mut loc = format!("{}?code=test-auth-code&state={}", q["redirect_uri"], state);
            if let Some(i) = &iss {
                loc.push_str(&format!("&iss={}", i));
            }
            Response::builder().status(302).header("location", loc).body(Bytes::new()).unwrap()
        });
    }
    {
        let log = log.clone();
        let hook = opts.token_hook.clone();
        net.route(Method::POST, &ep("/token"), move |req| {
            let f = form(req);
            let auth = req.headers().get("authorization").map(|v| v.to_str().unwrap().to_owned());
            let mut l = log.lock().unwrap();
            l.token.push((auth.clone(), f.clone()));
            if f.get("grant_type").map(String::as_str) == Some("authorization_code") {
                let ok = match (f.get("code_verifier"), &l.challenge) {
                    (Some(v), Some(c)) => s256_challenge(v) == *c,
                    _ => false,
                };
                if !ok {
                    return json_response(400, &json!({"error": "invalid_grant", "error_description": "PKCE"}));
                }
            }
            if let Some(h) = &hook
                && let Some((status, body)) = h(&f, auth.as_deref())
            {
                return json_response(status, &body);
            }
            l.issued += 1;
            let scope = l.authorize.last().and_then(|q| q.get("scope").cloned()).or_else(|| f.get("scope").cloned());
            let mut body = json!({"access_token": format!("test-token-{}", l.issued), "token_type": "Bearer", "expires_in": 3600});
            if let Some(s) = scope {
                body["scope"] = Value::String(s);
            }
            json_response(200, &body)
        });
    }
    {
        let log = log.clone();
        let (id, secret, method) = opts.registration.clone();
        net.route(Method::POST, &ep("/register"), move |req| {
            let body: Value = serde_json::from_slice(req.body()).unwrap();
            log.lock().unwrap().register.push(body.clone());
            let mut out = json!({"client_id": id, "client_name": body["client_name"], "redirect_uris": body["redirect_uris"]});
            if let Some(s) = &secret {
                out["client_secret"] = Value::String(s.clone());
            }
            if let Some(m) = &method {
                out["token_endpoint_auth_method"] = Value::String(m.clone());
            }
            json_response(201, &out)
        });
    }
    log
}

/// Where the MCP server serves its protected resource metadata.
const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The `resource_metadata` parameter of a challenge naming [`PRM_PATH`].
pub(crate) fn resource_metadata() -> String {
    format!(r#"resource_metadata="{RS}{PRM_PATH}""#)
}

/// [`install_prm`] at [`PRM_PATH`] for [`MCP`], with `extra` members.
pub(crate) fn install_mcp_prm(net: &Net, extra: Value) {
    install_prm(net, PRM_PATH, MCP, extra);
}

/// Serves the protected resource metadata at `path` on the MCP server.
pub(crate) fn install_prm(net: &Net, path: &str, resource: &str, extra: Value) {
    let mut prm = json!({"resource": resource, "authorization_servers": [AS]});
    for (k, v) in extra.as_object().unwrap() {
        prm[k] = v.clone();
    }
    net.json(&format!("{RS}{path}"), prm);
}

pub(crate) fn challenge(header: &str) -> BearerChallenge {
    mcp_sse::www_authenticate::find_bearer([header]).expect("a bearer challenge")
}

pub(crate) fn client(net: &Arc<Net>, config: OAuthConfig) -> OAuthClient {
    let fetch: Arc<dyn HttpFetch> = net.clone();
    OAuthClient::new(config, fetch.clone())
        .unwrap()
        .with_handler(Arc::new(HeadlessHandler::new(fetch)))
}

pub(crate) fn config() -> OAuthConfig {
    OAuthConfig::new(MCP, "mcp-auth tests")
}

pub(crate) fn prm_challenge() -> BearerChallenge {
    challenge(&format!(
        r#"Bearer resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#
    ))
}

/// Runs the 401 path of a request that carried no token.
pub(crate) async fn first_401(
    c: &OAuthClient,
    ch: Option<&BearerChallenge>,
) -> Result<RequestAuth, Error> {
    let mut req = c.prepare().await;
    assert!(req.header().is_none());
    c.on_unauthorized(&mut req, ch).await?;
    Ok(req)
}

pub(crate) fn bearer(req: &RequestAuth) -> String {
    req.header().unwrap().to_str().unwrap().to_owned()
}

pub(crate) struct Clock(Mutex<SystemTime>);

impl Clock {
    pub(crate) fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }
}

/// A client of `net` with a memory token store and a clock the test moves
/// (starting at 1,000,000 s after the epoch).
pub(crate) fn clocked_client(net: &Arc<Net>) -> (OAuthClient, Arc<Clock>, Arc<MemoryTokenStore>) {
    let clock = Arc::new(Clock(Mutex::new(UNIX_EPOCH + Duration::from_secs(1_000_000))));
    let store = Arc::new(MemoryTokenStore::new());
    let ck = clock.clone();
    let c =
        client(net, config()).with_store(store.clone()).with_clock(move || *ck.0.lock().unwrap());
    (c, clock, store)
}

pub(crate) fn refreshing_as(net: &Net, hook: TokenHook) -> Arc<Mutex<AsLog>> {
    install_mcp_prm(net, json!({}));
    install_as(net, AsOpts { token_hook: Some(hook), ..Default::default() })
}

/// A token endpoint that issues 100-second tokens with rotating refresh
/// tokens, and refuses refresh tokens listed in `revoked`.
pub(crate) fn rotating(revoked: Arc<Mutex<Vec<String>>>) -> TokenHook {
    let n = Arc::new(Mutex::new(0));
    Arc::new(move |f, _| {
        let mut n = n.lock().unwrap();
        *n += 1;
        if let Some(rt) = f.get("refresh_token")
            && revoked.lock().unwrap().contains(rt)
        {
            return Some((400, json!({"error": "invalid_grant", "error_description": "revoked"})));
        }
        Some((
            200,
            json!({
                "access_token": format!("test-token-r{}", *n),
                "token_type": "Bearer",
                "expires_in": 100,
                "refresh_token": format!("rt-{}", *n),
            }),
        ))
    })
}

pub(crate) fn jwt_part(jwt: &str, i: usize) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(i).unwrap()).unwrap())
        .unwrap()
}

/// A token endpoint that wants a DPoP proof with its nonce `as-nonce-1`,
/// and binds the token to the proof's key.
pub(crate) fn dpop_token_endpoint(net: &Net, issued: Arc<Mutex<u32>>) {
    net.route(Method::POST, &format!("{AS}/token"), move |req| {
        let proof = req.headers().get("dpop").map(|v| v.to_str().unwrap().to_owned());
        let Some(proof) = proof else {
            return json_response(400, &json!({"error": "invalid_dpop_proof"}));
        };
        let claims = jwt_part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], format!("{AS}/token"));
        assert!(claims.get("ath").is_none());
        if claims.get("nonce").and_then(Value::as_str) != Some("as-nonce-1") {
            return Response::builder()
                .status(400)
                .header("dpop-nonce", "as-nonce-1")
                .body(Bytes::from(r#"{"error":"use_dpop_nonce"}"#))
                .unwrap();
        }
        let mut n = issued.lock().unwrap();
        *n += 1;
        let jkt = jwt_part(&proof, 0)["jwk"]["x"].as_str().unwrap().to_owned();
        json_response(
            200,
            &json!({
                "access_token": format!("dpop-token-{}-{jkt}", *n),
                "token_type": "DPoP",
                "expires_in": 100,
                "refresh_token": format!("dpop-rt-{}", *n),
            }),
        )
    });
}

pub(crate) fn dpop_challenge(extra: &str) -> BearerChallenge {
    mcp_auth::find_challenge([format!(
        r#"DPoP {extra}resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#
    )
    .as_str()])
    .unwrap()
}

pub(crate) fn dpop_401(nonce: Option<&str>, extra: &str) -> http::HeaderMap {
    let mut h = http::HeaderMap::new();
    h.insert(
        "www-authenticate",
        format!(r#"DPoP {extra}resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#)
            .parse()
            .unwrap(),
    );
    if let Some(n) = nonce {
        h.insert("dpop-nonce", n.parse().unwrap());
    }
    h
}
