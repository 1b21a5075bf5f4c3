//! The session layer against the testkit server, both in memory: no process,
//! no socket, tokio's clock paused (deadlines pass at once when everything
//! waits).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_peer::memory::{self, MemoryError, MemorySender, MemoryTransport};
use mcp_peer::{
    CallError, Client, ClientOptions, EraChoice, RequestOptions, ServerEvent, ServerNotification,
};
use mcp_proto::ProtocolVersion;
use mcp_proto::client::{
    BoxFuture, ClientError, ElicitationHandler, ListKind, SamplingHandler, StaticRoots,
};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CallToolResult, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, Root, RootsCapability,
};
use mcp_testkit::{Config, Outgoing, ServeEra, Server};
use serde_json::{Value, json};

/// A client and the testkit server joined in memory, with the number of
/// messages the server received.
struct Pair {
    client: Client<MemoryTransport>,
    received: Arc<AtomicUsize>,
    restart: Restart,
}

/// Restarts the in-memory server: a fresh testkit session, and the client
/// told its connection was lost (as when a child process dies).
struct Restart {
    server: Arc<std::sync::Mutex<Server>>,
    config: Config,
    sender: MemorySender,
}

impl Restart {
    fn now(&self) {
        let (fresh, queue) = Server::new(self.config.clone());
        *self.server.lock().unwrap() = fresh;
        forward(queue, self.sender.clone());
        self.sender.drop_connection();
    }
}

/// Sends what the server queues to the client.
fn forward(mut queue: mcp_testkit::OutgoingQueue, out: MemorySender) {
    tokio::spawn(async move {
        while let Some(item) = queue.recv().await {
            match item {
                Outgoing::Message { message, .. } => {
                    out.send(&message.to_vec());
                }
                Outgoing::RawLine(line) => {
                    out.send(&line);
                }
                Outgoing::Exit(_) => {
                    out.drop_connection();
                    return;
                }
                _ => {}
            }
        }
    });
}

fn pair(options: ClientOptions) -> Pair {
    pair_with(options, Config::default())
}

fn pair_with(options: ClientOptions, config: Config) -> Pair {
    pair_filtered(options, config, |_| true)
}

/// A pair whose server never sees the messages `keep` refuses (a server
/// that does not answer them).
fn pair_filtered(
    options: ClientOptions,
    config: Config,
    keep: impl Fn(&Value) -> bool + Send + 'static,
) -> Pair {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options);
    let sender = end.sender();
    let received = Arc::new(AtomicUsize::new(0));
    let (server, queue) = Server::new(config.clone());
    let server = Arc::new(std::sync::Mutex::new(server));
    let counter = received.clone();
    let current = server.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            counter.fetch_add(1, Ordering::SeqCst);
            if !serde_json::from_slice(&bytes).is_ok_and(|v| keep(&v)) {
                continue;
            }
            let server = current.lock().unwrap().clone();
            server.handle_json(&bytes);
        }
    });
    forward(queue, sender.clone());
    Pair { client, received, restart: Restart { server, config, sender } }
}

/// Options pinned to the handshake era: most tests here count the
/// messages of its exchanges. The era tests say what they choose.
fn options() -> ClientOptions {
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Legacy;
    o
}

fn text(result: &CallToolResult) -> String {
    mcp_proto::render_tool_result(result).text
}

#[tokio::test(start_paused = true)]
async fn handshake_tools_and_calls() {
    let Pair { client, .. } = pair(options());
    assert!(client.initialize_result().is_none());
    client.ping().await.unwrap();
    let info = client.server_info().unwrap();
    assert_eq!(info.name, "mcp-testkit");
    assert!(client.server_capabilities().unwrap().tools.is_some());
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    // Cached: the same list, not asked again.
    assert!(Arc::ptr_eq(&tools, &client.list_tools().await.unwrap()));
    let r = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&r), "hi");
    // Arguments of any serialisable type; none at all is `()` or `None`.
    #[derive(serde::Serialize)]
    struct Add {
        a: i64,
        b: i64,
    }
    let r = client.call_tool("add", Add { a: 2, b: 40 }).await.unwrap();
    assert_eq!(text(&r), "42");
    let r = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&r), "[]");
    let r = client.call_tool("cancelled_log", None::<Value>).await.unwrap();
    assert_eq!(text(&r), "[]");
    // Arguments that are not an object are refused before anything is sent.
    let err = client.call_tool("echo", json!([1, 2])).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::InvalidParams { .. })), "{err:?}");
    // A typed result from structuredContent.
    #[derive(serde::Deserialize)]
    struct Sum {
        sum: f64,
    }
    let sum: Sum = client.call_tool_as("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 3.0);
    // Or from the single text block's JSON, when there is no structuredContent.
    let echoed: Vec<u32> = client.call_tool_as("echo", json!({"message": "[1,2]"})).await.unwrap();
    assert_eq!(echoed, [1, 2]);
    // A tool error is an error of the typed call, carrying the tool's text.
    let err = client.call_tool_as::<Value>("fail", json!({"message": "boom"})).await.unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    client.close().await.unwrap();
    assert!(client.is_closed());
    let err = client.ping().await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Closed { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn concurrent_first_requests_share_one_handshake() {
    let Pair { client, received, .. } = pair(options());
    let calls: Vec<_> = (0..8).map(|_| client.ping()).collect();
    for r in futures_util::future::join_all(calls).await {
        r.unwrap();
    }
    // initialize, notifications/initialized, 8 pings.
    assert_eq!(received.load(Ordering::SeqCst), 10);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_cancels_on_the_paused_clock() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let started = tokio::time::Instant::now();
    let quick = RequestOptions::with_timeout(Duration::from_secs(30));
    let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { ref method, after })
            if method == "tools/call" && after >= Duration::from_secs(30)
                && after < Duration::from_secs(31)),
        "{err:?}"
    );
    // Thirty seconds of virtual time, none of real time to speak of.
    assert!(started.elapsed() >= Duration::from_secs(30));
    // The server heard the cancellation of that request (id 2: after
    // initialize's 1).
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[2]");
}

