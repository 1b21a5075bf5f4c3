//! Schemas shaped for a provider, as data: each target on a table of
//! schemas, arguments mapped back, the bounds; and, for every shaped
//! schema, sample arguments valid under it checked with a JSON Schema
//! validator to be valid under the original once mapped back.

use mcp_host_registry::shape::{SchemaTarget, ShapeError, ShapeLimits, ShapedSchema, shape_schema};
use serde_json::{Map, Value, json};

/// Whether `instance` is valid under `schema` (JSON Schema 2020-12,
/// offline, formats not asserted).
pub(crate) fn valid(schema: &Value, instance: &Value) -> bool {
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .unwrap_or_else(|e| panic!("not a schema ({e}): {schema}"));
    validator.is_valid(instance)
}

/// Sample arguments for a shaped schema: one with every nullable value
/// `null`, one with a value everywhere. Strings, numbers and arrays are
/// made to meet the common keywords (`enum`, `const`, `minimum`,
/// `minLength`, `minItems`); a sample the generator gets wrong fails the
/// check that it is valid under the shaped schema.
pub(crate) fn samples(schema: &Value) -> Vec<Value> {
    vec![
        Sampler { root: schema, nulls: true }.sample(schema, 0),
        Sampler { root: schema, nulls: false }.sample(schema, 0),
    ]
}

struct Sampler<'a> {
    /// Where local references point.
    root: &'a Value,
    /// `null` wherever allowed, and optional properties left out.
    nulls: bool,
}

impl Sampler<'_> {
    fn sample(&self, schema: &Value, depth: usize) -> Value {
        assert!(depth < 64, "the sample generator went too deep");
        let nulls = self.nulls;
        let Value::Object(obj) = schema else { return json!({}) };
        if let Some(target) =
            obj.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#'))
        {
            let mut merged = self.root.pointer(target).expect("a local reference").clone();
            // The keywords beside the reference apply too.
            if let Value::Object(merged) = &mut merged {
                let siblings = obj.iter().filter(|(k, _)| *k != "$ref");
                merged.extend(siblings.map(|(k, v)| (k.clone(), v.clone())));
            }
            return self.sample(&merged, depth + 1);
        }
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            let pick = if nulls { values.iter().find(|v| v.is_null()) } else { None };
            return pick
                .or_else(|| values.iter().find(|v| !v.is_null()))
                .cloned()
                .unwrap_or(Value::Null);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                let is_null = |b: &&Value| b.get("type") == Some(&json!("null"));
                let branch = if nulls { branches.iter().find(is_null) } else { None }
                    .or_else(|| branches.iter().find(|b| !is_null(b)))
                    .or(branches.first());
                return branch.map_or(Value::Null, |b| self.sample(b, depth + 1));
            }
        }
        if let Some(Value::Array(all)) = obj.get("allOf")
            && let Some(first) = all.first()
        {
            return self.sample(first, depth + 1);
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            None if obj.contains_key("properties") => vec!["object"],
            None => vec!["string"],
            _ => vec!["string"],
        };
        if nulls && types.contains(&"null") {
            return Value::Null;
        }
        let ty = types.iter().find(|t| **t != "null").copied().unwrap_or("null");
        let number = |default: f64| {
            let min = obj.get("minimum").and_then(Value::as_f64).unwrap_or(default);
            let max = obj.get("maximum").and_then(Value::as_f64).unwrap_or(f64::MAX);
            min.max(default.min(max))
        };
        match ty {
            "object" => {
                let mut out = Map::new();
                let required: Vec<&str> = obj
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(Value::Object(properties)) = obj.get("properties") {
                    for (name, property) in properties {
                        // Optional properties are given in the full sample only.
                        if required.contains(&name.as_str()) || !nulls {
                            out.insert(name.clone(), self.sample(property, depth + 1));
                        }
                    }
                }
                for name in required {
                    out.entry(name).or_insert_with(|| json!("s"));
                }
                Value::Object(out)
            }
            "array" => {
                let n = obj.get("minItems").and_then(Value::as_u64).unwrap_or(1).max(1);
                let item = obj.get("items").cloned().unwrap_or(json!({}));
                Value::Array((0..n).map(|_| self.sample(&item, depth + 1)).collect())
            }
            "integer" => json!(number(1.0) as i64),
            "number" => json!(number(1.5)),
            "boolean" => json!(true),
            "null" => Value::Null,
            _ => {
                let n = obj.get("minLength").and_then(Value::as_u64).unwrap_or(1).max(1) as usize;
                json!("s".repeat(n))
            }
        }
    }
}

