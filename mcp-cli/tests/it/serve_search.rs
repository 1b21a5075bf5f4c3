//! `mcpc serve --tools search`: two tools that find and call the servers'
//! tools through every check, and schemas shaped for a provider
//! (`--schema-for`) with the arguments mapped back.

use mcp_peer::EraChoice;
use mcp_proto::client::{RequestOptions, ServerNotification};
use mcp_proto::types::CallToolResult;
use mcp_test_support::text_blocks;
use serde_json::{Map, Value, json};

use crate::run::Sandbox;
use crate::serve_support::{
    args, call, counting_progress, host, next_matching, server_spec, two_servers,
};

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
