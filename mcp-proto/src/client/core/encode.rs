//! Writing a request: its JSON text from borrowed parts, its `_meta` as
//! text, or the `_meta` merged into its parameters as a value.

use serde::Serialize;
use serde_json::{Map, Value};

use super::ModernMeta;
use crate::client::ClientError;
use crate::jsonrpc::{RequestId, write_json, write_json_str};
use crate::methods;
use crate::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY,
};

/// A request's `_meta`, as [`request_text`] writes it.
#[derive(Clone, Copy)]
pub(super) enum Meta<'a> {
    /// A JSON object's text, written as it is.
    Text(&'a [u8]),
    /// The members [`write_meta`] writes: the progress token (the
    /// request's id), the caller's members, the stateless era's (its text
    /// as the core keeps it).
    Members {
        progress: Option<i64>,
        extra: Option<&'a Map<String, Value>>,
        modern: Option<&'a [u8]>,
    },
}

impl Meta<'_> {
    /// About how many bytes it takes, for the buffer's first size.
    fn len_hint(&self) -> usize {
        match self {
            Meta::Text(text) => text.len(),
            Meta::Members { modern, .. } => 64 + modern.map_or(0, <[u8]>::len),
        }
    }
}

/// A request as JSON text, encoded from borrowed parts.
///
/// With `meta`, the parameters get a `_meta` member holding it, written
/// into the request's own buffer: `null` parameters become
/// `{"_meta":...}`, an object gets the member appended. `None` when that
/// cannot be done by appending (the parameters are not an object, or
/// already mention `_meta`): the caller merges by value.
#[inline]
pub(super) fn request_text<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
    meta: Option<Meta<'_>>,
) -> Result<Option<Vec<u8>>, serde_json::Error> {
    // Room for a short call and the line ending a transport adds, so the
    // buffer is not grown (and copied) while it is written.
    let mut text = Vec::with_capacity(256 + meta.as_ref().map_or(0, Meta::len_hint));
    text.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_json(&mut text, id)?;
    match method_and_params(method) {
        Some(known) => text.extend_from_slice(known),
        None => write_method_and_params(&mut text, method),
    }
    let start = text.len();
    write_json(&mut text, params)?;
    if let Some(meta) = meta {
        let written = &text[start..];
        // Raw JSON text may hold whitespace: `{ }` is an empty object too.
        let members = written.strip_prefix(b"{").and_then(|w| w.strip_suffix(b"}"));
        if written == b"null" || members.is_some_and(|m| m.iter().all(u8::is_ascii_whitespace)) {
            text.truncate(start);
            text.extend_from_slice(b"{\"_meta\":");
        } else if members.is_some() && !mentions_meta(written) {
            text.pop();
            text.extend_from_slice(b",\"_meta\":");
        } else {
            return Ok(None);
        }
        match meta {
            Meta::Text(meta) => text.extend_from_slice(meta),
            Meta::Members { progress, extra, modern } => {
                write_meta(&mut text, progress, extra, modern)?;
            }
        }
        text.push(b'}');
    }
    text.push(b'}');
    crate::jsonrpc::make_one_line(&mut text);
    Ok(Some(text))
}

/// `,"method":"M","params":` for the methods a client sends over and
/// over, as constants: the bytes [`write_method_and_params`] writes for
/// them (a test checks each), without its escape check and its five
/// writes. `None` for any other method.
fn method_and_params(method: &str) -> Option<&'static [u8]> {
    Some(match method {
        methods::TOOLS_CALL => br#","method":"tools/call","params":"#,
        methods::TOOLS_LIST => br#","method":"tools/list","params":"#,
        methods::RESOURCES_READ => br#","method":"resources/read","params":"#,
        methods::PROMPTS_GET => br#","method":"prompts/get","params":"#,
        _ => return None,
    })
}

/// `,"method":"M","params":` for any method.
fn write_method_and_params(text: &mut Vec<u8>, method: &str) {
    text.extend_from_slice(b",\"method\":");
    write_json_str(text, method);
    text.extend_from_slice(b",\"params\":");
}

