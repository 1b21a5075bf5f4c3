//! A loopback redirect listener (RFC 8252 §7.3): the authorization server
//! redirects the user's browser to `http://127.0.0.1:<port>/callback`,
//! where this handler reads the callback's parameters.
//!
//! One listener per handler, bound at construction so the redirect URI is
//! known before registration. Each authorization waits for one callback
//! request, bounded by the handler's timeout; other paths (a browser's
//! `/favicon.ico`) get a 404 and do not end the wait. Requests are read
//! with a size cap and a per-connection timeout. The page the browser gets
//! says whether the login went through: a callback with an error, without
//! a code, or with another `state` than the request's gets the failure
//! page (the client refuses it too).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::error::Error;
use crate::fetch::BoxFuture;
use crate::handler::{AuthorizationHandler, AuthorizationRequest, CallbackParams};
use crate::pkce::constant_time_eq;

/// The largest request head read from the browser.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections accepted per authorization before giving up.
const MAX_CONNECTIONS: usize = 32;

const PAGE_OK: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Authorized</title></head>\
<body style=\"font-family:sans-serif\"><h1>Authorization complete</h1><p>You can close this tab and return to the application.</p></body></html>";
const PAGE_ERROR: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Authorization failed</title></head>\
<body style=\"font-family:sans-serif\"><h1>Authorization did not complete</h1><p>You can close this tab; the application shows the reason.</p></body></html>";

type UrlCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// The loopback authorization handler.
pub struct LoopbackHandler {
    listener: TcpListener,
    port: u16,
    /// The redirect URI's host as written (`127.0.0.1`, `localhost`,
    /// `[::1]`) and its path.
    host: String,
    path: String,
    timeout: Duration,
    on_url: Option<UrlCallback>,
}

