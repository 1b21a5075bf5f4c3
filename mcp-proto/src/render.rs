//! Rendering a `tools/call` result for a model.
//!
//! A host hands a model text. [`render_tool_result`] (typed) and
//! [`render_tool_result_value`] (raw JSON, best effort) turn a result into a
//! [`RenderedToolResult`]: the text, whether the tool failed, the structured
//! content alongside, and the raw result.
//!
//! # The text
//!
//! Each content block becomes one piece, and the pieces are joined with
//! `"\n"` in the order of the blocks:
//!
//! | block | piece |
//! |---|---|
//! | `text` | the text, verbatim |
//! | `resource` with `text` | `[resource: URI]` (or `[resource: URI, MIME]`), a newline, then the text |
//! | `resource` with `blob` | `[resource: URI, MIME, SIZE]` |
//! | `resource_link` | `[resource link: URI, name: NAME]`, with `, title: TITLE` and `, description: DESCRIPTION` before the `]` when present |
//! | `image` | `[image: MIME, SIZE]` |
//! | `audio` | `[audio: MIME, SIZE]` |
//! | any other `type` | `[unsupported content: TYPE]` |
//! | not an object, or no string `type` | `[unsupported content]` |
//!
//! SIZE is the decoded size of the base64 data, computed from its length
//! (whitespace and `=` padding not counted): `N B` below 1024 bytes, else
//! `X.Y KiB`, `X.Y MiB` or `X.Y GiB` with one decimal (1024-based). A missing
//! MIME type reads `unknown type`, a missing URI `unknown URI`, missing data
//! `unknown size`.
//!
//! When the result has no content blocks but has `structuredContent`, the
//! text is that value as compact JSON, so the model still sees the result.
//! Broken results render best effort: a `content` that is a string is used
//! as the text, a `content` of any other non-array kind counts as no blocks,
//! and a result that is not a JSON object at all renders as compact JSON.
//!
//! `is_error` is true only when `isError` is the boolean `true`.

use std::fmt::Write as _;

use serde_json::Value;

use crate::types::CallToolResult;

/// What a host shows a model for a tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedToolResult {
    /// The content rendered as text (see the [module docs](self)).
    pub text: String,
    /// Whether the tool reported a failure (`isError` is `true`).
    pub is_error: bool,
    /// The `structuredContent`, if the result had one (a `null` counts as
    /// none).
    pub structured_content: Option<Value>,
    /// The whole result as JSON.
    pub raw: Value,
}

/// Renders a typed `tools/call` result.
///
/// ```
/// use mcp_proto::render_tool_result;
/// use mcp_proto::types::{CallToolResult, ContentBlock, ImageContent};
///
/// let result = CallToolResult {
///     content: vec![
///         ContentBlock::text("Found one chart."),
///         ContentBlock::Image(ImageContent {
///             data: "iVBORw0KGgo=".into(),
///             mime_type: "image/png".into(),
///             ..Default::default()
///         }),
///     ],
///     ..Default::default()
/// };
/// let rendered = render_tool_result(&result);
/// assert_eq!(rendered.text, "Found one chart.\n[image: image/png, 8 B]");
/// assert!(!rendered.is_error);
/// ```
pub fn render_tool_result(result: &CallToolResult) -> RenderedToolResult {
    // Encoding a `CallToolResult` cannot fail: every key is a string.
    let raw = serde_json::to_value(result).unwrap_or(Value::Null);
    render_raw(raw)
}

/// Renders a `tools/call` result given as raw JSON, best effort: it never
/// fails, and renders what it can of a result that does not decode as a
/// [`CallToolResult`] (a malformed block becomes a summary, not an error).
///
/// ```
/// use mcp_proto::render_tool_result_value;
///
/// let result = serde_json::json!({
///     "content": [{"type": "text", "text": "disk full"}, {"type": "hologram"}],
///     "isError": true
/// });
/// let rendered = render_tool_result_value(&result);
/// assert_eq!(rendered.text, "disk full\n[unsupported content: hologram]");
/// assert!(rendered.is_error);
/// ```
pub fn render_tool_result_value(result: &Value) -> RenderedToolResult {
    render_raw(result.clone())
}

fn render_raw(raw: Value) -> RenderedToolResult {
    let Value::Object(obj) = &raw else {
        return RenderedToolResult {
            text: raw.to_string(),
            is_error: false,
            structured_content: None,
            raw,
        };
    };
    let structured_content = obj.get("structuredContent").filter(|v| !v.is_null()).cloned();
    let is_error = obj.get("isError") == Some(&Value::Bool(true));
    let pieces: Vec<String> = match obj.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().map(render_block).collect(),
        Some(Value::String(text)) => vec![text.clone()],
        _ => Vec::new(),
    };
    let text = match (&structured_content, pieces.is_empty()) {
        (Some(structured), true) => structured.to_string(),
        _ => pieces.join("\n"),
    };
    RenderedToolResult { text, is_error, structured_content, raw }
}

fn str_member<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn render_block(block: &Value) -> String {
    let Some(kind) = str_member(block, "type") else {
        return "[unsupported content]".to_owned();
    };
    match kind {
        "text" => match str_member(block, "text") {
            Some(text) => text.to_owned(),
            None => "[unsupported content: text]".to_owned(),
        },
        "image" | "audio" => {
            format!("[{kind}: {}, {}]", mime(block), size(str_member(block, "data")))
        }
        "resource" => match block.get("resource") {
            Some(resource) => render_embedded(resource),
            None => "[unsupported content: resource]".to_owned(),
        },
        "resource_link" => render_link(block),
        other => format!("[unsupported content: {other}]"),
    }
}

fn mime(value: &Value) -> &str {
    str_member(value, "mimeType").unwrap_or("unknown type")
}

fn render_embedded(resource: &Value) -> String {
    let uri = str_member(resource, "uri").unwrap_or("unknown URI");
    if let Some(text) = str_member(resource, "text") {
        return match str_member(resource, "mimeType") {
            Some(mime) => format!("[resource: {uri}, {mime}]\n{text}"),
            None => format!("[resource: {uri}]\n{text}"),
        };
    }
    format!("[resource: {uri}, {}, {}]", mime(resource), size(str_member(resource, "blob")))
}

fn render_link(link: &Value) -> String {
    let uri = str_member(link, "uri").unwrap_or("unknown URI");
    let mut out = format!("[resource link: {uri}");
    if let Some(name) = str_member(link, "name") {
        let _ = write!(out, ", name: {name}");
    }
    if let Some(title) = str_member(link, "title") {
        let _ = write!(out, ", title: {title}");
    }
    if let Some(description) = str_member(link, "description") {
        let _ = write!(out, ", description: {description}");
    }
    out.push(']');
    out
}

/// The decoded size of base64 `data`, formatted; `unknown size` without data.
fn size(data: Option<&str>) -> String {
    match data {
        Some(data) => format_size(base64_decoded_len(data)),
        None => "unknown size".to_owned(),
    }
}

/// How many bytes base64 `data` decodes to, from its length alone: every 4
/// characters carry 3 bytes; padding and white space carry none, and a
/// trailing group of 2 or 3 characters carries 1 or 2 bytes. Works for
/// padded, unpadded and URL-safe base64 alike.
pub fn base64_decoded_len(data: &str) -> u64 {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').count() as u64;
    chars * 3 / 4
}

/// Formats a byte count: `N B` below 1 KiB, else one decimal and a binary
/// unit (`12.3 KiB`, `1.0 MiB`, `2.5 GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    // 1023.95 and up would print as "1024.0": move to the next unit.
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
