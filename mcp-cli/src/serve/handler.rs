//! The bridge's [`Handler`]: each request of the host forwarded to the
//! upstream server its name or URI routes to, through the registry (so
//! policy, pins, approval, audit and supervision apply), and the answer
//! or the error sent back: lists, reads, prompts, completion and
//! subscriptions here, tool calls and tasks in `calls.rs`. Knows nothing
//! of the transport the host speaks: the stdio driver (`serve/mod.rs`)
//! and any other feed the same session.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_host_registry::mcp_peer::{Client, Transport};
use mcp_host_registry::shape::{SchemaTarget, ShapeLimits, shape_tool};
use mcp_host_registry::{Error, Registry, TransportError};
use mcp_proto::client::decide::result::is_cacheable;
use mcp_proto::client::{BoxFuture, RequestOptions};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{LoggingLevel, TASKS_EXTENSION, Tool};
use mcp_server_io::logging::LOG_LEVELS;
use mcp_server_io::stateless::{RequestMeta, cacheable};
use mcp_server_io::{Context, Handler, Params, Reply, ServerInfo, Session};
use serde_json::{Map, Value, json};

use super::HOST_ANSWER_TIMEOUT;
use super::calls::Called;
use super::host::HostLink;
use super::input::{CallFuture, ProgressTarget};
use super::login::Logins;
use super::routes::Routes;
use super::search;
use crate::cli::ToolsMode;
use crate::failure::Failure;

/// The `_meta` keys the protocol itself owns: the upstream connection
/// sets its own.
const PROTOCOL_META_PREFIX: &str = "io.modelcontextprotocol/";
/// The most pages of one list read from one server for an aggregated list.
const MAX_PAGES: usize = 100;

/// The bridge: the served servers behind one MCP server.
pub(crate) struct Bridge {
    pub(super) registry: Arc<Registry>,
    /// The host's side (a stateless-era host's parked calls).
    pub(super) link: Arc<HostLink>,
    /// The served servers, in order.
    pub(super) servers: Vec<String>,
    pub(super) info: ServerInfo,
    pub(super) capabilities: Value,
    pub(super) routes: Mutex<Routes>,
    /// A call's timeout (`--timeout`; else each server's).
    pub(super) timeout: Option<Duration>,
    /// The most a call may take with progress restarting its timeout.
    pub(super) max_time: Duration,
    /// Search mode: the host lists `search_tools` and `call_tool` only.
    pub(super) search: AtomicBool,
    /// The logins of servers that answered 401.
    pub(super) logins: Arc<Logins>,
    /// What the tools' input schemas are shaped for (`--schema-for`).
    pub(super) schemas: SchemaTarget,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("servers", &self.servers).finish_non_exhaustive()
    }
}

impl Bridge {
    pub(crate) fn new(
        registry: Arc<Registry>,
        link: Arc<HostLink>,
        servers: Vec<String>,
        info: ServerInfo,
        capabilities: Value,
        timeout: Option<Duration>,
        max_time: Duration,
    ) -> Bridge {
        let routes = Mutex::new(Routes::new(&servers));
        Bridge {
            registry,
            link,
            servers,
            info,
            capabilities,
            routes,
            timeout,
            max_time,
            search: AtomicBool::new(false),
            logins: Arc::default(),
            schemas: SchemaTarget::Unchanged,
        }
    }

    /// The bridge, giving the host input schemas shaped for `target`.
    pub(crate) fn with_schemas(self, schemas: SchemaTarget) -> Bridge {
        Bridge { schemas, ..self }
    }

    /// The bridge, in search mode or not (as [`settle_tools`](Self::settle_tools)
    /// settled it for another session).
    pub(crate) fn with_search(self, search: bool) -> Bridge {
        Bridge { search: AtomicBool::new(search), ..self }
    }

    /// The bridge, with the logins tried so far (while connecting).
    pub(crate) fn with_logins(self, logins: Arc<Logins>) -> Bridge {
        Bridge { logins, ..self }
    }

