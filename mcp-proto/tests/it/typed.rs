//! Typed helpers over the wire types: `CallToolResult::structured_as`, the
//! constructors of what host handlers return, and (with the `schema`
//! feature) `outputSchema` validation.

use mcp_proto::types::*;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Point {
    x: i64,
    y: i64,
}

/// A short name for what `structured_as` returned, to compare with.
fn kind(result: &Result<Point, StructuredError>) -> String {
    match result {
        Ok(p) => format!("ok {} {}", p.x, p.y),
        Err(StructuredError::NoStructuredContent { blocks }) => format!("none {blocks}"),
        Err(StructuredError::Structured { .. }) => "structured".to_owned(),
        Err(StructuredError::Text { .. }) => "text".to_owned(),
        Err(other) => format!("{other:?}"),
    }
}

#[test]
fn structured_as() {
    let cases: &[(Value, &str)] = &[
        // structuredContent wins, whatever the content says.
        (json!({"content": [], "structuredContent": {"x": 1, "y": 2}}), "ok 1 2"),
        (
            json!({"content": [{"type": "text", "text": "{\"x\": 9, \"y\": 9}"}],
                   "structuredContent": {"x": 1, "y": 2}}),
            "ok 1 2",
        ),
        (json!({"structuredContent": {"x": 1, "y": 2}, "isError": true}), "ok 1 2"),
        // ... and when it does not decode, the text is not tried.
        (
            json!({"content": [{"type": "text", "text": "{\"x\": 9, \"y\": 9}"}],
                   "structuredContent": {"x": "1"}}),
            "structured",
        ),
        (json!({"structuredContent": {"x": 1, "y": 2, "z": 3}}), "structured"),
        (json!({"structuredContent": null}), "none 0"),
        // No structuredContent: the single text block's JSON.
        (json!({"content": [{"type": "text", "text": "{\"x\": 3, \"y\": -4}"}]}), "ok 3 -4"),
        (json!({"content": [{"type": "text", "text": " {\"y\": 0, \"x\": 0}\n"}]}), "ok 0 0"),
        (json!({"content": [{"type": "text", "text": "not json"}]}), "text"),
        (json!({"content": [{"type": "text", "text": "{\"x\": 1}"}]}), "text"),
        (json!({"content": [{"type": "text", "text": ""}]}), "text"),
        // Anything else has nothing to decode.
        (json!({}), "none 0"),
        (json!({"content": []}), "none 0"),
        (
            json!({"content": [{"type": "text", "text": "{\"x\": 1, \"y\": 2}"},
                               {"type": "text", "text": "{\"x\": 1, \"y\": 2}"}]}),
            "none 2",
        ),
        (
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
            "none 1",
        ),
        (json!({"content": [{"type": "future_block", "x": 1, "y": 2}]}), "none 1"),
    ];
    for (input, expected) in cases {
        let result: CallToolResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(kind(&result.structured_as::<Point>()), *expected, "{input}");
    }
}

#[test]
fn structured_as_other_types() {
    let result =
        CallToolResult { content: vec![ContentBlock::text("[1, 2, 3]")], ..Default::default() };
    assert_eq!(result.structured_as::<Vec<u8>>().unwrap(), vec![1, 2, 3]);
    assert_eq!(result.structured_as::<Value>().unwrap(), json!([1, 2, 3]));
    // The text of a plain-text result is JSON only by accident.
    let result = CallToolResult { content: vec![ContentBlock::text("42")], ..Default::default() };
    assert_eq!(result.structured_as::<u32>().unwrap(), 42);
    assert!(result.structured_as::<String>().is_err());
}

#[test]
fn structured_error_messages() {
    let cases: &[(Value, &str)] = &[
        (
            json!({"content": []}),
            "the tool result has no structuredContent and 0 content blocks \
             (a single text block is needed)",
        ),
        (
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
            "the tool result has no structuredContent and its only content block is not text",
        ),
        (
            json!({"structuredContent": {"x": 1}}),
            "the tool result's structuredContent does not decode: missing field `y`",
        ),
        (
            json!({"content": [{"type": "text", "text": "oops"}]}),
            "the tool result's text content does not decode as JSON: expected value at line 1 column 1",
        ),
    ];
    for (input, expected) in cases {
        let result: CallToolResult = serde_json::from_value(input.clone()).unwrap();
        let error = result.structured_as::<Point>().unwrap_err();
        assert_eq!(error.to_string(), *expected);
        let _: &dyn std::error::Error = &error;
    }
}

/// `value` encodes to `expected`, which decodes back to `value`.
#[track_caller]
fn check_encodes<T>(value: T, expected: Value)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_value(&value).unwrap(), expected);
    assert_eq!(serde_json::from_value::<T>(expected).unwrap(), value);
}

