//! Resources, prompts, completion and tasks, against the core in-process:
//! JSON in through `Server::handle_json`, everything out read from the
//! queue with the request it is related to.

use std::time::Duration;

use mcp_proto::jsonrpc::RequestId;
use mcp_testkit::{Config, Outgoing, OutgoingQueue, Server};
use serde_json::{Value, json};

/// The longest a test waits for one outgoing message.
const WAIT: Duration = Duration::from_secs(5);
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// One outgoing message, as JSON, with the request it belongs to.
#[derive(Debug)]
struct Out {
    message: Value,
    related: Option<RequestId>,
}

struct Core {
    server: Server,
    queue: OutgoingQueue,
}

impl Core {
    /// A core that has been through `initialize` (offering `version`) and
    /// `initialized`; the `initialize` result.
    async fn ready_with(config: Config, version: &str) -> (Core, Value) {
        let (server, queue) = Server::new(config);
        let mut core = Core { server, queue };
        let init = core
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "feature-tests", "version": "1.0"},
                }),
            )
            .await;
        core.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (core, init["result"].clone())
    }

    async fn ready(config: Config) -> Core {
        Core::ready_with(config, "2025-11-25").await.0
    }

    fn send(&self, message: Value) {
        self.server.handle_json(message.to_string().as_bytes());
    }

    /// The next outgoing message.
    async fn next(&mut self) -> Out {
        match tokio::time::timeout(WAIT, self.queue.recv()).await {
            Ok(Some(Outgoing::Message { message, related, .. })) => {
                Out { message: serde_json::from_slice(&message.to_vec()).unwrap(), related }
            }
            // A result written as JSON text (`echo`'s).
            Ok(Some(item @ Outgoing::RawReply { .. })) => {
                let mut json = Vec::new();
                assert!(item.encode_into(&mut json).unwrap());
                let message: Value = serde_json::from_slice(&json).unwrap();
                let related = serde_json::from_value(message["id"].clone()).ok();
                Out { message, related }
            }
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// Whether nothing is queued (after letting spawned work run a little).
    async fn quiet(&mut self) -> bool {
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.queue.try_recv().is_err()
    }

    /// Sends a request and returns the reply, failing if anything else
    /// comes first.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let out = self.next().await;
        assert_eq!(out.message["id"], id, "expected the reply to {id}: {out:?}");
        assert_eq!(out.related, Some(RequestId::from(id)));
        out.message
    }

    /// The reply's result, failing on an error.
    async fn result(&mut self, id: i64, method: &str, params: Value) -> Value {
        let reply = self.request(id, method, params).await;
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    /// The reply's error code, failing on a result.
    async fn error(&mut self, id: i64, method: &str, params: Value) -> i64 {
        let reply = self.request(id, method, params).await;
        reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("{method}: not an error: {reply}"))
    }

    /// Calls a tool; its reply and what came before it.
    async fn call(&mut self, id: i64, tool: &str, arguments: Value) -> (Value, Vec<Out>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}}));
        self.reply_to(id).await
    }

    /// Messages up to and including the reply to `id`.
    async fn reply_to(&mut self, id: i64) -> (Value, Vec<Out>) {
        let mut before = Vec::new();
        loop {
            let out = self.next().await;
            if out.message["id"] == id && out.message.get("method").is_none() {
                return (out.message, before);
            }
            before.push(out);
        }
    }
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}"))
}

fn paged(page_size: usize) -> Config {
    Config { page_size: Some(page_size), ..Config::default() }
}

