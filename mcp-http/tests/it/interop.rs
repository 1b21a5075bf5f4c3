//! Interop: the HTTP client against `@modelcontextprotocol/server-everything`
//! from npm, a server nobody in this project wrote, on a free loopback port,
//! in both of its HTTP modes: `streamableHttp` (Streamable HTTP, `/mcp`) and
//! `sse` (the 2024-11-05 HTTP+SSE transport: `GET /sse`, then `POST
//! /message`, which the client falls back to when its `initialize` POST to
//! `/sse` is refused). Every scenario runs in each mode (the `streamable`
//! and `legacy` modules at the end).
//!
//! What HTTP adds to the stdio interop tests is where messages travel: the
//! server's requests made inside a tool call (sampling, elicitation) and
//! progress come on that call's reply stream, while its unrelated messages
//! (`roots/list`, log messages, resource updates) come on the standalone
//! GET stream (Streamable HTTP) or the one SSE stream (legacy).
//!
//! `cargo xtask interop` installs the pinned version and runs this file with
//! `MCP_EVERYTHING_JS` set to its entry point.

use std::collections::BTreeMap;
use std::future::Future;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_http::{Error, HttpClient, HttpOptions, Notifications};
use mcp_proto::client::{
    BoxFuture, ElicitationHandler, Handlers, RequestOptions, RootsHandler, SamplingHandler,
    ServerNotification, StaticRoots,
};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::render_tool_result;
use mcp_proto::types::{
    CallToolResult, ClientCapabilities, CompleteArgument, CompleteContext, CompleteRequestParams,
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, ElicitValue, ListRootsResult, LoggingLevel, PromptReference,
    Reference, ResourceContents, ResourceTemplateReference, Root, RootsCapability,
    SamplingMessageContentBlock, TaskStatus, TaskSupport,
};
use serde_json::{Value, json};

/// How long the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(15);
/// How long one scenario may take in all.
const TEST_LIMIT: Duration = Duration::from_secs(90);
/// How long to wait for one notification (the server's timers tick every
/// 5 s and send once at once).
const NOTIFICATION_LIMIT: Duration = Duration::from_secs(20);
/// An environment variable given to the server.
const MARKER: (&str, &str) = ("MCP_INTEROP_MARKER", "http-env-ok");

/// The server's HTTP mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `streamableHttp`, endpoint `/mcp`.
    Streamable,
    /// `sse`, the 2024-11-05 transport, endpoint `/sse`.
    Legacy,
}

/// The node process; killed when dropped (a failing test too).
struct Everything {
    child: Child,
    port: u16,
    mode: Mode,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// Starts `node $MCP_EVERYTHING_JS <mode>` on a free port and waits
    /// until it accepts connections.
    fn start(mode: Mode) -> Everything {
        let js = std::env::var("MCP_EVERYTHING_JS").expect(
            "MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`",
        );
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new("node")
            .arg(js)
            .arg(match mode {
                Mode::Streamable => "streamableHttp",
                Mode::Legacy => "sse",
            })
            .env("PORT", port.to_string())
            .env(MARKER.0, MARKER.1)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let mut server = Everything { child, port, mode };
        let started = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("server-everything exited before listening: {status}");
            }
            assert!(
                started.elapsed() < STARTUP,
                "server-everything did not listen within {STARTUP:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn url(&self) -> String {
        let path = match self.mode {
            Mode::Streamable => "mcp",
            Mode::Legacy => "sse",
        };
        format!("http://127.0.0.1:{}/{path}", self.port)
    }
}

/// Connects with these handlers and extra capabilities and runs the
/// handshake; checks the mode the client found.
async fn connect(server: &Everything, handlers: Handlers, caps: ClientCapabilities) -> HttpClient {
    let mut options = HttpOptions::new("everything");
    options.request_timeout = Duration::from_secs(20);
    options.handlers = handlers;
    options.capabilities = caps;
    let c = HttpClient::connect(&server.url(), options).expect("a valid endpoint");
    c.initialize().await.expect("the handshake");
    assert_eq!(c.is_legacy(), server.mode == Mode::Legacy);
    if server.mode == Mode::Streamable {
        assert!(c.has_session());
    }
    c
}

