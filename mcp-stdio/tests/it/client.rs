//! The stdio client against a real server process: the project's testkit.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client_stdio::{EnvMode, Error, RestartPolicy, ServerCommand, StdioClient, StdioOptions};
use mcp_proto::client::{BoxFuture, ElicitationHandler, Handlers, RequestOptions, StaticRoots};
use mcp_proto::types::{CallToolResult, ElicitRequestParams, ElicitResult, JsonObject, Root};
use mcp_proto::{ErrorObject, ProtocolVersion};
use mcp_test_support::text_blocks;
use serde_json::{Value, json};

fn testkit(args: &[&str]) -> ServerCommand {
    ServerCommand::new(mcp_testkit::binary_path().to_string_lossy().into_owned())
        .arg("stdio")
        .args(args.iter().copied())
}

fn options() -> StdioOptions {
    let mut o = StdioOptions::new("testkit");
    // The testkit is an absolute path; skip the login-shell probe.
    o.discover_path = false;
    o
}

/// The options with stdout read by the runtime's task (`false`) or on a
/// thread of its own (`true`, [`StdioOptions::reader_thread`]).
fn options_with(reader_thread: bool) -> StdioOptions {
    let mut o = options();
    o.reader_thread = reader_thread;
    o
}

/// Both ways of reading the server's stdout, for the tests that run in each.
const READERS: [bool; 2] = [false, true];

async fn start(args: &[&str]) -> StdioClient {
    start_with(args, false).await
}

async fn start_with(args: &[&str], reader_thread: bool) -> StdioClient {
    mcp_client_stdio::spawn(testkit(args), options_with(reader_thread))
        .await
        .expect("the testkit starts")
}

fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

async fn call(c: &StdioClient, tool: &str, a: Value) -> CallToolResult {
    c.call_tool_with(tool, args(a), RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[tokio::test]
async fn handshake_paginated_tools_and_calls() {
    for thread in READERS {
        handshake_paginated_tools_and_calls_with(thread).await;
    }
}

async fn handshake_paginated_tools_and_calls_with(thread: bool) {
    let c = start_with(&["--page-size", "2"], thread).await;
    let init = c.initialize().await.unwrap();
    assert_eq!(init.server_info.name, "mcp-testkit");
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::LATEST_LEGACY));
    let tools = c.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in
        ["echo", "add", "slow", "hang", "crash", "noisy", "ask", "change", "cancelled_log"]
    {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    assert!(tools.len() > 2, "all pages are followed");
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "hi there"})).await), "hi there");
    let sum = call(&c, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(
        sum.structured_content,
        Some(json!({"sum": 42.0})).or(sum.structured_content.clone())
    );
    assert_eq!(sum.structured_content.as_ref().and_then(|s| s["sum"].as_f64()), Some(42.0));
    let failed = call(&c, "fail", json!({"message": "nope"})).await;
    assert_eq!(failed.is_error, Some(true));
    let big = call(&c, "big", json!({"bytes": 200_000})).await;
    assert_eq!(text_blocks(&big).len(), 200_000);
    c.ping().await.unwrap();
    c.close().await.unwrap();
    c.close().await.unwrap();
    assert!(matches!(c.ping().await, Err(Error::Closed { .. })));
}

