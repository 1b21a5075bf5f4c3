//! The bridge's calls and tasks: `tools/call` through the registry's
//! policy, approval, pins and audit (a tool name routed to its server, the
//! arguments mapped back from a shaped schema, progress and log level
//! passed on, a login on a 401, an upstream task handed to a host that
//! takes tasks), search mode's `search_tools`, and `tasks/get`,
//! `tasks/update`, `tasks/cancel` to the server that made the task. The
//! lists, reads and prompts are `handler.rs`'s.

use std::sync::Arc;

use mcp_host_registry::mcp_peer::tasks::ToolCallStart;
use mcp_host_registry::mcp_peer::{Client, Transport};
use mcp_host_registry::shape::{SchemaTarget, ShapeLimits, shape_tool};
use mcp_host_registry::{Error, PlainRoute, Registry};
use mcp_proto::client::{BoxFuture, CallerRound, RequestOptions};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{LOG_LEVEL_META_KEY, ProgressNotificationParams, TaskSupport};
use mcp_server_io::logging::LOG_LEVELS;
use mcp_server_io::stateless::RequestMeta;
use mcp_server_io::{Params, Session};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::HOST_ANSWER_TIMEOUT;
use super::handler::{Bridge, error_object, invalid, nothing_new, split_meta};
use super::host::{Reach, reach};
use super::input::{self, CallFuture, ProgressTarget};
use super::login::Logins;
use super::{search, tasks};

/// The target of the debug event of each call taken by
/// [`Bridge::forward_plain`] (a test tells the two paths apart by it).
const PLAIN_TARGET: &str = "mcpc::serve::plain";

impl Bridge {
    /// A call's arguments as the tool takes them, from arguments valid
    /// under the shaped schema the host was given (with no shaping, the
    /// host's text as it is).
    pub(super) async fn unshape(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Box<RawValue>>,
    ) -> Result<Option<Box<RawValue>>, ErrorObject> {
        let arguments = match arguments {
            Some(arguments) if self.schemas != SchemaTarget::Unchanged => arguments,
            unchanged => return Ok(unchanged),
        };
        let tools = self
            .with_login(server, || self.registry.list_tools(server))
            .await
            .map_err(|e| self.error(e))?;
        let Some(listed) = tools.iter().find(|t| t.name == tool) else {
            return Ok(Some(arguments));
        };
        let shaped = shape_tool(listed, self.schemas, &ShapeLimits::default())
            .map_err(|e| invalid(&format!("the tool's input schema cannot be shaped: {e}")))?;
        let arguments: Value = serde_json::from_str(arguments.get())
            .map_err(|e| invalid(&format!("tools/call arguments: {e}")))?;
        match shaped.arguments.to_original(arguments) {
            original @ Value::Object(_) => serde_json::value::to_raw_value(&original)
                .map(Some)
                .map_err(|e| invalid(&format!("tools/call arguments: {e}"))),
            _ => Err(invalid("tools/call arguments must be an object")),
        }
    }

    /// Whether `server`'s tool `tool` runs only as a task (its listed
    /// `execution.taskSupport` is `required`).
    async fn requires_task(&self, server: &str, tool: &str) -> Result<bool, ErrorObject> {
        let tools = self
            .with_login(server, || self.registry.list_tools(server))
            .await
            .map_err(|e| self.error(e))?;
        let listed = tools.iter().find(|t| t.name == tool);
        let support = listed.and_then(|t| t.execution.as_ref()?.task_support.as_ref());
        Ok(support == Some(&TaskSupport::Required))
    }

    /// `search_tools` (search mode): the served tools that fit the query.
    pub(super) async fn search_tools(&self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let (query, limit) = search::query(params.and_then(|p| p.get("arguments")))?;
        let listed = self.listed_tools().await?;
        Ok(search::found(&listed, &query, limit))
    }

    /// The server and tool a host's tool name goes to, listing the tools
    /// first when the host calls one it was not given yet.
    async fn route_tool(&self, name: String) -> Result<(String, String), ErrorObject> {
        let name = match self.routes().take_tool(name) {
            Ok(route) => return Ok(route),
            Err(name) => name,
        };
        self.listed_tools().await?;
        self.routes().tool(&name).ok_or_else(|| {
            ErrorObject::new(error_code::INVALID_PARAMS, format!("Unknown tool: {name}"))
        })
    }

