//! The interop suites, each written once and run by every transport's test
//! binary against servers nobody in this project wrote (feature `interop`):
//!
//! - [`everything`]: the handshake era against
//!   `@modelcontextprotocol/server-everything`, over stdio, Streamable HTTP
//!   and the 2024-11-05 HTTP+SSE transport;
//! - [`sdk_v2`]: the stateless era (2026-07-28) against the server written
//!   with the TypeScript SDK v2 (`xtask/interop/ts-server.mjs`), over stdio
//!   and Streamable HTTP, and its handshake-era leg.
//!
//! Each test is an async function generic over the transport: it reaches
//! the server through a [`Connect`], which the transport's test binary
//! implements (spawning the server per client, or connecting to one it
//! started and keeps alive), and a macro of the suite
//! ([`everything_tests!`](crate::everything_tests),
//! [`sdk_v2_tests!`](crate::sdk_v2_tests)) writes one `#[tokio::test]` per
//! test. What only a transport shows (sessions, the standalone stream)
//! is checked through the [`Connect`] hooks; tests of a transport's own
//! behaviour stay in its crate.
//!
//! `cargo xtask interop` installs the pinned servers and runs the suites
//! with `MCP_EVERYTHING_JS` and `MCP_TS_SERVER_JS` naming their entry
//! points.

use std::future::Future;

use mcp_peer::{Client, ClientOptions, Transport};
use mcp_proto::client::ServerNotification;
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{ElicitRequestParams, LoggingLevel, SamplingMessageContentBlock};

pub mod everything;
pub mod sdk_v2;

/// The transport a [`Connect`] reaches its server over: where a server
/// behaves differently, the suites expect what it does there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// The server's stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// The 2024-11-05 HTTP+SSE transport.
    HttpSse,
}

/// How a suite reaches the server under test over one transport.
///
/// A value stands for one server (or, over stdio, for the command that
/// starts one per client) and keeps it alive while it lives.
pub trait Connect {
    /// The transport of the clients it makes.
    type Transport: Transport;

    /// The transport, for what the suites expect of the server over it.
    fn over(&self) -> Over;

    /// A new client of the server with the transport's defaults for it,
    /// then `configure`d by the test; the era is not opened yet.
    fn connect(
        &self,
        configure: impl FnOnce(&mut ClientOptions),
    ) -> impl Future<Output = Client<Self::Transport>>;

    /// Checks what the transport shows of a client whose era was just
    /// opened (over HTTP: whether the legacy transport was found, a
    /// session). Nothing by default.
    fn opened(&self, client: &Client<Self::Transport>) -> impl Future<Output = ()> {
        let _ = client;
        async {}
    }

    /// Waits until the server's messages that belong to no request can
    /// reach the client (over Streamable HTTP, the standalone GET stream is
    /// open, which the server must offer). At once by default.
    fn server_stream(&self, client: &Client<Self::Transport>) -> impl Future<Output = ()> {
        let _ = client;
        async {}
    }

    /// Checks that the transport keeps no state for the connection (over
    /// HTTP: no session, no standalone stream, not the legacy transport).
    /// Nothing by default.
    fn assert_stateless(&self, client: &Client<Self::Transport>) -> impl Future<Output = ()> {
        let _ = client;
        async {}
    }
}

/// The JSON-RPC error object a request failed with (the source of the
/// transport's error); panics on any other failure.
pub fn rpc_error<E: std::error::Error>(e: E) -> ErrorObject {
    match e.source().and_then(|s| s.downcast_ref::<ErrorObject>()) {
        Some(error) => error.clone(),
        None => panic!("expected a JSON-RPC error, got {e:?}"),
    }
}

/// The URI of a `notifications/resources/updated`.
pub fn resource_updated(n: &ServerNotification) -> Option<String> {
    match n {
        ServerNotification::ResourceUpdated(p) => Some(p.uri.clone()),
        _ => None,
    }
}

/// The level and text of a `notifications/message` whose data is a string.
pub fn log_text(n: &ServerNotification) -> Option<(LoggingLevel, String)> {
    match n {
        ServerNotification::LogMessage(p) => Some((p.level.clone(), p.data.as_str()?.to_owned())),
        _ => None,
    }
}

/// The text of the last message of each sampling request.
pub fn last_texts(asked: &[mcp_proto::types::CreateMessageRequestParams]) -> Vec<String> {
    asked
        .iter()
        .map(|params| {
            params
                .messages
                .last()
                .and_then(|m| match m.content.blocks().first() {
                    Some(SamplingMessageContentBlock::Text(t)) => Some(t.text.clone()),
                    _ => None,
                })
                .unwrap_or_default()
        })
        .collect()
}

/// The message of each form elicitation.
pub fn form_messages(asked: &[ElicitRequestParams]) -> Vec<String> {
    asked
        .iter()
        .filter_map(|params| match params {
            ElicitRequestParams::Form(f) => Some(f.message.clone()),
            ElicitRequestParams::Url(_) => None,
        })
        .collect()
}

/// Standard base64 decoded (padding ignored); panics on any other byte.
pub fn base64_decode(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0u32);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}
