//! `private_key_jwt` client authentication (RFC 7523 §2.2, RFC 7521): a
//! short-lived JWT signed with the client's key, ES256 or RS256, with
//! `ring` doing the signing.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair,
};

use crate::error::Error;
use crate::pkce::random_b64;

/// The `client_assertion_type` of a JWT client assertion.
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Lifetime of an assertion, in seconds.
const ASSERTION_LIFETIME: u64 = 300;

/// The signature algorithms supported for client assertions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// ECDSA P-256 with SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl JwtAlgorithm {
    /// The JOSE name (`ES256`, `RS256`).
    pub fn as_str(self) -> &'static str {
        match self {
            JwtAlgorithm::Es256 => "ES256",
            JwtAlgorithm::Rs256 => "RS256",
        }
    }

    /// Parses a JOSE name (case-sensitive, as JOSE is).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(JwtAlgorithm::Es256),
            "RS256" => Some(JwtAlgorithm::Rs256),
            _ => None,
        }
    }
}

enum Key {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// A client's signing key for `private_key_jwt`. `Debug` shows only the
/// algorithm.
pub struct PrivateKeyJwt {
    alg: JwtAlgorithm,
    key: Key,
    kid: Option<String>,
}

impl fmt::Debug for PrivateKeyJwt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKeyJwt")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

fn pem_body(pem: &str, label: &str) -> Option<Result<Vec<u8>, Error>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin)? + begin.len();
    let stop = start + pem[start..].find(&end)?;
    let b64: String = pem[start..stop].chars().filter(|c| !c.is_ascii_whitespace()).collect();
    Some(
        STANDARD
            .decode(b64)
            .map_err(|_| Error::InvalidCredentials("private key PEM is not valid base64")),
    )
}

impl PrivateKeyJwt {
    /// A key from PEM: `PRIVATE KEY` (PKCS#8, EC P-256 or RSA) or
    /// `RSA PRIVATE KEY` (PKCS#1). The key must fit `alg`.
    pub fn from_pem(pem: &str, alg: JwtAlgorithm) -> Result<Self, Error> {
        if let Some(der) = pem_body(pem, "PRIVATE KEY") {
            return Self::from_pkcs8_der(&der?, alg);
        }
        if let Some(der) = pem_body(pem, "RSA PRIVATE KEY") {
            let der = der?;
            if alg != JwtAlgorithm::Rs256 {
                return Err(Error::InvalidCredentials("an RSA key cannot sign ES256"));
            }
            let key = RsaKeyPair::from_der(&der)
                .map_err(|_| Error::InvalidCredentials("unreadable RSA key"))?;
            return Ok(PrivateKeyJwt { alg, key: Key::Rsa(key), kid: None });
        }
        if pem.contains("-----BEGIN EC PRIVATE KEY-----") {
            return Err(Error::InvalidCredentials(
                "SEC1 `EC PRIVATE KEY` PEM is not supported; convert it to PKCS#8 (`openssl pkcs8 -topk8 -nocrypt`)",
            ));
        }
        Err(Error::InvalidCredentials("no `PRIVATE KEY` PEM block found"))
    }

    /// A key from PKCS#8 DER.
    pub fn from_pkcs8_der(der: &[u8], alg: JwtAlgorithm) -> Result<Self, Error> {
        let key = match alg {
            JwtAlgorithm::Es256 => Key::Ec(
                EcdsaKeyPair::from_pkcs8(
                    &ECDSA_P256_SHA256_FIXED_SIGNING,
                    der,
                    &SystemRandom::new(),
                )
                .map_err(|_| Error::InvalidCredentials("not a PKCS#8 EC P-256 key"))?,
            ),
            JwtAlgorithm::Rs256 => Key::Rsa(
                RsaKeyPair::from_pkcs8(der)
                    .map_err(|_| Error::InvalidCredentials("not a PKCS#8 RSA key"))?,
            ),
        };
        Ok(PrivateKeyJwt { alg, key, kid: None })
    }

