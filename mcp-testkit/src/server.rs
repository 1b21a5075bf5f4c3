//! The testkit's server: an `mcp_server_io` [`Session`] whose handler is
//! the testkit's tools, resources, prompts, tasks and fault switches.
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

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use mcp_proto::jsonrpc::{ErrorObject, Message, RequestId, error_code};
use mcp_proto::methods;
use mcp_server_io::era;
use mcp_server_io::session::{RequestTimeout, SessionOptions};
use mcp_server_io::stateless::{Change, RequestMeta};
use mcp_server_io::tasks::TaskSupport;
use mcp_server_io::{
    Context, Handler, Outgoing, OutgoingQueue, Params, Reply, RequestKey, ServerInfo, Session,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::config::Config;
use crate::modern;
use crate::tasks::{self, Tasks};
use crate::tools::StrOrValue;
use crate::{features, fixtures, task_fixtures, tools};

/// How many stateless-era requests [`Server::received_log`] remembers.
const RECEIVED_LOG_CAP: usize = 256;

/// A client request as the session keys it: its id and where it came in
/// (see [`Server::handle_from`]).
pub(crate) type Addr = RequestKey;

/// The client did not answer a server-to-client request in time.
pub(crate) type AskTimeout = RequestTimeout;

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = Value> + Send + 'static>>;

/// A scriptable MCP server for one client session.
///
/// Cheap to clone: clones share the session. Every method must be called
/// from within a Tokio runtime (tool calls that wait are spawned on it).
#[derive(Debug, Clone)]
pub struct Server {
    session: Session<Testkit>,
}

/// The testkit as an `mcp_server_io` handler: its configuration and what
/// its tools change.
#[derive(Debug)]
pub(crate) struct Testkit {
    config: Config,
    info: ServerInfo,
    state: Mutex<State>,
    /// Each listed tool's `execution.taskSupport` in the stateless era,
    /// with the `extra` tool off (`[0]`) and on (`[1]`): built on first
    /// use, since the definitions change with nothing else, so a
    /// `tools/call` does not rebuild every definition to find its own.
    task_support: [OnceLock<HashMap<String, TaskSupport>>; 2],
}

#[derive(Debug, Default)]
pub(crate) struct State {
    /// The `requestId` of every `notifications/cancelled`, in arrival order.
    cancelled: Vec<Value>,
    /// Whether the `extra` tool is listed.
    extra_tool: bool,
    /// The URIs of `resources/subscribe`, less those of `resources/unsubscribe`.
    pub(crate) subscriptions: BTreeSet<String>,
    /// The tasks of task-augmented `tools/call`s.
    pub(crate) tasks: Tasks,
    /// What the stateless-era requests carried (`received_log`).
    received: VecDeque<modern::Received>,
    /// The number of the next `retry_once` state.
    next_retry: u64,
}

impl Handler for Testkit {
    fn capabilities(&self, version: Option<&str>) -> Value {
        let mut capabilities = json!({
            "tools": { "listChanged": true },
            "logging": {},
            "resources": { "subscribe": true, "listChanged": true },
            "prompts": { "listChanged": true },
            "completions": {},
        });
        // The handshake era's tasks from 2025-11-25; the stateless era's
        // (`server/discover`, no version) are the tasks extension.
        match version {
            Some(version) if era::supports_tasks(version) => {
                capabilities["tasks"] =
                    json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            }
            Some(_) => {}
            None => {
                capabilities["extensions"] = json!({ mcp_proto::types::TASKS_EXTENSION: {} });
            }
        }
        capabilities
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        let (session, key, meta) = cx.into_parts();
        let server = Server { session };
        // The hot path: decoded into what the call needs, its arguments
        // into what the tool needs.
        if method == methods::TOOLS_CALL {
            return server.call_tool(key, &params, meta);
        }
        let params = match params.into_value() {
            Ok(params) => params,
            Err(error) => return Reply::Now(Err(error)),
        };
        match meta {
            Some(meta) => server.stateless(method, params, meta),
            None => server.legacy(method, params),
        }
    }

    fn notification(&self, _: &Session<Self>, method: &str, params: Option<&Value>) {
        if method == methods::NOTIFICATION_CANCELLED
            && let Some(id) = params.and_then(|p| p.get("requestId"))
        {
            self.state().cancelled.push(id.clone());
        }
    }

    fn negotiate(&self, offered: &str) -> String {
        match &self.config.version_override {
            Some(version) => version.clone(),
            None => era::handshake_version(offered).as_str().to_owned(),
        }
    }

    fn initializing(&self, cx: &Context<Self>) {
        if self.config.send_list_changed_before_init {
            cx.notify(methods::NOTIFICATION_TOOLS_LIST_CHANGED, None);
        }
    }

    fn stateless_request(&self, id: &RequestId, method: &str, meta: &RequestMeta, params: &Params) {
        let mut state = self.state();
        state.received.push_back(modern::Received::new(id, method, meta, params));
        if state.received.len() > RECEIVED_LOG_CAP {
            state.received.pop_front();
        }
    }

    fn resource_exists(&self, uri: &str) -> bool {
        features::exists(uri) || self.config.conformance_fixtures && fixtures::read(uri).is_some()
    }

    fn param_headers(&self, tool: &str) -> Vec<(String, String)> {
        tools::param_headers(tool).to_vec()
    }

    fn ignores(&self, method: &str) -> bool {
        // A legacy server that ignores what it does not know.
        method == methods::SERVER_DISCOVER && self.config.silent_discover
    }

    fn exit_after_reply(&self, answered: u64) -> Option<i32> {
        self.config.exit_after.is_some_and(|n| answered == n).then_some(0)
    }

    fn stray(&self, what: &str) {
        stderr_line(&format!("testkit: {what}"));
    }
}

/// The session options of a configuration: its era, how long a request
/// to the client waits, and the cap on requests in flight.
pub(crate) fn session_options(config: &Config) -> SessionOptions {
    let options = SessionOptions::new(config.era).with_request_timeout(config.ask_timeout);
    match config.max_in_flight {
        Some(max) => options.with_max_in_flight(max),
        None => options,
    }
}

impl Testkit {
    /// The handler of one session.
    pub(crate) fn new(config: Config) -> Testkit {
        let mut info = ServerInfo::new("mcp-testkit", env!("CARGO_PKG_VERSION"));
        info.implementation = modern::server_info();
        info.instructions = config.instructions.clone();
        info.discover_ttl_ms = config.ttl_ms;
        Testkit {
            config,
            info,
            state: Mutex::new(State::default()),
            task_support: [OnceLock::new(), OnceLock::new()],
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock; if one ever did, the
        // state is still consistent enough for a test server to go on.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Server {
    /// A server in its pre-`initialize` state, and the queue of what it
    /// sends.
    pub fn new(config: Config) -> (Server, OutgoingQueue) {
        let options = session_options(&config);
        let (session, queue) = Session::new(Testkit::new(config), options);
        (Server { session }, queue)
    }

    /// The server of a session the HTTP service started.
    #[cfg(feature = "http")]
    pub(crate) fn from_session(session: Session<Testkit>) -> Server {
        Server { session }
    }

    /// The configuration the server was started with.
    pub fn config(&self) -> &Config {
        &self.session.handler().config
    }

    /// The `protocolVersion` the server answered to `initialize`, once it has.
    pub fn negotiated_version(&self) -> Option<String> {
        self.session.negotiated_version()
    }

    /// Handles the JSON text of one incoming frame (a stdio line, an HTTP
    /// POST body).
    ///
    /// Text that is not JSON is answered with a `-32700` parse error, JSON
    /// that is not a JSON-RPC message with `-32600`; both with a `null` id
    /// unless the id could be read. A batch (2025-03-26) is handled element
    /// by element, each reply sent on its own.
    pub fn handle_json(&self, bytes: &[u8]) {
        self.session.handle_json(bytes);
    }

    /// Answers a frame that was too long to read (the driver discarded it).
    pub fn reject_oversized(&self, limit: usize) {
        self.session.reject_oversized(limit);
    }

    /// Handles one message from the client.
    pub fn handle(&self, message: Message) {
        self.session.handle(message);
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
        self.session.handle_from(origin, message);
    }

    /// A handshake-era request the session handed over.
    fn legacy(&self, method: &str, params: Option<Value>) -> Reply {
        let result = match method {
            methods::TOOLS_LIST => self.list_tools(params),
            methods::RESOURCES_LIST => {
                self.paginate(params.as_ref(), "resources", self.resources())
            }
            methods::RESOURCES_TEMPLATES_LIST => {
                self.paginate(params.as_ref(), "resourceTemplates", self.resource_templates())
            }
            methods::RESOURCES_READ => self.read_resource(params.as_ref()),
            methods::RESOURCES_SUBSCRIBE => self.subscribe(params.as_ref(), true),
            methods::RESOURCES_UNSUBSCRIBE => self.subscribe(params.as_ref(), false),
            methods::PROMPTS_LIST => self.paginate(params.as_ref(), "prompts", self.prompts()),
            methods::PROMPTS_GET => self.get_prompt(params),
            methods::COMPLETION_COMPLETE => features::complete(params),
            methods::TASKS_GET if self.tasks_enabled() => {
                tasks::task_id_param(params.as_ref()).and_then(|task| self.state().tasks.get(task))
            }
            methods::TASKS_LIST if self.tasks_enabled() => {
                let all = self.state().tasks.list();
                self.paginate(params.as_ref(), "tasks", all)
            }
            methods::TASKS_CANCEL if self.tasks_enabled() => self.cancel_task(params.as_ref()),
            methods::TASKS_RESULT if self.tasks_enabled() => return self.task_result(params),
            _ => Err(ErrorObject::method_not_found(method)),
        };
        Reply::Now(result)
    }

    /// A stateless-era request the session handed over (its `_meta` read
    /// and recorded; `resultType` and `serverInfo` are added to the
    /// result).
    fn stateless(&self, method: &str, params: Option<Value>, meta: RequestMeta) -> Reply {
        if !modern::serves(method) {
            return Reply::Now(Err(ErrorObject::method_not_found(method)));
        }
        let ttl = self.config().ttl_ms;
        let public = |result: Result<Value, ErrorObject>| {
            result.map(|r| modern::cacheable(r, ttl, "public"))
        };
        let result = match method {
            methods::TOOLS_LIST => {
                let all = self.described(self.tool_definitions(true));
                public(self.paginate(params.as_ref(), "tools", all))
            }
            methods::RESOURCES_LIST => {
                public(self.paginate(params.as_ref(), "resources", self.resources()))
            }
            methods::RESOURCES_TEMPLATES_LIST => public(self.paginate(
                params.as_ref(),
                "resourceTemplates",
                self.resource_templates(),
            )),
            methods::PROMPTS_LIST => {
                public(self.paginate(params.as_ref(), "prompts", self.prompts()))
            }
            methods::RESOURCES_READ
                if params.as_ref().and_then(|p| p.get("uri")) == Some(&json!(modern::ASK_URI)) =>
            {
                modern::ask_read(&meta, ttl)
            }
            methods::PROMPTS_GET
                if params.as_ref().and_then(|p| p.get("name"))
                    == Some(&json!(modern::ASK_PROMPT)) =>
            {
                modern::ask_prompt(&meta)
            }
            methods::RESOURCES_READ => match self.read_resource(params.as_ref()) {
                Ok(result) => Ok(modern::cacheable(result, ttl, "private")),
                // SEP-2164: the stateless era answers an unknown resource
                // with -32602 (the handshake era keeps -32002).
                Err(mut error) if error.code == error_code::RESOURCE_NOT_FOUND => {
                    error.code = error_code::INVALID_PARAMS;
                    Err(error)
                }
                Err(error) => Err(error),
            },
            methods::PROMPTS_GET => self.get_prompt(params),
            methods::COMPLETION_COMPLETE => features::complete(params),
            m if mcp_server_io::tasks::is_task_method(m) => {
                self.task_method(m, params.as_ref(), &meta)
            }
            _ => Err(ErrorObject::method_not_found(method)),
        };
        Reply::Now(result)
    }

    /// Sends a change to every `subscriptions/listen` stream that asked for
    /// it, with its `subscriptionId`; returns how many got it.
    pub(crate) fn broadcast(&self, change: &Change) -> usize {
        self.session.broadcast(change)
    }

    /// Ends every `subscriptions/listen` stream gracefully: each gets its
    /// result (`resultType: "complete"`, its `subscriptionId`). Returns how
    /// many there were.
    pub(crate) fn close_subscriptions(&self) -> usize {
        self.session.close_subscriptions()
    }

    /// What every stateless-era request carried, oldest first (the last
    /// 256): `{id, method, protocolVersion, clientCapabilities, clientInfo?,
    /// logLevel?, name?, requestState?, inputResponses?}`. The
    /// `received_log` tool answers the same.
    pub fn received_log(&self) -> Vec<Value> {
        self.state().received.iter().map(modern::Received::to_value).collect()
    }

    /// The number for the next `retry_once` request state.
    pub(crate) fn next_retry(&self) -> u64 {
        let mut state = self.state();
        state.next_retry += 1;
        state.next_retry
    }

    fn call_tool(&self, id: Addr, params: &Params, modern: Option<RequestMeta>) -> Reply {
        // Text (a driver's, the usual) is read borrowing from it; a value
        // (a message handed over decoded) has its arguments boxed as text.
        if let Some(plain) = plain_call_params(params) {
            return self.call_decoded(id, Ok(Some(plain)), modern);
        }
        match params.value() {
            None => self.call_decoded(id, params.decode::<CallParams<'_, &RawValue>>(), modern),
            Some(_) => {
                self.call_decoded(id, params.decode::<CallParams<'_, Box<RawValue>>>(), modern)
            }
        }
    }

    fn call_decoded<A: JsonText>(
        &self,
        id: Addr,
        decoded: Result<Option<CallParams<'_, A>>, ErrorObject>,
        modern: Option<RequestMeta>,
    ) -> Reply {
        let params = match decoded {
            Ok(Some(params)) => params,
            Ok(None) => return Reply::Now(Err(invalid_params("tools/call needs params"))),
            Err(e) => {
                let message = format!("tools/call needs params: {}", e.message);
                return Reply::Now(Err(invalid_params(message)));
            }
        };
        let name = match params.name {
            Some(StrOrValue::Str(name)) => name,
            _ => return Reply::Now(Err(invalid_params("tools/call needs a string name"))),
        };
        // Kept as text: decoded by the tool, into what it takes.
        let arguments: Option<&str> = params.arguments.as_ref().map(JsonText::json_text);
        if arguments.is_some_and(|a| !a.starts_with('{')) {
            return Reply::Now(Err(invalid_params("tool arguments must be an object")));
        }
        let map = || tools::arguments_map(arguments);
        let progress_token = params
            .meta
            .and_then(|m| m.progress_token)
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
        if let Some(task) = params.task.filter(|t| !t.is_null())
            && self.tasks_enabled()
            && modern.is_none()
        {
            match map() {
                Ok(arguments) => {
                    self.call_tool_as_task(id, &name, arguments, progress_token, &task);
                    return Reply::Silent;
                }
                Err(error) => return Reply::Now(Err(error)),
            }
        }
        // Where a result given as text goes.
        let key = id.clone();
        let stateless = modern.is_some();
        let call = tools::Call { server: self.clone(), id, progress_token, task: None, modern };
        if let Some(meta) = &call.modern
            && let Some(reply) = self.stateless_call(&call, &name, map, meta)
        {
            return reply;
        }
        let fixtures = self.config().conformance_fixtures;
        let fixture = if fixtures && (name.starts_with("test_") || call.modern.is_some()) {
            let arguments = match map() {
                Ok(arguments) => arguments,
                Err(error) => return Reply::Now(Err(error)),
            };
            if name.starts_with("test_") {
                fixtures::run(call.clone(), &name, &arguments)
            } else {
                task_fixtures::run(&name, &arguments)
            }
        } else {
            None
        };
        let outcome = match fixture {
            Some(outcome) => outcome,
            None => tools::run_text(call, &name, arguments),
        };
        match outcome {
            tools::Outcome::Reply(result) => Reply::Now(result),
            tools::Outcome::Text(json) => {
                // Sent as it is (in the stateless era with the era's
                // members added), before the handler returns.
                match stateless {
                    true => self.session.reply_raw_stateless(key, Ok(json)),
                    false => self.session.reply_raw(key, Ok(json)),
                }
                Reply::Silent
            }
            tools::Outcome::Spawn(future) => {
                Reply::Later(Box::pin(async move { Ok(future.await) }))
            }
            tools::Outcome::NoReply => Reply::Silent,
        }
    }

    /// Sends the reply to a client request (for the answers sent before
    /// their handler returns: a task's creation).
    pub(crate) fn reply(&self, key: Addr, result: Result<Value, ErrorObject>) {
        self.session.reply(key, result);
    }

    /// Queues an item for the driver.
    pub(crate) fn send(&self, item: Outgoing) {
        self.session.send(item);
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>, related: Option<Addr>) {
        self.session.notify(method, params, related.as_ref());
    }

    /// Sends a request to the client and waits for its answer: the result,
    /// or the error object the client replied with.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        related: Option<Addr>,
    ) -> Result<Result<Value, ErrorObject>, AskTimeout> {
        self.session.request(method, params, related.as_ref()).await
    }

    /// Aborts every task (never answered): the HTTP driver calls it when
    /// a session ends, after the session aborted its running calls.
    #[cfg(feature = "http")]
    pub(crate) fn abort_tasks(&self) {
        self.state().tasks.abort_all();
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

    /// The `execution.taskSupport` that the stateless era's `tools/list`
    /// shows for the tool `name`; `None` when no such tool is listed.
    pub(crate) fn task_support(&self, name: &str) -> Option<TaskSupport> {
        let extra = self.extra_tool();
        let table = self.session.handler().task_support[usize::from(extra)].get_or_init(|| {
            self.definitions(extra, true)
                .iter()
                .filter_map(|t| Some((t["name"].as_str()?.to_owned(), TaskSupport::of_tool(t))))
                .collect()
        });
        table.get(name).copied()
    }

    /// Whether the client subscribed to the resource `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.state().subscriptions.contains(uri)
    }

    /// Whether a log message at `level` (an index into `LOG_LEVELS`) passes
    /// the client's `logging/setLevel`.
    pub(crate) fn log_level_enabled(&self, level: usize) -> bool {
        self.session.log_level_enabled(level)
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.session.handler().state()
    }

    /// Whether a resource exists (the fixtures' too when they are on).
    pub(crate) fn resource_exists(&self, uri: &str) -> bool {
        self.session.handler().resource_exists(uri)
    }
}

pub(crate) fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

/// A call's arguments as JSON text: borrowed from the parameters' text
/// (as a raw value, or a part of it found by a scan), or boxed.
trait JsonText {
    /// The text, one JSON value.
    fn json_text(&self) -> &str;
}

impl JsonText for &RawValue {
    fn json_text(&self) -> &str {
        self.get()
    }
}

impl JsonText for Box<RawValue> {
    fn json_text(&self) -> &str {
        self.get()
    }
}

impl JsonText for &str {
    fn json_text(&self) -> &str {
        self
    }
}

/// What the testkit reads of `tools/call`'s parameters: the name
/// borrowed where it can be, the arguments kept as their text (`A`:
/// borrowed from the parameters' text, or boxed) until the tool decodes
/// what it takes.
#[derive(Deserialize)]
struct CallParams<'a, A> {
    #[serde(borrow)]
    name: Option<StrOrValue<'a>>,
    arguments: Option<A>,
    #[serde(rename = "_meta")]
    meta: Option<CallMeta>,
    task: Option<Value>,
}

/// The usual `tools/call` parameters, found without decoding them
/// ([`Params::plain_call_and_meta`]), a `_meta` (a progress token)
/// decoded alone: what a decoding gives. `None` for anything else, and
/// for a `_meta` that does not decode (the whole decoding says why, as
/// for any other text).
fn plain_call_params(params: &Params) -> Option<CallParams<'_, &str>> {
    let (name, arguments, meta) = params.plain_call_and_meta()?;
    let meta = match meta {
        None => None,
        // The `_meta` a client that asks for progress sends most often.
        Some(meta) if let Some(token) = integer_token_alone(meta) => {
            Some(CallMeta { progress_token: Some(token) })
        }
        // The usual `_meta`, a token alone: found by a scan too.
        Some(meta) => match mcp_proto::jsonrpc::plain_members(meta, ["progressToken"]) {
            Some([token]) => {
                // `null` is none, as a decoding of the `Option` reads it.
                let token = token.filter(|t| *t != "null");
                let progress_token = token.map(serde_json::from_str).transpose().ok()?;
                Some(CallMeta { progress_token })
            }
            None => serde_json::from_str::<Option<CallMeta>>(meta).ok()?,
        },
    };
    let name = Some(StrOrValue::Str(Cow::Borrowed(name)));
    Some(CallParams { name, arguments, meta, task: None })
}

/// The token of `{"progressToken":N}` exactly (as a client that asks for
/// progress writes it, the request's id as the token), `N` a
/// non-negative integer of at most 19 digits (below `u64::MAX`): the value
/// a decoding gives, with neither a scan of the members nor a decoding.
/// `None` for anything else. `meta` is JSON text already checked, so its
/// digits have no leading zero.
fn integer_token_alone(meta: &str) -> Option<Value> {
    let digits = meta.strip_prefix(r#"{"progressToken":"#)?.strip_suffix('}')?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok().map(Value::from)
}

/// The member of a call's `_meta` the testkit reads.
#[derive(Deserialize)]
struct CallMeta {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
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
    use mcp_proto::jsonrpc::{Received, ReceivedIncoming, Request, decode_received};

    /// What `tools/call`'s parameters were read as before the name and
    /// the arguments were borrowed.
    mod as_values {
        use super::*;

        /// Named as the type it checks: serde's errors name it.
        #[derive(Deserialize)]
        pub(super) struct CallParams {
            pub(super) name: Option<Value>,
            pub(super) arguments: Option<Box<RawValue>>,
            #[serde(rename = "_meta")]
            pub(super) meta: Option<CallMeta>,
            pub(super) task: Option<Value>,
        }
    }

    type Read = (Option<Value>, Option<String>, Option<Option<Value>>, Option<Value>);

    fn read_as_values(params: &Params) -> Result<Option<Read>, ErrorObject> {
        Ok(params.decode::<as_values::CallParams>()?.map(|p| {
            let arguments = p.arguments.map(|a| a.get().to_owned());
            (p.name, arguments, p.meta.map(|m| m.progress_token), p.task)
        }))
    }

    fn read<A: JsonText>(
        decoded: Result<Option<CallParams<'_, A>>, ErrorObject>,
    ) -> Result<Option<Read>, ErrorObject> {
        Ok(decoded?.map(|p| {
            let arguments = p.arguments.map(|a| a.json_text().to_owned());
            let name = p.name.map(StrOrValue::into_value);
            (name, arguments, p.meta.map(|m| m.progress_token), p.task)
        }))
    }

    #[test]
    fn call_params_are_read_as_values_would_be() {
        let shapes = [
            r#"{"name":@@,"arguments":{"message":"m"}}"#,
            r#"{"arguments":{"a":[1,"}"]},"name":@@}"#,
            r#"{ "name" : @@ , "arguments" : { } }"#,
            r#"{"name":@@,"name":"again"}"#,
            r#"{"name":"echo","arguments":@@}"#,
            r#"{"name":"echo","arguments":{},"arguments":@@}"#,
            r#"{"n\u0061me":@@,"_meta":{"progressToken":@@}}"#,
            r#"{"name":"t","_meta":@@,"task":@@}"#,
            r#"{"name":"t","_meta":{"progressToken":1,"progressToken":2}}"#,
            r#"{"name":"echo","arguments":{"message":"m"},"_meta":@@}"#,
            r#"{"_meta":{"progressToken":@@},"name":"echo","arguments":{}}"#,
            r#"{"name":"echo","arguments":{},"_meta":{"progressToken":@@}}"#,
            r#"{"name":"t","x":1e400,"arguments":{"y":1e400}}"#,
            "[@@]",
            "[]",
            "{}",
        ];
        let (mut checked, mut plain_read, mut with_meta) = (0, 0, 0);
        for shape in shapes {
            for member in tools::MEMBER_TEXTS {
                let Ok(text) = RawValue::from_string(shape.replace("@@", member)) else {
                    continue;
                };
                let params = Params::from_text(Some(text.clone()));
                let ours = read(params.decode::<CallParams<'_, &RawValue>>());
                assert_eq!(ours, read_as_values(&params), "{text}");
                checked += 1;
                // The usual shape, found by a scan: the same.
                if let Some(plain) = plain_call_params(&params) {
                    assert_eq!(read(Ok(Some(plain))), read_as_values(&params), "{text}");
                    plain_read += 1;
                }
                // Found by the decoding that checks a request's text, a
                // `_meta` too: the same.
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}}"#,
                    text.get()
                );
                if let Ok(ReceivedIncoming::Single(Received::Request(request))) =
                    decode_received(line.as_bytes())
                {
                    let received = Params::received(request.params, request.call);
                    if let Some(plain) = plain_call_params(&received) {
                        assert_eq!(read(Ok(Some(plain))), read_as_values(&received), "{text}");
                        with_meta += usize::from(received.plain_call().is_none());
                    }
                }
                // Held as a value: the same (where a value can hold it).
                let Ok(value) = serde_json::from_str::<Value>(text.get()) else { continue };
                let params = Params::from_value(Some(value));
                let ours = read(params.decode::<CallParams<'_, Box<RawValue>>>());
                assert_eq!(ours, read_as_values(&params), "{text}");
            }
        }
        assert!(
            checked > 150 && plain_read > 10 && with_meta > 10,
            "{checked} {plain_read} {with_meta}"
        );
        assert_eq!(read(Params::default().decode::<CallParams<'_, &RawValue>>()), Ok(None));
    }

    #[test]
    fn an_integer_token_alone_is_read_as_a_decoding_reads_it() {
        for meta in [
            r#"{"progressToken":0}"#,
            r#"{"progressToken":7}"#,
            r#"{"progressToken":9999999999999999999}"#,
        ] {
            let decoded = serde_json::from_str::<CallMeta>(meta).unwrap().progress_token;
            assert_eq!(integer_token_alone(meta), decoded, "{meta}");
        }
        for meta in [
            r#"{"progressToken":-1}"#,
            r#"{"progressToken":18446744073709551615}"#,
            r#"{"progressToken":1.5}"#,
            r#"{"progressToken":"t"}"#,
            r#"{"progressToken":null}"#,
            r#"{"progressToken":}"#,
            r#"{ "progressToken":1}"#,
            r#"{"progressToken":1,"x":2}"#,
        ] {
            assert_eq!(integer_token_alone(meta), None, "{meta}");
        }
    }

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
