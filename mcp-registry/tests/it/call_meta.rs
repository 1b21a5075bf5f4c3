//! What a tool call's `_meta` carries to the server: a per-request log
//! level only to a stateless-era server (a handshake-era session has its
//! level from `logging/setLevel`); every other member as given.

use std::time::Duration;

use mcp_host_registry::{Config, Registry, RegistryOptions, ServerCommand, ServerConfig};
use mcp_proto::client::RequestOptions;
use mcp_proto::types::LOG_LEVEL_META_KEY;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::scripted::Scripted;

fn registry(script: &Scripted) -> Registry {
    let server =
        ServerConfig::stdio("s", ServerCommand::new("unused")).with_timeout(Duration::from_secs(5));
    let options = RegistryOptions::with_connector(script.clone());
    Registry::new(Config { servers: vec![server], ..Default::default() }, options)
}

fn with_meta(meta: Value) -> RequestOptions {
    let Value::Object(meta) = meta else { panic!("an object") };
    RequestOptions { meta: Some(meta), ..Default::default() }
}

#[tokio::test]
async fn a_handshake_era_server_gets_no_per_request_log_level() {
    let script = Scripted::new(vec![json!({"name": "t", "inputSchema": {"type": "object"}})]);
    let r = registry(&script);
    let args = || Some(RawValue::from_string("{}".into()).unwrap());
    // The log level alone: no `_meta` at all.
    let level = json!({LOG_LEVEL_META_KEY: "debug"});
    r.call_tool_text("s", "t", args(), with_meta(level.clone())).await.unwrap();
    // Beside another member: that one goes on.
    let both = json!({LOG_LEVEL_META_KEY: "info", "traceparent": "00-a-b-01"});
    r.call_tool_text("s", "t", args(), with_meta(both)).await.unwrap();
    r.call_tool_json("s", "t", None, with_meta(level.clone())).await.unwrap();
    r.call_tool_with("s", "t", None, with_meta(level)).await.unwrap();
    // No `_meta` given: none sent.
    r.call_tool_text("s", "t", args(), RequestOptions::default()).await.unwrap();
    let sent = script.call_metas();
    let expected =
        [Value::Null, json!({"traceparent": "00-a-b-01"}), Value::Null, Value::Null, Value::Null];
    assert_eq!(sent, expected);
}

/// What [`Registry::speaks_stateless_era`] says without waiting agrees with
/// the era [`Registry::status`] reports, for a server of either era, and
/// says nothing for a connection not open (or a server not declared).
#[cfg(all(feature = "stdio", feature = "http"))]
#[tokio::test]
async fn the_era_of_an_open_connection_is_read_without_waiting() {
    use std::future::Future;
    use std::task::Poll;

    use mcp_proto::Era;

    use crate::common::{stdio_connector, testkit};

    for (era, modern) in [("legacy", false), ("modern", true), ("both", true)] {
        let server = ServerConfig::stdio("s", testkit(&["--era", era]))
            .with_timeout(Duration::from_secs(10));
        let options = RegistryOptions::with_connector(stdio_connector());
        let r = Registry::new(Config { servers: vec![server], ..Default::default() }, options);
        assert_eq!(r.speaks_stateless_era("s"), None, "{era}: not connected yet");
        // Being opened: nothing said, nothing waited for.
        let mut opening = Box::pin(r.initialize("s"));
        let first = std::future::poll_fn(|cx| Poll::Ready(opening.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "{era}: opened at the first poll");
        assert_eq!(r.speaks_stateless_era("s"), None, "{era}: being opened");
        opening.await.unwrap();
        let status = r.status("s").await.unwrap();
        assert_eq!(status.era.map(|e| e == Era::Modern), Some(modern), "{era}: the status");
        assert_eq!(r.speaks_stateless_era("s"), Some(modern), "{era}");
        assert_eq!(r.speaks_stateless_era("unknown"), None, "{era}: not declared");
        r.close("s").await.unwrap();
        assert_eq!(r.speaks_stateless_era("s"), None, "{era}: closed");
    }
}