/// `echo` answers with its result written as JSON text (no value built),
/// the message escaped as `serde_json` escapes a string.
#[tokio::test]
async fn echo_answers_with_its_result_written_as_text() {
    let mut core = Core::ready(Config::default()).await;
    let odd = "tab\t \"quoted\" back\\slash \u{1} \u{7f} é ✓ 😀 \u{2028} </script>";
    let call = json!({"name": "echo", "arguments": {"message": odd}});
    core.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}));
    let item = tokio::time::timeout(WAIT, core.queue.recv()).await.unwrap().unwrap();
    let Outgoing::RawReply { ref result, .. } = item else { panic!("{item:?}") };
    let expected = json!({"content": [{"type": "text", "text": odd}]});
    assert_eq!(serde_json::from_str::<Value>(result.get()).unwrap(), expected);
    // Escaped as `serde_json` writes a string.
    assert!(result.get().contains(r#""text":"tab\t \"quoted\" back\\slash \u0001"#), "{result}");
    let mut line = Vec::new();
    assert!(item.encode_into(&mut line).unwrap());
    let reply: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 3, "result": expected}));
}

/// In the stateless era too, with the era's `resultType` and `serverInfo`
/// added to the text by the session.
#[tokio::test]
async fn echo_answers_a_stateless_request_with_its_result_written_as_text() {
    let config = Config { era: mcp_testkit::ServeEra::Modern, ..Config::default() };
    let (server, mut queue) = Server::new(config);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = json!({"name": "echo", "arguments": {"message": "a \"b\" é"}, "_meta": meta});
    let request = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call});
    server.handle_json(request.to_string().as_bytes());
    let item = tokio::time::timeout(WAIT, queue.recv()).await.unwrap().unwrap();
    let Outgoing::RawReply { ref result, .. } = item else { panic!("{item:?}") };
    assert!(result.get().starts_with(r#"{"content":[{"type":"text","text":"a \"b\" é"}],"#));
    let result: Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-testkit");
    assert_eq!(result.as_object().map(|o| o.len()), Some(3), "{result}");
}

#[tokio::test]
async fn capabilities_depend_on_the_revision() {
    let (_, init) = Core::ready_with(Config::default(), "2025-11-25").await;
    let caps = &init["capabilities"];
    assert_eq!(caps["resources"], json!({"subscribe": true, "listChanged": true}));
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["completions"], json!({}));
    assert_eq!(
        caps["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    assert_eq!(caps["logging"], json!({}));

    // Before 2025-11-25 there are no tasks: no capability, no methods, and a
    // `task` parameter is ignored.
    let (mut core, init) = Core::ready_with(Config::default(), "2025-06-18").await;
    assert!(init["capabilities"].get("tasks").is_none(), "{init}");
    assert!(init["capabilities"]["resources"].is_object());
    for method in ["tasks/get", "tasks/list", "tasks/result", "tasks/cancel"] {
        assert_eq!(core.error(1, method, json!({"taskId": "task-1"})).await, -32601, "{method}");
    }
    core.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"message": "hi"}, "task": {}}}));
    let (reply, _) = core.reply_to(2).await;
    assert_eq!(text_of(&reply["result"]), "hi");
}