#[test]
fn host_handler_constructors() {
    check_encodes(Root::new("file:///src"), json!({"uri": "file:///src"}));
    check_encodes(
        Root::new("file:///src").with_name("Sources"),
        json!({"uri": "file:///src", "name": "Sources"}),
    );
    check_encodes(ListRootsResult::new(vec![]), json!({"roots": []}));
    check_encodes(
        ListRootsResult::new(vec![Root::new("file:///a"), Root::new("file:///b").with_name("b")]),
        json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}),
    );

    check_encodes(
        CreateMessageResult::text("gpt-x", "Hello"),
        json!({"role": "assistant", "content": {"type": "text", "text": "Hello"},
               "model": "gpt-x"}),
    );
    check_encodes(
        CreateMessageResult::text("m", "").with_stop_reason(StopReason::MaxTokens),
        json!({"role": "assistant", "content": {"type": "text", "text": ""},
               "model": "m", "stopReason": "maxTokens"}),
    );
    let sampled = CreateMessageResult::text("m", "hi");
    assert_eq!(sampled.role, Role::Assistant);
    assert_eq!(sampled.content.blocks().len(), 1);

    check_encodes(ElicitResult::decline(), json!({"action": "decline"}));
    check_encodes(ElicitResult::cancel(), json!({"action": "cancel"}));
    check_encodes(
        ElicitResult::accept(Vec::<(String, ElicitValue)>::new()),
        json!({"action": "accept", "content": {}}),
    );
    check_encodes(
        ElicitResult::accept([
            ("email", ElicitValue::from("ada@example.com")),
            ("count", 3.into()),
            ("ok", false.into()),
            ("tags", vec!["a".to_owned(), "b".to_owned()].into()),
        ]),
        json!({"action": "accept",
               "content": {"count": 3, "email": "ada@example.com", "ok": false, "tags": ["a", "b"]}}),
    );
    let mut map = std::collections::BTreeMap::new();
    map.insert("n".to_owned(), ElicitValue::from(1));
    check_encodes(ElicitResult::accept(map), json!({"action": "accept", "content": {"n": 1}}));
}

#[cfg(feature = "schema")]
mod schema {
    use std::time::{Duration, Instant};

    use super::*;

    fn tool(output_schema: Option<Value>) -> Tool {
        let mut tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        if let Some(schema) = output_schema {
            tool["outputSchema"] = schema;
        }
        serde_json::from_value(tool).unwrap()
    }

    /// A short name for the outcome: `ok`, `missing`, `mismatch <path>`,
    /// `invalid`.
    fn outcome(result: Result<(), SchemaError>) -> String {
        match result {
            Ok(()) => "ok".to_owned(),
            Err(SchemaError::MissingStructuredContent) => "missing".to_owned(),
            Err(SchemaError::Mismatch { instance_path, .. }) => format!("mismatch {instance_path}"),
            Err(SchemaError::InvalidSchema { .. }) => "invalid".to_owned(),
            Err(other) => format!("{other:?}"),
        }
    }

    /// Checks every result against `schema`, both through
    /// `validate_structured_content` and a compiled `OutputSchemaValidator`.
    #[track_caller]
    fn check(schema: Option<Value>, cases: &[(Value, &str)]) {
        let tool = tool(schema);
        let compiled = OutputSchemaValidator::new(&tool);
        for (result, expected) in cases {
            let result: CallToolResult = serde_json::from_value(result.clone()).unwrap();
            let outcome_once = outcome(validate_structured_content(&tool, &result));
            assert_eq!(outcome_once, *expected, "{result:?}");
            if let Ok(compiled) = &compiled {
                assert_eq!(outcome(compiled.validate(&result)), *expected, "compiled: {result:?}");
            }
        }
    }