    /// Sets the `kid` header (when the server holds several keys).
    pub fn with_key_id(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm.
    pub fn algorithm(&self) -> JwtAlgorithm {
        self.alg
    }

    /// A signed client assertion: `iss` and `sub` the client id, `aud` the
    /// authorization server's issuer, `iat` now, `exp` five minutes later,
    /// a random `jti`.
    pub fn assertion(
        &self,
        client_id: &str,
        audience: &str,
        now_unix: u64,
    ) -> Result<String, Error> {
        let mut header = serde_json::json!({ "alg": self.alg.as_str(), "typ": "JWT" });
        if let Some(kid) = &self.kid {
            header["kid"] = serde_json::Value::String(kid.clone());
        }
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now_unix,
            "exp": now_unix + ASSERTION_LIFETIME,
            "jti": random_b64(16)?,
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let sig = match &self.key {
            Key::Ec(k) => k
                .sign(&rng, signing_input.as_bytes())
                .map_err(|_| Error::InvalidCredentials("signing failed"))?
                .as_ref()
                .to_vec(),
            Key::Rsa(k) => {
                let mut sig = vec![0u8; k.public().modulus_len()];
                k.sign(&RSA_PKCS1_SHA256, &rng, signing_input.as_bytes(), &mut sig)
                    .map_err(|_| Error::InvalidCredentials("signing failed"))?;
                sig
            }
        };
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, KeyPair as _, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey,
    };

    /// A 2048-bit RSA test key (PKCS#8), generated for these tests only.
    const RSA_PKCS8_PEM: &str = include_str!("../tests/data/rsa2048.pem");

    fn decode_part(s: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(s).unwrap()).unwrap()
    }

    fn es256_pem() -> (String, Vec<u8>) {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng).unwrap();
        let b64 = STANDARD.encode(doc.as_ref());
        let lines: Vec<&str> =
            b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        );
        (pem, pair.public_key().as_ref().to_vec())
    }

    #[test]
    fn es256_assertion_verifies() {
        let (pem, public) = es256_pem();
        let key = PrivateKeyJwt::from_pem(&pem, JwtAlgorithm::Es256).unwrap().with_key_id("k1");
        let jwt = key
            .assertion("conformance-test-client", "http://localhost:1234", 1_700_000_000)
            .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = decode_part(parts[0]);
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], "k1");
        let claims = decode_part(parts[1]);
        assert_eq!(claims["iss"], "conformance-test-client");
        assert_eq!(claims["sub"], "conformance-test-client");
        assert_eq!(claims["aud"], "http://localhost:1234");
        assert_eq!(claims["iat"], 1_700_000_000u64);
        assert_eq!(claims["exp"], 1_700_000_300u64);
        assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        assert_eq!(sig.len(), 64);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        assert!(!format!("{key:?}").contains("PRIVATE"));
    }

    #[test]
    fn rs256_assertion_verifies() {
        let key = PrivateKeyJwt::from_pem(RSA_PKCS8_PEM, JwtAlgorithm::Rs256).unwrap();
        let Key::Rsa(pair) = &key.key else { panic!("expected an RSA key") };
        let public = pair.public().as_ref().to_vec();
        let jwt = key.assertion("c", "https://as.example", 1).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(decode_part(parts[0])["alg"], "RS256");
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
    }

    #[test]
    fn key_refusals() {
        let (pem, _) = es256_pem();
        let cases: &[(&str, JwtAlgorithm)] = &[
            (&pem, JwtAlgorithm::Rs256),
            (RSA_PKCS8_PEM, JwtAlgorithm::Es256),
            (
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----",
                JwtAlgorithm::Es256,
            ),
            ("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----", JwtAlgorithm::Es256),
            ("no pem here", JwtAlgorithm::Es256),
        ];
        for (pem, alg) in cases {
            let err = PrivateKeyJwt::from_pem(pem, *alg).unwrap_err();
            assert!(matches!(err, Error::InvalidCredentials(_)), "{err:?}");
        }
        assert_eq!(JwtAlgorithm::from_name("es256"), None);
        for alg in [JwtAlgorithm::Es256, JwtAlgorithm::Rs256] {
            assert_eq!(JwtAlgorithm::from_name(alg.as_str()), Some(alg));
        }
    }

    /// The same RSA key as PKCS#1 (`RSA PRIVATE KEY`): it signs RS256 and
    /// is refused for ES256; `Debug` names the algorithm and the key id,
    /// never the key.
    #[test]
    fn a_pkcs1_rsa_key_and_debug() {
        const RSA_PKCS1_PEM: &str = include_str!("../tests/data/rsa2048-pkcs1.pem");
        let key = PrivateKeyJwt::from_pem(RSA_PKCS1_PEM, JwtAlgorithm::Rs256).unwrap();
        assert!(matches!(key.key, Key::Rsa(_)));
        let err = PrivateKeyJwt::from_pem(RSA_PKCS1_PEM, JwtAlgorithm::Es256).unwrap_err();
        assert!(err.to_string().contains("cannot sign ES256"), "{err}");
        let key = key.with_key_id("key-1");
        let debug = format!("{key:?}");
        assert!(debug.contains("PrivateKeyJwt") && debug.contains("Rs256"), "{debug}");
        assert!(debug.contains("key-1") && !debug.contains("MII"), "{debug}");
    }
}
