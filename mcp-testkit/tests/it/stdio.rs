//! Integration tests: the built `mcp-testkit` binary, spoken to in raw JSON
//! lines over its stdin and stdout, as a client would.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-testkit");
/// The longest a test waits for one line.
const LINE_TIMEOUT: Duration = Duration::from_secs(5);

/// A running server and the client end of its pipes.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    fn start(args: &[&str]) -> Peer {
        Peer::start_with(args, |_| {})
    }

    fn start_with(args: &[&str], adjust: impl FnOnce(&mut Command)) -> Peer {
        let mut command = Command::new(BIN);
        command
            .arg("stdio")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        adjust(&mut command);
        let mut child = command.spawn().expect("start mcp-testkit");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Peer { child, stdin, stdout }
    }

    /// A server that has been through `initialize` and `initialized`.
    async fn ready(args: &[&str]) -> Peer {
        let mut peer = Peer::start(args);
        peer.initialize("2025-11-25").await;
        peer
    }

    async fn initialize(&mut self, version: &str) -> Value {
        let reply = self
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {"roots": {}, "sampling": {}, "elicitation": {}},
                    "clientInfo": {"name": "testkit-tests", "version": "1.0"},
                }),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        reply
    }

    async fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes()).await;
    }

    /// The next stdout line, raw.
    async fn recv_line(&mut self) -> String {
        match tokio::time::timeout(LINE_TIMEOUT, self.stdout.next_line()).await {
            Ok(Ok(Some(line))) => line,
            other => panic!("no line from the server: {other:?}"),
        }
    }

    /// The next stdout line, as JSON.
    async fn recv(&mut self) -> Value {
        let line = self.recv_line().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request and returns its reply, failing on anything else
    /// arriving first.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], id, "expected the reply to {id}, got {reply}");
        reply
    }

    /// Calls a tool and returns the reply's `result`, collecting whatever
    /// arrived before it.
    async fn call(&mut self, id: i64, tool: &str, arguments: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}}))
            .await;
        self.reply_to(id).await
    }

    async fn reply_to(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "error reply: {message}");
                return (message["result"].clone(), before);
            }
            before.push(message);
        }
    }

    async fn close_and_read_stderr(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin);
        let mut stderr = String::new();
        let mut pipe = self.child.stderr.take().unwrap();
        let read = async {
            pipe.read_to_string(&mut stderr).await.unwrap();
            self.child.wait().await.unwrap()
        };
        let status = tokio::time::timeout(LINE_TIMEOUT, read).await.expect("server did not exit");
        (status, stderr)
    }
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}"))
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {reply}"))
}

#[tokio::test]
async fn initialize_negotiates_each_revision() {
    let cases = [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ];
    for (offered, answered) in cases {
        let mut peer = Peer::start(&[]);
        let reply = peer.initialize(offered).await;
        let result = &reply["result"];
        assert_eq!(result["protocolVersion"], answered, "offered {offered}");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert!(result["capabilities"]["logging"].is_object());
        assert_eq!(result["serverInfo"]["name"], "mcp-testkit");
        assert!(result["serverInfo"]["version"].is_string());
        assert!(result["serverInfo"]["title"].is_string());
        assert!(result["instructions"].is_string());
        let pong = peer.request(1, "ping", json!({})).await;
        assert_eq!(pong["result"], json!({}));
        let (status, _) = peer.close_and_read_stderr().await;
        assert!(status.success(), "{status}");
    }
}

#[tokio::test]
async fn lifecycle_and_protocol_errors() {
    let mut peer = Peer::start(&[]);
    // Before initialize: ping works, anything else is refused.
    assert_eq!(peer.request(1, "ping", json!({})).await["result"], json!({}));
    assert_eq!(error_code(&peer.request(2, "tools/list", json!({})).await), -32600);
    // A malformed initialize is invalid params.
    assert_eq!(
        error_code(&peer.request(3, "initialize", json!({"capabilities": {}})).await),
        -32602
    );
    peer.initialize("2025-11-25").await;
    assert_eq!(error_code(&peer.request(4, "initialize", json!({})).await), -32600);
    assert_eq!(error_code(&peer.request(5, "resources/delete", json!({})).await), -32601);
    assert_eq!(error_code(&peer.request(6, "tools/call", json!({"arguments": {}})).await), -32602);
    let unknown = peer.request(7, "tools/call", json!({"name": "nope"})).await;
    assert_eq!(error_code(&unknown), -32602);
    assert!(unknown["error"]["message"].as_str().unwrap().contains("nope"));
    // `extra` is unknown until `change` lists it.
    assert_eq!(error_code(&peer.request(8, "tools/call", json!({"name": "extra"})).await), -32602);
    assert_eq!(
        error_code(&peer.request(9, "logging/setLevel", json!({"level": "loud"})).await),
        -32602
    );
    // A string id comes back as a string.
    peer.send(json!({"jsonrpc": "2.0", "id": "abc", "method": "ping"})).await;
    assert_eq!(peer.recv().await, json!({"jsonrpc": "2.0", "id": "abc", "result": {}}));
}

