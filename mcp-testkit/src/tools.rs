//! The tools: their definitions (what `tools/list` shows) and what each does.
//!
//! Results are `CallToolResult` JSON built with `serde_json::json!`. Invalid
//! arguments give a tool execution error (`isError: true`), as the
//! 2025-11-25 tools page asks; an unknown tool is a protocol error (`-32602`).

use std::io::Write as _;
use std::process::Stdio;
use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::{ProtocolVersion, methods};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::modern::{self, Change, RequestMeta};
use mcp_server_io::Outgoing;
use mcp_server_io::logging::LOG_LEVELS;

use crate::server::{Addr, BoxFuture, Server, stderr_line};
use crate::tasks::with_related_task;

/// The longest `slow` sleep: ten minutes.
const MAX_SLOW_MS: u64 = 600_000;
/// The most progress steps `slow` sends.
const MAX_STEPS: u64 = 10_000;
/// The largest `big` text and `noisy` long line: 64 MiB.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most stderr lines `noisy` writes.
const MAX_NOISY_LINES: u64 = 10_000;

/// One `tools/call` in progress.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) server: Server,
    pub(crate) id: Addr,
    pub(crate) progress_token: Option<Value>,
    /// The task running the call, for a task-augmented call.
    pub(crate) task: Option<String>,
    /// The request's metadata, for a stateless-era call.
    pub(crate) modern: Option<RequestMeta>,
}

impl Call {
    /// The request the call's messages belong to: the `tools/call`, or none
    /// for a task (its request was answered when the task was created).
    fn related(&self) -> Option<Addr> {
        match self.task {
            Some(_) => None,
            None => Some(self.id.clone()),
        }
    }

    /// Sends a notification that belongs to the call; a task's carry the
    /// related-task `_meta`.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) {
        let params = match &self.task {
            Some(task) => Some(with_related_task(params.unwrap_or_else(|| json!({})), task)),
            None => params,
        };
        self.server.notify(method, params, self.related());
    }

    /// Announces a list change: to a legacy call as a notification related
    /// to it (a stateless-era request gets none: list changes are not
    /// request-scoped there), and to every `subscriptions/listen` stream
    /// that asked for it.
    fn changed(&self, legacy_method: &str, change: &Change) {
        if self.modern.is_none() {
            self.notify(legacy_method, None);
        }
        self.server.broadcast(change);
    }
}

/// What running a tool gives.
pub(crate) enum Outcome {
    /// The reply, ready now.
    Reply(Result<Value, ErrorObject>),
    /// A result ready now, as JSON text written as it is (`echo`'s: no
    /// value built on the way; in the stateless era the session adds
    /// `resultType` and `serverInfo` to the text).
    Text(Box<RawValue>),
    /// A result that needs waiting for: run it as its own task.
    Spawn(BoxFuture),
    /// No reply at all (the process is on its way out).
    NoReply,
}

/// The `x-mcp-header` annotations of the tools, by tool name: (property,
/// header name) pairs, read once from the tool definitions.
pub(crate) fn param_headers(name: &str) -> &'static [(String, String)] {
    static TABLE: std::sync::OnceLock<std::collections::HashMap<String, Vec<(String, String)>>> =
        std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = std::collections::HashMap::new();
        for tool in definitions(true, true) {
            let Some(name) = tool["name"].as_str() else { continue };
            let Some(properties) = tool["inputSchema"]["properties"].as_object() else { continue };
            let pairs: Vec<(String, String)> = properties
                .iter()
                .filter_map(|(property, schema)| {
                    let header = schema.get("x-mcp-header")?.as_str()?;
                    Some((property.clone(), header.to_owned()))
                })
                .collect();
            if !pairs.is_empty() {
                table.insert(name.to_owned(), pairs);
            }
        }
        table
    });
    table.get(name).map_or(&[], Vec::as_slice)
}