    /// Settles which tools the host lists (`--tools`): for `auto`, the
    /// served servers' tools are counted now.
    pub(crate) async fn settle_tools(&self, mode: ToolsMode) {
        let count = match mode {
            ToolsMode::Auto => self.listed_tools().await.map_or(0, |l| l.len()),
            _ => 0,
        };
        let searching = search::searching(mode, count);
        if searching {
            tracing::info!(
                "search mode: the host lists {} and {}",
                search::SEARCH_TOOL,
                search::CALL_TOOL
            );
        }
        self.search.store(searching, Ordering::Relaxed);
    }

    /// Whether the host's tool list never changes (search mode).
    pub(crate) fn tools_fixed(&self) -> bool {
        self.search.load(Ordering::Relaxed)
    }

    /// The host's side.
    pub(crate) fn link(&self) -> &HostLink {
        &self.link
    }

    pub(super) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request to `server`, logged in and sent again on a 401 (see
    /// [`Logins::retrying`]).
    pub(super) async fn with_login<T, F, Fut>(&self, server: &str, attempt: F) -> Result<T, Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>>,
    {
        self.logins.retrying(&self.registry, server, attempt).await
    }

    pub(super) fn error(&self, e: Error) -> ErrorObject {
        error_object(&self.registry, e)
    }

    /// `tools/list`: every served server's tools that its policy and pins
    /// allow, named for the host; in search mode, the two tools.
    async fn list_tools(&self) -> Result<Value, ErrorObject> {
        if self.tools_fixed() {
            return Ok(search::tools());
        }
        let tools: Vec<Value> = self
            .listed_tools()
            .await?
            .into_iter()
            .map(|(name, mut tool)| {
                tool.name = name;
                serde_json::to_value(tool).unwrap_or_default()
            })
            .collect();
        Ok(json!({ "tools": tools }))
    }

    /// Every served server's tools that its policy and pins allow, each
    /// with the host's name of it (the routes updated).
    pub(super) async fn listed_tools(&self) -> Result<Vec<(String, Tool)>, ErrorObject> {
        let mut listed = Vec::new();
        let mut tools = Vec::new();
        for server in &self.servers {
            // A server that needs an OAuth login: logged in, listed again.
            let listing = self
                .logins
                .retrying(&self.registry, server, || self.registry.list_tools(server))
                .await;
            match listing {
                Ok(list) => {
                    listed.push((server.clone(), list.iter().map(|t| t.name.clone()).collect()));
                    tools.extend(list);
                }
                Err(e) if self.servers.len() > 1 => {
                    tracing::warn!(%server, "its tools are left out: {e}");
                }
                Err(e) => return Err(self.error(e)),
            }
        }
        let names = self.routes().name_tools(&listed);
        let named = names.into_iter().zip(tools);
        if self.schemas == SchemaTarget::Unchanged {
            return Ok(named.collect());
        }
        // Shaped for the host's provider; a schema that cannot be shaped
        // (the server's fault) leaves its tool out.
        let limits = ShapeLimits::default();
        Ok(named
            .filter_map(|(name, mut tool)| match shape_tool(&tool, self.schemas, &limits) {
                Ok(shaped) => {
                    tool.input_schema = serde_json::from_value(shaped.schema).ok()?;
                    Some((name, tool))
                }
                Err(e) => {
                    tracing::warn!(tool = %name, "left out: its input schema cannot be shaped: {e}");
                    None
                }
            })
            .collect())
    }

    /// A list every server gives (`resources/list`, `prompts/list`, ...):
    /// one server's page by page as it answers; several servers' whole,
    /// in one page.
    async fn list(
        &self,
        method: &'static str,
        key: &'static str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if let [only] = self.servers.as_slice() {
            return self.forward(only, method, params).await;
        }
        let mut listed = Vec::new();
        let mut items: Vec<Value> = Vec::new();
        for server in &self.servers {
            let result = self
                .with_login(server, || {
                    self.registry
                        .with_client(server, |c| async move { list_all(&c, method, key).await })
                })
                .await;
            match result {
                Ok(list) => {
                    let field = match key {
                        "prompts" => "name",
                        "resourceTemplates" => "uriTemplate",
                        _ => "uri",
                    };
                    let names = list
                        .iter()
                        .map(|item| {
                            item.get(field).and_then(Value::as_str).unwrap_or_default().to_owned()
                        })
                        .collect::<Vec<_>>();
                    listed.push((server.clone(), names));
                    items.extend(list);
                }
                Err(e) => tracing::warn!(%server, "its {key} are left out of {method}: {e}"),
            }
        }
        let mut routes = self.routes();
        match key {
            "prompts" => {
                for (item, name) in items.iter_mut().zip(routes.name_prompts(&listed)) {
                    item["name"] = json!(name);
                }
            }
            "resources" => {
                for (server, uris) in &listed {
                    routes.note_resources(server, uris);
                }
            }
            "resourceTemplates" => {
                for (server, templates) in &listed {
                    routes.note_templates(server, templates);
                }
            }
            _ => {}
        }
        Ok(json!({ key: items }))
    }

