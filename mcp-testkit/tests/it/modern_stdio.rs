//! The stateless era (2026-07-28) over stdio: the built binary with `--era
//! modern` or `--era both`, spoken to in raw JSON lines; and the legacy
//! era's answers to a stateless-era probe.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-testkit");
const LINE_TIMEOUT: Duration = Duration::from_secs(5);
const VERSION: &str = "2026-07-28";

struct Peer {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    fn start(args: &[&str]) -> Peer {
        let mut child = Command::new(BIN)
            .arg("stdio")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start mcp-testkit");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Peer { _child: child, stdin, stdout }
    }

    async fn send(&mut self, message: Value) {
        self.stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        match tokio::time::timeout(LINE_TIMEOUT, self.stdout.next_line()).await {
            Ok(Ok(Some(line))) => serde_json::from_str(&line).unwrap(),
            other => panic!("no line from the server: {other:?}"),
        }
    }

    /// Sends a request and collects what arrives up to its reply.
    async fn exchange(&mut self, id: Value, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// A request whose reply is the next line.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let (reply, before) = self.exchange(json!(id), method, params).await;
        assert!(before.is_empty(), "unexpected before the reply: {before:?}");
        reply
    }
}

/// `_meta` of a stateless-era request with these client capabilities.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "modern-tests", "version": "2.0"},
    })
}

fn call_params(tool: &str, arguments: Value, capabilities: Value) -> Value {
    json!({"name": tool, "arguments": arguments, "_meta": meta(capabilities)})
}

fn code(reply: &Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {reply}"))
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {reply}"))
}

fn assert_complete(reply: &Value) {
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-testkit",
        "{reply}"
    );
}

#[tokio::test]
async fn modern_era_discovers_checks_meta_and_decorates_results() {
    let mut peer = Peer::start(&["--era", "modern", "--ttl-ms", "5000"]);
    let discover = peer.request(1, "server/discover", json!({"_meta": meta(json!({}))})).await;
    assert_complete(&discover);
    let result = &discover["result"];
    assert_eq!(result["supportedVersions"], json!([VERSION]));
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert!(result["capabilities"].get("tasks").is_none());
    assert!(result["instructions"].as_str().unwrap().contains("test server"));
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(5000), json!("public"))
    );

    // The required _meta keys, and the version.
    let bare = peer.request(2, "tools/list", json!({})).await;
    assert_eq!(code(&bare), -32602);
    let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}});
    assert_eq!(code(&peer.request(3, "tools/list", no_caps).await), -32602);
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let old = peer.request(4, "tools/list", json!({"_meta": old})).await;
    assert_eq!(code(&old), -32022);
    assert_eq!(old["error"]["data"], json!({"supported": [VERSION], "requested": "1900-01-01"}));

    // No handshake, ping, setLevel or resources/subscribe.
    let init = peer
        .request(
            5,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "old", "version": "1"}}),
        )
        .await;
    assert_eq!(code(&init), -32022);
    assert_eq!(init["error"]["data"]["supported"], json!([VERSION]));
    assert!(init["error"]["message"].as_str().unwrap().contains(VERSION));
    for (id, method) in [(6, "ping"), (7, "logging/setLevel"), (8, "resources/subscribe")] {
        let reply = peer
            .request(
                id,
                method,
                json!({"_meta": meta(json!({})), "level": "info",
                                                   "uri": "test://static/text/1"}),
            )
            .await;
        assert_eq!(code(&reply), -32601, "{method}");
    }

    let list = peer.request(9, "tools/list", json!({"_meta": meta(json!({}))})).await;
    assert_complete(&list);
    assert_eq!(list["result"]["cacheScope"], "public");
    assert_eq!(list["result"]["ttlMs"], 5000);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in ["echo", "ask", "ask_twice", "retry_once", "received_log", "close_subscriptions"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let read = peer
        .request(
            10,
            "resources/read",
            json!({"uri": "test://static/text/2", "_meta": meta(json!({}))}),
        )
        .await;
    assert_complete(&read);
    assert_eq!(read["result"]["contents"][0]["text"], "This is text resource 2.");
    assert_eq!(
        (read["result"]["cacheScope"].clone(), read["result"]["ttlMs"].clone()),
        (json!("private"), json!(5000))
    );
    // SEP-2164: an unknown resource is -32602 in this era, with its URI.
    let missing = peer
        .request(20, "resources/read", json!({"uri": "test://nope", "_meta": meta(json!({}))}))
        .await;
    assert_eq!(code(&missing), -32602);
    assert_eq!(missing["error"]["data"]["uri"], "test://nope");
    let prompt = peer
        .request(
            11,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Bo"},
                                           "_meta": meta(json!({}))}),
        )
        .await;
    assert_complete(&prompt);
    assert!(prompt["result"].get("ttlMs").is_none());
    let echo = peer
        .request(12, "tools/call", call_params("echo", json!({"message": "hi"}), json!({})))
        .await;
    assert_complete(&echo);
    assert_eq!(text(&echo), "hi");
}

