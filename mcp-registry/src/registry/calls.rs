//! The client calls the registry makes, as boxed futures built in
//! functions generic over the transport. A spawned task's future must be
//! `Send`, and rustc cannot prove that of a future that awaits a
//! `Client<Box<dyn DynTransport<_>>>` call directly (the box's `Transport`
//! impl is for `'static`, and the proof meets an erased lifetime); made
//! generic, the proof is done once for any `T: Transport`. So a host can
//! `tokio::spawn` the registry's calls, and the supervisors can run.

use std::sync::Arc;

use mcp_peer::{Client, Subscription, Transport};
use mcp_proto::client::{BoxFuture, RequestOptions};
use mcp_proto::types::{CallToolResult, InitializeResult, JsonObject, SubscriptionFilter, Tool};
use mcp_proto::{ProtocolVersion, methods};
use serde::Serialize;
use serde_json::value::RawValue;

/// A round trip: `ping`, or `server/discover` in the stateless era
/// (which has no `ping`).
pub(crate) fn round_trip<T: Transport>(c: &Client<T>) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(async move {
        if c.protocol_version().is_some_and(ProtocolVersion::is_modern) {
            c.request(methods::SERVER_DISCOVER, None, RequestOptions::default()).await.map(drop)
        } else {
            c.ping().await
        }
    })
}

pub(crate) fn initialize<T: Transport>(
    c: &Client<T>,
) -> BoxFuture<'_, Result<Arc<InitializeResult>, T::Error>> {
    Box::pin(c.initialize())
}

/// The tool list the client keeps, when it keeps a valid one: what
/// [`list_tools`] gives without asking the server, read with no future
/// (every call looks its tool up, and the list is nearly always kept).
pub(crate) fn cached_tools<T: Transport>(c: &Client<T>) -> Option<Arc<[Tool]>> {
    mcp_proto::client::ops::Requester::cached_tools(c)
}

pub(crate) fn list_tools<T: Transport>(
    c: &Client<T>,
) -> BoxFuture<'_, Result<Arc<[Tool]>, T::Error>> {
    Box::pin(c.list_tools())
}

pub(crate) fn call_tool<'a, T: Transport>(
    c: &'a Client<T>,
    tool: &'a str,
    arguments: Option<JsonObject>,
    options: RequestOptions,
) -> BoxFuture<'a, Result<CallToolResult, T::Error>> {
    Box::pin(c.call_tool_with(tool, arguments, options))
}

/// `tools/call`, its result as the JSON text the server sent (an object;
/// a task it made followed to its end), not decoded into [`CallToolResult`];
/// the arguments a map or JSON text sent as written.
pub(crate) fn call_tool_json<'a, T: Transport, A: Serialize + Send + Sync + 'a>(
    c: &'a Client<T>,
    tool: &'a str,
    arguments: A,
    options: RequestOptions,
) -> BoxFuture<'a, Result<Box<RawValue>, T::Error>> {
    Box::pin(c.call_tool_json(tool, arguments, options))
}

/// `tools/call` that a stateless-era server may answer with a task; the
/// arguments a map or JSON text sent as written.
pub(crate) fn call_tool_start<'a, T: Transport, A: Serialize + Send + Sync + 'a>(
    c: &'a Client<T>,
    tool: &'a str,
    arguments: A,
    options: RequestOptions,
) -> BoxFuture<'a, Result<mcp_peer::tasks::ToolCallStart, T::Error>> {
    Box::pin(c.call_tool_start(tool, arguments, options))
}

pub(crate) fn subscribe<'a, T: Transport>(
    c: &'a Client<T>,
    uri: &'a str,
) -> BoxFuture<'a, Result<(), T::Error>> {
    Box::pin(c.subscribe_resource(uri))
}

pub(crate) fn listen<T: Transport>(
    c: &Client<T>,
    filter: SubscriptionFilter,
) -> BoxFuture<'_, Result<Subscription, T::Error>> {
    Box::pin(c.listen(filter))
}

pub(crate) fn unsubscribe<'a, T: Transport>(
    c: &'a Client<T>,
    uri: &'a str,
) -> BoxFuture<'a, Result<(), T::Error>> {
    Box::pin(c.unsubscribe_resource(uri))
}

pub(crate) fn close<T: Transport>(c: &Client<T>) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(c.close())
}