#[tokio::test]
async fn resources_are_listed_in_pages_and_read() {
    let mut core = Core::ready(Config::default()).await;
    let all = core.result(1, "resources/list", json!({})).await;
    assert!(all.get("nextCursor").is_none());
    let resources = all["resources"].as_array().unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "test://static/text/1",
            "test://static/text/2",
            "test://static/text/3",
            "test://static/text/4",
            "test://static/text/5",
            "test://static/blob/1"
        ]
    );
    for resource in resources {
        assert!(resource["name"].is_string() && resource["mimeType"].is_string(), "{resource}");
    }
    assert_eq!(resources[5]["mimeType"], "application/octet-stream");

    let templates = core.result(2, "resources/templates/list", json!({})).await;
    assert_eq!(templates["resourceTemplates"].as_array().unwrap().len(), 1);
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "test://static/text/{id}");
    assert!(templates["resourceTemplates"][0]["name"].is_string());

    let text = core.result(3, "resources/read", json!({"uri": "test://static/text/2"})).await;
    assert_eq!(
        text,
        json!({"contents": [{"uri": "test://static/text/2", "mimeType": "text/plain",
                             "text": "This is text resource 2."}]})
    );
    let blob = core.result(4, "resources/read", json!({"uri": "test://static/blob/1"})).await;
    assert_eq!(
        blob,
        json!({"contents": [{"uri": "test://static/blob/1",
                             "mimeType": "application/octet-stream",
                             "blob": "AAECAwQFBgcICQoLDA0ODw=="}]})
    );
    for uri in ["test://static/text/6", "test://nope", ""] {
        let reply = core.request(5, "resources/read", json!({"uri": uri})).await;
        assert_eq!(reply["error"]["code"], -32002, "{reply}");
        assert_eq!(reply["error"]["message"], "Resource not found");
        assert_eq!(reply["error"]["data"], json!({"uri": uri}));
    }
    assert_eq!(core.error(6, "resources/read", json!({})).await, -32602);
    assert_eq!(core.error(7, "resources/read", json!({"uri": 1})).await, -32602);
    // Without pagination, any cursor is foreign.
    assert_eq!(core.error(8, "resources/list", json!({"cursor": "page:2"})).await, -32602);

    // The same cursors as tools/list.
    let mut core = Core::ready(paged(4)).await;
    let first = core.result(1, "resources/list", json!({})).await;
    assert_eq!(first["resources"].as_array().unwrap().len(), 4);
    assert_eq!(first["nextCursor"], "page:2");
    let second = core.result(2, "resources/list", json!({"cursor": "page:2"})).await;
    assert_eq!(second["resources"].as_array().unwrap().len(), 2);
    assert_eq!(second["resources"][1]["uri"], "test://static/blob/1");
    assert!(second.get("nextCursor").is_none());
    for bad in [json!("page:1"), json!("page:3"), json!("x"), json!(2)] {
        assert_eq!(core.error(3, "resources/list", json!({"cursor": bad})).await, -32602, "{bad}");
    }
    let templates = core.result(4, "resources/templates/list", json!({})).await;
    assert!(templates.get("nextCursor").is_none());
}

#[tokio::test]
async fn subscriptions_decide_what_touch_sends() {
    let mut core = Core::ready(Config::default()).await;
    let uri = "test://static/text/1";
    let (reply, before) = core.call(1, "touch", json!({"uri": uri})).await;
    assert_eq!(text_of(&reply["result"]), "not subscribed");
    assert!(before.is_empty(), "{before:?}");

    assert_eq!(core.result(2, "resources/subscribe", json!({"uri": uri})).await, json!({}));
    let (reply, before) = core.call(3, "touch", json!({"uri": uri})).await;
    assert_eq!(text_of(&reply["result"]), "touched");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(
        before[0].message,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": uri}})
    );
    // Related to no request: over HTTP it goes on the GET stream.
    assert_eq!(before[0].related, None);

    // Another resource was not subscribed to.
    let (reply, before) = core.call(4, "touch", json!({"uri": "test://static/blob/1"})).await;
    assert_eq!(text_of(&reply["result"]), "not subscribed");
    assert!(before.is_empty());

    assert_eq!(core.result(5, "resources/unsubscribe", json!({"uri": uri})).await, json!({}));
    let (reply, before) = core.call(6, "touch", json!({"uri": uri})).await;
    assert_eq!(text_of(&reply["result"]), "not subscribed");
    assert!(before.is_empty());
    // Unsubscribing again is harmless.
    assert_eq!(core.result(7, "resources/unsubscribe", json!({"uri": uri})).await, json!({}));

    // Only resources that exist can be subscribed to.
    let reply = core.request(8, "resources/subscribe", json!({"uri": "test://nope"})).await;
    assert_eq!(reply["error"]["code"], -32002);
    assert_eq!(reply["error"]["data"]["uri"], "test://nope");
    assert_eq!(core.error(9, "resources/subscribe", json!({})).await, -32602);
    assert_eq!(core.error(10, "resources/unsubscribe", json!({"uri": false})).await, -32602);
    // touch without a uri is a tool error.
    let (reply, _) = core.call(11, "touch", json!({})).await;
    assert_eq!(reply["result"]["isError"], true);
}

