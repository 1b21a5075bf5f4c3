//! One server given on a command line (`--server SPEC`, `-H 'Name: value'`).

use std::fmt;

use mcp_spawn_env::ServerCommand;

use crate::config::{AuthConfig, HttpNetwork, Secret, ServerConfig, TransportConfig};

/// Why a server spec was refused. The message shows both accepted forms
/// where that helps, and never repeats a header's value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The spec is empty (or only whitespace).
    Empty,
    /// Headers were given with a command (they only make sense for a URL).
    HeadersWithCommand,
    /// A header is not `Name: value`, or its name is blank.
    BadHeader {
        /// The header's name part, when there is one (never the value).
        name: Option<String>,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Empty => f.write_str(
                "the server spec is empty; give a URL (`--server https://example.com/mcp`) \
                 or a command to spawn (`--server 'npx -y @modelcontextprotocol/server-everything'`)",
            ),
            SpecError::HeadersWithCommand => f.write_str(
                "headers (-H) can only be sent to a server given by URL (http:// or https://), \
                 not to a spawned command",
            ),
            SpecError::BadHeader { name: Some(name) } => {
                write!(f, "header {name:?} has a blank name; write -H 'Name: value'")
            }
            SpecError::BadHeader { name: None } => {
                f.write_str("a header has no ':'; write -H 'Name: value'")
            }
        }
    }
}

impl std::error::Error for SpecError {}

/// Turns a command-line server spec into a server called `name`.
///
/// The spec is trimmed. One that starts with `http://` or `https://`
/// (in any case) is that URL verbatim, path and query kept, and so is a
/// Unix domain socket endpoint, `unix:/path/to/socket[#/request/path]`
/// (Streamable HTTP over the socket); anything else is
/// split on whitespace and spawned (a URL is never spawned, and nothing else
/// is ever treated as a URL). Headers are `Name: value`, split at the first
/// colon and trimmed; a repeated name (in any case) keeps the last value.
/// They are allowed only with a URL.
///
/// ```
/// use mcp_host_registry::{TransportConfig, parse_server_spec};
///
/// let s = parse_server_spec("server", " HTTPS://example.com/mcp?x=1 ", &["X-Key: k1"]).unwrap();
/// assert!(matches!(&s.transport, TransportConfig::Http { endpoint, .. } if endpoint == "HTTPS://example.com/mcp?x=1"));
///
/// let s = parse_server_spec("server", "npx -y  @modelcontextprotocol/server-everything", &[] as &[&str]).unwrap();
/// assert!(matches!(&s.transport, TransportConfig::Stdio(c) if c.command == "npx" && c.args.len() == 2));
///
/// let s = parse_server_spec("server", "unix:/run/mcp.sock", &[] as &[&str]).unwrap();
/// assert!(matches!(&s.transport, TransportConfig::Http { endpoint, .. } if endpoint == "unix:/run/mcp.sock"));
///
/// assert!(parse_server_spec("server", "npx x", &["X-Key: k1"]).is_err());
/// assert!(parse_server_spec("server", "  ", &[] as &[&str]).is_err());
/// ```
pub fn parse_server_spec<S: AsRef<str>>(
    name: &str,
    spec: &str,
    headers: &[S],
) -> Result<ServerConfig, SpecError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(SpecError::Empty);
    }
    let is_url = ["http://", "https://", "unix:"].iter().any(|scheme| {
        // Bytes, not a `str` slice: a non-ASCII spec may have no character
        // boundary where the scheme would end.
        spec.as_bytes()
            .get(..scheme.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(scheme.as_bytes()))
    });
    if !is_url {
        if !headers.is_empty() {
            return Err(SpecError::HeadersWithCommand);
        }
        let mut words = spec.split_whitespace();
        let command = words.next().unwrap_or_default();
        return Ok(ServerConfig::stdio(name, ServerCommand::new(command).args(words)));
    }
    let mut parsed: Vec<(String, Secret)> = Vec::new();
    for header in headers {
        let (header_name, value) = parse_header(header.as_ref())?;
        match parsed.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&header_name)) {
            Some(slot) => slot.1 = value,
            None => parsed.push((header_name, value)),
        }
    }
    Ok(ServerConfig::new(
        name,
        TransportConfig::Http {
            endpoint: spec.to_owned(),
            headers: parsed,
            auth: AuthConfig::None,
            network: HttpNetwork::default(),
        },
    ))
}

fn parse_header(header: &str) -> Result<(String, Secret), SpecError> {
    let Some((name, value)) = header.split_once(':') else {
        return Err(SpecError::BadHeader { name: None });
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(SpecError::BadHeader { name: Some(String::new()) });
    }
    Ok((name.to_owned(), Secret::new(value.trim())))
}
