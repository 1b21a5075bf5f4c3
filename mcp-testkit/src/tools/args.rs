//! A tool's arguments, read with typed accessors, and [`StrOrValue`], a
//! member read where a string is expected without building a value for it.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A tool's arguments, with typed accessors whose errors name the argument.
pub(super) struct Args(pub(super) Map<String, Value>);

impl Args {
    pub(super) fn string(&mut self, name: &str) -> Result<String, String> {
        self.opt_string(name)?.ok_or_else(|| Args::missing(name))
    }

    pub(super) fn opt_string(&mut self, name: &str) -> Result<Option<String>, String> {
        Args::string_of(name, self.0.remove(name))
    }

    /// A string argument's value, or none.
    pub(super) fn string_of(name: &str, value: Option<Value>) -> Result<Option<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("argument `{name}` must be a string")),
        }
    }

    pub(super) fn missing(name: &str) -> String {
        format!("missing required argument `{name}`")
    }

    pub(super) fn number(&self, name: &str) -> Result<f64, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Err(Args::missing(name)),
            Some(v) => v.as_f64().ok_or_else(|| format!("argument `{name}` must be a number")),
        }
    }

    pub(super) fn integer(&self, name: &str, max: u64) -> Result<u64, String> {
        self.opt_integer(name, max)?.ok_or_else(|| Args::missing(name))
    }

    /// A whole number in `0..=max`; `5.0` counts as `5`.
    pub(super) fn opt_integer(&self, name: &str, max: u64) -> Result<Option<u64>, String> {
        let value = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let n = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= max as f64)
                .map(|f| f as u64)
        });
        match n {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(format!("argument `{name}` must be an integer from 0 to {max}")),
        }
    }
}

/// A member where a string is expected (a tool's name, `echo`'s message):
/// the string borrowed from the text when it has no escapes, anything
/// else decoded into the value it is, as a [`Value`] member would be (so
/// the same text is refused with the same error).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StrOrValue<'a> {
    /// A string.
    Str(Cow<'a, str>),
    /// Any other value (`null` only where it is not an `Option`'s none).
    Other(Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for StrOrValue<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrOrValueVisitor(std::marker::PhantomData))
    }
}

struct StrOrValueVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for StrOrValueVisitor<'a> {
    type Value = StrOrValue<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(StrOrValue::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(StrOrValue::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(StrOrValue::Str(Cow::Owned(s)))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::Bool(b)))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::from(n)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::from(n)))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::from(n)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(StrOrValue::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        StrOrValue::deserialize(d)
    }

    // Containers are decoded by `Value` itself: the same value, the same
    // errors (a number out of range, nesting too deep).
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(StrOrValue::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(StrOrValue::Other)
    }
}

impl StrOrValue<'_> {
    /// As the value it is.
    pub(crate) fn into_value(self) -> Value {
        match self {
            StrOrValue::Str(s) => Value::String(s.into_owned()),
            StrOrValue::Other(value) => value,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::*;

    /// JSON texts around a string member: escapes, every other type,
    /// values a `Value` refuses, duplicates, near misses, invalid JSON.
    pub(crate) const MEMBER_TEXTS: &[&str] = &[
        r#""plain""#,
        r#""""#,
        r#""esc\"aped \\ \n""#,
        r#""\u00e9\ud83d\ude00""#,
        r#""é😀""#,
        r#""\ud800""#,
        r#""\x""#,
        "\"raw\u{1}control\"",
        "1",
        "0",
        "-1",
        "9999999999999999999",
        "18446744073709551615",
        "18446744073709551616",
        "1.5",
        "1e400",
        "-0",
        "true",
        "null",
        "[]",
        r#"[1,"a",{"b":null}]"#,
        r#"[1,{"a":1e400}]"#,
        r#"{"a":[1,2],"b":"c"}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a":1,}"#,
        "[1,]",
        "tru",
        r#""open"#,
    ];

    #[test]
    fn a_member_read_as_str_or_value_is_what_a_value_would_be() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let texts = MEMBER_TEXTS.iter().copied().chain([deep.as_str()]);
        for text in texts {
            let ours = serde_json::from_str::<StrOrValue<'_>>(text)
                .map(StrOrValue::into_value)
                .map_err(|e| e.to_string());
            let value = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(ours, value, "{text}");
            // A string without escapes is borrowed from the text.
            if let Ok(StrOrValue::Str(s)) = serde_json::from_str::<StrOrValue<'_>>(text) {
                assert_eq!(matches!(s, Cow::Borrowed(_)), !text.contains('\\'), "{text}");
            }
            // From a value (a message handed over decoded): the same.
            if let Ok(value) = value {
                let ours = StrOrValue::deserialize(&value).map(StrOrValue::into_value);
                assert_eq!(ours.ok(), Some(value), "{text}");
            }
        }
    }

    #[test]
    fn integer_arguments() {
        let args = Args(
            json!({"a": 5, "b": 5.0, "c": 5.5, "d": -1, "e": "5", "f": 1000})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(args.opt_integer("a", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("b", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("missing", 10), Ok(None));
        for bad in ["c", "d", "e", "f"] {
            assert!(args.opt_integer(bad, 10).is_err(), "{bad}");
        }
        assert!(args.integer("missing", 10).unwrap_err().contains("missing"));
    }
}
