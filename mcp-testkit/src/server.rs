//! The transport-independent server core: messages in through
//! [`Server::handle`], messages out through the [`Outgoing`] queue.
//!
//! A driver owns the I/O. It feeds each message the client sent to
//! [`Server::handle`] (or raw JSON text to [`Server::handle_json`]) and
//! delivers every [`Outgoing`] item from the queue that [`Server::new`]
//! returned, in order. Requests that finish at once (`ping`, `tools/list`,
//! most tools) are answered before `handle` returns; tools that wait (`slow`,
//! `hang`, `ask`) run as their own Tokio tasks, so many calls are in flight at
//! once and a slow one never holds up a `ping`.
//!
//! The outgoing queue is unbounded on purpose: like the reference servers, the
//! testkit never stops reading because a client is slow to read, so a client
//! under test cannot deadlock it by writing a burst before reading.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcp_proto::jsonrpc::{
    DecodeError, ErrorObject, ErrorResponse, Incoming, Message, Notification, Request, RequestId,
    Response, decode_slice, error_code,
};
use mcp_proto::methods;
use mcp_server_io::era::{self, ServeEra};
use mcp_server_io::logging;
use mcp_server_io::stateless::{Change, Filter, RequestMeta};
use mcp_server_io::{Outgoing, OutgoingQueue, outgoing};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::config::Config;
use crate::modern;
use crate::tasks::{self, Tasks};
use crate::{features, tools};

/// How many stateless-era requests [`Server::received_log`] remembers.
const RECEIVED_LOG_CAP: usize = 256;

/// A client request as the core keys it: its id and where it came in (see
/// [`Server::handle_from`]), so that the same id from two clients of one
/// stateless-era server names two requests.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Addr {
    pub(crate) origin: u64,
    pub(crate) id: RequestId,
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.id.fmt(f)
    }
}

/// A scriptable MCP server for one client session.
///
/// Cheap to clone: clones share the session. Every method must be called
/// from within a Tokio runtime (tool calls that wait are spawned on it).
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    out: outgoing::OutgoingSender,
    state: Mutex<State>,
    next_server_request: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// The protocol version answered to `initialize`; `None` before it.
    version: Option<String>,
    /// Whether `notifications/initialized` arrived.
    client_initialized: bool,
    /// Running tool calls, by the client's request.
    in_flight: HashMap<Addr, AbortHandle>,
    /// Server-to-client requests awaiting the client's answer.
    pending: HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>,
    /// The `requestId` of every `notifications/cancelled`, in arrival order.
    cancelled: Vec<Value>,
    /// Whether the `extra` tool is listed.
    extra_tool: bool,
    /// The lowest log level the client asked for (`logging/setLevel`).
    min_log_level: usize,
    /// Client requests answered so far (for `--exit-after`).
    answered: u64,
    /// The URIs of `resources/subscribe`, less those of `resources/unsubscribe`.
    subscriptions: BTreeSet<String>,
    /// The tasks of task-augmented `tools/call`s.
    tasks: Tasks,
    /// Open `subscriptions/listen` streams, by the listen request.
    listens: BTreeMap<Addr, Filter>,
    /// What the stateless-era requests carried (`received_log`).
    received: VecDeque<Value>,
    /// The number of the next `retry_once` state.
    next_retry: u64,
}

/// The client did not answer a server-to-client request in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AskTimeout(pub(crate) Duration);

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = Value> + Send + 'static>>;

/// A request answered later: its result or error.
type ReplyFuture = Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send + 'static>>;

impl Server {
    /// A server in its pre-`initialize` state, and the queue of what it
    /// sends.
    pub fn new(config: Config) -> (Server, OutgoingQueue) {
        let (out, queue) = outgoing::queue();
        let inner = Inner {
            config,
            out,
            state: Mutex::new(State::default()),
            next_server_request: AtomicU64::new(1),
        };
        (Server { inner: Arc::new(inner) }, queue)
    }

    /// The configuration the server was started with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The `protocolVersion` the server answered to `initialize`, once it has.
    pub fn negotiated_version(&self) -> Option<String> {
        self.state().version.clone()
    }