#[tokio::test]
async fn calls_in_a_row_are_answered_whether_the_reader_polls_before_parking_or_not() {
    for spin in [Duration::ZERO, mcp_client_stdio::DEFAULT_REPLY_SPIN, Duration::from_millis(5)] {
        let mut o = options();
        o.reply_spin = spin;
        let c = mcp_client_stdio::spawn(testkit(&[]), o).await.expect("the testkit starts");
        for i in 0..200 {
            let message = format!("call {i}");
            let echoed = call(&c, "echo", json!({ "message": message })).await;
            assert_eq!(text_blocks(&echoed), message, "reply_spin {spin:?}");
        }
        c.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_notification_before_the_initialize_reply_is_not_taken_as_the_reply() {
    let c = start(&["--send-list-changed-before-init"]).await;
    assert_eq!(c.initialize().await.unwrap().server_info.name, "mcp-testkit");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_does_not_block_a_ping() {
    let c = start(&[]).await;
    c.initialize().await.unwrap();
    let c2 = c.clone();
    let slow = tokio::spawn(async move {
        c2.call_tool_with("slow", args(json!({"ms": 1500})), RequestOptions::default()).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    c.ping().await.unwrap();
    assert!(t.elapsed() < Duration::from_millis(500), "ping took {:?}", t.elapsed());
    assert_eq!(text_blocks(&slow.await.unwrap().unwrap()), "done");
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_requests_in_flight_on_one_pipe() {
    for thread in READERS {
        many_requests_in_flight_on_one_pipe_with(thread).await;
    }
}

/// The same on a current-thread runtime: with a reader thread, each
/// answer wakes its task from that thread.
#[tokio::test]
async fn many_requests_in_flight_on_one_pipe_on_one_runtime_thread() {
    for thread in READERS {
        many_requests_in_flight_on_one_pipe_with(thread).await;
    }
}

async fn many_requests_in_flight_on_one_pipe_with(thread: bool) {
    let c = start_with(&[], thread).await;
    c.initialize().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..200 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            let r = c
                .call_tool_with(
                    "echo",
                    args(json!({"message": format!("m{i}")})),
                    RequestOptions::default(),
                )
                .await;
            (i, r)
        }));
    }
    for t in tasks {
        let (i, r) = t.await.unwrap();
        assert_eq!(text_blocks(&r.unwrap()), format!("m{i}"), "reader thread {thread}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_crash_fails_pending_calls_at_once_with_status_and_stderr() {
    for thread in READERS {
        a_crash_fails_pending_calls_with(thread).await;
    }
}

async fn a_crash_fails_pending_calls_with(thread: bool) {
    let c = start_with(&[], thread).await;
    c.initialize().await.unwrap();
    let c2 = c.clone();
    let pending =
        tokio::spawn(async move { c2.call_tool_with("hang", (), RequestOptions::default()).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let t = Instant::now();
    let err = c
        .call_tool_with(
            "crash",
            args(json!({"code": 7, "stderr": "fatal: the disk is on fire"})),
            RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(1), "took {:?}", t.elapsed());
    match &err {
        Error::ServerExited { server, method, exit } => {
            assert_eq!(server, "testkit");
            assert_eq!(method, "tools/call");
            assert_eq!(exit.status.and_then(|s| s.code()), Some(7));
            assert!(exit.stderr_tail.contains("the disk is on fire"), "{exit:?}");
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("testkit") && text.contains("the disk is on fire"), "{text}");
    let other = pending.await.unwrap().unwrap_err();
    assert!(matches!(other, Error::ServerExited { .. }), "{other:?}");
    // Later calls fail clearly (no restart policy).
    assert!(matches!(c.ping().await, Err(Error::ServerExited { .. })));
}

#[tokio::test]
async fn a_hang_times_out_and_the_server_sees_the_cancellation() {
    let c = start(&[]).await;
    c.initialize().await.unwrap();
    let t = Instant::now();
    let err = c
        .call_tool_with("hang", (), RequestOptions::with_timeout(Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert!(t.elapsed() >= Duration::from_millis(300) && t.elapsed() < Duration::from_secs(2));
    match &err {
        Error::Timeout { server, method, .. } => {
            assert_eq!((server.as_str(), method.as_str()), ("testkit", "tools/call"))
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("tools/call timed out"));
    // The cancellation reaches the server before the next request.
    let log: Value =
        serde_json::from_str(&text_blocks(&call(&c, "cancelled_log", json!({})).await)).unwrap();
    assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");

    // A caller that stops waiting cancels too.
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        c.call_tool_with("hang", (), RequestOptions::default()),
    )
    .await;
    assert!(dropped.is_err());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let log: Value =
        serde_json::from_str(&text_blocks(&call(&c, "cancelled_log", json!({})).await)).unwrap();
    assert_eq!(log.as_array().map(Vec::len), Some(2), "{log}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn garbage_and_over_long_lines_are_survived() {
    for thread in READERS {
        garbage_and_over_long_lines_are_survived_with(thread).await;
    }
}

async fn garbage_and_over_long_lines_are_survived_with(thread: bool) {
    let mut o = options_with(thread);
    o.max_line_length = 4096;
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    c.initialize().await.unwrap();
    let r = call(&c, "noisy", json!({"lines": 5, "long_line_bytes": 100_000})).await;
    assert_eq!(r.is_error, None);
    c.ping().await.unwrap();
    assert!(c.transport().dropped_lines() > 0, "reader thread {thread}: the long line is counted");
    assert!(
        c.transport().stderr_tail().lines().count() >= 5,
        "stderr is captured: {:?}",
        c.transport().stderr_tail()
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn progress_reaches_the_callback() {
    let c = start(&[]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let opts = RequestOptions {
        on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push((p.progress, p.total)))),
        reset_timeout_on_progress: true,
        timeout: Some(Duration::from_millis(400)),
        ..Default::default()
    };
    // 900 ms in all, but progress every 300 ms keeps the 400 ms timeout from firing.
    let r = c.call_tool_with("slow", args(json!({"ms": 900, "steps": 3})), opts).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[2].1, Some(3.0));
    c.close().await.unwrap();
}

#[tokio::test]
async fn server_requests_mid_call_are_answered() {
    for thread in READERS {
        server_requests_mid_call_are_answered_with(thread).await;
    }
}

async fn server_requests_mid_call_are_answered_with(thread: bool) {
    let mut o = options_with(thread);
    o.handlers = Handlers {
        roots: Some(Arc::new(StaticRoots(vec![Root {
            uri: "file:///work".into(),
            ..Default::default()
        }]))),
        elicitation: Some(Arc::new(Ada)),
        ..Default::default()
    };
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    let answer = |r: CallToolResult| -> Value { serde_json::from_str(&text_blocks(&r)).unwrap() };
    assert_eq!(answer(call(&c, "ask", json!({"what": "ping"})).await), json!({"result": {}}));
    assert_eq!(
        answer(call(&c, "ask", json!({"what": "roots"})).await),
        json!({"result": {"roots": [{"uri": "file:///work"}]}})
    );
    let elicited = answer(call(&c, "ask", json!({"what": "elicit"})).await);
    assert_eq!(elicited["result"]["action"], "accept");
    assert_eq!(elicited["result"]["content"]["name"], "Ada");
    // No sampling handler: the client answers method-not-found.
    let sampled = answer(call(&c, "ask", json!({"what": "sample"})).await);
    assert_eq!(sampled["error"]["code"], -32601);
    c.close().await.unwrap();
}

#[tokio::test]
async fn list_changed_invalidates_the_tool_cache() {
    for thread in READERS {
        list_changed_invalidates_the_tool_cache_with(thread).await;
    }
}

async fn list_changed_invalidates_the_tool_cache_with(thread: bool) {
    let events = Arc::new(Mutex::new(0));
    let events2 = events.clone();
    let mut o = options();
    o.on_event = Some(Arc::new(move |_| *events2.lock().unwrap() += 1));
    o.reader_thread = thread;
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    let before = c.list_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "extra"));
    assert!(
        Arc::ptr_eq(&before, &c.list_tools().await.unwrap()),
        "the second list comes from the cache"
    );
    call(&c, "change", json!({})).await;
    let after = c.list_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "extra"), "re-listed after list_changed");
    assert_eq!(*events.lock().unwrap(), 1);
    c.close().await.unwrap();
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still counts, so look at /proc too.
    let exists = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false);
    exists && !zombie
}

async fn gone_within(pid: i32, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn close_leaves_no_grandchild_behind() {
    for thread in READERS {
        close_leaves_no_grandchild_behind_with(thread).await;
    }
}

async fn close_leaves_no_grandchild_behind_with(thread: bool) {
    let c = start_with(&[], thread).await;
    let child: i32 = text_blocks(&call(&c, "spawn_child", json!({})).await).trim().parse().unwrap();
    let server = c.transport().pid().unwrap() as i32;
    assert!(alive(child) && alive(server));
    c.close().await.unwrap();
    assert!(gone_within(server, Duration::from_secs(3)).await, "server {server} still runs");
    assert!(gone_within(child, Duration::from_secs(3)).await, "grandchild {child} still runs");
}

#[tokio::test]
async fn dropping_the_client_kills_the_group() {
    for thread in READERS {
        dropping_the_client_kills_the_group_with(thread).await;
    }
}

async fn dropping_the_client_kills_the_group_with(thread: bool) {
    let c = start_with(&[], thread).await;
    let child: i32 = text_blocks(&call(&c, "spawn_child", json!({})).await).trim().parse().unwrap();
    let server = c.transport().pid().unwrap() as i32;
    drop(c);
    assert!(gone_within(server, Duration::from_secs(3)).await, "server {server} still runs");
    assert!(gone_within(child, Duration::from_secs(3)).await, "grandchild {child} still runs");
}

#[tokio::test]
async fn clean_environment_keeps_only_the_allowlist_and_the_configured_env() {
    let mut o = options();
    o.env = EnvMode::Clean;
    let cmd = testkit(&[]).env("MCP_TEST_CONFIGURED", "yes");
    let c = mcp_client_stdio::spawn(cmd, o).await.unwrap();
    let env = |name: &'static str| {
        let c = c.clone();
        async move {
            serde_json::from_str::<Value>(&text_blocks(
                &call(&c, "env", json!({"name": name})).await,
            ))
            .unwrap()
        }
    };
    assert_eq!(env("MCP_TEST_CONFIGURED").await, json!("yes"));
    assert_eq!(
        env("CARGO_PKG_NAME").await,
        Value::Null,
        "the host's other variables are not passed"
    );
    assert!(env("PATH").await.is_string());
    c.close().await.unwrap();

    let c = mcp_client_stdio::spawn(testkit(&[]), options()).await.unwrap();
    let inherited: Value = serde_json::from_str(&text_blocks(
        &call(&c, "env", json!({"name": "CARGO_PKG_NAME"})).await,
    ))
    .unwrap();
    assert_eq!(
        inherited,
        json!(env!("CARGO_PKG_NAME")),
        "inherit mode passes the host's environment"
    );
    c.close().await.unwrap();
}

/// The PATH a server sees: the host's own when nothing changes it (the
/// child inherits it, none is set), the configured one, and the host's in
/// a clean environment too.
#[tokio::test]
async fn the_server_gets_its_path_set_or_inherited() {
    let host = std::env::var("PATH").unwrap_or_default();
    let path_of = |c: StdioClient| async move {
        let seen = call(&c, "env", json!({"name": "PATH"})).await;
        c.close().await.unwrap();
        serde_json::from_str::<Value>(&text_blocks(&seen)).unwrap()
    };
    let inherited = mcp_client_stdio::spawn(testkit(&[]), options()).await.unwrap();
    assert_eq!(path_of(inherited).await, json!(host), "inherited");
    let cmd = testkit(&[]).env("PATH", "/configured/bin:/usr/bin");
    let configured = mcp_client_stdio::spawn(cmd, options()).await.unwrap();
    assert_eq!(path_of(configured).await, json!("/configured/bin:/usr/bin"), "configured");
    let mut o = options();
    o.env = EnvMode::Clean;
    let clean = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    assert_eq!(path_of(clean).await, json!(host), "clean");
}

#[tokio::test]
async fn a_missing_command_says_what_to_install() {
    let mut o = options();
    o.host_name = "Acme IDE".into();
    let cmd = ServerCommand::new("npx").env("PATH", "/nonexistent-dir");
    let err = mcp_client_stdio::spawn(cmd, o).await.unwrap_err();
    assert!(matches!(err, Error::CommandNotFound { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("Node.js") && text.contains("Acme IDE"), "{text}");
}

#[tokio::test]
async fn an_unsupported_version_fails_with_both_sides_named() {
    let c = start(&["--version-override", "1999-01-01"]).await;
    let err = c.initialize().await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("1999-01-01") && text.contains("2025-11-25"), "{text}");
    // The failure is remembered.
    assert!(matches!(c.list_tools().await, Err(Error::Protocol { .. })));
    c.close().await.unwrap();
}

#[tokio::test]
async fn older_protocol_versions_are_negotiated() {
    let mut o = options();
    o.protocol_version = ProtocolVersion::V2025_03_26;
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    c.initialize().await.unwrap();
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2025_03_26));
    c.close().await.unwrap();
}

#[tokio::test]
async fn restart_policy_restarts_and_gives_up_on_a_crash_loop() {
    for thread in READERS {
        restart_policy_restarts_and_gives_up_with(thread).await;
    }
}

async fn restart_policy_restarts_and_gives_up_with(thread: bool) {
    let mut o = options_with(thread);
    o.restart = Some(RestartPolicy { max_restarts: 2, window: Duration::from_secs(60) });
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    let first = c.transport().pid().unwrap();
    for round in 0..2 {
        assert!(c.call_tool_with("crash", (), RequestOptions::default()).await.is_err());
        // The next call starts a fresh child and handshake.
        assert_eq!(
            text_blocks(&call(&c, "echo", json!({"message": "back"})).await),
            "back",
            "round {round}"
        );
        assert_ne!(c.transport().pid().unwrap(), first);
    }
    assert!(c.call_tool_with("crash", (), RequestOptions::default()).await.is_err());
    let err = c.ping().await.unwrap_err();
    assert!(matches!(err, Error::RestartLimit { restarts: 2, .. }), "{err:?}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn an_exit_after_the_answer_is_reported_on_the_next_call() {
    // The handshake era: `--exit-after` counts initialize and one ping.
    let args = ["--exit-after", "2", "--stderr-banner", "hello from testkit"];
    let c = mcp_client_stdio::spawn(testkit(&args), legacy()).await.expect("the testkit starts");
    c.initialize().await.unwrap();
    c.ping().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let err = c.ping().await.unwrap_err();
    match err {
        Error::ServerExited { exit, .. } => {
            assert_eq!(exit.status.and_then(|s| s.code()), Some(0));
            assert!(exit.stderr_tail.contains("hello from testkit"));
        }
        other => panic!("{other:?}"),
    }
}

/// Options pinned to the handshake era, for scripted servers that expect
/// `initialize` first.
fn legacy() -> StdioOptions {
    let mut o = options();
    o.era = mcp_peer::EraChoice::Legacy;
    o
}

/// A server that answers `initialize` and then never reads its stdin again.
fn deaf_server() -> ServerCommand {
    let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}"#;
    ServerCommand::new("sh")
        .arg("-c")
        .arg(format!("read line; printf '%s\\n' '{reply}'; exec sleep 60"))
}

#[tokio::test]
async fn a_write_the_server_never_reads_ends_at_the_deadline_and_the_connection() {
    let mut o = legacy();
    o.shutdown_grace = Duration::from_millis(100);
    let client = mcp_client_stdio::spawn(deaf_server(), o).await.unwrap();
    client.initialize().await.unwrap();
    // About 1 MB of arguments: far more than a pipe holds.
    let big = "x".repeat(1 << 20);
    let quick = RequestOptions::with_timeout(Duration::from_millis(500));
    let started = std::time::Instant::now();
    let call = client.call_tool_with("echo", json!({ "message": big }), quick);
    let err =
        tokio::time::timeout(Duration::from_secs(10), call).await.expect("no hang").unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Half a line is in the pipe: the connection was ended, and the next
    // call says the server is gone instead of sending after the half line.
    let next = tokio::time::timeout(Duration::from_secs(10), client.ping()).await.expect("no hang");
    assert!(matches!(next, Err(Error::ServerExited { .. })), "{next:?}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_server_whose_grandchild_keeps_stdout_open_is_seen_to_exit() {
    // The server reads the request, leaves a grandchild holding its stdout
    // (in its process group, and, where `setsid` exists, outside it), and
    // exits 3 without answering.
    let scripts = ["read line; sleep 30 & exit 3", "read line; setsid sleep 30 & exit 3"];
    for (script, thread) in scripts.into_iter().flat_map(|s| READERS.map(|t| (s, t))) {
        if script.contains("setsid") && !std::path::Path::new("/usr/bin/setsid").exists() {
            continue;
        }
        let mut o = options_with(thread);
        o.request_timeout = Duration::from_secs(20);
        let command = ServerCommand::new("sh").arg("-c").arg(script);
        let client = mcp_client_stdio::spawn(command, o).await.unwrap();
        let started = std::time::Instant::now();
        let err = tokio::time::timeout(Duration::from_secs(15), client.initialize())
            .await
            .expect("no hang")
            .unwrap_err();
        match &err {
            Error::ServerExited { exit, .. } => {
                assert_eq!(
                    exit.status.and_then(|s| s.code()),
                    Some(3),
                    "{script} (reader thread {thread}): {err}"
                )
            }
            other => panic!("{script} (reader thread {thread}): {other:?}"),
        }
        // Seen from the exit, not from the request's 20 s timeout.
        assert!(started.elapsed() < Duration::from_secs(5), "{script}: {:?}", started.elapsed());
        client.close().await.unwrap();
    }
}

/// Once the client gave up on a stdout that a process outside the server's
/// group keeps open, nothing that process writes reaches the client: the
/// reader stops reading (a reader thread at the first line after the give
/// up), so the process's writes then fail, which it reports by leaving a
/// file. A line handed to the client would be counted as dropped (it is
/// not JSON-RPC).
#[tokio::test]
async fn nothing_written_after_the_give_up_on_a_held_stdout_reaches_the_client() {
    if !std::path::Path::new("/usr/bin/setsid").exists() {
        return;
    }
    for thread in READERS {
        let dir =
            std::env::temp_dir().join(format!("mcp-stdio-held-{}-{thread}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (go, done) = (dir.join("go"), dir.join("done"));
        // The holder waits for `go`, then writes a line every 50 ms until
        // a write fails (no reader left), then creates `done`.
        let holder = r#"trap "" PIPE; while [ ! -e "$1" ]; do sleep 0.05; done; while printf "not json\n" 2>/dev/null; do sleep 0.05; done; : > "$2""#;
        let script = format!("read line; setsid sh -c '{holder}' sh \"$1\" \"$2\" & exit 3");
        let command = ServerCommand::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(go.to_string_lossy().into_owned())
            .arg(done.to_string_lossy().into_owned());
        let mut o = options_with(thread);
        o.request_timeout = Duration::from_secs(20);
        let client = mcp_client_stdio::spawn(command, o).await.unwrap();
        let err = tokio::time::timeout(Duration::from_secs(15), client.initialize())
            .await
            .expect("no hang")
            .unwrap_err();
        assert!(matches!(err, Error::ServerExited { .. }), "reader thread {thread}: {err:?}");
        std::fs::write(&go, b"").unwrap();
        let waited = Instant::now();
        while !done.exists() {
            assert!(
                waited.elapsed() < Duration::from_secs(30),
                "reader thread {thread}: the holder's writes still succeed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(client.transport().dropped_lines(), 0, "reader thread {thread}");
        client.close().await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn a_notification_the_server_never_reads_ends_at_the_request_timeout() {
    let mut o = legacy();
    o.request_timeout = Duration::from_millis(500);
    o.shutdown_grace = Duration::from_millis(100);
    let client = mcp_client_stdio::spawn(deaf_server(), o).await.unwrap();
    client.initialize().await.unwrap();
    // No request's deadline covers a notification; the flush has its own.
    let big = "x".repeat(1 << 20);
    let sent = client.notify("notifications/x-big", Some(json!({ "data": big })));
    let err =
        tokio::time::timeout(Duration::from_secs(10), sent).await.expect("no hang").unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let next = tokio::time::timeout(Duration::from_secs(10), client.ping()).await.expect("no hang");
    assert!(matches!(next, Err(Error::ServerExited { .. })), "{next:?}");
    client.close().await.unwrap();
}

/// A user who gives the name "Ada" to every form.
struct Ada;

impl ElicitationHandler for Ada {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::accept([("name", "Ada")])) })
    }
}

#[tokio::test]
async fn a_stateless_server_process_is_probed_and_spoken_to_in_its_era() {
    let mut o = options();
    o.handlers.elicitation = Some(Arc::new(Ada));
    let c = mcp_client_stdio::spawn(testkit(&["--era", "modern"]), o).await.unwrap();
    let tools = c.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ask"));
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2026_07_28));
    // One input round through the elicitation handler.
    let r = call(&c, "ask", json!({"what": "elicit"})).await;
    assert!(text_blocks(&r).contains("Ada"), "{}", text_blocks(&r));
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_server_silent_on_the_probe_is_spoken_to_with_initialize_after_the_probe_timeout() {
    let mut o = options();
    o.probe_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let c = mcp_client_stdio::spawn(testkit(&["--silent-discover"]), o).await.unwrap();
    c.ping().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::LATEST_LEGACY));
    c.close().await.unwrap();
}

#[tokio::test]
async fn an_answer_over_the_line_limit_fails_its_call_at_once_with_the_reason() {
    for thread in READERS {
        an_answer_over_the_line_limit_fails_its_call_with(thread).await;
    }
}

async fn an_answer_over_the_line_limit_fails_its_call_with(thread: bool) {
    let mut o = options_with(thread);
    o.max_line_length = 2_000;
    o.request_timeout = Duration::from_secs(20);
    let c = mcp_client_stdio::spawn(testkit(&[]), o).await.unwrap();
    let started = Instant::now();
    let err = c.call_tool_with("big", args(json!({"bytes": 10_000})), RequestOptions::default());
    let err = err.await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "not a timeout");
    let message = err.to_string();
    assert!(message.contains("over the 2000-byte line limit"), "{message}");
    assert_eq!(c.transport().dropped_lines(), 1);
    // The connection goes on.
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "after"})).await), "after");
    c.close().await.unwrap();
}

