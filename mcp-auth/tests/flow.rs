//! The whole flow against a scripted in-memory network: a fake MCP server
//! (resource server) and a fake authorization server that behave like the
//! conformance suite's (`@modelcontextprotocol/conformance` 0.1.16,
//! `src/scenarios/client/auth/helpers`), one test per scenario's logic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{Method, Request, Response};
use mcp_auth::url::query_params;
use mcp_auth::{
    BearerChallenge, BoxFuture, ClientRegistration, DiscoveryMode, Error, FetchError,
    FileTokenStore, HeadlessHandler, HttpFetch, JwtAlgorithm, MemoryTokenStore, OAuthClient,
    OAuthConfig, PrivateKeyJwt, RequestAuth, StoreKey, TokenEndpointAuthMethod, TokenStore,
    s256_challenge,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- the network

type Handler = Arc<dyn Fn(&Request<Bytes>) -> Response<Bytes> + Send + Sync>;

#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    url: String,
    authorization: Option<String>,
    dpop: Option<String>,
    body: Bytes,
}

#[derive(Default)]
struct Net {
    routes: Mutex<HashMap<(Method, String), Handler>>,
    seen: Mutex<Vec<Seen>>,
}

impl Net {
    fn route(
        &self,
        method: Method,
        url: &str,
        h: impl Fn(&Request<Bytes>) -> Response<Bytes> + Send + Sync + 'static,
    ) {
        self.routes.lock().unwrap().insert((method, url.to_owned()), Arc::new(h));
    }

    fn json(&self, url: &str, body: Value) {
        self.route(Method::GET, url, move |_| json_response(200, &body));
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// `METHOD url-without-query` of every request, in order.
    fn trace(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| format!("{} {}", s.method, s.url.split('?').next().unwrap()))
            .collect()
    }

    fn count(&self, method: &str, url: &str) -> usize {
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

fn json_response(status: u16, body: &Value) -> Response<Bytes> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

fn form(req: &Request<Bytes>) -> HashMap<String, String> {
    query_params(std::str::from_utf8(req.body()).unwrap()).into_iter().collect()
}

// ------------------------------------------------------ the authorization server

const RS: &str = "http://localhost:8000";
const AS: &str = "http://127.0.0.1:9000";
const MCP: &str = "http://localhost:8000/mcp";

type TokenHook =
    Arc<dyn Fn(&HashMap<String, String>, Option<&str>) -> Option<(u16, Value)> + Send + Sync>;

struct AsOpts {
    /// Origin the endpoints live on.
    base: String,
    /// Route prefix (issuer path), e.g. `/tenant1`.
    prefix: String,
    /// Where the metadata is served (a path on `base`); `None`: nowhere.
    metadata_path: Option<String>,
    /// Members merged into the metadata.
    extra: Value,
    /// Registration answer: (client_id, secret, method).
    registration: (String, Option<String>, Option<String>),
    /// Overrides the token answer.
    token_hook: Option<TokenHook>,
    /// Overrides the state put on the redirect.
    state_override: Option<String>,
    /// Adds `iss` to the redirect.
    iss_param: Option<String>,
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
struct AsLog {
    authorize: Vec<HashMap<String, String>>,
    token: Vec<(Option<String>, HashMap<String, String>)>,
    register: Vec<Value>,
    challenge: Option<String>,
    issued: usize,
}

fn install_as(net: &Net, opts: AsOpts) -> Arc<Mutex<AsLog>> {
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
fn resource_metadata() -> String {
    format!(r#"resource_metadata="{RS}{PRM_PATH}""#)
}

/// [`install_prm`] at [`PRM_PATH`] for [`MCP`], with `extra` members.
fn install_mcp_prm(net: &Net, extra: Value) {
    install_prm(net, PRM_PATH, MCP, extra);
}

/// Serves the protected resource metadata at `path` on the MCP server.
fn install_prm(net: &Net, path: &str, resource: &str, extra: Value) {
    let mut prm = json!({"resource": resource, "authorization_servers": [AS]});
    for (k, v) in extra.as_object().unwrap() {
        prm[k] = v.clone();
    }
    net.json(&format!("{RS}{path}"), prm);
}

fn challenge(header: &str) -> BearerChallenge {
    mcp_sse::www_authenticate::find_bearer([header]).expect("a bearer challenge")
}

fn client(net: &Arc<Net>, config: OAuthConfig) -> OAuthClient {
    let fetch: Arc<dyn HttpFetch> = net.clone();
    OAuthClient::new(config, fetch.clone())
        .unwrap()
        .with_handler(Arc::new(HeadlessHandler::new(fetch)))
}

fn config() -> OAuthConfig {
    OAuthConfig::new(MCP, "mcp-auth tests")
}

fn prm_challenge() -> BearerChallenge {
    challenge(&format!(
        r#"Bearer resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#
    ))
}

/// Runs the 401 path of a request that carried no token.
async fn first_401(c: &OAuthClient, ch: Option<&BearerChallenge>) -> Result<RequestAuth, Error> {
    let mut req = c.prepare().await;
    assert!(req.header().is_none());
    c.on_unauthorized(&mut req, ch).await?;
    Ok(req)
}

fn bearer(req: &RequestAuth) -> String {
    req.header().unwrap().to_str().unwrap().to_owned()
}

// ------------------------------------------------------------ discovery scenarios

#[tokio::test]
async fn metadata_default() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let req = first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    assert_eq!(
        net.trace(),
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {AS}/.well-known/oauth-authorization-server"),
            format!("POST {AS}/register"),
            format!("GET {AS}/authorize"),
            format!("POST {AS}/token"),
        ]
    );
    // Discovery, registration and authorization carry no credentials.
    assert!(net.seen()[..4].iter().all(|s| s.authorization.is_none()));
    let l = log.lock().unwrap();
    // The headless handler's loopback redirect makes this a native client.
    assert_eq!(l.register[0]["application_type"], "native");
    let q = &l.authorize[0];
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], MCP);
    assert_eq!(q["client_id"], "test-client-id");
    assert_eq!(q["redirect_uri"], HeadlessHandler::DEFAULT_REDIRECT_URI);
    assert!(!q.contains_key("scope"));
    assert!(q["state"].len() >= 32);
    let (_, t) = &l.token[0];
    assert_eq!(t["resource"], MCP);
    assert_eq!(t["grant_type"], "authorization_code");
    assert_eq!(t["redirect_uri"], HeadlessHandler::DEFAULT_REDIRECT_URI);
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::ProtectedResource);
}

#[tokio::test]
async fn metadata_var1_openid_at_root_without_challenge_url() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            metadata_path: Some("/.well-known/openid-configuration".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&challenge(r#"Bearer error="invalid_token""#))).await.unwrap();
    assert_eq!(
        net.trace()[..3],
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {AS}/.well-known/oauth-authorization-server"),
            format!("GET {AS}/.well-known/openid-configuration"),
        ]
    );
}

#[tokio::test]
async fn metadata_var2_root_prm_and_issuer_with_path() {
    let net = Arc::new(Net::default());
    // PRM only at the root, naming the origin as the resource.
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource"),
        json!({"resource": RS, "authorization_servers": [format!("{AS}/tenant1")]}),
    );
    let log = install_as(
        &net,
        AsOpts {
            prefix: "/tenant1".into(),
            metadata_path: Some("/.well-known/oauth-authorization-server/tenant1".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, None).await.unwrap();
    let trace = net.trace();
    assert_eq!(
        trace[..3],
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {RS}/.well-known/oauth-protected-resource"),
            format!("GET {AS}/.well-known/oauth-authorization-server/tenant1"),
        ]
    );
    // Never the root metadata of a path issuer.
    assert_eq!(net.count("GET", &format!("{AS}/.well-known/oauth-authorization-server")), 0);
    // `resource` exactly as the PRM gives it: no trailing slash added.
    assert_eq!(log.lock().unwrap().authorize[0]["resource"], RS);
    assert_eq!(log.lock().unwrap().token[0].1["resource"], RS);
}

