//! The raw limit: plain hyper POSTs of the same request bytes a client
//! sends, on kept-alive HTTP/1.1 connections, the reply body read whole and
//! not decoded; and [`RawSame`], raw hyper making every exchange our client
//! makes in the handshake era.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use mcp_bench::MESSAGE;
use mcp_bench::era::Era;
use mcp_bench::wire;

use crate::TIMEOUT;

/// Plain hyper: kept-alive HTTP/1.1 connections, one per call in flight,
/// posting the same request bytes a client sends and reading the whole
/// reply body (JSON or SSE) without decoding it.
pub(crate) struct Raw {
    pub(crate) authority: String,
    pub(crate) path: String,
    pub(crate) addr: String,
    /// The handshake era's session; none in the stateless era.
    pub(crate) session: Option<String>,
    era: Era,
    conns: Vec<Option<SendRequest<Full<Bytes>>>>,
    next_id: Arc<AtomicU64>,
}

pub(crate) async fn raw_connection(addr: &str) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream =
        tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("raw: connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("raw: handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(send)
}

/// A POST of `body`. The handshake era: the session and version headers
/// once a session exists. The stateless era: no session; the version,
/// `Mcp-Method` and (`tools/call`) `Mcp-Name` headers on every request.
pub(crate) fn raw_request(
    authority: &str,
    path: &str,
    era: Era,
    session: Option<&str>,
    method: &str,
    body: String,
) -> hyper::Request<Full<Bytes>> {
    let mut builder = hyper::Request::post(path)
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", era.revision());
    }
    if era == Era::Modern {
        builder =
            builder.header("mcp-protocol-version", era.revision()).header("mcp-method", method);
        if method == "tools/call" {
            builder = builder.header("mcp-name", "echo");
        }
    }
    builder.body(Full::new(Bytes::from(body))).expect("a valid request")
}

/// Sends `request` (a POST, or the `DELETE` of [`RawSame`]) and reads the
/// whole body; returns the status, the session header
/// and the body.
pub(crate) async fn raw_post(
    send: &mut SendRequest<Full<Bytes>>,
    request: hyper::Request<Full<Bytes>>,
) -> Result<(u16, Option<String>, Bytes), String> {
    let exchange = async {
        send.ready().await.map_err(|e| format!("raw: {e}"))?;
        let response = send.send_request(request).await.map_err(|e| format!("raw: {e}"))?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body =
            response.into_body().collect().await.map_err(|e| format!("raw: body: {e}"))?.to_bytes();
        Ok((status, session, body))
    };
    tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| "raw: timed out".to_owned())?
}

/// The era's first request, method and body: `initialize` (handshake
/// era) or `server/discover` (stateless era).
pub(crate) fn opening(era: Era) -> (&'static str, String) {
    match era {
        Era::Legacy => ("initialize", wire::initialize_request()),
        Era::Modern => ("server/discover", wire::discover_request()),
    }
}

/// Raw hyper making the exchanges our client makes in the handshake era,
/// in its order and on its connections: `initialize` and
/// `notifications/initialized` on one connection, then the standalone GET
/// in a task of its own that is not waited for (it takes the connection
/// when it runs, and keeps the stream's body open, unread); at
/// [`close`](RawSame::close) that task is given up and the session's
/// `DELETE` goes on the first connection if the GET never took it, on a
/// new one otherwise.
pub(crate) struct RawSame {
    raw: Raw,
    /// The first connection, until the GET's task takes it.
    first: Arc<Mutex<Option<SendRequest<Full<Bytes>>>>>,
    /// The GET's task.
    stream: tokio::task::JoinHandle<()>,
}

/// A bodiless request (`GET`, `DELETE`) of the handshake era's session,
/// its headers in our client's order.
fn session_request(
    raw: &Raw,
    method: http::Method,
    session: &str,
    accept: Option<&'static str>,
) -> hyper::Request<Full<Bytes>> {
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(raw.path.as_str())
        .header(http::header::HOST, raw.authority.as_str())
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", raw.era.revision());
    if let Some(accept) = accept {
        builder = builder.header(http::header::ACCEPT, accept);
    }
    builder.body(Full::new(Bytes::new())).expect("a valid request")
}

impl RawSame {
    /// Past the handshake, the standalone GET started in the background,
    /// as ours is when its `initialize` returns.
    pub(crate) async fn connect(url: &str) -> Result<RawSame, String> {
        let mut raw = Raw::connect(url, Era::Legacy).await?;
        let session = raw.session.as_deref().ok_or("raw: no session")?;
        let request = session_request(&raw, http::Method::GET, session, Some("text/event-stream"));
        let first = Arc::new(Mutex::new(raw.conns[0].take()));
        let taken = first.clone();
        let stream = tokio::spawn(async move {
            let Some(mut send) = taken.lock().expect("not poisoned").take() else { return };
            if send.ready().await.is_err() {
                return;
            }
            if let Ok(response) = send.send_request(request).await
                && response.status() == 200
            {
                // Kept open, unread, until the task is given up.
                let _body = response.into_body();
                std::future::pending::<()>().await;
            }
        });
        Ok(RawSame { raw, first, stream })
    }

