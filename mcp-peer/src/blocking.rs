//! A blocking face over the same client, for synchronous hosts (feature
//! `blocking`): each method runs the async one to completion on a runtime
//! the client owns, in the manner of `reqwest::blocking`.
//!
//! The runtime has one worker thread of its own, where the transport's
//! tasks run (the stdio reader, HTTP streams, the host's handlers), so
//! server messages are read and answered while the host's thread does
//! something else. Calling a blocking method from inside an async runtime
//! panics (tokio forbids blocking a runtime thread): use the async
//! [`Client`](crate::Client) there.
//!
//! ```no_run
//! use mcp_peer::ClientOptions;
//! use mcp_peer::blocking::Client;
//! use mcp_peer::memory;
//!
//! // Any transport; the stdio and HTTP crates offer ready-made constructors
//! // (`mcp_client_stdio::blocking::spawn`, `mcp_http::blocking::connect`).
//! let client = Client::connect(|| async { Ok::<_, std::io::Error>(memory::pair().0) },
//!     ClientOptions::new("demo")).unwrap();
//! let _ = client.ping();
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::client::{RequestOptions, ServerNotification};
use mcp_proto::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, InitializeResult,
    LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, Task, Tool,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::options::ClientOptions;
use crate::transport::Transport;

/// The runtime a blocking client drives its async self on.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("mcp-peer-blocking")
        .enable_all()
        .build()
}

/// A blocking client of one MCP server over any [`Transport`]: every method
/// of the async [`Client`](crate::Client) that waits, as a method that
/// blocks. Cheap to clone (clones share the connection and the runtime).
pub struct Client<T: Transport> {
    inner: crate::Client<T>,
    runtime: Arc<tokio::runtime::Runtime>,
}

impl<T: Transport> Clone for Client<T> {
    fn clone(&self) -> Self {
        Client { inner: self.inner.clone(), runtime: self.runtime.clone() }
    }
}

impl<T: Transport + std::fmt::Debug> std::fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Client").field("client", &self.inner).finish()
    }
}

/// Why a blocking client could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectError<E> {
    /// The runtime could not be started.
    Runtime(std::io::Error),
    /// The transport could not be made.
    Transport(E),
}

impl<E: std::fmt::Display> std::fmt::Display for ConnectError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Runtime(e) => write!(f, "the client's runtime could not start: {e}"),
            ConnectError::Transport(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for ConnectError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Runtime(e) => Some(e),
            ConnectError::Transport(e) => Some(e),
        }
    }
}