    /// A host's `tools/call`: in search mode, one of its two tools; else
    /// the tool it names ([`call_tool`](Self::call_tool)).
    pub(super) async fn tool_call(
        &self,
        session: Session<Bridge>,
        key: mcp_server_io::RequestKey,
        meta: Option<&RequestMeta>,
        params: Params,
    ) -> Result<Called, ErrorObject> {
        if !self.tools_fixed() || meta.is_some_and(|m| m.request_state.is_some()) {
            return self.call_tool(session, key, meta, params).await;
        }
        let params = params.into_value()?.unwrap_or_default();
        match params.get("name").and_then(Value::as_str) {
            Some(search::SEARCH_TOOL) => self.search_tools(Some(&params)).await.map(Called::Value),
            Some(search::CALL_TOOL) => {
                let direct = search::direct_call(&params)?;
                self.call_tool(session, key, meta, Params::from_value(Some(direct))).await
            }
            name => Err(invalid(&format!(
                "Unknown tool: {} (search mode: call {} or {})",
                name.unwrap_or_default(),
                search::SEARCH_TOOL,
                search::CALL_TOOL
            ))),
        }
    }

    /// `tools/call`: through the registry's policy, approval and audit; the
    /// host's progress token mapped to the upstream call's progress; a
    /// cancellation drops this future, which cancels the upstream call. A
    /// handshake-era host gets the server's result as its text.
    pub(super) async fn call_tool(
        &self,
        session: Session<Bridge>,
        key: mcp_server_io::RequestKey,
        meta: Option<&RequestMeta>,
        params: Params,
    ) -> Result<Called, ErrorObject> {
        let rounds = &self.link.rounds;
        let params = CallParams::read(&params)?;
        if let Some(meta) =
            meta.filter(|m| m.request_state.as_deref().is_some_and(|s| rounds.holds(s)))
        {
            // A stateless-era host's retry of a call parked here: the call
            // goes on, its progress now to this request's token.
            let token = params.and_then(|p| split_meta(p.meta.as_ref()).1);
            let progress = ProgressTarget::new(token, &key);
            let drive = rounds.drive(&key, meta, HOST_ANSWER_TIMEOUT, &progress, nothing_new);
            return drive.await.map(Called::Value);
        }
        let Some(CallParams { name: Some(Value::String(name)), arguments, meta: call_meta }) =
            params
        else {
            return Err(ErrorObject::new(error_code::INVALID_PARAMS, "tools/call needs a name"));
        };
        // Passed on as the host wrote them (`null` reads as none).
        if arguments.as_ref().is_some_and(|a| !a.get().starts_with('{')) {
            return Err(ErrorObject::new(
                error_code::INVALID_PARAMS,
                "tools/call arguments must be an object",
            ));
        }
        let (server, tool) = self.route_tool(name).await?;
        // A stateless-era host's round that is not one of the bridge's
        // (answers given up front, or a retry of a round its server asked
        // in) goes to the server as it came, when that server speaks the
        // era too: the input requests' keys and the `requestState` are the
        // server's. A state a server of the handshake era would be given
        // names nothing.
        if let Some(state) = meta.and_then(|m| m.request_state.as_deref())
            && self.registry.speaks_stateless_era(&server) == Some(false)
        {
            return Err(input::unknown_state(state));
        }
        // A host that declared the tasks extension gets the task an
        // upstream server makes; any other, the call followed to its end.
        let host_tasks = meta.is_some_and(mcp_server_io::tasks::declared);
        // Except a stateless-era host's call of a tool that runs only as a
        // task: `-32021`, as the server itself answers such a host (the
        // bridge declares the extension upstream, where the call would be
        // made a task).
        if meta.is_some() && !host_tasks && self.requires_task(&server, &tool).await? {
            return Err(mcp_server_io::tasks::missing_extension());
        }
        let arguments = self.unshape(&server, &tool, arguments).await?;
        let (mut passed, token) = split_meta(call_meta.as_ref());
        // The host's log level for this call goes upstream too (a
        // stateless-era host's from its request; a handshake-era host's
        // from its session), to an upstream of the stateless era only: the
        // registry takes it out for a handshake-era one, whose session has
        // the host's level from `logging/setLevel`. Not even added for an
        // upstream open in the handshake era now: the same call goes out
        // (the registry still takes it out should a stateless-era
        // connection give way to a handshake-era one meanwhile; the
        // reverse, within one call, leaves that call at the server's own
        // level).
        let level = match meta {
            Some(meta) => meta.log_level,
            None => (0..LOG_LEVELS.len()).find(|&l| session.log_level_enabled(l)),
        };
        if let Some(level) = level.and_then(|l| LOG_LEVELS.get(l))
            && self.registry.speaks_stateless_era(&server) != Some(false)
        {
            passed.get_or_insert_with(Map::new).insert(LOG_LEVEL_META_KEY.into(), json!(level));
        }
        // Whether the host could be asked: read only when a call fails
        // (a stateless-era host's from its request, now).
        let host_asks = match meta {
            Some(meta) => {
                Asks::Known(meta.capabilities.get("elicitation").is_some_and(Value::is_object))
            }
            None => Asks::Session(session.clone()),
        };
        let mut options = RequestOptions {
            timeout: self.timeout,
            reset_timeout_on_progress: true,
            max_total_timeout: Some(self.max_time),
            meta: passed,
            // A stateless-era host takes its server's input rounds itself
            // (a server of the handshake era asks through the handlers,
            // whose questions the bridge puts to the host in rounds of its
            // own, `Rounds`).
            caller_round: meta.map(|m| CallerRound {
                input_responses: m.input_responses.clone(),
                request_state: m.request_state.clone(),
            }),
            ..Default::default()
        };
        // Read at each update: a stateless host's retry after an input
        // round takes the call's progress over (its own token and request).
        // A handshake-era host's call without a token needs none.
        let progress_target =
            (token.is_some() || meta.is_some()).then(|| ProgressTarget::new(token, &key));
        if let Some(target) = progress_target.as_ref().filter(|t| t.get().is_some()) {
            let target = target.clone();
            options.on_progress = Some(Arc::new(move |p: &ProgressNotificationParams| {
                let Some((token, key)) = target.get() else { return };
                let mut progress = serde_json::to_value(p).unwrap_or_else(|_| json!({}));
                progress["progressToken"] = token;
                session.notify(methods::NOTIFICATION_PROGRESS, Some(progress), Some(&key));
            }));
        }
        let registry = self.registry.clone();
        let servers = if host_tasks { self.servers.clone() } else { Vec::new() };
        let logins = self.logins.clone();
        // The call, made where it is awaited: a future kept in a variable
        // until then would take room of its own in this one's state, beside
        // the place it is awaited in (and this state is copied whole at its
        // start, once per host call).
        let call = move || async move {
            // Copied for each attempt only when a login may call for a
            // second one.
            let twice = Logins::may_retry(&registry, &server);
            let mut inputs = Some((arguments, options));
            let start = || {
                let (arguments, options) =
                    if twice { inputs.clone() } else { inputs.take() }.unwrap_or_default();
                let (registry, server, tool) = (&registry, &server, &tool);
                async move {
                    if host_tasks {
                        registry
                            .call_tool_start_text(server, tool, arguments, options)
                            .await
                            .map(Ok)
                    } else {
                        // The result as the server sent it: passed on, not
                        // decoded and encoded again.
                        registry.call_tool_text(server, tool, arguments, options).await.map(Err)
                    }
                }
            };
            // A server that needs an OAuth login: logged in, called again.
            let started = logins.retrying(&registry, &server, start).await;
            match started {
                Ok(Err(result)) => Ok(Called::Text(result)),
                Ok(Ok(ToolCallStart::Task(task))) => {
                    let id = tasks::host_id(&servers, &server, &task.task_id);
                    Ok(Called::Value(tasks::to_host(encode(&*task)?, id, true)))
                }
                Ok(Ok(ToolCallStart::Complete(result))) => encode(&result).map(Called::Value),
                Ok(Ok(_)) => Err(ErrorObject::new(
                    error_code::INTERNAL_ERROR,
                    "the server answered the call in a way mcpc does not know",
                )),
                Err(e) => Err(call_error(&registry, e, host_asks.asks())),
            }
        };
        match meta {
            // What a server asks meanwhile goes back in an input round.
            Some(meta) => {
                let progress_target =
                    progress_target.unwrap_or_else(|| ProgressTarget::new(None, &key));
                let capabilities = meta.capabilities.clone();
                let call = move || -> CallFuture {
                    Box::pin(async move {
                        let result = call().await?.into_value()?;
                        // A server's round, passed on: only what the host
                        // declared it can answer.
                        input::check_passed_round(&result, &capabilities)?;
                        Ok(result)
                    })
                };
                let drive =
                    rounds.drive_new(&key, meta, HOST_ANSWER_TIMEOUT, &progress_target, call);
                drive.await.map(Called::Value)
            }
            None => {
                let _running = self.link.running(key);
                call().await
            }
        }
    }

