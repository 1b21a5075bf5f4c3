//! `mcp-auth`'s door to the network: the [`HttpFetch`] its OAuth client
//! talks through, over a pool of this crate's.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use mcp_auth::{BoxFuture, FetchError, HttpFetch, MAX_BODY};

use crate::conn::{self, Pool, ReadError};
use crate::error::chain;
use crate::guard::Guard;

/// `mcp-auth`'s door to the network: a pool of its own whose resolver is
/// guarded (the client's pool, when it goes through a proxy), nothing added
/// to the request, no redirect followed, the body capped, the exchange
/// bounded.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) pool: Pool,
    pub(crate) timeout: Duration,
    /// The SSRF guard (`None`: [`AddressPolicy::AllowAll`](crate::AddressPolicy::AllowAll)).
    pub(crate) guard: Option<Guard>,
}

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetcher").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Fetcher {
    async fn exchange(
        &self,
        req: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, FetchError> {
        if let Some(guard) = &self.guard {
            guard.check_uri(req.uri()).await.map_err(|r| {
                tracing::warn!(address = %r.address, class = %r.class, "an OAuth request was refused by the SSRF guard");
                FetchError::Refused { address: r.address, class: r.class }
            })?;
        }
        let (parts, body) = req.into_parts();
        let req = http::Request::from_parts(parts, Full::new(body));
        let resp = self.pool.request(req).await.map_err(|e| match crate::guard::refusal(&e) {
            Some(r) => {
                tracing::warn!(address = %r.address, class = %r.class, "an OAuth request was refused by the SSRF guard: its host resolves to a forbidden address");
                FetchError::Refused { address: r.address, class: r.class }
            }
            None => FetchError::Connect(chain(&e)),
        })?;
        let (parts, body) = resp.into_parts();
        let bytes = conn::read_limited(body, MAX_BODY).await.map_err(|e| match e {
            ReadError::TooLarge => FetchError::BodyTooLarge,
            ReadError::Io(reason) => FetchError::Other(reason),
        })?;
        Ok(http::Response::from_parts(parts, bytes))
    }
}

impl HttpFetch for Fetcher {
    fn fetch(
        &self,
        req: http::Request<Bytes>,
    ) -> BoxFuture<'_, Result<http::Response<Bytes>, FetchError>> {
        Box::pin(async move {
            match tokio::time::timeout(self.timeout, self.exchange(req)).await {
                Ok(r) => r,
                Err(_) => Err(FetchError::Timeout),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::AddressPolicy;
    use crate::options::HttpOptions;
    use mcp_auth::AddressClass;

    /// A name that resolves to loopback, for a server that is not on
    /// loopback: refused in the resolver, and no connection is made.
    #[tokio::test]
    async fn a_name_that_resolves_to_a_refused_address_is_never_connected_to() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let endpoint: http::Uri = "https://203.0.113.9/mcp".parse().unwrap();
        let guard = Guard::new(AddressPolicy::SameNetwork, &endpoint, false);
        let pool = conn::build_pool(&HttpOptions::new("t"), None, guard.as_ref()).unwrap();
        let fetcher = Fetcher { pool, timeout: Duration::from_secs(5), guard };
        let req = http::Request::get(format!("http://localhost:{port}/.well-known/x"))
            .body(Bytes::new())
            .unwrap();
        let err = fetcher.fetch(req).await.expect_err("refused");
        assert!(
            matches!(err, FetchError::Refused { class: AddressClass::Loopback, address } if address.is_loopback()),
            "{err:?}"
        );
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(accepted.is_err(), "a connection was made");

        // The same fetch for a server on loopback goes through.
        let local: http::Uri = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
        let guard = Guard::new(AddressPolicy::SameNetwork, &local, false);
        let pool = conn::build_pool(&HttpOptions::new("t"), None, guard.as_ref()).unwrap();
        let fetcher = Fetcher { pool, timeout: Duration::from_secs(5), guard };
        let req =
            http::Request::get(format!("http://localhost:{port}/x")).body(Bytes::new()).unwrap();
        let serve = async {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
            let reply = b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
            tokio::io::AsyncWriteExt::write_all(&mut stream, reply).await.unwrap();
        };
        let (resp, ()) = tokio::join!(fetcher.fetch(req), serve);
        assert_eq!(resp.expect("allowed").status(), http::StatusCode::NO_CONTENT);
    }
}
