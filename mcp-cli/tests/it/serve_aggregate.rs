//! `mcpc serve` over several configured servers: flat names, routing of
//! prompts, resources and completions, the approval policy (deny, ask) and
//! the audit log.

use std::sync::Arc;

use mcp_peer::EraChoice;
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use serde_json::{Value, json};

use crate::run::Sandbox;
use crate::serve_support::{Ada, Declines, args, call, host, two_servers};

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
