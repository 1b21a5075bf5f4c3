//! The typed operations: one method per client-to-server request of the
//! protocol, written once for every transport.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_proto::client::{ClientError, RequestOptions, ops};
use mcp_proto::methods;
use mcp_proto::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, CreateTaskResult, Cursor, EmptyResult,
    GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListTasksResult, ListToolsResult, LoggingLevel, PaginatedRequestParams,
    Prompt, ReadResourceResult, Resource, ResourceRequestParams, ResourceTemplate,
    ServerCapabilities, Task, TaskMetadata, TaskRequestParams, Tool,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::client::Client;
use crate::request::Answer;
use crate::send::Params;
use crate::tasks::ToolCallStart;
use crate::transport::Transport;

/// `tools/call` parameters with arguments of any serialisable type, encoded
/// once into JSON text.
#[derive(Serialize)]
pub(crate) struct CallParams<'a, A: ?Sized> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Arguments::is_none")]
    pub(crate) arguments: Arguments<'a, A>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<TaskMetadata>,
}

/// A call's arguments as the request writes them: none, or the caller's
/// value (raw JSON text written as it is). One type for both, so a call
/// awaits one request future whatever its arguments.
pub(crate) enum Arguments<'a, A: ?Sized> {
    None,
    Typed(&'a A),
}

impl<A: ?Sized> Arguments<'_, A> {
    fn is_none(&self) -> bool {
        matches!(self, Arguments::None)
    }
}

impl<A: Serialize + ?Sized> Serialize for Arguments<'_, A> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Arguments::None => serializer.serialize_none(),
            Arguments::Typed(a) => a.serialize(serializer),
        }
    }
}