/// One timer keeps every request's deadline: a request started after a
/// longer one, with an earlier deadline, still times out on time (it wakes
/// the timer that slept until the longer one's), and the longer one then
/// times out on its own.
#[tokio::test(start_paused = true)]
async fn an_earlier_deadline_started_later_is_kept() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let started = tokio::time::Instant::now();
    let long = RequestOptions::with_timeout(Duration::from_secs(60));
    let short = RequestOptions::with_timeout(Duration::from_secs(5));
    let slow = client.clone();
    let long_call = tokio::spawn(async move { slow.call_tool_with("hang", (), long).await });
    tokio::task::yield_now().await;
    let err = client.call_tool_with("hang", (), short).await.unwrap_err();
    let short_took = started.elapsed();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { after, .. })
            if after >= Duration::from_secs(5) && after < Duration::from_secs(6)),
        "{err:?}"
    );
    assert!(short_took < Duration::from_secs(6), "{short_took:?}");
    let err = long_call.await.unwrap().unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { after, .. })
            if after >= Duration::from_secs(60) && after < Duration::from_secs(61)),
        "{err:?}"
    );
    // A third request after both: the timer, idle meanwhile, wakes again.
    let quick = RequestOptions::with_timeout(Duration::from_secs(1));
    let before = tokio::time::Instant::now();
    let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Timeout { .. })), "{err:?}");
    assert!(before.elapsed() < Duration::from_secs(2), "{:?}", before.elapsed());
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_deadline_up_to_the_total() {
    let Pair { client, .. } = pair(options());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let options = RequestOptions {
        // Each step takes 50 ms: without the reset, 80 ms would not do.
        timeout: Some(Duration::from_millis(80)),
        reset_timeout_on_progress: true,
        max_total_timeout: Some(Duration::from_secs(5)),
        on_progress: Some(Arc::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })),
        meta: None,
        no_cache: false,
        headers: Vec::new(),
    };
    let mut stream = client.notifications();
    let r = client.call_tool_with("slow", json!({"ms": 50, "steps": 4}), options).await.unwrap();
    assert!(!r.is_error.unwrap_or(false));
    assert_eq!(seen.load(Ordering::SeqCst), 4);
    // Progress is on the notification stream too.
    match stream.recv().await {
        Some(ServerNotification::Progress(p)) => assert!(p.progress > 0.0, "{p:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_handle_tells_the_server() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let handle = client.spawn_call_tool("hang", (), RequestOptions::default());
    // Let the request go out.
    tokio::time::sleep(Duration::from_millis(10)).await;
    handle.cancel();
    assert!(matches!(handle.await, Err(CallError::Cancelled)));
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[2]");
}

#[tokio::test(start_paused = true)]
async fn server_requests_go_to_the_handlers_and_undeclared_ones_get_32601() {
    let mut o = options();
    let root = Root::new("file:///work/project").with_name("project");
    o.handlers.roots = Some(Arc::new(StaticRoots(vec![root])));
    // roots.listChanged declared explicitly; tasks too.
    o.capabilities = ClientCapabilities {
        roots: Some(RootsCapability { list_changed: Some(true), ..Default::default() }),
        tasks: Some(Default::default()),
        ..Default::default()
    };
    let declared = o.declared_capabilities();
    assert_eq!(declared.roots.as_ref().and_then(|r| r.list_changed), Some(true));
    assert!(declared.tasks.is_some());
    assert!(declared.sampling.is_none());
    let Pair { client, .. } = pair(o);
    let roots = client.call_tool("ask", json!({"what": "roots"})).await.unwrap();
    assert!(text(&roots).contains("file:///work/project"), "{}", text(&roots));
    let sample = client.call_tool("ask", json!({"what": "sample"})).await.unwrap();
    assert!(text(&sample).contains("-32601"), "{}", text(&sample));
    client.notify_roots_changed().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn notifications_reach_every_stream_and_the_callback() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut o = options();
    o.on_event = Some(Arc::new(move |e: &ServerEvent| {
        let _ = tx.send(e.clone());
    }));
    let Pair { client, .. } = pair(o);
    client.initialize().await.unwrap();
    let mut first = client.notifications();
    let mut second = client.notifications();
    let before = client.list_tools().await.unwrap();
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(first.recv().await, Some(ServerNotification::ToolListChanged));
    assert_eq!(second.recv().await, Some(ServerNotification::ToolListChanged));
    assert_eq!(rx.recv().await, Some(ServerEvent::ListChanged(ListKind::Tools)));
    // The cache was dropped: the new list has the extra tool.
    let after = client.list_tools().await.unwrap();
    assert_eq!(after.len(), before.len() + 1);
    // Log messages arrive too, after logging/setLevel.
    client.set_log_level(mcp_proto::types::LoggingLevel::Debug).await.unwrap();
    client.call_tool("log", json!({"level": "info", "message": "hello"})).await.unwrap();
    match first.recv().await {
        Some(ServerNotification::LogMessage(log)) => assert_eq!(log.data, json!("hello")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_lost_connection_fails_waiters_and_the_next_request_starts_again() {
    let Pair { client, received, restart } = pair(options());
    client.initialize().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let waiting = client.spawn_call_tool("hang", (), RequestOptions::default());
    tokio::time::sleep(Duration::from_millis(10)).await;
    restart.now();
    match waiting.await {
        Err(CallError::Failed(MemoryError::Protocol(ClientError::Closed { .. }))) => {}
        other => panic!("{other:?}"),
    }
    // The handshake and the caches are forgotten.
    assert!(client.initialize_result().is_none());
    let before = received.load(Ordering::SeqCst);
    client.ping().await.unwrap();
    // initialize, notifications/initialized, ping: a new session.
    assert_eq!(received.load(Ordering::SeqCst), before + 3);
    assert!(client.initialize_result().is_some());
    let again = client.list_tools().await.unwrap();
    assert!(!Arc::ptr_eq(&tools, &again));
    assert_eq!(tools.len(), again.len());
}

#[tokio::test(start_paused = true)]
async fn raw_requests_and_unknown_methods() {
    let Pair { client, .. } = pair(options());
    let v = client.request("tools/list", None, RequestOptions::default()).await.unwrap();
    assert!(v["tools"].is_array());
    let err = client.request("no/such", None, RequestOptions::default()).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32601),
        other => panic!("{other:?}"),
    }
    // A page at a time.
    let page = client.list_tools_page(None).await.unwrap();
    assert!(!page.tools.is_empty());
}

#[tokio::test(start_paused = true)]
async fn paginated_lists_are_followed_to_the_end() {
    let config = Config { page_size: Some(2), ..Config::default() };
    let Pair { client, .. } = pair_with(options(), config);
    let page = client.list_tools_page(None).await.unwrap();
    assert_eq!(page.tools.len(), 2);
    assert!(page.next_cursor.is_some());
    let all = client.list_tools().await.unwrap();
    assert!(all.len() > 2);
}

#[tokio::test(start_paused = true)]
async fn resources_templates_reads_and_subscriptions() {
    let config = Config { page_size: Some(2), ..Config::default() };
    let Pair { client, .. } = pair_with(options(), config);
    // Followed over three pages.
    let resources = client.list_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris.len(), 6, "{uris:?}");
    assert!(uris.contains(&"test://static/blob/1"));
    let page = client.list_resources_page(None).await.unwrap();
    assert_eq!(page.resources.len(), 2);
    assert!(page.next_cursor.is_some());
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://static/text/{id}");

    let text = client.read_resource("test://static/text/2").await.unwrap();
    match &text.contents[0] {
        mcp_proto::types::ResourceContents::Text(t) => assert!(!t.text.is_empty()),
        other => panic!("{other:?}"),
    }
    let blob = client.read_resource("test://static/blob/1").await.unwrap();
    assert!(matches!(blob.contents[0], mcp_proto::types::ResourceContents::Blob(_)));
    let err = client.read_resource("test://nowhere").await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32002),
        other => panic!("{other:?}"),
    }

    let mut stream = client.notifications();
    let uri = "test://static/text/1";
    client.subscribe_resource(uri).await.unwrap();
    let touched = client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(text_of(&touched), "touched");
    match stream.recv().await {
        Some(ServerNotification::ResourceUpdated(u)) => assert_eq!(u.uri, uri),
        other => panic!("{other:?}"),
    }
    client.unsubscribe_resource(uri).await.unwrap();
    let touched = client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(text_of(&touched), "not subscribed");
    // Resource and prompt list changes reach the stream as their own kinds.
    client.call_tool("change", json!({"list": "resources"})).await.unwrap();
    assert_eq!(stream.recv().await, Some(ServerNotification::ResourceListChanged));
    client.call_tool("change", json!({"list": "prompts"})).await.unwrap();
    assert_eq!(stream.recv().await, Some(ServerNotification::PromptListChanged));
}

fn text_of(result: &CallToolResult) -> String {
    text(result)
}

#[tokio::test(start_paused = true)]
async fn prompts_and_completion() {
    let Pair { client, .. } = pair(options());
    let prompts = client.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["simple", "greet"]);
    let args = [("name".to_owned(), "Ada".to_owned())].into_iter().collect();
    let greeting = client.get_prompt("greet", Some(args)).await.unwrap();
    let shown = serde_json::to_string(&greeting.messages).unwrap();
    assert!(shown.contains("Hello, Ada!"), "{shown}");
    let err = client.get_prompt("greet", None).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32602),
        other => panic!("{other:?}"),
    }
    let params: mcp_proto::types::CompleteRequestParams = serde_json::from_value(json!({
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "b"},
    }))
    .unwrap();
    let completed = client.complete(&params).await.unwrap();
    assert_eq!(completed.completion.values, ["bob"]);
}

