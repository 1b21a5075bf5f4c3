//! `mcpc serve` end to end: a host (the stdio client, spawning the built
//! `mcpc serve`) in either era, through the bridge, to the testkit over
//! stdio and to the embedded demo server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client_stdio::{ServerCommand, StdioClient, StdioOptions};
use mcp_peer::EraChoice;
use mcp_proto::ErrorObject;
use mcp_proto::client::{
    BoxFuture, ElicitationHandler, RequestOptions, SamplingHandler, ServerNotification,
};
use mcp_proto::types::{
    CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, JsonObject, LoggingLevel, SubscriptionFilter,
};
use mcp_test_support::text_blocks;
use serde_json::{Map, Value, json};

use crate::run::Sandbox;

fn testkit() -> String {
    mcp_testkit::binary_path().to_string_lossy().into_owned()
}

/// The host's side of an elicitation: the user accepts with a name.
struct Ada;

impl ElicitationHandler for Ada {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::accept([("name", "Ada")])) })
    }
}

/// The host's side of an elicitation: the user declines.
struct Declines;

impl ElicitationHandler for Declines {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::new(mcp_proto::types::ElicitAction::Decline)) })
    }
}

/// The host's side of sampling: a model that says hello.
struct Hello;

impl SamplingHandler for Hello {
    fn create_message(
        &self,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async {
            Ok(serde_json::from_value(json!({
                "role": "assistant", "model": "test",
                "content": {"type": "text", "text": "Hello"},
            }))
            .unwrap())
        })
    }
}

/// A host's options: speaking `era`, declaring nothing.
fn host_options(era: EraChoice) -> StdioOptions {
    let mut o = StdioOptions::new("bridge");
    o.discover_path = false;
    o.era = era;
    o.request_timeout = Duration::from_secs(30);
    o
}

/// A host speaking `era` to `mcpc serve ARGS` in the sandbox; it declares
/// elicitation when `elicitation` is given.
async fn host(
    s: &Sandbox,
    args: &[&str],
    era: EraChoice,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
) -> StdioClient {
    let mut o = host_options(era);
    o.handlers.elicitation = elicitation;
    host_with(s, args, o).await
}

/// A host with these options to `mcpc serve ARGS` in the sandbox.
async fn host_with(s: &Sandbox, args: &[&str], o: StdioOptions) -> StdioClient {
    let mut command = ServerCommand::new(env!("CARGO_BIN_EXE_mcpc")).arg("serve");
    command.args.extend(args.iter().map(|a| (*a).to_owned()));
    command.cwd = Some(s.dir.clone());
    for (k, v) in [
        ("HOME", s.dir.clone()),
        ("XDG_CONFIG_HOME", s.dir.join("xdg")),
        ("XDG_DATA_HOME", s.dir.join("data")),
        ("XDG_CACHE_HOME", s.dir.join("cache")),
        ("MCPC_MANAGED_POLICY", s.dir.join("managed.toml")),
    ] {
        command.env.insert(k.to_owned(), v.to_string_lossy().into_owned());
    }
    mcp_client_stdio::spawn(command, o).await.expect("mcpc serve starts")
}

fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