#[tokio::test]
async fn metadata_var3_custom_prm_and_path_appended_openid() {
    let net = Arc::new(Net::default());
    net.json(
        &format!("{RS}/custom/metadata/location.json"),
        json!({"resource": MCP, "authorization_servers": [format!("{AS}/tenant1")]}),
    );
    install_as(
        &net,
        AsOpts {
            prefix: "/tenant1".into(),
            metadata_path: Some("/tenant1/.well-known/openid-configuration".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    let ch =
        challenge(&format!(r#"Bearer resource_metadata="{RS}/custom/metadata/location.json""#));
    first_401(&c, Some(&ch)).await.unwrap();
    assert_eq!(
        net.trace()[..4],
        [
            format!("GET {RS}/custom/metadata/location.json"),
            format!("GET {AS}/.well-known/oauth-authorization-server/tenant1"),
            format!("GET {AS}/.well-known/openid-configuration/tenant1"),
            format!("GET {AS}/tenant1/.well-known/openid-configuration"),
        ]
    );
}

#[tokio::test]
async fn backcompat_2025_03_26_metadata_at_origin_root() {
    let net = Arc::new(Net::default());
    // No PRM anywhere; the AS lives on the MCP server under /oauth.
    let log =
        install_as(&net, AsOpts { base: RS.into(), prefix: "/oauth".into(), ..Default::default() });
    let c = client(&net, config());
    first_401(&c, Some(&challenge(r#"Bearer error="invalid_token""#))).await.unwrap();
    assert_eq!(
        net.trace(),
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {RS}/.well-known/oauth-protected-resource"),
            format!("GET {RS}/.well-known/oauth-authorization-server"),
            format!("POST {RS}/oauth/register"),
            format!("GET {RS}/oauth/authorize"),
            format!("POST {RS}/oauth/token"),
        ]
    );
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::LegacyMetadata);
    assert_eq!(log.lock().unwrap().authorize[0]["resource"], MCP);
}

#[tokio::test]
async fn backcompat_2025_03_26_default_endpoints() {
    let net = Arc::new(Net::default());
    install_as(&net, AsOpts { base: RS.into(), metadata_path: None, ..Default::default() });
    let c = client(&net, config());
    let req = first_401(&c, None).await.unwrap();
    assert!(req.header().is_some());
    assert_eq!(
        net.trace()[3..],
        [format!("POST {RS}/register"), format!("GET {RS}/authorize"), format!("POST {RS}/token")]
    );
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::LegacyDefaults);
}

#[tokio::test]
async fn resource_mismatch_stops_before_authorization() {
    let net = Arc::new(Net::default());
    install_prm(
        &net,
        "/.well-known/oauth-protected-resource/mcp",
        "https://evil.example.com/mcp",
        json!({}),
    );
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::ResourceMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("https://evil.example.com"));
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.token.is_empty() && l.register.is_empty());
    assert_eq!(net.seen().len(), 1);
}

#[tokio::test]
async fn issuer_mismatch_and_missing_pkce_are_refused() {
    type Check = fn(&Error) -> bool;
    let cases: Vec<(Value, Check)> = vec![
        (json!({"issuer": "http://127.0.0.1:9000/other"}), |e| {
            matches!(e, Error::IssuerMismatch { .. })
        }),
        (json!({"code_challenge_methods_supported": null}), |e| {
            matches!(e, Error::PkceNotSupported)
        }),
        (json!({"code_challenge_methods_supported": ["plain"]}), |e| {
            matches!(e, Error::PkceNotSupported)
        }),
    ];
    for (extra, expected) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, AsOpts { extra: extra.clone(), ..Default::default() });
        let c = client(&net, config());
        let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
        assert!(expected(&err), "{extra}: {err:?}");
        assert!(log.lock().unwrap().authorize.is_empty(), "{extra}");
    }
}

#[tokio::test]
async fn insecure_urls_are_refused() {
    let net = Arc::new(Net::default());
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let err =
        OAuthClient::new(OAuthConfig::new("http://mcp.example.com/mcp", "t"), fetch).unwrap_err();
    assert!(matches!(err, Error::InsecureUrl { .. }));
    // An authorization server on plain http that is not loopback.
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource/mcp"),
        json!({"resource": MCP, "authorization_servers": ["http://as.example.com"]}),
    );
    let c = client(&net, config());
    let err = first_401(&c, None).await.unwrap_err();
    assert!(matches!(err, Error::InsecureUrl { .. }), "{err:?}");
    assert_eq!(net.seen().len(), 1);
}

// ------------------------------------------------------------ registration

#[tokio::test]
async fn basic_cimd_uses_the_metadata_url_as_client_id() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"client_id_metadata_document_supported": true}),
            ..Default::default()
        },
    );
    let cfg = config()
        .with_client_metadata_url("https://conformance-test.local/client-metadata.json")
        .unwrap();
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.register.is_empty());
    assert_eq!(l.authorize[0]["client_id"], "https://conformance-test.local/client-metadata.json");
    assert_eq!(l.token[0].1["client_id"], "https://conformance-test.local/client-metadata.json");
}

#[tokio::test]
async fn cimd_without_a_configured_url_falls_back_to_dcr() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"client_id_metadata_document_supported": true}),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().register.len(), 1);
}

#[tokio::test]
async fn token_endpoint_auth_methods_are_honoured() {
    let cases = [
        ("client_secret_basic", Some("test-secret-1")),
        ("client_secret_post", Some("test-secret-1")),
        ("none", None),
    ];
    for (method, secret) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(
            &net,
            AsOpts {
                extra: json!({"token_endpoint_auth_methods_supported": [method]}),
                registration: (
                    "test-client-1".into(),
                    secret.map(str::to_owned),
                    Some(method.to_owned()),
                ),
                ..Default::default()
            },
        );
        let c = client(&net, config());
        first_401(&c, Some(&prm_challenge())).await.unwrap();
        let l = log.lock().unwrap();
        assert_eq!(l.register[0]["token_endpoint_auth_method"], method);
        let (auth, body) = &l.token[0];
        match method {
            "client_secret_basic" => {
                let b64 = auth.as_deref().unwrap().strip_prefix("Basic ").unwrap();
                assert_eq!(STANDARD.decode(b64).unwrap(), b"test-client-1:test-secret-1");
                assert!(!body.contains_key("client_secret"));
            }
            "client_secret_post" => {
                assert!(auth.is_none());
                assert_eq!(body["client_id"], "test-client-1");
                assert_eq!(body["client_secret"], "test-secret-1");
            }
            _ => {
                assert!(auth.is_none());
                assert_eq!(body["client_id"], "test-client-1");
                assert!(!body.contains_key("client_secret"));
            }
        }
        // RFC 8707 on both requests, the same value, a valid URI.
        assert_eq!(l.authorize[0]["resource"], MCP);
        assert_eq!(body["resource"], MCP);
    }
}

#[tokio::test]
async fn pre_registration_without_dcr() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"registration_endpoint": null, "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            ..Default::default()
        },
    );
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "pre-registered-client",
        "pre-registered-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.register.is_empty());
    let b64 = l.token[0].0.as_deref().unwrap().strip_prefix("Basic ").unwrap().to_owned();
    assert_eq!(STANDARD.decode(b64).unwrap(), b"pre-registered-client:pre-registered-secret");
}

#[tokio::test]
async fn no_registration_method_is_an_error() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts { extra: json!({"registration_endpoint": null}), ..Default::default() },
    );
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
}

// ------------------------------------------------------------ scopes

async fn requested_scope(
    prm_extra: Value,
    as_extra: Value,
    header: &str,
    cfg: OAuthConfig,
) -> (Option<String>, Vec<Value>) {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, prm_extra);
    let log = install_as(&net, AsOpts { extra: as_extra, ..Default::default() });
    let c = client(&net, cfg);
    first_401(&c, Some(&challenge(header))).await.unwrap();
    let l = log.lock().unwrap();
    (l.authorize[0].get("scope").cloned(), l.register.clone())
}

