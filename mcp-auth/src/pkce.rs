//! PKCE (RFC 7636, S256 only) and the random values of a flow.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

use crate::error::Error;

/// `n` random bytes from the operating system, base64url without padding.
pub(crate) fn random_b64(n: usize) -> Result<String, Error> {
    let mut buf = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| Error::Handler("the system random source failed".into()))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// The S256 challenge of a verifier: `BASE64URL(SHA256(verifier))`.
pub fn s256_challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// A PKCE pair: a 43-character verifier (32 random bytes) and its S256
/// challenge. `Debug` hides the verifier.
#[derive(Clone)]
pub struct Pkce {
    verifier: String,
    challenge: String,
}

impl Pkce {
    /// A fresh pair from the system random source.
    pub fn generate() -> Result<Self, Error> {
        Ok(Self::from_verifier(random_b64(32)?))
    }

    /// The pair for a given verifier (tests; RFC 7636 appendix B).
    pub fn from_verifier(verifier: String) -> Self {
        let challenge = s256_challenge(&verifier);
        Pkce { verifier, challenge }
    }

    /// The `code_verifier` sent to the token endpoint.
    pub fn verifier(&self) -> &str {
        &self.verifier
    }

    /// The `code_challenge` sent with the authorization request.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }

    /// Always `S256`.
    pub fn method(&self) -> &'static str {
        "S256"
    }
}

impl fmt::Debug for Pkce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pkce").field("challenge", &self.challenge).finish_non_exhaustive()
    }
}

/// Whether metadata's `code_challenge_methods_supported` allows S256.
/// Absent means PKCE is not supported (the MCP spec: refuse to proceed).
pub fn supports_s256(methods: Option<&[String]>) -> bool {
    methods.is_some_and(|m| m.iter().any(|x| x == "S256"))
}

/// Compares two strings in time independent of where they differ.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(p.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert_eq!(p.method(), "S256");
        let shown = format!("{p:?}");
        assert!(!shown.contains(p.verifier()));
        assert!(shown.starts_with("Pkce") && shown.contains(p.challenge()), "{shown}");
    }

    #[test]
    fn generated_verifiers_are_valid_and_distinct() {
        let a = Pkce::generate().unwrap();
        let b = Pkce::generate().unwrap();
        assert_eq!(a.verifier().len(), 43);
        assert!(a.verifier().bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.verifier(), b.verifier());
        assert_eq!(a.challenge(), s256_challenge(a.verifier()));
    }

    #[test]
    fn s256_support() {
        let cases: &[(Option<&[&str]>, bool)] = &[
            (None, false),
            (Some(&[]), false),
            (Some(&["plain"]), false),
            (Some(&["plain", "S256"]), true),
            (Some(&["s256"]), false),
        ];
        for (methods, expected) in cases {
            let owned: Option<Vec<String>> =
                methods.map(|m| m.iter().map(|s| s.to_string()).collect());
            assert_eq!(supports_s256(owned.as_deref()), *expected, "{methods:?}");
        }
    }

    #[test]
    fn constant_time() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "ab"));
        // Differences that cancel out under XOR-folding must not pass.
        assert!(!constant_time_eq("ab", "ba"));
        assert!(!constant_time_eq("aabb", "bbaa"));
    }
}