#[tokio::test]
async fn tools_list_is_complete_and_paginated() {
    let mut peer = Peer::ready(&[]).await;
    let all = peer.request(1, "tools/list", json!({})).await["result"].clone();
    assert!(all.get("nextCursor").is_none());
    let tools = all["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "slow",
            "hang",
            "fail",
            "crash",
            "big",
            "noisy",
            "ask",
            "change",
            "cancelled_log",
            "spawn_child",
            "env",
            "log",
            "annotated",
            "touch"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["title"].is_string() && tool["description"].is_string(), "{tool}");
    }
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");
    // Without pagination, any cursor is foreign.
    assert_eq!(
        error_code(&peer.request(2, "tools/list", json!({"cursor": "page:2"})).await),
        -32602
    );

    let mut peer = Peer::ready(&["--page-size", "4"]).await;
    let mut paged = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
        let page = peer.request(10 + pages, "tools/list", params).await["result"].clone();
        pages += 1;
        let tools = page["tools"].as_array().unwrap();
        assert!(!tools.is_empty() && tools.len() <= 4, "{page}");
        paged.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match page.get("nextCursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(paged, names);
    for bad in [json!("page:1"), json!("page:9"), json!("garbage"), json!(3)] {
        let reply = peer.request(99, "tools/list", json!({"cursor": bad})).await;
        assert_eq!(error_code(&reply), -32602, "{bad}");
    }
}

#[tokio::test]
async fn simple_tools_answer() {
    let mut peer = Peer::start_with(&[], |c| {
        c.env("TESTKIT_PROBE", "probe value").env_remove("TESTKIT_UNSET");
    });
    peer.initialize("2025-11-25").await;

    let (echo, _) = peer.call(1, "echo", json!({"message": "héllo\nworld"})).await;
    assert_eq!(echo, json!({"content": [{"type": "text", "text": "héllo\nworld"}]}));

    let (sum, _) = peer.call(2, "add", json!({"a": 2, "b": 0.5})).await;
    assert_eq!(text_of(&sum), "2.5");
    assert_eq!(sum["structuredContent"], json!({"sum": 2.5}));
    assert!(sum.get("isError").is_none());

    let (failed, _) = peer.call(3, "fail", json!({"message": "nope"})).await;
    assert_eq!(failed["isError"], true);
    assert_eq!(text_of(&failed), "nope");
    let (failed, _) = peer.call(4, "fail", json!({})).await;
    assert_eq!(text_of(&failed), "failed on purpose");

    for n in [0_usize, 1, 100_000] {
        let (big, _) = peer.call(5, "big", json!({"bytes": n})).await;
        let text = text_of(&big);
        assert_eq!(text.len(), n);
        assert!(text.is_ascii());
    }

    let (set, _) = peer.call(6, "env", json!({"name": "TESTKIT_PROBE"})).await;
    assert_eq!(text_of(&set), "\"probe value\"");
    let (unset, _) = peer.call(7, "env", json!({"name": "TESTKIT_UNSET"})).await;
    assert_eq!(text_of(&unset), "null");

    // Invalid arguments are tool errors, not protocol errors.
    for (tool, args) in [
        ("echo", json!({})),
        ("echo", json!({"message": 5})),
        ("add", json!({"a": 1})),
        ("slow", json!({"ms": -1})),
        ("big", json!({"bytes": "10"})),
        ("ask", json!({"what": "dance"})),
        ("log", json!({"level": "loud", "message": "x"})),
    ] {
        let (result, _) = peer.call(8, tool, args.clone()).await;
        assert_eq!(result["isError"], true, "{tool} {args}: {result}");
    }
}

#[tokio::test]
async fn cancellation_aborts_the_call_and_is_logged() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "hang", "arguments": {}}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                     "params": {"name": "slow", "arguments": {"ms": 200}}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "test"}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "s"}}))
        .await;
    // Wait past the slow call's end: neither call may be answered.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (log, before) = peer.call(8, "cancelled_log", json!({})).await;
    assert!(before.is_empty(), "a cancelled call was answered: {before:?}");
    let ids: Value = serde_json::from_str(text_of(&log)).unwrap();
    assert_eq!(ids, json!([7, "s"]));
}

