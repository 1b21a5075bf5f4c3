//! The resource server's check of JWT access tokens from a real
//! authorization server ([`JwtAuth`]): the key set fetched from its
//! `jwks_uri`, RS256 and ES256 signatures verified with `ring`, `iss`,
//! `aud`, `exp` and `nbf` checked, and for a DPoP-bound token (`cnf.jkt`)
//! the request's proof: its claims ([`check_dpop_proof`]), its signature
//! and its key's thumbprint.
//!
//! [`guard`] is the one call the HTTP driver makes: it serves the protected
//! resource metadata and refuses a request without a good token, or lets
//! it through.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST, WWW_AUTHENTICATE};
use http::request::Parts;
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Empty, Limited};
use hyper_util::rt::TokioIo;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::{Value, json};

use crate::config::JwtAuth;
use crate::oauth::{check_dpop_proof, jwt_parts};

/// How long fetching the key set may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest key set accepted.
const MAX_JWKS: usize = 64 * 1024;
/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY: u64 = 30;

/// A server's [`JwtAuth`] and the key set it fetched. Each server keeps
/// its own: one started later on the same `jwks_uri` (another provider on
/// a reused port, new keys under the same `kid`s) is never checked against
/// keys its provider did not publish.
#[derive(Debug)]
pub(crate) struct Verifier {
    auth: JwtAuth,
    keys: Mutex<Option<Vec<Value>>>,
}

impl Verifier {
    pub(crate) fn new(auth: JwtAuth) -> Self {
        Verifier { auth, keys: Mutex::new(None) }
    }

    fn keys(&self) -> MutexGuard<'_, Option<Vec<Value>>> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a token was refused (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No `Authorization` header of scheme `Bearer` or `DPoP`.
    Missing,
    /// The token or its proof is not good; the reason names the check.
    Invalid(String),
}

fn invalid(why: impl Into<String>) -> Refusal {
    Refusal::Invalid(why.into())
}

/// The driver's one call for a server with [`JwtAuth`]: `Some` response
/// to send instead (the protected resource metadata, or a 401), `None`
/// when the request may go on. `base` is `http://host:port`.
pub(crate) async fn guard(
    verifier: Option<&Verifier>,
    base: &str,
    request: &Parts,
) -> Option<Response<Bytes>> {
    let verifier = verifier?;
    let auth = &verifier.auth;
    let endpoint = format!("{base}/mcp");
    let prm_path = "/.well-known/oauth-protected-resource";
    let is_prm = request.uri.path().starts_with(prm_path);
    if is_prm && !auth.publish_metadata {
        return Some(reply(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found\n".into(),
            None,
        ));
    }
    if is_prm {
        let metadata = json!({
            "resource": endpoint,
            "authorization_servers": [auth.issuer],
            "scopes_supported": ["mcp"],
            "bearer_methods_supported": ["header"],
            "dpop_signing_alg_values_supported": ["ES256"],
        });
        return Some(reply(StatusCode::OK, "application/json", metadata.to_string(), None));
    }
    let url = format!("{base}{}", request.uri.path());
    let refusal = match check_request(verifier, &endpoint, &request.method, &url, request).await {
        Ok(_) => return None,
        Err(refusal) => refusal,
    };
    let mut challenge = if auth.publish_metadata {
        format!("Bearer resource_metadata=\"{base}{prm_path}\", scope=\"mcp\"")
    } else {
        "Bearer scope=\"mcp\"".to_owned()
    };
    if let Refusal::Invalid(why) = &refusal {
        // A quoted-string: no quote or backslash of the reason inside.
        let why = why.replace(['"', '\\'], "'");
        challenge.push_str(&format!(", error=\"invalid_token\", error_description=\"{why}\""));
    }
    Some(reply(
        StatusCode::UNAUTHORIZED,
        "text/plain; charset=utf-8",
        "unauthorized\n".into(),
        Some(challenge),
    ))
}

