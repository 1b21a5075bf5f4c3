//! What a tool result is taken as: typed, and checked against the tool's
//! output schema (feature `schema`); or the server's JSON text as it
//! came.

use std::sync::Arc;
use std::time::Duration;

use mcp_peer::memory::{self, MemoryError, MemoryTransport};
use mcp_peer::{Client, EraChoice, RequestOptions};
use mcp_proto::client::ClientError;
use mcp_proto::types::CallToolResult;
use serde_json::{Value, json};

use crate::common::options;

/// A hand-written server in memory that answers every request from a table.
#[cfg(feature = "schema")]
fn scripted(answers: Vec<(&'static str, Value)>) -> Client<MemoryTransport> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let method = msg["method"].as_str().unwrap_or_default();
            let result = match method {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"},
                }),
                _ => answers.iter().find(|(m, _)| *m == method).map(|(_, r)| r.clone()).unwrap(),
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            end.send(reply.to_string().as_bytes());
        }
    });
    client
}

#[cfg(feature = "schema")]
#[tokio::test(start_paused = true)]
async fn typed_results_are_checked_against_the_output_schema() {
    let tools = json!({"tools": [{
        "name": "sum",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
    }]});
    #[derive(serde::Deserialize, Debug)]
    struct Loose {
        #[allow(dead_code)]
        sum: Value,
    }
    // A result that fits its schema decodes.
    let good = json!({"content": [], "structuredContent": {"sum": 3}});
    let client = scripted(vec![("tools/list", tools.clone()), ("tools/call", good)]);
    client.call_tool_as::<Loose>("sum", ()).await.unwrap();
    // One that does not is refused with the instance path, even though `R`
    // would have taken it.
    let bad = json!({"content": [], "structuredContent": {"sum": "three"}});
    let client = scripted(vec![("tools/list", tools), ("tools/call", bad)]);
    let err = client.call_tool_as::<Loose>("sum", ()).await.unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("outputSchema") && shown.contains("/sum"), "{shown}");
}

/// A handshake-era server in memory whose `tools/call` results are the
/// given JSON texts, in turn, written into the reply as they are.
fn raw_results(results: Vec<&'static str>) -> Client<MemoryTransport> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    tokio::spawn(async move {
        let mut results = results.into_iter();
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let result = match msg["method"].as_str().unwrap_or_default() {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                })
                .to_string(),
                _ => results.next().unwrap_or("{}").to_owned(),
            };
            let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            end.send(reply.as_bytes());
        }
    });
    client
}