impl<T: Transport> Client<T> {
    /// Sends a request and waits for its result (initializing first if
    /// needed), as a JSON value. Dropping the future sends
    /// `notifications/cancelled`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
        options: RequestOptions,
    ) -> Result<serde_json::Value, T::Error> {
        let tool = match method {
            methods::TOOLS_CALL if self.transport().wants_tool() => {
                let name = params.as_ref().and_then(|p| p.get("name"));
                match name.and_then(serde_json::Value::as_str) {
                    Some(name) => self.tool_list_with(name).await,
                    None => None,
                }
            }
            _ => None,
        };
        let raw = self.request_raw::<()>(method, Params::Value(params), tool, options).await?;
        ops::parse_result(method, &raw).map_err(|e| self.error(e))
    }

    /// Sends a request whose parameters are any serialisable value and
    /// decodes its result into `R`.
    pub async fn request_typed<P, R>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, T::Error>
    where
        P: Serialize + Sync + ?Sized,
        R: DeserializeOwned,
    {
        let raw = self.request_raw(method, Params::Typed(params), None, options).await?;
        ops::parse_result(method, &raw).map_err(|e| self.error(e))
    }

    /// A request's result as JSON text, a task handle followed to its end.
    async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'_, P>,
        tool: Option<(Arc<[Tool]>, usize)>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        let mut options = options;
        let answer = self.request_inner(method, params, tool, &mut options, false, true).await?;
        Ok(answer.into_raw())
    }

    /// `ping`: succeeds when the server answers.
    pub async fn ping(&self) -> Result<(), T::Error> {
        ops::ping(self, RequestOptions::default()).await
    }

    /// The server's `serverInfo`, once initialized.
    pub fn server_info(&self) -> Option<Implementation> {
        self.initialize_result().map(|r| r.server_info.clone())
    }

    /// The server's capabilities, once initialized.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.initialize_result().map(|r| r.capabilities.clone())
    }

    /// The server's `instructions`, once initialized, when it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.initialize_result().and_then(|r| r.instructions.clone())
    }

    /// Every tool the server offers (all pages), cached until the server
    /// says the list changed.
    pub async fn list_tools(&self) -> Result<Arc<[Tool]>, T::Error> {
        ops::list_tools(self, RequestOptions::default()).await
    }

    /// Every tool the server offers (all pages), asked of the server even
    /// when cached (the cache is refreshed).
    pub async fn list_tools_fresh(&self) -> Result<Arc<[Tool]>, T::Error> {
        ops::list_tools_fresh(self, RequestOptions::default()).await
    }

    /// One page of `tools/list` (the cache is not touched).
    pub async fn list_tools_page(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListToolsResult, T::Error> {
        self.page(methods::TOOLS_LIST, cursor).await
    }

    /// Calls a tool with `arguments`: anything that serialises to a JSON
    /// object (a struct, a map, `serde_json::json!({...})`), or to `null`
    /// (`None`, `()`) for none. A tool that fails reports `is_error` in the
    /// result; that is not an `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, T::Error> {
        self.call_tool_with(name, arguments, RequestOptions::default()).await
    }

    /// [`call_tool`](Self::call_tool) with per-call options: a timeout, a
    /// progress callback, the timeout restarted by progress up to a maximum
    /// total.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, T::Error> {
        // The usual answer's result is decoded once, as it is read.
        let mut options = options;
        match self.call_shaped(name, arguments, None, &mut options, true, true).await? {
            Answer::Tool(result) => Ok(result),
            answer => ops::parse_result(methods::TOOLS_CALL, &answer.into_raw())
                .map_err(|e| self.error(e)),
        }
    }

    /// `tools/call`, its result as the JSON text the server sent rather
    /// than decoded into [`CallToolResult`] (a task the server made is
    /// followed to its end, as [`call_tool_with`](Self::call_tool_with)
    /// follows it): for a caller that passes results on unchanged, such as
    /// a bridge. The text is well-formed JSON (the message was decoded) and
    /// a JSON object, else the call fails with `InvalidResult`; it is not
    /// checked against [`CallToolResult`]'s shape, and may span lines when
    /// the server pretty-printed it
    /// ([`make_one_line`](mcp_proto::jsonrpc::make_one_line) before
    /// writing it to a line).
    pub async fn call_tool_json(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        let mut options = options;
        let raw = self.call_shaped(name, arguments, None, &mut options, true, false).await?;
        let raw = raw.into_raw();
        match raw.get().trim_start().as_bytes().first() {
            Some(b'{') => Ok(raw),
            _ => Err(self.error(ClientError::InvalidResult {
                method: methods::TOOLS_CALL.into(),
                reason: "the result is not a JSON object".into(),
            })),
        }
    }

    /// Calls a tool as a task (experimental, 2025-11-25): the server answers
    /// at once with the task it created, which [`get_task`](Self::get_task)
    /// polls and [`task_result`](Self::task_result) waits for; its status
    /// changes also come as
    /// [`ServerNotification::TaskStatus`](mcp_proto::client::ServerNotification::TaskStatus).
    /// `ttl` is how long the server should keep the task after it was made.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl Serialize,
        ttl: Option<std::time::Duration>,
    ) -> Result<CreateTaskResult, T::Error> {
        let task = TaskMetadata {
            ttl: ttl.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            ..Default::default()
        };
        let mut options = RequestOptions::default();
        let raw = self.call_shaped(name, arguments, Some(task), &mut options, true, false).await?;
        let raw = raw.into_raw();
        ops::parse_result(methods::TOOLS_CALL, &raw).map_err(|e| self.error(e))
    }

    /// `tools/call`. The arguments are written straight into the request;
    /// only their top-level shape is looked at first (an object, or
    /// nothing). With `poll` false, a task handle (tasks extension) comes
    /// back as it came; with `tool_result`, the result may come decoded
    /// ([`Answer::Tool`]).
    async fn call_shaped<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
        task: Option<TaskMetadata>,
        options: &mut RequestOptions,
        poll: bool,
        tool_result: bool,
    ) -> Result<Answer, T::Error> {
        use crate::shape::{Shape, shape_of};
        // Raw JSON text has the shape its text starts with, and is written
        // as it is.
        let arguments = match shape_of(&arguments) {
            Shape::Null => Arguments::None,
            Shape::Object => Arguments::Typed(&arguments),
            Shape::Other => return Err(self.not_an_object()),
        };
        let params = CallParams { name, arguments, task };
        // Transports that derive headers from the call read the tool's
        // definition (listed once when the cache lacks it).
        let tool = match self.transport().wants_tool() {
            true => self.tool_list_with(name).await,
            false => None,
        };
        let params = Params::Typed(&params);
        self.request_inner(methods::TOOLS_CALL, params, tool, options, tool_result, poll).await
    }

    /// Calls a tool without following a task the server may make of it
    /// (tasks extension, 2026-07-28; declare it first): the result, or the
    /// task handle to follow yourself. `call_tool` follows tasks to their
    /// end by itself.
    pub async fn call_tool_start(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<ToolCallStart, T::Error> {
        let mut options = options;
        let raw = self.call_shaped(name, arguments, None, &mut options, false, false).await?;
        let raw = raw.into_raw();
        let parse = |e: serde_json::Error| {
            self.error(ClientError::InvalidResult {
                method: methods::TOOLS_CALL.into(),
                reason: e.to_string(),
            })
        };
        match mcp_proto::types::result_kind(raw.get()) {
            Ok(mcp_proto::types::ResultKind::Task) => serde_json::from_str(raw.get())
                .map(|t| ToolCallStart::Task(Box::new(t)))
                .map_err(parse),
            _ => serde_json::from_str(raw.get()).map(ToolCallStart::Complete).map_err(parse),
        }
    }

    pub(crate) fn not_an_object(&self) -> T::Error {
        let reason = "the arguments must be a JSON object".to_owned();
        self.invalid_params(methods::TOOLS_CALL, reason)
    }

    /// Calls a tool and decodes its result into `R`: from
    /// `structuredContent`, else from the JSON text of its single text
    /// block. A result with `is_error` set is an error carrying the result's
    /// text. With the `schema` feature, `structuredContent` is first checked
    /// against the tool's `outputSchema` (`validate_output`).
    pub async fn call_tool_as<R: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<R, T::Error> {
        let result = self.call_tool(name, arguments).await?;
        let invalid = |reason: String| {
            self.error(ClientError::InvalidResult { method: methods::TOOLS_CALL.into(), reason })
        };
        if result.is_error == Some(true) {
            let text = mcp_proto::render_tool_result(&result).text;
            return Err(invalid(format!("the tool {name:?} reported an error: {text}")));
        }
        #[cfg(feature = "schema")]
        self.validate_output(name, &result).await?;
        result.structured_as::<R>().map_err(|e| invalid(e.to_string()))
    }

    /// Checks a tool's result against its `outputSchema` (feature `schema`),
    /// with the definition from the cached tool list (listed once when the
    /// cache lacks it). A tool the server does not list, or one without an
    /// `outputSchema`, passes.
    #[cfg(feature = "schema")]
    pub async fn validate_output(
        &self,
        name: &str,
        result: &CallToolResult,
    ) -> Result<(), T::Error> {
        let checked = ops::with_tool(self, name, RequestOptions::default(), |tool| {
            mcp_proto::types::validate_structured_content(tool, result)
        })
        .await?;
        match checked {
            None | Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(self.error(ClientError::InvalidResult {
                method: methods::TOOLS_CALL.into(),
                reason: format!("the result of {name:?} does not match its outputSchema: {e}"),
            })),
        }
    }

    /// Every resource the server lists (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, T::Error> {
        ops::list_resources(self, RequestOptions::default()).await
    }

    /// One page of `resources/list`.
    pub async fn list_resources_page(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListResourcesResult, T::Error> {
        self.page(methods::RESOURCES_LIST, cursor).await
    }

    /// Every resource template the server lists (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, T::Error> {
        ops::list_resource_templates(self, RequestOptions::default()).await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListResourceTemplatesResult, T::Error> {
        self.page(methods::RESOURCES_TEMPLATES_LIST, cursor).await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, T::Error> {
        let params = ResourceRequestParams::new(uri);
        self.request_typed(methods::RESOURCES_READ, &params, RequestOptions::default()).await
    }

    /// `resources/subscribe`: the server sends `notifications/resources/updated`
    /// for `uri` (see [`notifications`](Self::notifications)).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), T::Error> {
        let params = ResourceRequestParams::new(uri);
        self.request_typed::<_, EmptyResult>(
            methods::RESOURCES_SUBSCRIBE,
            &params,
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), T::Error> {
        let params = ResourceRequestParams::new(uri);
        self.request_typed::<_, EmptyResult>(
            methods::RESOURCES_UNSUBSCRIBE,
            &params,
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// Every prompt the server lists (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, T::Error> {
        ops::list_prompts(self, RequestOptions::default()).await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListPromptsResult, T::Error> {
        self.page(methods::PROMPTS_LIST, cursor).await
    }

    /// `prompts/get`, with the prompt's arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<BTreeMap<String, String>>,
    ) -> Result<GetPromptResult, T::Error> {
        #[derive(Serialize)]
        struct Params<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            arguments: Option<BTreeMap<String, String>>,
        }
        let params = Params { name, arguments };
        self.request_typed(methods::PROMPTS_GET, &params, RequestOptions::default()).await
    }

    /// `completion/complete`.
    pub async fn complete(
        &self,
        params: &CompleteRequestParams,
    ) -> Result<CompleteResult, T::Error> {
        self.request_typed(methods::COMPLETION_COMPLETE, params, RequestOptions::default()).await
    }

    /// `logging/setLevel`: the least severe level the server should send
    /// (the handshake era).
    ///
    /// **Deprecated by the protocol** (SEP-2577, from 2026-07-28): logging
    /// keeps working in every revision that has it; a server's own log
    /// belongs on its stderr or in its telemetry. The stateless era has no
    /// `logging/setLevel`: each request carries the level in its `_meta`
    /// ([`ClientOptions::log_level`](crate::ClientOptions::log_level)).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), T::Error> {
        #[derive(Serialize)]
        struct Params {
            level: LoggingLevel,
        }
        self.request_typed::<_, EmptyResult>(
            methods::LOGGING_SET_LEVEL,
            &Params { level },
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// `tasks/get` (experimental, 2025-11-25): a task's current state.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.request_typed(methods::TASKS_GET, &params, RequestOptions::default()).await
    }

    /// `tasks/list` (experimental): one page of the server's tasks.
    pub async fn list_tasks_page(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListTasksResult, T::Error> {
        self.page(methods::TASKS_LIST, cursor).await
    }

    /// `tasks/list` (experimental): every task (all pages).
    pub async fn list_tasks(&self) -> Result<Vec<Task>, T::Error> {
        ops::list_tasks(self, RequestOptions::default()).await
    }

    /// `tasks/cancel` (experimental): the task's state after cancelling.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.request_typed(methods::TASKS_CANCEL, &params, RequestOptions::default()).await
    }

    /// `tasks/result` (experimental): waits for the task to finish and
    /// decodes the result of the request that created it (a
    /// [`CallToolResult`] for a task-augmented `tools/call`).
    pub async fn task_result<R: DeserializeOwned>(
        &self,
        task_id: &str,
        options: RequestOptions,
    ) -> Result<R, T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.request_typed(methods::TASKS_RESULT, &params, options).await
    }

    /// Sends `notifications/roots/list_changed` (roots are deprecated by the
    /// protocol, SEP-2577: see
    /// [`RootsHandler`](mcp_proto::client::RootsHandler)) (declare
    /// `roots.listChanged` in [`ClientOptions::capabilities`](crate::ClientOptions::capabilities)).
    /// In the stateless era there is nothing to send: a server that needs
    /// the roots asks for them in each request that needs them, so the
    /// call does nothing.
    pub async fn notify_roots_changed(&self) -> Result<(), T::Error> {
        self.initialize().await?;
        let method = methods::NOTIFICATION_ROOTS_LIST_CHANGED;
        if self.inner.rules().is_some_and(|rules| !rules.sends_notification(method)) {
            return Ok(());
        }
        self.notify(method, None).await
    }

    /// Starts a tool call as a task of its own: the handle is awaited for
    /// the result, and [`CallHandle::cancel`](crate::CallHandle::cancel) stops it, sending
    /// `notifications/cancelled` to the server.
    pub fn spawn_call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> crate::CallHandle<CallToolResult, T::Error> {
        let client = self.clone();
        let name = name.to_owned();
        let arguments = serde_json::to_value(&arguments);
        crate::CallHandle::spawn(async move {
            let arguments = arguments.map_err(|e| {
                client.invalid_params(methods::TOOLS_CALL, format!("the arguments: {e}"))
            })?;
            client.call_tool_with(&name, arguments, options).await
        })
    }

    async fn page<R: DeserializeOwned>(
        &self,
        method: &str,
        cursor: Option<Cursor>,
    ) -> Result<R, T::Error> {
        let params = PaginatedRequestParams::new(cursor);
        self.request_typed(method, &params, RequestOptions::default()).await
    }

    fn invalid_params(&self, method: &str, reason: String) -> T::Error {
        self.error(ClientError::InvalidParams { method: method.into(), reason })
    }
}