/// Every tool, in list order; `extra` last when it is switched on. With
/// `modern`, the stateless-era tools come before `extra`.
pub(crate) fn definitions(extra: bool, modern: bool) -> Vec<Value> {
    let mut tools = vec![
        task_optional(tool(
            "echo",
            "Echo",
            "Returns the message as text. The benchmark's hot path: no structured output.",
            json!({
                "type": "object",
                "properties": { "message": { "type": "string", "description": "Text to return" } },
                "required": ["message"],
            }),
        )),
        task_optional({
            let mut add = tool(
                "add",
                "Add",
                "Adds two numbers; the sum comes as text and as structured content.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": { "type": "number", "description": "First addend" },
                        "b": { "type": "number", "description": "Second addend" },
                    },
                    "required": ["a", "b"],
                }),
            );
            add["outputSchema"] = json!({
                "type": "object",
                "properties": { "sum": { "type": "number" } },
                "required": ["sum"],
            });
            add
        }),
        task_optional(tool(
            "slow",
            "Slow",
            "Sleeps `ms` milliseconds in total, sending `steps` progress notifications when \
             the request carries a progress token, then returns \"done\".",
            json!({
                "type": "object",
                "properties": {
                    "ms": { "type": "integer", "minimum": 0, "maximum": MAX_SLOW_MS,
                            "description": "Total sleep in milliseconds" },
                    "steps": { "type": "integer", "minimum": 0, "maximum": MAX_STEPS,
                               "description": "Progress notifications to send (default 0)" },
                },
                "required": ["ms"],
            }),
        )),
        task_optional(tool(
            "hang",
            "Hang",
            "Never answers, until cancelled: for client timeout tests.",
            no_arguments(),
        )),
        task_optional(tool(
            "fail",
            "Fail",
            "Returns a tool execution error (isError: true) with the message.",
            json!({
                "type": "object",
                "properties": { "message": { "type": "string",
                                             "description": "Error text (default: \"failed on purpose\")" } },
            }),
        )),
        tool(
            "crash",
            "Crash",
            "Writes the stderr text, then ends the server process with the exit code, \
             without answering.",
            json!({
                "type": "object",
                "properties": {
                    "code": { "type": "integer", "minimum": 0, "maximum": 255,
                              "description": "Exit code (default 3)" },
                    "stderr": { "type": "string",
                                "description": "Text for stderr (default \"testkit: crashing on purpose\")" },
                },
            }),
        ),
        tool(
            "big",
            "Big",
            "Returns one text block of exactly `bytes` ASCII bytes.",
            json!({
                "type": "object",
                "properties": { "bytes": { "type": "integer", "minimum": 0, "maximum": MAX_BYTES,
                                           "description": "Length of the text" } },
                "required": ["bytes"],
            }),
        ),
        tool(
            "noisy",
            "Noisy",
            "Writes garbage to stdout (a non-JSON line, JSON that is not JSON-RPC, a response \
             for an unknown id, an over-long line when `long_line_bytes` is given) and lines \
             to stderr, then answers normally. Over other transports only the stderr part.",
            json!({
                "type": "object",
                "properties": {
                    "lines": { "type": "integer", "minimum": 0, "maximum": MAX_NOISY_LINES,
                               "description": "Lines written to stderr (default 3)" },
                    "long_line_bytes": { "type": "integer", "minimum": 1, "maximum": MAX_BYTES,
                                         "description": "Also write one line of this length" },
                    "garbage_rounds": { "type": "integer", "minimum": 0, "maximum": MAX_NOISY_LINES,
                                        "description": "How many times the three garbage lines are written (default 1)" },
                },
            }),
        ),
        tool(
            "ask",
            "Ask the client",
            "Sends the client a request mid-call (ping, roots/list, elicitation/create or \
             sampling/createMessage), waits for its answer and returns it as JSON text: \
             {\"result\": ...} or {\"error\": ...}.",
            json!({
                "type": "object",
                "properties": { "what": { "type": "string",
                                          "enum": ["ping", "roots", "elicit", "sample"] } },
                "required": ["what"],
            }),
        ),
        tool(
            "change",
            "Change a list",
            "With `list` \"tools\" (the default): switches the `extra` tool in or out of the \
             list and sends notifications/tools/list_changed. With \"resources\" or \
             \"prompts\": sends notifications/resources/list_changed or \
             notifications/prompts/list_changed.",
            json!({
                "type": "object",
                "properties": { "list": { "type": "string",
                                          "enum": ["tools", "resources", "prompts"],
                                          "description": "Which list (default \"tools\")" } },
            }),
        ),
        tool(
            "cancelled_log",
            "Cancellation log",
            "Returns, as a JSON array, the request ids of every notifications/cancelled the \
             server received.",
            no_arguments(),
        ),
        tool(
            "spawn_child",
            "Spawn a child",
            "Starts `sleep 300` in the server's process group and returns its pid: a client's \
             close should leave no such orphan.",
            json!({
                "type": "object",
                "properties": { "inherit_stdio": { "type": "boolean",
                                                   "description": "Share the server's stdio (default false)" } },
            }),
        ),
        tool(
            "env",
            "Environment variable",
            "Returns the value of the environment variable in the server process as JSON text: \
             a string, or null when unset.",
            json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            }),
        ),
        tool(
            "log",
            "Log",
            "Sends notifications/message at the level (if logging/setLevel allows it), then answers.",
            json!({
                "type": "object",
                "properties": {
                    "level": { "type": "string", "enum": LOG_LEVELS },
                    "message": { "type": "string" },
                },
                "required": ["level", "message"],
            }),
        ),
        tool(
            "annotated",
            "Annotated",
            "Returns its arguments as JSON text. Its string, integer and boolean arguments carry              `x-mcp-header`, so a Streamable HTTP client also sends them as Mcp-Param-Region,              Mcp-Param-Priority and Mcp-Param-Dry-Run headers; `note` has no header.",
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "priority": { "type": "integer", "x-mcp-header": "Priority" },
                    "dry_run": { "type": "boolean", "x-mcp-header": "Dry-Run" },
                    "note": { "type": "string" },
                },
            }),
        ),
        tool(
            "touch",
            "Touch a resource",
            "Sends notifications/resources/updated for the resource if the client subscribed \
             to it (resources/subscribe), as a message of no request; returns \"touched\", \
             else \"not subscribed\".",
            json!({
                "type": "object",
                "properties": { "uri": { "type": "string", "description": "The resource's URI" } },
                "required": ["uri"],
            }),
        ),
    ];
    if modern {
        tools.extend(modern_definitions());
    }
    if extra {
        tools.push(tool(
            "extra",
            "Extra",
            "Listed only after `change`; returns \"extra\".",
            no_arguments(),
        ));
    }
    tools
}