#[tokio::test]
async fn change_sends_each_list_changed() {
    let mut core = Core::ready(Config::default()).await;
    let cases = [
        (
            json!({"list": "resources"}),
            "notifications/resources/list_changed",
            "resource list changed",
        ),
        (json!({"list": "prompts"}), "notifications/prompts/list_changed", "prompt list changed"),
        (json!({}), "notifications/tools/list_changed", "extra tool added"),
        (json!({"list": "tools"}), "notifications/tools/list_changed", "extra tool removed"),
    ];
    for (i, (arguments, method, answer)) in cases.into_iter().enumerate() {
        let id = i as i64 + 1;
        let (reply, before) = core.call(id, "change", arguments).await;
        assert_eq!(text_of(&reply["result"]), answer);
        assert_eq!(before.len(), 1, "{before:?}");
        assert_eq!(before[0].message, json!({"jsonrpc": "2.0", "method": method}));
        // As before: related to the `change` call.
        assert_eq!(before[0].related, Some(RequestId::from(id)));
    }
    let (reply, before) = core.call(9, "change", json!({"list": "roots"})).await;
    assert_eq!(reply["result"]["isError"], true);
    assert!(before.is_empty());
}

#[tokio::test]
async fn prompts_are_listed_and_got() {
    let mut core = Core::ready(Config::default()).await;
    let list = core.result(1, "prompts/list", json!({})).await;
    let prompts = list["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["simple", "greet"]);
    assert!(prompts[0].get("arguments").is_none());
    assert_eq!(prompts[1]["arguments"][0]["name"], "name");
    assert_eq!(prompts[1]["arguments"][0]["required"], true);

    let simple = core.result(2, "prompts/get", json!({"name": "simple"})).await;
    let messages = simple["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"]["type"], "text");
    assert!(messages[0]["content"]["text"].is_string());

    let greet =
        core.result(3, "prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(
        greet["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
    );

    for params in [
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {}}),
        json!({"name": "greet", "arguments": {"name": 5}}),
        json!({"name": "greet", "arguments": ["Ada"]}),
        json!({"name": "nope"}),
        json!({}),
    ] {
        assert_eq!(core.error(4, "prompts/get", params.clone()).await, -32602, "{params}");
    }

    let mut core = Core::ready(paged(1)).await;
    let first = core.result(1, "prompts/list", json!({})).await;
    assert_eq!(first["prompts"][0]["name"], "simple");
    assert_eq!(first["nextCursor"], "page:2");
    let second = core.result(2, "prompts/list", json!({"cursor": "page:2"})).await;
    assert_eq!(second["prompts"][0]["name"], "greet");
    assert!(second.get("nextCursor").is_none());
}

#[tokio::test]
async fn completion_filters_by_prefix() {
    let mut core = Core::ready(Config::default()).await;
    let greet = json!({"type": "ref/prompt", "name": "greet"});
    let template = json!({"type": "ref/resource", "uri": "test://static/text/{id}"});
    let cases = [
        (greet.clone(), "name", "", json!(["alice", "bob", "carol"])),
        (greet.clone(), "name", "a", json!(["alice"])),
        (greet.clone(), "name", "car", json!(["carol"])),
        (greet.clone(), "name", "z", json!([])),
        (greet.clone(), "other", "", json!([])),
        (json!({"type": "ref/prompt", "name": "simple"}), "name", "", json!([])),
        (template.clone(), "id", "", json!(["1", "2", "3", "4", "5"])),
        (template.clone(), "id", "3", json!(["3"])),
        (json!({"type": "ref/resource", "uri": "test://x/{id}"}), "id", "", json!([])),
        (json!({"type": "ref/other"}), "name", "", json!([])),
    ];
    for (i, (reference, name, value, expected)) in cases.into_iter().enumerate() {
        let params = json!({"ref": reference, "argument": {"name": name, "value": value}});
        let result = core.result(i as i64 + 1, "completion/complete", params.clone()).await;
        let total = expected.as_array().unwrap().len();
        assert_eq!(
            result,
            json!({"completion": {"values": expected, "total": total, "hasMore": false}}),
            "{params}"
        );
    }
    for params in [
        json!({}),
        json!({"ref": greet.clone()}),
        json!({"ref": greet.clone(), "argument": {"name": "name"}}),
        json!({"ref": {"name": "greet"}, "argument": {"name": "name", "value": ""}}),
    ] {
        assert_eq!(core.error(50, "completion/complete", params.clone()).await, -32602, "{params}");
    }
}

