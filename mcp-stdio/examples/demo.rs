//! Spawns the project's test server over stdio, lists its tools and calls two.
//!
//! `cargo run -p mcp-client-stdio --example demo`
#![allow(clippy::print_stdout)]

use mcp_client_stdio::{ServerCommand, StdioOptions};
use mcp_proto::client::RequestOptions;
use mcp_proto::render_tool_result;
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), mcp_client_stdio::Error> {
    let server = mcp_testkit::binary_path();
    let command = ServerCommand::new(server.to_string_lossy()).arg("stdio");
    let client = mcp_client_stdio::spawn(command, StdioOptions::new("demo")).await?;
    let init = client.initialize().await?;
    println!(
        "connected to {} {} (protocol {})",
        init.server_info.name, init.server_info.version, init.protocol_version
    );
    for tool in client.list_tools().await?.iter() {
        println!("  {:<14} {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }
    let echo = client
        .call_tool_with(
            "echo",
            json!({"message": "hi"}).as_object().cloned(),
            RequestOptions::default(),
        )
        .await?;
    println!("echo message=hi -> {}", render_tool_result(&echo).text);
    let sum = client
        .call_tool_with(
            "add",
            json!({"a": 2, "b": 40}).as_object().cloned(),
            RequestOptions::default(),
        )
        .await?;
    println!("add a=2 b=40   -> {}", render_tool_result(&sum).text);
    client.close().await
}
