//! The blocking Streamable HTTP client (feature `blocking`), for
//! synchronous hosts: no async runtime in sight, the client owns one.
//!
//! ```no_run
//! use mcp_http::HttpOptions;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let client = mcp_http::blocking::connect("http://127.0.0.1:3001/mcp", HttpOptions::new("local"))?;
//!     for tool in client.list_tools()?.iter() {
//!         println!("{}", tool.name);
//!     }
//!     client.close()?;
//!     Ok(())
//! }
//! ```

use mcp_peer::blocking::{Client, ConnectError};

use crate::error::Error;
use crate::options::HttpOptions;
use crate::transport::HttpTransport;

/// A blocking client of a Streamable HTTP server.
pub type HttpClient = Client<HttpTransport>;

/// Checks the URL, the credentials and the TLS configuration (see
/// [`connect`](crate::connect)), on a runtime the
/// returned client owns. Must not be called from inside an async runtime.
pub fn connect(url: &str, options: HttpOptions) -> Result<HttpClient, ConnectError<Error>> {
    let session = options.client_options();
    Client::connect(move || async move { HttpTransport::connect(url, options) }, session)
}
