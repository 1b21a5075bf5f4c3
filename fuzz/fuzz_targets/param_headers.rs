//! `x-mcp-header`: reading a tool's annotations, keeping the valid tools,
//! and the headers of a call never panic; every header is a valid HTTP
//! header (`Mcp-Param-` and a token, a visible-ASCII value) whose value
//! decodes back to the argument's text; `encode_header_value` of any text
//! is visible ASCII and decodes back to that text.
//!
//! The input is JSON: `{"tool": TOOL, "arguments": {...}}`, or a tool
//! alone; any other bytes go to `encode_header_value` as text.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use mcp_proto::client::headers::{
    PARAM_HEADER_PREFIX, encode_header_value, is_token, param_header_values, param_headers,
    param_text, retain_valid_tools,
};
use mcp_proto::types::Tool;
use serde_json::Value;

/// The text a header value stands for.
fn decode_header_value(value: &str) -> String {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_else(|e| panic!("{value:?} is not base64: {e}"));
            String::from_utf8(bytes).expect("the encoded text is UTF-8")
        }
        None => value.to_owned(),
    }
}

fn check_encoding(text: &str) {
    let value = encode_header_value(text);
    assert!(value.bytes().all(|b| (0x20..0x7f).contains(&b)), "{value:?} is not visible ASCII");
    assert!(http::HeaderValue::from_str(&value).is_ok(), "{value:?}");
    assert_eq!(decode_header_value(&value), text);
}

fn check_tool(tool: &Tool, arguments: Option<&serde_json::Map<String, Value>>) {
    let params = param_headers(&tool.input_schema);
    let kept = retain_valid_tools(vec![tool.clone()]);
    assert_eq!(kept.len(), usize::from(params.is_ok()));
    let values = param_header_values(tool, arguments);
    let params = match params {
        Ok(params) => params,
        Err(e) => {
            let _ = e.to_string();
            assert!(values.is_empty());
            return;
        }
    };
    let properties = tool.input_schema.properties.as_ref();
    for (i, p) in params.iter().enumerate() {
        assert!(is_token(&p.name), "{:?}", p.name);
        assert!(properties.is_some_and(|props| props.contains_key(&p.property)));
        for q in &params[..i] {
            assert!(q.property < p.property, "not sorted by property");
            assert!(!q.name.eq_ignore_ascii_case(&p.name), "a repeated name");
        }
    }
    for (name, value) in &values {
        assert!(name.starts_with(PARAM_HEADER_PREFIX));
        assert!(is_token(name));
        assert!(http::HeaderName::from_bytes(name.as_bytes()).is_ok(), "{name:?}");
        assert!(http::HeaderValue::from_str(value).is_ok(), "{value:?}");
        let param = params.iter().find(|p| p.header_name() == *name).expect("a declared header");
        let argument = arguments.and_then(|a| a.get(&param.property)).expect("an argument given");
        let text = param_text(param.kind, argument).expect("an argument of the declared type");
        assert_eq!(decode_header_value(value), text);
    }
}

fuzz_target!(|bytes: &[u8]| {
    check_encoding(&String::from_utf8_lossy(bytes));
    let Ok(input) = serde_json::from_slice::<Value>(bytes) else { return };
    let (tool, arguments) = match input.get("tool") {
        Some(tool) => (tool.clone(), input.get("arguments").and_then(Value::as_object).cloned()),
        None => (input.clone(), None),
    };
    let Ok(tool) = serde_json::from_value::<Tool>(tool) else { return };
    check_tool(&tool, arguments.as_ref());
    // The arguments as the schema's own property values, when none were given.
    if arguments.is_none()
        && let Some(props) = &tool.input_schema.properties
    {
        let args = props
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.clone())))
            .collect();
        check_tool(&tool, Some(&args));
    }
});
