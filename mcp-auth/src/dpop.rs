//! DPoP (RFC 9449, SEP-1932): sender-constrained tokens. The client holds
//! an ES256 key pair, proves possession of it with a fresh signed proof on
//! every token request and every request to the MCP server, and presents
//! the token as `Authorization: DPoP <token>`; a stolen token is useless
//! without the key.
//!
//! The key is kept with the tokens in the [`TokenStore`](crate::TokenStore)
//! (a DPoP-bound refresh token only works with the key it was bound to).
//! Server nonces (`use_dpop_nonce`, RFC 9449 §8 and §9) are answered with
//! one retry carrying the nonce.

use std::fmt;
use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde::{Deserialize, Serialize};

use mcp_sse::www_authenticate::{self, BearerChallenge};

use crate::error::Error;
use crate::pkce::random_b64;
use crate::token::unix;

/// The `DPoP` request header and `Authorization` scheme.
pub const DPOP: &str = "DPoP";
/// The header a server hands out a nonce in.
pub const DPOP_NONCE: &str = "DPoP-Nonce";
/// The error code asking for a proof with a server nonce.
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The one proof algorithm this client signs with.
pub const DPOP_ALG: &str = "ES256";

/// When the client uses DPoP with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DpopMode {
    /// Never: tokens are Bearer tokens.
    Never,
    /// When the MCP server requires it: its 401 challenges with the `DPoP`
    /// scheme and not with `Bearer`, or its protected resource metadata
    /// says `dpop_bound_access_tokens_required` (the default).
    #[default]
    WhenRequired,
    /// With every authorization server that does not rule it out (one that
    /// lists `dpop_signing_alg_values_supported` without ES256).
    Always,
}

/// A DPoP key pair (ECDSA P-256). `Debug` shows only its thumbprint;
/// serialized (for the token store) as its PKCS#8 document, base64url.
pub struct DpopKey {
    pkcs8: Vec<u8>,
    pair: EcdsaKeyPair,
    jwk: String,
    thumbprint: String,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey").field("jkt", &self.thumbprint).finish_non_exhaustive()
    }
}

impl Clone for DpopKey {
    fn clone(&self) -> Self {
        // The document was accepted once; it is accepted again.
        DpopKey::from_pkcs8(&self.pkcs8).unwrap_or_else(|_| unreachable!("a parsed key parses"))
    }
}

impl PartialEq for DpopKey {
    fn eq(&self, other: &Self) -> bool {
        self.thumbprint == other.thumbprint
    }
}

impl Eq for DpopKey {}

impl Serialize for DpopKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&URL_SAFE_NO_PAD.encode(&self.pkcs8))
    }
}

impl<'de> Deserialize<'de> for DpopKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let der = URL_SAFE_NO_PAD
            .decode(text.as_bytes())
            .map_err(|_| serde::de::Error::custom("the DPoP key is not base64url"))?;
        DpopKey::from_pkcs8(&der)
            .map_err(|_| serde::de::Error::custom("the DPoP key is not a P-256 PKCS#8 key"))
    }
}

impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<Self, Error> {
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| Error::InvalidCredentials("could not generate a DPoP key"))?;
        Self::from_pkcs8(doc.as_ref())
    }

    /// A key from its PKCS#8 document (P-256).
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, Error> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|_| Error::InvalidCredentials("the DPoP key is not a P-256 PKCS#8 key"))?;
        // Uncompressed point: 0x04 || x || y.
        let point = pair.public_key().as_ref();
        let (x, y) =
            (URL_SAFE_NO_PAD.encode(&point[1..33]), URL_SAFE_NO_PAD.encode(&point[33..65]));
        // RFC 7638: the required members in lexicographic order, no spaces.
        let jwk = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let digest = ring::digest::digest(&ring::digest::SHA256, jwk.as_bytes());
        let thumbprint = URL_SAFE_NO_PAD.encode(digest.as_ref());
        Ok(DpopKey { pkcs8: der.to_vec(), pair, jwk, thumbprint })
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (`cnf.jkt` of a
    /// token bound to it).
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// The public key as a JWK (no private member).
    pub fn public_jwk(&self) -> &str {
        &self.jwk
    }

    /// A proof for one HTTP request (RFC 9449 §4.2): `htm` the method,
    /// `htu` the URL without query and fragment, `iat` now, a random `jti`,
    /// `ath` when an access token goes with it, and the server's `nonce`
    /// when it gave one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
        now: SystemTime,
    ) -> Result<String, Error> {
        let ath = access_token.map(access_token_hash);
        self.proof_with_ath(method, url, ath.as_deref(), nonce, now)
    }

    pub(crate) fn proof_with_ath(
        &self,
        method: &str,
        url: &str,
        ath: Option<&str>,
        nonce: Option<&str>,
        now: SystemTime,
    ) -> Result<String, Error> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let header = format!(r#"{{"typ":"dpop+jwt","alg":"{DPOP_ALG}","jwk":{}}}"#, self.jwk);
        let mut claims = serde_json::json!({
            "jti": random_b64(18)?,
            "htm": method,
            "htu": htu,
            "iat": unix(now),
        });
        if let Some(ath) = ath {
            claims["ath"] = ath.into();
        }
        if let Some(n) = nonce {
            claims["nonce"] = n.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| Error::InvalidCredentials("could not sign a DPoP proof"))?;
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref())))
    }
}

/// `ath`: the base64url SHA-256 of the access token (RFC 9449 §4.2).
pub fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref())
}

/// The first well-formed `Bearer` or `DPoP` challenge of a 401 or 403's
/// `WWW-Authenticate` values, as a [`BearerChallenge`] (RFC 9449 §7.1 gives
/// the `DPoP` scheme the same parameters: `error`, `scope`,
/// `resource_metadata`, and `algs`, which this client does not need).
pub fn find_challenge<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<BearerChallenge> {
    let all = www_authenticate::parse_all(values);
    let challenges: Vec<_> = all.iter().flatten().collect();
    if let Some(b) = challenges.iter().find_map(|c| BearerChallenge::from_challenge(c)) {
        return Some(b);
    }
    let c = challenges.iter().find(|c| c.is_scheme(DPOP))?;
    let get = |name: &str| c.param(name).map(str::to_owned);
    let mut b = BearerChallenge::default();
    b.realm = get("realm");
    b.scope = c
        .param("scope")
        .map(|s| s.split(' ').filter(|t| !t.is_empty()).map(str::to_owned).collect());
    b.error = get("error");
    b.error_description = get("error_description");
    b.error_uri = get("error_uri");
    b.resource_metadata = get("resource_metadata");
    Some(b)
}