/// The tools listed only to stateless-era requests.
fn modern_definitions() -> Vec<Value> {
    vec![
        tool(
            "ask_twice",
            "Ask twice",
            "Needs two rounds of client input (multi round-trip request): first \
             elicitation/create (key `name`), then sampling/createMessage (key `greeting`); \
             returns \"<name>: <greeting>\" with structuredContent {name, greeting}. Needs the \
             elicitation and sampling client capabilities.",
            no_arguments(),
        ),
        tool(
            "retry_once",
            "Retry once",
            "Answers input_required with only a requestState the first time; the retry echoing \
             it completes with \"retried with <requestState>\".",
            no_arguments(),
        ),
        tool(
            "received_log",
            "Received log",
            "Returns, as a JSON array, what each stateless-era request carried: id, method, \
             protocolVersion, clientCapabilities, clientInfo, logLevel, name, requestState, \
             inputResponses.",
            no_arguments(),
        ),
        tool(
            "close_subscriptions",
            "Close subscriptions",
            "Ends every open subscriptions/listen stream gracefully (its result, with the \
             subscriptionId); returns how many there were.",
            no_arguments(),
        ),
    ]
}

fn tool(name: &str, title: &str, description: &str, input_schema: Value) -> Value {
    json!({ "name": name, "title": title, "description": description, "inputSchema": input_schema })
}

