//! [`HttpPool`]: a connection pool and TLS configuration that several
//! clients share.

use std::fmt;

use crate::conn::{self, Pool};
use crate::error::Error;
use crate::options::HttpOptions;

/// A connection pool (keep-alive connections, with their TLS sessions) that
/// several clients share, as rmcp clients share one `reqwest::Client`: a
/// second client to an origin the pool already talks to sends its first
/// request on a kept connection, with no TCP or TLS handshake.
///
/// Made once from the options that govern connections (the connect
/// timeout, [`pool_idle_timeout`](HttpOptions::pool_idle_timeout) and the
/// TLS settings: [`tls`](HttpOptions::tls), [`roots`](HttpOptions::roots),
/// [`ca_file`](HttpOptions::ca_file)), then given to each client with
/// [`HttpOptions::with_pool`]; those options of the clients themselves are
/// not looked at for the requests that go through it. Cheap to clone; the
/// connections live as long as any client or clone of the pool holds it,
/// and a client that closes deletes its session but leaves the pool to the
/// others.
///
/// It connects directly: a client whose endpoint a proxy applies to
/// ([`HttpOptions::proxy`]) or that talks over a Unix domain socket keeps a
/// pool of its own, and so do the OAuth requests (their pool checks the
/// addresses they resolve to).
///
/// ```no_run
/// use mcp_http::{HttpOptions, HttpPool};
///
/// # async fn run() -> Result<(), mcp_http::Error> {
/// let pool = HttpPool::new(&HttpOptions::new("defaults"))?;
/// let a = mcp_http::connect("https://mcp.example.com/a", HttpOptions::new("a").with_pool(pool.clone()))?;
/// let b = mcp_http::connect("https://mcp.example.com/b", HttpOptions::new("b").with_pool(pool))?;
/// a.ping().await?;
/// b.ping().await?; // on a's connection once a's reply was read
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpPool {
    pub(crate) pool: Pool,
}

impl HttpPool {
    /// A pool with the connect timeout, idle timeout and TLS settings of
    /// `options` (the rest of them is not looked at). No I/O happens here;
    /// a CA file is read now.
    pub fn new(options: &HttpOptions) -> Result<HttpPool, Error> {
        let mut direct = options.clone();
        direct.unix_socket = None;
        let pool = conn::build_pool(&direct, None, None).map_err(|reason| Error::Tls { reason })?;
        Ok(HttpPool { pool })
    }

    /// How many connections the pool keeps now (busy or idle).
    pub fn connections(&self) -> usize {
        self.pool.kept()
    }
}

impl fmt::Debug for HttpPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpPool").field("connections", &self.connections()).finish()
    }
}
