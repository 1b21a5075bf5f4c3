//! The blocking client from plain functions: no async runtime anywhere in
//! this file (feature `blocking`).

use std::sync::Arc;
use std::time::Duration;

use mcp_client_stdio::serde_json::json;
use mcp_client_stdio::{ServerCommand, StdioOptions};
use mcp_proto::client::{ServerNotification, StaticRoots};
use mcp_proto::types::Root;

fn testkit() -> ServerCommand {
    ServerCommand::new(mcp_testkit::binary_path().to_string_lossy().into_owned()).arg("stdio")
}

fn options() -> StdioOptions {
    let mut o = StdioOptions::new("testkit");
    o.discover_path = false;
    o.request_timeout = Duration::from_secs(10);
    o
}

#[test]
fn a_plain_function_talks_to_a_stdio_server() {
    let mut o = options();
    o.handlers.roots = Some(Arc::new(StaticRoots(vec![Root::new("file:///plain")])));
    let client = mcp_client_stdio::blocking::spawn(testkit(), o).unwrap();
    client.ping().unwrap();
    assert_eq!(client.client().server_info().unwrap().name, "mcp-testkit");
    let tools = client.list_tools().unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let r = client.call_tool("echo", json!({"message": "no runtime here"})).unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "no runtime here");
    // The server's request is answered by the handler on the client's own
    // runtime while this thread waits.
    let roots = client.call_tool("ask", json!({"what": "roots"})).unwrap();
    assert!(mcp_proto::render_tool_result(&roots).text.contains("file:///plain"));
    // Notifications, blocking.
    let mut notifications = client.notifications();
    client.call_tool("change", ()).unwrap();
    let n = notifications.recv_timeout(Duration::from_secs(5));
    assert_eq!(n, Some(ServerNotification::ToolListChanged));
    assert_eq!(notifications.recv_timeout(Duration::from_millis(50)), None);
    // A timeout is an error, not a hang.
    let quick = mcp_proto::client::RequestOptions::with_timeout(Duration::from_millis(200));
    let err = client.call_tool_with("hang", (), quick).unwrap_err();
    assert!(matches!(err, mcp_client_stdio::Error::Timeout { .. }), "{err:?}");
    let pid = client.client().transport().pid().unwrap();
    client.close().unwrap();
    assert!(client.ping().is_err());
    // The process is gone.
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || cfg!(not(target_os = "linux"))
    );
}

#[test]
fn a_missing_command_is_an_error_of_the_transport() {
    let command = ServerCommand::new("mcp-no-such-command-here");
    match mcp_client_stdio::blocking::spawn(command, options()) {
        Err(mcp_peer::blocking::ConnectError::Transport(
            mcp_client_stdio::Error::CommandNotFound { .. },
        )) => {}
        other => panic!("{other:?}"),
    }
}
