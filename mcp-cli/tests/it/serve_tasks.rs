//! `mcpc serve` and tasks: passed through to a host that declares the
//! extension, followed to their result for one that does not.

use std::time::{Duration, Instant};

use mcp_peer::EraChoice;
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use serde_json::{Map, json};

use crate::run::Sandbox;
use crate::serve_support::{call, host, host_options, host_with, testkit};

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

/// A 2026-07-28 host that did not declare the tasks extension gets `-32021`
/// for a tool that runs only as a task, as the server itself answers such
/// a host; a tool that may run as one is followed to its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_requires_a_task_is_refused_to_a_host_without_the_extension() {
    let s = Sandbox::new("serve-task-required");
    let spec = crate::serve_support::server_spec("--era both --conformance-fixtures");
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let err = c.call_tool_with("failing_job", json!({}), RequestOptions::default());
    let err = err.await.unwrap_err();
    // -32021 naming the extension.
    assert!(format!("{err:?}").contains("MissingClientCapability"), "{err:?}");
    assert!(err.to_string().contains("io.modelcontextprotocol/tasks"), "{err}");
    let r = call(&c, "slow_compute", json!({"seconds": 0})).await;
    assert!(!r.is_error.unwrap_or(false), "{r:?}");
    c.close().await.unwrap();
}