#[tokio::test]
async fn max_in_flight_refuses_calls_over_the_cap_until_one_ends() {
    let mut peer = Peer::ready(&["--max-in-flight", "2"]).await;
    let hang = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "hang", "arguments": {}}})
    };
    peer.send(hang(1)).await;
    peer.send(hang(2)).await;
    peer.send(hang(3)).await;
    let refused = peer.recv().await;
    assert_eq!((refused["id"].clone(), error_code(&refused)), (json!(3), -32010), "{refused}");
    assert_eq!(refused["error"]["data"]["maxInFlight"], 2, "{refused}");
    // A cancellation frees a place.
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}}))
        .await;
    let (result, before) = peer.call(4, "echo", json!({"message": "in"})).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(text_of(&result), "in");
}

#[tokio::test]
async fn ask_relays_the_clients_answers() {
    let mut peer = Peer::ready(&[]).await;
    let cases = [
        ("ping", "ping", json!({"result": {}})),
        (
            "roots",
            "roots/list",
            json!({"result": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}}),
        ),
        (
            "elicit",
            "elicitation/create",
            json!({"result": {"action": "accept", "content": {"name": "octocat"}}}),
        ),
        (
            "sample",
            "sampling/createMessage",
            json!({"error": {"code": -1, "message": "User rejected sampling request"}}),
        ),
    ];
    for (i, (what, method, answer)) in cases.into_iter().enumerate() {
        let call_id = 100 + i as i64;
        peer.send(json!({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                         "params": {"name": "ask", "arguments": {"what": what}}}))
            .await;
        let request = peer.recv().await;
        assert_eq!(request["method"], method, "{request}");
        assert_eq!(request["id"], format!("srv-{}", i + 1));
        match what {
            "elicit" => {
                assert_eq!(request["params"]["mode"], "form");
                assert_eq!(request["params"]["requestedSchema"]["type"], "object");
            }
            "sample" => {
                assert!(request["params"]["messages"].is_array());
                assert!(request["params"]["maxTokens"].is_number());
            }
            _ => {}
        }
        let mut reply = answer.clone();
        reply["jsonrpc"] = json!("2.0");
        reply["id"] = request["id"].clone();
        peer.send(reply).await;
        let (result, _) = peer.reply_to(call_id).await;
        assert!(result.get("isError").is_none(), "{result}");
        let relayed: Value = serde_json::from_str(text_of(&result)).unwrap();
        assert_eq!(relayed, answer, "{what}");
    }
}

#[tokio::test]
async fn ask_times_out_and_old_clients_get_no_elicitation_mode() {
    let mut peer = Peer::start(&["--ask-timeout-ms", "200"]);
    peer.initialize("2025-06-18").await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "ask", "arguments": {"what": "elicit"}}}))
        .await;
    let request = peer.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    assert!(request["params"].get("mode").is_none(), "{request}");
    let (result, _) = peer.reply_to(1).await;
    assert_eq!(result["isError"], true);
    assert!(text_of(&result).contains("did not answer"), "{result}");
}

#[tokio::test]
async fn crash_exits_with_code_and_stderr_without_answering() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "crash", "arguments": {"code": 7, "stderr": "boom!"}}}))
        .await;
    let next = tokio::time::timeout(LINE_TIMEOUT, peer.stdout.next_line()).await.unwrap().unwrap();
    assert_eq!(next, None, "the crash was answered");
    let (status, stderr) = peer.close_and_read_stderr().await;
    assert_eq!(status.code(), Some(7));
    assert!(stderr.contains("boom!"), "{stderr}");
}

#[tokio::test]
async fn crash_defaults() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "crash"}}))
        .await;
    let (status, stderr) = peer.close_and_read_stderr().await;
    assert_eq!(status.code(), Some(3));
    assert!(stderr.contains("testkit: crashing on purpose"), "{stderr}");
}

