//! The blocking stdio client (feature `blocking`), for synchronous hosts:
//! no async runtime in sight, the client owns one.
//!
//! ```no_run
//! use mcp_client_stdio::{ServerCommand, StdioOptions};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let command = ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
//!     let client = mcp_client_stdio::blocking::spawn(command, StdioOptions::new("everything"))?;
//!     let result = client.call_tool("echo", mcp_client_stdio::serde_json::json!({"message": "hi"}))?;
//!     println!("{}", mcp_client_stdio::mcp_proto::render_tool_result(&result).text);
//!     client.close()?;
//!     Ok(())
//! }
//! ```

use mcp_peer::blocking::{Client, ConnectError};

use crate::client::StdioTransport;
use crate::error::Error;
use crate::options::{ServerCommand, StdioOptions};

/// A blocking client of a stdio server.
pub type StdioClient = Client<StdioTransport>;

/// Resolves the command and starts the server (see
/// [`spawn`](crate::spawn)), on a runtime the
/// returned client owns. Must not be called from inside an async runtime.
pub fn spawn(
    command: ServerCommand,
    options: StdioOptions,
) -> Result<StdioClient, ConnectError<Error>> {
    let session = options.client_options();
    Client::connect(move || StdioTransport::spawn(command, options), session)
}