#[tokio::test(start_paused = true)]
async fn tasks_are_created_polled_listed_cancelled_and_their_results_awaited() {
    use mcp_proto::types::TaskStatus;
    let Pair { client, .. } = pair(options());
    let mut stream = client.notifications();
    let created =
        client.call_tool_as_task("echo", json!({"message": "later"}), None).await.unwrap();
    let id = created.task.task_id.clone();
    let result: CallToolResult = client.task_result(&id, RequestOptions::default()).await.unwrap();
    assert_eq!(text(&result), "later");
    let done = client.get_task(&id).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    // Its status changes came as notifications.
    let mut statuses = Vec::new();
    while statuses.last() != Some(&TaskStatus::Completed) {
        match stream.recv().await {
            Some(ServerNotification::TaskStatus(t)) if t.task_id == id => {
                statuses.push(t.status.clone())
            }
            Some(_) => {}
            None => panic!("the stream ended"),
        }
    }

    let hanging =
        client.call_tool_as_task("hang", (), Some(Duration::from_secs(60))).await.unwrap();
    let hanging_id = hanging.task.task_id;
    assert_eq!(hanging.task.ttl, Some(60_000));
    let listed = client.list_tasks().await.unwrap();
    assert!(listed.iter().any(|t| t.task_id == hanging_id && t.status == TaskStatus::Working));
    let cancelled = client.cancel_task(&hanging_id).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    // A terminal task cannot be cancelled again.
    assert!(client.cancel_task(&hanging_id).await.is_err());
}

/// A hand-written server in memory that answers every request from a table.
#[cfg(feature = "schema")]
fn scripted(answers: Vec<(&'static str, Value)>) -> Client<MemoryTransport> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let method = msg["method"].as_str().unwrap_or_default();
            let result = match method {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"},
                }),
                _ => answers.iter().find(|(m, _)| *m == method).map(|(_, r)| r.clone()).unwrap(),
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            end.send(reply.to_string().as_bytes());
        }
    });
    client
}

#[cfg(feature = "schema")]
#[tokio::test(start_paused = true)]
async fn typed_results_are_checked_against_the_output_schema() {
    let tools = json!({"tools": [{
        "name": "sum",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
    }]});
    #[derive(serde::Deserialize, Debug)]
    struct Loose {
        #[allow(dead_code)]
        sum: Value,
    }
    // A result that fits its schema decodes.
    let good = json!({"content": [], "structuredContent": {"sum": 3}});
    let client = scripted(vec![("tools/list", tools.clone()), ("tools/call", good)]);
    client.call_tool_as::<Loose>("sum", ()).await.unwrap();
    // One that does not is refused with the instance path, even though `R`
    // would have taken it.
    let bad = json!({"content": [], "structuredContent": {"sum": "three"}});
    let client = scripted(vec![("tools/list", tools), ("tools/call", bad)]);
    let err = client.call_tool_as::<Loose>("sum", ()).await.unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("outputSchema") && shown.contains("/sum"), "{shown}");
}

#[tokio::test(start_paused = true)]
async fn a_server_request_whose_id_cannot_be_read_is_answered_32600() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let sender = end.sender();
    let server = tokio::spawn(async move {
        let mut answers = Vec::new();
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            if msg["method"] == "initialize" {
                let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "odd", "version": "1"}}});
                sender.send(reply.to_string().as_bytes());
            } else if msg["method"] == "notifications/initialized" {
                // A request with an object as its id.
                let bad = json!({"jsonrpc": "2.0", "id": {"n": 1}, "method": "roots/list"});
                assert!(!sender.send(bad.to_string().as_bytes()));
            } else if msg.get("error").is_some() {
                answers.push(msg);
                return answers;
            }
        }
        answers
    });
    client.initialize().await.unwrap();
    let answers = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], Value::Null);
    assert_eq!(answers[0]["error"]["code"], -32600);
}

#[tokio::test(start_paused = true)]
async fn the_era_probe_falls_back_to_initialize_on_a_handshake_era_server() {
    let Pair { client, received, .. } = pair(ClientOptions::new("testkit"));
    client.ping().await.unwrap();
    // server/discover (refused), initialize, notifications/initialized, ping.
    assert_eq!(received.load(Ordering::SeqCst), 4);
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    assert_eq!(client.server_info().unwrap().name, "mcp-testkit");
}

#[tokio::test(start_paused = true)]
async fn a_silent_initialize_times_out_under_its_own_timer() {
    let not_initialize = |v: &Value| v["method"] != "initialize";
    let mut o = options();
    o.request_timeout = Duration::from_secs(7);
    let Pair { client, .. } = pair_filtered(o, Config::default(), not_initialize);
    let started = tokio::time::Instant::now();
    let err = client.initialize().await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { ref method, .. })
            if method == "initialize"),
        "{err:?}"
    );
    assert!(started.elapsed() >= Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_task_starts_with_the_first_request_after_the_handshake() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    // An idle session holds no deadline task: the handshake kept its
    // deadline with a timer of its own.
    let metrics = tokio::runtime::Handle::current().metrics();
    let idle = metrics.num_alive_tasks();
    client.ping().await.unwrap();
    assert_eq!(metrics.num_alive_tasks(), idle + 1);
    client.ping().await.unwrap();
    assert_eq!(metrics.num_alive_tasks(), idle + 1);
}

#[tokio::test(start_paused = true)]
async fn a_silent_probe_times_out_into_the_handshake_era() {
    let not_discover = |v: &Value| v["method"] != "server/discover";
    let Pair { client, received, .. } =
        pair_filtered(ClientOptions::new("testkit"), Config::default(), not_discover);
    let started = tokio::time::Instant::now();
    client.ping().await.unwrap();
    // The probe waited its timeout (5 s of virtual time), then initialize.
    assert!(started.elapsed() >= mcp_peer::DEFAULT_PROBE_TIMEOUT);
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    // No notifications/cancelled for the probe: a handshake-era server
    // must see nothing but initialize first. discover, initialize,
    // initialized, ping.
    assert_eq!(received.load(Ordering::SeqCst), 4);
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[]");
}

/// A server that answers every `server/discover` with `-32022`, listing
/// the versions `lists` gives for each try in turn (the last one again
/// once they run out); returns the client and the number of probes.
fn refusing_versions(lists: Vec<Vec<&'static str>>) -> (Client<MemoryTransport>, Arc<AtomicUsize>) {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, ClientOptions::new("refusing"));
    let probes = Arc::new(AtomicUsize::new(0));
    let counter = probes.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let listed = lists.get(n).or(lists.last()).cloned().unwrap_or_default();
            let requested = &msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
            let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": listed, "requested": requested}}});
            end.send(reply.to_string().as_bytes());
        }
    });
    (client, probes)
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_refusing_a_version_it_lists_is_named_correctly() {
    let (client, probes) = refusing_versions(vec![vec!["2026-07-28"]]);
    let err = client.ping().await.unwrap_err();
    // Asked again once with the version it lists, then given up.
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    assert_eq!(
        err.to_string(),
        "server/discover failed: the server refused protocol version \"2026-07-28\" \
         (the server lists: 2026-07-28; this client speaks: 2024-11-05, 2025-03-26, \
         2025-06-18, 2025-11-25, 2026-07-28; in common: 2026-07-28)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_alternates_its_versions_is_named_correctly() {
    let (client, probes) =
        refusing_versions(vec![vec!["2026-07-28"], vec!["2027-01-01"], vec!["2026-07-28"]]);
    let err = client.ping().await.unwrap_err();
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    assert_eq!(
        err.to_string(),
        "server/discover failed: the server refused protocol version \"2026-07-28\" \
         (the server lists: 2027-01-01; this client speaks: 2024-11-05, 2025-03-26, \
         2025-06-18, 2025-11-25, 2026-07-28; in common: none)"
    );
    // Remembered: a later request fails the same way without probing.
    assert_eq!(client.ping().await.unwrap_err().to_string(), err.to_string());
    assert_eq!(probes.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn the_stateless_era_pinned_refuses_a_handshake_era_server_s_methods() {
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Modern;
    let Pair { client, .. } = pair(o);
    // The handshake-era testkit does not answer server/discover with a
    // discovery: pinned to the stateless era, the client speaks it anyway.
    let err = client.ping().await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::NotInEra { ref method, .. }) if method == "ping"),
        "{err:?}"
    );
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
}