    /// A handshake-era host's plain `tools/call` forwarded with no future
    /// of its own, when it is one that [`call_tool`](Self::call_tool)
    /// would make with nothing of its own to add: its usual two members
    /// only (no `_meta`: no progress token, no per-request level), its
    /// tool routed already, no shaping, no search mode, no login that may
    /// call for a second attempt, and every check of the registry passed
    /// now ([`Registry::plain_route`], its route kept for the tool's next
    /// call while it holds). The host gets what `call_tool`
    /// gives it (the server's result text, the same error object), under
    /// the same session rules (its place under the cap, `-32600` for a
    /// reused id), listed as running meanwhile ([`HostLink::forwarded`]: a
    /// server's request goes to this host); its cancellation cancels the
    /// call upstream. Gives whether it was taken: if not, nothing was done.
    ///
    /// [`Registry::plain_route`]: mcp_host_registry::Registry::plain_route
    /// [`HostLink::forwarded`]: super::host::HostLink::forwarded
    pub(super) fn forward_plain(
        &self,
        session: &Session<Bridge>,
        key: &mcp_server_io::RequestKey,
        params: &Params,
    ) -> bool {
        if self.tools_fixed() || self.schemas != SchemaTarget::Unchanged {
            return false;
        }
        let Some((name, arguments)) = params.plain_call_raw() else { return false };
        // Not an object: `call_tool` says so.
        if arguments.is_some_and(|a| !a.get().starts_with('{')) {
            return false;
        }
        // The route kept for the name while it holds, else found again.
        let kept = self.routes().plain_route(name);
        let found;
        let plain = match kept.as_deref().and_then(PlainRoute::call) {
            Some(plain) => plain,
            None => {
                found = self.find_plain_route(name);
                match found.as_deref().and_then(PlainRoute::call) {
                    Some(plain) => plain,
                    None => return false,
                }
            }
        };
        let options = RequestOptions {
            timeout: self.timeout,
            reset_timeout_on_progress: true,
            max_total_timeout: Some(self.max_time),
            ..Default::default()
        };
        tracing::debug!(target: PLAIN_TARGET, id = %key, "forwarded with no future");
        session.forward(key, || {
            let running = self.link.forwarded(session.clone(), key.clone());
            let answered = key.clone();
            let end = move |outcome: Result<&RawValue, Error>| {
                // Ended before it is answered, as `call_tool`'s call.
                let host = running.end();
                let result = outcome.map_err(|e| call_error(&host.handler().registry, e, false));
                host.reply_forwarded(answered, result);
            };
            match plain.forward(arguments, options, end) {
                Ok(cancel) => Ok(mcp_server_io::CancelHook(Box::new(cancel))),
                Err(e) => Err(call_error(&self.registry, e, false)),
            }
        });
        true
    }