    /// Sends a request to a server as it came (less the protocol's own
    /// `_meta`), and gives its result or error.
    async fn forward(
        &self,
        server: &str,
        method: &'static str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        self.forwarded(server.to_owned(), method, params).await
    }

    /// [`forward`](Self::forward) as a future of its own, which an input
    /// round may park.
    fn forwarded(&self, server: String, method: &'static str, params: Option<Value>) -> CallFuture {
        let params = params.map(|mut p| {
            strip_protocol_meta(&mut p);
            p
        });
        let options = RequestOptions { timeout: self.timeout, ..Default::default() };
        let registry = self.registry.clone();
        let logins = self.logins.clone();
        Box::pin(async move {
            let send = || {
                let (params, options) = (params.clone(), options.clone());
                registry.with_client(&server, |c| async move {
                    request(&c, method, params, options).await
                })
            };
            logins.retrying(&registry, &server, send).await.map_err(|e| error_object(&registry, e))
        })
    }

    /// A request during which a server may ask the host (`resources/read`,
    /// `prompts/get`): a stateless-era host is asked in input rounds, its
    /// retry taking the parked request up; a handshake-era host's request
    /// is the one the servers' requests relate to while it runs.
    async fn askable(
        &self,
        key: mcp_server_io::RequestKey,
        meta: Option<&RequestMeta>,
        start: impl FnOnce() -> CallFuture,
    ) -> Result<Value, ErrorObject> {
        match meta {
            Some(meta) => {
                // These requests' progress is not relayed: no target.
                let none = ProgressTarget::default();
                self.link.rounds.drive(&key, meta, HOST_ANSWER_TIMEOUT, &none, start).await
            }
            None => {
                let _running = self.link.running(key);
                start().await
            }
        }
    }

    /// The server a resource URI goes to (listing resources, then
    /// templates, when it is not known yet).
    async fn route_uri(&self, uri: &str) -> Result<String, ErrorObject> {
        if let Some(server) = self.routes().resource(uri) {
            return Ok(server);
        }
        let _ = self.list(methods::RESOURCES_LIST, "resources", None).await;
        if let Some(server) = self.routes().resource(uri) {
            return Ok(server);
        }
        let templates = methods::RESOURCES_TEMPLATES_LIST;
        let _ = self.list(templates, "resourceTemplates", None).await;
        self.routes().resource(uri).ok_or_else(|| {
            ErrorObject::new(
                error_code::RESOURCE_NOT_FOUND,
                format!("no served server lists the resource {uri}"),
            )
        })
    }