#[tokio::test(start_paused = true)]
async fn a_call_for_its_json_gives_the_server_s_text_as_it_came_and_refuses_a_non_object() {
    // Escapes, non-ASCII text and an escaped surrogate pair, a number no
    // float holds, `_meta`, nesting, members in no sorted order, spaces.
    let unusual = concat!(
        r#"{"structuredContent":{"n":123456789012345678901234567890,"f":1.0e-7,"#,
        r#""deep":[[[{"a":[null,true,false]}]]]},"content":[{"type":"text","#,
        r#""text":"tab\t quote\" backslash\\ slash\/ \u00e9 é \ud83d\ude00 😀"}],"#,
        r#""_meta":{"x.y/z":{"k":[]}}, "isError" : false }"#
    );
    let client = raw_results(vec![unusual, "[1, 2]", "42", r#""text""#, "null"]);
    let raw = client.call_tool_json("t", (), RequestOptions::default()).await.unwrap();
    assert_eq!(raw.get(), unusual);
    for _ in 0..4 {
        let err = client.call_tool_json("t", (), RequestOptions::default()).await.unwrap_err();
        match err {
            MemoryError::Protocol(ClientError::InvalidResult { method, reason }) => {
                assert_eq!(method, "tools/call");
                assert!(reason.contains("not a JSON object"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}

/// A `tools/call` result decoded once, as its answer is read, comes out as
/// the general path's (the result as JSON text, then decoded) would: the
/// same result, the same `InvalidResult`, the same refusal of a line that
/// is not JSON-RPC. Handshake era.
#[tokio::test(start_paused = true)]
async fn a_call_result_decoded_as_it_is_read_is_the_general_paths_result() {
    decoded_as_read_against_general(EraChoice::Legacy, &[]).await;
}

/// The same in the stateless era, where the era's rules read each result's
/// `resultType` first: only a complete result is decoded as it is read;
/// any other kind (input wanted, a task handle, one unknown, the member
/// twice or spelled with escapes) has the general path's outcome.
#[tokio::test(start_paused = true)]
async fn a_stateless_call_result_decoded_as_it_is_read_is_the_general_paths_result() {
    let kinds = [
        r#"{"resultType":"complete","content":[{"type":"text","text":"hi"}]}"#,
        r#"{"_meta":{"resultType":"task"},"content":[],"resultType":"complete"}"#,
        r#"{"content":[{"type":"text","text":"resultType"}],"x":{"resultType":"odd"}}"#,
        r#"{"resultType":"input_required","requestState":"s"}"#,
        r#"{"resultType":"task","task":{"taskId":"t"}}"#,
        r#"{"resultType":"later","content":[]}"#,
        r#"{"resultType":7,"content":[]}"#,
        r#"{"resultType":"complete","content":[],"resultType":"complete"}"#,
        r#"{"result\u0054ype":"task","content":[],"resultType":"complete"}"#,
        r#"{"result\u0054ype":"complete","content":[]}"#,
        r#"{"resultType":"compl\u0065te","content":[]}"#,
    ];
    decoded_as_read_against_general(EraChoice::Modern, &kinds).await;
}

/// Calls a scripted server of `era` whose `tools/call` result is the text
/// the call names, once for a decoded result and once for the text, for
/// each of the shared bodies and `more`: both ways have the same outcome.
async fn decoded_as_read_against_general(era: EraChoice, more: &[&str]) {
    let (transport, mut end) = memory::pair();
    let mut o = options();
    o.era = era;
    let client = Client::new(transport, o);
    let sender = end.sender();
    let refused = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = refused.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let line = match msg["method"].as_str() {
                Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}})
                .to_string(),
                Some("server/discover") => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}})
                .to_string(),
                // The result is the text the call asked for, as it is.
                _ => {
                    let body = msg["params"]["arguments"]["body"].as_str().unwrap();
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{body}}}"#)
                }
            };
            if !sender.send(line.as_bytes()) {
                seen.lock().unwrap().push(line);
            }
        }
    });
    let within = || RequestOptions::with_timeout(Duration::from_secs(5));
    let bodies = [
        r#"{"content":[{"type":"text","text":"hi"}]}"#,
        r#"{"content":[{"type":"text","text":"h\u00e9\n"}],"isError":true,"x":{"y":[1,2.5e3]}} "#,
        r#"{"content":[],"structuredContent":{"a":null},"_meta":{"k":"v"}}"#,
        r#"{"resultType":"task","task":{"taskId":"t"}}"#,
        r#"{}"#,
        // Valid JSON, not a CallToolResult: InvalidResult either way.
        r#"{"content":"no"}"#,
        r#"{"content":[],"content":[]}"#,
        r#"[1,2]"#,
        r#"null"#,
        // Not JSON-RPC: refused by the reader either way.
        r#"{"content":[]},"error":{"code":1,"message":"m"}"#,
        r#"{"content":[]},"id":9"#,
        r#"{"content":[}"#,
        r#"{"content":[]}x"#,
    ];
    for body in bodies.iter().chain(more) {
        let args = json!({"body": body});
        let typed = client.call_tool_with("x", &args, within()).await;
        let general = client.call_tool_json("x", &args, within()).await;
        match general {
            Ok(raw) => {
                let expected = serde_json::from_str::<CallToolResult>(raw.get());
                match (typed, expected) {
                    (Ok(typed), Ok(expected)) => assert_eq!(typed, expected, "{body}"),
                    (
                        Err(MemoryError::Protocol(ClientError::InvalidResult { reason, .. })),
                        Err(e),
                    ) => {
                        assert_eq!(reason, e.to_string(), "{body}")
                    }
                    (typed, expected) => panic!("{body}: {typed:?} against {expected:?}"),
                }
            }
            // `call_tool_json` refuses a result that is not an object (in
            // the handshake era; the stateless era's rules refuse it first,
            // both ways, below).
            Err(MemoryError::Protocol(ClientError::InvalidResult { .. }))
                if !body.starts_with('{') && era == EraChoice::Legacy =>
            {
                let reason = serde_json::from_str::<CallToolResult>(body).unwrap_err().to_string();
                assert!(
                    matches!(&typed, Err(MemoryError::Protocol(ClientError::InvalidResult { reason: r, .. })) if *r == reason),
                    "{body}: {typed:?}"
                );
            }
            // Failed by the era's rules (a kind it refuses, input it
            // cannot give), or never delivered (both waited until their
            // deadline): the same failure both ways.
            Err(general) => {
                let typed = typed.expect_err(body);
                assert_eq!(typed.to_string(), general.to_string(), "{body}");
                assert_eq!(
                    std::mem::discriminant(&typed),
                    std::mem::discriminant(&general),
                    "{body}"
                );
            }
        }
    }
    // The three lines that are not JSON-RPC, each refused both ways (the
    // one with a second id answers a request long finished).
    let refused = refused.lock().unwrap().clone();
    assert_eq!(refused.len(), 6, "{refused:?}");
    for pair in refused.chunks(2) {
        assert_eq!(
            pair[0].split_once(",\"result\":").map(|p| p.1),
            pair[1].split_once(",\"result\":").map(|p| p.1)
        );
    }
    // The next call goes on.
    let r = client.call_tool_with("x", json!({"body": r#"{"content":[]}"#}), within()).await;
    assert_eq!(r.unwrap(), CallToolResult::default());
}
