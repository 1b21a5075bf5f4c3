//! The checks made on a request before its body is handed to a core.
//!
//! Pure functions of headers (and, for the body, a capped read with a
//! deadline); each refusal says what was wrong.

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, Request, StatusCode, Uri};
use http_body_util::BodyExt;
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::types::PROTOCOL_VERSION_META_KEY;
use mcp_proto::{ProtocolVersion, methods};
use serde_json::Value;

use super::reply::{Reply, text};
use super::{MCP_METHOD, MCP_NAME, PROTOCOL_VERSION};

/// A request refused before it reached a core: the status and a short
/// reason, sent as a `text/plain` body by [`Refusal::reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// What was wrong, for the body.
    pub reason: &'static str,
}

impl Refusal {
    const fn new(status: StatusCode, reason: &'static str) -> Self {
        Refusal { status, reason }
    }

    /// The response that says so.
    pub fn reply(&self) -> Reply {
        text(self.status, self.reason)
    }
}

/// Whether an `Accept` header lists the media type (case-insensitive,
/// parameters ignored).
pub fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    accepts_all(headers, &[wanted])
}

/// Whether the `Accept` headers list every one of the media types (at most
/// 64; case-insensitive, parameters ignored), read once.
pub fn accepts_all(headers: &HeaderMap, wanted: &[&str]) -> bool {
    let wanted = &wanted[..wanted.len().min(64)];
    let mut values = headers.get_all(ACCEPT).iter();
    // The usual header, one value listing exactly the wanted types in
    // order (`application/json, text/event-stream`): no item split,
    // trimmed or compared without case.
    if let (Some(only), None) = (values.next(), values.next())
        && lists_exactly(only.as_bytes(), wanted)
    {
        return true;
    }
    accepts_all_general(headers, wanted)
}

/// Whether `value` is the `wanted` media types, in order, each written
/// exactly as given, joined by `", "` (a value [`accepts_all_general`]
/// always accepts, for wanted types that hold no `,`, `;` or space at
/// their ends).
fn lists_exactly(value: &[u8], wanted: &[&str]) -> bool {
    let mut rest = value;
    for (i, name) in wanted.iter().enumerate() {
        if i > 0 {
            let Some(after) = rest.strip_prefix(b", ") else { return false };
            rest = after;
        }
        let Some(after) = rest.strip_prefix(name.as_bytes()) else { return false };
        rest = after;
    }
    !wanted.is_empty() && rest.is_empty()
}

/// [`accepts_all`] item by item.
fn accepts_all_general(headers: &HeaderMap, wanted: &[&str]) -> bool {
    let all = u64::MAX >> (64 - wanted.len().max(1));
    let mut found = 0u64;
    for value in headers.get_all(ACCEPT) {
        for item in value.as_bytes().split(|&b| b == b',') {
            let media = media_type(item);
            for (i, name) in wanted.iter().enumerate() {
                if media.eq_ignore_ascii_case(name.as_bytes()) {
                    found |= 1 << i;
                }
            }
        }
    }
    wanted.is_empty() || found == all
}

/// The media type of an `Accept` item or a `Content-Type`: before any
/// parameter, trimmed.
fn media_type(item: &[u8]) -> &[u8] {
    item.split(|&b| b == b';').next().unwrap_or_default().trim_ascii()
}

/// Whether `Content-Type` is `application/json` (parameters ignored).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).is_some_and(|v| {
        // The usual value as it is, before the parameters are split off.
        v.as_bytes() == b"application/json"
            || media_type(v.as_bytes()).eq_ignore_ascii_case(b"application/json")
    })
}

/// Whether a host name (no port) is a loopback one: `localhost`,
/// `127.0.0.1` or `[::1]`.
fn is_loopback_name(host: &str) -> bool {
    ["127.0.0.1", "localhost", "[::1]"].iter().any(|name| name.eq_ignore_ascii_case(host))
}

/// The host name of an authority (`host[:port]`, `[v6][:port]`).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    }
}

/// Whether an `Origin` is a loopback one (`http(s)://localhost`,
/// `127.0.0.1`, `[::1]`, any port).
pub fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    is_loopback_name(host_of(rest.split('/').next().unwrap_or("")))
}

