//! The rest of the protocol, each through `Registry::with_client`: the
//! server's identity (`info`), resources, prompts, completion, tasks and
//! the notifications (`listen`, `resources subscribe`).

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_host_registry::ServerClient;
use mcp_proto::client::ServerNotification;
use mcp_proto::types::{
    CallToolResult, CompleteArgument, CompleteContext, CompleteRequestParams, ContentBlock,
    JsonObject, PromptReference, ReadResourceResult, Reference, ResourceContents,
    ResourceTemplateReference, ServerCapabilities, SubscriptionFilter, Task,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::{CompleteArgs, Output, PromptsCommand, ResourcesCommand, TasksCommand};
use crate::commands::{Ctx, pairs, print_tool_result};
use crate::failure::{Failure, Kind};
use crate::output::{
    add_protocol, emit, emit_json, log_text, note, one_line, plural, summary, table,
};

/// Runs `op` on the connected server's client.
async fn with<T, F, Fut>(ctx: &Ctx<'_>, server: &str, op: F) -> Result<T, Failure>
where
    F: FnOnce(ServerClient) -> Fut,
    Fut: Future<Output = Result<T, mcp_host_registry::TransportError>>,
{
    ctx.connect(server).await?;
    ctx.registry.with_client(server, op).await.map_err(|e| ctx.fail(e))
}

/// `{"server": ..., key: value}` on stdout.
fn emit_keyed(server: &str, key: &str, value: Value) {
    emit_json(&json!({"server": server, key: value}));
}

/// `mcpc info`: who the server is, what it offers, what it asks of us.
pub(crate) async fn info(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    ctx.connect(&server).await?;
    let init = ctx.registry.initialize(&server).await.map_err(|e| ctx.fail(e))?;
    let status = ctx.registry.status(&server).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Json => {
            let mut v = json!({
                "server": server,
                "server_info": init.server_info,
                "capabilities": init.capabilities,
                "instructions": init.instructions,
            });
            add_protocol(&mut v, &status);
            emit_json(&v);
        }
        Output::Text => {
            let info = &init.server_info;
            let mut name = format!("{} {}", info.name, info.version);
            if let Some(title) = &info.title {
                name.push_str(&format!(" ({title})"));
            }
            emit(&format!("{server}: {}", one_line(&name)));
            if let (Some(version), Some(era)) = (status.protocol_version, status.era) {
                emit(&format!("  protocol      {version} ({era} era)"));
            }
            let caps = capabilities(&init.capabilities);
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

/// The capabilities a server declares, by name (sorted), each with the
/// features it turns on in brackets: the members set to `true` or given
/// as objects (`resources (listChanged, subscribe)`).
fn capabilities(caps: &ServerCapabilities) -> Vec<String> {
    // The members of an object that turn something on.
    fn on(object: &JsonObject) -> impl Iterator<Item = &str> {
        object
            .iter()
            .filter(|(_, v)| v.as_bool() == Some(true) || v.is_object())
            .map(|(k, _)| k.as_str())
    }
    let flag = |name: &'static str, set: Option<bool>| (set == Some(true)).then_some(name);
    let present = |name: &'static str, set: bool| set.then_some(name);
    let mut all: Vec<(&str, Vec<&str>)> = Vec::new();
    let objects = [
        ("completions", &caps.completions),
        ("experimental", &caps.experimental),
        ("extensions", &caps.extensions),
        ("logging", &caps.logging),
    ];
    for (name, object) in objects {
        if let Some(object) = object {
            all.push((name, on(object).collect()));
        }
    }
    if let Some(p) = &caps.prompts {
        all.push((
            "prompts",
            flag("listChanged", p.list_changed).into_iter().chain(on(&p.extra)).collect(),
        ));
    }
    if let Some(r) = &caps.resources {
        let known = [flag("listChanged", r.list_changed), flag("subscribe", r.subscribe)];
        all.push(("resources", known.into_iter().flatten().chain(on(&r.extra)).collect()));
    }
    if let Some(t) = &caps.tasks {
        let known = [
            present("cancel", t.cancel.is_some()),
            present("list", t.list.is_some()),
            present("requests", t.requests.is_some()),
        ];
        all.push(("tasks", known.into_iter().flatten().chain(on(&t.extra)).collect()));
    }
    if let Some(t) = &caps.tools {
        all.push((
            "tools",
            flag("listChanged", t.list_changed).into_iter().chain(on(&t.extra)).collect(),
        ));
    }
    for (name, value) in &caps.extra {
        all.push((name, value.as_object().map(|o| on(o).collect()).unwrap_or_default()));
    }
    all.sort();
    all.into_iter()
        .map(|(name, mut flags)| {
            flags.sort_unstable();
            if flags.is_empty() {
                name.to_owned()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect()
}

/// `mcpc resources ...`.
pub(crate) async fn resources(ctx: &Ctx<'_>, command: &ResourcesCommand) -> Result<u8, Failure> {
    match command {
        ResourcesCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = with(ctx, &server, |c| async move { c.list_resources().await }).await?;
            print_list(ctx, &server, "resources", "resource", &list, |r| {
                let about = describe(&r.name, r.title.as_deref(), r.description.as_deref());
                vec![format!("  {}", r.uri), r.mime_type.clone().unwrap_or_default(), about]
            });
        }
        ResourcesCommand::Templates { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list =
                with(ctx, &server, |c| async move { c.list_resource_templates().await }).await?;
            print_list(ctx, &server, "resourceTemplates", "template", &list, |r| {
                let about = describe(&r.name, r.title.as_deref(), r.description.as_deref());
                vec![
                    format!("  {}", r.uri_template),
                    r.mime_type.clone().unwrap_or_default(),
                    about,
                ]
            });
        }
        ResourcesCommand::Read { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            let uri = rest[0].clone();
            let result = with(ctx, &server, |c| async move { c.read_resource(&uri).await }).await?;
            print_contents(ctx.output(), &server, &result);
        }
        ResourcesCommand::Subscribe { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            return subscribe(ctx, &server, &rest[0]).await;
        }
    }
    Ok(0)
}

/// The name, title and first line of the description of a listed item.
fn describe(name: &str, title: Option<&str>, description: Option<&str>) -> String {
    match about(name, title, description) {
        about if about.is_empty() => name.to_owned(),
        about => format!("{name}: {about}"),
    }
}

/// The title (when it is not the name) and first line of the description.
fn about(name: &str, title: Option<&str>, description: Option<&str>) -> String {
    let title = title.unwrap_or("");
    let description = summary(description);
    match (title.is_empty() || title == name, description.is_empty()) {
        (true, _) => description,
        (false, true) => title.to_owned(),
        (false, false) => format!("{title}: {description}"),
    }
}

/// A list: `server: N things` and a table, or `{"server", key: [...]}`.
fn print_list<T: Serialize>(
    ctx: &Ctx<'_>,
    server: &str,
    key: &str,
    noun: &str,
    items: &[T],
    row: impl Fn(&T) -> Vec<String>,
) {
    match ctx.output() {
        Output::Json => emit_keyed(server, key, json!(items)),
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
fn print_contents(output: Output, server: &str, result: &ReadResourceResult) {
    if output == Output::Json {
        let mut v = json!(result);
        v["server"] = json!(server);
        emit_json(&v);
        return;
    }
    let several = result.contents.len() > 1;
    for item in &result.contents {
        if several {
            emit(&format!(
                "--- {} ({})",
                one_line(item.uri()),
                one_line(item.mime_type().unwrap_or(""))
            ));
        }
        match item {
            ResourceContents::Text(t) => emit(t.text.strip_suffix('\n').unwrap_or(&t.text)),
            ResourceContents::Blob(b) => emit(&format!(
                "[blob: {}, {} bytes base64-encoded; --output json shows it]",
                one_line(b.mime_type.as_deref().unwrap_or("application/octet-stream")),
                b.blob.len()
            )),
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
        Ok(Feed::Stream(notifications))
    })
    .await?;
    let read = |uri: String| async move {
        with(ctx, server, |c| async move { c.read_resource(&uri).await }).await
    };
    let first = read(uri.to_owned()).await?;
    if ctx.output() == Output::Text {
        emit(&format!("{server}: subscribed to {uri} (Ctrl-C ends)"));
    }
    print_contents(ctx.output(), server, &first);
    while let Some(n) = feed.recv().await {
        if let ServerNotification::ResourceUpdated(p) = n
            && p.uri == uri
        {
            if ctx.output() == Output::Text {
                emit(&format!("--- updated: {uri}"));
            }
            let again = read(uri.to_owned()).await?;
            print_contents(ctx.output(), server, &again);
        }
    }
    Err(Failure::new(Kind::Connection, format!("MCP server {server:?} closed the connection"))
        .with_server(server))
}

/// `mcpc prompts ...`.
pub(crate) async fn prompts(ctx: &Ctx<'_>, command: &PromptsCommand) -> Result<u8, Failure> {
    match command {
        PromptsCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = with(ctx, &server, |c| async move { c.list_prompts().await }).await?;
            print_list(ctx, &server, "prompts", "prompt", &list, |p| {
                let args: Vec<String> = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|arg| {
                        let star = if arg.required == Some(true) { "" } else { "?" };
                        format!("{}{star}", arg.name)
                    })
                    .collect();
                let about = about(&p.name, p.title.as_deref(), p.description.as_deref());
                vec![format!("  {}", p.name), args.join(" "), about]
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
            match ctx.output() {
                Output::Json => {
                    let mut v = json!(result);
                    v["server"] = json!(server);
                    emit_json(&v);
                }
                Output::Text => {
                    if let Some(d) = &result.description {
                        emit(&format!("{server}: {d}"));
                    }
                    for m in &result.messages {
                        emit(&format!(
                            "[{}] {}",
                            one_line(m.role.as_str()),
                            content_text(&m.content)
                        ));
                    }
                }
            }
        }
    }
    Ok(0)
}

/// A content block as text: text as it is, anything else by its kind.
fn content_text(c: &ContentBlock) -> String {
    match c {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => format!("[resource {}]\n{}", t.uri, t.text),
            ResourceContents::Blob(b) => format!("[resource {}]", b.uri),
        },
        ContentBlock::ResourceLink(link) => format!("[link: {}]", link.uri),
        ContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
        // A kind this client does not know: its type and media type.
        ContentBlock::Unknown(v) => match v.get("type").and_then(Value::as_str) {
            Some(kind) => {
                format!("[{kind}: {}]", v.get("mimeType").and_then(Value::as_str).unwrap_or(""))
            }
            None => v.to_string(),
        },
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
        (Some(name), _) => {
            Reference::Prompt(PromptReference { name: name.clone(), ..Default::default() })
        }
        (None, Some(uri)) => Reference::Resource(ResourceTemplateReference {
            uri: uri.clone(),
            ..Default::default()
        }),
        (None, None) => {
            return Err(Failure::usage("complete needs --prompt NAME or --resource URI"));
        }
    };
    let params = CompleteRequestParams {
        reference,
        argument: CompleteArgument { name: argument, value, ..Default::default() },
        context: (!context.is_empty())
            .then(|| CompleteContext { arguments: Some(context), ..Default::default() }),
        meta: None,
        extra: JsonObject::new(),
    };
    let result = with(ctx, &server, |c| async move { c.complete(&params).await }).await?;
    let completion = &result.completion;
    match ctx.output() {
        Output::Json => emit_keyed(&server, "completion", json!(completion)),
        Output::Text => {
            for v in &completion.values {
                emit(&one_line(v));
            }
            if completion.has_more == Some(true) {
                let total = completion.total.map(|t| t.to_string()).unwrap_or_default();
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
            print_task(ctx.output(), &server, &task);
            Ok(0)
        }
    }
}

fn task_row(t: &Task) -> Vec<String> {
    vec![
        format!("  {}", t.task_id),
        t.status.to_string(),
        t.last_updated_at.clone(),
        t.status_message.clone().unwrap_or_default(),
    ]
}

fn print_task(output: Output, server: &str, task: &Task) {
    match output {
        Output::Json => emit_keyed(server, "task", json!(task)),
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
    let task = created.task;
    if detach {
        print_task(ctx.output(), server, &task);
        return Ok(0);
    }
    note(&format!("mcpc: task {} {}", one_line(&task.task_id), one_line(task.status.as_str())));
    task_result(ctx, server, task.task_id).await
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
/// Ctrl-C.
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
        Ok(Feed::Stream(notifications))
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
        match ctx.output() {
            Output::Json => emit_json(
                &json!({"server": server, "method": n.method(), "params": notification_params(&n)}),
            ),
            Output::Text => emit(&format!("{server}: {}", one_line(&notification_text(&n)))),
        }
    }
    Err(Failure::new(Kind::Connection, format!("MCP server {server:?} closed the connection"))
        .with_server(&server))
}

/// Where the notifications come from: the client's stream (the handshake
/// era), or an open `subscriptions/listen` (the stateless era).
enum Feed {
    Stream(mcp_host_registry::mcp_peer::Notifications),
    Listen(mcp_host_registry::mcp_peer::Subscription),
}

impl Feed {
    async fn recv(&mut self) -> Option<ServerNotification> {
        match self {
            Feed::Stream(n) => n.recv().await,
            Feed::Listen(s) => s.recv().await,
        }
    }
}

/// A notification's parameters as JSON (`{}` for the list changes).
fn notification_params(n: &ServerNotification) -> Value {
    match n {
        ServerNotification::Progress(p) => json!(p),
        ServerNotification::LogMessage(p) => json!(p),
        ServerNotification::ResourceUpdated(p) => json!(p),
        ServerNotification::ToolListChanged
        | ServerNotification::PromptListChanged
        | ServerNotification::ResourceListChanged => json!({}),
        ServerNotification::Cancelled(p) => json!(p),
        ServerNotification::TaskStatus(p) => json!(p),
        ServerNotification::ElicitationComplete(p) => json!(p),
        ServerNotification::SubscriptionsAcknowledged(p) => json!(p),
        ServerNotification::Other(raw) => raw.params.clone().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// One line for a person (not yet made safe for a terminal).
fn notification_text(n: &ServerNotification) -> String {
    match n {
        ServerNotification::ToolListChanged => "the tool list changed".into(),
        ServerNotification::PromptListChanged => "the prompt list changed".into(),
        ServerNotification::ResourceListChanged => "the resource list changed".into(),
        ServerNotification::ResourceUpdated(p) => format!("resource updated: {}", p.uri),
        ServerNotification::LogMessage(m) => log_text(m),
        other => format!("{} {}", other.method(), notification_params(other)),
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
            assert_eq!(notification_text(&n), expected);
        }
    }

    #[test]
    fn capabilities_by_name_with_what_they_turn_on() {
        let check = |caps: Value, expected: &[&str]| {
            let caps: ServerCapabilities = serde_json::from_value(caps.clone()).unwrap();
            assert_eq!(capabilities(&caps), expected, "{caps:?}");
        };
        check(json!({}), &[]);
        check(
            json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": false},
                "prompts": {"listChanged": true, "paged": {}},
                "logging": {},
                "completions": {"x": false},
                "tasks": {"list": {}, "requests": {"tools": {"call": {}}}},
                "experimental": {"x": {}, "y": false, "z": true},
                "zeta": true,
                "alpha": {"on": true, "off": false, "n": 3},
            }),
            &[
                "alpha (on)",
                "completions",
                "experimental (x, z)",
                "logging",
                "prompts (listChanged, paged)",
                "resources (subscribe)",
                "tasks (list, requests)",
                "tools (listChanged)",
                "zeta",
            ],
        );
    }

    #[test]
    fn content_blocks_as_text() {
        let block = |v: Value| serde_json::from_value::<ContentBlock>(v).unwrap();
        assert_eq!(content_text(&block(json!({"type": "text", "text": "hi"}))), "hi");
        assert_eq!(
            content_text(&block(json!({"type": "image", "mimeType": "image/png", "data": ""}))),
            "[image: image/png]"
        );
        assert_eq!(
            content_text(&block(
                json!({"type": "resource", "resource": {"uri": "u", "text": "t"}})
            )),
            "[resource u]\nt"
        );
    }
}