    /// The registry's plain route of the tool the host calls `name`, kept
    /// in the routes for the next call when `name` routes to the tool's
    /// own name (so at most one is kept per tool listed), forgotten when
    /// there is none. A tool routed to a server that logs in with OAuth
    /// has none: a call to it may need a login and a second attempt.
    fn find_plain_route(&self, name: &str) -> Option<Arc<PlainRoute>> {
        let mut routes = self.routes();
        let (found, exact) = {
            let (server, tool) = routes.tool_ref(name)?;
            if Logins::may_retry(&self.registry, server) {
                (None, true)
            } else {
                let found = self.registry.plain_route(server, tool).map(Arc::new);
                let exact = found.as_ref().is_none_or(|route| route.tool() == tool);
                (found, exact)
            }
        };
        if exact {
            routes.keep_plain_route(name, found.clone());
        }
        found
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel` of a host that declared
    /// the extension: to the server that made the task, its id mapped.
    pub(super) async fn task_method(
        &self,
        meta: Option<&RequestMeta>,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if !meta.is_some_and(mcp_server_io::tasks::declared) {
            return Err(mcp_server_io::tasks::missing_extension());
        }
        let host_id = mcp_server_io::tasks::task_id(params.as_ref())?.to_owned();
        let (server, id) = tasks::route(&self.servers, &host_id)
            .ok_or_else(|| mcp_server_io::tasks::unknown_task(&host_id))?;
        let done = match method {
            methods::TASKS_GET => {
                let got = self
                    .with_login(&server, || {
                        let id = id.clone();
                        self.registry
                            .with_client(&server, |c| async move { task_status(&c, id).await })
                    })
                    .await
                    .map_err(|e| self.error(e))?;
                return Ok(tasks::to_host(got, host_id, false));
            }
            methods::TASKS_UPDATE => {
                let responses = mcp_server_io::tasks::update_responses(params.as_ref())?;
                self.with_login(&server, || {
                    let (id, responses) = (id.clone(), responses.clone());
                    self.registry.with_client(&server, |c| async move {
                        task_update(&c, id, responses).await
                    })
                })
                .await
            }
            _ => {
                self.with_login(&server, || {
                    let id = id.clone();
                    self.registry.with_client(&server, |c| async move { task_cancel(&c, id).await })
                })
                .await
            }
        };
        done.map(|()| mcp_server_io::tasks::ack()).map_err(|e| self.error(e))
    }
}

/// What the bridge reads of a host's `tools/call`: the arguments as the
/// host wrote them, passed on byte for byte.
#[derive(Deserialize)]
struct CallParams {
    name: Option<Value>,
    arguments: Option<Box<RawValue>>,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
}

impl CallParams {
    /// A host's `tools/call` parameters: the usual two members found by a
    /// scan, the arguments' checked text copied as it is
    /// ([`Params::plain_call_raw`]), anything else decoded. Both read
    /// the same.
    fn read(params: &Params) -> Result<Option<CallParams>, ErrorObject> {
        let Some((name, arguments)) = params.plain_call_raw() else {
            return params.decode::<CallParams>();
        };
        let arguments = arguments.map(ToOwned::to_owned);
        Ok(Some(CallParams { name: Some(Value::String(name.to_owned())), arguments, meta: None }))
    }
}

/// What a tool call gives the host: the server's result as the text it
/// sent (passed on as it is where nothing in it changes), or a value the
/// bridge made (a task handle, search results, an input round's result).
#[derive(Debug)]
pub(super) enum Called {
    Text(Box<RawValue>),
    Value(Value),
}

impl Called {
    /// As a value (the text decoded), for what the bridge changes or adds
    /// to.
    pub(super) fn into_value(self) -> Result<Value, ErrorObject> {
        match self {
            Called::Value(value) => Ok(value),
            Called::Text(text) => serde_json::from_str(text.get()).map_err(|e| {
                ErrorObject::new(error_code::INTERNAL_ERROR, format!("cannot decode: {e}"))
            }),
        }
    }

    /// As JSON text (a value encoded), to send as it is.
    pub(super) fn into_text(self) -> Result<Box<RawValue>, ErrorObject> {
        match self {
            Called::Text(text) => Ok(text),
            Called::Value(value) => serde_json::value::to_raw_value(&value).map_err(|e| {
                ErrorObject::new(error_code::INTERNAL_ERROR, format!("cannot encode: {e}"))
            }),
        }
    }
}

/// Whether the host of a call declared elicitation, known at once (a
/// stateless-era host's request says) or read from its session when a
/// call fails.
enum Asks {
    Known(bool),
    Session(Session<Bridge>),
}

impl Asks {
    fn asks(&self) -> bool {
        match self {
            Asks::Known(asks) => *asks,
            Asks::Session(session) => {
                let capabilities = session.client_capabilities();
                reach(capabilities.as_ref(), "elicitation", None) == Reach::Declared
            }
        }
    }
}

/// A call's error: as [`error_object`], and a call the approval policy
/// asked about says whether the user refused it or the host could not
/// ask them (`host_asks`: the host, or its request, declared elicitation).
fn call_error(registry: &Registry, e: Error, host_asks: bool) -> ErrorObject {
    let asked = matches!(&e, Error::CallDenied { reason: mcp_host_registry::Reason::Approver, .. });
    let mut error = error_object(registry, e);
    if asked && host_asks {
        error.message.push_str(": the user refused it");
    } else if asked {
        error.message.push_str(
            ": it needs the user's approval, and the host did not declare elicitation to ask \
             for it",
        );
    }
    error
}

/// A result as JSON.
fn encode<T: serde::Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::new(error_code::INTERNAL_ERROR, format!("cannot encode: {e}")))
}

fn task_status<T: Transport>(c: &Client<T>, id: String) -> BoxFuture<'_, Result<Value, T::Error>> {
    Box::pin(async move {
        let task = c.task_status(&id).await?;
        Ok(serde_json::to_value(task).unwrap_or_default())
    })
}

fn task_update<T: Transport>(
    c: &Client<T>,
    id: String,
    responses: Map<String, Value>,
) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(async move { c.task_update(&id, responses).await })
}

fn task_cancel<T: Transport>(c: &Client<T>, id: String) -> BoxFuture<'_, Result<(), T::Error>> {
    Box::pin(async move { c.task_cancel(&id).await })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::jsonrpc::{Received, ReceivedIncoming, decode_received};

    /// What a reading gives, comparable: the name, the arguments' text,
    /// `_meta`, or the error's code.
    type Read = Result<Option<(Option<Value>, Option<String>, Option<Value>)>, i64>;

    fn comparable(read: Result<Option<CallParams>, ErrorObject>) -> Read {
        read.map(|p| p.map(|p| (p.name, p.arguments.map(|a| a.get().to_owned()), p.meta)))
            .map_err(|e| e.code)
    }

    /// The usual call found by a scan reads as its decoding, on the usual
    /// shapes and near misses, as a decoding hands them over and as text
    /// alone.
    #[test]
    fn a_call_read_by_a_scan_is_what_its_decoding_reads() {
        let names = [r#""echo""#, r#""e\"cho""#, r#""\u0065cho""#, "1", "null", r#""""#];
        let arguments = [
            r#"{"message":"hi"}"#,
            r#"{ "a" : [ 1 , {"b":"}"} ] }"#,
            "{}",
            "null",
            "[]",
            "1e400",
            r#""s""#,
        ];
        let shapes = [
            r#"{"name":@,"arguments":#}"#,
            r#"{"arguments":#,"name":@}"#,
            " {\n \"name\" :\t@ ,\r\n\"arguments\":  #  } ",
            r#"{"name":@}"#,
            r#"{"arguments":#}"#,
            r#"{"name":@,"arguments":#,"name":@}"#,
            r#"{"name":@,"arguments":#,"_meta":{"progressToken":1}}"#,
            r#"{"n\u0061me":@,"arguments":#}"#,
            r#"{"name":@,"arguments":#,"x":null}"#,
            "[@,#]",
        ];
        let mut plain = 0;
        for shape in shapes {
            for name in names {
                for argument in arguments {
                    let case = shape.replace('@', name).replace('#', argument);
                    let message = format!(
                        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{case}}}"#
                    );
                    let Ok(ReceivedIncoming::Single(Received::Request(request))) =
                        decode_received(message.as_bytes())
                    else {
                        continue;
                    };
                    let params = Params::from_text(request.params.clone());
                    let decoded = comparable(params.decode::<CallParams>());
                    plain += usize::from(params.plain_call().is_some());
                    assert_eq!(comparable(CallParams::read(&params)), decoded, "{case}");
                }
            }
        }
        // The two plain names with the six arguments that are not `null`,
        // in the three shapes that hold both once, and alone.
        assert_eq!(plain, 3 * 2 * 6 + 2 * arguments.len(), "{plain}");
    }
}