/// The DNS rebinding guard of a server on a loopback address: a request
/// whose `Origin` (when sent) is not a loopback one, or whose host (the
/// `Host` header, or the HTTP/2 authority) is neither a loopback name nor
/// one of `extra_hosts` (names without port, compared without case), is
/// refused with 403. A page in a browser that rebinds its own name to
/// 127.0.0.1 sends its own name in both.
pub fn check_loopback<B>(request: &Request<B>, extra_hosts: &[String]) -> Result<(), Refusal> {
    check_origin_and_host(request.headers(), request.uri(), &[], extra_hosts)
}

/// [`check_loopback`] with more origins allowed too: an `Origin` that is a
/// loopback one or equals one of `extra_origins` (`scheme://host[:port]`,
/// compared without case) passes; `*` among `extra_hosts` lets any host
/// through (a server reached by names it cannot list, behind a proxy that
/// checks them).
pub fn check_origin_and_host(
    headers: &HeaderMap,
    uri: &Uri,
    extra_origins: &[String],
    extra_hosts: &[String],
) -> Result<(), Refusal> {
    if let Some(origin) = headers.get(ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|origin| {
            is_loopback_origin(origin)
                || extra_origins
                    .iter()
                    .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin))
        });
        if !allowed {
            return Err(Refusal::new(StatusCode::FORBIDDEN, "Origin not allowed"));
        }
    }
    let allowed = |host: &str| {
        is_loopback_name(host)
            || extra_hosts.iter().any(|h| h == "*" || h.eq_ignore_ascii_case(host))
    };
    match request_host(headers, uri) {
        Some(host) if allowed(host_of(host)) => Ok(()),
        // HTTP/1.0 without Host: nothing a browser sends.
        None => Ok(()),
        Some(_) => Err(Refusal::new(StatusCode::FORBIDDEN, "Host not allowed")),
    }
}

/// The request's host: the `Host` header, else the URI's authority.
fn request_host<'a>(headers: &'a HeaderMap, uri: &'a Uri) -> Option<&'a str> {
    match headers.get(HOST) {
        Some(host) => Some(host.to_str().unwrap_or("\u{0}")),
        None => uri.authority().map(|a| a.as_str()),
    }
}

/// Why a body was not read.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyError {
    /// A refusal to send: 413 over the cap, 408 past the deadline.
    Refused(Refusal),
    /// The connection failed while reading.
    Io(std::io::Error),
}

/// Reads a request body of at most `limit` bytes within `deadline`. A body
/// of one frame (the usual small POST) is returned as it came, uncopied.
pub async fn read_body<B>(body: B, limit: usize, deadline: Duration) -> Result<Bytes, BodyError>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let too_large =
        || BodyError::Refused(Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, "body too large"));
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let read = async {
        let mut body = std::pin::pin!(body);
        let mut first: Option<Bytes> = None;
        let mut more: Option<BytesMut> = None;
        let mut total = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| BodyError::Io(std::io::Error::other(e.into())))?;
            let Ok(mut data) = frame.into_data() else { continue };
            total = total.saturating_add(data.remaining());
            if total > limit {
                return Err(too_large());
            }
            let data = data.copy_to_bytes(data.remaining());
            match (&mut first, &mut more) {
                (None, None) => first = Some(data),
                (_, Some(more)) => more.extend_from_slice(&data),
                (Some(head), None) => {
                    let mut joined = BytesMut::with_capacity(head.len() + data.len());
                    joined.extend_from_slice(head);
                    joined.extend_from_slice(&data);
                    more = Some(joined);
                }
            }
        }
        Ok(more.map(BytesMut::freeze).or(first).unwrap_or_default())
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(read) => read,
        Err(_) => {
            Err(BodyError::Refused(Refusal::new(StatusCode::REQUEST_TIMEOUT, "body too slow")))
        }
    }
}