// The stateless era (2026-07-28) against the testkit speaking it.

/// A user who gives the name "Ada" to every form.
struct Ada;

impl ElicitationHandler for Ada {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::accept([("name", "Ada")])) })
    }
}

/// A model that always says "hello".
struct Hello;

impl SamplingHandler for Hello {
    fn create_message(
        &self,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async { Ok(CreateMessageResult::text("test-model", "hello")) })
    }
}

fn modern_config(era: ServeEra) -> Config {
    Config { era, ..Config::default() }
}

/// What the stateless testkit received, oldest first.
async fn received_log(client: &Client<MemoryTransport>) -> Vec<Value> {
    let log = client.call_tool("received_log", ()).await.unwrap();
    serde_json::from_str(&text(&log)).unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_probe_finds_a_stateless_server_and_every_request_carries_its_meta() {
    for era in [ServeEra::Modern, ServeEra::Both] {
        let mut o = ClientOptions::new("testkit");
        o.client_info = Implementation::new("probe-test", "1.2.3");
        let Pair { client, .. } = pair_with(o, modern_config(era));
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(client.server_info().unwrap().name, "mcp-testkit");
        assert!(client.server_capabilities().unwrap().tools.is_some());
        let echoed = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(text(&echoed), "hi");
        // The era has no ping: refused before anything is sent.
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");
        let log = received_log(&client).await;
        let methods: Vec<&str> = log.iter().map(|r| r["method"].as_str().unwrap()).collect();
        assert_eq!(methods, ["server/discover", "tools/list", "tools/call", "tools/call"]);
        for record in &log {
            assert_eq!(record["protocolVersion"], "2026-07-28", "{record}");
            assert!(record["clientCapabilities"].is_object(), "{record}");
            assert_eq!(record["clientInfo"]["name"], "probe-test", "{record}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn input_required_rounds_go_through_the_handlers_and_echo_the_state() {
    let mut o = ClientOptions::new("testkit");
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let done = client.call_tool("ask_twice", ()).await.unwrap();
    assert_eq!(text(&done), "Ada: hello");
    let once = client.call_tool("retry_once", ()).await.unwrap();
    assert!(text(&once).starts_with("retried with retry_once:"), "{}", text(&once));
    let log = received_log(&client).await;
    let calls: Vec<&Value> = log.iter().filter(|r| r["method"] == "tools/call").collect();
    // ask_twice: three attempts with new ids; the state of each answer is
    // echoed exactly on the next, and never sent when there was none.
    assert!(calls[0].get("requestState").is_none(), "{}", calls[0]);
    assert!(calls[0].get("inputResponses").is_none(), "{}", calls[0]);
    assert_eq!(calls[1]["requestState"], "ask_twice:1");
    assert_eq!(calls[1]["inputResponses"]["name"]["content"]["name"], "Ada");
    assert_eq!(calls[2]["requestState"], "ask_twice:2:Ada");
    assert!(calls[2]["inputResponses"].get("name").is_none(), "{}", calls[2]);
    assert_eq!(calls[2]["inputResponses"]["greeting"]["content"]["text"], "hello");
    let ids: std::collections::HashSet<String> =
        calls.iter().map(|r| r["id"].to_string()).collect();
    assert_eq!(ids.len(), calls.len(), "every attempt has its own id");
    // retry_once: only a state, no input requests: echoed, no inputResponses.
    assert!(calls[4]["requestState"].as_str().unwrap().starts_with("retry_once:"));
    assert!(calls[4].get("inputResponses").is_none(), "{}", calls[4]);
}

#[tokio::test(start_paused = true)]
async fn input_rounds_are_bounded_and_missing_capabilities_are_typed() {
    let mut o = ClientOptions::new("testkit");
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    o.max_input_rounds = 1;
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let err = client.call_tool("ask_twice", ()).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::TooManyInputRounds { rounds: 1, .. })),
        "{err:?}"
    );
    // No roots handler: roots are not declared, and the server says so.
    let err = client.call_tool("ask", json!({"what": "roots"})).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::MissingClientCapability { required, .. }) => {
            assert!(required.unwrap().get("roots").is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_dual_era_server_is_spoken_to_in_the_era_the_client_pins() {
    let Pair { client, .. } = pair_with(options(), modern_config(ServeEra::Both));
    client.ping().await.unwrap();
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::LATEST_LEGACY));
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Modern;
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Both));
    client.list_tools().await.unwrap();
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
}

#[tokio::test(start_paused = true)]
async fn per_call_meta_reaches_the_server_beside_the_era_s_own() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let record = move |v: &Value| {
        sink.lock().unwrap().push(v["params"]["_meta"].clone());
        true
    };
    let Pair { client, .. } =
        pair_filtered(ClientOptions::new("testkit"), modern_config(ServeEra::Modern), record);
    let mut meta = serde_json::Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"),
    );
    // The caller cannot override the era's own members.
    meta.insert("io.modelcontextprotocol/protocolVersion".into(), json!("1999-01-01"));
    let options = RequestOptions { meta: Some(meta), ..Default::default() };
    let r = client.call_tool_with("echo", json!({"message": "traced"}), options).await.unwrap();
    assert_eq!(text(&r), "traced");
    let log = received_log(&client).await;
    let call =
        log.iter().rev().find(|r| r["method"] == "tools/call" && r["name"] == "echo").unwrap();
    assert_eq!(call["protocolVersion"], "2026-07-28");
    let sent = seen.lock().unwrap();
    let traced: Vec<&Value> = sent.iter().filter(|m| m.get("traceparent").is_some()).collect();
    assert_eq!(traced.len(), 1, "{sent:?}");
    assert_eq!(traced[0]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert!(traced[0]["io.modelcontextprotocol/clientCapabilities"].is_object());
}