macro_rules! blocking {
    ($( $(#[$doc:meta])* fn $name:ident $(<$($g:ident: $b:path),*>)? ( $($arg:ident : $ty:ty),* ) -> $ret:ty; )*) => {
        $(
            $(#[$doc])*
            pub fn $name $(<$($g: $b),*>)? (&self, $($arg: $ty),*) -> Result<$ret, T::Error> {
                self.runtime.block_on(self.inner.$name($($arg),*))
            }
        )*
    };
}

impl<T: Transport> Client<T> {
    /// Starts a runtime, makes the transport on it with `connect` (a
    /// process is spawned, a connection pool set up, ...), and wraps both in
    /// a client. Nothing is sent yet.
    pub fn connect<F, Fut, E>(connect: F, options: ClientOptions) -> Result<Self, ConnectError<E>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let runtime = runtime().map_err(ConnectError::Runtime)?;
        let inner = runtime.block_on(async move {
            let transport = connect().await.map_err(ConnectError::Transport)?;
            Ok::<_, ConnectError<E>>(crate::Client::new(transport, options))
        })?;
        Ok(Client { inner, runtime: Arc::new(runtime) })
    }

    /// The async client underneath (its non-blocking accessors:
    /// `protocol_version`, `server_info`, `transport`, ...).
    pub fn client(&self) -> &crate::Client<T> {
        &self.inner
    }

    /// Runs any future of the async API to completion, for what this face
    /// does not wrap.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// A blocking receiver of the server's notifications, from now on.
    pub fn notifications(&self) -> Notifications {
        let _guard = self.runtime.enter();
        Notifications { inner: self.inner.notifications(), runtime: self.runtime.clone() }
    }

    blocking! {
        /// See [`Client::initialize`](crate::Client::initialize).
        fn initialize() -> Arc<InitializeResult>;
        /// See [`Client::ping`](crate::Client::ping).
        fn ping() -> ();
        /// See [`Client::list_tools`](crate::Client::list_tools).
        fn list_tools() -> Arc<[Tool]>;
        /// See [`Client::list_tools_fresh`](crate::Client::list_tools_fresh).
        fn list_tools_fresh() -> Arc<[Tool]>;
        /// See [`Client::call_tool`](crate::Client::call_tool).
        fn call_tool<A: Serialize>(name: &str, arguments: A) -> CallToolResult;
        /// See [`Client::call_tool_with`](crate::Client::call_tool_with).
        fn call_tool_with<A: Serialize>(name: &str, arguments: A, options: RequestOptions) -> CallToolResult;
        /// See [`Client::call_tool_as`](crate::Client::call_tool_as).
        fn call_tool_as<R: DeserializeOwned, A: Serialize>(name: &str, arguments: A) -> R;
        /// See [`Client::list_resources`](crate::Client::list_resources).
        fn list_resources() -> Vec<Resource>;
        /// See [`Client::list_resource_templates`](crate::Client::list_resource_templates).
        fn list_resource_templates() -> Vec<ResourceTemplate>;
        /// See [`Client::read_resource`](crate::Client::read_resource).
        fn read_resource(uri: &str) -> ReadResourceResult;
        /// See [`Client::subscribe_resource`](crate::Client::subscribe_resource).
        fn subscribe_resource(uri: &str) -> ();
        /// See [`Client::unsubscribe_resource`](crate::Client::unsubscribe_resource).
        fn unsubscribe_resource(uri: &str) -> ();
        /// See [`Client::list_prompts`](crate::Client::list_prompts).
        fn list_prompts() -> Vec<Prompt>;
        /// See [`Client::get_prompt`](crate::Client::get_prompt).
        fn get_prompt(name: &str, arguments: Option<std::collections::BTreeMap<String, String>>) -> GetPromptResult;
        /// See [`Client::complete`](crate::Client::complete).
        fn complete(params: &CompleteRequestParams) -> CompleteResult;
        /// See [`Client::set_log_level`](crate::Client::set_log_level).
        fn set_log_level(level: LoggingLevel) -> ();
        /// See [`Client::get_task`](crate::Client::get_task).
        fn get_task(task_id: &str) -> Task;
        /// See [`Client::list_tasks`](crate::Client::list_tasks).
        fn list_tasks() -> Vec<Task>;
        /// See [`Client::cancel_task`](crate::Client::cancel_task).
        fn cancel_task(task_id: &str) -> Task;
        /// See [`Client::task_result`](crate::Client::task_result).
        fn task_result<R: DeserializeOwned>(task_id: &str, options: RequestOptions) -> R;
        /// See [`Client::notify_roots_changed`](crate::Client::notify_roots_changed).
        fn notify_roots_changed() -> ();
        /// See [`Client::request`](crate::Client::request).
        fn request(method: &str, params: Option<Value>, options: RequestOptions) -> Value;
        /// See [`Client::notify`](crate::Client::notify).
        fn notify(method: &str, params: Option<Value>) -> ();
        /// See [`Client::close`](crate::Client::close).
        fn close() -> ();
    }
}

/// The server's notifications, received by blocking
/// ([`blocking::Client::notifications`](Client::notifications)).
pub struct Notifications {
    inner: crate::Notifications,
    runtime: Arc<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Notifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Notifications").finish_non_exhaustive()
    }
}

impl Notifications {
    /// The next notification; `None` once the client is gone.
    pub fn recv(&mut self) -> Option<ServerNotification> {
        self.runtime.block_on(self.inner.recv())
    }

    /// The next notification within `timeout`; `None` when none came (or
    /// the client is gone).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<ServerNotification> {
        let runtime = self.runtime.clone();
        runtime.block_on(async { tokio::time::timeout(timeout, self.inner.recv()).await.ok()? })
    }
}

impl Iterator for Notifications {
    type Item = ServerNotification;

    fn next(&mut self) -> Option<ServerNotification> {
        self.recv()
    }
}