/// A tool that may be called as a task (`execution.taskSupport`).
fn task_optional(mut tool: Value) -> Value {
    tool["execution"] = json!({ "taskSupport": "optional" });
    tool
}

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// Runs the tool `name`.
/// Runs the tool `name` with its arguments as the client wrote them (an
/// object, or none): `echo`, the benchmark's hot path, decodes only its
/// message; `annotated` answers their text; every other tool takes them
/// as a map.
pub(crate) fn run_text(call: Call, name: &str, arguments: Option<&RawValue>) -> Outcome {
    if name == "echo" {
        #[derive(serde::Deserialize)]
        struct Echo {
            message: Option<Value>,
        }
        let message = match arguments.map(|a| serde_json::from_str::<Echo>(a.get())) {
            None => None,
            Some(Ok(echo)) => echo.message,
            Some(Err(e)) => return Outcome::Reply(Err(not_arguments(&e))),
        };
        // In the stateless era the session adds its members to the text.
        return match echo_message(message) {
            Ok(message) => match text_json(&message) {
                Some(json) => Outcome::Text(json),
                None => Outcome::Reply(Ok(text(message))),
            },
            Err(message) => Outcome::Reply(Ok(tool_error(message))),
        };
    }
    if name == "annotated" {
        // The arguments exactly as the client wrote them.
        return Outcome::Reply(Ok(text(arguments.map_or("{}", RawValue::get))));
    }
    match arguments_map(arguments) {
        Ok(map) => run(call, name, map),
        Err(error) => Outcome::Reply(Err(error)),
    }
}

/// A call's arguments (an object, or none) as a map: `-32602` when their
/// text holds what a map of values cannot (a number beyond a double's
/// range).
pub(crate) fn arguments_map(
    arguments: Option<&RawValue>,
) -> Result<Map<String, Value>, ErrorObject> {
    match arguments {
        None => Ok(Map::new()),
        Some(text) => serde_json::from_str(text.get()).map_err(|e| not_arguments(&e)),
    }
}

fn not_arguments(e: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, format!("invalid tool arguments: {e}"))
}

/// `echo`'s answer to its `message` argument.
fn echo_message(message: Option<Value>) -> Result<String, String> {
    Args::string_of("message", message)?.ok_or_else(|| Args::missing("message"))
}

pub(crate) fn run(call: Call, name: &str, arguments: Map<String, Value>) -> Outcome {
    let mut args = Args(arguments);
    let result = match name {
        "echo" => echo_message(args.0.remove("message")).map(text),
        "add" => add(&args),
        "slow" => return slow(call, &args),
        "hang" => return Outcome::Spawn(Box::pin(std::future::pending())),
        "fail" => args
            .opt_string("message")
            .map(|m| tool_error(m.unwrap_or_else(|| "failed on purpose".to_owned()))),
        "crash" => match crash(&call, &mut args) {
            Ok(()) => return Outcome::NoReply,
            Err(e) => Err(e),
        },
        "big" => args.integer("bytes", MAX_BYTES).map(|n| text(ascii_text(n as usize))),
        "noisy" => noisy(&call, &args),
        "ask" if call.modern.is_some() => {
            return Outcome::Reply(match (args.string("what"), &call.modern) {
                (Ok(what), Some(meta)) => modern::ask(meta, &what),
                (Err(e), _) => Ok(tool_error(e)),
                (Ok(_), None) => Ok(tool_error("no request metadata".to_owned())),
            });
        }
        "ask" => return ask(call, &mut args),
        "ask_twice" | "retry_once" | "received_log" | "close_subscriptions"
            if call.modern.is_some() =>
        {
            return Outcome::Reply(modern_tool(&call, name));
        }
        "change" => change(&call, &mut args),
        "cancelled_log" => Ok(text(Value::Array(call.server.cancelled_ids()).to_string())),
        "spawn_child" => spawn_child(&args),
        "env" => args.string("name").map(|name| {
            let value = std::env::var_os(&name).map(|v| v.to_string_lossy().into_owned());
            text(json!(value).to_string())
        }),
        "log" => log(&call, &mut args),
        "annotated" => Ok(text(Value::Object(std::mem::take(&mut args.0)).to_string())),
        "touch" => args.string("uri").map(|uri| {
            let mut touched = false;
            if call.modern.is_none() && call.server.is_subscribed(&uri) {
                call.server.notify(
                    methods::NOTIFICATION_RESOURCES_UPDATED,
                    Some(json!({ "uri": uri })),
                    None,
                );
                touched = true;
            }
            touched |= call.server.broadcast(&Change::Updated(uri)) > 0;
            text(if touched { "touched" } else { "not subscribed" })
        }),
        "extra" if call.server.extra_tool() => Ok(text("extra")),
        _ => {
            return Outcome::Reply(Err(ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            )));
        }
    };
    Outcome::Reply(Ok(result.unwrap_or_else(tool_error)))
}

