//! The fixed resources, prompts and completions the server offers: what
//! `resources/*`, `prompts/*` and `completion/complete` answer. Pure
//! functions of the request; the subscriptions live in the server's state.

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use serde_json::{Map, Value, json};

/// How many text resources there are: `test://static/text/1` to
/// `test://static/text/5`.
pub(crate) const TEXT_RESOURCES: usize = 5;
/// The prefix of the text resources' URIs.
const TEXT_PREFIX: &str = "test://static/text/";
/// The one resource template.
const TEXT_TEMPLATE: &str = "test://static/text/{id}";
/// The one binary resource.
const BLOB_URI: &str = "test://static/blob/1";
/// Its bytes: 0 to 15.
const BLOB: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
/// [`BLOB`] in standard base64 (RFC 4648, with padding).
const BLOB_BASE64: &str = "AAECAwQFBgcICQoLDA0ODw==";
/// What `completion/complete` offers for the `greet` prompt's `name`.
pub(crate) const NAMES: [&str; 3] = ["alice", "bob", "carol"];

/// Every resource, in list order: the text ones, then the blob.
pub(crate) fn resources() -> Vec<Value> {
    let mut all: Vec<Value> = (1..=TEXT_RESOURCES)
        .map(|n| {
            json!({
                "uri": format!("{TEXT_PREFIX}{n}"),
                "name": format!("text-{n}"),
                "title": format!("Text resource {n}"),
                "description": format!("Static text resource number {n}."),
                "mimeType": "text/plain",
                "size": text_of(n).len(),
            })
        })
        .collect();
    all.push(json!({
        "uri": BLOB_URI,
        "name": "blob-1",
        "title": "Blob resource 1",
        "description": "Static binary resource: the bytes 0 to 15.",
        "mimeType": "application/octet-stream",
        "size": BLOB.len(),
    }));
    all
}

/// Every resource template.
pub(crate) fn resource_templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": TEXT_TEMPLATE,
        "name": "text",
        "title": "Text resource",
        "description": format!(
            "The static text resources, by number (1 to {TEXT_RESOURCES})."
        ),
        "mimeType": "text/plain",
    })]
}

/// The contents of the resource `uri`, or `None` when there is no such
/// resource.
pub(crate) fn read(uri: &str) -> Option<Value> {
    if uri == BLOB_URI {
        return Some(json!({
            "uri": uri,
            "mimeType": "application/octet-stream",
            "blob": BLOB_BASE64,
        }));
    }
    let n = text_number(uri)?;
    Some(json!({ "uri": uri, "mimeType": "text/plain", "text": text_of(n) }))
}

/// The error for a URI that names no resource.
pub(crate) fn not_found(uri: &str) -> ErrorObject {
    let mut error = ErrorObject::new(error_code::RESOURCE_NOT_FOUND, "Resource not found");
    error.data = Some(json!({ "uri": uri }));
    error
}

/// The number `n` of `test://static/text/<n>`, when it is one of ours
/// (written without sign or leading zeros).
fn text_number(uri: &str) -> Option<usize> {
    let digits = uri.strip_prefix(TEXT_PREFIX)?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| (1..=TEXT_RESOURCES).contains(n))
}

fn text_of(n: usize) -> String {
    format!("This is text resource {n}.")
}

/// Every prompt, in list order.
pub(crate) fn prompts() -> Vec<Value> {
    vec![
        json!({
            "name": "simple",
            "title": "Simple prompt",
            "description": "A prompt without arguments: one user message.",
        }),
        json!({
            "name": "greet",
            "title": "Greeting",
            "description": "Greets someone by name (the name is completable).",
            "arguments": [{
                "name": "name",
                "title": "Name",
                "description": "Who to greet",
                "required": true,
            }],
        }),
    ]
}