/// Shapes `original` for every target and checks that each sample valid
/// under the shaped schema is valid under the original after mapping
/// back. The shaped schemas, by target.
pub(crate) fn check_round_trip(what: &str, original: &Value) -> Vec<(SchemaTarget, ShapedSchema)> {
    let mut out = Vec::new();
    for target in SchemaTarget::ALL {
        let shaped = shape_schema(original, target, &ShapeLimits::default())
            .unwrap_or_else(|e| panic!("{what} for {target}: {e}"));
        for args in samples(&shaped.schema) {
            assert!(
                valid(&shaped.schema, &args),
                "{what} for {target}: the sample {args} is not valid under the shaped schema {}",
                shaped.schema
            );
            let back = shaped.arguments.to_original(args.clone());
            assert!(
                valid(original, &back),
                "{what} for {target}: {args} mapped back to {back} is not valid under {original}"
            );
        }
        out.push((target, shaped));
    }
    out
}

fn strict(schema: Value) -> ShapedSchema {
    shape_schema(&schema, SchemaTarget::Strict, &ShapeLimits::default()).unwrap()
}

fn plain(schema: Value) -> Value {
    shape_schema(&schema, SchemaTarget::Plain, &ShapeLimits::default()).unwrap().schema
}

#[test]
fn strict_closes_objects_and_makes_optional_properties_nullable() {
    let cases: Vec<(Value, Value)> = vec![
        // No properties: closed, nothing required.
        (
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
        ),
        // A required property stays as it is; optional ones gain null.
        (
            json!({"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer", "enum": [1, 2]},
                "c": {"type": ["string", "number"]},
                "d": {"type": ["string", "null"]},
                "e": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "f": {"const": "x", "type": "string"},
                "g": {}
            }, "required": ["a"], "additionalProperties": true}),
            json!({"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"type": ["integer", "null"], "enum": [1, 2, null]},
                "c": {"type": ["string", "number", "null"]},
                "d": {"type": ["string", "null"]},
                "e": {"anyOf": [{"anyOf": [{"type": "string"}, {"type": "number"}]}, {"type": "null"}]},
                "f": {"anyOf": [{"const": "x", "type": "string"}, {"type": "null"}]},
                "g": {"anyOf": [{}, {"type": "null"}]}
            }, "required": ["a", "b", "c", "d", "e", "f", "g"], "additionalProperties": false}),
        ),
        // A required name without a schema is listed, as anything.
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}},
                   "required": ["a", "b"], "additionalProperties": false}),
        ),
        // Nested objects, in properties and array items.
        (
            json!({"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}
            }, "required": ["list"]}),
            json!({"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
                          "required": ["x"], "additionalProperties": false}}
            }, "required": ["list"], "additionalProperties": false}),
        ),
    ];
    for (original, expected) in cases {
        let shaped = strict(original.clone());
        assert_eq!(shaped.schema, expected, "{original}");
        check_round_trip("table", &original);
    }
}

#[test]
fn strict_arguments_map_back_without_their_null_stand_ins() {
    let shaped = strict(json!({"type": "object", "properties": {
        "a": {"type": "string"},
        "b": {"type": "string"},
        "req_null": {"type": ["string", "null"]},
        "list": {"type": "array", "items": {"type": "object", "properties": {
            "x": {"type": "string"}, "y": {"type": "string"}
        }, "required": ["x"]}},
        "inner": {"type": "object", "properties": {"z": {"type": "integer"}}}
    }, "required": ["a", "req_null", "list"]}));
    let cases = vec![
        (
            json!({"a": "1", "b": null, "req_null": null, "list": [{"x": "1", "y": null}, {"x": "2", "y": "3"}], "inner": {"z": null}}),
            json!({"a": "1", "req_null": null, "list": [{"x": "1"}, {"x": "2", "y": "3"}], "inner": {}}),
        ),
        (
            json!({"a": "1", "b": "2", "req_null": "v", "list": [], "inner": null}),
            json!({"a": "1", "b": "2", "req_null": "v", "list": []}),
        ),
        // What the map does not describe is left alone.
        (json!("not an object"), json!("not an object")),
    ];
    for (args, expected) in cases {
        assert_eq!(shaped.arguments.to_original(args.clone()), expected, "{args}");
    }
}

#[test]
fn plain_takes_out_refs_null_choices_and_formats() {
    let cases: Vec<(Value, Value)> = vec![
        (
            json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
                   "properties": {"when": {"type": "string", "format": "date-time"}}}),
            json!({"type": "object", "properties": {"when": {"type": "string"}}}),
        ),
        (
            json!({"type": "object", "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": "B"},
                "c": {"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
                "d": {"enum": ["x", null]},
                "e": {"type": ["string", "integer", "null"]},
                "f": {"type": "null"}
            }}),
            json!({"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "minLength": 1, "description": "B"},
                "c": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
                "d": {"enum": ["x"]},
                "e": {"type": ["string", "integer"]},
                "f": {"type": "null"}
            }}),
        ),
        (
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/point", "description": "where"}},
                   "$defs": {"point": {"type": "object", "properties": {"x": {"$ref": "#/definitions/n"}}}},
                   "definitions": {"n": {"anyOf": [{"type": "number"}, {"type": "null"}]}}}),
            json!({"type": "object", "properties": {"p": {"type": "object", "description": "where",
                   "properties": {"x": {"type": "number"}}}}}),
        ),
    ];
    for (original, expected) in cases {
        assert_eq!(plain(original.clone()), expected, "{original}");
        check_round_trip("table", &original);
    }
}

