//! Interop: the stdio client against `@modelcontextprotocol/server-everything`
//! from npm, a server nobody in this project wrote.
//!
//! `cargo xtask interop` installs the pinned version and runs this file with
//! `MCP_EVERYTHING_JS` set to its entry point.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::client::RequestOptions;
use mcp_proto::render_tool_result;
use mcp_stdio::{ServerCommand, StdioClient, StdioOptions};
use serde_json::json;

fn everything() -> ServerCommand {
    let js = std::env::var("MCP_EVERYTHING_JS")
        .expect("MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`");
    ServerCommand::new("node").arg(js).arg("stdio")
}

async fn start() -> StdioClient {
    let mut options = StdioOptions::new("everything");
    options.request_timeout = Duration::from_secs(20);
    StdioClient::spawn(everything(), options).await.expect("server-everything starts")
}

#[tokio::test]
async fn handshake_tools_echo_and_sum() {
    let c = start().await;
    // server-everything sends notifications/tools/list_changed before its
    // initialize reply: the handshake must not take it as the reply.
    let init = c.initialize().await.unwrap();
    assert!(init.server_info.name.contains("everything"), "{:?}", init.server_info);
    assert!(init.capabilities.tools.is_some());

    let tools = c.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation", "get-tiny-image"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }

    let echo = c
        .call_tool_with(
            "echo",
            json!({"message": "hello, everything"}).as_object().cloned(),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(render_tool_result(&echo).text.contains("hello, everything"), "{echo:?}");

    let sum = c
        .call_tool_with(
            "get-sum",
            json!({"a": 19, "b": 23}).as_object().cloned(),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(render_tool_result(&sum).text.contains("42"), "{sum:?}");

    let image = c.call_tool_with("get-tiny-image", (), RequestOptions::default()).await.unwrap();
    let rendered = render_tool_result(&image).text;
    assert!(rendered.contains("[image: image/png"), "{rendered}");

    c.ping().await.unwrap();
    c.close().await.unwrap();
}

#[tokio::test]
async fn long_running_tool_reports_progress() {
    let c = start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let options = RequestOptions {
        on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push(p.progress))),
        ..Default::default()
    };
    let result = c
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}).as_object().cloned(),
            options,
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "one progress notification per step: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "progress increases: {seen:?}");
    c.close().await.unwrap();
}