/// Whether a request's `_meta` can be written as text
/// ([`meta_text`]) rather than merged into its parameters as a value: no
/// member of the caller's `_meta` is one the progress token or the
/// stateless era's `_meta` also sets (where the value merge decides which
/// wins).
pub(super) fn meta_text_fits(
    extra: Option<&Map<String, Value>>,
    progress: bool,
    modern: Option<&ModernMeta>,
) -> bool {
    extra.into_iter().flatten().all(|(k, _)| {
        !(progress && k == PROGRESS_TOKEN_META_KEY)
            && modern.is_none_or(|m| !m.map().contains_key(k))
    })
}

/// Writes a request's `_meta` object into `text`: the progress token (the
/// request's id), the caller's members, the stateless era's (its text as
/// the core keeps it). The same members [`with_progress_token`] and
/// [`with_meta`] give the value when [`meta_text_fits`].
fn write_meta(
    text: &mut Vec<u8>,
    progress: Option<i64>,
    extra: Option<&Map<String, Value>>,
    modern: Option<&[u8]>,
) -> Result<(), serde_json::Error> {
    let open = text.len();
    text.push(b'{');
    if let Some(id) = progress {
        // The key is a constant with nothing to escape, the token an
        // integer: written as they are, as serde_json writes them.
        text.extend_from_slice(PROGRESS_TOKEN_MEMBER);
        text.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
        text.push(b',');
    }
    for (k, v) in extra.into_iter().flatten() {
        write_json_str(text, k);
        text.push(b':');
        write_json(text, v)?;
        text.push(b',');
    }
    let members = modern
        .and_then(|m| m.trim_ascii().strip_prefix(b"{")?.strip_suffix(b"}"))
        .filter(|m| !m.trim_ascii().is_empty());
    match members {
        Some(members) => text.extend_from_slice(members),
        // Nothing after the last comma (or an empty object).
        None if text.len() > open + 1 => {
            text.pop();
        }
        None => {}
    }
    text.push(b'}');
    Ok(())
}

/// `"progressToken":`, the start of the member [`write_meta`] writes
/// first (a test checks it against the key's constant).
const PROGRESS_TOKEN_MEMBER: &[u8] = b"\"progressToken\":";

/// Whether `text` holds `"_meta"` anywhere: each `_` looked at (a
/// `memmem` search builds a searcher first, which costs more than the
/// short text it would search).
fn mentions_meta(text: &[u8]) -> bool {
    memchr::memchr_iter(b'_', text)
        .any(|at| at > 0 && text[at - 1] == b'"' && text[at + 1..].starts_with(b"meta\""))
}

/// Merges `protocol` (the era's members) and then `extra` (the caller's)
/// into the parameters' `_meta`; the caller cannot change the version,
/// capabilities or identity the era's members give.
pub(super) fn with_meta(
    method: &str,
    params: Option<Value>,
    extra: Option<&Map<String, Value>>,
    protocol: Option<&Map<String, Value>>,
) -> Result<Value, ClientError> {
    let mut obj = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(_) => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "_meta needs object parameters".into(),
            });
        }
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(ClientError::InvalidParams {
            method: method.into(),
            reason: "_meta must be an object".into(),
        });
    };
    for (k, v) in protocol.into_iter().flatten() {
        meta.insert(k.clone(), v.clone());
    }
    // The caller's members go on top, but for the version, capabilities
    // and identity the connection speaks with (a per-call log level, say,
    // replaces the client's).
    for (k, v) in extra.into_iter().flatten() {
        if protocol.is_none()
            || ![PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]
                .contains(&k.as_str())
        {
            meta.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(obj))
}