    fn person_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "people": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                        "required": ["name"]
                    }
                }
            },
            "required": ["people"],
            "additionalProperties": false
        })
    }

    #[test]
    fn no_output_schema_accepts_anything() {
        check(
            None,
            &[
                (json!({"content": []}), "ok"),
                (json!({"structuredContent": 5}), "ok"),
                (json!({"structuredContent": {"anything": true}}), "ok"),
            ],
        );
    }

    #[test]
    fn validates_structured_content() {
        check(
            Some(person_schema()),
            &[
                (json!({"structuredContent": {"people": []}}), "ok"),
                (json!({"structuredContent": {"people": [{"name": "Ada", "age": 36}]}}), "ok"),
                (
                    json!({"structuredContent": {"people": [{"name": "Ada"}, {"name": 7}]}}),
                    "mismatch /people/1/name",
                ),
                (
                    json!({"structuredContent": {"people": [{"name": "A", "age": 1.5}]}}),
                    "mismatch /people/0/age",
                ),
                (json!({"structuredContent": {"people": [{}]}}), "mismatch /people/0"),
                (json!({"structuredContent": {}}), "mismatch "),
                (json!({"structuredContent": {"people": [], "x": 1}}), "mismatch "),
                (json!({"structuredContent": [1]}), "mismatch "),
                // Missing structuredContent is an error, unless the call failed.
                (json!({"content": [{"type": "text", "text": "{\"people\": []}"}]}), "missing"),
                (json!({"content": [], "isError": false}), "missing"),
                (json!({"content": [], "isError": true}), "ok"),
                (json!({"structuredContent": {"people": 3}, "isError": true}), "ok"),
                (json!({"structuredContent": {"people": 3}, "isError": false}), "mismatch /people"),
            ],
        );
    }

    #[test]
    fn mismatch_message_names_path_and_problem() {
        let tool = tool(Some(person_schema()));
        let result = CallToolResult {
            structured_content: Some(json!({"people": [{"name": 7}]})),
            ..Default::default()
        };
        let error = validate_structured_content(&tool, &result).unwrap_err();
        let SchemaError::Mismatch { instance_path, message } = &error else { panic!("{error:?}") };
        assert_eq!(instance_path, "/people/0/name");
        assert!(message.contains("string"), "{message}");
        assert_eq!(
            error.to_string(),
            format!(
                "structuredContent does not match the tool's outputSchema at /people/0/name: \
                 {message}"
            )
        );
        assert_eq!(
            SchemaError::MissingStructuredContent.to_string(),
            "the tool declares an outputSchema but its result has no structuredContent"
        );
    }

    #[test]
    fn local_refs_resolve() {
        let with_defs = json!({
            "type": "object",
            "properties": {"home": {"$ref": "#/$defs/address"}, "work": {"$ref": "#/$defs/address"}},
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                }
            }
        });
        check(
            Some(with_defs),
            &[
                (json!({"structuredContent": {"home": {"city": "Paris"}}}), "ok"),
                (json!({"structuredContent": {"work": {"city": 1}}}), "mismatch /work/city"),
                (json!({"structuredContent": {"home": {}}}), "mismatch /home"),
            ],
        );
        // An absolute URI that the schema itself declares with `$id`.
        let with_ids = json!({
            "$id": "https://example.com/root.json",
            "type": "object",
            "properties": {"n": {"$ref": "https://example.com/count.json"}},
            "$defs": {"count": {"$id": "https://example.com/count.json", "type": "integer"}}
        });
        check(
            Some(with_ids),
            &[
                (json!({"structuredContent": {"n": 1}}), "ok"),
                (json!({"structuredContent": {"n": "1"}}), "mismatch /n"),
            ],
        );
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let schemas = [
            json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}}),
            json!({"type": "object", "$ref": "http://127.0.0.1:9/schema.json"}),
            json!({"type": "object", "properties": {"x": {"$ref": "file:///etc/passwd"}}}),
            json!({"type": "object", "properties": {"x": {"$ref": "other.json"}}}),
            json!({"$schema": "https://example.com/my-dialect", "type": "object"}),
        ];
        for schema in schemas {
            let started = Instant::now();
            let tool = tool(Some(schema.clone()));
            let result =
                CallToolResult { structured_content: Some(json!({"x": 1})), ..Default::default() };
            let error = validate_structured_content(&tool, &result).unwrap_err();
            assert!(matches!(error, SchemaError::InvalidSchema { .. }), "{schema}: {error:?}");
            assert!(error.to_string().starts_with("the tool's outputSchema is invalid: "));
            assert!(OutputSchemaValidator::new(&tool).is_err());
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{schema} took {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn dialects() {
        // Without `$schema`, 2020-12: `prefixItems` applies.
        let tuple = json!({
            "type": "object",
            "properties": {"pair": {"prefixItems": [{"type": "string"}, {"type": "integer"}]}}
        });
        check(
            Some(tuple.clone()),
            &[
                (json!({"structuredContent": {"pair": ["a", 1]}}), "ok"),
                (json!({"structuredContent": {"pair": ["a", "b"]}}), "mismatch /pair/1"),
            ],
        );
        // Draft 7 does not know `prefixItems`, and has `definitions`.
        let mut draft7 = tuple;
        draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        draft7["properties"]["n"] = json!({"$ref": "#/definitions/n"});
        draft7["definitions"] = json!({"n": {"type": "number"}});
        check(
            Some(draft7),
            &[
                (json!({"structuredContent": {"pair": ["a", "b"]}}), "ok"),
                (json!({"structuredContent": {"n": "x"}}), "mismatch /n"),
            ],
        );
    }

    #[test]
    fn invalid_schemas() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "nope"}}}),
            json!({"type": "object", "properties": {"a": {"pattern": "("}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        ] {
            let tool = tool(Some(schema.clone()));
            let result = CallToolResult {
                structured_content: Some(json!({"a": "x"})),
                ..Default::default()
            };
            assert_eq!(outcome(validate_structured_content(&tool, &result)), "invalid", "{schema}");
            // An error result is not checked, so its schema is not compiled.
            let failed = CallToolResult { is_error: Some(true), ..result };
            assert_eq!(validate_structured_content(&tool, &failed), Ok(()));
        }
    }
}