    /// Ends the session as ours does at `close`: the GET given up, then a
    /// `DELETE` on the first connection if the GET never took it, on a new
    /// one otherwise; then every connection dropped.
    pub(crate) async fn close(self) -> Result<(), String> {
        self.stream.abort();
        let session = self.raw.session.as_deref().ok_or("raw: no session")?;
        let request = session_request(&self.raw, http::Method::DELETE, session, None);
        let first = self.first.lock().expect("not poisoned").take();
        let mut send = match first {
            Some(send) => send,
            None => raw_connection(&self.raw.addr).await?,
        };
        let (status, _, _) = raw_post(&mut send, request).await?;
        match status {
            200 | 202 | 204 | 404 | 405 => Ok(()),
            _ => Err(format!("raw: DELETE got {status}")),
        }
    }
}

impl Raw {
    /// Past the handshake (`initialize` + `initialized`) or, in the
    /// stateless era, past one `server/discover`, as the clients are.
    pub(crate) async fn connect(url: &str, era: Era) -> Result<Raw, String> {
        let rest = url.strip_prefix("http://").ok_or("raw: not an http:// URL")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (authority, path) =
            (authority.to_owned(), if path.is_empty() { "/" } else { path }.to_owned());
        let addr = authority.clone();
        let mut send = raw_connection(&addr).await?;
        let (method, opening) = opening(era);
        let request = raw_request(&authority, &path, era, None, method, opening);
        let (status, session, body) = raw_post(&mut send, request).await?;
        let session = match era {
            Era::Legacy => {
                let session = session
                    .filter(|_| status == 200)
                    .ok_or(format!("raw: initialize got {status}"))?;
                let request = raw_request(
                    &authority,
                    &path,
                    era,
                    Some(&session),
                    "notifications/initialized",
                    wire::INITIALIZED.to_owned(),
                );
                let (status, _, _) = raw_post(&mut send, request).await?;
                if status != 202 {
                    return Err(format!("raw: notifications/initialized got {status}"));
                }
                Some(session)
            }
            Era::Modern => {
                if status != 200 || !body.windows(17).any(|w| w == b"supportedVersions") {
                    return Err(format!(
                        "raw: server/discover got {status}: {}",
                        String::from_utf8_lossy(&body)
                    ));
                }
                None
            }
        };
        Ok(Raw {
            authority,
            path,
            addr,
            session,
            era,
            conns: vec![Some(send)],
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    /// At least `n` connections, for `n` callers at once.
    pub(crate) async fn ensure_connections(&mut self, n: usize) -> Result<(), String> {
        while self.conns.len() < n {
            let conn = raw_connection(&self.addr).await?;
            self.conns.push(Some(conn));
        }
        Ok(())
    }

    /// Lends connection `conn` to a caller; [`Raw::give_back`] returns it.
    pub(crate) fn caller(&mut self, conn: usize) -> RawCaller {
        RawCaller {
            conn,
            addr: self.addr.clone(),
            send: self.conns[conn].take().expect("the connection is not lent out"),
            authority: self.authority.clone(),
            path: self.path.clone(),
            session: self.session.clone(),
            era: self.era,
            meta: self.era.raw_meta(),
            next_id: self.next_id.clone(),
        }
    }

    /// Takes back the connection a caller was lent.
    pub(crate) fn give_back(&mut self, caller: RawCaller) {
        self.conns[caller.conn] = Some(caller.send);
    }
}

/// One connection of [`Raw`], lent to one task calling in a loop.
pub(crate) struct RawCaller {
    conn: usize,
    addr: String,
    send: SendRequest<Full<Bytes>>,
    authority: String,
    path: String,
    session: Option<String>,
    era: Era,
    /// The `_meta` member of the stateless era's requests.
    meta: String,
    next_id: Arc<AtomicU64>,
}

impl RawCaller {
    /// One echo call; a failure ends the benchmark.
    pub(crate) async fn call(&mut self) {
        // The server closes a connection left idle for long (while the other
        // clients take their turn): open a new one, as a pool would.
        if self.send.is_closed() {
            match raw_connection(&self.addr).await {
                Ok(send) => self.send = send,
                Err(e) => panic!("{e}"),
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = raw_request(
            &self.authority,
            &self.path,
            self.era,
            self.session.as_deref(),
            "tools/call",
            wire::call_request(id, &self.meta),
        );
        match raw_post(&mut self.send, request).await {
            Ok((200, _, body)) if body.len() > MESSAGE.len() => {}
            Ok((status, _, body)) => {
                panic!("raw: echo got {status}: {}", String::from_utf8_lossy(&body))
            }
            Err(e) => panic!("{e}"),
        }
    }
}
