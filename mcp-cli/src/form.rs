//! The form of an elicitation (`elicitation/create` in form mode), built
//! from its `requestedSchema`: one field per property (string, number,
//! integer, boolean, single and multiple choice), each answer checked
//! against the property's constraints. Pure: the terminal side is in
//! `host.rs`.

use std::collections::BTreeMap;

use mcp_proto::types::{ElicitValue, RequestedSchema};
use serde_json::{Map, Number, Value};

/// One question of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) kind: FieldKind,
    pub(crate) default: Option<Value>,
}

/// What a field accepts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldKind {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<String>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of the options: (value, label).
    Choice(Vec<(String, String)>),
    /// Some of the options, comma-separated.
    Multi {
        options: Vec<(String, String)>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// The fields of a schema, in its order (properties are kept sorted by
/// name). A property of a type the protocol does not allow in forms is an
/// error: the form cannot be answered.
pub(crate) fn fields(schema: &RequestedSchema) -> Result<Vec<Field>, String> {
    let required = schema.required.clone().unwrap_or_default();
    schema
        .properties
        .iter()
        .map(|(name, definition)| {
            let v = serde_json::to_value(definition).map_err(|e| e.to_string())?;
            field(name, &v, required.contains(name))
        })
        .collect()
}

fn field(name: &str, v: &Value, required: bool) -> Result<Field, String> {
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let int = |key: &str| v.get(key).and_then(Value::as_u64);
    let float = |key: &str| v.get(key).and_then(Value::as_f64);
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let kind = match ty {
        "string" if v.get("oneOf").is_some() => FieldKind::Choice(titled(v.get("oneOf"))),
        "string" if v.get("enum").is_some() => {
            let names = v.get("enumNames").and_then(Value::as_array);
            let options = strings(v.get("enum"))
                .into_iter()
                .enumerate()
                .map(|(i, value)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| value.clone(), str::to_owned);
                    (value, label)
                })
                .collect();
            FieldKind::Choice(options)
        }
        "string" => FieldKind::Text {
            min_length: int("minLength"),
            max_length: int("maxLength"),
            format: text("format"),
        },
        "number" | "integer" => FieldKind::Number {
            integer: ty == "integer",
            minimum: float("minimum"),
            maximum: float("maximum"),
        },
        "boolean" => FieldKind::Boolean,
        "array" => {
            let items = v.get("items");
            let options = match items.and_then(|i| i.get("anyOf")) {
                Some(any) => titled(Some(any)),
                None => strings(items.and_then(|i| i.get("enum")))
                    .into_iter()
                    .map(|s| (s.clone(), s))
                    .collect(),
            };
            FieldKind::Multi { options, min_items: int("minItems"), max_items: int("maxItems") }
        }
        other => {
            return Err(format!(
                "the field {name:?} has the type {other:?}, which a form cannot ask for"
            ));
        }
    };
    Ok(Field {
        name: name.to_owned(),
        title: text("title"),
        description: text("description"),
        required,
        kind,
        default: v.get("default").filter(|d| !d.is_null()).cloned(),
    })
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `[{const, title}]` options.
fn titled(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|o| {
                    let value = o.get("const")?.as_str()?.to_owned();
                    let label = o.get("title").and_then(Value::as_str).unwrap_or(&value).to_owned();
                    Some((value, label))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Field {
    /// The question, as shown before the answer: `Name (Your name) [Ada]: `.
    pub(crate) fn prompt(&self) -> String {
        let mut out = self.title.clone().unwrap_or_else(|| self.name.clone());
        if let Some(d) = &self.description {
            out.push_str(&format!(" ({d})"));
        }
        match &self.kind {
            FieldKind::Boolean => out.push_str(" [y/n]"),
            FieldKind::Choice(options) | FieldKind::Multi { options, .. } => {
                let list: Vec<String> = options
                    .iter()
                    .enumerate()
                    .map(|(i, (value, label))| {
                        if value == label {
                            format!("{}) {value}", i + 1)
                        } else {
                            format!("{}) {label} [{value}]", i + 1)
                        }
                    })
                    .collect();
                out.push_str(&format!("\n  {}\n ", list.join("\n  ")));
                if matches!(self.kind, FieldKind::Multi { .. }) {
                    out.push_str(" numbers or values, comma-separated");
                }
            }
            FieldKind::Number { integer: true, .. } => out.push_str(" (an integer)"),
            FieldKind::Number { .. } => out.push_str(" (a number)"),
            FieldKind::Text { format: Some(f), .. } => out.push_str(&format!(" ({f})")),
            FieldKind::Text { .. } => {}
        }
        if let Some(d) = &self.default {
            out.push_str(&format!(" [default: {}]", display(d)));
        } else if !self.required {
            out.push_str(" [optional]");
        }
        out.push_str(": ");
        out
    }

    /// The value of an answer: `Ok(None)` leaves an optional field out; an
    /// empty answer takes the default. The error says what is wanted.
    pub(crate) fn parse(&self, input: &str) -> Result<Option<Value>, String> {
        let input = input.trim();
        if input.is_empty() {
            return match (&self.default, self.required) {
                (Some(d), _) => Ok(Some(d.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("an answer is required".into()),
            };
        }
        let value = match &self.kind {
            FieldKind::Text { min_length, max_length, format } => {
                let n = input.chars().count() as u64;
                if min_length.is_some_and(|m| n < m) {
                    return Err(format!("at least {} characters", min_length.unwrap_or(0)));
                }
                if max_length.is_some_and(|m| n > m) {
                    return Err(format!("at most {} characters", max_length.unwrap_or(0)));
                }
                check_format(format.as_deref(), input)?;
                Value::String(input.to_owned())
            }
            FieldKind::Number { integer, minimum, maximum } => {
                let n: f64 = input.parse().map_err(|_| {
                    if *integer { "an integer, please" } else { "a number, please" }.to_owned()
                })?;
                if *integer && n.fract() != 0.0 {
                    return Err("an integer, please".into());
                }
                if minimum.is_some_and(|m| n < m) || maximum.is_some_and(|m| n > m) {
                    return Err(format!(
                        "from {} to {}",
                        minimum.map_or("-∞".into(), |m| m.to_string()),
                        maximum.map_or("∞".into(), |m| m.to_string())
                    ));
                }
                if *integer {
                    Value::Number(Number::from(n as i64))
                } else {
                    Number::from_f64(n).map(Value::Number).ok_or("a finite number, please")?
                }
            }
            FieldKind::Boolean => match input.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err("y or n, please".into()),
            },
            FieldKind::Choice(options) => Value::String(choose(options, input)?),
            FieldKind::Multi { options, min_items, max_items } => {
                let mut chosen = Vec::new();
                for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let value = choose(options, part)?;
                    if !chosen.contains(&value) {
                        chosen.push(value);
                    }
                }
                let n = chosen.len() as u64;
                if min_items.is_some_and(|m| n < m) || max_items.is_some_and(|m| n > m) {
                    return Err(format!(
                        "choose from {} to {}",
                        min_items.unwrap_or(0),
                        max_items.map_or("all".into(), |m| m.to_string())
                    ));
                }
                Value::Array(chosen.into_iter().map(Value::String).collect())
            }
        };
        Ok(Some(value))
    }
}

/// An option by its number (1-based), its value or its label.
fn choose(options: &[(String, String)], input: &str) -> Result<String, String> {
    if let Ok(i) = input.parse::<usize>()
        && let Some((value, _)) = i.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(value.clone());
    }
    options
        .iter()
        .find(|(value, label)| value == input || label.eq_ignore_ascii_case(input))
        .map(|(value, _)| value.clone())
        .ok_or_else(|| format!("one of the {} options, by number or value", options.len()))
}

fn check_format(format: Option<&str>, input: &str) -> Result<(), String> {
    let ok = match format {
        Some("email") => {
            input.split_once('@').is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
        }
        Some("uri") => input.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }),
        Some("date") => is_date(input),
        Some("date-time") => {
            input.len() > 10 && is_date(&input[..10]) && matches!(&input[10..11], "T" | "t" | " ")
        }
        _ => true,
    };
    if ok { Ok(()) } else { Err(format!("a valid {}, please", format.unwrap_or("value"))) }
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && (1..=12).contains(&s[5..7].parse::<u8>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u8>().unwrap_or(0))
}

fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "y".into(),
        Value::Bool(false) => "n".into(),
        other => other.to_string(),
    }
}

/// The answer of a form whose fields all have defaults (or are optional),
/// for `--accept-defaults`; `None` when a required field has none.
pub(crate) fn defaults(fields: &[Field]) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for f in fields {
        match (&f.default, f.required) {
            (Some(d), _) => {
                out.insert(f.name.clone(), d.clone());
            }
            (None, true) => return None,
            (None, false) => {}
        }
    }
    Some(out)
}

/// The content of an accepted form.
pub(crate) fn content(answers: Map<String, Value>) -> BTreeMap<String, ElicitValue> {
    answers
        .into_iter()
        .filter_map(|(k, v)| serde_json::from_value::<ElicitValue>(v).ok().map(|v| (k, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> Vec<Field> {
        let schema: RequestedSchema = serde_json::from_value(schema).unwrap();
        fields(&schema).unwrap()
    }

    fn check(field: &Field, input: &str, expected: Result<Option<Value>, ()>) {
        assert_eq!(field.parse(input).map_err(|_| ()), expected, "{} <- {input:?}", field.name);
    }

    #[test]
    fn each_kind_parses_and_validates() {
        let f = form(json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
                "email": {"type": "string", "format": "email"},
                "name": {"type": "string", "title": "Name", "minLength": 2, "default": "Ada"},
                "ok": {"type": "boolean", "default": true},
                "ratio": {"type": "number"},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
            },
            "required": ["age", "name"],
        }));
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        let age = by("age");
        check(&age, "42", Ok(Some(json!(42))));
        check(&age, "4.5", Err(()));
        check(&age, "200", Err(()));
        check(&age, "old", Err(()));
        check(&age, "", Err(()));
        let color = by("color");
        check(&color, "2", Ok(Some(json!("green"))));
        check(&color, "red", Ok(Some(json!("red"))));
        check(&color, "Green", Ok(Some(json!("green"))));
        check(&color, "blue", Err(()));
        check(&color, "", Ok(None));
        let email = by("email");
        check(&email, "a@b.org", Ok(Some(json!("a@b.org"))));
        check(&email, "nope", Err(()));
        let name = by("name");
        check(&name, "", Ok(Some(json!("Ada"))));
        check(&name, "X", Err(()));
        check(&name, " Grace ", Ok(Some(json!("Grace"))));
        assert_eq!(name.prompt(), "Name [default: Ada]: ");
        let ok = by("ok");
        check(&ok, "n", Ok(Some(json!(false))));
        check(&ok, "", Ok(Some(json!(true))));
        check(&ok, "maybe", Err(()));
        check(&by("ratio"), "2.5", Ok(Some(json!(2.5))));
        let size = by("size");
        check(&size, "Large", Ok(Some(json!("l"))));
        check(&size, "1", Ok(Some(json!("s"))));
        let tags = by("tags");
        check(&tags, "a, 3", Ok(Some(json!(["a", "c"]))));
        check(&tags, "a,b,c", Err(()));
        check(&tags, "z", Err(()));
        // Defaults: `age` is required and has none.
        assert_eq!(defaults(&f), None);
        let only_defaults = form(
            json!({"properties": {"name": {"type": "string", "default": "Ada"}}, "required": ["name"]}),
        );
        assert_eq!(
            defaults(&only_defaults),
            Some(json!({"name": "Ada"}).as_object().unwrap().clone())
        );
    }

    #[test]
    fn dates() {
        let f = form(json!({"properties": {"d": {"type": "string", "format": "date"}}}));
        check(&f[0], "2026-12-01", Ok(Some(json!("2026-12-01"))));
        check(&f[0], "2026-13-01", Err(()));
        check(&f[0], "yesterday", Err(()));
    }
}
