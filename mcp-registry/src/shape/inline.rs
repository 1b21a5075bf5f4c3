//! Inlining a schema's local references, bounded in depth and size.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{ShapeError, ShapeLimits};

/// Keywords whose value is one subschema.
pub(super) const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas (`items` too, in drafts
/// before 2020-12, when it is an array).
pub(super) const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value is an object of subschemas.
pub(super) const SCHEMA_MAP: &[&str] =
    &["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];
/// Keywords dropped from every shaped schema: definitions (inlined) and
/// identifiers that mean nothing once inlined.
const DROPPED: &[&str] = &["$defs", "definitions", "$schema", "$id", "$anchor", "$dynamicAnchor"];
/// Keywords that only annotate, merged into an inlined reference's target.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples", "$comment"];

/// The schema with every `$ref` replaced by what it points to, and the
/// definitions dropped.
pub(super) fn inline(root: &Value, limits: &ShapeLimits) -> Result<Value, ShapeError> {
    let mut walk = Walk { root, limits, nodes: 0, stack: BTreeSet::new() };
    walk.schema(root, 0)
}

struct Walk<'a> {
    root: &'a Value,
    limits: &'a ShapeLimits,
    /// Nodes produced so far.
    nodes: usize,
    /// The references being expanded (a repeat is a cycle).
    stack: BTreeSet<String>,
}

impl Walk<'_> {
    fn count(&mut self, n: usize) -> Result<(), ShapeError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            return Err(ShapeError::TooLarge { max_nodes: self.limits.max_nodes });
        }
        Ok(())
    }

    fn schema(&mut self, schema: &Value, depth: usize) -> Result<Value, ShapeError> {
        if depth > self.limits.effective_depth() {
            return Err(ShapeError::TooDeep { max_depth: self.limits.effective_depth() });
        }
        self.count(1)?;
        let Value::Object(map) = schema else {
            // `true`, `false`, or something that is no schema: kept.
            return Ok(schema.clone());
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, map, depth);
        }
        let mut out = Map::new();
        for (key, value) in map {
            if DROPPED.contains(&key.as_str()) {
                continue;
            }
            let shaped = self.keyword(key, value, depth)?;
            out.insert(key.clone(), shaped);
        }
        Ok(Value::Object(out))
    }

    /// A keyword's value: subschemas walked, anything else copied.
    fn keyword(&mut self, key: &str, value: &Value, depth: usize) -> Result<Value, ShapeError> {
        match value {
            Value::Array(list) if SCHEMA_LIST.contains(&key) => {
                let mut out = Vec::with_capacity(list.len());
                for item in list {
                    out.push(self.schema(item, depth + 1)?);
                }
                Ok(Value::Array(out))
            }
            Value::Object(members) if SCHEMA_MAP.contains(&key) => {
                let mut out = Map::new();
                for (name, sub) in members {
                    out.insert(name.clone(), self.schema(sub, depth + 1)?);
                }
                Ok(Value::Object(out))
            }
            _ if ONE_SCHEMA.contains(&key) => self.schema(value, depth + 1),
            other => {
                self.count(size_of(other))?;
                Ok(other.clone())
            }
        }
    }

    /// A `$ref`: its target inlined, with the sibling keywords kept:
    /// merged into the target when it has none of them (or they only
    /// annotate), else beside it as `allOf`.
    fn reference(
        &mut self,
        reference: &str,
        map: &Map<String, Value>,
        depth: usize,
    ) -> Result<Value, ShapeError> {
        let unresolved = || ShapeError::UnresolvedRef { reference: excerpt(reference) };
        let pointer = reference.strip_prefix('#').ok_or_else(unresolved)?;
        if pointer.contains('%') {
            return Err(unresolved());
        }
        let target = self.root.pointer(pointer).ok_or_else(unresolved)?;
        if !self.stack.insert(reference.to_owned()) {
            return Err(ShapeError::Cycle { reference: excerpt(reference) });
        }
        let inlined = self.schema(target, depth + 1);
        self.stack.remove(reference);
        let mut inlined = inlined?;
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| k.as_str() != "$ref" && !DROPPED.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if siblings.is_empty() {
            return Ok(inlined);
        }
        let rest = self.schema(&Value::Object(siblings), depth + 1)?;
        if let (Value::Object(target), Value::Object(rest)) = (&mut inlined, &rest)
            && rest.keys().all(|k| ANNOTATIONS.contains(&k.as_str()) || !target.contains_key(k))
        {
            target.extend(rest.clone());
            return Ok(inlined);
        }
        let mut out = Map::new();
        out.insert("allOf".into(), Value::Array(vec![inlined, rest]));
        Ok(Value::Object(out))
    }
}

/// How many JSON nodes a value holds (bounded by the value itself, which
/// came whole in one message).
fn size_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(size_of).sum::<usize>(),
        Value::Object(members) => 1 + members.values().map(size_of).sum::<usize>(),
        _ => 1,
    }
}

/// A reference as shown in an error: at most 100 characters (it is the
/// server's text).
fn excerpt(reference: &str) -> String {
    let mut out: String = reference.chars().take(100).collect();
    if out.len() < reference.len() {
        out.push('…');
    }
    out
}