pub(super) fn with_progress_token(
    method: &str,
    params: Option<Value>,
    id: i64,
) -> Result<Value, ClientError> {
    let mut obj = match params {
        None => Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(_) => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "progress needs object parameters".into(),
            });
        }
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    match meta {
        Value::Object(meta) => {
            meta.insert(PROGRESS_TOKEN_META_KEY.into(), Value::from(id));
        }
        _ => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: "_meta must be an object".into(),
            });
        }
    }
    Ok(Value::Object(obj))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{
        PROGRESS_TOKEN_MEMBER, mentions_meta, method_and_params, request_text, write_meta,
        write_method_and_params,
    };
    use crate::jsonrpc::{Request, RequestId};
    use crate::methods;
    use crate::types::PROGRESS_TOKEN_META_KEY;

    /// The progress token written as its member's text: what serde_json
    /// writes for the same object, with and without other members.
    #[test]
    fn the_progress_token_is_written_as_serde_json_writes_it() {
        let key = serde_json::to_string(PROGRESS_TOKEN_META_KEY).unwrap() + ":";
        assert_eq!(PROGRESS_TOKEN_MEMBER, key.as_bytes());
        let extra = json!({"trace": "t", "n": [1, {"a": null}]});
        let modern: &[u8] = br#"{"io.modelcontextprotocol/protocolVersion":"v"}"#;
        for id in [0, 1, 7, 42, -1, 1 << 53, i64::MAX, i64::MIN] {
            let mut text = Vec::new();
            write_meta(&mut text, Some(id), None, None).unwrap();
            let expected = json!({ PROGRESS_TOKEN_META_KEY: id });
            assert_eq!(String::from_utf8(text).unwrap(), expected.to_string(), "{id}");
            let mut text = Vec::new();
            write_meta(&mut text, Some(id), extra.as_object(), Some(modern)).unwrap();
            let mut expected = extra.as_object().unwrap().clone();
            expected.insert(PROGRESS_TOKEN_META_KEY.into(), json!(id));
            expected.insert("io.modelcontextprotocol/protocolVersion".into(), json!("v"));
            let written: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&text).unwrap();
            assert_eq!(written, expected, "{id}");
            assert!(text.starts_with(b"{\"progressToken\":"), "{id}");
        }
    }

    /// The methods written as constants, and near misses of them (a
    /// character short, one more, another case, a quote, a prefix).
    const METHODS: &[&str] = &[
        methods::TOOLS_CALL,
        methods::TOOLS_LIST,
        methods::RESOURCES_READ,
        methods::PROMPTS_GET,
        methods::PING,
        methods::INITIALIZE,
        "tools/cal",
        "tools/calls",
        "Tools/call",
        "tools/call\"",
        "tools/call ",
        "tools/lis",
        "resources/reads",
        "prompts/ge",
        "tools\\call",
        "",
    ];

    /// The scan for `"_meta"` finds what a substring search finds, on
    /// texts that hold it, near misses and edges.
    #[test]
    fn a_mention_of_meta_is_found_as_a_substring_search_finds_it() {
        let texts: &[&[u8]] = &[
            b"",
            b"_",
            b"\"_meta\"",
            b"_meta\"",
            b"\"_meta",
            b"\"_met\"",
            b"\"__meta\"",
            b"\"_meta_\"",
            b"{\"_meta\":{}}",
            b"{\"a\":1,\"_meta\":{}}",
            b"{\"a_b\":\"_x\",\"c\":\"_meta\"}",
            b"{\"x_meta\":1}",
            b"{\"_Meta\":1}",
            b"{\"\\_meta\":1}",
            b"{\"message\":\"hi\"}",
            b"{\"_\":\"_\",\"__\":\"meta\"}",
            b"\"_meta\"\"_meta\"",
            b"{\"k\":\"_meta\"",
            b"\"_",
            b"\"_m",
        ];
        for text in texts {
            let found = memchr::memmem::find(text, b"\"_meta\"").is_some();
            assert_eq!(mentions_meta(text), found, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn the_known_methods_are_written_as_the_general_path_writes_them() {
        let known = [
            methods::TOOLS_CALL,
            methods::TOOLS_LIST,
            methods::RESOURCES_READ,
            methods::PROMPTS_GET,
        ];
        for method in METHODS {
            let mut general = Vec::new();
            write_method_and_params(&mut general, method);
            match method_and_params(method) {
                Some(constant) => {
                    assert!(known.contains(method), "{method:?}");
                    assert_eq!(constant, &general[..], "{method:?}");
                }
                None => assert!(!known.contains(method), "{method:?}"),
            }
        }
    }

    #[test]
    fn a_request_is_written_as_serde_json_writes_it_whatever_its_method() {
        let params = json!({"name": "echo", "arguments": {"message": "hi"}});
        for method in METHODS {
            let id = RequestId::Number(7);
            let text = request_text(&id, method, &params, None).unwrap().unwrap();
            let request =
                Request { id: id.clone(), method: (*method).into(), params: Some(params.clone()) };
            assert_eq!(
                String::from_utf8(text).unwrap(),
                serde_json::to_string(&request).unwrap(),
                "{method:?}"
            );
        }
    }
}
