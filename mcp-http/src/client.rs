//! The client over Streamable HTTP: the one [`mcp_peer::Client`], named for
//! this transport, and how to make one.

use mcp_peer::Client;

use crate::error::Error;
use crate::options::HttpOptions;
use crate::transport::HttpTransport;

/// A client of one MCP server behind a Streamable HTTP endpoint (or the
/// 2024-11-05 HTTP+SSE transport it falls back to): the one
/// [`mcp_peer::Client`] over an [`HttpTransport`], made by [`connect`].
///
/// Every typed operation (`call_tool`, `read_resource`, `notifications`,
/// ...) is [`mcp_peer::Client`]'s; what only HTTP has (the OAuth client,
/// the session, the redacted endpoint, the standalone GET stream) is the
/// transport's, reached with [`transport`](Client::transport).
///
/// Cheap to clone (all clones share the session and the connection pool).
/// Every message is its own POST on a pooled keep-alive connection; many
/// requests may be in flight at once.
pub type HttpClient = Client<HttpTransport>;

/// Checks the URL, the credentials and the TLS configuration, and prepares
/// the connection pool, giving the client over it. No I/O happens here: the
/// first connection is made by the first request (the handshake runs then,
/// or explicitly with [`initialize`](Client::initialize)).
///
/// The client's methods must be called within a Tokio runtime.
pub fn connect(url: &str, options: HttpOptions) -> Result<HttpClient, Error> {
    let transport = HttpTransport::with(url, &options)?;
    Ok(Client::new(transport, options.client))
}
