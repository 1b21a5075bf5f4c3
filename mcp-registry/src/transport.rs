//! One face for every transport: [`Transport`] (native `async fn`s, for
//! static dispatch and for implementing) and [`DynTransport`] (boxed
//! futures, object-safe, what the registry holds). Every `Transport` is a
//! `DynTransport`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use mcp_http::HttpClient;
use mcp_proto::client::{BoxFuture, RequestOptions};
use mcp_proto::types::{CallToolResult, InitializeResult, JsonObject, Tool};
use mcp_stdio::StdioClient;

use crate::error::TransportError;

/// What a server said when asked for authorization (HTTP 401, or 403 for a
/// missing scope): where the OAuth flow starts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationInfo {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The protected-resource metadata URL of the Bearer challenge.
    pub resource_metadata: Option<String>,
    /// The scopes the challenge names.
    pub scopes: Vec<String>,
    /// The challenge's `error` (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
}

/// A connection to one MCP server, whatever carries it.
///
/// Implemented for [`StdioClient`] and [`HttpClient`]; a host implements it
/// for a transport of its own and hands the registry a
/// [`Connector`](crate::Connector) that builds it. Errors must not carry
/// credentials.
pub trait Transport: Send + Sync {
    /// Runs the handshake if it has not run yet; returns the server's answer.
    fn initialize(
        &self,
    ) -> impl Future<Output = Result<Arc<InitializeResult>, TransportError>> + Send;

    /// Every tool the server offers.
    fn list_tools(&self) -> impl Future<Output = Result<Arc<[Tool]>, TransportError>> + Send;

    /// Calls a tool. A tool that fails reports `is_error` in the result, not
    /// an `Err`.
    fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> impl Future<Output = Result<CallToolResult, TransportError>> + Send;

    /// A round trip. The default only makes sure the handshake ran.
    fn ping(&self) -> impl Future<Output = Result<(), TransportError>> + Send {
        async move { self.initialize().await.map(|_| ()) }
    }

    /// Whether the server asks for authorization before it will talk:
    /// `None` when it answered without asking (always for stdio servers,
    /// which take credentials from their environment).
    fn discover_authorization(
        &self,
    ) -> impl Future<Output = Result<Option<AuthorizationInfo>, TransportError>> + Send;

    /// Ends the connection (idempotent).
    fn close(&self) -> impl Future<Output = Result<(), TransportError>> + Send;
}

/// [`Transport`] in object-safe form (boxed futures), for
/// `Arc<dyn DynTransport>`. Implemented for every `Transport` that is
/// `Debug`; implement `Transport` rather than this.
pub trait DynTransport: Send + Sync + fmt::Debug {
    /// See [`Transport::initialize`].
    fn initialize(&self) -> BoxFuture<'_, Result<Arc<InitializeResult>, TransportError>>;
    /// See [`Transport::list_tools`].
    fn list_tools(&self) -> BoxFuture<'_, Result<Arc<[Tool]>, TransportError>>;
    /// See [`Transport::call_tool`].
    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> BoxFuture<'a, Result<CallToolResult, TransportError>>;
    /// See [`Transport::ping`].
    fn ping(&self) -> BoxFuture<'_, Result<(), TransportError>>;
    /// See [`Transport::discover_authorization`].
    fn discover_authorization(
        &self,
    ) -> BoxFuture<'_, Result<Option<AuthorizationInfo>, TransportError>>;
    /// See [`Transport::close`].
    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>>;
}

impl<T: Transport + fmt::Debug> DynTransport for T {
    fn initialize(&self) -> BoxFuture<'_, Result<Arc<InitializeResult>, TransportError>> {
        Box::pin(Transport::initialize(self))
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Arc<[Tool]>, TransportError>> {
        Box::pin(Transport::list_tools(self))
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> BoxFuture<'a, Result<CallToolResult, TransportError>> {
        Box::pin(Transport::call_tool(self, name, arguments, options))
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(Transport::ping(self))
    }

    fn discover_authorization(
        &self,
    ) -> BoxFuture<'_, Result<Option<AuthorizationInfo>, TransportError>> {
        Box::pin(Transport::discover_authorization(self))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(Transport::close(self))
    }
}

impl Transport for StdioClient {
    async fn initialize(&self) -> Result<Arc<InitializeResult>, TransportError> {
        Ok(StdioClient::initialize(self).await?)
    }

    async fn list_tools(&self) -> Result<Arc<[Tool]>, TransportError> {
        Ok(StdioClient::list_tools(self).await?)
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, TransportError> {
        Ok(StdioClient::call_tool(self, name, arguments, options).await?)
    }

    async fn ping(&self) -> Result<(), TransportError> {
        Ok(StdioClient::ping(self).await?)
    }

    async fn discover_authorization(&self) -> Result<Option<AuthorizationInfo>, TransportError> {
        Ok(None)
    }

    async fn close(&self) -> Result<(), TransportError> {
        Ok(StdioClient::close(self).await?)
    }
}

impl Transport for HttpClient {
    async fn initialize(&self) -> Result<Arc<InitializeResult>, TransportError> {
        Ok(HttpClient::initialize(self).await?)
    }

    async fn list_tools(&self) -> Result<Arc<[Tool]>, TransportError> {
        Ok(HttpClient::list_tools(self).await?)
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, TransportError> {
        Ok(HttpClient::call_tool(self, name, arguments, options).await?)
    }

    async fn ping(&self) -> Result<(), TransportError> {
        Ok(HttpClient::ping(self).await?)
    }

    async fn discover_authorization(&self) -> Result<Option<AuthorizationInfo>, TransportError> {
        match HttpClient::initialize(self).await {
            Ok(_) => Ok(None),
            Err(e) => match authorization_info(&e) {
                Some(info) => Ok(Some(info)),
                None => Err(e.into()),
            },
        }
    }

    async fn close(&self) -> Result<(), TransportError> {
        Ok(HttpClient::close(self).await?)
    }
}

/// The authorization request a 401 or 403 carries.
fn authorization_info(e: &mcp_http::Error) -> Option<AuthorizationInfo> {
    let status = e.status()?.as_u16();
    if status != http_status::UNAUTHORIZED && status != http_status::FORBIDDEN {
        return None;
    }
    if status == http_status::FORBIDDEN && !matches!(e, mcp_http::Error::InsufficientScope { .. }) {
        return None;
    }
    let bearer = e.bearer_challenge();
    Some(AuthorizationInfo {
        status,
        resource_metadata: bearer.and_then(|b| b.resource_metadata.clone()),
        scopes: bearer.and_then(|b| b.scope.clone()).unwrap_or_default(),
        error: bearer.and_then(|b| b.error.clone()),
    })
}

mod http_status {
    pub(super) const UNAUTHORIZED: u16 = 401;
    pub(super) const FORBIDDEN: u16 = 403;
}