fn reply(
    status: StatusCode,
    kind: &'static str,
    body: String,
    challenge: Option<String>,
) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Some(value) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// Checks the request's token (and proof); returns its claims.
async fn check_request(
    verifier: &Verifier,
    endpoint: &str,
    method: &Method,
    url: &str,
    request: &Parts,
) -> Result<Value, Refusal> {
    let header = request.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let (scheme, token) = header
        .and_then(|v| v.trim().split_once(' '))
        .map(|(scheme, token)| (scheme.to_ascii_lowercase(), token.trim()))
        .filter(|(scheme, _)| scheme == "bearer" || scheme == "dpop")
        .ok_or(Refusal::Missing)?;
    let (head, _) = jwt_parts(token).ok_or_else(|| invalid("not a JWT"))?;
    let kid = head.get("kid").and_then(Value::as_str).unwrap_or_default().to_owned();
    let auth = &verifier.auth;
    let mut set = verifier.keys().clone();
    if set.is_none() || find_key(set.as_deref().unwrap_or_default(), &kid).is_none() {
        // First use, or a key not seen yet (the server rotated its keys).
        let fetched = fetch_keys(&auth.jwks_uri).await?;
        *verifier.keys() = Some(fetched.clone());
        set = Some(fetched);
    }
    let audience = auth.audience.as_deref().unwrap_or(endpoint);
    let claims = verify(token, set.as_deref().unwrap_or_default(), &auth.issuer, audience, now())?;
    let bound = claims.pointer("/cnf/jkt").and_then(Value::as_str);
    match (bound, scheme.as_str()) {
        (None, "bearer") => Ok(claims),
        (Some(jkt), "dpop") => {
            let proof = request.headers.get("dpop").and_then(|v| v.to_str().ok());
            check_proof(proof, method.as_str(), url, token, jkt)?;
            Ok(claims)
        }
        (Some(_), _) => Err(invalid("a DPoP-bound token sent as Bearer")),
        (None, _) => Err(invalid("a bearer token sent as DPoP")),
    }
}

/// A DPoP proof for `token`: its claims, its key's thumbprint `jkt`, its
/// signature.
fn check_proof(
    proof: Option<&str>,
    method: &str,
    url: &str,
    token: &str,
    jkt: &str,
) -> Result<(), Refusal> {
    let ath = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()));
    let jwk = check_dpop_proof(proof, method, url, Some(&ath), None)
        .map_err(|e| invalid(format!("DPoP proof: {e:?}")))?;
    if thumbprint(&jwk).as_deref() != Some(jkt) {
        return Err(invalid("DPoP proof key is not the token's"));
    }
    let proof = proof.unwrap_or_default();
    let (signed, signature) = split_signature(proof).ok_or_else(|| invalid("DPoP proof shape"))?;
    verify_signature("ES256", &jwk, signed.as_bytes(), &signature)
}

/// The RFC 7638 thumbprint of a P-256 public key.
fn thumbprint(jwk: &Value) -> Option<String> {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk.get("crv")?.as_str()?,
        jwk.get("x")?.as_str()?,
        jwk.get("y")?.as_str()?
    );
    Some(URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes())))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Verifies a compact JWT access token against a key set: signature