    async fn serve(
        &self,
        session: Session<Bridge>,
        key: mcp_server_io::RequestKey,
        meta: Option<&RequestMeta>,
        method: &str,
        params: Params,
    ) -> Result<Value, ErrorObject> {
        if method == methods::TOOLS_CALL {
            return self.tool_call(session, key, meta, params).await.and_then(Called::into_value);
        }
        let params = params.into_value()?;
        let uri = || {
            params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str).map(str::to_owned)
        };
        match method {
            methods::TOOLS_LIST => self.list_tools().await,
            methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => {
                self.task_method(meta, method, params).await
            }
            methods::TASKS_LIST | methods::TASKS_RESULT => Err(ErrorObject::new(
                error_code::METHOD_NOT_FOUND,
                format!(
                    "{method}: mcpc serve makes no tasks of the 2025-11-25 kind (a call is \
                     followed to its result); tasks pass through to a 2026-07-28 host that \
                     declares {TASKS_EXTENSION}"
                ),
            )),
            methods::RESOURCES_LIST => {
                self.list(methods::RESOURCES_LIST, "resources", params).await
            }
            methods::RESOURCES_TEMPLATES_LIST => {
                self.list(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates", params).await
            }
            methods::PROMPTS_LIST => self.list(methods::PROMPTS_LIST, "prompts", params).await,
            methods::RESOURCES_READ => {
                if let Some(meta) = meta.filter(|m| m.request_state.is_some()) {
                    return self.askable(key, Some(meta), nothing_new).await;
                }
                let uri = uri().ok_or_else(|| invalid("resources/read needs a uri"))?;
                let server = self.route_uri(&uri).await?;
                let read = || self.forwarded(server, methods::RESOURCES_READ, params);
                self.askable(key, meta, read).await
            }
            methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
                let uri = uri().ok_or_else(|| invalid("a subscription needs a uri"))?;
                let server = self.route_uri(&uri).await?;
                let subscribe = method == methods::RESOURCES_SUBSCRIBE;
                let done = self
                    .with_login(&server, || async {
                        if subscribe {
                            self.registry.subscribe_resource(&server, &uri).await
                        } else {
                            self.registry.unsubscribe_resource(&server, &uri).await
                        }
                    })
                    .await;
                done.map(|()| json!({})).map_err(|e| self.error(e))
            }
            methods::PROMPTS_GET => {
                if let Some(meta) = meta.filter(|m| m.request_state.is_some()) {
                    return self.askable(key, Some(meta), nothing_new).await;
                }
                let mut params = params.unwrap_or_default();
                let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
                let (server, prompt) = self.route_prompt(name).await?;
                params["name"] = json!(prompt);
                let get = || self.forwarded(server, methods::PROMPTS_GET, Some(params));
                self.askable(key, meta, get).await
            }
            methods::COMPLETION_COMPLETE => {
                let mut params = params.unwrap_or_default();
                let reference = params.get("ref").cloned().unwrap_or_default();
                let server = match reference.get("type").and_then(Value::as_str) {
                    Some("ref/prompt") => {
                        let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
                        let (server, prompt) = self.route_prompt(name).await?;
                        params["ref"]["name"] = json!(prompt);
                        server
                    }
                    _ => {
                        let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
                        match self.servers.as_slice() {
                            [only] => only.clone(),
                            _ => self.route_uri(uri).await?,
                        }
                    }
                };
                self.forward(&server, methods::COMPLETION_COMPLETE, Some(params)).await
            }
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }

    async fn route_prompt(&self, name: &str) -> Result<(String, String), ErrorObject> {
        if let Some(route) = self.routes().prompt(name) {
            return Ok(route);
        }
        let _ = self.list(methods::PROMPTS_LIST, "prompts", None).await;
        self.routes().prompt(name).ok_or_else(|| invalid(&format!("Unknown prompt: {name}")))
    }