impl<T: Transport> ops::Requester for Client<T> {
    type Error = T::Error;

    fn client_error(&self, error: ClientError) -> T::Error {
        self.error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        self.request_raw::<()>(method, Params::Value(params), None, options).await
    }

    async fn request_with_params<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        self.request_raw(method, Params::Typed(params), None, options).await
    }

    /// In the stateless era the assembled list is not kept: its pages are,
    /// in the result cache, for as long as their `ttlMs` says.
    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        self.kept_tools()
    }

    fn tools_generation(&self) -> u64 {
        crate::request::Plain(self).tools_generation()
    }

    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        crate::request::Plain(self).store_tools(generation, tools)
    }
}

#[cfg(test)]
mod tests {
    use mcp_proto::jsonrpc::write_json;
    use mcp_proto::types::TaskMetadata;
    use serde::Serialize;
    use serde_json::json;
    use serde_json::value::{RawValue, to_raw_value};

    use super::{Arguments, CallParams};

    /// The reference form: the arguments an `Option` of one type, left
    /// out when `None` (serde's derive).
    #[derive(Serialize)]
    struct Reference<'a, A: ?Sized> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<&'a A>,
        #[serde(skip_serializing_if = "Option::is_none")]
        task: Option<TaskMetadata>,
    }

    #[derive(Serialize)]
    struct Args {
        message: &'static str,
        n: i32,
    }

    /// Both writers' text of `value` (serde_json's and the client core's).
    fn texts<T: Serialize>(value: &T) -> (String, String) {
        let mut ours = Vec::new();
        write_json(&mut ours, value).unwrap();
        (serde_json::to_string(value).unwrap(), String::from_utf8(ours).unwrap())
    }

    fn same<A: Serialize + ?Sized>(
        now: Arguments<'_, A>,
        reference: Option<&A>,
        task: Option<u64>,
    ) {
        let task = || task.map(|ttl| TaskMetadata { ttl: Some(ttl), ..Default::default() });
        let name = "echo \"quoted\"";
        let now = texts(&CallParams { name, arguments: now, task: task() });
        let reference = texts(&Reference { name, arguments: reference, task: task() });
        assert_eq!(now, reference);
        assert_eq!(now.0, now.1);
    }

    #[test]
    fn arguments_are_written_as_an_option_of_their_type() {
        let map = json!({"message": "hi", "nested": {"a": [1, 2.5, null]}});
        let raw = to_raw_value(&map).unwrap();
        let spaced: Box<RawValue> = serde_json::from_str(r#" { "a" : 1 } "#).unwrap();
        for task in [None, Some(60_000)] {
            same::<()>(Arguments::None, None, task);
            same(
                Arguments::Typed(&Args { message: "m", n: 1 }),
                Some(&Args { message: "m", n: 1 }),
                task,
            );
            same(Arguments::Typed(&map), Some(&map), task);
            same(Arguments::Typed(&json!({})), Some(&json!({})), task);
            same(Arguments::Typed(&*raw), Some(&*raw), task);
            same(Arguments::Typed(&spaced), Some(&spaced), task);
            // Raw text in an `Option` (as a bridge passes it on) is
            // written as the text itself.
            let passed = Some(spaced.clone());
            let name = "echo";
            let now = texts(&CallParams { name, arguments: Arguments::Typed(&passed), task: None });
            let reference = texts(&Reference { name, arguments: Some(&*spaced), task: None });
            assert_eq!(now, reference);
            // Near misses: a `None` of the caller's type is left out only
            // as `Arguments::None`; as `Typed` it is the caller's `null`,
            // as `Some(&None)` is.
            same::<Option<Args>>(Arguments::None, None, task);
            same(Arguments::Typed(&None::<Args>), Some(&None::<Args>), task);
        }
    }
}
