//! The accept loop: HTTP/1.1 on each accepted TCP connection, or HTTPS
//! (HTTP/2 when the client picks `h2` by ALPN), until told to stop.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::Error;

/// How long a client may take to send request headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client may take to finish the TLS handshake.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of request headers (the request line included; HTTP/2:
/// the decoded header list); larger ones get 431 (HTTP/1.1) or a stream
/// error (HTTP/2).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The rustls server side for a certificate chain and a private key (DER):
/// the `ring` provider, ALPN `h2` (when `http2`) and `http/1.1`. A chain or
/// key rustls refuses is [`Error::Tls`].
pub fn tls_acceptor(chain: &[Vec<u8>], key: &[u8], http2: bool) -> Result<TlsAcceptor, Error> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = chain.iter().map(|der| CertificateDer::from(der.clone())).collect();
    let key = PrivateKeyDer::try_from(key.to_vec()).map_err(|e| Error::Tls(e.to_owned()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = |e: rustls::Error| Error::Tls(e.to_string());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(tls)?;
    config.alpn_protocols =
        if http2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves connections from `listener` with `handle` until `stop` changes
/// (or its sender is dropped), then closes every connection and returns.
///
/// Each connection has `TCP_NODELAY` (small SSE writes would otherwise wait
/// for the peer's delayed ACK), a deadline on request headers
/// ([`HEADER_TIMEOUT`]) and a cap on their size ([`MAX_HEADER_BYTES`]);
/// with `tls`, a deadline on the handshake. A failed accept (out of file
/// descriptors) backs off 20 ms.
pub async fn accept_loop<F, Fut, B>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    handle: F,
    mut stop: watch::Receiver<bool>,
) where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<B>, io::Error>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(serve_connection(stream, tls.clone(), handle.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

async fn serve_connection<F, Fut, B>(stream: TcpStream, tls: Option<TlsAcceptor>, handle: F)
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<B>, io::Error>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(tls) = tls else {
        return serve_http1(stream, handle).await;
    };
    // A failed handshake (the client refused the certificate) or one that
    // never ends: nothing to serve.
    let Ok(Ok(stream)) = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream)).await
    else {
        return;
    };
    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        let mut builder = http2::Builder::new(TokioExecutor::new());
        builder.timer(TokioTimer::new()).max_header_list_size(MAX_HEADER_BYTES as u32);
        let _ = builder.serve_connection(TokioIo::new(stream), service_fn(handle)).await;
    } else {
        serve_http1(stream, handle).await;
    }
}

async fn serve_http1<I, F, Fut, B>(io: I, handle: F)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<B>, io::Error>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES);
    // Errors are the client's business (a reset, a cut stream): nothing to do.
    let _ = builder.serve_connection(TokioIo::new(io), service_fn(handle)).await;
}
