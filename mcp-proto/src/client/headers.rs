//! `x-mcp-header`: tool arguments mirrored into `Mcp-Param-<Name>` headers.
//!
//! A tool's `inputSchema` may mark a top-level property of type `string`,
//! `integer` or `boolean` with `"x-mcp-header": "<Name>"`; an HTTP transport
//! then sends that argument of a `tools/call` as the header
//! `Mcp-Param-<Name>` too, so intermediaries can route on it without reading
//! the body. This module is the protocol part, pure and transport-free:
//!
//! - [`param_headers`] reads and checks a schema's annotations (names must
//!   be RFC 9110 tokens, unique ignoring case, on properties of a supported
//!   type);
//! - [`retain_valid_tools`] drops, with a warning, every tool whose
//!   annotations break those rules (a client applies it once, where it
//!   stores a listed tool set);
//! - [`param_header_values`] gives the headers of one call: strings as they
//!   are, integers in decimal, booleans `true`/`false`, nothing for an
//!   absent or `null` argument, each value passed through
//!   [`encode_header_value`].

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::types::{JsonObject, Tool, ToolSchema};

/// The schema keyword that names a parameter header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// What every parameter header's name starts with.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The JSON type of an annotated property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One annotated property of a tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The argument's name (the property).
    pub property: String,
    /// The `x-mcp-header` value: the header is `Mcp-Param-<name>`.
    pub name: String,
    /// The property's type.
    pub kind: ParamKind,
}

impl ParamHeader {
    /// The full header name, `Mcp-Param-<name>`.
    pub fn header_name(&self) -> String {
        format!("{PARAM_HEADER_PREFIX}{}", self.name)
    }
}

/// Why a tool's `x-mcp-header` annotations are unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamHeaderError {
    /// The annotation is not a string.
    NotAString {
        /// The property.
        property: String,
    },
    /// The name is empty or not an RFC 9110 token.
    InvalidName {
        /// The property.
        property: String,
        /// The name as given (lossy when it is long).
        name: String,
    },
    /// The property's type is not `string`, `integer` or `boolean`.
    UnsupportedType {
        /// The property.
        property: String,
    },
    /// Two properties name the same header (ignoring case).
    Duplicate {
        /// The second property naming it.
        property: String,
        /// The name.
        name: String,
    },
}

impl fmt::Display for ParamHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamHeaderError::NotAString { property } => {
                write!(f, "the {X_MCP_HEADER} of property {property:?} is not a string")
            }
            ParamHeaderError::InvalidName { property, name } => write!(
                f,
                "the {X_MCP_HEADER} of property {property:?} ({name:?}) is not a valid header name token"
            ),
            ParamHeaderError::UnsupportedType { property } => write!(
                f,
                "property {property:?} has {X_MCP_HEADER} but its type is not string, integer or boolean"
            ),
            ParamHeaderError::Duplicate { property, name } => write!(
                f,
                "the {X_MCP_HEADER} of property {property:?} ({name:?}) repeats another property's header name"
            ),
        }
    }
}

impl std::error::Error for ParamHeaderError {}

/// Whether `b` is an RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `s` is an RFC 9110 token (one or more `tchar`).
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// The annotated properties of a schema, sorted by property name.
/// Properties without `x-mcp-header` are not listed; an annotation that
/// breaks the rules is an error (the whole tool is then unusable).
pub fn param_headers(schema: &ToolSchema) -> Result<Vec<ParamHeader>, ParamHeaderError> {
    let mut out: Vec<ParamHeader> = Vec::new();
    let Some(properties) = &schema.properties else { return Ok(out) };
    for (property, definition) in properties {
        let Some(annotation) = definition.get(X_MCP_HEADER) else { continue };
        let Some(name) = annotation.as_str() else {
            return Err(ParamHeaderError::NotAString { property: property.clone() });
        };
        if !is_token(name) {
            return Err(ParamHeaderError::InvalidName {
                property: property.clone(),
                name: name.chars().take(64).collect(),
            });
        }
        let kind = match definition.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => return Err(ParamHeaderError::UnsupportedType { property: property.clone() }),
        };
        if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return Err(ParamHeaderError::Duplicate {
                property: property.clone(),
                name: name.to_owned(),
            });
        }
        out.push(ParamHeader { property: property.clone(), name: name.to_owned(), kind });
    }
    // Object member order depends on serde_json's features: fix one.
    out.sort_by(|a, b| a.property.cmp(&b.property));
    Ok(out)
}

/// The tools whose `x-mcp-header` annotations are valid; each dropped tool
/// is logged with `tracing::warn!` (its name and the reason).
pub fn retain_valid_tools(tools: Vec<Tool>) -> Vec<Tool> {
    tools
        .into_iter()
        .filter(|tool| match param_headers(&tool.input_schema) {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(tool = %tool.name, reason = %e, "dropping a tool whose x-mcp-header annotations are invalid");
                false
            }
        })
        .collect()
}

