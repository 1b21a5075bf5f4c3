//! The result types a server sends: `CallToolResult`, `ListToolsResult`,
//! `InitializeResult`, `DiscoverResult` and `InputRequiredResult` decode
//! from any bytes without panicking, and what decodes encodes and decodes
//! again to the same JSON; a decoded tool result renders. `result_kind`
//! never panics and agrees with the text's `resultType`.
#![no_main]

mod common;

use common::same_json;
use libfuzzer_sys::fuzz_target;
use mcp_proto::types::{
    CallToolResult, DiscoverResult, InitializeResult, InputRequiredResult, ListToolsResult,
    ResultKind, result_kind,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `bytes` as `T`; if that works, the value encodes, and its
/// encoding decodes to a value that encodes to the same JSON.
fn round_trip<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Option<T> {
    let first: T = serde_json::from_slice(bytes).ok()?;
    let text = serde_json::to_vec(&first).expect("a decoded result encodes");
    let again: T = match serde_json::from_slice(&text) {
        Ok(t) => t,
        Err(e) => panic!("{} does not decode again: {e}", String::from_utf8_lossy(&text)),
    };
    let (a, b) = (serde_json::to_value(&first), serde_json::to_value(&again));
    match (a, b) {
        (Ok(a), Ok(b)) => assert!(same_json(&a, &b), "{a} / {b}"),
        // Deeper than serde_json's recursion limit as a `Value`: compare text.
        _ => assert_eq!(text, serde_json::to_vec(&again).unwrap()),
    }
    Some(first)
}

fn check_result_kind(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let kind = result_kind(text);
    if let Err(e) = &kind {
        let _ = e.to_string();
    }
    let value: Option<Value> = serde_json::from_str(text).ok();
    let Some(value) = value else { return };
    let Some(object) = value.as_object() else {
        assert!(kind.is_err(), "{kind:?} for a non-object");
        return;
    };
    let member = object.get("resultType");
    match kind {
        Ok(ResultKind::InputRequired) => assert_eq!(member, Some(&Value::from("input_required"))),
        Ok(ResultKind::Task) => assert_eq!(member, Some(&Value::from("task"))),
        // An escaped member name is not looked for (the text is scanned for
        // `"resultType"` first).
        Ok(ResultKind::Complete) if !text.contains('\\') => assert!(
            matches!(member, None | Some(Value::Null)) || member == Some(&Value::from("complete")),
            "Complete for resultType {member:?}"
        ),
        _ => {}
    }
}

fuzz_target!(|bytes: &[u8]| {
    if let Some(result) = round_trip::<CallToolResult>(bytes) {
        let rendered = mcp_proto::render_tool_result(&result);
        assert_eq!(rendered.is_error, result.is_error == Some(true));
    }
    round_trip::<ListToolsResult>(bytes);
    round_trip::<InitializeResult>(bytes);
    round_trip::<DiscoverResult>(bytes);
    round_trip::<InputRequiredResult>(bytes);
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        let _ = mcp_proto::render_tool_result_value(&value);
    }
    check_result_kind(bytes);
});