async fn call(c: &StdioClient, tool: &str, a: Value) -> CallToolResult {
    c.call_tool_with(tool, args(a), RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// Options that count a call's progress notifications.
fn counting_progress() -> (Arc<Mutex<usize>>, RequestOptions) {
    let seen = Arc::new(Mutex::new(0));
    let options = RequestOptions {
        on_progress: Some({
            let seen = seen.clone();
            Arc::new(move |_| *seen.lock().unwrap() += 1)
        }),
        ..Default::default()
    };
    (seen, options)
}

fn server_spec(extra: &str) -> String {
    format!("{} stdio {extra}", testkit())
}

/// A configuration of the testkit twice, as `a` and `b`, with an approval
/// table and an audit log (`conf/audit.jsonl`).
fn two_servers(s: &Sandbox, approval: &str) {
    let tk = testkit();
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n[mcp_client.approval]\n{approval}\n\
             [mcp_client.audit]\npath = \"audit.jsonl\"\n\
             [[mcp_client.servers]]\nname = \"a\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n\
             [[mcp_client.servers]]\nname = \"b\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n"
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_host_lists_calls_and_sees_progress() {
    let s = Sandbox::new("serve-legacy");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let init = c.initialize().await.unwrap();
    // The upstream's identity and what it declared, of what is forwarded.
    assert_eq!(init.server_info.name, "mcp-testkit");
    let caps = serde_json::to_value(&init.capabilities).unwrap();
    assert!(caps["tools"].is_object() && caps["resources"]["subscribe"] == true, "{caps}");
    assert!(caps.get("tasks").is_none(), "{caps}");
    let tools = c.list_tools().await.unwrap();
    // Names unchanged; annotations and `_meta` as the server gave them.
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "hi"})).await), "hi");

    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = RequestOptions {
        on_progress: Some({
            let seen = seen.clone();
            Arc::new(move |p| seen.lock().unwrap().push((p.progress, p.message.clone())))
        }),
        ..Default::default()
    };
    let r = c.call_tool_with("slow", args(json!({"ms": 300, "steps": 3})), options).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[2], (3.0, Some("step 3 of 3".to_owned())));

    // A JSON-RPC error of the server comes back as that error.
    let err = c.call_tool_with("nosuch", (), RequestOptions::default()).await.unwrap_err();
    assert_eq!(err.rpc_error().map(|e| e.code), Some(-32602), "{err}");

    // Resources and prompts pass through.
    let read = c.read_resource("test://static/text/1").await.unwrap();
    assert!(serde_json::to_string(&read).unwrap().contains("test://static/text/1"));
    assert!(!c.list_prompts().await.unwrap().is_empty());
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_reaches_the_embedded_demo() {
    let s = Sandbox::new("serve-modern");
    let c = host(&s, &[], EraChoice::Modern, None).await;
    let tools = c.list_tools().await.unwrap();
    assert_eq!(c.protocol_version().map(|v| v.is_modern()), Some(true));
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "now"})).await), "now");
    let (seen, options) = counting_progress();
    let r = c.call_tool_with("slow", args(json!({"ms": 200, "steps": 2})), options).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    assert_eq!(*seen.lock().unwrap(), 2);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_upstream() {
    let s = Sandbox::new("serve-cancel");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let before = text_blocks(&call(&c, "cancelled_log", json!({})).await);
    assert_eq!(before, "[]");
    // The host gives up: its client sends notifications/cancelled.
    let hang = c
        .call_tool_with("hang", (), RequestOptions::with_timeout(Duration::from_millis(300)))
        .await;
    assert!(hang.is_err(), "{hang:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = text_blocks(&call(&c, "cancelled_log", json!({})).await);
        let ids: Vec<Value> = serde_json::from_str(&log).unwrap();
        if ids.len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the server saw no cancellation: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_goes_to_a_host_that_declared_it_and_is_refused_otherwise() {
    let s = Sandbox::new("serve-elicit");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, Some(Arc::new(Ada))).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("Ada") && r.contains("accept"), "{r}");
    c.close().await.unwrap();

    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("did not declare the elicitation capability"), "{r}");
    let r = text_blocks(&call(&c, "ask", json!({"what": "sample"})).await);
    assert!(r.contains("did not declare the sampling capability"), "{r}");
    c.close().await.unwrap();

    // A stateless-era host is asked in input rounds of its call: once
    // (a handshake-era server's request), twice (a stateless-era server's
    // own two rounds, each turned into a request by the bridge's client).
    let c = host(&s, &["--server", &spec], EraChoice::Modern, Some(Arc::new(Ada))).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("Ada") && r.contains("accept"), "{r}");
    c.close().await.unwrap();
    let modern = server_spec("--era modern");
    let mut o = host_options(EraChoice::Modern);
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    let c = host_with(&s, &["--server", &modern], o).await;
    let r = text_blocks(&call(&c, "ask_twice", json!({})).await);
    assert!(r.starts_with("Ada: Hello"), "{r}");
    c.close().await.unwrap();
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("request did not declare the elicitation capability"), "{r}");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_crash_is_an_error_and_the_bridge_serves_on() {
    let s = Sandbox::new("serve-crash");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let mut n = c.notifications();
    let err = c.call_tool_with("crash", (), RequestOptions::default()).await.unwrap_err();
    let rpc = err.rpc_error().cloned().unwrap_or_else(|| panic!("not a JSON-RPC error: {err}"));
    assert_eq!(rpc.code, -32603, "{rpc:?}");
    assert!(rpc.message.contains("\"server\""), "{rpc:?}");
    // Supervision restarts it; the next call waits for it.
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "again"})).await), "again");
    // Restarted, it may list other tools: the host is told.
    next_matching(
        async || n.recv().await,
        |n| matches!(n, ServerNotification::ToolListChanged).then_some(()),
    )
    .await;
    // Garbage on the server's stdout is skipped; the call is answered.
    let r = text_blocks(&call(&c, "noisy", json!({"garbage_rounds": 2})).await);
    assert!(r.starts_with("noisy: wrote 6 garbage lines"), "{r}");
    c.close().await.unwrap();

    // A server that hangs past its timeout (`--timeout`): that call's error.
    let c = host(&s, &["--server", &spec, "--timeout", "0.5"], EraChoice::Legacy, None).await;
    let started = Instant::now();
    let err = c.call_tool_with("hang", (), RequestOptions::default()).await.unwrap_err();
    let rpc = err.rpc_error().cloned().unwrap_or_else(|| panic!("not a JSON-RPC error: {err}"));
    assert!(rpc.message.contains("tools/call") && rpc.message.contains("server"), "{rpc:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "still"})).await), "still");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_servers_are_served_as_one_with_flat_names_and_policy() {
    let s = Sandbox::new("serve-many");
    two_servers(&s, "deny = [\"*__add\"]\nask = [\"b__slow\"]");
    let c = host(&s, &["--config", "conf/mcp.toml"], EraChoice::Legacy, None).await;
    let init = c.initialize().await.unwrap();
    assert_eq!(init.server_info.name, "mcpc");
    let tools = c.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["a__echo", "b__echo", "a__slow"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    // A denied tool is neither listed nor called.
    assert!(!names.iter().any(|n| n.ends_with("__add")), "{names:?}");
    let err = c.call_tool_with("a__add", (), RequestOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("Unknown tool: a__add"), "{err}");
    assert_eq!(text_blocks(&call(&c, "b__echo", json!({"message": "from b"})).await), "from b");
    // `ask`, and this host cannot be asked: refused, saying why.
    let err = c.call_tool_with("b__slow", args(json!({"ms": 1})), RequestOptions::default());
    let err = err.await.unwrap_err().to_string();
    assert!(err.contains("host did not declare elicitation"), "{err}");
    // Prompts are named alike; resources are routed by who listed them.
    let prompts = c.list_prompts().await.unwrap();
    assert!(prompts.iter().all(|p| p.name.starts_with("a__") || p.name.starts_with("b__")));
    let get = c.get_prompt(&prompts[0].name, None).await;
    assert!(get.is_ok(), "{get:?}");
    assert!(!c.list_resources().await.unwrap().is_empty());
    assert!(c.read_resource("test://static/text/1").await.is_ok());
    let err = c.read_resource("test://nobody/lists/this").await.unwrap_err();
    assert!(err.to_string().contains("no served server lists"), "{err}");
    // Completion: a prompt by its flat name, a template by its URI.
    let complete = |reference: Value, name: &str, value: &str| {
        let params = json!({"ref": reference, "argument": {"name": name, "value": value}});
        c.request("completion/complete", Some(params), RequestOptions::default())
    };
    let names = complete(json!({"type": "ref/prompt", "name": "b__greet"}), "name", "").await;
    let names = names.unwrap();
    assert!(!names["completion"]["values"].as_array().unwrap().is_empty(), "{names}");
    let template = json!({"type": "ref/resource", "uri": "test://static/text/{id}"});
    let ids = complete(template, "id", "").await.unwrap();
    assert_eq!(ids["completion"]["values"][0], "1", "{ids}");
    // A URI only a template covers goes to that template's server, whose
    // answer (here: no such resource) comes back as it is.
    let err = c.read_resource("test://static/text/9").await.unwrap_err();
    assert!(!err.to_string().contains("no served server lists"), "{err}");
    assert!(err.rpc_error().is_some(), "{err}");
    c.close().await.unwrap();

    // A host that can ask: the user's answer decides.
    let c = host(
        &s,
        &["--config", "conf/mcp.toml", "--only", "b"],
        EraChoice::Legacy,
        Some(Arc::new(Ada)),
    )
    .await;
    // One server: its names unchanged.
    assert_eq!(text_blocks(&call(&c, "slow", json!({"ms": 1})).await), "done");
    c.close().await.unwrap();
    let c = host(
        &s,
        &["--config", "conf/mcp.toml", "--only", "b"],
        EraChoice::Legacy,
        Some(Arc::new(Declines)),
    )
    .await;
    let err = c.call_tool_with("slow", args(json!({"ms": 1})), RequestOptions::default());
    let err = err.await.unwrap_err().to_string();
    assert!(err.contains("the user refused it"), "{err}");
    c.close().await.unwrap();
    // A stateless-era host is asked in an input round of its call.
    let only_b = ["--config", "conf/mcp.toml", "--only", "b"];
    let c = host(&s, &only_b, EraChoice::Modern, Some(Arc::new(Ada))).await;
    assert_eq!(text_blocks(&call(&c, "slow", json!({"ms": 1})).await), "done");
    c.close().await.unwrap();
    let c = host(&s, &only_b, EraChoice::Modern, Some(Arc::new(Declines))).await;
    let err = c.call_tool_with("slow", args(json!({"ms": 1})), RequestOptions::default());
    let err = err.await.unwrap_err().to_string();
    assert!(err.contains("the user refused it"), "{err}");
    c.close().await.unwrap();
    // Called by its name all the same, a denied tool is refused by the policy.
    let c = host(&s, &["--config", "conf/mcp.toml", "--only", "a"], EraChoice::Legacy, None).await;
    let err = c.call_tool_with("add", args(json!({"a": 1, "b": 2})), RequestOptions::default());
    let err = err.await.unwrap_err().to_string();
    assert!(err.contains("was refused (the approval rule \"*__add\")"), "{err}");
    c.close().await.unwrap();

    // The audit log has the bridge's calls as it has `mcpc call`'s.
    let log = std::fs::read_to_string(s.dir.join("conf/audit.jsonl")).unwrap();
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let has = |server: &str, tool: &str, outcome: &str| {
        lines.iter().any(|l| l["server"] == server && l["tool"] == tool && l["outcome"] == outcome)
    };
    assert!(has("b", "echo", "ok"), "{log}");
    assert!(has("b", "slow", "denied") && has("b", "slow", "ok"), "{log}");
    assert!(has("a", "add", "denied"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_metadata_icons_annotations_and_meta_pass_untouched() {
    let s = Sandbox::new("serve-apps");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps_server.py");
    let spec = format!("python3 {}", script.display());
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let tools = c.list_tools().await.unwrap();
    let show = serde_json::to_value(tools.iter().find(|t| t.name == "show").unwrap()).unwrap();
    assert_eq!(
        show["_meta"],
        json!({"ui": {"resourceUri": "ui://apps/view", "visibility": ["model", "app"]}, "vendor/x": 1})
    );
    assert_eq!(show["icons"][0]["src"], "https://example.com/icon.png");
    assert_eq!(show["annotations"], json!({"readOnlyHint": true, "title": "Show it"}));
    let shown = c.call_tool_with("show", (), RequestOptions::default()).await.unwrap();
    let shown = serde_json::to_value(shown).unwrap();
    assert_eq!(shown["_meta"]["ui"]["resourceUri"], "ui://apps/view");
    let view = serde_json::to_value(c.read_resource("ui://apps/view").await.unwrap()).unwrap();
    assert_eq!(view["contents"][0]["uri"], "ui://apps/view");
    assert_eq!(view["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        view["contents"][0]["_meta"]["ui"]["csp"]["connectDomains"][0],
        "https://api.example.com"
    );
    // The host's `_meta` reaches the server (its progress token mapped to
    // the bridge's own).
    let mut meta = serde_json::Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
    );
    let options = RequestOptions {
        meta: Some(meta),
        on_progress: Some(Arc::new(|_| {})),
        ..Default::default()
    };
    let got = c.call_tool_with("meta", (), options).await.unwrap();
    let got: Value = serde_json::from_str(&text_blocks(&got)).unwrap();
    assert_eq!(got["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    assert!(got.get("progressToken").is_some(), "{got}");
    c.close().await.unwrap();
}

/// The next notification `pick` takes, within 10 s.
async fn next_matching<T>(
    mut next: impl AsyncFnMut() -> Option<ServerNotification>,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> T {
    let wait = async {
        while let Some(n) = next().await {
            if let Some(found) = pick(&n) {
                return found;
            }
        }
        panic!("the notifications ended")
    };
    tokio::time::timeout(Duration::from_secs(10), wait).await.expect("the notification came")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_list_changes_and_resource_updates_reach_a_handshake_era_host() {
    let s = Sandbox::new("serve-notify");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let mut n = c.notifications();
    // The host's level reaches the server.
    c.set_log_level(LoggingLevel::Warning).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = text_blocks(&call(&c, "log", json!({"level": "info", "message": "quiet"})).await);
        if r.contains("below the level") {
            break;
        }
        assert!(Instant::now() < deadline, "the level did not reach the server: {r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    call(&c, "log", json!({"level": "error", "message": "loud"})).await;
    let data = next_matching(
        async || n.recv().await,
        |n| match n {
            ServerNotification::LogMessage(m) => Some(m.data.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(data, json!("loud"));
    call(&c, "change", json!({})).await;
    next_matching(
        async || n.recv().await,
        |n| matches!(n, ServerNotification::ToolListChanged).then_some(()),
    )
    .await;
    c.subscribe_resource("test://static/text/1").await.unwrap();
    let r = text_blocks(&call(&c, "touch", json!({"uri": "test://static/text/1"})).await);
    assert_eq!(r, "touched");
    let uri = next_matching(
        async || n.recv().await,
        |n| match n {
            ServerNotification::ResourceUpdated(p) => Some(p.uri.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(uri, "test://static/text/1");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_gets_the_log_messages_of_its_call_at_its_level() {
    let s = Sandbox::new("serve-modern-logs");
    let spec = server_spec("");
    let modern = server_spec("--era modern");
    for upstream in [&spec, &modern] {
        let mut o = host_options(EraChoice::Modern);
        o.log_level = Some(LoggingLevel::Warning);
        let c = host_with(&s, &["--server", upstream], o).await;
        let mut n = c.notifications();
        call(&c, "log", json!({"level": "info", "message": "quiet"})).await;
        call(&c, "log", json!({"level": "error", "message": "loud"})).await;
        let data = next_matching(
            async || n.recv().await,
            |n| match n {
                ServerNotification::LogMessage(m) => Some(m.data.clone()),
                _ => None,
            },
        )
        .await;
        assert_eq!(data, json!("loud"), "through {upstream}");
        c.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_listens_for_list_changes_and_updates() {
    let s = Sandbox::new("serve-listen");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let uri = "test://static/text/2";
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec![uri.to_owned()]),
        ..Default::default()
    };
    let mut listen = c.listen(filter).await.unwrap();
    assert!(listen.refused().is_empty());
    call(&c, "change", json!({})).await;
    next_matching(
        async || listen.recv().await,
        |n| matches!(n, ServerNotification::ToolListChanged).then_some(()),
    )
    .await;
    // The bridge subscribed upstream for the host (in the background).
    let deadline = Instant::now() + Duration::from_secs(10);
    while text_blocks(&call(&c, "touch", json!({"uri": uri})).await) != "touched" {
        assert!(Instant::now() < deadline, "the bridge did not subscribe upstream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let updated = next_matching(
        async || listen.recv().await,
        |n| match n {
            ServerNotification::ResourceUpdated(p) => Some(p.uri.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(updated, uri);
    c.close().await.unwrap();
}

#[test]
fn an_unknown_server_is_a_usage_error_on_stderr_only() {
    let s = Sandbox::new("serve-usage");
    for args in [&["serve", "--only", "nope"][..], &["--output", "json", "serve", "--only", "nope"]]
    {
        let r = s.run(args);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("no server is named \"nope\" (servers: demo)"), "{r:?}");
        // stdout is the protocol's, even for errors asked as JSON.
        assert!(r.stdout.is_empty(), "{r:?}");
    }
    // No host on stdin: the bridge ends at once, and cleanly.
    let r = s.run(&["serve"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:?}");
}

/// The pids of the processes whose parent is `pid`.
#[cfg(target_os = "linux")]
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        // The parent is the second field after the command's closing parenthesis.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.push(child);
        }
    }
    found
}

#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat[stat.rfind(')').unwrap_or(0) + 1..].trim_start().starts_with('Z'))
}

/// `mcpc serve` started by hand, initialized, with the pid of its server.
#[cfg(target_os = "linux")]
fn started(s: &Sandbox) -> (std::process::Child, u32) {
    let spec = server_spec("");
    let mut cmd = s.command(&["serve", "--server", &spec]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"protocolVersion\""), "{line}");
    let upstream = children(child.id());
    assert_eq!(upstream.len(), 1, "{upstream:?}");
    // Kept for the closing test; dropped for the signal test.
    std::mem::forget(stdout);
    child.stdin = Some(stdin);
    (child, upstream[0])
}

fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcpc serve did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_host_closing_stdin_or_a_signal_ends_the_bridge_and_its_servers() {
    let s = Sandbox::new("serve-end");
    let (mut child, upstream) = started(&s);
    drop(child.stdin.take());
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(upstream) {
        assert!(Instant::now() < deadline, "the upstream server {upstream} outlived the bridge");
        std::thread::sleep(Duration::from_millis(20));
    }

    let (mut child, upstream) = started(&s);
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(143), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(upstream) {
        assert!(Instant::now() < deadline, "the upstream server {upstream} outlived the bridge");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The structured tools of a `search_tools` result, by name.
fn found_names(r: &CallToolResult) -> Vec<String> {
    let found = r.structured_content.as_ref().expect("structured");
    found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["inputSchema"].is_object(), "{t}");
            t["name"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_mode_gives_two_tools_that_find_and_call_through_every_check() {
    let s = Sandbox::new("serve-search");
    two_servers(&s, "deny = [\"*__add\"]");
    let conf = ["--config", "conf/mcp.toml", "--tools", "search"];
    let c = host(&s, &conf, EraChoice::Legacy, None).await;
    let init = c.initialize().await.unwrap();
    let caps = serde_json::to_value(&init.capabilities).unwrap();
    assert_eq!(caps["tools"], json!({"listChanged": false}), "{caps}");
    let tools = c.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search_tools", "call_tool"]);

    // Found by words, with the names the call tool takes; bounded.
    let r = call(&c, "search_tools", json!({"query": "echo a message back"})).await;
    let found = found_names(&r);
    assert!(found.len() <= 5 && found[..2].contains(&"a__echo".to_owned()), "{found:?}");
    assert!(found[..2].contains(&"b__echo".to_owned()), "{found:?}");
    assert!(text_blocks(&r).contains("b__echo"), "{}", text_blocks(&r));
    let r = call(&c, "search_tools", json!({"query": "echo", "limit": 1})).await;
    assert_eq!(found_names(&r).len(), 1);
    // A denied tool is never found, nor called.
    let r = call(&c, "search_tools", json!({"query": "add two numbers sum", "limit": 20})).await;
    assert!(!found_names(&r).iter().any(|n| n.ends_with("__add")), "{:?}", found_names(&r));
    let err =
        c.call_tool_with("call_tool", args(json!({"name": "a__add"})), RequestOptions::default());
    let err = err.await.unwrap_err();
    assert!(err.to_string().contains("Unknown tool: a__add"), "{err}");
    // A bad search is the host's error.
    let err =
        c.call_tool_with("search_tools", args(json!({"limit": 3})), RequestOptions::default());
    assert_eq!(err.await.unwrap_err().rpc_error().map(|e| e.code), Some(-32602));

    // Called as a direct call: the result, progress on the host's token.
    let called = call(&c, "call_tool", json!({"name": "b__echo", "arguments": {"message": "hi"}}));
    assert_eq!(text_blocks(&called.await), "hi");
    let (seen, options) = counting_progress();
    let a = args(json!({"name": "a__slow", "arguments": {"ms": 300, "steps": 3}}));
    let r = c.call_tool_with("call_tool", a, options).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    assert_eq!(*seen.lock().unwrap(), 3);
    c.close().await.unwrap();
    let log = std::fs::read_to_string(s.dir.join("conf/audit.jsonl")).unwrap();
    assert!(log.contains("\"tool\":\"echo\"") && log.contains("\"tool\":\"slow\""), "{log}");

    // One server: its names unchanged; its tool list changes are not the
    // host's (its two tools never change).
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec, "--tools", "search"], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let mut n = c.notifications();
    let r = call(&c, "search_tools", json!({"query": "echo"})).await;
    assert_eq!(found_names(&r)[0], "echo");
    c.subscribe_resource("test://static/text/1").await.unwrap();
    call(&c, "call_tool", json!({"name": "change"})).await;
    call(&c, "call_tool", json!({"name": "touch", "arguments": {"uri": "test://static/text/1"}}))
        .await;
    next_matching(
        async || n.recv().await,
        |n| match n {
            ServerNotification::ToolListChanged => panic!("a tool list change in search mode"),
            ServerNotification::ResourceUpdated(_) => Some(()),
            _ => None,
        },
    )
    .await;
    c.close().await.unwrap();

    // `auto`: as few tools as the testkit's are listed as they are.
    let c = host(&s, &["--server", &spec, "--tools", "auto"], EraChoice::Modern, None).await;
    let tools = c.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    c.close().await.unwrap();
}

/// A configuration of the dual-era testkit twice, as `a` and `b`.
fn two_task_servers(s: &Sandbox) {
    let tk = testkit();
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n\
             [[mcp_client.servers]]\nname = \"a\"\ncommand = \"{tk}\"\nargs = [\"stdio\", \"--era\", \"both\"]\n\
             [[mcp_client.servers]]\nname = \"b\"\ncommand = \"{tk}\"\nargs = [\"stdio\", \"--era\", \"both\"]\n"
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_pass_through_to_a_host_that_declares_the_extension() {
    use mcp_peer::tasks::ToolCallStart;
    use mcp_proto::types::{TASKS_EXTENSION, TaskStatus};
    let s = Sandbox::new("serve-tasks");
    two_task_servers(&s);
    let conf = ["--config", "conf/mcp.toml"];
    let mut o = host_options(EraChoice::Modern);
    o.client = o.client.clone().with_extension(TASKS_EXTENSION, json!({}));
    let c = host_with(&s, &conf, o).await;
    c.list_tools().await.unwrap();
    let caps = serde_json::to_value(c.server_capabilities().unwrap()).unwrap();
    assert!(caps["extensions"][TASKS_EXTENSION].is_object(), "{caps}");

    // A task of `a`: its id prefixed, followed by the host through the bridge.
    let started = c.call_tool_start("a__slow", json!({"ms": 300}), RequestOptions::default());
    let ToolCallStart::Task(task) = started.await.unwrap() else { panic!("no task") };
    assert!(task.task_id.starts_with("a__"), "{}", task.task_id);
    let deadline = Instant::now() + Duration::from_secs(20);
    let done = loop {
        let now = c.task_status(&task.task_id).await.unwrap();
        assert_eq!(now.task_id, task.task_id);
        if now.status == TaskStatus::Completed {
            break now;
        }
        assert!(Instant::now() < deadline, "{now:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let result = serde_json::to_value(done.result.unwrap()).unwrap();
    assert_eq!(result["content"][0]["text"], "done", "{result}");

    // A task of `b` cancelled there.
    let started = c.call_tool_start("b__hang", json!({}), RequestOptions::default());
    let ToolCallStart::Task(task) = started.await.unwrap() else { panic!("no task") };
    assert!(task.task_id.starts_with("b__"), "{}", task.task_id);
    // Answers go to it (acknowledged: it asked for none), then it is stopped.
    c.task_update(&task.task_id, Map::new()).await.unwrap();
    c.task_cancel(&task.task_id).await.unwrap();
    let now = c.task_status(&task.task_id).await.unwrap();
    assert_eq!(now.status, TaskStatus::Cancelled, "{now:?}");
    // An id no served server made.
    let err = c.task_status("c__1").await.unwrap_err();
    assert_eq!(err.rpc_error().map(|e| e.code), Some(-32602), "{err}");
    // Done at once: the result, no task.
    let started =
        c.call_tool_start("a__echo", json!({"message": "now"}), RequestOptions::default());
    let ToolCallStart::Complete(r) = started.await.unwrap() else { panic!("a task") };
    assert_eq!(text_blocks(&r), "now");
    c.close().await.unwrap();

    // A host without the extension gets the call followed to its result,
    // and no task method.
    let c = host(&s, &conf, EraChoice::Modern, None).await;
    assert_eq!(text_blocks(&call(&c, "a__slow", json!({"ms": 200})).await), "done");
    let err = c.request("tasks/get", Some(json!({"taskId": "a__1"})), RequestOptions::default());
    let err = err.await.unwrap_err();
    // -32021 naming the extension.
    assert!(format!("{err:?}").contains("MissingClientCapability"), "{err:?}");
    c.close().await.unwrap();
    // A handshake-era host: followed too, and the 2025-11-25 task methods
    // are refused, saying why.
    let c = host(&s, &conf, EraChoice::Legacy, None).await;
    let init = c.initialize().await.unwrap();
    let caps = serde_json::to_value(&init.capabilities).unwrap();
    assert!(caps.get("extensions").is_none() && caps.get("tasks").is_none(), "{caps}");
    assert_eq!(text_blocks(&call(&c, "b__slow", json!({"ms": 200})).await), "done");
    let err = c.request("tasks/list", None, RequestOptions::default()).await.unwrap_err();
    assert_eq!(err.rpc_error().map(|e| e.code), Some(-32601), "{err}");
    assert!(err.to_string().contains("followed to its result"), "{err}");
    c.close().await.unwrap();
}

/// Lines of a child's output, read as they come.
fn line_reader(from: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The first line of `lines` after one that contains `after` (`after`
/// empty: the first line that `pick` takes), within 30 s.
fn line_after(
    lines: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    mut pick: impl FnMut(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).unwrap_or_else(|e| panic!("{e}; so far: {seen:?}"));
        seen.push(line.clone());
        if pick(&line) {
            return line;
        }
    }
}

/// The login `mcpc serve` asks for on stderr, under the same words as
/// `mcpc login`'s, completed with the test as the browser.
fn log_in_as_the_browser(
    w: &crate::login::World,
    stderr: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
) {
    line_after(stderr, seen, |l| l.contains("\"remote\" needs an OAuth login"));
    line_after(stderr, seen, |l| l.contains("Open this URL to log in:"));
    let url = line_after(stderr, seen, |_| true).trim().to_owned();
    assert!(url.starts_with(&format!("{}/authorize?", w.auth.base())), "{url}");
    let (_, location, _) = w.browse(&url);
    let (status, _, page) = w.browse(&location.expect("a redirect to the loopback listener"));
    assert_eq!(status.as_u16(), 200);
    assert!(page.contains("Authorization complete"), "{page}");
}

#[test]
fn a_server_that_answers_401_is_logged_in_in_the_browser_then_served() {
    let w = crate::login::World::new("serve");
    let mut child = w.mcpc(&["serve"]).stdin(Stdio::piped()).spawn().expect("mcpc serve starts");
    let stderr = line_reader(child.stderr.take().unwrap());
    let stdout = line_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();

    log_in_as_the_browser(&w, &stderr, &mut seen);
    line_after(&stderr, &mut seen, |l| l.contains("logged in to remote"));

    // Then the host is served, with the token kept for later runs.
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = Vec::new();
    let listed = line_after(&stdout, &mut out, |l| {
        // stdout is the host's: JSON-RPC only.
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        v["id"] == 2
    });
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let tools = listed["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{listed}");
    drop(stdin);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}; stderr: {seen:?}");
    assert_eq!(w.auth.tokens_issued(), 1);
    assert_eq!(w.token_files().len(), 1);
    while let Ok(line) = stderr.recv_timeout(Duration::from_secs(5)) {
        seen.push(line);
    }
    let all = seen.join("\n") + &out.join("\n");
    assert!(!all.contains(crate::login::TOKEN), "{all}");
}

/// Two requests that meet a 401 in the middle of the session (the token
/// revoked, as it were): one login in the browser, then both are sent
/// again and answered.
#[test]
fn a_resource_read_and_a_prompt_get_behind_a_401_log_in_once_and_are_answered() {
    let w = crate::login::World::new("serve-mid-401");
    // Connected without a token while the server does not ask for one.
    w.http().waive_auth(true);
    let mut child = w.mcpc(&["serve"]).stdin(Stdio::piped()).spawn().expect("mcpc serve starts");
    let stderr = line_reader(child.stderr.take().unwrap());
    let stdout = line_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let mut out = Vec::new();
    let mut send = move |messages: &[Value]| {
        for message in messages {
            writeln!(stdin, "{message}").unwrap();
        }
        stdin.flush().unwrap();
    };
    let answer = |out: &mut Vec<String>, wanted: fn(u64) -> bool| -> Value {
        let line = line_after(&stdout, out, |l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            v["id"].as_u64().is_some_and(wanted)
        });
        serde_json::from_str(&line).unwrap()
    };
    send(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
    ]);
    let listed = answer(&mut out, |id| id == 2);
    assert!(listed["result"]["prompts"].as_array().is_some_and(|p| !p.is_empty()), "{listed}");
    assert_eq!(w.auth.tokens_issued(), 0);

    // Now the server wants a token: both requests meet a 401.
    w.http().waive_auth(false);
    send(&[
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
            "params": {"uri": "test://static/text/1"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
            "params": {"name": "greet", "arguments": {"name": "Ada"}}}),
    ]);
    log_in_as_the_browser(&w, &stderr, &mut seen);

    // Answered in either order.
    let (mut read, mut got) = (Value::Null, Value::Null);
    while read.is_null() || got.is_null() {
        let v = answer(&mut out, |id| id == 3 || id == 4);
        if v["id"] == 3 { read = v } else { got = v }
    }
    let contents = read["result"]["contents"].as_array().unwrap_or_else(|| panic!("{read}"));
    assert_eq!(contents[0]["uri"], "test://static/text/1", "{read}");
    let text = &got["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Hello, Ada!", "{got}");
    drop(send);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}; stderr: {seen:?}");
    // One login for both.
    assert_eq!(w.auth.tokens_issued(), 1);
    while let Ok(line) = stderr.recv_timeout(Duration::from_secs(5)) {
        seen.push(line);
    }
    let logins = seen.iter().filter(|l| l.contains("needs an OAuth login")).count();
    assert_eq!(logins, 1, "{seen:?}");
    let all = seen.join("\n") + &out.join("\n");
    assert!(!all.contains(crate::login::TOKEN), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_shaped_for_a_provider_and_the_arguments_mapped_back() {
    let s = Sandbox::new("serve-shaped");
    two_servers(&s, "");
    let conf =
        ["--config", "conf/mcp.toml", "--only", "a", "--tools", "search", "--schema-for", "strict"];
    let c = host(&s, &conf, EraChoice::Legacy, None).await;
    let r = call(&c, "search_tools", json!({"query": "slow progress steps", "limit": 20})).await;
    let found = r.structured_content.unwrap();
    let slow = found["tools"].as_array().unwrap().iter().find(|t| t["name"] == "slow");
    let schema = &slow.expect("slow is found")["inputSchema"];
    // Strict: every property required, none other allowed, the optional
    // ones nullable.
    assert_eq!(schema["additionalProperties"], false, "{schema}");
    let required = schema["required"].as_array().unwrap();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(required.len(), properties.len(), "{schema}");
    assert!(properties.contains_key("steps"), "{schema}");
    // The model's `null` for "not given" is taken out before the call.
    let nulls: Map<String, Value> = properties.keys().map(|k| (k.clone(), Value::Null)).collect();
    let mut arguments = nulls;
    arguments.insert("ms".into(), json!(1));
    let r = call(&c, "call_tool", json!({"name": "slow", "arguments": arguments})).await;
    assert_eq!(text_blocks(&r), "done");
    c.close().await.unwrap();
    let log = std::fs::read_to_string(s.dir.join("conf/audit.jsonl")).unwrap();
    let line: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!((&line["tool"], &line["arguments"]), (&json!("slow"), &json!({"ms": 1})), "{log}");
}

/// A stateless-era host's lists and reads carry the caching hints its era
/// requires (the official SDK clients reject a result without them), also
/// from a handshake-era upstream, which gives none: immediately stale and
/// private. A stateless-era upstream's own hints pass as they are, but a
/// tool list is the bridge's own (policy and pins may change it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_gets_caching_hints_whatever_the_upstream_era() {
    let s = Sandbox::new("serve-cache-hints");
    let hints = |r: &Value| (r["ttlMs"].clone(), r["cacheScope"].clone());
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let read = json!({"uri": "test://static/text/1"});
    for (method, params) in [
        ("tools/list", None),
        ("resources/list", None),
        ("resources/templates/list", None),
        ("prompts/list", None),
        ("resources/read", Some(read.clone())),
    ] {
        let r = c.request(method, params, RequestOptions::default()).await.unwrap();
        assert_eq!(hints(&r), (json!(0), json!("private")), "{method}: {r}");
    }
    // Not on what is not cacheable, nor for a handshake-era host.
    let simple = Some(json!({"name": "simple"}));
    let r = c.request("prompts/get", simple, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (Value::Null, Value::Null), "{r}");
    c.close().await.unwrap();
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let r = c.request("resources/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (Value::Null, Value::Null), "{r}");
    c.close().await.unwrap();

    let modern = server_spec("--era modern --ttl-ms=5000");
    let c = host(&s, &["--server", &modern], EraChoice::Modern, None).await;
    let r = c.request("resources/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(5000), json!("public")), "{r}");
    let r = c.request("resources/read", Some(read), RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(5000), json!("private")), "{r}");
    let r = c.request("tools/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(0), json!("private")), "{r}");
    c.close().await.unwrap();
}

/// What a server asks while it reads a resource or gets a prompt reaches
/// the host too: a stateless-era host in an input round of that request
/// (its retry takes the parked request up), a handshake-era host as a
/// request of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asks_the_host_during_resources_read_and_prompts_get() {
    let s = Sandbox::new("serve-ask-read");
    let modern = server_spec("--era modern");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let c = host(&s, &["--server", &modern], era, Some(Arc::new(Ada))).await;
        let read = json!({"uri": "test://ask/elicit"});
        let r = c.request("resources/read", Some(read), RequestOptions::default()).await.unwrap();
        let text = r["contents"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Ada") && text.contains("accept"), "{era:?}: {r}");
        let get = json!({"name": "ask"});
        let r = c.request("prompts/get", Some(get), RequestOptions::default()).await.unwrap();
        let text = r["messages"][0]["content"]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Ada") && text.contains("accept"), "{era:?}: {r}");
        c.close().await.unwrap();
    }
}