/// The text of an argument for its header, before encoding: a string as it
/// is, an integer in decimal (`5.0` counts as `5`), a boolean as
/// `true`/`false`. `None` for `null` or a value of another type than the
/// property's (the server validates arguments; the header only mirrors).
pub fn param_text(kind: ParamKind, value: &Value) -> Option<String> {
    match (kind, value) {
        (ParamKind::String, Value::String(s)) => Some(s.clone()),
        (ParamKind::Boolean, Value::Bool(b)) => Some(b.to_string()),
        (ParamKind::Integer, Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                Some(i.to_string())
            } else if let Some(u) = n.as_u64() {
                Some(u.to_string())
            } else {
                // Exactly representable whole numbers only (|f| < 2^53).
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
                    .map(|f| format!("{}", f as i64))
            }
        }
        _ => None,
    }
}

/// A header value for text that may hold anything: the text as it is when
/// it is visible ASCII (interior spaces allowed), has no leading or trailing
/// white space and does not look encoded (`=?base64?...?=`); otherwise
/// `=?base64?<base64 of the UTF-8>?=`. The result is always visible ASCII.
pub fn encode_header_value(s: &str) -> String {
    let visible = s.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = s.starts_with(' ') || s.ends_with(' ');
    let looks_encoded = s.len() >= 4 && s.starts_with("=?") && s.ends_with("?=");
    if visible && !padded && !looks_encoded {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(s.as_bytes()))
    }
}

/// The text a header value carries: the `=?base64?...?=` form decoded
/// (standard alphabet, padding optional), any other value as it is; `None`
/// when the encoded form is not base64 of UTF-8. The inverse of
/// [`encode_header_value`], for the receiving side.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(encoded.trim_end_matches('='))
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

