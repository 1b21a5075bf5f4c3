//! The rest of the protocol, each through `Registry::with_client`: the
//! server's identity (`info`), resources, prompts, completion, tasks and
//! the notifications (`listen`, `resources subscribe`).

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_host_registry::{DynTransport, ServerClient, TransportError};
use mcp_http::{EventStreamState, HttpTransport};
use mcp_proto::client::ServerNotification;
use mcp_proto::types::{CallToolResult, CompleteRequestParams, JsonObject, SubscriptionFilter};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::cli::{CompleteArgs, Output, PromptsCommand, ResourcesCommand, TasksCommand};
use crate::commands::{Ctx, pairs, print_tool_result};
use crate::failure::{Failure, Kind};
use crate::output::{add_protocol, emit, emit_json, note, one_line, plural, summary, table};

/// Runs `op` on the connected server's client.
async fn with<T, F, Fut>(ctx: &Ctx<'_>, server: &str, op: F) -> Result<T, Failure>
where
    F: FnOnce(ServerClient) -> Fut,
    Fut: Future<Output = Result<T, mcp_host_registry::TransportError>>,
{
    ctx.connect(server).await?;
    ctx.registry.with_client(server, op).await.map_err(|e| ctx.fail(e))
}

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `{"server": ..., key: value}` on stdout.
fn emit_keyed(server: &str, key: &str, value: Value) {
    emit_json(&json!({"server": server, key: value}));
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// `mcpc info`: who the server is, what it offers, what it asks of us.
pub(crate) async fn info(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    ctx.connect(&server).await?;
    let init = ctx.registry.initialize(&server).await.map_err(|e| ctx.fail(e))?;
    let status = ctx.registry.status(&server).await.map_err(|e| ctx.fail(e))?;
    let capabilities = to_json(&init.capabilities);
    match ctx.output() {
        Output::Json => {
            let mut v = json!({
                "server": server,
                "server_info": init.server_info,
                "capabilities": capabilities,
                "instructions": init.instructions,
            });
            add_protocol(&mut v, &status);
            emit_json(&v);
        }
        Output::Text => {
            let info = to_json(&init.server_info);
            let mut name = text(&info, "name");
            if let Some(version) = info.get("version").and_then(Value::as_str) {
                name.push_str(&format!(" {version}"));
            }
            if let Some(title) = info.get("title").and_then(Value::as_str) {
                name.push_str(&format!(" ({title})"));
            }
            emit(&format!("{server}: {}", one_line(&name)));
            if let (Some(version), Some(era)) = (status.protocol_version, status.era) {
                emit(&format!("  protocol      {version} ({era} era)"));
            }
            let mut caps = Vec::new();
            if let Some(map) = capabilities.as_object() {
                for (name, value) in map {
                    let flags: Vec<&str> = value
                        .as_object()
                        .map(|o| {
                            o.iter()
                                .filter(|(_, v)| v.as_bool() == Some(true) || v.is_object())
                                .map(|(k, _)| k.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    if flags.is_empty() {
                        caps.push(name.clone());
                    } else {
                        caps.push(format!("{name} ({})", flags.join(", ")));
                    }
                }
            }
            emit(&format!(
                "  capabilities  {}",
                if caps.is_empty() {
                    "none".into()
                } else {
                    one_line(&caps.join(", ")).into_owned()
                }
            ));
            match init.instructions.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
                Some(instructions) => {
                    emit("  instructions");
                    for line in instructions.lines() {
                        emit(format!("    {line}").trim_end());
                    }
                }
                None => emit("  instructions  none"),
            }
        }
    }
    Ok(0)
}

/// `mcpc resources ...`.
pub(crate) async fn resources(ctx: &Ctx<'_>, command: &ResourcesCommand) -> Result<u8, Failure> {
    match command {
        ResourcesCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = with(ctx, &server, |c| async move { c.list_resources().await }).await?;
            let list = to_json(&list);
            print_list(ctx, &server, "resources", "resource", &list, |r| {
                vec![format!("  {}", text(r, "uri")), text(r, "mimeType"), describe(r)]
            });
        }
        ResourcesCommand::Templates { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list =
                with(ctx, &server, |c| async move { c.list_resource_templates().await }).await?;
            let list = to_json(&list);
            print_list(ctx, &server, "resourceTemplates", "template", &list, |r| {
                vec![format!("  {}", text(r, "uriTemplate")), text(r, "mimeType"), describe(r)]
            });
        }
        ResourcesCommand::Read { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            let uri = rest[0].clone();
            let result = with(ctx, &server, |c| async move { c.read_resource(&uri).await }).await?;
            print_contents(ctx.output(), &server, &to_json(&result));
        }
        ResourcesCommand::Subscribe { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            return subscribe(ctx, &server, &rest[0]).await;
        }
    }
    Ok(0)
}

/// The name, title and first line of the description of a listed item.
fn describe(item: &Value) -> String {
    let name = text(item, "name");
    match about(item) {
        about if about.is_empty() => name,
        about => format!("{name}: {about}"),
    }
}

/// The title (when it is not the name) and first line of the description.
fn about(item: &Value) -> String {
    let name = text(item, "name");
    let title = text(item, "title");
    let description = summary(item.get("description").and_then(Value::as_str));
    match (title.is_empty() || title == name, description.is_empty()) {
        (true, _) => description,
        (false, true) => title,
        (false, false) => format!("{title}: {description}"),
    }
}

/// A list: `server: N things` and a table, or `{"server", key: [...]}`.
fn print_list(
    ctx: &Ctx<'_>,
    server: &str,
    key: &str,
    noun: &str,
    list: &Value,
    row: impl Fn(&Value) -> Vec<String>,
) {
    let items = list.as_array().cloned().unwrap_or_default();
    match ctx.output() {
        Output::Json => emit_keyed(server, key, list.clone()),
        Output::Text => {
            emit(&format!("{server}: {} {noun}{}", items.len(), plural(items.len())));
            let rows: Vec<Vec<String>> = items.iter().map(row).collect();
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
}

/// The contents of a read resource: text as it is, a blob as its size.
fn print_contents(output: Output, server: &str, result: &Value) {
    if output == Output::Json {
        let mut v = result.clone();
        v["server"] = json!(server);
        emit_json(&v);
        return;
    }
    let contents = result.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
    let several = contents.len() > 1;
    for item in &contents {
        if several {
            emit(&format!(
                "--- {} ({})",
                one_line(&text(item, "uri")),
                one_line(&text(item, "mimeType"))
            ));
        }
        match (item.get("text").and_then(Value::as_str), item.get("blob").and_then(Value::as_str)) {
            (Some(t), _) => emit(t.strip_suffix('\n').unwrap_or(t)),
            (None, Some(b)) => emit(&format!(
                "[blob: {}, {} bytes base64-encoded; --output json shows it]",
                one_line(
                    item.get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("application/octet-stream")
                ),
                b.len()
            )),
            (None, None) => emit("[no content]"),
        }
    }
}

/// `resources subscribe`: reads the resource, then reads it again at each
/// update, until Ctrl-C.
async fn subscribe(ctx: &Ctx<'_>, server: &str, uri: &str) -> Result<u8, Failure> {
    let owned = uri.to_owned();
    let mut feed = with(ctx, server, |c| async move {
        if c.protocol_version().is_some_and(|v| v.is_modern()) {
            let filter = SubscriptionFilter {
                resource_subscriptions: Some(vec![owned]),
                ..Default::default()
            };
            return Ok(Feed::Listen(c.listen(filter).await?));
        }
        let notifications = c.notifications();
        c.subscribe_resource(&owned).await?;
        Ok(Feed::Stream(notifications, event_stream(&c)))
    })
    .await?;
    let read = |uri: String| async move {
        with(ctx, server, |c| async move { c.read_resource(&uri).await }).await
    };
    let first = read(uri.to_owned()).await?;
    if ctx.output() == Output::Text {
        emit(&format!("{server}: subscribed to {uri} (Ctrl-C ends)"));
    }
    print_contents(ctx.output(), server, &to_json(&first));
    while let Some(n) = feed.recv().await {
        if let ServerNotification::ResourceUpdated(p) = n
            && p.uri == uri
        {
            if ctx.output() == Output::Text {
                emit(&format!("--- updated: {uri}"));
            }
            let again = read(uri.to_owned()).await?;
            print_contents(ctx.output(), server, &to_json(&again));
        }
    }
    Err(feed.ended(server))
}

/// `mcpc prompts ...`.
pub(crate) async fn prompts(ctx: &Ctx<'_>, command: &PromptsCommand) -> Result<u8, Failure> {
    match command {
        PromptsCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = with(ctx, &server, |c| async move { c.list_prompts().await }).await?;
            let list = to_json(&list);
            print_list(ctx, &server, "prompts", "prompt", &list, |p| {
                let args: Vec<String> = p
                    .get("arguments")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|arg| {
                                let star = if arg.get("required") == Some(&json!(true)) {
                                    ""
                                } else {
                                    "?"
                                };
                                format!("{}{star}", text(arg, "name"))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                vec![format!("  {}", text(p, "name")), args.join(" "), about(p)]
            });
        }
        PromptsCommand::Get { words } => {
            // [SERVER] PROMPT key=value...: the first word is a server when
            // the second is no key=value.
            let (server, rest) = match words.as_slice() {
                [first, second, ..] if !second.contains('=') => {
                    (ctx.pick(Some(first))?, &words[1..])
                }
                _ => (ctx.pick(None)?, &words[..]),
            };
            let name = rest[0].clone();
            let arguments: BTreeMap<String, String> = pairs(&rest[1..])?.into_iter().collect();
            let arguments = (!arguments.is_empty()).then_some(arguments);
            let result =
                with(ctx, &server, |c| async move { c.get_prompt(&name, arguments).await }).await?;
            let result = to_json(&result);
            match ctx.output() {
                Output::Json => {
                    let mut v = result;
                    v["server"] = json!(server);
                    emit_json(&v);
                }
                Output::Text => {
                    if let Some(d) = result.get("description").and_then(Value::as_str) {
                        emit(&format!("{server}: {d}"));
                    }
                    for m in result.get("messages").and_then(Value::as_array).into_iter().flatten()
                    {
                        emit(&format!(
                            "[{}] {}",
                            one_line(&text(m, "role")),
                            content_text(&m["content"])
                        ));
                    }
                }
            }
        }
    }
    Ok(0)
}

/// A content block as text: text as it is, anything else by its kind.
fn content_text(c: &Value) -> String {
    match c.get("type").and_then(Value::as_str) {
        Some("text") => text(c, "text"),
        Some("resource") => {
            let r = &c["resource"];
            match r.get("text").and_then(Value::as_str) {
                Some(t) => format!("[resource {}]\n{t}", text(r, "uri")),
                None => format!("[resource {}]", text(r, "uri")),
            }
        }
        Some("resource_link") => format!("[link: {}]", text(c, "uri")),
        Some(kind) => format!("[{kind}: {}]", text(c, "mimeType")),
        None => c.to_string(),
    }
}

/// `mcpc complete`: the values a server suggests for an argument.
pub(crate) async fn complete(ctx: &Ctx<'_>, args: &CompleteArgs) -> Result<u8, Failure> {
    // [SERVER] ARG=VALUE [context...]: the first word is a server when it
    // has no `=`.
    let (server, rest) = match args.words.as_slice() {
        [first, rest @ ..] if !first.contains('=') => (ctx.pick(Some(first))?, rest),
        _ => (ctx.pick(None)?, &args.words[..]),
    };
    let mut given = pairs(rest)?.into_iter();
    let Some((argument, value)) = given.next() else {
        return Err(Failure::usage(
            "complete needs ARGUMENT=VALUE-SO-FAR (the value may be empty)",
        ));
    };
    let context: BTreeMap<String, String> = given.collect();
    let reference = match (&args.prompt, &args.resource) {
        (Some(name), _) => json!({"type": "ref/prompt", "name": name}),
        (None, Some(uri)) => json!({"type": "ref/resource", "uri": uri}),
        (None, None) => {
            return Err(Failure::usage("complete needs --prompt NAME or --resource URI"));
        }
    };
    let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
    if !context.is_empty() {
        params["context"] = json!({"arguments": context});
    }
    let params: CompleteRequestParams = serde_json::from_value(params)
        .map_err(|e| Failure::usage(format!("cannot build the request: {e}")))?;
    let result = with(ctx, &server, |c| async move { c.complete(&params).await }).await?;
    let completion = to_json(&result)["completion"].clone();
    match ctx.output() {
        Output::Json => emit_keyed(&server, "completion", completion),
        Output::Text => {
            for v in completion.get("values").and_then(Value::as_array).into_iter().flatten() {
                emit(&one_line(v.as_str().unwrap_or_default()));
            }
            if completion.get("hasMore") == Some(&json!(true)) {
                let total = completion.get("total").map(Value::to_string).unwrap_or_default();
                note(&format!("mcpc: more values exist ({total} in all)"));
            }
        }
    }
    Ok(0)
}

/// `mcpc tasks ...` (the tasks of the 2025-11-25 revision).
pub(crate) async fn tasks(ctx: &Ctx<'_>, command: &TasksCommand) -> Result<u8, Failure> {
    let (words, what) = match command {
        TasksCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = with(ctx, &server, |c| async move { c.list_tasks().await }).await?;
            let list = to_json(&list);
            print_list(ctx, &server, "tasks", "task", &list, task_row);
            return Ok(0);
        }
        TasksCommand::Get { words } => (words, "get"),
        TasksCommand::Cancel { words } => (words, "cancel"),
        TasksCommand::Result { words } => (words, "result"),
    };
    let (server, rest) = ctx.split(words, 1)?;
    let id = rest[0].clone();
    match what {
        "result" => task_result(ctx, &server, id).await,
        _ => {
            let cancel = what == "cancel";
            let task = with(ctx, &server, |c| async move {
                if cancel { c.cancel_task(&id).await } else { c.get_task(&id).await }
            })
            .await?;
            print_task(ctx.output(), &server, &to_json(&task));
            Ok(0)
        }
    }
}

fn task_row(t: &Value) -> Vec<String> {
    vec![
        format!("  {}", text(t, "taskId")),
        text(t, "status"),
        text(t, "lastUpdatedAt"),
        text(t, "statusMessage"),
    ]
}

fn print_task(output: Output, server: &str, task: &Value) {
    match output {
        Output::Json => emit_keyed(server, "task", task.clone()),
        Output::Text => {
            for line in table(&[task_row(task)]) {
                emit(line.trim_start());
            }
        }
    }
}

/// `call --task`: starts the call as a task; prints it and, unless
/// detached, waits for its result.
pub(crate) async fn start_task(
    ctx: &Ctx<'_>,
    server: &str,
    tool: &str,
    arguments: JsonObject,
    detach: bool,
) -> Result<u8, Failure> {
    let tool = tool.to_owned();
    let created =
        with(ctx, server, |c| async move { c.call_tool_as_task(&tool, arguments, None).await })
            .await?;
    let task = to_json(&created.task);
    if detach {
        print_task(ctx.output(), server, &task);
        return Ok(0);
    }
    note(&format!(
        "mcpc: task {} {}",
        one_line(&text(&task, "taskId")),
        one_line(&text(&task, "status"))
    ));
    task_result(ctx, server, text(&task, "taskId")).await
}

/// Waits for a task's result (`tasks/result`, up to `--max-time`) and
/// prints it as a tool's result.
async fn task_result(ctx: &Ctx<'_>, server: &str, id: String) -> Result<u8, Failure> {
    let mut options = ctx.request_options();
    options.timeout = Some(Duration::from_secs_f64(ctx.g.max_time));
    let result: CallToolResult =
        with(ctx, server, |c| async move { c.task_result::<CallToolResult>(&id, options).await })
            .await?;
    Ok(print_tool_result(ctx.output(), &result))
}

/// How long opening `listen` (subscriptions, the stateless era's stream)
/// may take; once open, a broken stream is reopened by the client itself.
const LISTEN_OPEN_LIMIT: Duration = Duration::from_secs(30);

/// `mcpc listen`: every notification the server sends, one per line, until
/// Ctrl-C, or until no more can arrive (the stream that carries them ended
/// for good: then a connection failure, exit 3).
pub(crate) async fn listen(
    ctx: &Ctx<'_>,
    server: Option<&str>,
    resources: &[String],
) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    let uris = resources.to_vec();
    let open = with(ctx, &server, |c| async move {
        if c.protocol_version().is_some_and(|v| v.is_modern()) {
            let filter = SubscriptionFilter {
                tools_list_changed: Some(true),
                prompts_list_changed: Some(true),
                resources_list_changed: Some(true),
                resource_subscriptions: (!uris.is_empty()).then_some(uris),
                ..Default::default()
            };
            return Ok(Feed::Listen(c.listen(filter).await?));
        }
        let notifications = c.notifications();
        for uri in &uris {
            c.subscribe_resource(uri).await?;
        }
        Ok(Feed::Stream(notifications, event_stream(&c)))
    });
    let mut feed = tokio::time::timeout(LISTEN_OPEN_LIMIT, open).await.map_err(|_| {
        Failure::new(
            Kind::Timeout,
            format!("MCP server {server:?} did not open the notification stream in time"),
        )
        .with_server(&server)
    })??;
    if let Feed::Listen(s) = &feed
        && !s.refused().is_empty()
    {
        note(&format!("mcpc: {server} does not send: {}", one_line(&s.refused().join(", "))));
    }
    if ctx.output() == Output::Text {
        note(&format!("mcpc: listening to {server} (Ctrl-C ends)"));
    }
    while let Some(n) = feed.recv().await {
        if matches!(n, ServerNotification::SubscriptionsAcknowledged(_)) {
            // The stream's opening, already reported above.
            continue;
        }
        let (method, params) = notification_parts(&n);
        match ctx.output() {
            Output::Json => {
                emit_json(&json!({"server": server, "method": method, "params": params}))
            }
            Output::Text => {
                emit(&format!("{server}: {}", one_line(&notification_text(method, &params))))
            }
        }
    }
    Err(feed.ended(&server))
}

/// Where the notifications come from: the client's stream (the handshake
/// era; over HTTP with the state of the GET stream that carries them), or
/// an open `subscriptions/listen` (the stateless era).
enum Feed {
    Stream(mcp_host_registry::mcp_peer::Notifications, Option<watch::Receiver<EventStreamState>>),
    Listen(mcp_host_registry::mcp_peer::Subscription),
}

/// The state of an HTTP server's standalone GET stream (none for stdio).
fn event_stream(c: &ServerClient) -> Option<watch::Receiver<EventStreamState>> {
    let transport: &dyn DynTransport<TransportError> = &**c.transport();
    transport.as_any().downcast_ref::<HttpTransport>().map(HttpTransport::watch_event_stream)
}

/// Whether no notification can come any more over that stream: it was
/// given up, or the server has none.
fn gone(state: &EventStreamState) -> bool {
    matches!(state, EventStreamState::Ended { .. } | EventStreamState::NotOffered)
}

impl Feed {
    /// The next notification; `None` when no more can come.
    async fn recv(&mut self) -> Option<ServerNotification> {
        match self {
            Feed::Stream(n, None) => n.recv().await,
            Feed::Stream(n, Some(state)) => tokio::select! {
                biased;
                next = n.recv() => next,
                _ = state.wait_for(gone) => None,
            },
            Feed::Listen(s) => s.recv().await,
        }
    }

    /// The failure to report once [`recv`](Self::recv) gave `None`.
    fn ended(&self, server: &str) -> Failure {
        let reason = match self {
            Feed::Stream(_, Some(state)) => match &*state.borrow() {
                EventStreamState::Ended { reason } => Some(reason.clone()),
                EventStreamState::NotOffered => {
                    Some("the server offers none (it answers GET with 405)".to_owned())
                }
                _ => None,
            },
            Feed::Stream(_, None) => None,
            Feed::Listen(s) => s.end_reason(),
        };
        let message = match reason {
            Some(reason) => format!(
                "the notification stream of MCP server {server:?} ended, no more notifications \
                 can arrive: {reason}"
            ),
            None => format!("MCP server {server:?} closed the connection"),
        };
        Failure::new(Kind::Connection, message).with_server(server)
    }
}

/// A notification's method and parameters.
fn notification_parts(n: &ServerNotification) -> (&str, Value) {
    use mcp_proto::methods as m;
    match n {
        ServerNotification::Progress(p) => (m::NOTIFICATION_PROGRESS, to_json(p)),
        ServerNotification::LogMessage(p) => (m::NOTIFICATION_MESSAGE, to_json(p)),
        ServerNotification::ResourceUpdated(p) => (m::NOTIFICATION_RESOURCES_UPDATED, to_json(p)),
        ServerNotification::ToolListChanged => (m::NOTIFICATION_TOOLS_LIST_CHANGED, json!({})),
        ServerNotification::PromptListChanged => (m::NOTIFICATION_PROMPTS_LIST_CHANGED, json!({})),
        ServerNotification::ResourceListChanged => {
            (m::NOTIFICATION_RESOURCES_LIST_CHANGED, json!({}))
        }
        ServerNotification::Cancelled(p) => (m::NOTIFICATION_CANCELLED, to_json(p)),
        ServerNotification::TaskStatus(p) => ("notifications/tasks/status", to_json(p)),
        ServerNotification::ElicitationComplete(p) => {
            ("notifications/elicitation/complete", to_json(p))
        }
        ServerNotification::SubscriptionsAcknowledged(p) => {
            (m::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, to_json(p))
        }
        ServerNotification::Other(raw) => {
            (raw.method.as_str(), raw.params.clone().unwrap_or(Value::Null))
        }
        #[allow(unreachable_patterns)]
        _ => ("unknown", Value::Null),
    }
}

/// One line for a person.
fn notification_text(method: &str, params: &Value) -> String {
    use mcp_proto::methods as m;
    match method {
        m::NOTIFICATION_TOOLS_LIST_CHANGED => "the tool list changed".into(),
        m::NOTIFICATION_PROMPTS_LIST_CHANGED => "the prompt list changed".into(),
        m::NOTIFICATION_RESOURCES_LIST_CHANGED => "the resource list changed".into(),
        m::NOTIFICATION_RESOURCES_UPDATED => format!("resource updated: {}", text(params, "uri")),
        m::NOTIFICATION_MESSAGE => {
            let data = match &params["data"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let logger = params.get("logger").and_then(Value::as_str);
            let logger = logger.map(|l| format!(" {l}:")).unwrap_or_default();
            format!("[{}]{logger} {data}", text(params, "level"))
        }
        _ => format!("{method} {params}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_read_as_lines() {
        let cases = [
            (ServerNotification::ToolListChanged, "the tool list changed"),
            (
                ServerNotification::LogMessage(
                    serde_json::from_value(json!({"level": "info", "logger": "db", "data": "up"}))
                        .unwrap(),
                ),
                "[info] db: up",
            ),
            (
                ServerNotification::ResourceUpdated(
                    serde_json::from_value(json!({"uri": "test://x"})).unwrap(),
                ),
                "resource updated: test://x",
            ),
        ];
        for (n, expected) in cases {
            let (method, params) = notification_parts(&n);
            assert_eq!(notification_text(method, &params), expected);
        }
    }

    #[test]
    fn content_blocks_as_text() {
        assert_eq!(content_text(&json!({"type": "text", "text": "hi"})), "hi");
        assert_eq!(
            content_text(&json!({"type": "image", "mimeType": "image/png", "data": ""})),
            "[image: image/png]"
        );
        assert_eq!(
            content_text(&json!({"type": "resource", "resource": {"uri": "u", "text": "t"}})),
            "[resource u]\nt"
        );
    }
}
