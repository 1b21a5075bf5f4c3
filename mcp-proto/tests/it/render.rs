//! Rendering tool results for a model: each rule of `mcp_proto::render`.

use mcp_proto::render::{base64_decoded_len, format_size};
use mcp_proto::types::CallToolResult;
use mcp_proto::{RenderedToolResult, render_tool_result, render_tool_result_value};
use serde_json::{Value, json};

/// Renders `input` through the raw path and, when it decodes, the typed path
/// too; both must agree, and the text must be `expected`.
#[track_caller]
fn check(input: Value, expected: &str) -> RenderedToolResult {
    let rendered = render_tool_result_value(&input);
    assert_eq!(rendered.text, expected, "input: {input}");
    assert_eq!(rendered.raw, input);
    if let Ok(typed) = serde_json::from_value::<CallToolResult>(input.clone()) {
        let from_typed = render_tool_result(&typed);
        assert_eq!(from_typed.text, rendered.text, "typed and raw renderings differ: {input}");
        assert_eq!(from_typed.is_error, rendered.is_error);
        assert_eq!(from_typed.structured_content, rendered.structured_content);
    }
    rendered
}

/// The text of a result holding the single block `block`.
#[track_caller]
fn check_block(block: Value, expected: &str) {
    check(json!({"content": [block]}), expected);
}

#[test]
fn text_blocks_are_joined_with_newlines() {
    check(json!({"content": []}), "");
    check(json!({"content": [{"type": "text", "text": "one"}]}), "one");
    check(
        json!({"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two\nthree"}]}),
        "one\ntwo\nthree",
    );
    check(
        json!({"content": [{"type": "text", "text": ""}, {"type": "text", "text": "after empty"}]}),
        "\nafter empty",
    );
    check(
        json!({"content": [{"type": "text", "text": "annotated", "annotations": {"priority": 1}}]}),
        "annotated",
    );
}

#[test]
fn images_and_audio_are_summarised() {
    // "iVBORw0KGgo=" is 8 bytes; 16 base64 characters without padding are 12.
    check_block(
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
        "[image: image/png, 8 B]",
    );
    check_block(
        json!({"type": "image", "data": "", "mimeType": "image/gif"}),
        "[image: image/gif, 0 B]",
    );
    check_block(
        json!({"type": "audio", "data": "AAAAAAAAAAAAAAAA", "mimeType": "audio/wav"}),
        "[audio: audio/wav, 12 B]",
    );
    let kib = "A".repeat(16_796); // 12_597 bytes = 12.3 KiB
    check_block(
        json!({"type": "image", "data": kib, "mimeType": "image/jpeg"}),
        "[image: image/jpeg, 12.3 KiB]",
    );
    let mib = "A".repeat(1_398_104); // 1_048_578 bytes, just over 1 MiB
    check_block(
        json!({"type": "audio", "data": mib, "mimeType": "audio/mpeg"}),
        "[audio: audio/mpeg, 1.0 MiB]",
    );
    // Malformed blocks are summarised by the raw path, not dropped.
    check_block(json!({"type": "image", "data": "AAAA"}), "[image: unknown type, 3 B]");
    check_block(
        json!({"type": "audio", "mimeType": "audio/ogg"}),
        "[audio: audio/ogg, unknown size]",
    );
}