/// Sends a task-augmented `tools/call`; the created task.
async fn create_task(core: &mut Core, id: i64, tool: &str, arguments: Value, task: Value) -> Value {
    let result = core
        .result(id, "tools/call", json!({"name": tool, "arguments": arguments, "task": task}))
        .await;
    let task = result["task"].clone();
    assert_eq!(task["status"], "working", "{result}");
    task
}

fn assert_status_note(out: &Out, task_id: &Value, status: &str) {
    assert_eq!(out.message["method"], "notifications/tasks/status", "{out:?}");
    assert_eq!(out.message["params"]["taskId"], *task_id);
    assert_eq!(out.message["params"]["status"], status);
    assert_eq!(out.related, None);
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_gives_its_result() {
    let mut core = Core::ready(Config::default()).await;
    core.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"ms": 150, "steps": 2},
        "_meta": {"progressToken": "p"}, "task": {"ttl": 60000}}}));
    let created = core.next().await;
    assert_eq!(created.related, Some(RequestId::from(1)));
    let task = created.message["result"]["task"].clone();
    let task_id = task["taskId"].clone();
    assert!(task_id.is_string(), "{task}");
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    assert_eq!(task["pollInterval"], 100);
    for field in ["createdAt", "lastUpdatedAt"] {
        let stamp = task[field].as_str().unwrap();
        assert!(stamp.len() == 24 && stamp.ends_with('Z') && &stamp[10..11] == "T", "{stamp}");
    }

    let got = core.result(2, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["status"], "working");
    assert_eq!(got["createdAt"], task["createdAt"]);
    let list = core.result(3, "tasks/list", json!({})).await;
    assert_eq!(list["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(list["tasks"][0]["taskId"], task_id);

    // tasks/result waits for the end; meanwhile progress (related to no
    // request, tagged with the task) and the status change arrive.
    core.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result",
                     "params": {"taskId": task_id}}));
    let (reply, before) = core.reply_to(4).await;
    let progress: Vec<&Out> =
        before.iter().filter(|o| o.message["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 2, "{before:?}");
    for (i, out) in progress.iter().enumerate() {
        assert_eq!(out.related, None);
        assert_eq!(out.message["params"]["progressToken"], "p");
        assert_eq!(out.message["params"]["progress"], i + 1);
        assert_eq!(out.message["params"]["_meta"][RELATED_TASK], json!({"taskId": task_id}));
    }
    let result = &reply["result"];
    assert_eq!(text_of(result), "done");
    assert_eq!(result["_meta"][RELATED_TASK], json!({"taskId": task_id}));
    // The status notification comes before or after the reply.
    let status = match before.iter().find(|o| o.message["method"] == "notifications/tasks/status") {
        Some(out) => out,
        None => &core.next().await,
    };
    assert_status_note(status, &task_id, "completed");
    assert!(core.quiet().await);

    let got = core.result(5, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["status"], "completed");
    // The result stays available.
    let again = core.result(6, "tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(again, *result);
}

#[tokio::test]
async fn quick_and_failing_tasks() {
    let mut core = Core::ready(Config::default()).await;
    // A tool that answers at once: created, then completed at once.
    let task = create_task(&mut core, 1, "echo", json!({"message": "hi"}), json!({})).await;
    assert_eq!(task["ttl"], 600_000, "the default ttl");
    assert_status_note(&core.next().await, &task["taskId"], "completed");
    let result = core.result(2, "tasks/result", json!({"taskId": task["taskId"]})).await;
    assert_eq!(text_of(&result), "hi");

    // isError: the task failed, the result is still the tool's.
    let task = create_task(&mut core, 3, "fail", json!({"message": "bad"}), json!({})).await;
    assert_status_note(&core.next().await, &task["taskId"], "failed");
    let result = core.result(4, "tasks/result", json!({"taskId": task["taskId"]})).await;
    assert_eq!(result["isError"], true);
    assert_eq!(text_of(&result), "bad");
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], task["taskId"]);

    let list = core.result(5, "tasks/list", json!({})).await;
    let statuses: Vec<&str> =
        list["tasks"].as_array().unwrap().iter().map(|t| t["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["completed", "failed"]);
}

#[tokio::test]
async fn cancelling_a_task() {
    let mut core = Core::ready(Config::default()).await;
    let task = create_task(&mut core, 1, "hang", json!({}), json!({"ttl": 1000})).await;
    let task_id = task["taskId"].clone();
    // A waiting tasks/result gets the cancellation.
    core.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
                     "params": {"taskId": task_id}}));
    assert!(core.quiet().await, "tasks/result answered a working task");

    core.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel",
                     "params": {"taskId": task_id}}));
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(core.next().await);
    }
    let cancel = seen.iter().find(|o| o.message["id"] == 3).expect("the cancel reply");
    assert_eq!(cancel.message["result"]["status"], "cancelled");
    assert_eq!(cancel.message["result"]["taskId"], task_id);
    assert!(cancel.message["result"]["statusMessage"].is_string());
    let note = seen.iter().find(|o| o.message.get("method").is_some()).expect("the notification");
    assert_status_note(note, &task_id, "cancelled");
    let waiting = seen.iter().find(|o| o.message["id"] == 2).expect("the tasks/result reply");
    assert_eq!(waiting.message["error"]["code"], -32603, "{waiting:?}");
    assert_eq!(waiting.message["error"]["data"]["taskId"], task_id);

    // Terminal: cancelling again is invalid; the state stays.
    assert_eq!(core.error(4, "tasks/cancel", json!({"taskId": task_id})).await, -32602);
    let got = core.result(5, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["status"], "cancelled");
    assert_eq!(core.error(6, "tasks/result", json!({"taskId": task_id})).await, -32603);

    // A completed task cannot be cancelled either.
    let done = create_task(&mut core, 7, "echo", json!({"message": "x"}), json!({})).await;
    assert_status_note(&core.next().await, &done["taskId"], "completed");
    assert_eq!(core.error(8, "tasks/cancel", json!({"taskId": done["taskId"]})).await, -32602);
    assert!(core.quiet().await);
}