#[tokio::test(start_paused = true)]
async fn subscriptions_are_acknowledged_demultiplexed_and_closed() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut on_tools = client.listen(tools).await.unwrap();
    assert_eq!(on_tools.granted().tools_list_changed, Some(true));
    assert!(on_tools.refused().is_empty());
    let uri = "test://static/text/1";
    let resources = SubscriptionFilter {
        resource_subscriptions: Some(vec![uri.into(), "test://nowhere".into()]),
        ..Default::default()
    };
    let mut on_resource = client.listen(resources).await.unwrap();
    assert_eq!(on_resource.refused(), ["test://nowhere"]);
    let mut everything = client.notifications();

    client.call_tool("change", ()).await.unwrap();
    client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(on_tools.recv().await, Some(ServerNotification::ToolListChanged));
    match on_resource.recv().await {
        Some(ServerNotification::ResourceUpdated(p)) => assert_eq!(p.uri, uri),
        other => panic!("{other:?}"),
    }
    // Each stream got only its own; the client-wide stream got both.
    let quiet = tokio::time::timeout(Duration::from_millis(50), on_tools.recv()).await;
    assert!(quiet.is_err(), "{quiet:?}");
    let mut seen = Vec::new();
    while let Ok(Some(n)) = tokio::time::timeout(Duration::from_millis(50), everything.recv()).await
    {
        seen.push(n.method().to_owned());
    }
    assert!(seen.contains(&"notifications/tools/list_changed".to_owned()), "{seen:?}");
    assert!(seen.contains(&"notifications/resources/updated".to_owned()), "{seen:?}");
    // The tool cache was dropped by the list change.
    assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "extra"));

    // Closing one sends notifications/cancelled for its request (stdio).
    drop(on_resource);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_ne!(text(&log), "[]");

    // The server ends the other gracefully.
    client.call_tool("close_subscriptions", ()).await.unwrap();
    assert_eq!(on_tools.recv().await, None);
    assert_eq!(on_tools.end_reason().as_deref(), Some("the server ended the subscription"));
}

#[tokio::test(start_paused = true)]
async fn listening_is_refused_in_the_handshake_era() {
    let Pair { client, .. } = pair(options());
    let err = client.listen(Default::default()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn a_broken_subscription_listens_again_and_reports_its_lists_changed() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, restart, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    // The server process "restarts": its subscription state is gone.
    restart.now();
    // Whatever changed meanwhile is unknown: reported as a change.
    assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    // Listening again, the new server's changes arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    assert!(sub.end_reason().is_none());
}

#[tokio::test(start_paused = true)]
async fn breaks_with_open_streams_between_them_never_use_up_the_relistens() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, restart, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    // More breaks than MAX_RELISTENS, each after the stream was open again:
    // never "in a row", so the subscription lives on.
    for _ in 0..mcp_peer::MAX_RELISTENS + 2 {
        restart.now();
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
        tokio::time::sleep(Duration::from_secs(15)).await;
        client.call_tool("change", ()).await.unwrap();
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    }
    assert!(sub.end_reason().is_none(), "{:?}", sub.end_reason());
}

fn count(log: &[Value], method: &str) -> usize {
    log.iter().filter(|r| r["method"] == method).count()
}

#[tokio::test(start_paused = true)]
async fn fresh_results_come_from_the_cache_until_their_ttl_or_a_change() {
    use mcp_proto::types::SubscriptionFilter;
    let config = Config { ttl_ms: 1000, ..modern_config(ServeEra::Modern) };
    let Pair { client, .. } = pair_with(ClientOptions::new("testkit"), config);
    let uri = "test://static/text/1";
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    client.read_resource(uri).await.unwrap();
    client.read_resource(uri).await.unwrap();
    let log = received_log(&client).await;
    assert_eq!((count(&log, "tools/list"), count(&log, "resources/read")), (1, 1));
    // Stale after the ttl: asked again.
    tokio::time::sleep(Duration::from_millis(1001)).await;
    client.list_tools().await.unwrap();
    // A change the server announces makes a fresh copy stale at once.
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec![uri.into()]), ..Default::default() };
    let mut sub = client.listen(filter).await.unwrap();
    client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert!(matches!(sub.recv().await, Some(ServerNotification::ResourceUpdated(_))));
    client.read_resource(uri).await.unwrap();
    let log = received_log(&client).await;
    assert_eq!((count(&log, "tools/list"), count(&log, "resources/read")), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn no_cache_without_a_ttl_or_when_turned_off() {
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&client).await, "tools/list"), 2);
    let mut o = ClientOptions::new("testkit");
    o.cache = None;
    let config = Config { ttl_ms: 60_000, ..modern_config(ServeEra::Modern) };
    let Pair { client, .. } = pair_with(o, config);
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&client).await, "tools/list"), 2);
}

/// A stateless-era server, scripted, that makes a task of every tool call:
/// working, then input_required (an elicitation), then completed with the
/// name it was given; what it received is recorded.
type Seen = Arc<std::sync::Mutex<Vec<Value>>>;

fn task_server(fail: bool) -> (Client<MemoryTransport>, Seen) {
    task_server_with(fail, mcp_peer::DEFAULT_TASK_TIMEOUT)
}

fn task_server_with(fail: bool, task_timeout: Duration) -> (Client<MemoryTransport>, Seen) {
    let mut o =
        ClientOptions::new("tasks").with_extension(mcp_proto::types::TASKS_EXTENSION, json!({}));
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.task_timeout = task_timeout;
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, o);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut polls = 0;
        let mut name = None::<String>;
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m.clone());
            let Some(id) = m.get("id").cloned() else { continue };
            let task = |status: &str| {
                json!({"resultType": "complete", "taskId": "t-1",
                "status": status, "createdAt": "2026-12-01T00:00:00Z",
                "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 200})
            };
            let result = match m["method"].as_str().unwrap() {
                "server/discover" => {
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}})
                }
                "tools/call" => {
                    let mut t = task("working");
                    t["resultType"] = json!("task");
                    t
                }
                "tasks/get" => {
                    polls += 1;
                    match (polls, &name) {
                        (1, _) => task("working"),
                        (_, None) => {
                            let mut t = task("input_required");
                            t["inputRequests"] = json!({"who": {"method": "elicitation/create",
                                "params": {"message": "Your name?", "requestedSchema": {"type": "object",
                                "properties": {"name": {"type": "string"}}}}}});
                            t
                        }
                        (_, Some(_)) if fail => {
                            let mut t = task("failed");
                            t["error"] = json!({"code": -32603, "message": "the job broke"});
                            t
                        }
                        (_, Some(n)) => {
                            let mut t = task("completed");
                            t["result"] = json!({"content": [{"type": "text", "text": format!("hello {n}")}]});
                            t
                        }
                    }
                }
                "tasks/update" => {
                    name = m["params"]["inputResponses"]["who"]["content"]["name"]
                        .as_str()
                        .map(str::to_owned);
                    json!({"resultType": "complete"})
                }
                _ => json!({"resultType": "complete"}),
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            end.send(reply.to_string().as_bytes());
        }
    });
    (client, seen)
}

#[tokio::test(start_paused = true)]
async fn a_task_handle_is_followed_to_its_result_through_its_input_requests() {
    let (client, seen) = task_server(false);
    let r = client.call_tool("job", ()).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    let log = seen.lock().unwrap().clone();
    let methods: Vec<&str> = log.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tasks/get", "tasks/get", "tasks/update", "tasks/get"]
    );
    // The extension is declared on every request; the update answers the key once.
    for m in &log {
        let caps = &m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert!(caps["extensions"].get("io.modelcontextprotocol/tasks").is_some(), "{m}");
    }
    assert_eq!(log[4]["params"]["taskId"], "t-1");
}

#[tokio::test(start_paused = true)]
async fn a_call_for_its_json_follows_a_task_to_its_result_too() {
    let (client, _) = task_server(false);
    let raw = client.call_tool_json("job", (), RequestOptions::default()).await.unwrap();
    let result: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
    assert_eq!(result["content"][0]["text"], "hello Ada", "{result}");
    assert!(result.get("taskId").is_none(), "{result}");
}

/// A handshake-era server in memory whose `tools/call` results are the
/// given JSON texts, in turn, written into the reply as they are.
fn raw_results(results: Vec<&'static str>) -> Client<MemoryTransport> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    tokio::spawn(async move {
        let mut results = results.into_iter();
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let result = match msg["method"].as_str().unwrap_or_default() {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                })
                .to_string(),
                _ => results.next().unwrap_or("{}").to_owned(),
            };
            let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            end.send(reply.as_bytes());
        }
    });
    client
}

