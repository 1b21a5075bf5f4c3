//! Decodes one JSON-RPC message (or batch), says what it is, and renders a
//! `tools/call` result the way a host shows it to a model. No I/O beyond
//! reading the argument: this crate never touches a socket or a process.
//!
//! `cargo run -p mcp-proto --example decode` (a built-in tool result), or
//! `cargo run -p mcp-proto --example decode -- '{"jsonrpc":"2.0","id":1,"method":"ping"}'`
#![allow(clippy::print_stdout)]

use mcp_proto::jsonrpc::{self, Incoming, Message};
use mcp_proto::render_tool_result_value;

const SAMPLE: &str = r#"{"jsonrpc":"2.0","id":7,"result":{
    "content":[
        {"type":"text","text":"Here is the chart."},
        {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
        {"type":"resource_link","uri":"file:///data.csv","name":"data.csv"}
    ],
    "structuredContent":{"rows":42}}}"#;

fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| SAMPLE.to_owned());
    match jsonrpc::decode_slice(text.as_bytes()) {
        Ok(Incoming::Single(message)) => describe(&message),
        Ok(Incoming::Batch(items)) => {
            println!("a batch of {}", items.len());
            for item in items {
                match item {
                    Ok(message) => describe(&message),
                    Err(e) => println!("  not a message: {e}"),
                }
            }
        }
        // The error says what was wrong, never panics on input.
        Err(e) => println!("not a JSON-RPC message: {e}"),
    }
}

fn describe(message: &Message) {
    match message {
        Message::Request(r) => println!("request {} `{}`", r.id, r.method),
        Message::Notification(n) => println!("notification `{}`", n.method),
        Message::Error(e) => println!("error response {}: {}", e.error.code, e.error.message),
        Message::Response(r) => {
            println!("response to {}", r.id);
            // Best effort: a result that is not a `CallToolResult` renders
            // as whatever content it has.
            if r.result.get("content").is_some() {
                let rendered = render_tool_result_value(&r.result);
                println!("--- as a model sees it (is_error: {}) ---", rendered.is_error);
                println!("{}", rendered.text);
                if let Some(structured) = rendered.structured_content {
                    println!("--- structured content ---\n{structured}");
                }
            }
        }
    }
}