/// A plain client (no handlers), with the server's unrelated messages
/// flowing: the standalone GET stream is open when this returns (it opens
/// by itself; this waits for it).
async fn start(mode: Mode) -> (Everything, HttpClient) {
    let server = Everything::start(mode);
    let c = connect(&server, Handlers::default(), ClientCapabilities::default()).await;
    assert!(c.open_event_stream().await.unwrap(), "the server offers a GET stream");
    (server, c)
}

/// Runs a scenario under [`TEST_LIMIT`], so no await can hang the suite.
async fn bounded(body: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_LIMIT, body)
        .await
        .unwrap_or_else(|_| panic!("the test did not finish within {TEST_LIMIT:?}"));
}

/// The first notification `pick` accepts and those it skipped before it;
/// panics after [`NOTIFICATION_LIMIT`].
async fn next_matching<T>(
    notifications: &mut Notifications,
    what: &str,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> (T, Vec<ServerNotification>) {
    let mut skipped = Vec::new();
    let wait = async {
        loop {
            let n = notifications.recv().await.expect("the client is alive");
            match pick(&n) {
                Some(found) => return found,
                None => skipped.push(n),
            }
        }
    };
    match tokio::time::timeout(NOTIFICATION_LIMIT, wait).await {
        Ok(found) => (found, skipped),
        Err(_) => panic!("no {what} within {NOTIFICATION_LIMIT:?}; received {skipped:#?}"),
    }
}

fn resource_updated(n: &ServerNotification) -> Option<String> {
    match n {
        ServerNotification::ResourceUpdated(p) => Some(p.uri.clone()),
        _ => None,
    }
}

fn log_text(n: &ServerNotification) -> Option<(LoggingLevel, String)> {
    match n {
        ServerNotification::LogMessage(p) => Some((p.level.clone(), p.data.as_str()?.to_owned())),
        _ => None,
    }
}

fn text(result: &CallToolResult) -> String {
    render_tool_result(result).text
}

fn rpc_error(e: Error) -> ErrorObject {
    match e {
        Error::Rpc { error, .. } => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn completion(reference: Reference, name: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams {
        reference,
        argument: CompleteArgument { name: name.into(), value: value.into(), ..Default::default() },
        context: None,
        meta: None,
        extra: Default::default(),
    }
}

/// Answers sampling with a fixed text and records what it was asked.
#[derive(Default)]
struct Model(Mutex<Vec<CreateMessageRequestParams>>);

impl SamplingHandler for Model {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        self.0.lock().unwrap().push(params);
        Box::pin(async { Ok(CreateMessageResult::text("http-model", "Sampled over HTTP.")) })
    }
}

/// Accepts forms with fixed values and URLs without content; records what
/// it was asked.
#[derive(Default)]
struct User(Mutex<Vec<ElicitRequestParams>>);

impl ElicitationHandler for User {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        let result = match &params {
            // simulate-research-query's clarification.
            ElicitRequestParams::Form(f)
                if f.requested_schema.properties.contains_key("interpretation") =>
            {
                ElicitResult::accept([("interpretation", "comedy")])
            }
            ElicitRequestParams::Form(_) => ElicitResult::accept([
                ("name", ElicitValue::from("Grace Hopper")),
                ("check", ElicitValue::from(false)),
                ("integer", ElicitValue::from(99)),
            ]),
            ElicitRequestParams::Url(_) => ElicitResult::new(ElicitAction::Accept),
        };
        self.0.lock().unwrap().push(params);
        Box::pin(async move { Ok(result) })
    }

    fn supports_url_mode(&self) -> bool {
        true
    }
}

/// Roots the test can change.
struct MovingRoots(Mutex<Vec<Root>>);

impl RootsHandler for MovingRoots {
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        let roots = self.0.lock().unwrap().clone();
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }
}