#[tokio::test]
async fn scope_selection_scenarios() {
    let rm = resource_metadata();
    // scope-from-www-authenticate
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        json!({}),
        &format!(r#"Bearer scope="mcp:basic", {rm}"#),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic"));
    // scope-from-scopes-supported
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read", "mcp:write"]}),
        json!({}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic mcp:read mcp:write"));
    // scope-omitted-when-undefined
    let (s, _) = requested_scope(json!({}), json!({}), &format!("Bearer {rm}"), config()).await;
    assert_eq!(s, None);
    // offline-access-scope: the AS lists offline_access, the PRM does not.
    let (s, reg) = requested_scope(
        json!({"scopes_supported": ["mcp:basic"]}),
        json!({"scopes_supported": ["mcp:basic", "offline_access"], "client_id_metadata_document_supported": true}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic offline_access"));
    assert_eq!(reg[0]["grant_types"], json!(["authorization_code", "refresh_token"]));
    // ... not when the host opts out.
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic"]}),
        json!({"scopes_supported": ["mcp:basic", "offline_access"]}),
        &format!("Bearer {rm}"),
        config().with_offline_access(false),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic"));
    // offline-access-not-supported
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic mcp:read"));
}

#[tokio::test]
async fn scope_step_up() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({"scopes_supported": ["mcp:basic"]}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let rm = resource_metadata();
    // tools/list: 401 asking for mcp:basic.
    first_401(&c, Some(&challenge(&format!(r#"Bearer scope="mcp:basic", {rm}"#)))).await.unwrap();
    assert_eq!(c.granted_scopes(), ["mcp:basic"]);
    // tools/call: 403 asking for mcp:basic mcp:write.
    let mut req = c.prepare().await;
    assert_eq!(bearer(&req), "Bearer test-token-1");
    let ch = challenge(&format!(
        r#"Bearer scope="mcp:basic mcp:write", {rm}, error="insufficient_scope""#
    ));
    c.on_insufficient_scope(&mut req, &ch).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-2");
    assert_eq!(req.authorizations(), 1);
    // A challenge naming only the missing scope: the held ones are kept.
    let ch = challenge(&format!(r#"Bearer scope="mcp:admin", {rm}, error="insufficient_scope""#));
    c.on_insufficient_scope(&mut req, &ch).await.unwrap();
    assert_eq!(req.authorizations(), 2);
    let l = log.lock().unwrap();
    assert_eq!(l.authorize.len(), 3);
    assert_eq!(l.authorize[0]["scope"], "mcp:basic");
    assert_eq!(l.authorize[1]["scope"], "mcp:basic mcp:write");
    assert_eq!(l.authorize[2]["scope"], "mcp:basic mcp:write mcp:admin");
    // Registration and discovery are not repeated for the step-up.
    assert_eq!(l.register.len(), 1);
    assert_eq!(net.count("GET", &format!("{AS}/.well-known/oauth-authorization-server")), 1);
}

#[tokio::test]
async fn scope_retry_limit() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({"scopes_supported": ["mcp:admin"]}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let rm = resource_metadata();
    let mut req = first_401(&c, Some(&challenge(&format!(r#"Bearer scope="mcp:admin", {rm}"#))))
        .await
        .unwrap();
    let deny = challenge(&format!(r#"Bearer error="insufficient_scope", scope="mcp:admin", {rm}"#));
    let mut errors = 0;
    for _ in 0..10 {
        if c.on_insufficient_scope(&mut req, &deny).await.is_err() {
            errors += 1;
            break;
        }
    }
    assert_eq!(errors, 1);
    // The first 401's authorization and one step-up: the second step-up
    // would ask for nothing new.
    assert_eq!(log.lock().unwrap().authorize.len(), 2);

    // A server that keeps asking for new scopes is cut off by the bound.
    let mut req = c.prepare().await;
    assert_eq!(step_ups_until_refused(&c, &mut req, "s", &rm).await, mcp_auth::MAX_STEP_UPS);

    // A request that already ran an authorization (its first 401) has
    // that many fewer: the bound counts authorizations, not only step-ups.
    let mut req = c.prepare().await;
    assert_eq!(req.authorizations(), 0);
    c.on_unauthorized(&mut req, Some(&challenge(&format!("Bearer {rm}")))).await.unwrap();
    assert_eq!(req.authorizations(), 1);
    let n = step_ups_until_refused(&c, &mut req, "t", &rm).await;
    assert_eq!(n, mcp_auth::MAX_AUTHORIZATIONS_PER_REQUEST - 1);
}

/// Answers `req` with 403s that each ask for a new scope (`{prefix}0`,
/// `{prefix}1`, ...) until the client refuses to step up; how many step-ups
/// it made.
async fn step_ups_until_refused(
    c: &OAuthClient,
    req: &mut RequestAuth,
    prefix: &str,
    rm: &str,
) -> u8 {
    for n in 0..10 {
        let ch =
            challenge(&format!(r#"Bearer error="insufficient_scope", scope="{prefix}{n}", {rm}"#));
        if let Err(e) = c.on_insufficient_scope(req, &ch).await {
            assert!(matches!(e, Error::InsufficientScope { .. }), "{e:?}");
            return n;
        }
    }
    panic!("no bound after 10 step-ups");
}

// ------------------------------------------------------------ state, iss

#[tokio::test]
async fn callback_checks() {
    type Check = fn(&Result<RequestAuth, Error>) -> bool;
    let cases: Vec<(AsOpts, Check)> = vec![
        (AsOpts { state_override: Some("forged".into()), ..Default::default() }, |r| {
            matches!(r, Err(Error::StateMismatch))
        }),
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                ..Default::default()
            },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
        (
            AsOpts { iss_param: Some("https%3A%2F%2Fevil.example".into()), ..Default::default() },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                iss_param: Some("http%3A%2F%2F127.0.0.1%3A9000".into()),
                ..Default::default()
            },
            |r| r.is_ok(),
        ),
        // RFC 9207: simple string comparison, so the issuer with a trailing
        // slash is another issuer.
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                iss_param: Some("http%3A%2F%2F127.0.0.1%3A9000%2F".into()),
                ..Default::default()
            },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
    ];
    for (opts, check) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, opts);
        let c = client(&net, config());
        let r = first_401(&c, Some(&prm_challenge())).await;
        assert!(check(&r), "{r:?}");
        if r.is_err() {
            assert!(log.lock().unwrap().token.is_empty(), "no code exchange after a failed check");
        }
    }
}

// ------------------------------------------------------------ tokens

struct Clock(Mutex<SystemTime>);

impl Clock {
    fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }
}

/// A client of `net` with a memory token store and a clock the test moves
/// (starting at 1,000,000 s after the epoch).
fn clocked_client(net: &Arc<Net>) -> (OAuthClient, Arc<Clock>, Arc<MemoryTokenStore>) {
    let clock = Arc::new(Clock(Mutex::new(UNIX_EPOCH + Duration::from_secs(1_000_000))));
    let store = Arc::new(MemoryTokenStore::new());
    let ck = clock.clone();
    let c =
        client(net, config()).with_store(store.clone()).with_clock(move || *ck.0.lock().unwrap());
    (c, clock, store)
}

fn refreshing_as(net: &Net, hook: TokenHook) -> Arc<Mutex<AsLog>> {
    install_mcp_prm(net, json!({}));
    install_as(net, AsOpts { token_hook: Some(hook), ..Default::default() })
}

/// A token endpoint that issues 100-second tokens with rotating refresh
/// tokens, and refuses refresh tokens listed in `revoked`.
fn rotating(revoked: Arc<Mutex<Vec<String>>>) -> TokenHook {
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

#[tokio::test]
async fn proactive_refresh_rotates_and_stores() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let (c, clock, store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    // Well before expiry: no refresh.
    clock.advance(Duration::from_secs(30));
    assert_eq!(bearer(&c.prepare().await), "Bearer test-token-r1");
    // Within the 60 s skew: refreshed before the request goes out.
    clock.advance(Duration::from_secs(20));
    let req = c.prepare().await;
    assert_eq!(bearer(&req), "Bearer test-token-r2");
    let l = log.lock().unwrap();
    let (_, refresh) = l.token.last().unwrap();
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "rt-1");
    assert_eq!(refresh["resource"], MCP);
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-2");
    assert_eq!(stored.client.unwrap().client_id, "test-client-id");
}

/// A refresh answered without a new refresh token keeps the one it used
/// (RFC 6749 §6: the server may not rotate).
#[tokio::test]
async fn a_refresh_without_rotation_keeps_the_refresh_token() {
    let net = Arc::new(Net::default());
    let n = Arc::new(Mutex::new(0));
    let hook: TokenHook = Arc::new(move |_, _| {
        let mut n = n.lock().unwrap();
        *n += 1;
        let mut body = json!({
            "access_token": format!("test-token-n{}", *n),
            "token_type": "Bearer",
            "expires_in": 100,
        });
        if *n == 1 {
            body["refresh_token"] = json!("rt-only");
        }
        Some((200, body))
    });
    let log = refreshing_as(&net, hook);
    let (c, clock, store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    for expected in ["Bearer test-token-n2", "Bearer test-token-n3"] {
        clock.advance(Duration::from_secs(50));
        assert_eq!(bearer(&c.prepare().await), expected);
    }
    let l = log.lock().unwrap();
    let (_, refresh) = l.token.last().unwrap();
    assert_eq!(refresh["refresh_token"], "rt-only");
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-only");
}

#[tokio::test]
async fn refresh_and_retry_once_on_401_then_reauthorize() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    let first = first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(first.authorizations(), 1);
    assert_eq!(c.authorization_header().as_ref(), first.header());
    // A Bearer token: no proof goes with it.
    assert!(!first.is_dpop());
    assert_eq!(c.dpop_proof(&first, "POST", MCP).unwrap(), None);
    let debug = format!("{c:?}");
    assert!(
        debug.starts_with("OAuthClient {") && debug.contains(r#"server: "http://localhost:8000""#),
        "{debug}"
    );
    // The server refuses the token: one refresh.
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-r2");
    assert_eq!(req.authorizations(), 0);
    assert_eq!(log.lock().unwrap().token.last().unwrap().1["grant_type"], "refresh_token");
    // Refused again: a full authorization.
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    assert_eq!(req.authorizations(), 1);
    // Refused a third time, with a token obtained for this request: stop.
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized));
}

#[tokio::test]
async fn invalid_grant_drops_tokens_and_restarts_once() {
    let net = Arc::new(Net::default());
    let revoked = Arc::new(Mutex::new(vec!["rt-1".to_owned()]));
    let log = refreshing_as(&net, rotating(revoked));
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    // authorize, code exchange, refused refresh, authorize, code exchange.
    assert_eq!(l.authorize.len(), 2);
    let grants: Vec<&str> = l.token.iter().map(|(_, f)| f["grant_type"].as_str()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token", "authorization_code"]);
    assert_eq!(bearer(&req), "Bearer test-token-r3");
    // The client registration survives; the revoked refresh token does not.
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-3");
    assert_eq!(l.register.len(), 1);
}

#[tokio::test]
async fn stored_tokens_are_reused_across_clients() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let dir = std::env::temp_dir().join(format!("mcp-auth-flow-{}", std::process::id()));
    let store = Arc::new(FileTokenStore::new(&dir));
    let a = client(&net, config()).with_store(store.clone());
    first_401(&a, Some(&prm_challenge())).await.unwrap();
    let b = client(&net, config()).with_store(store.clone());
    let req = first_401(&b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    b.logout().unwrap();
    assert!(b.authorization_header().is_none());
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap().tokens.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn concurrent_401s_share_one_flow() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let ch = prm_challenge();
    let mut r1 = c.prepare().await;
    let mut r2 = c.prepare().await;
    let (a, b) =
        tokio::join!(c.on_unauthorized(&mut r1, Some(&ch)), c.on_unauthorized(&mut r2, Some(&ch)));
    a.unwrap();
    b.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    assert_eq!(bearer(&r1), bearer(&r2));
}

/// Requests that carried the same refused token share one refresh: the
/// second finds the token renewed and retries with it.
#[tokio::test]
async fn requests_refused_together_share_one_refresh() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let (mut a, mut b) = (c.prepare().await, c.prepare().await);
    c.on_unauthorized(&mut a, Some(&prm_challenge())).await.unwrap();
    c.on_unauthorized(&mut b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&a), "Bearer test-token-r2");
    assert_eq!(bearer(&b), "Bearer test-token-r2");
    let grants: Vec<String> =
        log.lock().unwrap().token.iter().map(|(_, f)| f["grant_type"].clone()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
}

/// A request refused again and again while other requests keep renewing
/// the token retries with each new one, three times, then gives up.
#[tokio::test]
async fn a_request_refused_while_others_renew_gives_up_after_three_401s() {
    let net = Arc::new(Net::default());
    refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut stuck = c.prepare().await;
    for _ in 0..3 {
        let mut other = c.prepare().await;
        c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap();
        c.on_unauthorized(&mut stuck, Some(&prm_challenge())).await.unwrap();
        assert_eq!(bearer(&stuck), bearer(&other));
        assert_eq!(stuck.authorizations(), 0);
    }
    let err = c.on_unauthorized(&mut stuck, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");
}

/// A refresh that fails for another reason than `invalid_grant` (the
/// authorization server is down): before a request, the token is sent
/// while it is valid and dropped once expired; on a 401, the error is
/// the answer (no new authorization behind the user's back).
#[tokio::test]
async fn a_refresh_that_fails_keeps_a_valid_token_and_reports_the_error() {
    let net = Arc::new(Net::default());
    let rotate = rotating(Arc::default());
    let hook: TokenHook = Arc::new(move |f, auth| {
        if f.get("grant_type").map(String::as_str) == Some("refresh_token") {
            return Some((503, json!({"error": "temporarily_unavailable"})));
        }
        rotate(f, auth)
    });
    let log = refreshing_as(&net, hook);
    let (c, clock, _store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    // Within the skew, still valid: the refresh fails, the token goes out.
    clock.advance(Duration::from_secs(50));
    assert_eq!(bearer(&c.prepare().await), "Bearer test-token-r1");
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(err.to_string().contains("temporarily_unavailable"), "{err}");
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    // Expired: nothing is sent, so the server's 401 starts the flow.
    clock.advance(Duration::from_secs(60));
    assert!(c.prepare().await.header().is_none());
    let refreshes = log
        .lock()
        .unwrap()
        .token
        .iter()
        .filter(|(_, f)| f["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 4);
}

/// `authorize` (a CLI `login`) refreshes a token that expires within the
/// skew rather than handing it out.
#[tokio::test]
async fn authorize_refreshes_a_token_about_to_expire() {
    let net = Arc::new(Net::default());
    refreshing_as(&net, rotating(Arc::default()));
    let (c, clock, _store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(c.authorize(None).await.unwrap().secret(), "test-token-r1");
    clock.advance(Duration::from_secs(50));
    assert_eq!(c.authorize(None).await.unwrap().secret(), "test-token-r2");
}

/// After a logout, a request that carried the forgotten token authorizes
/// again without reading the metadata again (the token was not refused
/// by a server that may have moved: it was dropped here).
#[tokio::test]
async fn a_request_holding_a_token_forgotten_by_logout_authorizes_again() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut req = c.prepare().await;
    c.logout().unwrap();
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    let before = net.count("GET", &prm);
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(net.count("GET", &prm), before);
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    assert_eq!(bearer(&req), "Bearer test-token-r2");
}

/// Tokens another client saved to the shared store after this one logged
/// out are used, not a new authorization (the registration is still held
/// in memory, the tokens are not).
#[tokio::test]
async fn tokens_stored_by_another_client_after_a_logout_are_used() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let store = Arc::new(MemoryTokenStore::new());
    let a = client(&net, config()).with_store(store.clone());
    first_401(&a, Some(&prm_challenge())).await.unwrap();
    a.logout().unwrap();
    let b = client(&net, config()).with_store(store.clone());
    let from_b = first_401(&b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    let req = first_401(&a, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), bearer(&from_b));
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
}

/// The handler's redirect URI must be `https`, or `http` on a loopback
/// host: anything else is refused before the user is sent anywhere.
#[tokio::test]
async fn a_redirect_uri_off_loopback_without_tls_is_refused() {
    for (uri, ok) in [
        ("http://example.com/callback", false),
        ("http://127.0.0.1:4567/callback", true),
        ("http://[::1]:4567/callback", true),
        ("https://example.com/callback", true),
    ] {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, AsOpts::default());
        let fetch: Arc<dyn HttpFetch> = net.clone();
        let handler = HeadlessHandler::with_redirect_uri(fetch.clone(), uri);
        let c = OAuthClient::new(config(), fetch).unwrap().with_handler(Arc::new(handler));
        let r = first_401(&c, Some(&prm_challenge())).await;
        if ok {
            assert!(r.is_ok(), "{uri}: {r:?}");
        } else {
            assert!(matches!(r, Err(Error::InsecureUrl { what: "redirect", .. })), "{uri}: {r:?}");
            let l = log.lock().unwrap();
            assert!(l.authorize.is_empty() && l.register.is_empty(), "{uri}");
        }
    }
}

/// A server URL with a query has no protected resource metadata to match
/// it: its tokens are stored under the URL itself, and a logout forgets
/// them too.
#[tokio::test]
async fn logout_forgets_tokens_stored_under_a_server_url_with_a_query() {
    let net = Arc::new(Net::default());
    install_as(&net, AsOpts { base: RS.into(), metadata_path: None, ..Default::default() });
    let store = Arc::new(MemoryTokenStore::new());
    let url = format!("{MCP}?tenant=1");
    let c =
        client(&net, OAuthConfig::new(url.as_str(), "mcp-auth tests")).with_store(store.clone());
    first_401(&c, None).await.unwrap();
    let keys = store.keys().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].resource, url);
    assert!(store.load(&keys[0]).unwrap().unwrap().tokens.is_some());
    c.logout().unwrap();
    let stored = store.load(&keys[0]).unwrap().unwrap();
    assert!(stored.tokens.is_none());
    assert!(stored.client.is_some());
}

// ------------------------------------------------------------ client credentials

#[tokio::test]
async fn client_credentials_basic() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"grant_types_supported": ["client_credentials"], "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            ..Default::default()
        },
    );
    let cfg = config().with_client_credentials(ClientRegistration::confidential(
        "conformance-test-client",
        "conformance-test-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let token = c.authorize(Some(&prm_challenge())).await.unwrap();
    assert_eq!(token.secret(), "test-token-1");
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    let (auth, body) = &l.token[0];
    assert_eq!(body["grant_type"], "client_credentials");
    assert_eq!(body["resource"], MCP);
    let b64 = auth.as_deref().unwrap().strip_prefix("Basic ").unwrap().to_owned();
    assert_eq!(STANDARD.decode(b64).unwrap(), b"conformance-test-client:conformance-test-secret");
}

#[tokio::test]
async fn client_credentials_private_key_jwt_es256() {
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _,
        UnparsedPublicKey,
    };
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let public = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .unwrap()
        .public_key()
        .as_ref()
        .to_vec();
    // The PEM as `MCP_CONFORMANCE_CONTEXT.private_key_pem` carries it (jose's exportPKCS8).
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(pkcs8.as_ref())
    );

    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let verified = Arc::new(Mutex::new(None::<Value>));
    let v2 = verified.clone();
    let hook: TokenHook = Arc::new(move |f, _| {
        assert_eq!(
            f["client_assertion_type"],
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        );
        let jwt = &f["client_assertion"];
        let parts: Vec<&str> = jwt.split('.').collect();
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .expect("signature verifies");
        *v2.lock().unwrap() =
            Some(serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap());
        None
    });
    install_as(
        &net,
        AsOpts {
            extra: json!({
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            }),
            token_hook: Some(hook),
            ..Default::default()
        },
    );
    let key = PrivateKeyJwt::from_pem(&pem, JwtAlgorithm::from_name("ES256").unwrap()).unwrap();
    let cfg = config()
        .with_client_credentials(ClientRegistration::private_key_jwt("conformance-test-client"))
        .with_signing_key(key);
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert!(req.header().is_some());
    let claims = verified.lock().unwrap().clone().unwrap();
    assert_eq!(claims["iss"], "conformance-test-client");
    assert_eq!(claims["sub"], "conformance-test-client");
    assert_eq!(claims["aud"], AS);
}

// ------------------------------------------------------------ secrecy

#[tokio::test]
async fn secrets_never_reach_logs_errors_or_other_origins() {
    let buf = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::new(Mutex::new(vec!["rt-2".to_owned()]))));
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "cid",
        "very-secret-client-secret",
        TokenEndpointAuthMethod::ClientSecretPost,
    ));
    let c = client(&net, cfg);
    let mut req = first_401(&c, Some(&prm_challenge())).await.unwrap();
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_or(());
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.err();

    let logs = buf.text();
    assert!(logs.contains("obtained token"), "logging is on: {logs}");
    let l = log.lock().unwrap();
    let verifier = l.token[0].1["code_verifier"].clone();
    for secret in [
        "test-token-r",
        "rt-1",
        "rt-2",
        "very-secret-client-secret",
        "test-auth-code",
        verifier.as_str(),
    ] {
        assert!(!logs.contains(secret), "{secret} in logs");
        assert!(!format!("{c:?}").contains(secret), "{secret} in Debug");
        if let Some(e) = &err {
            assert!(!e.to_string().contains(secret));
        }
    }
    // The bearer token is only ever to be sent to the MCP server's origin.
    assert!(c.applies_to("http://localhost:8000/mcp"));
    assert!(c.applies_to("HTTP://LOCALHOST:8000/other"));
    assert!(!c.applies_to(AS));
    assert!(!c.applies_to("https://localhost:8000/mcp"));
    // ... and no request this crate made carried it.
    for s in net.seen() {
        let body = String::from_utf8_lossy(&s.body);
        assert!(!s.authorization.as_deref().unwrap_or("").starts_with("Bearer"), "{}", s.url);
        assert!(!body.contains("test-token-r"));
        assert!(!s.url.contains("test-token-r"));
    }
    assert!(format!("{:?}", req).contains("Sensitive"));
}

// ------------------------------------------------------------ edges

#[tokio::test]
async fn legacy_registration_without_method_follows_server_support() {
    // The 2025-03-26 fake lists only `none` and returns a secret without a
    // method: the client stays public.
    let net = Arc::new(Net::default());
    let log =
        install_as(&net, AsOpts { base: RS.into(), prefix: "/oauth".into(), ..Default::default() });
    let c = client(&net, config());
    first_401(&c, None).await.unwrap();
    let l = log.lock().unwrap();
    let (auth, body) = &l.token[0];
    assert!(auth.is_none());
    assert_eq!(body["client_id"], "test-client-id");
    assert!(!body.contains_key("client_secret"));
}

#[tokio::test]
async fn headless_handler_refuses_foreign_redirects_and_non_redirects() {
    let net = Arc::new(Net::default());
    net.route(Method::GET, &format!("{AS}/authorize"), |_| {
        Response::builder()
            .status(302)
            .header("location", "https://evil.example/cb?code=x&state=y")
            .body(Bytes::new())
            .unwrap()
    });
    net.route(Method::GET, &format!("{AS}/page"), |_| json_response(200, &json!({})));
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let h = HeadlessHandler::new(fetch);
    use mcp_auth::AuthorizationHandler as _;
    for path in ["/authorize", "/page"] {
        let req = mcp_auth_request(&format!("{AS}{path}?a=1"));
        let err = h.authorize(&req).await.unwrap_err();
        assert!(matches!(err, Error::Handler(_)), "{err:?}");
    }
}

fn mcp_auth_request(url: &str) -> mcp_auth::AuthorizationRequest {
    mcp_auth::AuthorizationRequest::new(url, HeadlessHandler::DEFAULT_REDIRECT_URI)
}

#[tokio::test]
async fn oversized_bodies_and_missing_challenge_metadata_are_errors() {
    let net = Arc::new(Net::default());
    let big = "x".repeat(mcp_auth::MAX_BODY + 1);
    net.route(Method::GET, &format!("{RS}/.well-known/oauth-protected-resource/mcp"), move |_| {
        Response::builder().status(200).body(Bytes::from(big.clone())).unwrap()
    });
    let c = client(&net, config());
    let err = first_401(&c, None).await.unwrap_err();
    assert!(matches!(err, Error::Fetch { source: FetchError::BodyTooLarge, .. }), "{err:?}");

    let net = Arc::new(Net::default());
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::HttpStatus { status: 404, .. }), "{err:?}");
    // Only the challenge's URL was tried.
    assert_eq!(net.seen().len(), 1);
}

#[tokio::test]
async fn cross_app_access_complete_flow() {
    const IDP: &str = "http://127.0.0.1:9100";
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let exchange = Arc::new(Mutex::new(None::<HashMap<String, String>>));
    let ex2 = exchange.clone();
    net.route(Method::POST, &format!("{IDP}/token"), move |req| {
        *ex2.lock().unwrap() = Some(form(req));
        json_response(
            200,
            &json!({"access_token": "the-id-jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
        )
    });
    let hook: TokenHook = Arc::new(|f, auth| {
        assert_eq!(f["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
        assert_eq!(f["assertion"], "the-id-jag");
        assert_eq!(f["resource"], MCP);
        let b64 = auth.unwrap().strip_prefix("Basic ").unwrap();
        assert_eq!(
            STANDARD.decode(b64).unwrap(),
            b"conformance-test-xaa-client:conformance-test-xaa-secret"
        );
        None
    });
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"], "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            token_hook: Some(hook),
            ..Default::default()
        },
    );
    let cfg = config().with_cross_app_access(
        ClientRegistration::confidential(
            "conformance-test-xaa-client",
            "conformance-test-xaa-secret",
            TokenEndpointAuthMethod::ClientSecretBasic,
        ),
        mcp_auth::IdentityProvider::new(
            format!("{IDP}/token"),
            "the-id-token",
            "conformance-test-idp-client",
        ),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    let ex = exchange.lock().unwrap().clone().unwrap();
    assert_eq!(ex["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(ex["subject_token"], "the-id-token");
    assert_eq!(ex["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    assert_eq!(ex["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
    assert_eq!(ex["audience"], AS);
    assert_eq!(ex["resource"], MCP);
    assert_eq!(ex["client_id"], "conformance-test-idp-client");
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    assert!(!format!("{c:?}").contains("the-id-token"));
}

// ------------------------------------------------------------ SEP-2352 migration

const AS2: &str = "http://127.0.0.1:9200";

/// Points the protected resource metadata at `issuer`.
fn point_prm_at(net: &Net, issuer: &str) {
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource/mcp"),
        json!({"resource": MCP, "authorization_servers": [issuer]}),
    );
}

#[tokio::test]
async fn authorization_server_migration_registers_with_the_new_one() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    let log1 = install_as(
        &net,
        AsOpts {
            registration: ("as1-client".into(), Some("as1-secret".into()), None),
            token_hook: Some(rotating(Arc::default())),
            ..Default::default()
        },
    );
    let log2 = install_as(
        &net,
        AsOpts {
            base: AS2.into(),
            registration: ("as2-client".into(), None, None),
            ..Default::default()
        },
    );
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().is_some());

    // The server moves to AS2 and refuses the AS1 token (to two requests).
    point_prm_at(&net, AS2);
    let mut req = c.prepare().await;
    let mut other = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    // The other request finds the new token: no second authorization.
    c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&other), "Bearer test-token-1");
    assert_eq!(log2.lock().unwrap().authorize.len(), 1);
    let (l1, l2) = (log1.lock().unwrap(), log2.lock().unwrap());
    // No refresh at AS1 (its refresh token is not used for the new server),
    // a registration at AS2, and nothing of AS1's sent there.
    assert_eq!(l1.token.len(), 1);
    assert_eq!(l2.register.len(), 1);
    assert_eq!(l2.authorize[0]["client_id"], "as2-client");
    assert_eq!(l2.token[0].1["client_id"], "as2-client");
    for s in net.seen().iter().filter(|s| s.url.starts_with(AS2)) {
        let text = format!("{} {:?} {}", s.url, s.authorization, String::from_utf8_lossy(&s.body));
        assert!(!text.contains("as1-") && !text.contains("rt-1"), "{text}");
    }
    // The store keeps credentials per issuer: AS1's are gone.
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().is_none());
    let stored = store.load(&StoreKey::new(MCP, AS2)).unwrap().unwrap();
    assert_eq!(stored.client.unwrap().client_id, "as2-client");
}

/// The server moves to an authorization server where no client can be
/// registered: the old token is dropped before the flow fails, so another
/// request that carried it starts over without reading the metadata again.
#[tokio::test]
async fn a_failed_move_drops_the_old_token_for_every_request() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    install_as(&net, AsOpts::default());
    install_as(
        &net,
        AsOpts {
            base: AS2.into(),
            extra: json!({"registration_endpoint": null}),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    point_prm_at(&net, AS2);
    let (mut req, mut other) = (c.prepare().await, c.prepare().await);
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
    assert!(c.authorization_header().is_none());
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    let before = net.count("GET", &prm);
    let err = c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
    assert_eq!(net.count("GET", &prm), before);
}

#[tokio::test]
async fn a_refused_token_reads_the_metadata_again_and_keeps_an_unchanged_server() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(net.count("GET", &prm), 1);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    // Read again, same issuer: the refresh token is used, no new client.
    assert_eq!(net.count("GET", &prm), 2);
    let l = log.lock().unwrap();
    assert_eq!(l.token.last().unwrap().1["grant_type"], "refresh_token");
    assert_eq!(l.register.len(), 1);
}

#[tokio::test]
async fn pre_registered_credentials_are_not_taken_to_a_new_server() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    install_as(&net, AsOpts::default());
    let log2 = install_as(&net, AsOpts { base: AS2.into(), ..Default::default() });
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "pre-client",
        "pre-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    point_prm_at(&net, AS2);
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::AuthorizationServerChanged { .. }), "{err:?}");
    assert!(!err.to_string().contains("pre-secret"));
    let l2 = log2.lock().unwrap();
    assert!(l2.authorize.is_empty() && l2.token.is_empty() && l2.register.is_empty());
    assert!(net.seen().iter().filter(|s| s.url.starts_with(AS2)).all(|s| s.method == Method::GET));
}