#[tokio::test]
async fn garbage_input_is_answered_and_survived() {
    let mut peer = Peer::start(&["--max-line-bytes", "300"]);
    peer.initialize("2025-11-25").await;
    let cases: [(&[u8], i64, Value); 5] = [
        (b"this is not json", -32700, Value::Null),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1", -32700, Value::Null),
        (b"{\"hello\":\"world\"}", -32600, Value::Null),
        (b"{\"jsonrpc\":\"2.0\",\"id\":5}", -32600, json!(5)),
        (&[b'x'; 500], -32700, Value::Null),
    ];
    for (line, code, id) in cases {
        peer.send_raw(line).await;
        let reply = peer.recv().await;
        assert_eq!(error_code(&reply), code, "{}", String::from_utf8_lossy(line));
        assert_eq!(reply["id"], id, "{reply}");
    }
    // Blank lines get no answer; the server still works.
    peer.send_raw(b"").await;
    peer.send_raw(b"   ").await;
    let (echo, before) = peer.call(9, "echo", json!({"message": "still here"})).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(text_of(&echo), "still here");
    // A reply to an id the server never used is ignored (logged on stderr).
    peer.send(json!({"jsonrpc": "2.0", "id": "srv-999", "result": {}})).await;
    assert_eq!(peer.request(10, "ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn noisy_writes_garbage_then_answers() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "noisy", "arguments": {"lines": 2, "long_line_bytes": 300}}}))
        .await;
    let mut lines = Vec::new();
    loop {
        let line = peer.recv_line().await;
        if line.contains("\"id\":1,") {
            let reply: Value = serde_json::from_str(&line).unwrap();
            assert!(text_of(&reply["result"]).starts_with("noisy"), "{reply}");
            break;
        }
        lines.push(line);
    }
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(serde_json::from_str::<Value>(&lines[0]).is_err());
    assert!(serde_json::from_str::<Value>(&lines[1]).unwrap().get("jsonrpc").is_none());
    assert_eq!(serde_json::from_str::<Value>(&lines[2]).unwrap()["id"], "testkit-no-such-request");
    assert_eq!(lines[3].len(), 300);
    let (_, stderr) = peer.close_and_read_stderr().await;
    assert_eq!(stderr.matches("noisy stderr line").count(), 2, "{stderr}");
}

#[tokio::test]
async fn slow_sends_progress_with_the_token() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "slow", "arguments": {"ms": 90, "steps": 3},
                                "_meta": {"progressToken": "tok"}}}))
        .await;
    let (done, before) = peer.reply_to(1).await;
    assert_eq!(text_of(&done), "done");
    assert_eq!(before.len(), 3, "{before:?}");
    for (i, note) in before.iter().enumerate() {
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(note["params"]["progressToken"], "tok");
        assert_eq!(note["params"]["progress"], i + 1);
        assert_eq!(note["params"]["total"], 3);
        assert!(note["params"]["message"].is_string());
    }
    // No token, no progress.
    let (done, before) = peer.call(2, "slow", json!({"ms": 30, "steps": 3})).await;
    assert_eq!(text_of(&done), "done");
    assert!(before.is_empty(), "{before:?}");
}

#[tokio::test]
async fn a_slow_call_does_not_hold_up_a_ping() {
    let mut peer = Peer::ready(&[]).await;
    let start = Instant::now();
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "slow", "arguments": {"ms": 500}}}))
        .await;
    let pong = peer.request(2, "ping", json!({})).await;
    let ping_time = start.elapsed();
    assert_eq!(pong["result"], json!({}));
    assert!(ping_time < Duration::from_millis(100), "ping took {ping_time:?}");
    let (done, _) = peer.reply_to(1).await;
    assert_eq!(text_of(&done), "done");
    assert!(start.elapsed() >= Duration::from_millis(500));
}

#[tokio::test]
async fn change_toggles_the_extra_tool() {
    let mut peer = Peer::ready(&[]).await;
    let count = |list: &Value| list["result"]["tools"].as_array().unwrap().len();
    let before = count(&peer.request(1, "tools/list", json!({})).await);
    let (changed, notes) = peer.call(2, "change", json!({})).await;
    assert_eq!(text_of(&changed), "extra tool added");
    assert_eq!(notes, [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]);
    let list = peer.request(3, "tools/list", json!({})).await;
    assert_eq!(count(&list), before + 1);
    assert_eq!(list["result"]["tools"][before]["name"], "extra");
    let (extra, _) = peer.call(4, "extra", json!({})).await;
    assert_eq!(text_of(&extra), "extra");
    let (changed, notes) = peer.call(5, "change", json!({})).await;
    assert_eq!(text_of(&changed), "extra tool removed");
    assert_eq!(notes.len(), 1);
    assert_eq!(count(&peer.request(6, "tools/list", json!({})).await), before);
}

