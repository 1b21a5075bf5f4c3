//! The provider rules, applied to an inlined schema (so without `$ref`,
//! and no deeper than the limits allowed): strict function calling, and the
//! plain subset.

use serde_json::{Map, Value, json};

use super::ArgumentMap;

/// Keywords beside which adding `"null"` to `type` would not let `null`
/// through: such a property is wrapped in `anyOf` instead.
const WRAP_BESIDE: &[&str] = &["anyOf", "oneOf", "allOf", "not", "if", "const"];

/// Strict function calling: every object closed (`additionalProperties:
/// false`) with every property required; a property that was optional
/// accepts `null` instead, recorded in the map so that
/// [`ArgumentMap::to_original`] removes it again. Subschemas under
/// `properties`, `items`, `prefixItems`, `anyOf`, `oneOf` and `allOf` get
/// the same rules; `not`, `if`, `then`, `else` and the like are left as
/// they are (closing an object inside `not` would widen what it accepts).
pub(super) fn strict(schema: &mut Value) -> ArgumentMap {
    let mut map = ArgumentMap::default();
    let Value::Object(obj) = schema else { return map };
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            for branch in branches {
                map.merge(strict(branch));
            }
        }
    }
    let mut items = ArgumentMap::default();
    match obj.get_mut("items") {
        Some(Value::Array(list)) => list.iter_mut().for_each(|s| items.merge(strict(s))),
        Some(single @ Value::Object(_)) => items.merge(strict(single)),
        _ => {}
    }
    if let Some(Value::Array(list)) = obj.get_mut("prefixItems") {
        list.iter_mut().for_each(|s| items.merge(strict(s)));
    }
    if !items.is_empty() {
        map.items = Some(Box::new(items));
    }
    if is_object_schema(obj) {
        close_object(obj, &mut map);
    }
    map
}

/// Whether a schema describes an object: `type` is or includes
/// `"object"`, or it has `properties`.
fn is_object_schema(obj: &Map<String, Value>) -> bool {
    let typed = match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    typed || obj.contains_key("properties")
}

fn close_object(obj: &mut Map<String, Value>, map: &mut ArgumentMap) {
    let required: Vec<String> = match obj.get("required") {
        Some(Value::Array(names)) => {
            names.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        _ => Vec::new(),
    };
    let properties = obj.entry("properties").or_insert_with(|| json!({}));
    let mut names = Vec::new();
    if let Value::Object(properties) = properties {
        // A required name with no schema of its own may be anything; it
        // must be listed to be given at all once the object is closed.
        for name in &required {
            if !properties.contains_key(name) {
                properties.insert(name.clone(), json!({}));
            }
        }
        for (name, property) in properties.iter_mut() {
            names.push(Value::String(name.clone()));
            let child = strict(property);
            if !child.is_empty() {
                map.properties.entry(name.clone()).or_default().merge(child);
            }
            if !required.contains(name) {
                make_nullable(property);
                map.optional.insert(name.clone());
            }
        }
    }
    obj.insert("required".into(), Value::Array(names));
    obj.insert("additionalProperties".into(), Value::Bool(false));
    for key in ["patternProperties", "unevaluatedProperties", "propertyNames"] {
        obj.remove(key);
    }
}

/// A schema that also accepts `null`: `"null"` added to its `type` (and
/// to its `enum`), or, when that would not do, `{"anyOf": [it, {"type":
/// "null"}]}`.
fn make_nullable(schema: &mut Value) {
    match schema {
        Value::Bool(true) => {}
        Value::Object(obj)
            if obj.contains_key("type") && !WRAP_BESIDE.iter().any(|k| obj.contains_key(*k)) =>
        {
            match obj.get_mut("type") {
                Some(Value::String(t)) if t != "null" => {
                    let t = std::mem::take(t);
                    obj.insert("type".into(), json!([t, "null"]));
                }
                Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => {
                    ts.push(json!("null"));
                }
                _ => {}
            }
            if let Some(Value::Array(values)) = obj.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
        other => {
            let inner = std::mem::take(other);
            *other = json!({ "anyOf": [inner, { "type": "null" }] });
        }
    }
}

/// The plain subset: no `format`, no `null` among the choices of `type`,
/// `enum`, `anyOf` or `oneOf` (a choice left alone is merged into its
/// schema). Every change takes a choice away, so arguments valid under the
/// result are valid under the original, `format` aside (an annotation
/// unless a validator is asked to assert it).
pub(super) fn plain(schema: &mut Value) {
    let Value::Object(obj) = schema else { return };
    // A lone choice merged into its schema may hold choices of its own:
    // each round takes one level away, so this ends.
    while merge_lone_choice(obj) {}
    obj.remove("format");
    if let Some(Value::Array(types)) = obj.get_mut("type")
        && types.iter().any(|t| t != "null")
    {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum")
        && values.iter().any(|v| !v.is_null())
    {
        values.retain(|v| !v.is_null());
    }
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "patternProperties" | "dependentSchemas", Value::Object(members)) => {
                members.values_mut().for_each(plain)
            }
            ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(list)) => {
                list.iter_mut().for_each(plain);
            }
            ("items" | "additionalProperties" | "then" | "else" | "contains", sub) => plain(sub),
            _ => {}
        }
    }
}

/// Takes the null-only choices out of `anyOf` and `oneOf` (unless nothing
/// else is left); a lone remaining choice that shares no keyword with its
/// schema is merged into it. Whether one was merged.
fn merge_lone_choice(obj: &mut Map<String, Value>) -> bool {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = obj.get_mut(key) else { continue };
        if !branches.iter().any(|b| !only_null(b)) {
            continue;
        }
        branches.retain(|b| !only_null(b));
        let lone = match branches.as_slice() {
            [Value::Object(branch)] => Some(branch.clone()),
            _ => None,
        };
        if let Some(branch) = lone
            && branch.keys().all(|k| !obj.contains_key(k) || k == key)
        {
            obj.remove(key);
            obj.extend(branch);
            return true;
        }
    }
    false
}

/// Whether a schema accepts only `null`.
fn only_null(schema: &Value) -> bool {
    let Value::Object(obj) = schema else { return false };
    obj.get("type").is_some_and(|t| t == "null")
        || obj.get("const").is_some_and(Value::is_null)
        || obj
            .get("enum")
            .is_some_and(|e| e.as_array().is_some_and(|v| v.iter().all(Value::is_null)))
}