    /// Handles the JSON text of one incoming frame (a stdio line, an HTTP
    /// POST body).
    ///
    /// Text that is not JSON is answered with a `-32700` parse error, JSON
    /// that is not a JSON-RPC message with `-32600`; both with a `null` id
    /// unless the id could be read. A batch (2025-03-26) is handled element
    /// by element, each reply sent on its own.
    pub fn handle_json(&self, bytes: &[u8]) {
        match decode_slice(bytes) {
            Ok(Incoming::Single(message)) => self.handle(message),
            Ok(Incoming::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(message) => self.handle(message),
                        Err(e) => self.reject_invalid(None, &e),
                    }
                }
            }
            Err(DecodeError::Json(e)) => self.send_error(
                None,
                ErrorObject::new(error_code::PARSE_ERROR, format!("Parse error: {e}")),
            ),
            Err(e) => self.reject_invalid(id_of_invalid(bytes), &e),
        }
    }

    /// Answers a frame that was too long to read (the driver discarded it).
    pub fn reject_oversized(&self, limit: usize) {
        self.send_error(
            None,
            ErrorObject::new(
                error_code::PARSE_ERROR,
                format!("Parse error: message longer than {limit} bytes was discarded"),
            ),
        );
    }

    /// Handles one message from the client.
    pub fn handle(&self, message: Message) {
        self.handle_from(0, message);
    }

    /// Handles one message from the client, its requests keyed by `origin`
    /// as well as their ids: a driver that serves several clients from one
    /// core (the stateless era over HTTP: one origin per POST) gives each
    /// its own origin, and routes what goes out by [`Outgoing::Message`]'s
    /// `origin` and `related`. A `notifications/cancelled` cancels the
    /// request of its id under its origin, else the one request of that id
    /// under any origin (a stateless-era notification comes in a POST of
    /// its own).
    pub fn handle_from(&self, origin: u64, message: Message) {
        match message {
            Message::Request(request) => self.handle_request(origin, request),
            Message::Notification(notification) => self.handle_notification(origin, notification),
            Message::Response(Response { id, result }) => self.complete(id, Ok(result)),
            Message::Error(ErrorResponse { id: Some(id), error }) => self.complete(id, Err(error)),
            Message::Error(ErrorResponse { id: None, error }) => {
                stderr_line(&format!("testkit: the client sent an error with no id: {error}"));
            }
        }
    }

    fn handle_request(&self, origin: u64, request: Request) {
        let Request { id, method, params } = request;
        let id = Addr { origin, id };
        let era = self.inner.config.era;
        let modern = era.routes_stateless(&method, params.as_ref());
        if modern {
            return self.handle_modern(id, &method, params);
        }
        if era == ServeEra::Modern {
            // Only `initialize` gets here.
            return self.reply(id, Err(modern::refuse_initialize(params.as_ref(), era)));
        }
        if method == methods::SERVER_DISCOVER && self.inner.config.silent_discover {
            // A legacy server that ignores what it does not know.
            return;
        }
        let initialized = self.state().version.is_some();
        let result = match method.as_str() {
            methods::INITIALIZE => self.initialize(&id, params),
            methods::PING => Ok(json!({})),
            _ if !initialized => Err(era::not_initialized(&method)),
            methods::TOOLS_LIST => self.list_tools(params),
            methods::TOOLS_CALL => return self.call_tool(id, params, None),
            methods::LOGGING_SET_LEVEL => self.set_log_level(params),
            methods::RESOURCES_LIST => {
                self.paginate(params.as_ref(), "resources", features::resources())
            }
            methods::RESOURCES_TEMPLATES_LIST => {
                self.paginate(params.as_ref(), "resourceTemplates", features::resource_templates())
            }
            methods::RESOURCES_READ => read_resource(params.as_ref()),
            methods::RESOURCES_SUBSCRIBE => self.subscribe(params.as_ref(), true),
            methods::RESOURCES_UNSUBSCRIBE => self.subscribe(params.as_ref(), false),
            methods::PROMPTS_LIST => self.paginate(params.as_ref(), "prompts", features::prompts()),
            methods::PROMPTS_GET => features::get_prompt(params),
            methods::COMPLETION_COMPLETE => features::complete(params),
            methods::TASKS_GET if self.tasks_enabled() => {
                tasks::task_id_param(params.as_ref()).and_then(|task| self.state().tasks.get(task))
            }
            methods::TASKS_LIST if self.tasks_enabled() => {
                let all = self.state().tasks.list();
                self.paginate(params.as_ref(), "tasks", all)
            }
            methods::TASKS_CANCEL if self.tasks_enabled() => self.cancel_task(params.as_ref()),
            methods::TASKS_RESULT if self.tasks_enabled() => return self.task_result(id, params),
            _ => Err(ErrorObject::method_not_found(&method)),
        };
        self.reply(id, result);
    }

    fn handle_notification(&self, origin: u64, notification: Notification) {
        match notification.method.as_str() {
            methods::NOTIFICATION_INITIALIZED => self.state().client_initialized = true,
            methods::NOTIFICATION_CANCELLED => {
                let Some(request_id) =
                    notification.params.as_ref().and_then(|p| p.get("requestId")).cloned()
                else {
                    return;
                };
                self.state().cancelled.push(request_id.clone());
                if let Ok(id) = serde_json::from_value::<RequestId>(request_id) {
                    self.cancel_by_id(origin, id);
                }
            }
            // Progress, roots/list_changed and anything else: nothing to do.
            _ => {}
        }
    }

    fn initialize(&self, id: &Addr, params: Option<Value>) -> Result<Value, ErrorObject> {
        if self.state().version.is_some() {
            return Err(era::already_initialized());
        }
        let offered = era::check_initialize(params.as_ref())?;
        let version = match &self.inner.config.version_override {
            Some(v) => v.clone(),
            None => era::handshake_version(offered).as_str().to_owned(),
        };
        if self.inner.config.send_list_changed_before_init {
            self.notify(methods::NOTIFICATION_TOOLS_LIST_CHANGED, None, Some(id.clone()));
        }
        let mut capabilities = json!({
            "tools": { "listChanged": true },
            "logging": {},
            "resources": { "subscribe": true, "listChanged": true },
            "prompts": { "listChanged": true },
            "completions": {},
        });
        if era::supports_tasks(&version) {
            capabilities["tasks"] =
                json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
        }
        self.state().version = Some(version.clone());
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": modern::server_info(),
        });
        if let Some(instructions) = &self.inner.config.instructions {
            result["instructions"] = json!(instructions);
        }
        Ok(result)
    }

    /// A stateless-era request: its `_meta` checked and recorded, then
    /// served with `resultType` and `serverInfo` on the result.
    fn handle_modern(&self, id: Addr, method: &str, params: Option<Value>) {
        let meta = match modern::request_meta(params.as_ref(), self.inner.config.era) {
            Ok(meta) => meta,
            Err(error) => return self.reply(id, Err(error)),
        };
        {
            let mut state = self.state();
            state.received.push_back(modern::record(&id.id, method, &meta, params.as_ref()));
            if state.received.len() > RECEIVED_LOG_CAP {
                state.received.pop_front();
            }
        }
        if !modern::serves(method) {
            return self.reply(id, Err(ErrorObject::method_not_found(method)));
        }
        let ttl = self.inner.config.ttl_ms;
        let public = |result: Result<Value, ErrorObject>| {
            result.map(|r| modern::cacheable(r, ttl, "public"))
        };
        let result = match method {
            methods::SERVER_DISCOVER => Ok(modern::discover(&self.inner.config)),
            methods::TOOLS_LIST => {
                let all = self.described(tools::definitions(self.extra_tool(), true));
                public(self.paginate(params.as_ref(), "tools", all))
            }
            methods::RESOURCES_LIST => {
                public(self.paginate(params.as_ref(), "resources", features::resources()))
            }
            methods::RESOURCES_TEMPLATES_LIST => public(self.paginate(
                params.as_ref(),
                "resourceTemplates",
                features::resource_templates(),
            )),
            methods::PROMPTS_LIST => {
                public(self.paginate(params.as_ref(), "prompts", features::prompts()))
            }
            methods::RESOURCES_READ => {
                read_resource(params.as_ref()).map(|r| modern::cacheable(r, ttl, "private"))
            }
            methods::PROMPTS_GET => features::get_prompt(params),
            methods::COMPLETION_COMPLETE => features::complete(params),
            methods::TOOLS_CALL => return self.call_tool(id, params, Some(meta)),
            methods::SUBSCRIPTIONS_LISTEN => return self.listen(id, params.as_ref()),
            _ => Err(ErrorObject::method_not_found(method)),
        };
        self.reply(id, modern::decorate(result));
    }

    /// `subscriptions/listen`: acknowledges the granted filter, then
    /// carries the changes it asked for until cancelled. No reply while
    /// open.
    fn listen(&self, id: Addr, params: Option<&Value>) {
        let filter = match Filter::parse(params, features::exists) {
            Ok(filter) => filter,
            Err(error) => return self.reply(id, Err(error)),
        };
        let mut state = self.state();
        if state.listens.contains_key(&id) || state.in_flight.contains_key(&id) {
            drop(state);
            let message = format!("request id {id} is already in use by an open request");
            return self.reply(id, Err(ErrorObject::new(error_code::INVALID_REQUEST, message)));
        }
        let ack = json!({
            "notifications": filter.granted(),
            "_meta": modern::subscription_meta(&id.id),
        });
        state.listens.insert(id.clone(), filter);
        // Queued under the lock, so no change can overtake the
        // acknowledgement.
        let message = Message::Notification(Notification::new(
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            Some(ack),
        ));
        self.send(Outgoing::message(message, Some(id.id), id.origin));
    }

    /// Sends a change to every `subscriptions/listen` stream that asked for
    /// it, with its `subscriptionId`; returns how many got it.
    pub(crate) fn broadcast(&self, change: &Change) -> usize {
        let (method, params) = change.notification();
        let state = self.state();
        let mut sent = 0;
        for (addr, filter) in &state.listens {
            if !filter.wants(change) {
                continue;
            }
            let mut params = params.clone();
            params["_meta"] = modern::subscription_meta(&addr.id);
            let message = Message::Notification(Notification::new(method, Some(params)));
            let (related, origin) = (Some(addr.id.clone()), addr.origin);
            self.send(Outgoing::message(message, related, origin));
            sent += 1;
        }
        sent
    }

    /// Ends every `subscriptions/listen` stream gracefully: each gets its
    /// result (`resultType: "complete"`, its `subscriptionId`). Returns how
    /// many there were.
    pub(crate) fn close_subscriptions(&self) -> usize {
        let ids: Vec<Addr> = std::mem::take(&mut self.state().listens).into_keys().collect();
        for id in &ids {
            let result = json!({ "_meta": modern::subscription_meta(&id.id) });
            self.reply(id.clone(), modern::decorate(Ok(result)));
        }
        ids.len()
    }

    /// Cancels a request: a running call is aborted, an open
    /// `subscriptions/listen` ends; neither is answered. The HTTP driver
    /// calls it when a stateless-era response stream is closed.
    pub(crate) fn cancel(&self, origin: u64, id: RequestId) {
        let addr = Addr { origin, id };
        let mut state = self.state();
        if let Some(task) = state.in_flight.remove(&addr) {
            task.abort();
        }
        state.listens.remove(&addr);
    }

    /// `notifications/cancelled`: the request of that id from `origin`,
    /// else the only open one of that id from any origin.
    fn cancel_by_id(&self, origin: u64, id: RequestId) {
        let target = {
            let state = self.state();
            let own = Addr { origin, id: id.clone() };
            if state.in_flight.contains_key(&own) || state.listens.contains_key(&own) {
                Some(origin)
            } else {
                let mut open =
                    state.in_flight.keys().chain(state.listens.keys()).filter(|a| a.id == id);
                match (open.next(), open.next()) {
                    (Some(only), None) => Some(only.origin),
                    _ => None,
                }
            }
        };
        if let Some(origin) = target {
            self.cancel(origin, id);
        }
    }

    /// What every stateless-era request carried, oldest first (the last
    /// 256): `{id, method, protocolVersion, clientCapabilities, clientInfo?,
    /// logLevel?, name?, requestState?, inputResponses?}`. The
    /// `received_log` tool answers the same.
    pub fn received_log(&self) -> Vec<Value> {
        self.state().received.iter().cloned().collect()
    }

    /// The number for the next `retry_once` request state.
    pub(crate) fn next_retry(&self) -> u64 {
        let mut state = self.state();
        state.next_retry += 1;
        state.next_retry
    }

    fn list_tools(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let all = self.described(tools::definitions(self.state().extra_tool, false));
        self.paginate(params.as_ref(), "tools", all)
    }

    /// The tool definitions with the descriptions `--tool-description`
    /// replaces.
    fn described(&self, mut all: Vec<Value>) -> Vec<Value> {
        for (name, text) in &self.inner.config.tool_descriptions {
            if let Some(tool) = all.iter_mut().find(|t| t["name"] == name.as_str()) {
                tool["description"] = Value::String(text.clone());
            }
        }
        all
    }

    /// One page of a list result: `{key: [...], nextCursor?}`. With
    /// `--page-size N` the pages hold N items and the cursors are `"page:2"`,
    /// `"page:3"`, ...; without it everything is one page. A cursor the server
    /// did not issue gets `-32602`.
    fn paginate(
        &self,
        params: Option<&Value>,
        key: &str,
        all: Vec<Value>,
    ) -> Result<Value, ErrorObject> {
        let cursor = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => return Err(invalid_params("cursor must be a string")),
        };
        let Some(page_size) = self.inner.config.page_size else {
            return match cursor {
                None => Ok(json!({ key: all })),
                Some(c) => Err(invalid_params(format!("Invalid cursor: {c:?}"))),
            };
        };
        let page = match &cursor {
            None => 1,
            Some(c) => match c.strip_prefix("page:").and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n >= 2 && (n - 1).saturating_mul(page_size) < all.len() => n,
                _ => return Err(invalid_params(format!("Invalid cursor: {c:?}"))),
            },
        };
        let start = (page - 1) * page_size;
        let end = all.len().min(start + page_size);
        let items: Vec<Value> = all[start..end].to_vec();
        let mut result = json!({ key: items });
        if end < all.len() {
            result["nextCursor"] = json!(format!("page:{}", page + 1));
        }
        Ok(result)
    }

    fn subscribe(&self, params: Option<&Value>, subscribe: bool) -> Result<Value, ErrorObject> {
        let uri = features::uri_param(params)?;
        if subscribe {
            if !features::exists(uri) {
                return Err(features::not_found(uri));
            }
            self.state().subscriptions.insert(uri.to_owned());
        } else {
            self.state().subscriptions.remove(uri);
        }
        Ok(json!({}))
    }

    fn set_log_level(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        self.state().min_log_level = logging::set_level_param(params.as_ref())?;
        Ok(json!({}))
    }

    fn call_tool(&self, id: Addr, params: Option<Value>, modern: Option<RequestMeta>) {
        let mut params = match params {
            Some(Value::Object(p)) => p,
            _ => return self.reply(id, Err(invalid_params("tools/call needs params"))),
        };
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => return self.reply(id, Err(invalid_params("tools/call needs a string name"))),
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(a)) => a,
            Some(_) => {
                return self.reply(id, Err(invalid_params("tool arguments must be an object")));
            }
        };
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        if let Some(task) = params.remove("task").filter(|t| !t.is_null())
            && self.tasks_enabled()
            && modern.is_none()
        {
            return self.call_tool_as_task(id, &name, arguments, progress_token, &task);
        }
        let is_modern = modern.is_some();
        let call = tools::Call {
            server: self.clone(),
            id: id.clone(),
            progress_token,
            task: None,
            modern,
        };
        match tools::run(call, &name, arguments) {
            tools::Outcome::Reply(result) if is_modern => self.reply(id, modern::decorate(result)),
            tools::Outcome::Reply(result) => self.reply(id, result),
            tools::Outcome::Spawn(future) if is_modern => {
                self.spawn_request(id, Box::pin(async move { modern::decorate(Ok(future.await)) }))
            }
            tools::Outcome::Spawn(future) => self.spawn_call(id, future),
            tools::Outcome::NoReply => {}
        }
    }

    /// A task-augmented `tools/call`: answered at once with the new task
    /// (`CreateTaskResult`), the tool running on in the background.
    fn call_tool_as_task(
        &self,
        id: Addr,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        progress_token: Option<Value>,
        task: &Value,
    ) {
        let ttl = match task.get("ttl") {
            _ if !task.is_object() => Err(invalid_params("task must be an object")),
            None | Some(Value::Null) => Ok(None),
            Some(ttl) => {
                ttl.as_u64().map(Some).ok_or_else(|| invalid_params("task.ttl must be an integer"))
            }
        };
        let ttl = match ttl {
            Ok(ttl) => ttl,
            Err(e) => return self.reply(id, Err(e)),
        };
        let support = tools::definitions(self.extra_tool(), false)
            .into_iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone());
        let Some(support) = support else {
            return self.reply(id, Err(invalid_params(format!("Unknown tool: {name}"))));
        };
        // Absent `execution.taskSupport` is "forbidden": -32601, as the
        // tasks page asks.
        if !matches!(support.as_str(), Some("optional" | "required")) {
            let message = format!("Tool {name} does not support task-augmented calls");
            return self.reply(id, Err(ErrorObject::new(error_code::METHOD_NOT_FOUND, message)));
        }
        let created = self.state().tasks.create(ttl);
        let (task_id, task) = match created {
            Ok(created) => created,
            Err(e) => return self.reply(id, Err(e)),
        };
        self.reply(id.clone(), Ok(json!({ "task": task })));
        let call = tools::Call {
            server: self.clone(),
            id,
            progress_token,
            task: Some(task_id.clone()),
            modern: None,
        };
        match tools::run(call, name, arguments) {
            tools::Outcome::Reply(outcome) => self.finish_task(&task_id, outcome),
            tools::Outcome::Spawn(future) => {
                let server = self.clone();
                let id = task_id.clone();
                // Locked until the handle is stored, as in `spawn_request`.
                let mut state = self.state();
                let running = tokio::spawn(async move {
                    let result = future.await;
                    server.finish_task(&id, Ok(result));
                });
                state.tasks.set_abort(&task_id, running.abort_handle());
            }
            tools::Outcome::NoReply => {}
        }
    }

    /// Ends a task with its tool's outcome and tells the client.
    fn finish_task(&self, task_id: &str, outcome: tasks::Outcome) {
        let task = self.state().tasks.finish(task_id, outcome);
        if let Some(task) = task {
            self.notify(methods::NOTIFICATION_TASKS_STATUS, Some(task), None);
        }
    }

    fn cancel_task(&self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let task_id = tasks::task_id_param(params)?;
        let task = self.state().tasks.cancel(task_id)?;
        self.notify(methods::NOTIFICATION_TASKS_STATUS, Some(task.clone()), None);
        Ok(task)
    }

    /// `tasks/result`: the task's outcome, once it has one, with the
    /// related-task `_meta`.
    fn task_result(&self, id: Addr, params: Option<Value>) {
        let task_id = match tasks::task_id_param(params.as_ref()) {
            Ok(task_id) => task_id.to_owned(),
            Err(e) => return self.reply(id, Err(e)),
        };
        let receiver = self.state().tasks.outcome(&task_id);
        let mut receiver = match receiver {
            Ok(receiver) => receiver,
            Err(e) => return self.reply(id, Err(e)),
        };
        let with_meta = move |outcome: Option<tasks::Outcome>| match outcome {
            Some(outcome) => outcome.map(|result| tasks::with_related_task(result, &task_id)),
            // The store dropped the task without an outcome: only the whole
            // server going does that, and then nobody reads this.
            None => Err(ErrorObject::new(error_code::INTERNAL_ERROR, "the task is gone")),
        };
        let ready = receiver.borrow_and_update().clone();
        if ready.is_some() {
            return self.reply(id, with_meta(ready));
        }
        self.spawn_request(
            id,
            Box::pin(async move {
                let outcome = receiver.wait_for(Option::is_some).await.ok().and_then(|v| v.clone());
                with_meta(outcome)
            }),
        );
    }

    /// Whether tasks are on: for revision 2025-11-25 and later (and for
    /// revisions the server does not know).
    fn tasks_enabled(&self) -> bool {
        self.state().version.as_deref().is_some_and(era::supports_tasks)
    }

    fn spawn_call(&self, id: Addr, future: BoxFuture) {
        self.spawn_request(id, Box::pin(async move { Ok(future.await) }));
    }

    /// Answers a request from a task of its own, cancellable with
    /// `notifications/cancelled`.
    fn spawn_request(&self, id: Addr, future: ReplyFuture) {
        let mut state = self.state();
        if state.in_flight.contains_key(&id) {
            drop(state);
            return self.reply(
                id.clone(),
                Err(ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    format!("request id {id} is already in use by a running call"),
                )),
            );
        }
        let server = self.clone();
        let task_id = id.clone();
        // The map stays locked until the handle is in it, so the task (which
        // removes itself when done) can never run ahead of the insertion.
        let task = tokio::spawn(async move {
            let result = future.await;
            // A call that was cancelled in the meantime gets no reply.
            let wanted = server.state().in_flight.remove(&task_id).is_some();
            if wanted {
                server.reply(task_id, result);
            }
        });
        state.in_flight.insert(id, task.abort_handle());
    }

    /// Sends the reply to a client request, counting it for `--exit-after`.
    fn reply(&self, addr: Addr, result: Result<Value, ErrorObject>) {
        let Addr { origin, id } = addr;
        let message = match result {
            Ok(result) => Message::Response(Response::new(id.clone(), result)),
            Err(error) => Message::Error(ErrorResponse::new(Some(id.clone()), error)),
        };
        // Counting and queueing under one lock keeps the exit right after
        // the N-th reply, whichever task sends it.
        let mut state = self.state();
        state.answered += 1;
        let _ = self.inner.out.send(Outgoing::message(message, Some(id), origin));
        if self.inner.config.exit_after.is_some_and(|n| state.answered == n) {
            let _ = self.inner.out.send(Outgoing::Exit(0));
        }
    }

    fn send_error(&self, id: Option<RequestId>, error: ErrorObject) {
        let message = Message::Error(ErrorResponse::new(id.clone(), error));
        self.send(Outgoing::message(message, id, 0));
    }

    fn reject_invalid(&self, id: Option<RequestId>, error: &DecodeError) {
        self.send_error(
            id,
            ErrorObject::new(error_code::INVALID_REQUEST, format!("Invalid Request: {error}")),
        );
    }

    /// Queues an item for the driver. A closed queue means the driver is
    /// gone, and there is no one left to tell.
    pub(crate) fn send(&self, item: Outgoing) {
        let _ = self.inner.out.send(item);
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>, related: Option<Addr>) {
        let message = Message::Notification(Notification::new(method, params));
        self.send_related(message, related);
    }

    /// Queues a message related to a client request (or to none).
    fn send_related(&self, message: Message, related: Option<Addr>) {
        let origin = related.as_ref().map_or(0, |a| a.origin);
        self.send(Outgoing::message(message, related.map(|a| a.id), origin));
    }

    /// Sends a request to the client and waits for its answer: the result,
    /// or the error object the client replied with.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        related: Option<Addr>,
    ) -> Result<Result<Value, ErrorObject>, AskTimeout> {
        let n = self.inner.next_server_request.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        self.state().pending.insert(id.clone(), tx);
        // Removes the entry however this future ends (answer, timeout, abort).
        let _guard = PendingGuard { server: self, id: id.clone() };
        let message = Message::Request(Request::new(id, method, params));
        self.send_related(message, related);
        let timeout = self.inner.config.ask_timeout;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            // The sender lives in `pending` until the answer or the guard
            // removes it, so a closed channel only means time ran out.
            Ok(Err(_)) | Err(_) => Err(AskTimeout(timeout)),
        }
    }

    fn complete(&self, id: RequestId, answer: Result<Value, ErrorObject>) {
        let waiter = self.state().pending.remove(&id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => stderr_line(&format!("testkit: the client answered unknown request id {id}")),
        }
    }

    /// Aborts every running tool call (they are never answered): the HTTP
    /// driver calls it when a session ends.
    #[cfg(feature = "http")]
    pub(crate) fn abort_all(&self) {
        let mut state = self.state();
        for (_, task) in state.in_flight.drain() {
            task.abort();
        }
        state.listens.clear();
        state.tasks.abort_all();
    }

    /// The ids the client cancelled, as it sent them.
    pub(crate) fn cancelled_ids(&self) -> Vec<Value> {
        self.state().cancelled.clone()
    }

    /// Flips the `extra` tool in or out of the list; `true` if it is now in.
    pub(crate) fn toggle_extra_tool(&self) -> bool {
        let mut state = self.state();
        state.extra_tool = !state.extra_tool;
        state.extra_tool
    }

    /// Whether the `extra` tool is listed (and so callable).
    pub(crate) fn extra_tool(&self) -> bool {
        self.state().extra_tool
    }

    /// Whether the client subscribed to the resource `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.state().subscriptions.contains(uri)
    }

    /// Whether a log message at `level` (an index into [`LOG_LEVELS`]) passes
    /// the client's `logging/setLevel`.
    pub(crate) fn log_level_enabled(&self, level: usize) -> bool {
        level >= self.state().min_log_level
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock; if one ever did, the
        // state is still consistent enough for a test server to go on.
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct PendingGuard<'a> {
    server: &'a Server,
    id: RequestId,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.server.state().pending.remove(&self.id);
    }
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