#[tokio::test]
async fn resources_prompts_completion_and_tasks_over_stdio() {
    let mut peer = Peer::ready(&[]).await;
    let uri = "test://static/blob/1";
    let read = peer.request(1, "resources/read", json!({"uri": uri})).await;
    assert_eq!(read["result"]["contents"][0]["blob"], "AAECAwQFBgcICQoLDA0ODw==");
    assert_eq!(
        peer.request(2, "resources/subscribe", json!({"uri": uri})).await["result"],
        json!({})
    );
    let (touched, before) = peer.call(3, "touch", json!({"uri": uri})).await;
    assert_eq!(text_of(&touched), "touched");
    assert_eq!(
        before,
        [json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": uri}})]
    );
    let greet =
        peer.request(4, "prompts/get", json!({"name": "greet", "arguments": {"name": "Bo"}})).await;
    assert_eq!(greet["result"]["messages"][0]["content"]["text"], "Hello, Bo!");
    let complete = peer
        .request(
            5,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "b"}}),
        )
        .await;
    assert_eq!(complete["result"]["completion"]["values"], json!(["bob"]));
    peer.send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                     "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "task": {}}}))
        .await;
    let (created, _) = peer.reply_to(6).await;
    let task_id = created["task"]["taskId"].clone();
    let status = peer.recv().await;
    assert_eq!(status["method"], "notifications/tasks/status");
    assert_eq!(status["params"]["status"], "completed");
    let result = peer.request(7, "tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(result["result"]["structuredContent"], json!({"sum": 3.0}));
}

#[tokio::test]
async fn log_respects_set_level() {
    let mut peer = Peer::ready(&[]).await;
    let (_, notes) = peer.call(1, "log", json!({"level": "info", "message": "hello"})).await;
    assert_eq!(
        notes,
        [json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "mcp-testkit", "data": "hello"}})]
    );
    assert_eq!(
        peer.request(2, "logging/setLevel", json!({"level": "error"})).await["result"],
        json!({})
    );
    let (quiet, notes) = peer.call(3, "log", json!({"level": "warning", "message": "x"})).await;
    assert!(notes.is_empty(), "{notes:?}");
    assert!(text_of(&quiet).contains("not sent"));
    let (_, notes) = peer.call(4, "log", json!({"level": "critical", "message": "y"})).await;
    assert_eq!(notes.len(), 1);
}

#[tokio::test]
async fn list_changed_before_the_initialize_reply() {
    let mut peer = Peer::start(&["--send-list-changed-before-init"]);
    peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    let first = peer.recv().await;
    assert_eq!(first, json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    let second = peer.recv().await;
    assert_eq!(second["id"], 0);
    assert_eq!(second["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn banner_version_override_and_exit_after() {
    let mut peer = Peer::start(&[
        "--stderr-banner",
        "hello from testkit",
        "--version-override",
        "1999-01-01",
        "--exit-after",
        "2",
    ]);
    let init = peer.initialize("2025-11-25").await;
    assert_eq!(init["result"]["protocolVersion"], "1999-01-01");
    assert_eq!(peer.request(1, "ping", json!({})).await["result"], json!({}));
    // The second answer was the last: the server exits with 0 on its own.
    let status = tokio::time::timeout(LINE_TIMEOUT, peer.child.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(0));
    let (_, stderr) = peer.close_and_read_stderr().await;
    assert!(stderr.starts_with("hello from testkit\n"), "{stderr}");
}

#[tokio::test]
async fn stdin_eof_ends_the_server_even_with_calls_running() {
    let mut peer = Peer::ready(&[]).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "hang"}}))
        .await;
    let (status, _) = peer.close_and_read_stderr().await;
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn spawn_child_joins_the_servers_process_group() {
    // The server leads its own group, as a careful client starts it.
    let mut peer = Peer::start_with(&[], |c| {
        c.process_group(0);
    });
    peer.initialize("2025-11-25").await;
    let server_pid = peer.child.id().unwrap();
    let (result, _) = peer.call(1, "spawn_child", json!({})).await;
    let pid: u32 = text_of(&result).parse().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the `(comm)`: state, ppid, pgrp.
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    assert_eq!(fields[1], server_pid.to_string(), "ppid in {stat}");
    assert_eq!(fields[2], server_pid.to_string(), "pgrp in {stat}");

    // Killing the group leaves no `sleep 300` behind.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{server_pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    peer.child.wait().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim().chars().next()));
        // Gone, or dead and waiting to be reaped.
        if matches!(state, None | Some(Some('Z' | 'X'))) {
            break;
        }
        assert!(Instant::now() < deadline, "the grandchild {pid} outlived its group");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