#[tokio::test]
async fn task_errors() {
    let mut core = Core::ready(Config::default()).await;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        for params in [json!({"taskId": "task-99"}), json!({"taskId": "nope"}), json!({})] {
            assert_eq!(core.error(1, method, params.clone()).await, -32602, "{method} {params}");
        }
    }
    let call = |name: &str, task: Value| json!({"name": name, "arguments": {}, "task": task});
    // Tools without execution.taskSupport refuse tasks with -32601.
    for tool in ["log", "change", "touch", "crash", "ask"] {
        assert_eq!(core.error(2, "tools/call", call(tool, json!({}))).await, -32601, "{tool}");
    }
    assert_eq!(core.error(3, "tools/call", call("nope", json!({}))).await, -32602);
    assert_eq!(core.error(4, "tools/call", call("echo", json!(5))).await, -32602);
    assert_eq!(core.error(5, "tools/call", call("echo", json!({"ttl": "long"}))).await, -32602);
    assert_eq!(core.error(6, "tools/call", call("echo", json!({"ttl": -1}))).await, -32602);
    // No task was created by any of that.
    assert_eq!(core.result(7, "tasks/list", json!({})).await, json!({"tasks": []}));
    // The tools that take tasks say so.
    let tools = core.result(8, "tools/list", json!({})).await;
    let optional: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["execution"]["taskSupport"] == "optional")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(optional, ["echo", "add", "slow", "hang", "fail"]);
    // A `task: null` is no task.
    let result = core.result(9, "tools/call", call("echo", Value::Null)).await;
    assert!(result.get("task").is_none(), "{result}");
}