/// `resources/read`.
fn read_resource(params: Option<&Value>) -> Result<Value, ErrorObject> {
    let uri = features::uri_param(params)?;
    let contents = features::read(uri).ok_or_else(|| features::not_found(uri))?;
    Ok(json!({ "contents": [contents] }))
}

/// The id of a JSON object that is not a valid message, when it has a usable
/// one (JSON-RPC answers an invalid request with its id if it can be read).
fn id_of_invalid(bytes: &[u8]) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    serde_json::from_value(value.get("id")?.clone()).ok()
}

/// Writes one line to the process's stderr (the server's log), ignoring
/// failures: a closed stderr must not stop the server.
pub(crate) fn stderr_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.write_all(b"\n");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init_request(id: i64, version: &str) -> Message {
        Message::Request(Request::new(
            id,
            "initialize",
            Some(json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            })),
        ))
    }

    fn next_message(queue: &mut OutgoingQueue) -> Message {
        match queue.try_recv() {
            Ok(Outgoing::Message { message, .. }) => message,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    fn result_of(message: Message) -> Value {
        match message {
            Message::Response(r) => r.result,
            other => panic!("expected a response, got {other:?}"),
        }
    }

    fn error_of(message: Message) -> ErrorObject {
        match message {
            Message::Error(e) => e.error,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn negotiation_answers_known_versions_and_falls_back_to_latest() {
        let cases = [
            ("2024-11-05", "2024-11-05"),
            ("2025-03-26", "2025-03-26"),
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
            ("2026-07-28", "2025-11-25"),
            ("garbage", "2025-11-25"),
        ];
        for (offered, answered) in cases {
            let (server, mut queue) = Server::new(Config::default());
            server.handle(init_request(1, offered));
            let result = result_of(next_message(&mut queue));
            assert_eq!(result["protocolVersion"], answered, "offered {offered}");
            assert_eq!(server.negotiated_version().as_deref(), Some(answered));
        }
    }

    #[tokio::test]
    async fn pagination_walks_pages_and_rejects_foreign_cursors() {
        let config = Config { page_size: Some(4), ..Config::default() };
        let (server, mut queue) = Server::new(config);
        server.handle(init_request(1, "2025-11-25"));
        next_message(&mut queue);
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        for id in 2.. {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            server.handle(Message::Request(Request::new(id, "tools/list", params)));
            let page = result_of(next_message(&mut queue));
            let tools = page["tools"].as_array().unwrap();
            assert!(tools.len() <= 4 && !tools.is_empty());
            names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
            match page.get("nextCursor") {
                Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
                None => break,
            }
        }
        let all: Vec<String> = tools::definitions(false, false)
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, all);
        for bad in ["page:1", "page:99", "page:x", "", "page:0"] {
            server.handle(Message::Request(Request::new(
                100,
                "tools/list",
                Some(json!({ "cursor": bad })),
            )));
            assert_eq!(
                error_of(next_message(&mut queue)).code,
                error_code::INVALID_PARAMS,
                "{bad}"
            );
        }
    }

    #[tokio::test]
    async fn exit_after_follows_the_nth_reply() {
        let config = Config { exit_after: Some(2), ..Config::default() };
        let (server, mut queue) = Server::new(config);
        server.handle(init_request(1, "2025-11-25"));
        server.handle(Message::Request(Request::new(2, "ping", None)));
        next_message(&mut queue);
        next_message(&mut queue);
        assert_eq!(queue.try_recv().ok(), Some(Outgoing::Exit(0)));
    }
}