/// (RS256 or ES256, the key chosen by `kid`, else by algorithm), `iss`,
/// `aud` (a string or a list holding `audience`), `exp` ahead and `nbf`
/// behind `now` (with [`LEEWAY`]). Returns the claims.
pub(crate) fn verify(
    token: &str,
    keys: &[Value],
    issuer: &str,
    audience: &str,
    now: u64,
) -> Result<Value, Refusal> {
    let (header, claims) = jwt_parts(token).ok_or_else(|| invalid("not a JWT"))?;
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or_default();
    let kid = header.get("kid").and_then(Value::as_str).unwrap_or_default();
    let key = find_key(keys, kid)
        .filter(|k| kid.is_empty() || k.get("alg").is_none_or(|a| a == alg))
        .ok_or_else(|| invalid("no key for the token"))?;
    let (signed, signature) = split_signature(token).ok_or_else(|| invalid("not a JWT"))?;
    verify_signature(alg, key, signed.as_bytes(), &signature)?;
    if claims.get("iss").and_then(Value::as_str) != Some(issuer) {
        return Err(invalid("iss"));
    }
    let audiences = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&audience) {
        return Err(invalid("aud"));
    }
    match claims.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp + LEEWAY > now => {}
        _ => return Err(invalid("exp")),
    }
    if claims.get("nbf").and_then(Value::as_u64).is_some_and(|nbf| nbf > now + LEEWAY) {
        return Err(invalid("nbf"));
    }
    Ok(claims)
}

/// `header.claims` and the decoded signature of a compact JWT.
fn split_signature(jwt: &str) -> Option<(&str, Vec<u8>)> {
    let (signed, signature) = jwt.rsplit_once('.')?;
    Some((signed, URL_SAFE_NO_PAD.decode(signature).ok()?))
}

/// The key whose `kid` this is; with no `kid`, the only key.
fn find_key<'a>(keys: &'a [Value], kid: &str) -> Option<&'a Value> {
    if kid.is_empty() {
        return (keys.len() == 1).then(|| &keys[0]);
    }
    keys.iter().find(|k| k.get("kid").and_then(Value::as_str) == Some(kid))
}

fn member(key: &Value, name: &str) -> Result<Vec<u8>, Refusal> {
    key.get(name)
        .and_then(Value::as_str)
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .ok_or_else(|| invalid(format!("key member {name}")))
}

fn verify_signature(alg: &str, key: &Value, signed: &[u8], sig: &[u8]) -> Result<(), Refusal> {
    let bad = |_| invalid("signature");
    match (alg, key.get("kty").and_then(Value::as_str)) {
        ("RS256", Some("RSA")) => {
            let components = RsaPublicKeyComponents { n: member(key, "n")?, e: member(key, "e")? };
            components.verify(&signature::RSA_PKCS1_2048_8192_SHA256, signed, sig).map_err(bad)
        }
        ("ES256", Some("EC")) if key.get("crv").and_then(Value::as_str) == Some("P-256") => {
            let mut point = vec![0x04];
            point.extend(member(key, "x")?);
            point.extend(member(key, "y")?);
            UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                .verify(signed, sig)
                .map_err(bad)
        }
        _ => Err(invalid("alg")),
    }
}

/// Fetches the key set over plain HTTP (bounded in time and size).
async fn fetch_keys(jwks_uri: &str) -> Result<Vec<Value>, Refusal> {
    let fetched = tokio::time::timeout(FETCH_TIMEOUT, get(jwks_uri))
        .await
        .map_err(|_| invalid("key set: timed out"))??;
    let set: Value = serde_json::from_slice(&fetched).map_err(|_| invalid("key set: not JSON"))?;
    let list = set
        .get("keys")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| invalid("key set: no keys"))?;
    Ok(list)
}