    /// Subscribes upstream to what a stateless-era host's
    /// `subscriptions/listen` asks for (the session keeps the stream).
    fn listen_upstream(&self, params: Option<&Value>) {
        let uris: Vec<String> = params
            .and_then(|p| p.pointer("/notifications/resourceSubscriptions"))
            .and_then(Value::as_array)
            .map(|uris| uris.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        for uri in uris {
            let Some(server) = self.routes().resource(&uri) else { continue };
            let (registry, logins) = (self.registry.clone(), self.logins.clone());
            tokio::spawn(async move {
                let subscribe = || registry.subscribe_resource(&server, &uri);
                if let Err(e) = logins.retrying(&registry, &server, subscribe).await {
                    tracing::warn!(%server, %uri, "subscribing for the host failed: {e}");
                }
            });
        }
    }
}

/// A cacheable result for a stateless-era host (where `ttlMs` and
/// `cacheScope` are required): the hints a stateless-era upstream gave, else
/// (a handshake-era upstream, or a list the bridge made) "immediately
/// stale" and `private`, as the bridge cannot know who else may see it.
fn caching_hints(result: Value) -> Value {
    let has_hints = result.get("ttlMs").is_some_and(Value::is_u64)
        && result.get("cacheScope").is_some_and(Value::is_string);
    if has_hints { result } else { cacheable(result, 0, "private") }
}

/// What a stateless-era host's retry starts: nothing, as the parked
/// request it names goes on instead.
pub(super) fn nothing_new() -> CallFuture {
    Box::pin(async { Err(ErrorObject::new(error_code::INTERNAL_ERROR, "no call to take up")) })
}

/// A registry error as the host's JSON-RPC error: the server's own error
/// as it came; else what went wrong, in words without secrets.
pub(super) fn error_object(registry: &Registry, e: Error) -> ErrorObject {
    if let Error::Transport { source, .. } = &e
        && let Some(error) = rpc_error(source)
    {
        return error;
    }
    let code = match &e {
        Error::UnknownTool { .. } | Error::AppOnlyTool { .. } => error_code::INVALID_PARAMS,
        Error::CallDenied { reason: mcp_host_registry::Reason::Approver, .. } => {
            error_code::USER_REJECTED
        }
        Error::ToolNotAllowed { .. } | Error::CallDenied { .. } | Error::ToolChanged { .. } => {
            error_code::INVALID_REQUEST
        }
        _ => error_code::INTERNAL_ERROR,
    };
    ErrorObject::new(code, Failure::registry(registry, e).message)
}

pub(super) fn invalid(message: &str) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

/// The JSON-RPC error a server answered with, when it did.
fn rpc_error(e: &TransportError) -> Option<ErrorObject> {
    #[allow(unreachable_patterns)]
    match e {
        TransportError::Stdio(e) => e.rpc_error().cloned(),
        TransportError::Http(e) => e.rpc_error().cloned(),
        _ => None,
    }
}

/// The host's `_meta` to pass on (less the protocol's own members and
/// the progress token), and its progress token.
pub(super) fn split_meta(meta: Option<&Value>) -> (Option<Map<String, Value>>, Option<Value>) {
    let Some(meta) = meta.and_then(Value::as_object) else {
        return (None, None);
    };
    let token = meta.get("progressToken").cloned();
    let rest: Map<String, Value> = meta
        .iter()
        .filter(|(k, _)| *k != "progressToken" && !k.starts_with(PROTOCOL_META_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ((!rest.is_empty()).then_some(rest), token)
}

/// Takes the protocol's own `_meta` members and a stateless retry's
/// members out of forwarded parameters.
fn strip_protocol_meta(params: &mut Value) {
    if let Some(object) = params.as_object_mut() {
        object.remove("inputResponses");
        object.remove("requestState");
        if let Some(meta) = object.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.retain(|k, _| !k.starts_with(PROTOCOL_META_PREFIX));
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
    }
}

// Generic over the transport, boxed: a spawned task's future must be
// `Send`, which rustc proves of these once for any `T: Transport`.
fn request<'a, T: Transport>(
    c: &'a Client<T>,
    method: &'static str,
    params: Option<Value>,
    options: RequestOptions,
) -> BoxFuture<'a, Result<Value, T::Error>> {
    Box::pin(c.request(method, params, options))
}

fn list_all<'a, T: Transport>(
    c: &'a Client<T>,
    method: &'static str,
    key: &'static str,
) -> BoxFuture<'a, Result<Vec<Value>, T::Error>> {
    Box::pin(async move {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let mut page = c.request(method, params, RequestOptions::default()).await?;
            if let Some(Value::Array(list)) = page.get_mut(key).map(Value::take) {
                items.extend(list);
            }
            match page.get("nextCursor") {
                Some(next @ Value::String(_)) => cursor = Some(next.clone()),
                _ => break,
            }
        }
        Ok(items)
    })
}

fn set_level<T: Transport>(
    c: &Client<T>,
    level: LoggingLevel,
) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(async move {
        let legacy = !c.protocol_version().is_some_and(|v| v.is_modern());
        let logs = c.server_capabilities().is_some_and(|caps| caps.logging.is_some());
        if legacy && logs { c.set_log_level(level).await } else { Ok(()) }
    })
}