#[tokio::test]
async fn an_answer_that_is_not_utf8_fails_its_call_at_once() {
    for thread in READERS {
        an_answer_that_is_not_utf8_fails_its_call_with(thread).await;
    }
}

async fn an_answer_that_is_not_utf8_fails_its_call_with(thread: bool) {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bad","version":"1"}}}"#;
    let script = format!(
        "read a; printf '%s\\n' '{init}'; read b; read c; \
         printf '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"\\377\"}}]}}}}\\n'; \
         exec sleep 30"
    );
    let mut o = legacy();
    o.shutdown_grace = Duration::from_millis(100);
    o.request_timeout = Duration::from_secs(20);
    o.reader_thread = thread;
    let c =
        mcp_client_stdio::spawn(ServerCommand::new("sh").arg("-c").arg(script), o).await.unwrap();
    c.initialize().await.unwrap();
    let started = Instant::now();
    let err = c.call_tool_with("x", args(json!({})), RequestOptions::default()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "not a timeout: {err}");
    assert!(err.to_string().contains("not a valid JSON-RPC message"), "{err}");
    assert_eq!(c.transport().dropped_lines(), 1);
    c.close().await.unwrap();
}

// `notifications/cancelled` reaches the server on every timeout and every
// dropped call, in both eras, even when the host closes the client at once
// (as `mcpc` does after a failed call).