#[tokio::test(start_paused = true)]
async fn a_call_for_its_json_gives_the_server_s_text_as_it_came_and_refuses_a_non_object() {
    // Escapes, non-ASCII text and an escaped surrogate pair, a number no
    // float holds, `_meta`, nesting, members in no sorted order, spaces.
    let unusual = concat!(
        r#"{"structuredContent":{"n":123456789012345678901234567890,"f":1.0e-7,"#,
        r#""deep":[[[{"a":[null,true,false]}]]]},"content":[{"type":"text","#,
        r#""text":"tab\t quote\" backslash\\ slash\/ \u00e9 é \ud83d\ude00 😀"}],"#,
        r#""_meta":{"x.y/z":{"k":[]}}, "isError" : false }"#
    );
    let client = raw_results(vec![unusual, "[1, 2]", "42", r#""text""#, "null"]);
    let raw = client.call_tool_json("t", (), RequestOptions::default()).await.unwrap();
    assert_eq!(raw.get(), unusual);
    for _ in 0..4 {
        let err = client.call_tool_json("t", (), RequestOptions::default()).await.unwrap_err();
        match err {
            MemoryError::Protocol(ClientError::InvalidResult { method, reason }) => {
                assert_eq!(method, "tools/call");
                assert!(reason.contains("not a JSON object"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_failed_task_is_the_call_s_error_and_a_started_call_gives_the_handle() {
    let (client, _) = task_server(true);
    let err = client.call_tool("job", ()).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => {
            assert_eq!(error.message, "the job broke")
        }
        other => panic!("{other:?}"),
    }
    match client.call_tool_start("job", (), RequestOptions::default()).await.unwrap() {
        mcp_peer::tasks::ToolCallStart::Task(t) => {
            assert_eq!(t.task_id, "t-1");
            assert_eq!(t.poll_interval_ms, Some(200));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_started_task_is_followed_with_each_state_observed() {
    let (client, seen) = task_server(false);
    let started = client.call_tool_start("job", (), RequestOptions::default()).await.unwrap();
    let mcp_peer::tasks::ToolCallStart::Task(task) = started else { panic!("{started:?}") };
    let states = Arc::new(std::sync::Mutex::new(Vec::new()));
    let observed = states.clone();
    let observe = move |t: &mcp_proto::types::DetailedTask| {
        observed.lock().unwrap().push(t.status.as_str().to_owned());
    };
    let r = client.follow_tool_task(&task, &observe).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    // The handle first, then each tasks/get; the input asked and answered.
    let states = states.lock().unwrap().clone();
    assert_eq!(states, ["working", "working", "input_required", "completed"]);
    let log = seen.lock().unwrap().clone();
    let methods: Vec<&str> = log.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tasks/get", "tasks/get", "tasks/update", "tasks/get"]
    );
    // A failed task is the follower's error.
    let (client, _) = task_server(true);
    let started = client.call_tool_start("job", (), RequestOptions::default()).await.unwrap();
    let mcp_peer::tasks::ToolCallStart::Task(task) = started else { panic!("{started:?}") };
    let err = client.follow_tool_task(&task, &|_| {}).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Rpc { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn a_task_followed_too_long_or_abandoned_is_cancelled() {
    let cancelled = |seen: &Seen| {
        let log = seen.lock().unwrap();
        log.iter()
            .filter(|m| m["method"] == "tasks/cancel" && m["params"]["taskId"] == "t-1")
            .count()
    };
    let (client, seen) = task_server_with(false, Duration::from_millis(100));
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Timeout { .. })), "{err:?}");
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(cancelled(&seen), 1);
    // Dropping the call while it follows the task cancels the task.
    let (client, seen) = task_server(false);
    let _ = tokio::time::timeout(Duration::from_millis(300), client.call_tool("job", ())).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(cancelled(&seen), 1);
}

#[tokio::test(start_paused = true)]
async fn a_task_handle_to_a_client_that_did_not_declare_tasks_is_invalid() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, ClientOptions::new("no-tasks"));
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            let result = match m["method"].as_str().unwrap() {
                "server/discover" => {
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}})
                }
                _ => json!({"resultType": "task", "taskId": "x", "status": "working"}),
            };
            end.send(
                json!({"jsonrpc": "2.0", "id": m["id"], "result": result}).to_string().as_bytes(),
            );
        }
    });
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::InvalidResult { .. })), "{err:?}");
}

#[cfg(feature = "otel")]
#[tokio::test]
async fn the_current_opentelemetry_context_rides_in_meta() {
    use opentelemetry::propagation::{
        Extractor, Injector, TextMapPropagator, text_map_propagator::FieldIter,
    };
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    /// The W3C `traceparent` of the current span (what the SDK's
    /// propagator writes), for the test.
    #[derive(Debug)]
    struct W3c(Vec<String>);
    impl TextMapPropagator for W3c {
        fn inject_context(&self, cx: &opentelemetry::Context, injector: &mut dyn Injector) {
            let span = cx.span();
            let sc = span.span_context();
            if sc.is_valid() {
                let flags = sc.trace_flags().to_u8();
                injector.set(
                    "traceparent",
                    format!("00-{}-{}-{flags:02x}", sc.trace_id(), sc.span_id()),
                );
                injector.set("not-trace-context", "dropped".into());
            }
        }
        fn extract_with_context(
            &self,
            cx: &opentelemetry::Context,
            _: &dyn Extractor,
        ) -> opentelemetry::Context {
            cx.clone()
        }
        fn fields(&self) -> FieldIter<'_> {
            FieldIter::new(&self.0)
        }
    }
    opentelemetry::global::set_text_map_propagator(W3c(vec!["traceparent".into()]));

    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m.clone());
            let Some(id) = m.get("id").cloned() else { continue };
            let result = match m["method"].as_str().unwrap() {
                "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"}}),
                _ => json!({"content": [{"type": "text", "text": "ok"}]}),
            };
            end.send(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string().as_bytes());
        }
    });
    client.initialize().await.unwrap();
    client.call_tool("untraced", ()).await.unwrap();
    let span = SpanContext::new(
        TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let cx = opentelemetry::Context::new().with_remote_span_context(span);
    {
        let _attached = cx.attach();
        client.call_tool("traced", ()).await.unwrap();
    }
    let log = seen.lock().unwrap();
    let call = |name: &str| log.iter().find(|m| m["params"]["name"] == name).unwrap().clone();
    assert!(call("untraced")["params"].get("_meta").is_none());
    let meta = &call("traced")["params"]["_meta"];
    assert_eq!(meta["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    assert!(meta.get("not-trace-context").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_log_level_rides_on_each_request_in_the_stateless_era() {
    use mcp_proto::types::LoggingLevel;
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let quiet = client.call_tool("log", json!({"level": "error", "message": "x"})).await.unwrap();
    assert!(text(&quiet).starts_with("not sent"), "{}", text(&quiet));
    let err = client.set_log_level(LoggingLevel::Debug).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");

    let mut o = ClientOptions::new("testkit");
    o.log_level = Some(LoggingLevel::Warning);
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let mut stream = client.notifications();
    let below = client.call_tool("log", json!({"level": "info", "message": "x"})).await.unwrap();
    assert!(text(&below).starts_with("not sent"), "{}", text(&below));
    client.call_tool("log", json!({"level": "error", "message": "loud"})).await.unwrap();
    match stream.recv().await {
        Some(ServerNotification::LogMessage(m)) => assert_eq!(m.data, json!("loud")),
        other => panic!("{other:?}"),
    }
    // A call may ask for its own level.
    let mut meta = serde_json::Map::new();
    meta.insert("io.modelcontextprotocol/logLevel".into(), json!("debug"));
    let options = RequestOptions { meta: Some(meta), ..Default::default() };
    let r = client
        .call_tool_with("log", json!({"level": "info", "message": "chatty"}), options)
        .await
        .unwrap();
    assert!(!text(&r).starts_with("not sent"), "{}", text(&r));
}

#[tokio::test(start_paused = true)]
async fn a_flood_into_an_unread_subscription_is_one_warning_per_second() {
    use mcp_proto::types::SubscriptionFilter;
    let logs = mcp_test_support::LogCapture::start(tracing::Level::WARN);
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    let flood = mcp_peer::SUBSCRIPTION_BUFFER + 300;
    for _ in 0..flood {
        client.call_tool("change", ()).await.unwrap();
    }
    let full = "buffer is full";
    assert_eq!(logs.lines_with(full).len(), 1, "one line for the first drop");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.call_tool("change", ()).await.unwrap();
    let lines = logs.lines_with(full);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].contains("dropped=300"), "the rest counted in one line: {lines:?}");
    // What was kept is still there, in order.
    for _ in 0..mcp_peer::SUBSCRIPTION_BUFFER {
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    }
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_that_keeps_falling_behind_is_one_warning_per_second() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::WARN);
    let Pair { client, .. } = pair(options());
    let mut notifications = client.notifications();
    // Ten floods, each read from once: ten lags.
    for _ in 0..10 {
        for _ in 0..300 {
            client.call_tool("change", ()).await.unwrap();
        }
        assert_eq!(notifications.recv().await, Some(ServerNotification::ToolListChanged));
    }
    let behind = "fell behind";
    assert_eq!(logs.lines_with(behind).len(), 1, "one line for the first lag");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(notifications.recv().await, Some(ServerNotification::ToolListChanged));
    let lines = logs.lines_with(behind);
    assert_eq!(lines.len(), 2, "{lines:?}");
}