impl fmt::Debug for LoopbackHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackHandler")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackHandler {
    /// Binds `127.0.0.1` on a random port. `timeout` bounds each
    /// authorization (the user's whole login).
    pub async fn bind(timeout: Duration) -> Result<Self, Error> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| Error::Handler(format!("cannot listen on 127.0.0.1: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::Handler(format!("no local address: {e}")))?
            .port();
        Ok(LoopbackHandler {
            listener,
            port,
            host: "127.0.0.1".into(),
            path: "/callback".into(),
            timeout,
            on_url: None,
        })
    }

    /// Listens for exactly this redirect URI, for an authorization server
    /// that only takes the one registered for a pre-registered client:
    /// `http`, a loopback host (`127.0.0.1`, `[::1]` or `localhost`, which
    /// listens on `127.0.0.1`), a port (`0`: any free one) and a path
    /// (default `/callback`). A port in use is an error that says so.
    pub async fn bind_redirect_uri(redirect_uri: &str, timeout: Duration) -> Result<Self, Error> {
        let bad = |why: &str| Error::Handler(format!("unusable loopback redirect URI: {why}"));
        let uri: http::Uri = redirect_uri.parse().map_err(|_| bad("not a URI"))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("the scheme must be http"));
        }
        let authority = uri.authority().ok_or_else(|| bad("no host"))?;
        let host = authority.host();
        let ip = match host {
            "127.0.0.1" | "localhost" => "127.0.0.1",
            "[::1]" => "::1",
            _ => return Err(bad("the host must be 127.0.0.1, [::1] or localhost")),
        };
        if uri.query().is_some() {
            return Err(bad("a query is not allowed"));
        }
        let wanted = authority.port_u16().unwrap_or(80);
        let listener = TcpListener::bind((ip, wanted))
            .await
            .map_err(|e| Error::Handler(format!("cannot listen on {host}:{wanted}: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::Handler(format!("no local address: {e}")))?
            .port();
        let path = match uri.path() {
            "" | "/" => "/callback".to_owned(),
            p => p.to_owned(),
        };
        Ok(LoopbackHandler { listener, port, host: host.to_owned(), path, timeout, on_url: None })
    }

    /// Sets the host's callback that shows the authorization URL to the
    /// user (prints it to stderr, opens a browser, ...). Without one, the
    /// URL is logged at `info` level.
    pub fn on_url(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_url = Some(Arc::new(f));
        self
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Waits for the callback; `state` is the authorization request's (the
    /// page shown says the login failed when the callback's differs; the
    /// client refuses it).
    async fn wait_callback(&self, state: Option<&str>) -> Result<CallbackParams, Error> {
        for _ in 0..MAX_CONNECTIONS {
            let (stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| Error::Handler(format!("accept failed: {e}")))?;
            let serve = serve_one(stream, &self.path, state);
            match tokio::time::timeout(CONNECTION_TIMEOUT, serve).await {
                Ok(Ok(Some(params))) => return Ok(params),
                Ok(Ok(None)) => continue,
                Ok(Err(e)) => tracing::debug!(error = %e, "loopback connection failed"),
                Err(_) => tracing::debug!("loopback connection timed out"),
            }
        }
        Err(Error::Handler("too many requests on the loopback listener without a callback".into()))
    }
}

/// Reads one request; answers it; returns the callback's parameters when it
/// was for `/callback`.
async fn serve_one(
    mut stream: TcpStream,
    callback: &str,
    state: Option<&str>,
) -> std::io::Result<Option<CallbackParams>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
        if buf.len() > MAX_REQUEST_HEAD {
            respond(&mut stream, "431 Request Header Fields Too Large", "").await?;
            return Ok(None);
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next().unwrap_or("").split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split(['?', '#']).next().unwrap_or("");
    if method != "GET" || path != callback {
        respond(&mut stream, "404 Not Found", "").await?;
        return Ok(None);
    }
    let params = CallbackParams::from_url(target);
    let same_state = match (params.state.as_deref(), state) {
        (Some(got), Some(sent)) => constant_time_eq(got, sent),
        (got, sent) => got == sent,
    };
    let ok = params.code.is_some() && params.error.is_none() && same_state;
    let page = if ok { PAGE_OK } else { PAGE_ERROR };
    respond(&mut stream, "200 OK", page).await?;
    Ok(Some(params))
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

impl AuthorizationHandler for LoopbackHandler {
    fn redirect_uri(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.path)
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<CallbackParams, Error>> {
        Box::pin(async move {
            match &self.on_url {
                Some(f) => f(&request.url),
                None => tracing::info!(url = %request.url, "open this URL to authorize"),
            }
            let state = CallbackParams::from_url(&request.url).state;
            let wait = self.wait_callback(state.as_deref());
            tokio::time::timeout(self.timeout, wait).await.map_err(|_| {
                Error::Handler("timed out waiting for the authorization callback".into())
            })?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn receives_one_callback() {
        let seen = Arc::new(std::sync::Mutex::new(String::new()));
        let seen2 = seen.clone();
        let h = LoopbackHandler::bind(Duration::from_secs(5))
            .await
            .unwrap()
            .on_url(move |u| *seen2.lock().unwrap() = u.to_owned());
        let port = h.port();
        assert_eq!(h.redirect_uri(), format!("http://127.0.0.1:{port}/callback"));
        let req = AuthorizationRequest {
            url: "https://as.example/authorize?x=1&state=s1".into(),
            redirect_uri: h.redirect_uri(),
        };
        let browser = tokio::spawn(async move {
            let favicon = get(port, "/favicon.ico").await;
            let cb = get(port, "/callback?code=c1&state=s1").await;
            (favicon, cb)
        });
        let params = h.authorize(&req).await.unwrap();
        let (favicon, cb) = browser.await.unwrap();
        assert!(favicon.starts_with("HTTP/1.1 404"));
        assert!(cb.starts_with("HTTP/1.1 200"));
        assert!(cb.contains("You can close this tab"));
        assert_eq!(params.code.as_deref(), Some("c1"));
        assert_eq!(params.state.as_deref(), Some("s1"));
        assert_eq!(*seen.lock().unwrap(), "https://as.example/authorize?x=1&state=s1");

        // A callback with another state, or with an error: the page says
        // the login did not complete; the parameters go to the client,
        // which refuses them.
        for target in ["/callback?code=c2&state=forged", "/callback?error=access_denied&state=s1"] {
            let browser = tokio::spawn(async move { get(port, target).await });
            let params = h.authorize(&req).await.unwrap();
            let page = browser.await.unwrap();
            assert!(page.contains("did not complete"), "{target}: {page}");
            assert_eq!(params, CallbackParams::from_url(target));
        }
    }

    #[tokio::test]
    async fn times_out() {
        let h = LoopbackHandler::bind(Duration::from_millis(50)).await.unwrap().on_url(|_| {});
        let req = AuthorizationRequest {
            url: "https://as.example/a".into(),
            redirect_uri: h.redirect_uri(),
        };
        let err = h.authorize(&req).await.unwrap_err();
        assert!(matches!(err, Error::Handler(_)), "{err:?}");
    }

    #[tokio::test]
    async fn a_configured_redirect_uri_is_listened_for_exactly() {
        let h = LoopbackHandler::bind_redirect_uri(
            "http://localhost:0/oauth/done",
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let port = h.port();
        assert_ne!(port, 0);
        assert_eq!(h.redirect_uri(), format!("http://localhost:{port}/oauth/done"));
        let req = AuthorizationRequest::new("https://as.example/a", h.redirect_uri());
        let browser = tokio::spawn(async move {
            let elsewhere = get(port, "/callback?code=c&state=s").await;
            let here = get(port, "/oauth/done?code=c1&state=s").await;
            (elsewhere, here)
        });
        let params = h.authorize(&req).await.unwrap();
        assert_eq!(params.code.as_deref(), Some("c1"));
        let (elsewhere, here) = browser.await.unwrap();
        assert!(elsewhere.starts_with("HTTP/1.1 404"), "{elsewhere}");
        assert!(here.starts_with("HTTP/1.1 200"), "{here}");
        // The same port again while it is held: an error that says so.
        let taken = format!("http://127.0.0.1:{port}/cb");
        let err =
            LoopbackHandler::bind_redirect_uri(&taken, Duration::from_secs(1)).await.unwrap_err();
        assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "{err}");
        for bad in [
            "https://127.0.0.1:1/cb",
            "http://example.com:1/cb",
            "http://127.0.0.1:1/cb?x=1",
            "nope",
        ] {
            let err =
                LoopbackHandler::bind_redirect_uri(bad, Duration::from_secs(1)).await.unwrap_err();
            assert!(err.to_string().contains("unusable loopback redirect URI"), "{bad}: {err}");
        }
    }
}
