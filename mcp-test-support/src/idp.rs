//! A real OpenID provider as a test peer: `oidc-provider` from npm (a
//! certified implementation nobody here wrote), run by `xtask/idp/provider.mjs`
//! on a free loopback port ([`Provider`]), and a browser that plays the
//! user's part of its authorization flow ([`Browser`]); also
//! `oauth2-mock-server` (`xtask/idp/mock.mjs`, [`Provider::start_mock`]).
//!
//! `cargo xtask idp` installs the pinned servers and Node.js 22 and runs
//! the tests with `MCP_IDP_NODE` (the node binary), `MCP_IDP_JS` and
//! `MCP_IDP_MOCK_JS` (the scripts) set.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{COOKIE, LOCATION, SET_COOKIE};
use http::{Request, Uri};
use http_body_util::{BodyExt as _, Empty, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How long the provider may take to start listening.
const STARTUP: Duration = Duration::from_secs(30);
/// The most redirects one authorization may take.
const MAX_REDIRECTS: usize = 10;
/// How long one browser request may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);

/// The provider's process; killed when dropped (a failing test too).
#[derive(Debug)]
pub struct Provider {
    child: Child,
    issuer: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// Starts the provider with these options (the JSON object
    /// `provider.mjs` documents) and waits until it listens.
    ///
    /// # Panics
    /// When `MCP_IDP_NODE` or `MCP_IDP_JS` is unset, or the provider does
    /// not start in time: a test cannot go on without it.
    pub fn start(options: &Value) -> Provider {
        Provider::start_script("MCP_IDP_JS", options)
    }

    /// Starts `oauth2-mock-server` instead (`xtask/idp/mock.mjs`: client
    /// credentials and JWT-bearer grants, RS256 tokens whose `aud` is the
    /// request's `resource`).
    ///
    /// # Panics
    /// As [`start`](Self::start), with `MCP_IDP_MOCK_JS`.
    pub fn start_mock() -> Provider {
        Provider::start_script("MCP_IDP_MOCK_JS", &Value::Null)
    }

    fn start_script(script: &str, options: &Value) -> Provider {
        let node = std::env::var("MCP_IDP_NODE")
            .expect("MCP_IDP_NODE must name Node.js 22: run `cargo xtask idp`");
        let js = std::env::var(script)
            .unwrap_or_else(|_| panic!("{script} must point at its script: run `cargo xtask idp`"));
        let mut child = Command::new(node)
            .arg(js)
            .env("IDP_OPTIONS", options.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            // Drained to the end: the provider's notices would otherwise
            // meet a closed pipe, which ends it.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = rx.recv_timeout(STARTUP).unwrap_or_default();
        let Some(issuer) = line.trim().strip_prefix("listening ").map(str::to_owned) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the provider did not start: {line:?}");
        };
        Provider { child, issuer }
    }

    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Where its JSON Web Key Set is served.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    /// Its token endpoint.
    pub fn token_endpoint(&self) -> String {
        format!("{}/token", self.issuer)
    }
}

/// A browser for one login: follows the provider's redirects with its
/// cookies (the interaction and session), and delivers the final redirect
/// to the client's `redirect_uri`.
#[derive(Debug)]
pub struct Browser {
    client: Client<HttpConnector, Empty<Bytes>>,
    /// Cookies by name, of the provider's origin only.
    cookies: Mutex<HashMap<String, String>>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser::new()
    }
}

impl Browser {
    /// A browser with no cookies.
    pub fn new() -> Browser {
        Browser {
            client: Client::builder(TokioExecutor::new()).build_http(),
            cookies: Mutex::new(HashMap::new()),
        }
    }

    /// Opens `authorize_url`, follows redirects on its origin, and opens
    /// the first URL on another origin (the client's redirect URI with the
    /// code) without cookies. Returns that URL and the status it answered;
    /// `Err` names a page of the provider that was no redirect (its status
    /// and body: the provider's error page says what it refused).
    pub async fn authorize(&self, authorize_url: &str) -> Result<(String, u16), String> {
        let start: Uri = authorize_url.parse().map_err(|e| format!("{authorize_url}: {e}"))?;
        let origin = start.authority().cloned().ok_or("no authority")?;
        let mut url = start;
        for _ in 0..MAX_REDIRECTS {
            let mut request = Request::get(url.clone());
            let cookie = self.cookie_header();
            if !cookie.is_empty() {
                request = request.header(COOKIE, cookie);
            }
            let request = request.body(Empty::new()).map_err(|e| e.to_string())?;
            let response = self.send(request).await?;
            for value in response.headers().get_all(SET_COOKIE) {
                self.keep_cookie(value.to_str().unwrap_or_default());
            }
            let status = response.status();
            let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
            let Some(location) = location.filter(|_| status.is_redirection()) else {
                let body = response.into_body().collect().await.map(|b| b.to_bytes());
                let body = String::from_utf8_lossy(&body.unwrap_or_default()).into_owned();
                return Err(format!("{status} at {}: {body}", url.path()));
            };
            let next = resolve(&url, location)?;
            if next.authority() != Some(&origin) {
                let request =
                    Request::get(next.clone()).body(Empty::new()).map_err(|e| e.to_string())?;
                let response = self.send(request).await?;
                return Ok((next.to_string(), response.status().as_u16()));
            }
            url = next;
        }
        Err(format!("more than {MAX_REDIRECTS} redirects"))
    }

    async fn send(
        &self,
        request: Request<Empty<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        tokio::time::timeout(REQUEST_LIMIT, self.client.request(request))
            .await
            .map_err(|_| "the request timed out".to_owned())?
            .map_err(|e| format!("the request failed: {e}"))
    }

    fn cookie_header(&self) -> String {
        let jar = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    /// Keeps a `Set-Cookie` (name and value; an expired one is dropped).
    fn keep_cookie(&self, set_cookie: &str) {
        let pair = set_cookie.split(';').next().unwrap_or_default();
        let Some((name, value)) = pair.split_once('=') else { return };
        let mut jar = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        let expired = set_cookie.to_ascii_lowercase().contains("expires=thu, 01 jan 1970");
        if expired || value.is_empty() {
            jar.remove(name.trim());
        } else {
            jar.insert(name.trim().to_owned(), value.trim().to_owned());
        }
    }
}

/// POSTs a form to `url` (a token or revocation endpoint, as a client
/// other than the one under test would); returns the status and the body.
pub async fn post_form(url: &str, form: &[(&str, &str)]) -> Result<(u16, Value), String> {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    let body = form
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(k, NON_ALPHANUMERIC),
                utf8_percent_encode(v, NON_ALPHANUMERIC)
            )
        })
        .collect::<Vec<_>>()
        .join("&");
    let request = Request::post(url)
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let response = tokio::time::timeout(REQUEST_LIMIT, client.request(request))
        .await
        .map_err(|_| "the request timed out".to_owned())?
        .map_err(|e| format!("the request failed: {e}"))?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// A `Location` (absolute, or a path on `base`'s origin) as a URI.
fn resolve(base: &Uri, location: &str) -> Result<Uri, String> {
    if location.starts_with('/') {
        let scheme = base.scheme_str().unwrap_or("http");
        let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
        format!("{scheme}://{authority}{location}").parse().map_err(|e| format!("{location}: {e}"))
    } else {
        location.parse().map_err(|e| format!("{location}: {e}"))
    }
}