/// The tools only stateless-era requests have.
fn modern_tool(call: &Call, name: &str) -> Result<Value, ErrorObject> {
    let Some(meta) = &call.modern else {
        return Err(ErrorObject::new(error_code::INVALID_PARAMS, format!("Unknown tool: {name}")));
    };
    match name {
        "ask_twice" => modern::ask_twice(meta),
        "retry_once" => modern::retry_once(meta, call.server.next_retry()),
        "received_log" => Ok(text(Value::Array(call.server.received_log()).to_string())),
        _ => Ok(text(call.server.close_subscriptions().to_string())),
    }
}

fn add(args: &Args) -> Result<Value, String> {
    let sum = args.number("a")? + args.number("b")?;
    Ok(json!({
        "content": [{ "type": "text", "text": sum.to_string() }],
        "structuredContent": { "sum": sum },
    }))
}

fn slow(call: Call, args: &Args) -> Outcome {
    let (ms, steps) = match (args.integer("ms", MAX_SLOW_MS), args.opt_integer("steps", MAX_STEPS))
    {
        (Ok(ms), Ok(steps)) => (ms, steps.unwrap_or(0)),
        (Err(e), _) | (_, Err(e)) => return Outcome::Reply(Ok(tool_error(e))),
    };
    Outcome::Spawn(Box::pin(async move {
        let total = Duration::from_millis(ms);
        if steps == 0 {
            tokio::time::sleep(total).await;
        } else {
            let start = tokio::time::Instant::now();
            for i in 1..=steps {
                // Sleeping to absolute points keeps the total at `ms`
                // however long each wake-up takes.
                let at = start + total.mul_f64(i as f64 / steps as f64);
                tokio::time::sleep_until(at).await;
                if let Some(token) = &call.progress_token {
                    call.notify(
                        methods::NOTIFICATION_PROGRESS,
                        Some(json!({
                            "progressToken": token,
                            "progress": i,
                            "total": steps,
                            "message": format!("step {i} of {steps}"),
                        })),
                    );
                }
            }
        }
        text("done")
    }))
}

fn change(call: &Call, args: &mut Args) -> Result<Value, String> {
    let list = args.opt_string("list")?;
    match list.as_deref().unwrap_or("tools") {
        "tools" => {
            let now_listed = call.server.toggle_extra_tool();
            call.changed(methods::NOTIFICATION_TOOLS_LIST_CHANGED, &Change::Tools);
            Ok(text(if now_listed { "extra tool added" } else { "extra tool removed" }))
        }
        "resources" => {
            call.changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED, &Change::Resources);
            Ok(text("resource list changed"))
        }
        "prompts" => {
            call.changed(methods::NOTIFICATION_PROMPTS_LIST_CHANGED, &Change::Prompts);
            Ok(text("prompt list changed"))
        }
        other => Err(format!("list must be one of tools, resources, prompts; got {other:?}")),
    }
}

fn crash(call: &Call, args: &mut Args) -> Result<(), String> {
    let code = args.opt_integer("code", 255)?.unwrap_or(3);
    let message =
        args.opt_string("stderr")?.unwrap_or_else(|| "testkit: crashing on purpose".to_owned());
    stderr_line(&message);
    // `code` is at most 255, so it fits.
    call.server.send(Outgoing::Exit(i32::try_from(code).unwrap_or(255)));
    Ok(())
}