// Bounds on what a stateless-era server may ask of the host in input
// rounds: the number of input requests (counted before any is decoded or
// handed to a handler), the size of the answers built, and the rounds a
// task may take.

/// An elicitation handler that counts its calls and answers with a name
/// of `size` bytes.
struct Counting(Arc<AtomicUsize>, usize);

impl ElicitationHandler for Counting {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let name = "x".repeat(self.1);
        Box::pin(async move { Ok(ElicitResult::accept([("name", name)])) })
    }
}

/// A stateless-era server in memory answering every request but
/// `server/discover` with `answer(method, n)`, `n` counting the requests
/// of that method; the client counts its elicitations in the returned
/// counter.
fn asking_server(
    mut options: ClientOptions,
    answer_size: usize,
    answer: impl Fn(&str, usize) -> String + Send + 'static,
) -> (Client<MemoryTransport>, Seen, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    options.handlers.elicitation = Some(Arc::new(Counting(asked.clone(), answer_size)));
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut counts = std::collections::HashMap::<String, usize>::new();
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(json!({"method": m["method"], "id": m["id"]}));
            let Some(id) = m.get("id").cloned() else { continue };
            let method = m["method"].as_str().unwrap_or_default().to_owned();
            let result = if method == "server/discover" {
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}})
                .to_string()
            } else {
                let n = counts.entry(method.clone()).or_default();
                *n += 1;
                answer(&method, *n)
            };
            let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            end.send(reply.as_bytes());
        }
    });
    (client, seen, asked)
}

/// `count` elicitation requests keyed `{prefix}{i}`, as JSON members.
fn input_requests(prefix: &str, count: usize) -> String {
    let one = r#"{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}"#;
    let members: Vec<String> = (0..count).map(|i| format!(r#""{prefix}{i}":{one}"#)).collect();
    format!("{{{}}}", members.join(","))
}

fn methods_seen(seen: &Seen) -> Vec<String> {
    seen.lock().unwrap().iter().map(|m| m["method"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_input_requests_is_refused_before_any_handler_runs() {
    // One answer of about 16 MB holding 440,000 input requests.
    let flood = format!(
        r#"{{"resultType":"input_required","inputRequests":{},"requestState":"s"}}"#,
        input_requests("k", 440_000)
    );
    assert!(flood.len() > 16_000_000);
    let (client, seen, asked) =
        asking_server(ClientOptions::new("flood"), 3, move |_, _| flood.clone());
    let err = client.call_tool("ask", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::TooManyInputRequests {
                count: 440_000,
                max: 64,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert_eq!(methods_seen(&seen), ["server/discover", "tools/call"]);
}

#[tokio::test(start_paused = true)]
async fn the_answers_of_an_input_round_are_bounded_in_size() {
    let mut o = ClientOptions::new("big answers");
    o.max_input_answer_bytes = 1000;
    let ten =
        format!(r#"{{"resultType":"input_required","inputRequests":{}}}"#, input_requests("k", 10));
    let (client, seen, asked) = asking_server(o, 400, move |_, n| match n {
        1 => ten.clone(),
        _ => r#"{"resultType":"complete","content":[]}"#.to_owned(),
    });
    let err = client.call_tool("ask", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::InputAnswersTooLarge { max_bytes: 1000, .. })
        ),
        "{err:?}"
    );
    // Each answer is over 400 bytes: the third one went over, and no
    // handler was asked after it; the request was not sent again.
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    assert_eq!(methods_seen(&seen), ["server/discover", "tools/call"]);
}

/// A task that asks for new input at every poll (`inputs` requests each
/// time), as a `tasks/get` answer.
fn asking_task(n: usize, inputs: usize) -> String {
    format!(
        r#"{{"resultType":"complete","taskId":"t-1","status":"input_required","createdAt":"2026-12-01T00:00:00Z","lastUpdatedAt":"2026-12-01T00:00:00Z","pollIntervalMs":100,"inputRequests":{}}}"#,
        input_requests(&format!("r{n}-"), inputs)
    )
}

fn task_options(rounds: usize) -> ClientOptions {
    let mut o =
        ClientOptions::new("tasks").with_extension(mcp_proto::types::TASKS_EXTENSION, json!({}));
    o.max_input_rounds = rounds;
    o
}

#[tokio::test(start_paused = true)]
async fn a_task_that_keeps_asking_for_input_is_bounded_by_the_round_limit() {
    let (client, seen, asked) = asking_server(task_options(3), 3, |method, n| match method {
        "tools/call" => {
            asking_task(0, 1).replacen(r#""resultType":"complete""#, r#""resultType":"task""#, 1)
        }
        "tasks/get" => asking_task(n, 1),
        _ => r#"{"resultType":"complete"}"#.to_owned(),
    });
    let started = tokio::time::Instant::now();
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::TooManyInputRounds { rounds: 3, .. })),
        "{err:?}"
    );
    // Three rounds answered, then refused: long before the task's own
    // limit (ten minutes).
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The task abandoned is cancelled.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let methods = methods_seen(&seen);
    assert_eq!(methods.iter().filter(|m| *m == "tasks/update").count(), 3, "{methods:?}");
    assert_eq!(methods.last().map(String::as_str), Some("tasks/cancel"), "{methods:?}");
}

#[tokio::test(start_paused = true)]
async fn a_task_status_with_too_many_input_requests_is_refused_and_the_task_cancelled() {
    let (client, seen, asked) = asking_server(task_options(8), 3, |method, n| match method {
        "tools/call" => {
            asking_task(0, 1).replacen(r#""resultType":"complete""#, r#""resultType":"task""#, 1)
        }
        "tasks/get" => asking_task(n, 65),
        _ => r#"{"resultType":"complete"}"#.to_owned(),
    });
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::TooManyInputRequests { count: 65, max: 64, .. })
        ),
        "{err:?}"
    );
    // Only the first status's one request was answered.
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(methods_seen(&seen).last().map(String::as_str), Some("tasks/cancel"));
}

// The era memory is the caller's: passed in the options, the process's
// shared table by default.

/// The in-memory transport under an era key, as an HTTP origin is.
struct Keyed(MemoryTransport, &'static str);

impl mcp_peer::Transport for Keyed {
    type Error = MemoryError;

    fn attach(&self, link: mcp_peer::Link) {
        self.0.attach(link)
    }

    async fn send_request(&self, r: mcp_peer::OutgoingRequest<'_>) -> Result<(), MemoryError> {
        self.0.send_request(r).await
    }

    async fn flush(&self) -> Result<(), MemoryError> {
        self.0.flush().await
    }

    async fn close(&self) -> Result<(), MemoryError> {
        self.0.close().await
    }

    fn client_error(&self, error: ClientError) -> MemoryError {
        self.0.client_error(error)
    }

    fn era_cache_key(&self) -> Option<String> {
        Some(self.1.into())
    }
}

/// A handshake-era testkit server behind `key`; the methods it received
/// once the client pinged.
async fn methods_of_a_ping(key: &'static str, options: ClientOptions) -> Vec<String> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(Keyed(transport, key), options);
    let sender = end.sender();
    let (server, queue) = Server::new(Config::default());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m["method"].as_str().unwrap_or("").to_owned());
            server.handle_json(&bytes);
        }
    });
    forward(queue, sender);
    client.ping().await.unwrap();
    client.close().await.unwrap();
    seen.lock().unwrap().clone()
}