#[test]
fn embedded_resources() {
    check_block(
        json!({"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "line 1\nline 2"}}),
        "[resource: file:///notes.txt]\nline 1\nline 2",
    );
    check_block(
        json!({"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}}),
        "[resource: file:///a.md, text/markdown]\n# A",
    );
    check_block(
        json!({"type": "resource", "resource": {"uri": "file:///a.bin", "mimeType": "application/pdf", "blob": "JVBERi0xLjQ="}}),
        "[resource: file:///a.bin, application/pdf, 8 B]",
    );
    check_block(
        json!({"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}}),
        "[resource: file:///b.bin, unknown type, 3 B]",
    );
    check_block(
        json!({"type": "resource", "resource": {"text": "orphan"}}),
        "[resource: unknown URI]\norphan",
    );
    check_block(json!({"type": "resource"}), "[unsupported content: resource]");
}

#[test]
fn resource_links() {
    check_block(
        json!({"type": "resource_link", "uri": "file:///src/main.rs", "name": "main.rs"}),
        "[resource link: file:///src/main.rs, name: main.rs]",
    );
    check_block(
        json!({"type": "resource_link", "uri": "https://x.example/r", "name": "r", "title": "Report",
               "description": "The weekly report", "mimeType": "text/html", "size": 10}),
        "[resource link: https://x.example/r, name: r, title: Report, description: The weekly report]",
    );
    check_block(
        json!({"type": "resource_link", "name": "no uri"}),
        "[resource link: unknown URI, name: no uri]",
    );
}

#[test]
fn unknown_and_malformed_blocks() {
    check_block(json!({"type": "hologram", "frames": 3}), "[unsupported content: hologram]");
    check_block(json!({"type": "text"}), "[unsupported content: text]");
    check_block(json!({"text": "no type"}), "[unsupported content]");
    check_block(json!("just a string"), "[unsupported content]");
    check(
        json!({"content": [{"type": "text", "text": "before"}, {"type": "video"}, {"type": "text", "text": "after"}]}),
        "before\n[unsupported content: video]\nafter",
    );
}

#[test]
fn is_error_only_when_boolean_true() {
    let cases = [
        (json!({"content": [], "isError": true}), true),
        (json!({"content": [], "isError": false}), false),
        (json!({"content": []}), false),
        (json!({"content": [], "isError": "true"}), false),
        (json!({"content": [], "isError": 1}), false),
        (json!({"content": [], "isError": null}), false),
    ];
    for (input, expected) in cases {
        assert_eq!(check(input.clone(), "").is_error, expected, "{input}");
    }
}

#[test]
fn structured_content_is_kept() {
    let rendered = check(
        json!({"content": [{"type": "text", "text": "{\"t\":22}"}], "structuredContent": {"t": 22}}),
        "{\"t\":22}",
    );
    assert_eq!(rendered.structured_content, Some(json!({"t": 22})));
    // With no content blocks, the structured content is the text.
    let rendered = check(
        json!({"content": [], "structuredContent": {"b": [1, 2], "a": "x"}}),
        r#"{"a":"x","b":[1,2]}"#,
    );
    assert_eq!(rendered.structured_content, Some(json!({"a": "x", "b": [1, 2]})));
    check(json!({"structuredContent": {"ok": true}}), r#"{"ok":true}"#);
    assert_eq!(
        check(json!({"content": [], "structuredContent": null}), "").structured_content,
        None
    );
    assert_eq!(check(json!({"content": []}), "").structured_content, None);
}

#[test]
fn broken_results_render_best_effort() {
    check(json!({"content": "a bare string"}), "a bare string");
    check(json!({"content": {"type": "text", "text": "not an array"}}), "");
    check(json!({}), "");
    check(json!("just text"), "\"just text\"");
    check(json!(null), "null");
    // A typed decode fails (the image has no data), yet the rest renders.
    let input = json!({"content": [{"type": "image", "mimeType": "image/png"}, {"type": "text", "text": "ok"}], "isError": true});
    assert!(serde_json::from_value::<CallToolResult>(input.clone()).is_err());
    assert!(check(input, "[image: image/png, unknown size]\nok").is_error);
}

#[test]
fn typed_rendering_keeps_the_raw_result() {
    let input =
        json!({"content": [{"type": "text", "text": "hi"}], "_meta": {"k": 1}, "future": [true]});
    let typed: CallToolResult = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(render_tool_result(&typed).raw, input);
}

#[test]
fn sizes() {
    let cases = [
        ("", 0),
        ("TQ==", 1),
        ("TWE=", 2),
        ("TWFu", 3),
        ("TWE", 2),
        ("TQ", 1),
        ("TWFu\nTWFu", 6),
        ("SGVsbG8gd29ybGQ_-w", 13),
    ];
    for (data, len) in cases {
        assert_eq!(base64_decoded_len(data), len, "{data:?}");
    }
    let formats = [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (12_597, "12.3 KiB"),
        (1_048_575, "1.0 MiB"),
        (1_048_576, "1.0 MiB"),
        (5 * 1024 * 1024 * 1024 / 2, "2.5 GiB"),
        (3 * 1024 * 1024 * 1024 * 1024, "3072.0 GiB"),
    ];
    for (bytes, text) in formats {
        assert_eq!(format_size(bytes), text, "{bytes}");
    }
}