/// How a test stops waiting for a call.
#[derive(Clone, Copy, Debug)]
enum GiveUp {
    /// The call's own timeout expires.
    Timeout,
    /// The caller drops the call's future.
    Drop,
}

/// Runs `hang` on a testkit whose stdin is copied to a file as it arrives,
/// gives up on it, closes the client at once, and returns the `requestId`s
/// of the `notifications/cancelled` the server received and the call's id.
async fn cancelled_after_close(era: &str, how: GiveUp) -> (Vec<Value>, Value) {
    let log = std::env::temp_dir()
        .join(format!("mcp-stdio-cancel-{}-{era}-{how:?}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let testkit = mcp_testkit::binary_path().to_string_lossy().into_owned();
    let command = ServerCommand::new("sh")
        .arg("-c")
        .arg("log=$1; shift; tee \"$log\" | exec \"$@\"")
        .arg("sh")
        .arg(log.to_string_lossy().into_owned())
        .arg(testkit)
        .args(["stdio", "--era", era]);
    let mut o = options();
    o.shutdown_grace = Duration::from_secs(2);
    let c = mcp_client_stdio::spawn(command, o).await.unwrap();
    c.initialize().await.unwrap();
    let quick = RequestOptions::with_timeout(Duration::from_millis(300));
    match how {
        GiveUp::Timeout => {
            let err = c.call_tool_with("hang", args(json!({})), quick).await.unwrap_err();
            assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        }
        GiveUp::Drop => {
            let call = c.call_tool_with("hang", args(json!({})), RequestOptions::default());
            assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
        }
    }
    c.close().await.unwrap();
    let received = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let messages: Vec<Value> = received.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let call = messages
        .iter()
        .find(|m| m["method"] == "tools/call" && m["params"]["name"] == "hang")
        .unwrap_or_else(|| panic!("no call in {received}"));
    let cancelled = messages
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .map(|m| m["params"]["requestId"].clone())
        .collect();
    (cancelled, call["id"].clone())
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_before_the_client_closes() {
    let (cancelled, id) = cancelled_after_close("legacy", GiveUp::Timeout).await;
    assert_eq!(cancelled, [id]);
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_before_the_client_closes() {
    let (cancelled, id) = cancelled_after_close("legacy", GiveUp::Drop).await;
    assert_eq!(cancelled, [id]);
}

#[tokio::test]
async fn a_timed_out_stateless_call_is_cancelled_before_the_client_closes() {
    let (cancelled, id) = cancelled_after_close("modern", GiveUp::Timeout).await;
    assert_eq!(cancelled, [id]);
}

#[tokio::test]
async fn a_dropped_stateless_call_is_cancelled_before_the_client_closes() {
    let (cancelled, id) = cancelled_after_close("modern", GiveUp::Drop).await;
    assert_eq!(cancelled, [id]);
}