/// `prompts/get`.
pub(crate) fn get_prompt(params: Option<Value>) -> Result<Value, ErrorObject> {
    let params = params.unwrap_or(Value::Null);
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(invalid_params("prompts/get needs a string name"));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => return Err(invalid_params("prompt arguments must be an object")),
    };
    if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Err(invalid_params(format!("prompt argument `{key}` must be a string")));
    }
    let (description, text) = match name {
        "simple" => ("A simple prompt", "This is a simple prompt without arguments.".to_owned()),
        "greet" => {
            let Some(who) = arguments.get("name").and_then(Value::as_str) else {
                return Err(invalid_params("prompt `greet` needs the argument `name`"));
            };
            ("A greeting", format!("Hello, {who}!"))
        }
        other => return Err(invalid_params(format!("Unknown prompt: {other}"))),
    };
    Ok(json!({
        "description": description,
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    }))
}

/// `completion/complete`: the `greet` prompt's `name` from [`NAMES`], the
/// text template's `id` from the resource numbers; anything else, nothing.
pub(crate) fn complete(params: Option<Value>) -> Result<Value, ErrorObject> {
    let params = params.unwrap_or(Value::Null);
    let reference = params.get("ref").filter(|r| r.is_object());
    let kind = reference.and_then(|r| r.get("type")).and_then(Value::as_str);
    let Some(kind) = kind else {
        return Err(invalid_params("completion/complete needs a ref with a string type"));
    };
    let argument = params.get("argument");
    let name = argument.and_then(|a| a.get("name")).and_then(Value::as_str);
    let value = argument.and_then(|a| a.get("value")).and_then(Value::as_str);
    let (Some(name), Some(value)) = (name, value) else {
        return Err(invalid_params(
            "completion/complete needs an argument with a name and a value",
        ));
    };
    let reference = reference.unwrap_or(&Value::Null);
    let candidates: Vec<String> = match (kind, name) {
        ("ref/prompt", "name") if reference.get("name") == Some(&json!("greet")) => {
            NAMES.iter().map(|s| (*s).to_owned()).collect()
        }
        ("ref/resource", "id") if reference.get("uri") == Some(&json!(TEXT_TEMPLATE)) => {
            (1..=TEXT_RESOURCES).map(|n| n.to_string()).collect()
        }
        _ => Vec::new(),
    };
    let values: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(value)).collect();
    Ok(json!({
        "completion": { "values": values, "total": values.len(), "hasMore": false },
    }))
}

/// The `uri` parameter of a `resources/*` request.
pub(crate) fn uri_param(params: Option<&Value>) -> Result<&str, ErrorObject> {
    params
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("the request needs a string uri"))
}

/// Whether `uri` names a resource.
pub(crate) fn exists(uri: &str) -> bool {
    uri == BLOB_URI || text_number(uri).is_some()
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blob_is_its_base64() {
        // Each 6-bit group of 0x00 0x01 0x02 ... read off the alphabet.
        const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let bits: String = BLOB.iter().map(|b| format!("{b:08b}")).collect();
        let mut expected: String = bits
            .as_bytes()
            .chunks(6)
            .map(|c| {
                let mut v = 0usize;
                for (i, bit) in c.iter().enumerate() {
                    v |= usize::from(*bit == b'1') << (5 - i);
                }
                ALPHABET.as_bytes()[v] as char
            })
            .collect();
        while !expected.len().is_multiple_of(4) {
            expected.push('=');
        }
        assert_eq!(BLOB_BASE64, expected);
    }

    #[test]
    fn every_listed_resource_reads_and_nothing_else_does() {
        for resource in resources() {
            let uri = resource["uri"].as_str().unwrap();
            assert!(exists(uri));
            let contents = read(uri).unwrap();
            assert_eq!(contents["mimeType"], resource["mimeType"]);
            let size = contents.get("text").map_or(BLOB.len(), |t| t.as_str().unwrap().len());
            assert_eq!(resource["size"], size);
        }
        for uri in [
            "test://static/text/0",
            "test://static/text/6",
            "test://static/text/01",
            "test://static/text/+1",
            "test://static/text/",
            "test://static/blob/2",
            "",
        ] {
            assert!(read(uri).is_none() && !exists(uri), "{uri}");
        }
    }
}