/// A handshake-era request's `MCP-Protocol-Version`, when sent, must name
/// a revision this toolkit knows: else 400.
pub fn check_version_header(headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(value) = headers.get(PROTOCOL_VERSION) else { return Ok(()) };
    match value.to_str().ok().map(str::trim).and_then(ProtocolVersion::parse) {
        Some(_) => Ok(()),
        None => Err(Refusal::new(StatusCode::BAD_REQUEST, "unsupported MCP-Protocol-Version")),
    }
}

/// Whether the `MCP-Protocol-Version` header names a stateless revision.
pub fn stateless_version_header(headers: &HeaderMap) -> bool {
    headers
        .get(PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| ProtocolVersion::parse(v.trim()))
        .is_some_and(ProtocolVersion::is_modern)
}

/// The stateless era's headers against the request body (each `-32020`,
/// HTTP 400): `MCP-Protocol-Version` equal to the `_meta` version,
/// `Mcp-Method` to the method, `Mcp-Name` to the member of `params`
/// that [`methods::name_header_param`] names (`name`, `uri`, or a task's
/// `taskId`), and, for
/// `tools/call`, an `Mcp-Param-<header>` for each `(property, header)` of
/// `param_headers` whose argument has a value, equal after decoding
/// (numbers compared as numbers). Values may come in the
/// `=?base64?...?=` form.
pub fn check_stateless_headers(
    headers: &HeaderMap,
    request: &mcp_proto::jsonrpc::Request,
    param_headers: &[(String, String)],
) -> Result<(), ErrorObject> {
    check_stateless_version(headers, request)?;
    check_stateless_names(headers, request, param_headers)
}

/// The first half of [`check_stateless_headers`]: `MCP-Protocol-Version`
/// equal to the body's `_meta` version.
pub fn check_stateless_version(
    headers: &HeaderMap,
    request: &mcp_proto::jsonrpc::Request,
) -> Result<(), ErrorObject> {
    let params = request.params.as_ref();
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_META_KEY))
        .and_then(Value::as_str);
    let header = headers.get(PROTOCOL_VERSION).and_then(|v| v.to_str().ok()).map(str::trim);
    match header {
        None => Err(mismatch("the MCP-Protocol-Version header is missing".into())),
        Some(h) if Some(h) != version => Err(mismatch(format!(
            "MCP-Protocol-Version header {h:?} does not match the body's {version:?}"
        ))),
        Some(_) => Ok(()),
    }
}

/// The second half of [`check_stateless_headers`]: `Mcp-Method`,
/// `Mcp-Name` and the `Mcp-Param-*` headers.
pub fn check_stateless_names(
    headers: &HeaderMap,
    request: &mcp_proto::jsonrpc::Request,
    param_headers: &[(String, String)],
) -> Result<(), ErrorObject> {
    let params = request.params.as_ref();
    let method = headers.get(MCP_METHOD).and_then(|v| v.to_str().ok());
    if method != Some(request.method.as_str()) {
        return Err(mismatch(format!(
            "Mcp-Method header {method:?} does not match the body's method {:?}",
            request.method
        )));
    }
    if let Some(field) = methods::name_header_param(&request.method) {
        let body = params.and_then(|p| p.get(field)).and_then(Value::as_str);
        let header = headers.get(MCP_NAME).and_then(|v| v.to_str().ok()).map(decode);
        if body.is_some() && header.as_ref().map(|h| h.as_deref()) != Some(body) {
            return Err(mismatch(format!(
                "Mcp-Name header {header:?} does not match the body's {field} {body:?}"
            )));
        }
    }
    if request.method == methods::TOOLS_CALL {
        check_param_headers(headers, params, param_headers)?;
    }
    Ok(())
}

fn check_param_headers(
    headers: &HeaderMap,
    params: Option<&Value>,
    param_headers: &[(String, String)],
) -> Result<(), ErrorObject> {
    for (property, header_name) in param_headers {
        let value = params.and_then(|p| p.get("arguments")).and_then(|a| a.get(property));
        let Some(value) = value.filter(|v| !v.is_null()) else { continue };
        let header = format!("mcp-param-{}", header_name.to_ascii_lowercase());
        let given = headers.get(header.as_str()).and_then(|v| v.to_str().ok()).map(decode);
        let Some(Some(given)) = given else {
            return Err(mismatch(format!("the {header} header is missing or malformed")));
        };
        let equal = match value {
            Value::String(s) => given == *s,
            Value::Bool(b) => given == b.to_string(),
            Value::Number(n) => given.parse::<f64>().ok() == n.as_f64(),
            _ => false,
        };
        if !equal {
            return Err(mismatch(format!(
                "the {header} header {given:?} does not match the argument {property} = {value}"
            )));
        }
    }
    Ok(())
}