async fn tools(mode: Mode) {
    let (_server, c) = start(mode).await;
    assert!(c.server_info().unwrap().name.contains("everything"));
    let tools = c.list_tools().await.unwrap();
    let page = c.list_tools_page(None).await.unwrap();
    assert_eq!((page.tools.len(), page.next_cursor), (tools.len(), None));
    for name in ["echo", "get-sum", "get-structured-content", "get-env", "get-resource-links"] {
        assert!(tools.iter().any(|t| t.name == name), "{name} not listed");
    }

    let echo = c.call_tool("echo", json!({"message": "hello over HTTP"})).await.unwrap();
    assert_eq!(text(&echo), "Echo: hello over HTTP");
    let sum = c.call_tool("get-sum", json!({"a": 19, "b": 23})).await.unwrap();
    assert_eq!(text(&sum), "The sum of 19 and 23 is 42.");

    let weather: BTreeMap<String, Value> =
        c.call_tool_as("get-structured-content", json!({"location": "Los Angeles"})).await.unwrap();
    let expected = json!({"temperature": 73, "conditions": "Sunny / Clear", "humidity": 48});
    assert_eq!(json!(weather), expected);
    let env: BTreeMap<String, String> = c.call_tool_as("get-env", ()).await.unwrap();
    assert_eq!(env.get(MARKER.0).map(String::as_str), Some(MARKER.1));
    let err = c
        .call_tool_as::<Value>("get-structured-content", json!({"location": "Gotham"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("reported an error"), "{err}");

    let links = c.call_tool("get-resource-links", json!({"count": 2})).await.unwrap();
    let uris: Vec<&str> = links
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ResourceLink(l) => Some(l.uri.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(uris, ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]);
    c.ping().await.unwrap();
    c.close().await.unwrap();
}

async fn progress(mode: Mode) {
    let (_server, c) = start(mode).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let options = RequestOptions {
        on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push(p.progress))),
        ..Default::default()
    };
    let result = c
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            options,
        )
        .await
        .unwrap();
    assert!(text(&result).starts_with("Long running operation completed."), "{result:?}");
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    c.close().await.unwrap();
}