fn noisy(call: &Call, args: &Args) -> Result<Value, String> {
    let lines = args.opt_integer("lines", MAX_NOISY_LINES)?.unwrap_or(3);
    let long_line = args.opt_integer("long_line_bytes", MAX_BYTES)?;
    let rounds = args.opt_integer("garbage_rounds", MAX_NOISY_LINES)?.unwrap_or(1);
    let mut garbage: Vec<Vec<u8>> = Vec::new();
    for _ in 0..rounds {
        garbage.extend([
            b"this line is not JSON at all".to_vec(),
            br#"{"hello":"this is JSON, but not JSON-RPC"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":"testkit-no-such-request","result":{}}"#.to_vec(),
        ]);
    }
    if let Some(n) = long_line {
        garbage.push(long_line_of(n as usize));
    }
    let written = garbage.len();
    for line in garbage {
        call.server.send(Outgoing::RawLine(line));
    }
    {
        let mut err = std::io::stderr().lock();
        for i in 1..=lines {
            let _ = writeln!(err, "testkit: noisy stderr line {i} of {lines}");
        }
        let _ = err.flush();
    }
    Ok(text(format!(
        "noisy: wrote {written} garbage lines to stdout (stdio only) and {lines} lines to stderr"
    )))
}

/// A line of exactly `n` bytes: a valid `notifications/message` padded to
/// length when `n` leaves room for one, else `n` bytes of `x`.
fn long_line_of(n: usize) -> Vec<u8> {
    const HEAD: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"mcp-testkit","data":""#;
    const TAIL: &str = r#""}}"#;
    let mut line = Vec::with_capacity(n);
    if n >= HEAD.len() + TAIL.len() {
        line.extend_from_slice(HEAD.as_bytes());
        line.resize(n - TAIL.len(), b'x');
        line.extend_from_slice(TAIL.as_bytes());
    } else {
        line.resize(n, b'x');
    }
    line
}

fn ask(call: Call, args: &mut Args) -> Outcome {
    let what = match args.string("what") {
        Ok(w) => w,
        Err(e) => return Outcome::Reply(Ok(tool_error(e))),
    };
    let (method, params) = match what.as_str() {
        "ping" => (methods::PING, None),
        "roots" => (methods::ROOTS_LIST, None),
        "elicit" => {
            let mut params = json!({
                "message": "mcp-testkit asks for your name",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "title": "Name", "description": "Your name" },
                    },
                    "required": ["name"],
                },
            });
            // `mode` exists from 2025-11-25 on; older clients get the
            // request as their revision wrote it.
            let version = call.server.negotiated_version();
            let old = version
                .as_deref()
                .and_then(ProtocolVersion::parse)
                .is_some_and(|v| v < ProtocolVersion::V2025_11_25);
            if !old {
                params["mode"] = json!("form");
            }
            (methods::ELICITATION_CREATE, Some(params))
        }
        "sample" => (
            methods::SAMPLING_CREATE_MESSAGE,
            Some(json!({
                "messages": [{
                    "role": "user",
                    "content": { "type": "text", "text": "mcp-testkit asks: say hello" },
                }],
                "maxTokens": 100,
            })),
        ),
        other => {
            return Outcome::Reply(Ok(tool_error(format!(
                "what must be one of ping, roots, elicit, sample; got {other:?}"
            ))));
        }
    };
    Outcome::Spawn(Box::pin(async move {
        match call.server.request(method, params, call.related()).await {
            Ok(Ok(result)) => text(json!({ "result": result }).to_string()),
            Ok(Err(error)) => text(json!({ "error": error }).to_string()),
            Err(timeout) => tool_error(format!(
                "the client did not answer {method} within {} ms",
                timeout.0.as_millis()
            )),
        }
    }))
}

fn spawn_child(args: &Args) -> Result<Value, String> {
    let inherit = match args.0.get("inherit_stdio") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("argument `inherit_stdio` must be a boolean".to_owned()),
    };
    let mut command = std::process::Command::new("sleep");
    command.arg("300");
    if !inherit {
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    }
    // The child stays in the server's process group (the default), so a
    // client that kills the group kills it too. Dropping the handle neither
    // waits for nor kills it.
    let child = command.spawn().map_err(|e| format!("could not start `sleep 300`: {e}"))?;
    Ok(text(child.id().to_string()))
}