#[tokio::test]
async fn a_legacy_server_answers_the_probe_as_a_legacy_server() {
    let mut peer = Peer::start(&[]);
    let probe = peer.request(1, "server/discover", json!({"_meta": meta(json!({}))})).await;
    // Not a stateless-era error: a dual-era client falls back.
    assert_eq!(code(&probe), -32600);
    assert!(probe["error"].get("data").is_none());
    let init = peer
        .request(
            2,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert!(init["result"].get("resultType").is_none());
    let again = peer.request(3, "server/discover", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(code(&again), -32601);

    // --silent-discover: no answer at all; the next request is answered.
    let mut silent = Peer::start(&["--silent-discover"]);
    silent
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                     "params": {"_meta": meta(json!({}))}}))
        .await;
    let nothing = tokio::time::timeout(Duration::from_millis(300), silent.stdout.next_line()).await;
    assert!(nothing.is_err(), "the probe was answered: {nothing:?}");
    assert_eq!(silent.request(2, "ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn both_eras_on_one_process() {
    let mut peer = Peer::start(&["--era", "both"]);
    let discover = peer.request(1, "server/discover", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!([VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
    );
    // A stateless-only method without _meta is a malformed stateless request.
    assert_eq!(code(&peer.request(2, "server/discover", json!({})).await), -32602);
    // Legacy requests before initialize are refused as before.
    assert_eq!(code(&peer.request(3, "tools/list", json!({})).await), -32600);
    let init = peer
        .request(
            4,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let legacy = peer.request(5, "tools/list", json!({})).await;
    assert!(legacy["result"].get("resultType").is_none());
    let legacy_names = legacy["result"]["tools"].to_string();
    assert!(!legacy_names.contains("ask_twice"));
    let modern = peer.request(6, "tools/list", json!({"_meta": meta(json!({}))})).await;
    assert_complete(&modern);
    assert!(modern["result"]["tools"].to_string().contains("ask_twice"));
    assert_eq!(peer.request(7, "ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn multi_round_trip_tools() {
    let mut peer = Peer::start(&["--era", "modern"]);
    let all = json!({"elicitation": {}, "sampling": {}, "roots": {}});

    // `ask`: one round, no server-to-client request.
    let first = peer
        .request(1, "tools/call", call_params("ask", json!({"what": "elicit"}), all.clone()))
        .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(result["inputRequests"]["ask"]["method"], "elicitation/create");
    assert_eq!(result["inputRequests"]["ask"]["params"]["mode"], "form");
    assert_eq!(result["requestState"], "ask:elicit");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let mut retry = call_params("ask", json!({"what": "elicit"}), all.clone());
    retry["inputResponses"] = json!({"ask": answer});
    retry["requestState"] = json!("ask:elicit");
    let done = peer.request(2, "tools/call", retry.clone()).await;
    assert_complete(&done);
    assert_eq!(serde_json::from_str::<Value>(text(&done)).unwrap(), json!({"result": answer}));
    retry["requestState"] = json!("ask:sample");
    assert_eq!(code(&peer.request(3, "tools/call", retry).await), -32602);
    let roots = peer
        .request(4, "tools/call", call_params("ask", json!({"what": "roots"}), all.clone()))
        .await;
    assert_eq!(roots["result"]["inputRequests"]["ask"], json!({"method": "roots/list"}));

    // A capability the client did not declare.
    let missing = peer
        .request(5, "tools/call", call_params("ask", json!({"what": "sample"}), json!({})))
        .await;
    assert_eq!(code(&missing), -32021);
    assert_eq!(missing["error"]["data"], json!({"requiredCapabilities": {"sampling": {}}}));
    let missing = peer
        .request(6, "tools/call", call_params("ask_twice", json!({}), json!({"sampling": {}})))
        .await;
    assert_eq!(missing["error"]["data"]["requiredCapabilities"], json!({"elicitation": {}}));

    // `ask_twice`: elicitation, then sampling with what the first gave.
    let round1 =
        peer.request(7, "tools/call", call_params("ask_twice", json!({}), all.clone())).await;
    assert_eq!(round1["result"]["inputRequests"]["name"]["method"], "elicitation/create");
    let mut retry = call_params("ask_twice", json!({}), all.clone());
    retry["requestState"] = round1["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let round2 = peer.request(8, "tools/call", retry).await;
    assert_eq!(round2["result"]["resultType"], "input_required");
    let sampling = &round2["result"]["inputRequests"]["greeting"];
    assert_eq!(sampling["method"], "sampling/createMessage");
    assert_eq!(sampling["params"]["messages"][0]["content"]["text"], "Say hello to Ada");
    let mut retry = call_params("ask_twice", json!({}), all.clone());
    retry["requestState"] = round2["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"greeting": {"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "Hello, Ada!"}}});
    let done = peer.request(9, "tools/call", retry).await;
    assert_complete(&done);
    assert_eq!(text(&done), "Ada: Hello, Ada!");
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"name": "Ada", "greeting": "Hello, Ada!"})
    );

    // `retry_once`: a requestState and nothing to fulfil.
    let first =
        peer.request(10, "tools/call", call_params("retry_once", json!({}), json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    assert!(first["result"].get("inputRequests").is_none());
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let mut retry = call_params("retry_once", json!({}), json!({}));
    retry["requestState"] = json!(state);
    let done = peer.request(11, "tools/call", retry).await;
    assert_eq!(text(&done), format!("retried with {state}"));

    // What the server received.
    let log =
        peer.request(12, "tools/call", call_params("received_log", json!({}), json!({}))).await;
    let log: Vec<Value> = serde_json::from_str(text(&log)).unwrap();
    let second = log.iter().find(|r| r["id"] == 2).unwrap();
    assert_eq!(second["method"], "tools/call");
    assert_eq!(second["name"], "ask");
    assert_eq!(second["requestState"], "ask:elicit");
    assert_eq!(second["inputResponses"]["ask"], answer);
    assert_eq!(second["clientInfo"]["name"], "modern-tests");
    assert_eq!(second["protocolVersion"], VERSION);
    assert_eq!(log.iter().find(|r| r["id"] == 11).unwrap()["requestState"], json!(state));
    assert_eq!(log.last().unwrap()["name"], "received_log");
}

#[tokio::test]
async fn log_messages_follow_the_requests_log_level() {
    let mut peer = Peer::start(&["--era", "modern"]);
    let args = json!({"level": "warning", "message": "careful"});
    let (reply, before) =
        peer.exchange(json!(1), "tools/call", call_params("log", args.clone(), json!({}))).await;
    assert!(before.is_empty());
    assert!(text(&reply).contains("no io.modelcontextprotocol/logLevel"));
    let mut params = call_params("log", args.clone(), json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let (reply, before) = peer.exchange(json!(2), "tools/call", params.clone()).await;
    assert_eq!(text(&reply), "logged");
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["method"], "notifications/message");
    assert_eq!(before[0]["params"]["data"], "careful");
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("error");
    let (reply, before) = peer.exchange(json!(3), "tools/call", params).await;
    assert!(before.is_empty() && text(&reply).starts_with("not sent"));
}

#[tokio::test]
async fn subscriptions_listen_is_acknowledged_filtered_and_cancelled() {
    let mut peer = Peer::start(&["--era", "both"]);
    let listen = |id: Value, notifications: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
               "params": {"_meta": meta(json!({})), "notifications": notifications}})
    };
    peer.send(listen(
        json!("L1"),
        json!({"toolsListChanged": true,
        "resourceSubscriptions": ["test://static/text/1", "test://nowhere"]}),
    ))
    .await;
    let ack = peer.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://static/text/1"]})
    );
    peer.send(listen(json!(7), json!({"promptsListChanged": true, "toolsListChanged": false})))
        .await;
    let ack = peer.recv().await;
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    assert_eq!(ack["params"]["notifications"], json!({"promptsListChanged": true}));

    let sub = |m: &Value| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    let (reply, before) =
        peer.exchange(json!(1), "tools/call", call_params("change", json!({}), json!({}))).await;
    assert_eq!(text(&reply), "extra tool added");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["method"], "notifications/tools/list_changed");
    assert_eq!(sub(&before[0]), "L1");
    let (_, before) = peer
        .exchange(
            json!(2),
            "tools/call",
            call_params("change", json!({"list": "prompts"}), json!({})),
        )
        .await;
    assert_eq!(before.len(), 1);
    assert_eq!(
        (before[0]["method"].clone(), sub(&before[0])),
        (json!("notifications/prompts/list_changed"), json!(7))
    );
    let (_, before) = peer
        .exchange(
            json!(3),
            "tools/call",
            call_params("change", json!({"list": "resources"}), json!({})),
        )
        .await;
    assert!(before.is_empty(), "nobody asked for resource list changes: {before:?}");
    let (reply, before) = peer
        .exchange(
            json!(4),
            "tools/call",
            call_params("touch", json!({"uri": "test://static/text/1"}), json!({})),
        )
        .await;
    assert_eq!(text(&reply), "touched");
    assert_eq!(before[0]["method"], "notifications/resources/updated");
    assert_eq!(before[0]["params"]["uri"], "test://static/text/1");
    assert_eq!(sub(&before[0]), "L1");
    let (reply, _) = peer
        .exchange(
            json!(5),
            "tools/call",
            call_params("touch", json!({"uri": "test://static/text/2"}), json!({})),
        )
        .await;
    assert_eq!(text(&reply), "not subscribed");

    // A legacy session on the same process: its change also reaches L1.
    let _ = peer
        .request(
            6,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    let (_, before) =
        peer.exchange(json!(8), "tools/call", json!({"name": "change", "arguments": {}})).await;
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before.iter().any(|m| m["params"].get("_meta").is_none()));
    assert!(before.iter().any(|m| sub(m) == "L1"));

    // Cancelling L1 ends it: no reply, nothing more on it.
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "L1"}}))
        .await;
    let (_, before) =
        peer.exchange(json!(9), "tools/call", call_params("change", json!({}), json!({}))).await;
    assert!(before.is_empty(), "{before:?}");

    // The server ends the rest gracefully.
    let (reply, before) = peer
        .exchange(json!(10), "tools/call", call_params("close_subscriptions", json!({}), json!({})))
        .await;
    assert_eq!(text(&reply), "1");
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["id"], 7);
    assert_eq!(before[0]["result"]["resultType"], "complete");
    assert_eq!(before[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
}

#[tokio::test]
async fn the_conformance_input_round_fixtures_ask_then_answer() {
    let mut peer = Peer::start(&["--era", "modern", "--conformance-fixtures"]);
    let name = "test_input_required_result_elicitation";
    let first = peer.request(1, "tools/call", call_params(name, json!({}), json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    assert_eq!(first["result"]["inputRequests"]["user_name"]["method"], "elicitation/create");
    let mut retry = call_params(name, json!({}), json!({}));
    retry["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    let second = peer.request(2, "tools/call", retry.clone()).await;
    assert_eq!(text(&second), "Hello, Ada!");
    assert_eq!(second["result"]["resultType"], "complete");
    retry["inputResponses"] = json!({"user_name": 42});
    assert_eq!(code(&peer.request(3, "tools/call", retry).await), -32602);
}

/// `_meta` declaring the tasks extension (and elicitation).
fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Polls `tasks/get` (ids from `next`) until the task leaves `working`.
async fn settle(peer: &mut Peer, next: &mut i64, task: &str) -> Value {
    for _ in 0..200 {
        *next += 1;
        let params = json!({"taskId": task, "_meta": meta(with_tasks())});
        let got = peer.request(*next, "tasks/get", params).await;
        assert_complete(&got);
        if got["result"]["status"] != "working" {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {task} kept working");
}

#[tokio::test]
async fn the_tasks_extension_creates_follows_updates_and_cancels_tasks() {
    let mut peer = Peer::start(&["--era", "modern", "--conformance-fixtures"]);
    let discover = peer.request(1, "server/discover", json!({"_meta": meta(json!({}))})).await;
    let capabilities = &discover["result"]["capabilities"];
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
    assert!(capabilities.get("tasks").is_none(), "{capabilities}");

    // A tool that waits, from a request with the extension: a task, flat.
    let made = peer.request(2, "tools/call", call_params("slow", json!({"ms": 200}), with_tasks()));
    let made = made.await["result"].clone();
    assert_eq!(
        (made["resultType"].as_str(), made["status"].as_str()),
        (Some("task"), Some("working"))
    );
    for absent in ["ttl", "pollInterval", "result", "requestState", "task"] {
        assert!(made.get(absent).is_none(), "{absent}: {made}");
    }
    assert!(made["ttlMs"].as_u64().is_some() && made["pollIntervalMs"].as_u64().is_some());
    let task = made["taskId"].as_str().unwrap().to_owned();
    let mut next = 10;
    let done = settle(&mut peer, &mut next, &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    // One that answers at once: no task. Without the extension: no task.
    let echo =
        peer.request(3, "tools/call", call_params("echo", json!({"message": "hi"}), with_tasks()));
    assert_eq!(text(&echo.await), "hi");
    let plain = peer.request(4, "tools/call", call_params("slow", json!({"ms": 10}), json!({})));
    let plain = plain.await;
    assert_complete(&plain);
    assert_eq!(text(&plain), "done");
    // Without the extension: the task methods and a required-task tool are -32021.
    let get = json!({"taskId": task, "_meta": meta(json!({}))});
    let refused = peer.request(5, "tasks/get", get).await;
    assert_eq!(code(&refused), -32021);
    let refused = peer.request(6, "tools/call", call_params("failing_job", json!({}), json!({})));
    let refused = refused.await;
    assert_eq!(code(&refused), -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    // tasks/list and tasks/result are not the extension's; an unknown task is -32602.
    for (id, method) in [(7, "tasks/list"), (8, "tasks/result")] {
        let params = json!({"taskId": task, "_meta": meta(with_tasks())});
        assert_eq!(code(&peer.request(id, method, params).await), -32601, "{method}");
    }
    let unknown = json!({"taskId": "task-999", "_meta": meta(with_tasks())});
    assert_eq!(code(&peer.request(9, "tasks/get", unknown).await), -32602);

    // Input while the task waits: asked, answered by tasks/update, done.
    let made = peer.request(
        20,
        "tools/call",
        call_params("confirm_delete", json!({"filename": "a.txt"}), with_tasks()),
    );
    let task = made.await["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = settle(&mut peer, &mut next, &task).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(waiting["inputRequests"]["confirm"]["method"], "elicitation/create", "{waiting}");
    let answer =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}, "other": {}});
    let params = json!({"taskId": task, "inputResponses": answer, "_meta": meta(with_tasks())});
    let ack = peer.request(21, "tasks/update", params).await;
    assert_complete(&ack);
    assert!(
        ack["result"].get("taskId").is_none() && ack["result"].get("status").is_none(),
        "{ack}"
    );
    let done = settle(&mut peer, &mut next, &task).await;
    assert_eq!(
        (done["status"].as_str(), done["result"]["content"][0]["text"].as_str()),
        (Some("completed"), Some("Deleted a.txt")),
        "{done}"
    );

    // A protocol error fails the task, with the error and no result.
    let made =
        peer.request(30, "tools/call", call_params("protocol_error_job", json!({}), with_tasks()));
    let task = made.await["result"]["taskId"].as_str().unwrap().to_owned();
    let failed = settle(&mut peer, &mut next, &task).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");

    // Cancelled while working; cancelling again is acknowledged the same.
    let made =
        peer.request(40, "tools/call", call_params("slow", json!({"ms": 60000}), with_tasks()));
    let task = made.await["result"]["taskId"].as_str().unwrap().to_owned();
    for id in [41, 42] {
        let params = json!({"taskId": task, "_meta": meta(with_tasks())});
        let ack = peer.request(id, "tasks/cancel", params).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert!(ack["result"].get("status").is_none(), "{ack}");
    }
    let cancelled = settle(&mut peer, &mut next, &task).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
}
