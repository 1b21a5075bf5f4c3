//! Workload identity (SEP-1933): a machine client with no secret of its
//! own presents an assertion its platform issued (a Kubernetes service
//! account token, a cloud workload identity token, a CI job's OIDC token)
//! as an RFC 7523 JWT bearer grant at the MCP server's authorization
//! server.
//!
//! The host supplies the assertion; this crate never makes one. It is
//! asked for at every token request, so an assertion that the platform
//! rotates (a projected token file rewritten in place, an environment
//! variable set anew) is used as soon as it changes. A refused grant is
//! reported, never retried with the same assertion or with another grant.

use std::fmt;
use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Error;
use crate::fetch::BoxFuture;
use crate::token::ClientSecret;

/// The largest assertion read from a file or the environment.
pub const MAX_ASSERTION: usize = 64 * 1024;

/// Hands out the workload's current assertion (a JWT issued by a party the
/// authorization server trusts, with the authorization server as audience).
/// Must be bounded in time.
pub trait AssertionProvider: Send + Sync + fmt::Debug {
    /// The assertion to present now.
    fn assertion(&self) -> BoxFuture<'_, Result<ClientSecret, Error>>;
}

/// Where the workload's assertion comes from. `Debug` never shows an
/// assertion.
#[derive(Clone)]
#[non_exhaustive]
pub enum AssertionSource {
    /// A file the platform keeps current (read again for every token
    /// request; surrounding whitespace trimmed; at most [`MAX_ASSERTION`]
    /// bytes).
    File(PathBuf),
    /// An environment variable (read again for every token request).
    Env(String),
    /// A fixed value (tests, or a host that refreshes the whole client).
    Value(ClientSecret),
    /// The host's own provider.
    Provider(Arc<dyn AssertionProvider>),
}

impl fmt::Debug for AssertionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssertionSource::File(path) => f.debug_tuple("File").field(path).finish(),
            AssertionSource::Env(name) => f.debug_tuple("Env").field(name).finish(),
            AssertionSource::Value(_) => f.write_str("Value(<redacted>)"),
            AssertionSource::Provider(p) => f.debug_tuple("Provider").field(p).finish(),
        }
    }
}

struct FnProvider<F>(F);

impl<F> fmt::Debug for FnProvider<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnProvider")
    }
}

impl<F> AssertionProvider for FnProvider<F>
where
    F: Fn() -> Result<String, String> + Send + Sync,
{
    fn assertion(&self) -> BoxFuture<'_, Result<ClientSecret, Error>> {
        let out = (self.0)().map_err(Error::Assertion).and_then(|a| checked(a, "the callback"));
        Box::pin(async move { out })
    }
}

impl AssertionSource {
    /// A source that calls `f` for every token request. Its error is
    /// shown to the user: it must not contain the assertion.
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn() -> Result<String, String> + Send + Sync + 'static,
    {
        AssertionSource::Provider(Arc::new(FnProvider(f)))
    }

    /// The current assertion.
    pub(crate) async fn current(&self) -> Result<ClientSecret, Error> {
        match self {
            AssertionSource::File(path) => read_file(path),
            AssertionSource::Env(name) => match std::env::var(name) {
                Ok(v) => checked(v, "the environment variable"),
                Err(_) => Err(Error::Assertion(format!(
                    "the environment variable {name} is not set (or not UTF-8)"
                ))),
            },
            AssertionSource::Value(v) => checked(v.secret().to_owned(), "the configured value"),
            AssertionSource::Provider(p) => p.assertion().await,
        }
    }
}

fn read_file(path: &PathBuf) -> Result<ClientSecret, Error> {
    let fail = |e: std::io::Error| Error::Assertion(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(fail)?;
    let mut buf = Vec::new();
    file.take(MAX_ASSERTION as u64 + 1).read_to_end(&mut buf).map_err(fail)?;
    if buf.len() > MAX_ASSERTION {
        return Err(Error::Assertion(format!(
            "{} is larger than {MAX_ASSERTION} bytes",
            path.display()
        )));
    }
    let text = String::from_utf8(buf)
        .map_err(|_| Error::Assertion(format!("{} is not UTF-8", path.display())))?;
    checked(text, "the file")
}

/// Trims the assertion and refuses an empty, oversized or multi-line one
/// (naming where it came from, never the value).
fn checked(raw: String, from: &str) -> Result<ClientSecret, Error> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(Error::Assertion(format!("{from} holds no assertion")));
    }
    if value.len() > MAX_ASSERTION {
        return Err(Error::Assertion(format!("{from} holds more than {MAX_ASSERTION} bytes")));
    }
    if value.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err(Error::Assertion(format!(
            "{from} holds whitespace or control characters inside the assertion"
        )));
    }
    Ok(ClientSecret::new(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sources_are_read_anew_and_never_shown() {
        let dir = std::env::temp_dir().join(format!("mcp-auth-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "eyJ.first.sig\n").unwrap();
        let file = AssertionSource::File(path.clone());
        assert_eq!(file.current().await.unwrap().secret(), "eyJ.first.sig");
        std::fs::write(&path, "eyJ.second.sig").unwrap();
        assert_eq!(file.current().await.unwrap().secret(), "eyJ.second.sig");
        assert!(!format!("{file:?}").contains("eyJ"));

        let cases: Vec<(AssertionSource, bool)> = vec![
            (AssertionSource::File(dir.join("missing")), false),
            (AssertionSource::Env("MCP_AUTH_TEST_SURELY_UNSET_VARIABLE".into()), false),
            (AssertionSource::Value(ClientSecret::new("  ")), false),
            (AssertionSource::Value(ClientSecret::new("eyJ.a b.sig")), false),
            (AssertionSource::Value(ClientSecret::new("eyJ.ok.sig")), true),
            (AssertionSource::from_fn(|| Ok("eyJ.cb.sig".into())), true),
            (AssertionSource::from_fn(|| Err("the agent is down".into())), false),
        ];
        for (source, ok) in cases {
            let r = source.current().await;
            assert_eq!(r.is_ok(), ok, "{source:?}: {r:?}");
            assert!(!format!("{source:?}").contains("eyJ"));
            if let Err(e) = r {
                assert!(!e.to_string().contains("eyJ"), "{e}");
            }
        }
        std::fs::write(&path, vec![b'a'; MAX_ASSERTION + 1]).unwrap();
        assert!(file.current().await.is_err());
        // Exactly the bound is taken, from a file and as a value.
        assert_eq!(MAX_ASSERTION, 65_536);
        std::fs::write(&path, vec![b'a'; MAX_ASSERTION]).unwrap();
        assert_eq!(file.current().await.unwrap().secret().len(), MAX_ASSERTION);
        let at = |n: usize| AssertionSource::Value(ClientSecret::new("a".repeat(n)));
        assert!(at(MAX_ASSERTION).current().await.is_ok());
        assert!(at(MAX_ASSERTION + 1).current().await.is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `Debug` names the kind and where it reads from, never a value.
    #[test]
    fn debug_names_the_source() {
        let cases = [
            (AssertionSource::File("/var/run/token".into()), "File(\"/var/run/token\")"),
            (AssertionSource::Env("WIF_TOKEN".into()), "Env(\"WIF_TOKEN\")"),
            (AssertionSource::Value(ClientSecret::new("eyJ.x.y")), "Value(<redacted>)"),
            (AssertionSource::from_fn(|| Ok("eyJ.x.y".into())), "Provider(FnProvider)"),
        ];
        for (source, expected) in cases {
            assert_eq!(format!("{source:?}"), expected);
        }
    }
}