async fn get(url: &str) -> Result<Bytes, Refusal> {
    let uri: Uri = url.parse().map_err(|_| invalid("key set URL"))?;
    let authority = match (uri.scheme_str(), uri.authority()) {
        (Some("http"), Some(authority)) => authority.clone(),
        _ => return Err(invalid("key set URL is not plain http")),
    };
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((authority.host(), port))
        .await
        .map_err(|_| invalid("key set: connect"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| invalid("key set: handshake"))?;
    tokio::spawn(connection);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let request = Request::get(path)
        .header(HOST, authority.as_str())
        .body(Empty::<Bytes>::new())
        .map_err(|_| invalid("key set request"))?;
    let response = sender.send_request(request).await.map_err(|_| invalid("key set: request"))?;
    if response.status() != StatusCode::OK {
        return Err(invalid(format!("key set: status {}", response.status())));
    }
    let body = Limited::new(response.into_body(), MAX_JWKS)
        .collect()
        .await
        .map_err(|_| invalid("key set: body"))?;
    Ok(body.to_bytes())
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};

    use super::*;

    const ISS: &str = "http://127.0.0.1:1";
    const AUD: &str = "http://127.0.0.1:2/mcp";
    const NOW: u64 = 1_800_000_000;

    /// An ES256 key pair and its public JWK named `kid`.
    fn es256(kid: &str) -> (EcdsaKeyPair, Value) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        (pair, jwk)
    }

    fn sign(pair: &EcdsaKeyPair, header: &Value, claims: &Value) -> String {
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = pair.sign(&SystemRandom::new(), signed.as_bytes()).unwrap();
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }

    fn claims() -> Value {
        json!({"iss": ISS, "aud": AUD, "exp": NOW + 60, "sub": "user-1"})
    }

    #[test]
    fn a_good_token_passes_and_each_broken_claim_is_named() {
        let (pair, jwk) = es256("k1");
        let header = json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt"});
        let keys = [jwk];
        let good = sign(&pair, &header, &claims());
        assert_eq!(verify(&good, &keys, ISS, AUD, NOW).unwrap()["sub"], "user-1");
        let listed = sign(&pair, &header, &json!({"iss": ISS, "aud": ["x", AUD], "exp": NOW + 60}));
        assert!(verify(&listed, &keys, ISS, AUD, NOW).is_ok());

        let cases = [
            (json!({"iss": "http://other", "aud": AUD, "exp": NOW + 60}), "iss"),
            (json!({"iss": ISS, "aud": "http://127.0.0.1:2/other", "exp": NOW + 60}), "aud"),
            (json!({"iss": ISS, "aud": AUD, "exp": NOW - 3600}), "exp"),
            (json!({"iss": ISS, "aud": AUD}), "exp"),
            (json!({"iss": ISS, "aud": AUD, "exp": NOW + 60, "nbf": NOW + 3600}), "nbf"),
        ];
        for (claims, why) in cases {
            let token = sign(&pair, &header, &claims);
            assert_eq!(verify(&token, &keys, ISS, AUD, NOW), Err(invalid(why)), "{claims}");
        }
    }

    #[test]
    fn a_forged_or_unknown_signature_is_refused() {
        let (pair, jwk) = es256("k1");
        let (other, _) = es256("k1");
        let header = json!({"alg": "ES256", "kid": "k1"});
        let keys = [jwk];
        let forged = sign(&other, &header, &claims());
        assert_eq!(verify(&forged, &keys, ISS, AUD, NOW), Err(invalid("signature")));
        let unknown = sign(&pair, &json!({"alg": "ES256", "kid": "k2"}), &claims());
        assert_eq!(verify(&unknown, &keys, ISS, AUD, NOW), Err(invalid("no key for the token")));
        let none = sign(&pair, &json!({"alg": "none", "kid": "k1"}), &claims());
        assert!(verify(&none, &keys, ISS, AUD, NOW).is_err());
        // The claims changed after signing.
        let good = sign(&pair, &header, &claims());
        let mut parts: Vec<&str> = good.split('.').collect();
        let tampered =
            URL_SAFE_NO_PAD.encode(json!({"iss": ISS, "aud": AUD, "exp": NOW + 9999}).to_string());
        parts[1] = &tampered;
        assert_eq!(verify(&parts.join("."), &keys, ISS, AUD, NOW), Err(invalid("signature")));
    }

    #[tokio::test]
    async fn the_guard_serves_metadata_and_refuses_without_a_good_token() {
        let auth = Verifier::new(JwtAuth::new(ISS, "http://127.0.0.1:1/jwks"));
        let base = "http://127.0.0.1:2";
        let get = |path: &str, authorization: Option<&str>| {
            let mut b = Request::get(path);
            if let Some(a) = authorization {
                b = b.header(AUTHORIZATION, a);
            }
            b.body(()).unwrap().into_parts().0
        };
        let prm = guard(Some(&auth), base, &get("/.well-known/oauth-protected-resource/mcp", None))
            .await
            .expect("the metadata");
        let doc: Value = serde_json::from_slice(prm.body()).unwrap();
        assert_eq!(
            (doc["resource"].as_str(), doc["authorization_servers"][0].as_str()),
            (Some(AUD), Some(ISS))
        );
        let challenge =
            |r: &Response<Bytes>| r.headers()[WWW_AUTHENTICATE].to_str().unwrap().to_owned();
        let none = guard(Some(&auth), base, &get("/mcp", None)).await.expect("a refusal");
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
        assert!(!challenge(&none).contains("error="), "{}", challenge(&none));
        let bad = guard(Some(&auth), base, &get("/mcp", Some("Bearer not.a-jwt"))).await.unwrap();
        let text = challenge(&bad);
        assert!(text.contains(r#"error="invalid_token", error_description="not a JWT""#), "{text}");
        assert_eq!(text.matches('"').count() % 2, 0, "{text}");
        let hidden = Verifier::new(auth.auth.clone().without_metadata());
        let gone = guard(Some(&hidden), base, &get("/.well-known/oauth-protected-resource", None))
            .await
            .unwrap();
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
        assert!(guard(None, base, &get("/mcp", None)).await.is_none());
    }

    /// Two providers in turn behind one `jwks_uri` (a port reused), each
    /// with a new key under the same `kid`: each server checks tokens
    /// against the keys it fetched, never against another server's.
    #[tokio::test]
    async fn each_server_keeps_the_keys_it_fetched() {
        use std::sync::Arc;
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

        let (first, first_jwk) = es256("es-1");
        let (second, second_jwk) = es256("es-1");
        let published = Arc::new(Mutex::new(json!({"keys": [first_jwk]})));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let jwks_uri = format!("http://{}/jwks", listener.local_addr().unwrap());
        let serving = Arc::clone(&published);
        let server = tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = stream.read(&mut buf).await.unwrap();
                    assert!(n > 0, "the request's head ends");
                    head.extend_from_slice(&buf[..n]);
                }
                let body = serving.lock().unwrap().to_string();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(reply.as_bytes()).await.unwrap();
            }
        });
        let header = json!({"alg": "ES256", "kid": "es-1", "typ": "at+jwt"});
        let token = |pair: &EcdsaKeyPair| {
            let claims = json!({"iss": ISS, "aud": AUD, "exp": now() + 600});
            let token = sign(pair, &header, &claims);
            let request = Request::post("/mcp").header(AUTHORIZATION, format!("Bearer {token}"));
            request.body(()).unwrap().into_parts().0
        };
        let base = "http://127.0.0.1:2";
        let one = Verifier::new(JwtAuth::new(ISS, &jwks_uri));
        assert!(guard(Some(&one), base, &token(&first)).await.is_none(), "the first key");
        *published.lock().unwrap() = json!({"keys": [second_jwk]});
        let two = Verifier::new(JwtAuth::new(ISS, &jwks_uri));
        assert!(guard(Some(&two), base, &token(&second)).await.is_none(), "the second key");
        assert!(guard(Some(&one), base, &token(&first)).await.is_none(), "the first, kept");
        let refused = guard(Some(&two), base, &token(&first)).await.expect("a refusal");
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        server.abort();
    }

    #[test]
    fn a_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1's example is RSA; this EC one is from RFC 9449 §6.1's
        // figure of a proof key and the `jkt` it gives.
        let jwk = json!({
            "kty": "EC", "crv": "P-256",
            "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
            "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA",
        });
        assert_eq!(
            thumbprint(&jwk).as_deref(),
            Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        );
    }
}