#[tokio::test]
async fn tasks_are_listed_in_pages_and_a_cancelled_wait_is_not_answered() {
    let mut core = Core::ready(paged(2)).await;
    let mut ids = Vec::new();
    for id in 1..=3 {
        let task = create_task(&mut core, id, "hang", json!({}), json!({})).await;
        ids.push(task["taskId"].clone());
    }
    let first = core.result(10, "tasks/list", json!({})).await;
    assert_eq!(first["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(first["tasks"][0]["taskId"], ids[0]);
    let second = core.result(11, "tasks/list", json!({"cursor": first["nextCursor"]})).await;
    assert_eq!(second["tasks"][0]["taskId"], ids[2]);
    assert!(second.get("nextCursor").is_none());
    assert_eq!(core.error(12, "tasks/list", json!({"cursor": "page:3"})).await, -32602);

    // notifications/cancelled for a waiting tasks/result: never answered,
    // the task itself goes on.
    core.send(json!({"jsonrpc": "2.0", "id": 13, "method": "tasks/result",
                     "params": {"taskId": ids[0]}}));
    core.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 13}}));
    assert!(core.quiet().await);
    let got = core.result(14, "tasks/get", json!({"taskId": ids[0]})).await;
    assert_eq!(got["status"], "working");
}

#[tokio::test]
async fn the_conformance_fixtures_are_listed_and_answer_only_when_on() {
    let mut off = Core::ready(Config::default()).await;
    let tools = off.result(1, "tools/list", json!({})).await;
    assert!(!tools["tools"].as_array().unwrap().iter().any(|t| t["name"] == "test_simple_text"));
    assert_eq!(off.error(2, "tools/call", json!({"name": "test_simple_text"})).await, -32602);

    let config = Config { conformance_fixtures: true, ..Config::default() };
    let mut on = Core::ready(config).await;
    let tools = on.result(1, "tools/list", json!({})).await;
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"test_tool_with_progress"), "{names:?}");
    let (mixed, _) = on.call(2, "test_multiple_content_types", json!({})).await;
    let kinds: Vec<&str> = mixed["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let (error, _) = on.call(3, "test_error_handling", json!({})).await;
    assert_eq!(error["result"]["isError"], true);
    on.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}}));
    let (done, before) = on.reply_to(4).await;
    let progress: Vec<i64> =
        before.iter().filter_map(|o| o.message["params"]["progress"].as_i64()).collect();
    assert_eq!(progress, [0, 50, 100]);
    assert!(before.iter().all(|o| o.related == Some(4.into())));
    assert!(text_of(&done["result"]).starts_with("Progress tool completed"));
}

#[tokio::test]
async fn the_conformance_fixture_resources_and_prompts() {
    let config = Config { conformance_fixtures: true, ..Config::default() };
    let mut core = Core::ready(config).await;
    let listed = core.result(1, "resources/list", json!({})).await;
    let uris: Vec<&str> =
        listed["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"test://static/text/1") && uris.contains(&"test://static-binary"));
    let read = core.result(2, "resources/read", json!({"uri": "test://template/42/data"})).await;
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("42"));
    assert_eq!(
        core.result(3, "resources/subscribe", json!({"uri": "test://watched-resource"})).await,
        json!({})
    );
    let prompt = core
        .result(
            4,
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                                         "arguments": {"arg1": "a", "arg2": "b"}}),
        )
        .await;
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    assert_eq!(
        core.error(5, "prompts/get", json!({"name": "test_prompt_with_arguments"})).await,
        -32602
    );
    // The testkit's own prompts are still there.
    let greet =
        core.result(6, "prompts/get", json!({"name": "greet", "arguments": {"name": "Bo"}})).await;
    assert!(greet["messages"][0]["content"]["text"].as_str().unwrap().contains("Bo"));
}