async fn resources(mode: Mode) {
    let (_server, c) = start(mode).await;
    let all = c.list_resources().await.unwrap();
    let mut paged = Vec::new();
    let mut cursor = None;
    for _ in 0..100 {
        let page = c.list_resources_page(cursor.take()).await.unwrap();
        paged.extend(page.resources);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(cursor.is_none(), "more than 100 pages");
    assert_eq!(paged, all);
    let doc = "demo://resource/static/document/instructions.md";
    assert!(all.iter().any(|r| r.uri == doc), "{all:?}");
    match c.read_resource(doc).await.unwrap().contents.as_slice() {
        [ResourceContents::Text(t)] => assert_eq!(Some(&t.text), c.instructions().as_ref()),
        other => panic!("{other:?}"),
    }

    let templates = c.list_resource_templates().await.unwrap();
    assert_eq!(c.list_resource_templates_page(None).await.unwrap().resource_templates, templates);
    let blob_template = "demo://resource/dynamic/blob/{resourceId}";
    assert!(templates.iter().any(|t| t.uri_template == blob_template), "{templates:?}");
    match c.read_resource("demo://resource/dynamic/text/9").await.unwrap().contents.as_slice() {
        [ResourceContents::Text(t)] => {
            assert!(t.text.starts_with("Resource 9: This is a plaintext resource"), "{t:?}")
        }
        other => panic!("{other:?}"),
    }
    match c.read_resource("demo://resource/dynamic/blob/9").await.unwrap().contents.as_slice() {
        [ResourceContents::Blob(b)] => {
            // "Resource 9: " is 12 bytes: its base64 is exact.
            assert!(b.blob.starts_with("UmVzb3VyY2UgOTog"), "{b:?}");
        }
        other => panic!("{other:?}"),
    }

    // Subscriptions: updates come on the GET stream (or the legacy SSE
    // stream), at once when turned on and every 5 s after.
    let kept = "demo://resource/dynamic/text/1";
    let dropped = "demo://resource/static/document/features.md";
    c.subscribe_resource(dropped).await.unwrap();
    c.subscribe_resource(kept).await.unwrap();
    let mut notifications = c.notifications();
    c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
    let mut updated = Vec::new();
    while updated.len() < 2 {
        let (uri, _) =
            next_matching(&mut notifications, "resources/updated", resource_updated).await;
        if !updated.contains(&uri) {
            updated.push(uri);
        }
    }
    updated.sort();
    assert_eq!(updated, [kept, dropped]);
    c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
    c.unsubscribe_resource(dropped).await.unwrap();
    // Each round sends the dropped one first (subscribed first): the
    // next update being the kept one shows the unsubscription worked.
    let mut notifications = c.notifications();
    c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
    let (uri, _) = next_matching(&mut notifications, "resources/updated", resource_updated).await;
    assert_eq!(uri, kept);
    c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
    c.unsubscribe_resource(kept).await.unwrap();
    c.close().await.unwrap();
}

async fn prompts_and_completion(mode: Mode) {
    let (_server, c) = start(mode).await;
    let prompts = c.list_prompts().await.unwrap();
    assert_eq!(prompts.len(), 4, "{prompts:?}");
    assert_eq!(c.list_prompts_page(None).await.unwrap().prompts, prompts);
    let arguments = BTreeMap::from([
        ("department".to_owned(), "Sales".to_owned()),
        ("name".to_owned(), "Eve".to_owned()),
    ]);
    let got = c.get_prompt("completable-prompt", Some(arguments)).await.unwrap();
    assert!(
        matches!(&got.messages[..], [m] if matches!(&m.content,
            ContentBlock::Text(t) if t.text == "Please promote Eve to the head of the Sales team.")),
        "{got:?}"
    );

    let prompt = Reference::Prompt(PromptReference {
        name: "completable-prompt".into(),
        ..Default::default()
    });
    let mut params = completion(prompt.clone(), "name", "");
    params.context = Some(CompleteContext {
        arguments: Some(BTreeMap::from([("department".into(), "Support".into())])),
        ..Default::default()
    });
    assert_eq!(c.complete(&params).await.unwrap().completion.values, ["John", "Kim", "Lee"]);
    let departments = c.complete(&completion(prompt, "department", "M")).await.unwrap();
    assert_eq!(departments.completion.values, ["Marketing"]);
    let template = Reference::Resource(ResourceTemplateReference {
        uri: "demo://resource/dynamic/blob/{resourceId}".into(),
        ..Default::default()
    });
    let ids = c.complete(&completion(template, "resourceId", "31")).await.unwrap();
    assert_eq!(ids.completion.values, ["31"]);
    c.close().await.unwrap();
}

async fn logging(mode: Mode) {
    let (_server, c) = start(mode).await;
    let quiet = "demo://resource/dynamic/text/201";
    let loud = "demo://resource/dynamic/text/202";
    let mut notifications = c.notifications();
    // Subscribing is acknowledged with an info log, which the level
    // filters; both logs would travel the same stream, in order.
    c.set_log_level(LoggingLevel::Critical).await.unwrap();
    c.subscribe_resource(quiet).await.unwrap();
    c.set_log_level(LoggingLevel::Info).await.unwrap();
    c.subscribe_resource(loud).await.unwrap();
    let ((level, data), _) = next_matching(&mut notifications, "a log message", log_text).await;
    assert_eq!(level, LoggingLevel::Info);
    assert!(data.contains(loud), "the first log is {data:?}, not the one for {loud}");

    c.set_log_level(LoggingLevel::Debug).await.unwrap();
    c.call_tool("toggle-simulated-logging", ()).await.unwrap();
    let ((level, data), _) = next_matching(&mut notifications, "a simulated log", |n| {
        log_text(n).filter(|(_, d)| d.contains("message - SessionId") || d.ends_with("message"))
    })
    .await;
    assert!(data.to_lowercase().starts_with(level.as_str()), "{level} {data}");
    c.call_tool("toggle-simulated-logging", ()).await.unwrap();
    c.close().await.unwrap();
}

/// Roots: the server asks for them on its own (350 ms after the
/// handshake, and again when told they changed), on the GET stream, which
/// must have opened by itself: nothing here opens it.
async fn roots(mode: Mode) {
    let server = Everything::start(mode);
    let roots = Arc::new(MovingRoots(Mutex::new(vec![
        Root::new("file:///srv/http-a").with_name("HTTP A"),
    ])));
    let handlers = Handlers { roots: Some(roots.clone()), ..Default::default() };
    let caps = ClientCapabilities {
        roots: Some(RootsCapability { list_changed: Some(true), ..Default::default() }),
        ..Default::default()
    };
    let c = connect(&server, handlers, caps).await;
    let shown = text(&c.call_tool("get-roots-list", ()).await.unwrap());
    assert!(shown.contains("1. HTTP A\n   URI: file:///srv/http-a"), "{shown}");

    let mut notifications = c.notifications();
    *roots.0.lock().unwrap() =
        vec![Root::new("file:///srv/http-b"), Root::new("file:///srv/http-c")];
    c.notify_roots_changed().await.unwrap();
    next_matching(&mut notifications, "the roots-updated log", |n| {
        log_text(n).filter(|(_, d)| d.contains("2 root(s) received"))
    })
    .await;
    let shown = text(&c.call_tool("get-roots-list", ()).await.unwrap());
    assert!(shown.contains("(2 total)") && shown.contains("file:///srv/http-c"), "{shown}");
    c.close().await.unwrap();
}

/// A fixed roots list, without `listChanged`.
async fn static_roots(mode: Mode) {
    let server = Everything::start(mode);
    let roots = StaticRoots(vec![Root::new("file:///srv/static").with_name("static")]);
    let handlers = Handlers { roots: Some(Arc::new(roots)), ..Default::default() };
    let c = connect(&server, handlers, ClientCapabilities::default()).await;
    let shown = text(&c.call_tool("get-roots-list", ()).await.unwrap());
    assert!(shown.contains("(1 total)") && shown.contains("file:///srv/static"), "{shown}");
    c.close().await.unwrap();
}

/// Sampling and elicitation: requests the server makes inside a tool call,
/// on that call's reply stream; the answers are POSTed back.
async fn sampling_and_elicitation(mode: Mode) {
    let server = Everything::start(mode);
    let model = Arc::new(Model::default());
    let user = Arc::new(User::default());
    let handlers = Handlers {
        sampling: Some(model.clone()),
        elicitation: Some(user.clone()),
        ..Default::default()
    };
    let c = connect(&server, handlers, ClientCapabilities::default()).await;
    let sampled = c
        .call_tool("trigger-sampling-request", json!({"prompt": "Say something", "maxTokens": 12}))
        .await
        .unwrap();
    let shown = text(&sampled);
    assert!(shown.contains("http-model") && shown.contains("Sampled over HTTP."), "{shown}");
    {
        let asked = model.0.lock().unwrap();
        let [params] = asked.as_slice() else { panic!("{asked:?}") };
        assert_eq!(params.max_tokens, 12);
        assert!(matches!(params.messages[0].content.blocks(),
            [SamplingMessageContentBlock::Text(t)] if t.text.ends_with("context: Say something")));
    }

    let form = c.call_tool("trigger-elicitation-request", ()).await.unwrap();
    let shown = text(&form);
    for line in ["- Name: Grace Hopper", "- Agreed to terms: false", "- Favorite Integer: 99"] {
        assert!(shown.contains(line), "{line:?} missing from {shown}");
    }
    let url = "https://example.com/http-interop";
    let link = c.call_tool("trigger-url-elicitation", json!({"url": url})).await.unwrap();
    let shown = text(&link);
    assert!(shown.contains("User completed the URL elicitation flow"), "{shown}");
    assert!(shown.contains(url), "{shown}");
    let asked = user.0.lock().unwrap().clone();
    assert!(
        matches!(asked.as_slice(), [ElicitRequestParams::Form(_), ElicitRequestParams::Url(u)] if u.url == url),
        "{asked:?}"
    );
    c.close().await.unwrap();
}

/// Tasks: a task-augmented `tools/call`, whose clarifying question (an
/// elicitation) comes on the `tasks/result` reply stream and whose status
/// changes come on the GET stream; then paging and cancelling.
async fn tasks(mode: Mode) {
    let server = Everything::start(mode);
    let user = Arc::new(User::default());
    let handlers = Handlers { elicitation: Some(user.clone()), ..Default::default() };
    let c = connect(&server, handlers, ClientCapabilities::default()).await;
    assert!(c.open_event_stream().await.unwrap());
    assert!(c.server_capabilities().unwrap().tasks.is_some());
    let tools = c.list_tools().await.unwrap();
    let research = tools.iter().find(|t| t.name == "simulate-research-query").unwrap();
    let support = research.execution.as_ref().and_then(|e| e.task_support.clone());
    assert_eq!(support, Some(TaskSupport::Required));

    let mut notifications = c.notifications();
    let topic = json!({"topic": "python", "ambiguous": true});
    let created = c.call_tool_as_task("simulate-research-query", topic, None).await.unwrap();
    let id = created.task.task_id;
    assert_eq!(c.get_task(&id).await.unwrap().task_id, id);
    let result: CallToolResult =
        c.task_result(&id, RequestOptions::with_timeout(Duration::from_secs(30))).await.unwrap();
    assert!(text(&result).contains("# Research Report: python (comedy)"), "{result:?}");
    assert!(matches!(user.0.lock().unwrap().as_slice(), [ElicitRequestParams::Form(_)]));
    let (status, _) = next_matching(&mut notifications, "the task's completion", |n| match n {
        ServerNotification::TaskStatus(t) if t.task_id == id && t.status.is_terminal() => {
            Some(t.status.clone())
        }
        _ => None,
    })
    .await;
    assert_eq!(status, TaskStatus::Completed);

    // Ten tasks more: two pages of ten; the ten cancelled, and the
    // completed one not cancellable.
    let mut ids = vec![id.clone()];
    for i in 0..10 {
        let topic = json!({"topic": format!("topic {i}")});
        let created = c.call_tool_as_task("simulate-research-query", topic, None).await.unwrap();
        ids.push(created.task.task_id);
    }
    let first = c.list_tasks_page(None).await.unwrap();
    let second = c.list_tasks_page(Some(first.next_cursor.expect("two pages"))).await.unwrap();
    assert_eq!((first.tasks.len(), second.tasks.len(), second.next_cursor), (10, 1, None));
    let mut listed: Vec<String> =
        c.list_tasks().await.unwrap().into_iter().map(|t| t.task_id).collect();
    listed.sort();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(listed, sorted);
    for running in &ids[1..] {
        assert_eq!(c.cancel_task(running).await.unwrap().status, TaskStatus::Cancelled);
    }
    let err = rpc_error(c.cancel_task(&id).await.unwrap_err());
    assert!(err.message.contains("terminal status"), "{err:?}");
    let err = rpc_error(c.get_task("nope").await.unwrap_err());
    assert_eq!(err.code, error_code::INVALID_PARAMS);
    c.close().await.unwrap();
}

/// One `#[tokio::test]` per scenario and mode.
macro_rules! in_both_modes {
    ($($scenario:ident),* $(,)?) => {
        mod streamable {
            $(#[tokio::test]
            async fn $scenario() {
                super::bounded(super::$scenario(super::Mode::Streamable)).await
            })*
        }
        mod legacy {
            $(#[tokio::test]
            async fn $scenario() {
                super::bounded(super::$scenario(super::Mode::Legacy)).await
            })*
        }
    };
}

in_both_modes!(
    tools,
    progress,
    resources,
    prompts_and_completion,
    logging,
    roots,
    static_roots,
    sampling_and_elicitation,
    tasks,
);