fn decode(value: &str) -> Option<String> {
    mcp_proto::client::headers::decode_header_value(value)
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(error_code::HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderName, HeaderValue};
    use serde_json::json;

    #[test]
    fn accept_and_content_type_checks() {
        let mut headers = HeaderMap::new();
        headers
            .insert(ACCEPT, HeaderValue::from_static("Application/JSON; q=1, text/event-stream"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
        assert!(accepts(&headers, "application/json"));
        assert!(accepts(&headers, "text/event-stream"));
        assert!(!accepts(&headers, "text/html"));
        assert!(is_json(&headers));
    }

    /// The exact-list shortcut of `accepts_all` against the item-by-item
    /// path, on the usual values and their near misses, with one and with
    /// two `Accept` headers.
    #[test]
    fn accepts_all_shortcut_agrees_with_the_general_path() {
        let values = [
            "application/json, text/event-stream",
            "text/event-stream, application/json",
            "application/json,text/event-stream",
            "application/json,  text/event-stream",
            "application/json , text/event-stream",
            "Application/JSON, text/event-stream",
            "application/json; q=1, text/event-stream",
            "application/json, text/event-stream, */*",
            "application/json, text/event-stream,",
            "application/json, text/event-stream ",
            " application/json, text/event-stream",
            "application/json, text/event-strea",
            "application/json, text/event-streamx",
            "application/jsonx, text/event-stream",
            "application/json, ",
            "application/json",
            "text/event-stream",
            "application/json, application/json",
            "",
            ",",
            "*/*",
        ];
        let wanted_lists: [&[&str]; 5] = [
            &["application/json", "text/event-stream"],
            &["text/event-stream", "application/json"],
            &["application/json"],
            &["text/event-stream"],
            &[],
        ];
        for wanted in wanted_lists {
            for value in values {
                let mut one = HeaderMap::new();
                one.insert(ACCEPT, HeaderValue::from_static(value));
                let general = accepts_all_general(&one, wanted);
                assert_eq!(accepts_all(&one, wanted), general, "{value:?} for {wanted:?}");
                if lists_exactly(value.as_bytes(), wanted) {
                    assert!(general, "the shortcut took {value:?} for {wanted:?}");
                }
                for second in values {
                    let mut two = one.clone();
                    two.append(ACCEPT, HeaderValue::from_static(second));
                    assert_eq!(
                        accepts_all(&two, wanted),
                        accepts_all_general(&two, wanted),
                        "{value:?} and {second:?} for {wanted:?}"
                    );
                }
            }
        }
        assert!(lists_exactly(
            b"application/json, text/event-stream",
            &["application/json", "text/event-stream"]
        ));
        assert!(!lists_exactly(b"", &[]));
        let none = HeaderMap::new();
        assert!(!accepts_all(&none, &["application/json"]));
        assert!(accepts_all(&none, &[]));
    }

    /// `is_json`'s exact-value shortcut against the media type compared
    /// without case.
    #[test]
    fn is_json_shortcut_agrees_with_the_media_type() {
        let values = [
            "application/json",
            "application/json; charset=utf-8",
            "Application/Json",
            " application/json ",
            "application/jsonx",
            "application/json5",
            "application/jso",
            "text/json",
            "",
        ];
        for value in values {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            let general = media_type(value.as_bytes()).eq_ignore_ascii_case(b"application/json");
            assert_eq!(is_json(&headers), general, "{value:?}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }

    #[test]
    fn dns_rebinding_is_refused_by_origin_and_host() {
        for ok in ["http://127.0.0.1:3000", "http://localhost", "https://[::1]:8/x"] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in ["http://evil.example", "null", "http://127.0.0.1.evil.example"] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
        let request = |host: Option<&str>, origin: Option<&str>| {
            let mut builder = Request::builder().uri("/mcp");
            if let Some(host) = host {
                builder = builder.header(HOST, host);
            }
            if let Some(origin) = origin {
                builder = builder.header(ORIGIN, origin);
            }
            builder.body(()).unwrap()
        };
        let cases = [
            (Some("127.0.0.1:8080"), None, true),
            (Some("localhost"), Some("http://localhost:3000"), true),
            (Some("[::1]:9"), None, true),
            (None, None, true),
            (Some("evil.example:8080"), None, false),
            (Some("127.0.0.1:8080"), Some("http://evil.example"), false),
            (Some("127.0.0.1.evil.example"), None, false),
        ];
        for (host, origin, allowed) in cases {
            assert_eq!(
                check_loopback(&request(host, origin), &[]).is_ok(),
                allowed,
                "{host:?} {origin:?}"
            );
        }
        let h2 = Request::builder().uri("https://evil.example/mcp").body(()).unwrap();
        assert!(check_loopback(&h2, &[]).is_err());
        let named = request(Some("MCP.test:80"), None);
        assert!(check_loopback(&named, &["mcp.test".into()]).is_ok());
        let app = request(Some("mcp.test"), Some("https://App.example"));
        let (headers, uri) = (app.headers(), app.uri());
        let hosts = ["mcp.test".to_owned()];
        assert!(check_origin_and_host(headers, uri, &[], &hosts).is_err());
        let origins = ["https://app.example/".to_owned()];
        assert!(check_origin_and_host(headers, uri, &origins, &hosts).is_ok());
        assert!(check_origin_and_host(headers, uri, &origins, &[]).is_err());
        assert!(check_origin_and_host(headers, uri, &origins, &["*".into()]).is_ok());
    }

    #[test]
    fn stateless_headers_must_match_the_body() {
        let request = mcp_proto::jsonrpc::Request::new(
            1,
            "tools/call",
            Some(json!({"name": "t", "arguments": {"region": "日本", "n": 2},
                        "_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28"}})),
        );
        let params = [("region".to_owned(), "Region".to_owned()), ("n".to_owned(), "N".to_owned())];
        let mut headers = HeaderMap::new();
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2026-07-28"));
        headers.insert(MCP_METHOD, HeaderValue::from_static("tools/call"));
        headers.insert(MCP_NAME, HeaderValue::from_static("t"));
        headers.insert("mcp-param-region", HeaderValue::from_static("=?base64?5pel5pys?="));
        headers.insert("mcp-param-n", HeaderValue::from_static("2.0"));
        assert_eq!(check_stateless_headers(&headers, &request, &params), Ok(()));
        for (name, value) in [
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "u"),
            ("mcp-param-n", "3"),
        ] {
            let mut wrong = headers.clone();
            wrong.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
            let error = check_stateless_headers(&wrong, &request, &params).unwrap_err();
            assert_eq!(error.code, error_code::HEADER_MISMATCH, "{name}");
        }
        let mut missing = headers.clone();
        missing.remove("mcp-param-region");
        assert!(check_stateless_headers(&missing, &request, &params).is_err());
    }

    #[test]
    fn a_task_request_is_routed_by_its_task_id() {
        let meta = json!({PROTOCOL_VERSION_META_KEY: "2026-07-28"});
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let request = mcp_proto::jsonrpc::Request::new(
                1,
                method,
                Some(json!({"taskId": "task-7", "_meta": meta})),
            );
            let mut headers = HeaderMap::new();
            headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2026-07-28"));
            headers.insert(MCP_METHOD, HeaderValue::from_str(method).unwrap());
            headers.insert(MCP_NAME, HeaderValue::from_static("task-7"));
            assert_eq!(check_stateless_headers(&headers, &request, &[]), Ok(()), "{method}");
            headers.insert(MCP_NAME, HeaderValue::from_static("task-8"));
            let error = check_stateless_headers(&headers, &request, &[]).unwrap_err();
            assert_eq!(error.code, error_code::HEADER_MISMATCH, "{method}");
        }
    }
}