#[test]
fn unchanged_is_unchanged() {
    let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}});
    let shaped = shape_schema(&schema, SchemaTarget::Unchanged, &ShapeLimits::default()).unwrap();
    assert_eq!(shaped.schema, schema);
    assert!(shaped.arguments.is_empty());
    assert_eq!(shaped.arguments.to_original(json!({"a": null})), json!({"a": null}));
}

#[test]
fn references_with_siblings_and_targets_by_name() {
    let schema = json!({"type": "object", "properties": {
        "a": {"$ref": "#/$defs/s", "minLength": 2},
        "b": {"$ref": "#/properties/a"}
    }, "$defs": {"s": {"type": "string"}}});
    let shaped = plain(schema.clone());
    // Siblings the target lacks are merged into it.
    let a = json!({"type": "string", "minLength": 2});
    assert_eq!(shaped["properties"]["a"], a);
    assert_eq!(shaped["properties"]["b"], a);
    check_round_trip("siblings", &schema);
    // Siblings that clash with the target stand beside it.
    let clash = json!({"type": "object", "properties": {
        "a": {"$ref": "#/$defs/s", "type": "integer", "description": "kept"}
    }, "$defs": {"s": {"type": ["integer", "string"]}}});
    assert_eq!(
        plain(clash)["properties"]["a"],
        json!({"allOf": [{"type": ["integer", "string"]}, {"type": "integer", "description": "kept"}]})
    );
    for target in ["strict", "Plain", " unchanged "] {
        assert!(target.parse::<SchemaTarget>().is_ok(), "{target}");
    }
    assert_eq!("gemini".parse::<SchemaTarget>(), Err(ShapeError::UnknownTarget));
}

#[test]
fn cyclic_deep_enormous_and_foreign_schemas_are_typed_errors() {
    let limits = ShapeLimits::default();
    let cyclic = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}});
    let root_cycle = json!({"type": "object", "properties": {"self": {"$ref": "#"}}});
    // 8^20 nodes once inlined, from 20 small definitions.
    let mut defs = Map::new();
    for i in 0..20 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        let properties: Map<String, Value> =
            (0..8).map(|p| (format!("p{p}"), next.clone())).collect();
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": properties}));
    }
    defs.insert("d20".into(), json!({"type": "string"}));
    let enormous =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    // Deeper than any limit (built by moving, not by `json!`, which would
    // copy it recursively each time).
    let mut deep = json!({"type": "string"});
    for _ in 0..500 {
        let mut properties = Map::new();
        properties.insert("x".into(), deep);
        let mut level = Map::new();
        level.insert("type".into(), json!("object"));
        level.insert("properties".into(), Value::Object(properties));
        deep = Value::Object(level);
    }
    let cases: Vec<(&str, &Value, ShapeError)> = vec![
        ("cyclic", &cyclic, ShapeError::Cycle { reference: "#/$defs/node".into() }),
        ("root", &root_cycle, ShapeError::Cycle { reference: "#".into() }),
        ("enormous", &enormous, ShapeError::TooLarge { max_nodes: 20_000 }),
        ("deep", &deep, ShapeError::TooDeep { max_depth: 64 }),
    ];
    for (what, schema, expected) in cases {
        for target in [SchemaTarget::Strict, SchemaTarget::Plain] {
            let started = std::time::Instant::now();
            assert_eq!(shape_schema(schema, target, &limits).unwrap_err(), expected, "{what}");
            assert!(started.elapsed() < std::time::Duration::from_secs(5), "{what} took too long");
        }
    }
    // The hard bound holds whatever is asked.
    let err = shape_schema(&deep, SchemaTarget::Strict, &ShapeLimits::new(usize::MAX, usize::MAX));
    assert_eq!(err.unwrap_err(), ShapeError::TooDeep { max_depth: ShapeLimits::HARD_MAX_DEPTH });
    for reference in
        ["https://example.com/schema.json", "#/$defs/missing", "#/%24defs/a", "other#x"]
    {
        let schema =
            json!({"type": "object", "properties": {"a": {"$ref": reference}}, "$defs": {"a": {}}});
        let err = shape_schema(&schema, SchemaTarget::Strict, &limits).unwrap_err();
        assert_eq!(err, ShapeError::UnresolvedRef { reference: reference.into() });
        assert!(err.to_string().contains("only local references"), "{err}");
    }
}