/// Whether an authorization server's `dpop_signing_alg_values_supported`
/// allows this client's algorithm (absent: it says nothing, so yes).
pub(crate) fn alg_allowed(supported: Option<&[String]>) -> bool {
    supported.is_none_or(|algs| algs.iter().any(|a| a == DPOP_ALG))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
    use serde_json::Value;
    use std::time::{Duration, UNIX_EPOCH};

    fn part(jwt: &str, i: usize) -> Value {
        let seg = jwt.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
    }

    /// A `DPoP` challenge's scope is split at spaces, empty tokens left
    /// out.
    #[test]
    fn a_dpop_challenge_scope() {
        let c = find_challenge([r#"DPoP scope="  read   write ", realm="r""#]).unwrap();
        assert_eq!(c.scope, Some(vec!["read".to_owned(), "write".to_owned()]));
        assert_eq!(c.realm.as_deref(), Some("r"));
    }

    /// Keys are equal by their thumbprint (a clone, or the same key read
    /// back, is equal; another key is not), and `Debug` shows the
    /// thumbprint and never the private key.
    #[test]
    fn equality_and_debug() {
        let key = DpopKey::generate().unwrap();
        let other = DpopKey::generate().unwrap();
        assert_eq!(key, key.clone());
        assert_ne!(key, other);
        let stored = serde_json::to_string(&key).unwrap();
        let read: DpopKey = serde_json::from_str(&stored).unwrap();
        assert_eq!(read, key);
        let debug = format!("{key:?}");
        assert!(debug.starts_with("DpopKey") && debug.contains(key.thumbprint()), "{debug}");
        assert!(!debug.contains(stored.trim_matches('"')), "{debug}");
    }

    #[test]
    fn proofs_are_fresh_signed_and_bound() {
        let key = DpopKey::generate().unwrap();
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        // (method, url, access token, nonce, expected htu)
        type Case<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, &'a str);
        let cases: &[Case<'_>] = &[
            ("POST", "https://as.example/token", None, None, "https://as.example/token"),
            ("POST", "https://mcp.example/mcp?x=1#f", Some("tok"), None, "https://mcp.example/mcp"),
            ("GET", "https://mcp.example/mcp", Some("tok"), Some("n-1"), "https://mcp.example/mcp"),
        ];
        let mut jtis = Vec::new();
        for (method, url, token, nonce, htu) in cases {
            let proof = key.proof(method, url, *token, *nonce, now).unwrap();
            let header = part(&proof, 0);
            assert_eq!(header["typ"], "dpop+jwt");
            assert_eq!(header["alg"], "ES256");
            assert!(header["jwk"].get("d").is_none());
            let claims = part(&proof, 1);
            assert_eq!(claims["htm"], *method);
            assert_eq!(claims["htu"], *htu);
            assert_eq!(claims["iat"], 1_700_000_000);
            assert_eq!(
                claims.get("ath").and_then(Value::as_str),
                token.map(access_token_hash).as_deref()
            );
            assert_eq!(claims.get("nonce").and_then(Value::as_str), *nonce);
            jtis.push(claims["jti"].as_str().unwrap().to_owned());
            // The signature verifies with the embedded public key.
            let jwk = &header["jwk"];
            let mut point = vec![4u8];
            for c in ["x", "y"] {
                point.extend(URL_SAFE_NO_PAD.decode(jwk[c].as_str().unwrap()).unwrap());
            }
            let (input, sig) = proof.rsplit_once('.').unwrap();
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
                .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
                .unwrap();
        }
        jtis.sort();
        jtis.dedup();
        assert_eq!(jtis.len(), cases.len(), "a fresh jti per proof");
    }

    #[test]
    fn thumbprint_and_hash_follow_the_rfc_examples() {
        // RFC 9449 §7.1: ath of the example access token.
        assert_eq!(
            access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
        let key = DpopKey::generate().unwrap();
        let jwk: Value = serde_json::from_str(key.public_jwk()).unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(key.thumbprint().len(), 43);
    }

    #[test]
    fn the_key_survives_the_store_and_debug_hides_it() {
        let key = DpopKey::generate().unwrap();
        let text = serde_json::to_string(&key).unwrap();
        let back: DpopKey = serde_json::from_str(&text).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        assert_eq!(key.clone(), key);
        let shown = format!("{key:?}");
        assert!(!shown.contains(text.trim_matches('"')));
        assert!(serde_json::from_str::<DpopKey>(r#""bm90LWEta2V5""#).is_err());
        assert!(alg_allowed(None));
        assert!(alg_allowed(Some(&["RS256".into(), "ES256".into()])));
        assert!(!alg_allowed(Some(&["RS256".into()])));
    }

    #[test]
    fn challenges_of_both_schemes() {
        let rm =
            r#"resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#;
        // (header values, (error, has resource_metadata))
        type Case<'a> = (&'a [&'a str], Option<(Option<&'a str>, bool)>);
        let cases: &[Case<'_>] = &[
            (&[r#"DPoP algs="ES256""#], Some((None, false))),
            (&[&format!("DPoP {rm}")], Some((None, true))),
            (
                &[&format!(r#"DPoP error="use_dpop_nonce", {rm}"#)],
                Some((Some("use_dpop_nonce"), true)),
            ),
            (
                &[&format!(r#"DPoP error="x", Bearer error="invalid_token", {rm}"#)],
                Some((Some("invalid_token"), true)),
            ),
            (&["Basic realm=\"x\""], None),
        ];
        for (values, expected) in cases {
            let got = find_challenge(values.iter().copied())
                .map(|c| (c.error.clone(), c.resource_metadata.is_some()));
            let expected = expected.map(|(e, rm)| (e.map(str::to_owned), rm));
            assert_eq!(got, expected, "{values:?}");
        }
    }
}
