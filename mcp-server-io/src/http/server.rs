//! [`serve`]: the HTTP service on a listener, until the returned
//! [`HttpServer`] is shut down or dropped.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::hooks::HttpHooks;
use super::listen::{accept_loop, tls_acceptor};
use super::service::{HttpOptions, HttpService};
use crate::{Error, Handler, Session};

/// How long [`HttpServer::shutdown`] waits for connections to end.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves MCP over HTTP on `listener` (HTTPS with [`HttpOptions::tls`]),
/// each session with a handler `factory` makes, on the current Tokio
/// runtime. A certificate or key rustls refuses is [`Error::Tls`].
///
/// The server runs until [`HttpServer::shutdown`] or until the handle is
/// dropped; either ends every connection and stream and aborts running
/// requests.
pub async fn serve<H: Handler>(
    listener: TcpListener,
    options: HttpOptions,
    factory: impl Fn() -> H + Send + Sync + 'static,
) -> Result<HttpServer<H>, Error> {
    serve_service(listener, HttpService::new(options, factory)).await
}

/// [`serve`] with hooks for a test server.
pub async fn serve_with_hooks<H: Handler>(
    listener: TcpListener,
    options: HttpOptions,
    factory: impl Fn() -> H + Send + Sync + 'static,
    hooks: impl HttpHooks<H>,
) -> Result<HttpServer<H>, Error> {
    serve_service(listener, HttpService::with_hooks(options, factory, hooks)).await
}

/// Runs a service on `listener`.
pub async fn serve_service<H: Handler>(
    listener: TcpListener,
    service: HttpService<H>,
) -> Result<HttpServer<H>, Error> {
    let options = service.options();
    let tls = match &options.tls {
        Some(tls) => Some(tls_acceptor(&tls.cert_chain, &tls.private_key, tls.http2)?),
        None => None,
    };
    let local_addr = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{local_addr}{}", options.path);
    let (stop, stopped) = watch::channel(false);
    let serving = service.clone();
    let task = tokio::spawn(async move {
        let handle = {
            let service = serving.clone();
            // The service as hyper's `Service`, as an accept loop of one's
            // own would use it.
            move |request| hyper::service::Service::call(&service, request)
        };
        accept_loop(listener, tls, handle, stopped).await;
        serving.close_all();
    });
    Ok(HttpServer { local_addr, url, service, stop, task: Some(task) })
}

/// A running HTTP server: its address, its service, and the switch that
/// stops it. Dropping it stops the server too.
#[derive(Debug)]
pub struct HttpServer<H: Handler> {
    local_addr: SocketAddr,
    url: String,
    service: HttpService<H>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl<H: Handler> HttpServer<H> {
    /// The MCP endpoint: `http://ADDR/mcp` (`https://` with TLS; the
    /// legacy transport's SSE URL with [`HttpOptions::legacy_sse`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The service (its sessions, its options).
    pub fn service(&self) -> &HttpService<H> {
        &self.service
    }

    /// How many handshake-era sessions are live.
    pub fn session_count(&self) -> usize {
        self.service.session_count()
    }

    /// The session serving stateless-era requests, once one came.
    pub fn stateless_session(&self) -> Option<Session<H>> {
        self.service.stateless_session()
    }

    /// Stops accepting, ends every connection and stream, aborts running
    /// requests, and waits (at most 5 s) for all of it.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, task).await;
        }
    }
}

impl<H: Handler> Drop for HttpServer<H> {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}