fn roots_changed<T: Transport>(c: &Client<T>) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(c.notify_roots_changed())
}

impl Handler for Bridge {
    fn capabilities(&self, version: Option<&str>) -> Value {
        let mut capabilities = self.capabilities.clone();
        if self.tools_fixed() {
            capabilities["tools"] = json!({ "listChanged": false });
        }
        // Extensions (tasks) are the stateless era's: declared in its
        // discovery (no version), not to `initialize`.
        if let (Some(_), Some(c)) = (version, capabilities.as_object_mut()) {
            c.remove("extensions");
        }
        capabilities
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        let (session, key, meta) = cx.into_parts();
        self.link.attach(&session);
        if method == methods::TOOLS_CALL && meta.is_none() {
            if self.forward_plain(&session, &key, &params) {
                return Reply::Silent;
            }
            // A handshake-era host's call: the server's result goes back as
            // the text it sent (nothing is added to it in this era).
            return Reply::LaterRaw(Box::pin(async move {
                let bridge = session.handler();
                let called = bridge.tool_call(session.clone(), key, None, params).await;
                called.and_then(Called::into_text)
            }));
        }
        let method = method.to_owned();
        Reply::Later(Box::pin(async move {
            let bridge = session.handler();
            let stateless = meta.is_some();
            let result = bridge.serve(session.clone(), key, meta.as_ref(), &method, params).await;
            if stateless && is_cacheable(&method) { result.map(caching_hints) } else { result }
        }))
    }

    fn initializing(&self, cx: &Context<Self>) {
        // A host session over HTTP: its link learns it here.
        self.link.attach(cx.session());
    }

    fn notification(&self, _session: &Session<Self>, method: &str, _params: Option<&Value>) {
        if method == methods::NOTIFICATION_ROOTS_LIST_CHANGED {
            for server in self.servers.clone() {
                let (registry, logins) = (self.registry.clone(), self.logins.clone());
                tokio::spawn(async move {
                    let send = || {
                        registry.with_client(&server, |c| async move { roots_changed(&c).await })
                    };
                    if let Err(e) = logins.retrying(&registry, &server, send).await {
                        tracing::warn!(%server, "passing on the roots change failed: {e}");
                    }
                });
            }
        }
    }

    fn log_level_set(&self, _session: &Session<Self>, level: usize) {
        let Some(name) = LOG_LEVELS.get(level) else { return };
        let level = LoggingLevel::from(*name);
        for server in self.servers.clone() {
            let (registry, logins) = (self.registry.clone(), self.logins.clone());
            let level = level.clone();
            tokio::spawn(async move {
                let set = || {
                    let level = level.clone();
                    registry.with_client(&server, |c| async move { set_level(&c, level).await })
                };
                if let Err(e) = logins.retrying(&registry, &server, set).await {
                    tracing::warn!(%server, "passing on the log level failed: {e}");
                }
            });
        }
    }

    fn stateless_request(
        &self,
        _id: &mcp_proto::jsonrpc::RequestId,
        method: &str,
        _meta: &mcp_server_io::stateless::RequestMeta,
        params: &Params,
    ) {
        if method == methods::SUBSCRIPTIONS_LISTEN {
            // Parameters that do not decode get the session's refusal.
            self.listen_upstream(params.decode::<Value>().ok().flatten().as_ref());
        }
    }

    fn resource_exists(&self, uri: &str) -> bool {
        self.routes().resource(uri).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_passed_on_less_the_protocol_and_the_token() {
        let params = json!({"name": "t", "_meta": {
            "progressToken": 7,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "traceparent": "00-abc-def-01",
        }});
        let (meta, token) = split_meta(params.get("_meta"));
        assert_eq!(token, Some(json!(7)));
        assert_eq!(Value::Object(meta.unwrap()), json!({"traceparent": "00-abc-def-01"}));
        assert_eq!(split_meta(None), (None, None));

        let mut forwarded = json!({"uri": "u", "requestState": "s", "_meta": {
            "io.modelcontextprotocol/clientCapabilities": {},
        }});
        strip_protocol_meta(&mut forwarded);
        assert_eq!(forwarded, json!({"uri": "u"}));
    }
}