// ------------------------------------------------------------ workload identity

fn wif_as(net: &Net, hook: TokenHook) -> Arc<Mutex<AsLog>> {
    install_mcp_prm(net, json!({}));
    install_as(
        net,
        AsOpts {
            extra: json!({
                "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "registration_endpoint": null,
            }),
            token_hook: Some(hook),
            ..Default::default()
        },
    )
}

#[tokio::test]
async fn workload_identity_presents_the_current_assertion() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = Arc::new(Net::default());
    let log = wif_as(&net, Arc::new(|_, _| None));
    let dir = std::env::temp_dir().join(format!("mcp-auth-wif-flow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token");
    std::fs::write(&path, "eyJwl.first-assertion.sig\n").unwrap();
    let cfg = config().with_workload_identity(
        ClientRegistration::public("wif-client"),
        mcp_auth::AssertionSource::File(path.clone()),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    // The platform rotates the file; the server refuses the token.
    std::fs::write(&path, "eyJwl.second-assertion.sig").unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    let assertions: Vec<&str> = l.token.iter().map(|(_, f)| f["assertion"].as_str()).collect();
    assert_eq!(assertions, ["eyJwl.first-assertion.sig", "eyJwl.second-assertion.sig"]);
    let (auth, f) = &l.token[0];
    assert!(auth.is_none());
    assert_eq!(f["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(f["client_id"], "wif-client");
    assert_eq!(f["resource"], MCP);
    assert!(!logs.text().contains("eyJwl"), "{}", logs.text());
    assert!(!format!("{c:?}").contains("eyJwl"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_refused_workload_assertion_is_reported_not_retried() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    for error in ["invalid_grant", "invalid_scope", "unauthorized_client"] {
        let net = Arc::new(Net::default());
        let log = wif_as(
            &net,
            Arc::new(move |_, _| Some((400, json!({"error": error, "error_description": "no"})))),
        );
        let cfg = config().with_workload_identity(
            ClientRegistration::public("wif-client"),
            mcp_auth::AssertionSource::from_fn(|| Ok("eyJwl.refused.sig".into())),
        );
        let fetch: Arc<dyn HttpFetch> = net.clone();
        let c = OAuthClient::new(cfg, fetch).unwrap();
        let mut req = c.prepare().await;
        let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
        assert!(matches!(&err, Error::OAuth { error: e, .. } if e == error), "{err:?}");
        assert!(!err.to_string().contains("eyJwl"));
        assert_eq!(log.lock().unwrap().token.len(), 1, "{error}: one token request");
    }
    assert!(!logs.text().contains("eyJwl"));
    // A source that cannot produce one names itself, not a value.
    let net = Arc::new(Net::default());
    let log = wif_as(&net, Arc::new(|_, _| None));
    let cfg = config().with_workload_identity(
        ClientRegistration::public("wif-client"),
        mcp_auth::AssertionSource::Env("MCP_AUTH_FLOW_TEST_NO_SUCH_VARIABLE".into()),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(
        matches!(&err, Error::Assertion(m) if m.contains("MCP_AUTH_FLOW_TEST_NO_SUCH_VARIABLE"))
    );
    assert!(log.lock().unwrap().token.is_empty());
}

// ------------------------------------------------------------ DPoP (RFC 9449)

fn jwt_part(jwt: &str, i: usize) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(i).unwrap()).unwrap())
        .unwrap()
}

/// A token endpoint that wants a DPoP proof with its nonce `as-nonce-1`,
/// and binds the token to the proof's key.
fn dpop_token_endpoint(net: &Net, issued: Arc<Mutex<u32>>) {
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

/// The protected resource and an authorization server that supports
/// DPoP with ES256 (its token endpoint is the test's to route).
fn dpop_net() -> Arc<Net> {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            extra: json!({"dpop_signing_alg_values_supported": ["ES256"]}),
            ..Default::default()
        },
    );
    net
}

fn dpop_challenge(extra: &str) -> BearerChallenge {
    mcp_auth::find_challenge([format!(
        r#"DPoP {extra}resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#
    )
    .as_str()])
    .unwrap()
}

fn dpop_401(nonce: Option<&str>, extra: &str) -> http::HeaderMap {
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

/// A token endpoint error other than `use_dpop_nonce` is not sent again,
/// even when the answer carries a new nonce: one request, the error.
#[tokio::test]
async fn a_dpop_token_error_with_a_nonce_is_not_retried() {
    let net = dpop_net();
    let calls = Arc::new(Mutex::new(0u32));
    let seen = calls.clone();
    net.route(Method::POST, &format!("{AS}/token"), move |_| {
        *seen.lock().unwrap() += 1;
        Response::builder()
            .status(400)
            .header("dpop-nonce", "as-nonce-9")
            .body(Bytes::from(r#"{"error":"invalid_grant"}"#))
            .unwrap()
    });
    let c = client(&net, config());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    let err = c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap_err();
    assert!(err.to_string().contains("invalid_grant"), "{err}");
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[tokio::test]
async fn dpop_bound_tokens_proofs_and_nonces() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = dpop_net();
    dpop_token_endpoint(&net, Arc::default());
    let (c, clock, store) = clocked_client(&net);

    // The server challenges with the DPoP scheme only: DPoP is required.
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    let header = bearer(&req);
    assert!(header.starts_with("DPoP dpop-token-1-"), "{header}");
    assert!(req.is_dpop());
    // The token request was sent twice: once without, once with the nonce.
    let proofs: Vec<String> = net
        .seen()
        .iter()
        .filter(|s| s.url == format!("{AS}/token"))
        .map(|s| s.dpop.clone().unwrap())
        .collect();
    assert_eq!(proofs.len(), 2);
    assert_eq!(jwt_part(&proofs[1], 1)["nonce"], "as-nonce-1");
    let key_x = jwt_part(&proofs[0], 0)["jwk"]["x"].as_str().unwrap().to_owned();

    // Each request gets its own proof, bound to the token.
    let token = header.strip_prefix("DPoP ").unwrap();
    let p1 = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
    let p2 = c.dpop_proof(&req, "POST", &format!("{MCP}?q=1")).unwrap().unwrap();
    assert!(p1.is_sensitive());
    let (c1, c2) = (jwt_part(p1.to_str().unwrap(), 1), jwt_part(p2.to_str().unwrap(), 1));
    assert_ne!(c1["jti"], c2["jti"]);
    assert_eq!(c1["ath"], mcp_auth::access_token_hash(token));
    assert_eq!(c2["htu"], MCP);
    assert!(c1.get("nonce").is_none());
    // An empty or oversized nonce is not kept.
    for nonce in [String::new(), "n".repeat(1025)] {
        let mut h = http::HeaderMap::new();
        h.insert("dpop-nonce", nonce.parse().unwrap());
        c.observe_response(200, &h);
        let p = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
        assert!(jwt_part(p.to_str().unwrap(), 1).get("nonce").is_none(), "{nonce:?} kept");
    }

    // The MCP server asks for its nonce: one retry with it, not two.
    c.observe_response(401, &dpop_401(Some("rs-nonce-1"), r#"error="use_dpop_nonce", "#));
    let ch = dpop_challenge(r#"error="use_dpop_nonce", "#);
    c.on_unauthorized(&mut req, Some(&ch)).await.unwrap();
    assert_eq!(bearer(&req), header, "the same token");
    let p3 = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
    assert_eq!(jwt_part(p3.to_str().unwrap(), 1)["nonce"], "rs-nonce-1");
    // A second one is a refused token (here: one obtained for this request).
    let err = c.on_unauthorized(&mut req, Some(&ch)).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");

    // The bound refresh token is refreshed with the same key, kept in the store.
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    let stored_key = stored.dpop_key.clone().unwrap();
    clock.advance(Duration::from_secs(90));
    let req = c.prepare().await;
    let last = net.seen().iter().rev().find(|s| s.url == format!("{AS}/token")).unwrap().clone();
    assert!(String::from_utf8_lossy(&last.body).contains("grant_type=refresh_token"));
    assert_eq!(jwt_part(last.dpop.as_deref().unwrap(), 0)["jwk"]["x"], key_x.as_str());
    assert!(bearer(&req).starts_with("DPoP "));
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.dpop_key.unwrap(), stored_key);

    // A second client on the same store uses the stored token and key.
    let c2 = client(&net, config()).with_store(store.clone());
    let mut r2 = c2.prepare().await;
    c2.on_unauthorized(&mut r2, Some(&dpop_challenge(""))).await.unwrap();
    let p = c2.dpop_proof(&r2, "POST", MCP).unwrap().unwrap();
    assert_eq!(jwt_part(p.to_str().unwrap(), 0)["jwk"]["x"], key_x.as_str());

    // No token, proof or key in the logs, the Debug output or an error.
    let text = logs.text();
    let key_doc = serde_json::to_string(&stored_key).unwrap();
    for secret in
        [token, "dpop-rt-", p1.to_str().unwrap(), proofs[1].as_str(), key_doc.trim_matches('"')]
    {
        assert!(!text.contains(secret), "{secret} in logs");
        assert!(!format!("{c:?} {req:?} {stored_key:?}").contains(secret), "{secret} in Debug");
    }
}

/// Only a 401 whose challenges are all `DPoP` says the server requires
/// DPoP: a nonce on another answer, or a `DPoP` challenge beside a
/// `Bearer` one, leaves the next token a Bearer token.
#[tokio::test]
async fn a_nonce_or_a_dpop_challenge_beside_bearer_does_not_require_dpop() {
    let net = dpop_net();
    let c = client(&net, config());
    let mut nonce = http::HeaderMap::new();
    nonce.insert("dpop-nonce", "rs-nonce-0".parse().unwrap());
    c.observe_response(200, &nonce);
    c.observe_response(403, &dpop_401(Some("rs-nonce-0"), ""));
    let mut both = dpop_401(None, "");
    both.append(
        "www-authenticate",
        format!(r#"Bearer resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#)
            .parse()
            .unwrap(),
    );
    c.observe_response(401, &both);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert!(bearer(&req).starts_with("Bearer "), "{}", bearer(&req));
    assert!(!req.is_dpop());
    assert!(net.seen().iter().all(|s| s.dpop.is_none()));
}

/// A refused DPoP-bound token is refreshed after the metadata is read
/// again; the authorization server is unchanged, so the nonce it gave is
/// still used (one token request, not a `use_dpop_nonce` round first).
#[tokio::test]
async fn a_refused_dpop_token_is_refreshed_with_the_nonce_held() {
    let net = dpop_net();
    dpop_token_endpoint(&net, Arc::default());
    let c = client(&net, config());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    let first = bearer(&req);
    assert_eq!(net.count("POST", &format!("{AS}/token")), 2);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    assert_ne!(bearer(&req), first);
    assert!(bearer(&req).starts_with("DPoP dpop-token-2-"), "{}", bearer(&req));
    assert_eq!(net.count("POST", &format!("{AS}/token")), 3);
    assert_eq!(net.count("GET", &format!("{RS}/.well-known/oauth-protected-resource/mcp")), 2);
}

#[tokio::test]
async fn dpop_modes() {
    // (mode, AS algorithms, DPoP-only challenge) => DPoP-bound?
    let cases: &[(mcp_auth::DpopMode, Value, bool, Option<bool>)] = &[
        (mcp_auth::DpopMode::WhenRequired, json!(["ES256"]), false, Some(false)),
        (mcp_auth::DpopMode::WhenRequired, json!(null), true, Some(true)),
        (mcp_auth::DpopMode::WhenRequired, json!(["RS256"]), true, None),
        (mcp_auth::DpopMode::Always, json!(["ES256"]), false, Some(true)),
        (mcp_auth::DpopMode::Always, json!(["RS256"]), false, Some(false)),
        (mcp_auth::DpopMode::Never, json!(["ES256"]), true, Some(false)),
    ];
    for (mode, algs, dpop_only, expected) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        install_as(
            &net,
            AsOpts {
                extra: json!({"dpop_signing_alg_values_supported": algs}),
                ..Default::default()
            },
        );
        let c = client(&net, config().with_dpop(*mode));
        let mut req = c.prepare().await;
        if *dpop_only {
            c.observe_response(401, &dpop_401(None, ""));
        }
        let r = c.on_unauthorized(&mut req, Some(&prm_challenge())).await;
        let sent_proof =
            net.seen().iter().any(|s| s.url == format!("{AS}/token") && s.dpop.is_some());
        match expected {
            None => assert!(r.is_err() && !sent_proof, "{mode:?} {algs}"),
            Some(dpop) => {
                assert_eq!(sent_proof, *dpop, "{mode:?} {algs} {dpop_only}");
                assert!(r.is_ok());
            }
        }
    }
}

// ------------------------------------------------------------ revocation (RFC 7009)

#[tokio::test]
async fn revoke_then_logout() {
    for offered in [true, false] {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let extra = if offered {
            json!({"revocation_endpoint": format!("{AS}/revoke")})
        } else {
            json!({})
        };
        install_as(
            &net,
            AsOpts { extra, token_hook: Some(rotating(Arc::default())), ..Default::default() },
        );
        let revoked = Arc::new(Mutex::new(Vec::new()));
        let r2 = revoked.clone();
        net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
            r2.lock().unwrap().push(form(req));
            json_response(200, &json!({}))
        });
        let store = Arc::new(MemoryTokenStore::new());
        first_401(&client(&net, config()).with_store(store.clone()), Some(&prm_challenge()))
            .await
            .unwrap();
        // A later process: nothing in memory, the tokens in the store.
        let c = client(&net, config()).with_store(store.clone());
        assert_eq!(c.revoke().await.unwrap(), offered);
        c.logout().unwrap();
        let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
        assert!(stored.tokens.is_none());
        assert_eq!(stored.client.unwrap().client_id, "test-client-id");
        let r = revoked.lock().unwrap();
        if offered {
            let got: Vec<(&str, &str, &str)> = r
                .iter()
                .map(|f| {
                    (f["token"].as_str(), f["token_type_hint"].as_str(), f["client_id"].as_str())
                })
                .collect();
            assert_eq!(
                got,
                [
                    ("rt-1", "refresh_token", "test-client-id"),
                    ("test-token-r1", "access_token", "test-client-id")
                ]
            );
        } else {
            assert!(r.is_empty());
        }
        // Bearer tokens: no DPoP proof.
        assert!(net.seen().iter().all(|s| s.dpop.is_none()));
    }
}

/// The authorization server alone (metadata with a revocation endpoint,
/// the rotating token endpoint), and what its revocation endpoint got.
fn revoking_as(net: &Arc<Net>) -> Arc<Mutex<Vec<String>>> {
    let extra = json!({"revocation_endpoint": format!("{AS}/revoke")});
    install_as(
        net,
        AsOpts { extra, token_hook: Some(rotating(Arc::default())), ..Default::default() },
    );
    let revoked = Arc::new(Mutex::new(Vec::new()));
    let r2 = revoked.clone();
    net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
        r2.lock().unwrap().push(form(req)["token"].clone());
        json_response(200, &json!({}))
    });
    revoked
}

#[tokio::test]
async fn logout_without_the_server_uses_the_issuer_kept_with_the_tokens() {
    let dir = std::env::temp_dir().join(format!("mcp-auth-logout-flow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(FileTokenStore::new(&dir));
    let key = StoreKey::new(MCP, AS);
    let login = |store: Arc<FileTokenStore>| async move {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        revoking_as(&net);
        let c = client(&net, config()).with_store(store);
        let req = first_401(&c, Some(&prm_challenge())).await.unwrap();
        bearer(&req).strip_prefix("Bearer ").unwrap().to_owned()
    };
    let token = login(store.clone()).await;

    // Later the MCP server is gone: nothing on its origin, so discovery
    // falls back to the 2025-03-26 defaults, which name its origin as the
    // issuer. The tokens are found under the issuer kept with them and
    // revoked there.
    let later = Arc::new(Net::default());
    let revoked = revoking_as(&later);
    let c = client(&later, config()).with_store(store.clone());
    assert!(c.revoke().await.unwrap());
    assert_eq!(*revoked.lock().unwrap(), ["rt-1".to_owned(), token]);
    c.logout().unwrap();
    let stored = store.load(&key).unwrap().unwrap();
    assert!(stored.tokens.is_none());
    assert_eq!(stored.client.unwrap().client_id, "test-client-id");
    // Nothing was sent to the MCP server's origin but metadata requests.
    assert!(later.seen().iter().all(|s| s.url.starts_with(AS) || s.authorization.is_none()));

    // Nothing reachable at all: the revocation fails, the logout still
    // forgets the tokens.
    login(store.clone()).await;
    assert!(store.load(&key).unwrap().unwrap().tokens.is_some());
    let nowhere = Arc::new(Net::default());
    let c = client(&nowhere, config()).with_store(store.clone());
    let err = c.revoke().await.unwrap_err();
    assert!(matches!(err, Error::AuthorizationServerMetadataNotFound { .. }), "{err:?}");
    c.logout().unwrap();
    assert!(store.load(&key).unwrap().unwrap().tokens.is_none());

    // Another server's tokens in the same store are not touched.
    let other = StoreKey::new("http://localhost:8001/mcp", AS);
    let mut kept = store.load(&key).unwrap().unwrap();
    kept.tokens = Some(mcp_auth::TokenSet::new(mcp_auth::AccessToken::new("other-token")));
    store.save(&other, &kept).unwrap();
    client(&nowhere, config()).with_store(store.clone()).logout().unwrap();
    assert!(store.load(&other).unwrap().unwrap().tokens.is_some());

    // Tokens kept under two issuers, one of them without a revocation
    // endpoint: both are tried, and the answer is that not every token
    // was revoked.
    login(store.clone()).await;
    let mut at_as2 = store.load(&key).unwrap().unwrap();
    at_as2.tokens = Some(mcp_auth::TokenSet::new(mcp_auth::AccessToken::new("as2-token")));
    store.save(&StoreKey::new(MCP, AS2), &at_as2).unwrap();
    let later = Arc::new(Net::default());
    let revoked = revoking_as(&later);
    install_as(&later, AsOpts { base: AS2.into(), ..Default::default() });
    let c = client(&later, config()).with_store(store.clone());
    assert!(!c.revoke().await.unwrap());
    assert_eq!(revoked.lock().unwrap().len(), 2, "both of AS's tokens");
    assert_eq!(later.count("GET", &format!("{AS2}/.well-known/oauth-authorization-server")), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn dpop_bound_tokens_are_revoked_with_a_proof_of_their_key() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            extra: json!({
                "dpop_signing_alg_values_supported": ["ES256"],
                "revocation_endpoint": format!("{AS}/revoke"),
            }),
            ..Default::default()
        },
    );
    dpop_token_endpoint(&net, Arc::default());
    // (hint, the proof key's x) of each revocation; a nonce of its own.
    let revoked = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let r2 = revoked.clone();
    net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
        let Some(proof) = req.headers().get("dpop").map(|v| v.to_str().unwrap().to_owned()) else {
            return json_response(400, &json!({"error": "invalid_dpop_proof"}));
        };
        let claims = jwt_part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], format!("{AS}/revoke"));
        assert!(claims.get("ath").is_none(), "the token is in the body, not a header");
        if claims["nonce"] != "as-nonce-2" {
            return Response::builder()
                .status(400)
                .header("dpop-nonce", "as-nonce-2")
                .body(Bytes::from(r#"{"error":"use_dpop_nonce"}"#))
                .unwrap();
        }
        let x = jwt_part(&proof, 0)["jwk"]["x"].as_str().unwrap().to_owned();
        r2.lock().unwrap().push((form(req)["token_type_hint"].clone(), x));
        json_response(200, &json!({}))
    });
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    assert!(req.is_dpop());
    let token_proof = net.seen().iter().find_map(|s| s.dpop.clone()).unwrap();
    let key_x = jwt_part(&token_proof, 0)["jwk"]["x"].as_str().unwrap().to_owned();

    // A later process: the tokens and their key come from the store.
    let c2 = client(&net, config()).with_store(store.clone());
    assert!(c2.revoke().await.unwrap());
    let expected =
        [("refresh_token".to_owned(), key_x.clone()), ("access_token".to_owned(), key_x)];
    assert_eq!(*revoked.lock().unwrap(), expected);
    // One nonce refusal (answered once), then each token once.
    assert_eq!(net.count("POST", &format!("{AS}/revoke")), 3);
}