/// The `Mcp-Param-*` headers of a call to `tool` with `arguments`: full
/// header names and encoded values, sorted by property name. Tools
/// whose annotations are invalid give none (they are not offered anyway).
pub fn param_header_values(tool: &Tool, arguments: Option<&JsonObject>) -> Vec<(String, String)> {
    let (Ok(params), Some(arguments)) = (param_headers(&tool.input_schema), arguments) else {
        return Vec::new();
    };
    params
        .iter()
        .filter_map(|p| {
            let text = param_text(p.kind, arguments.get(&p.property)?)?;
            Some((p.header_name(), encode_header_value(&text)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode_back() {
        for text in ["us-west1", " padded ", "Hello, 世界", "a\r\nb", "=?x?="] {
            assert_eq!(decode_header_value(&encode_header_value(text)).as_deref(), Some(text));
        }
        assert_eq!(decode_header_value("=?base64?IHBhZGRlZCA?=").as_deref(), Some(" padded "));
        assert_eq!(decode_header_value("=?base64?!!?="), None);
        assert_eq!(decode_header_value("=?base64?/w==?="), None);
    }
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        serde_json::from_value(json!({"name": "t", "inputSchema": schema})).unwrap()
    }

    fn schema(properties: Value) -> ToolSchema {
        serde_json::from_value(json!({"type": "object", "properties": properties})).unwrap()
    }

    #[test]
    fn values_are_encoded_only_when_needed() {
        let cases = [
            ("us-west-2", "us-west-2"),
            ("two words", "two words"),
            ("", ""),
            ("!#$%&'*+-.^_`|~", "!#$%&'*+-.^_`|~"),
            (" lead", "=?base64?IGxlYWQ=?="),
            ("tail ", "=?base64?dGFpbCA=?="),
            ("\ttab", "=?base64?CXRhYg==?="),
            ("héllo", "=?base64?aMOpbGxv?="),
            ("日本", "=?base64?5pel5pys?="),
            ("a\r\nb", "=?base64?YQ0KYg==?="),
            ("nul\0", "=?base64?bnVsAA==?="),
            ("del\x7f", "=?base64?ZGVsfw==?="),
            ("=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?="),
            ("=?utf-8?q?x?=", "=?base64?PT91dGYtOD9xP3g/PQ==?="),
            ("=?=", "=?="),
            ("a=?b?=", "a=?b?="),
        ];
        for (input, expected) in cases {
            assert_eq!(encode_header_value(input), expected, "{input:?}");
        }
    }

    #[test]
    fn argument_texts() {
        use ParamKind::*;
        let cases = [
            (String, json!("x"), Some("x")),
            (String, json!(""), Some("")),
            (String, json!(5), None),
            (String, Value::Null, None),
            (Integer, json!(42), Some("42")),
            (Integer, json!(-7), Some("-7")),
            (Integer, json!(u64::MAX), Some("18446744073709551615")),
            (Integer, json!(5.0), Some("5")),
            (Integer, json!(5.5), None),
            (Integer, json!(1e300), None),
            // Whole floats up to 2^53 - 1 only (beyond, they are not exact).
            (Integer, json!(9_007_199_254_740_991.0), Some("9007199254740991")),
            (Integer, json!(-9_007_199_254_740_991.0), Some("-9007199254740991")),
            (Integer, json!(9_007_199_254_740_992.0), None),
            (Integer, json!("5"), None),
            (Boolean, json!(true), Some("true")),
            (Boolean, json!(false), Some("false")),
            (Boolean, json!("true"), None),
            (Boolean, Value::Null, None),
        ];
        for (kind, value, expected) in cases {
            assert_eq!(param_text(kind, &value).as_deref(), expected, "{kind:?} {value}");
        }
    }

    #[test]
    fn annotations_are_read_in_order() {
        let s = schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "note": {"type": "string"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        }));
        let params = param_headers(&s).unwrap();
        let got: Vec<(&str, &str, ParamKind)> =
            params.iter().map(|p| (p.property.as_str(), p.name.as_str(), p.kind)).collect();
        assert_eq!(
            got,
            [
                ("dry_run", "Dry-Run", ParamKind::Boolean),
                ("priority", "Priority", ParamKind::Integer),
                ("region", "Region", ParamKind::String),
            ]
        );
        assert_eq!(params[2].header_name(), "Mcp-Param-Region");
        assert_eq!(param_headers(&ToolSchema::default()).unwrap(), []);
    }

    #[test]
    fn broken_annotations_are_errors() {
        let cases = [
            (json!({"a": {"type": "string", "x-mcp-header": 5}}), "not a string"),
            (json!({"a": {"type": "string", "x-mcp-header": ""}}), "token"),
            (json!({"a": {"type": "string", "x-mcp-header": "Two Words"}}), "token"),
            (json!({"a": {"type": "string", "x-mcp-header": "Colon:"}}), "token"),
            (json!({"a": {"type": "string", "x-mcp-header": "RéGION"}}), "token"),
            (json!({"a": {"type": "string", "x-mcp-header": "a\r\nX-Evil: 1"}}), "token"),
            (json!({"a": {"type": "number", "x-mcp-header": "A"}}), "type"),
            (json!({"a": {"type": "object", "x-mcp-header": "A"}}), "type"),
            (json!({"a": {"x-mcp-header": "A"}}), "type"),
            (json!({"a": {"type": ["string", "null"], "x-mcp-header": "A"}}), "type"),
            (
                json!({"a": {"type": "string", "x-mcp-header": "Region"},
                       "b": {"type": "integer", "x-mcp-header": "REGION"}}),
                "repeats",
            ),
        ];
        for (properties, expected) in cases {
            let err = param_headers(&schema(properties.clone())).unwrap_err();
            assert!(err.to_string().contains(expected), "{properties}: {err}");
        }
    }

    #[test]
    fn invalid_tools_are_dropped_from_the_list() {
        let good = tool(json!({"type": "object", "properties": {
            "r": {"type": "string", "x-mcp-header": "R"}}}));
        let plain = tool(json!({"type": "object"}));
        let mut bad = tool(json!({"type": "object", "properties": {
            "r": {"type": "string", "x-mcp-header": "R"},
            "s": {"type": "string", "x-mcp-header": "r"}}}));
        bad.name = "bad".into();
        let kept = retain_valid_tools(vec![good.clone(), bad, plain.clone()]);
        assert_eq!(kept, vec![good, plain]);
    }

    #[test]
    fn headers_of_a_call() {
        let t = tool(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "label": {"type": "string", "x-mcp-header": "Label"},
            "note": {"type": "string"},
        }}));
        let args = json!({"region": "eu-west", "priority": 3, "dry_run": false,
                          "label": null, "note": "not mirrored"});
        let got = param_header_values(&t, args.as_object());
        let want = [
            ("Mcp-Param-Dry-Run", "false"),
            ("Mcp-Param-Priority", "3"),
            ("Mcp-Param-Region", "eu-west"),
        ];
        let want: Vec<(String, String)> =
            want.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
        assert_eq!(got, want);
        let args = json!({"region": " padded", "label": "ünïcode"});
        assert_eq!(
            param_header_values(&t, args.as_object()),
            [
                ("Mcp-Param-Label".to_owned(), "=?base64?w7xuw69jb2Rl?=".to_owned()),
                ("Mcp-Param-Region".to_owned(), "=?base64?IHBhZGRlZA==?=".to_owned()),
            ]
        );
        assert!(param_header_values(&t, None).is_empty());
    }
}