fn log(call: &Call, args: &mut Args) -> Result<Value, String> {
    let level = args.string("level")?;
    let message = args.string("message")?;
    let Some(index) = LOG_LEVELS.iter().position(|l| *l == level) else {
        return Err(format!("level must be one of {}", LOG_LEVELS.join(", ")));
    };
    match &call.modern {
        Some(meta) => match meta.log_level {
            None => {
                return Ok(text(
                    "not sent: the request's _meta has no io.modelcontextprotocol/logLevel",
                ));
            }
            Some(min) if index < min => {
                return Ok(text("not sent: below the request's io.modelcontextprotocol/logLevel"));
            }
            Some(_) => {}
        },
        None if !call.server.log_level_enabled(index) => {
            return Ok(text("not sent: below the level set by logging/setLevel"));
        }
        None => {}
    }
    call.notify(
        methods::NOTIFICATION_MESSAGE,
        Some(json!({ "level": level, "logger": "mcp-testkit", "data": message })),
    );
    Ok(text("logged"))
}

/// `n` bytes of ASCII: the alphabet and digits, over and over.
fn ascii_text(n: usize) -> String {
    const PATTERN: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
    let mut s = String::with_capacity(n);
    while s.len() < n {
        let take = PATTERN.len().min(n - s.len());
        s.push_str(&PATTERN[..take]);
    }
    s
}

/// A tool result of one text block.
pub(crate) fn text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

/// A result given as JSON text, as a value.
pub(crate) fn value_of(json: &RawValue) -> Result<Value, ErrorObject> {
    serde_json::from_str(json.get()).map_err(|e| {
        ErrorObject::new(error_code::INTERNAL_ERROR, format!("the result is not JSON: {e}"))
    })
}

/// [`text`]'s result written as JSON text.
fn text_json(message: &str) -> Option<Box<RawValue>> {
    crate::server::text_result_json(message)
}

/// A tool result with `isError: true` and the message as text.
pub(crate) fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

/// A tool's arguments, with typed accessors whose errors name the argument.
struct Args(Map<String, Value>);

impl Args {
    fn string(&mut self, name: &str) -> Result<String, String> {
        self.opt_string(name)?.ok_or_else(|| Args::missing(name))
    }

    fn opt_string(&mut self, name: &str) -> Result<Option<String>, String> {
        Args::string_of(name, self.0.remove(name))
    }

    /// A string argument's value, or none.
    fn string_of(name: &str, value: Option<Value>) -> Result<Option<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("argument `{name}` must be a string")),
        }
    }

    fn missing(name: &str) -> String {
        format!("missing required argument `{name}`")
    }

    fn number(&self, name: &str) -> Result<f64, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Err(Args::missing(name)),
            Some(v) => v.as_f64().ok_or_else(|| format!("argument `{name}` must be a number")),
        }
    }

    fn integer(&self, name: &str, max: u64) -> Result<u64, String> {
        self.opt_integer(name, max)?.ok_or_else(|| Args::missing(name))
    }

    /// A whole number in `0..=max`; `5.0` counts as `5`.
    fn opt_integer(&self, name: &str, max: u64) -> Result<Option<u64>, String> {
        let value = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let n = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= max as f64)
                .map(|f| f as u64)
        });
        match n {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(format!("argument `{name}` must be an integer from 0 to {max}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_documented() {
        for extra in [false, true] {
            for t in definitions(extra, true) {
                for field in ["name", "title", "description"] {
                    assert!(t[field].as_str().is_some_and(|s| !s.is_empty()), "{t}: {field}");
                }
                assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            }
        }
        assert_eq!(definitions(true, false).len(), definitions(false, false).len() + 1);
        assert_eq!(definitions(false, true).len(), definitions(false, false).len() + 4);
    }

    #[test]
    fn sizes_are_exact() {
        for n in [0, 1, 35, 36, 37, 1000, 65_537] {
            assert_eq!(ascii_text(n).len(), n);
            assert_eq!(long_line_of(n).len(), n);
        }
        let line = long_line_of(500);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["method"], "notifications/message");
    }

    #[test]
    fn integer_arguments() {
        let args = Args(
            json!({"a": 5, "b": 5.0, "c": 5.5, "d": -1, "e": "5", "f": 1000})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(args.opt_integer("a", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("b", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("missing", 10), Ok(None));
        for bad in ["c", "d", "e", "f"] {
            assert!(args.opt_integer(bad, 10).is_err(), "{bad}");
        }
        assert!(args.integer("missing", 10).unwrap_err().contains("missing"));
    }
}