#[tokio::test(start_paused = true)]
async fn the_era_memory_is_the_one_the_options_give() {
    let key = "test://era-memory-passed-in";
    let table = Arc::new(mcp_peer::era::EraTable::default());
    let mut own = ClientOptions::new("own");
    own.era_memory = Some(table.clone());
    // The first client probes and remembers, in its own table only.
    let first = methods_of_a_ping(key, own.clone()).await;
    assert_eq!(first[..2], ["server/discover", "initialize"]);
    assert!(mcp_peer::era::EraMemory::known_legacy(&*table, key));
    assert!(!mcp_peer::era::EraMemory::known_legacy(&*mcp_peer::era::shared(), key));
    // A second client sharing that table sends initialize at once.
    let second = methods_of_a_ping(key, own).await;
    assert_eq!(second[0], "initialize");
    // One with the shared default, or with no memory, probes.
    let shared = methods_of_a_ping(key, ClientOptions::new("shared")).await;
    assert_eq!(shared[0], "server/discover");
    let mut none = ClientOptions::new("none");
    none.era_memory = None;
    let forgetful = methods_of_a_ping(key, none.clone()).await;
    assert_eq!(forgetful[0], "server/discover");
    assert_eq!(methods_of_a_ping(key, none).await[0], "server/discover");
}

/// A middleware that records what it saw, adds `_meta`, and answers,
/// refuses or panics on the tools named so.
#[derive(Debug)]
struct Recorder {
    name: &'static str,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

impl mcp_peer::middleware::Middleware for Recorder {
    fn before(
        &self,
        request: &mut mcp_peer::middleware::Outgoing<'_>,
    ) -> mcp_peer::middleware::Before {
        use mcp_peer::middleware::Before;
        self.seen.lock().unwrap().push(format!("{} before {}", self.name, request.method()));
        request.meta().insert(format!("x-{}", self.name), json!(true));
        let tool = request.meta().get("x-tool").and_then(Value::as_str).map(str::to_owned);
        match tool.as_deref() {
            Some("answer") if self.name == "outer" => {
                let canned = r#"{"content":[{"type":"text","text":"from the middleware"}]}"#;
                Before::Answer(serde_json::value::RawValue::from_string(canned.into()).unwrap())
            }
            Some("refuse") if self.name == "outer" => Before::Refuse("not today".into()),
            Some("panic") if self.name == "inner" => panic!("a middleware bug"),
            _ => Before::Send,
        }
    }

    fn after(&self, answer: &mcp_peer::middleware::After<'_>) {
        let how = if answer.error.is_some() { "failed" } else { "answered" };
        self.seen.lock().unwrap().push(format!("{} after {} {how}", self.name, answer.method));
    }
}

#[tokio::test(start_paused = true)]
async fn middleware_adds_meta_answers_refuses_and_survives_a_panic() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let metas = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = metas.clone();
    let record = move |v: &Value| {
        if v["method"] == "tools/call" {
            sink.lock().unwrap().push(v["params"]["_meta"].clone());
        }
        true
    };
    let options = ClientOptions::new("testkit")
        .with_middleware(Arc::new(Recorder { name: "outer", seen: seen.clone() }))
        .with_middleware(Arc::new(Recorder { name: "inner", seen: seen.clone() }));
    let Pair { client, .. } = pair_filtered(options, modern_config(ServeEra::Modern), record);
    let with = |tool: &str| RequestOptions {
        meta: Some([("x-tool".to_owned(), json!(tool))].into_iter().collect()),
        ..Default::default()
    };
    // Sent, with both middlewares' `_meta`; told in reverse order.
    let r = client.call_tool_with("echo", json!({"message": "hi"}), with("echo")).await.unwrap();
    assert_eq!(text(&r), "hi");
    let sent = metas.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (sent["x-outer"].clone(), sent["x-inner"].clone()),
        (json!(true), json!(true)),
        "{sent}"
    );
    let order: Vec<String> = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        order,
        [
            "outer before tools/call",
            "inner before tools/call",
            "inner after tools/call answered",
            "outer after tools/call answered"
        ]
    );
    let calls = metas.lock().unwrap().len();
    // Answered by the middleware: nothing sent, the next one not asked.
    let r = client.call_tool_with("echo", json!({"message": "x"}), with("answer")).await.unwrap();
    assert_eq!(text(&r), "from the middleware");
    // Refused: a typed error, nothing sent.
    let err =
        client.call_tool_with("echo", json!({"message": "x"}), with("refuse")).await.unwrap_err();
    assert!(
        matches!(&err, MemoryError::Protocol(ClientError::Refused { reason, .. }) if reason == "not today"),
        "{err:?}"
    );
    // A panic fails its request only.
    let err =
        client.call_tool_with("echo", json!({"message": "x"}), with("panic")).await.unwrap_err();
    assert!(matches!(&err, MemoryError::Protocol(ClientError::Refused { .. })), "{err:?}");
    assert_eq!(metas.lock().unwrap().len(), calls, "nothing reached the server");
    let r = client.call_tool_with("echo", json!({"message": "after"}), with("echo")).await.unwrap();
    assert_eq!(text(&r), "after");
    let order = seen.lock().unwrap().clone();
    assert!(order.contains(&"outer after tools/call failed".to_owned()), "{order:?}");
}

// --- added: httpstart3 ---

/// The answer to `initialize` no longer spawns a flush: the handshake
/// sends `notifications/initialized` itself. When the opening is dropped
/// between its answer and that send, the notification still goes out (in
/// a task of its own), before anything else.
#[tokio::test]
async fn initialized_goes_out_when_the_opening_is_dropped_after_its_answer() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let mut opening = Box::pin(client.initialize());
    let first = tokio::select! {
        _ = &mut opening => panic!("the handshake finished unanswered"),
        sent = end.recv() => sent.unwrap(),
    };
    let request: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(request["method"], "initialize");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}});
    assert!(end.send(answer.to_string().as_bytes()));
    // Answered (the session is open), and given up before it ran again.
    drop(opening);
    assert!(client.initialize_result().is_some());
    let next = tokio::time::timeout(Duration::from_secs(10), end.recv()).await.unwrap().unwrap();
    let next: Value = serde_json::from_slice(&next).unwrap();
    assert_eq!(next["method"], "notifications/initialized", "{next}");
}
