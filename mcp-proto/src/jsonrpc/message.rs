//! The message types: [`Request`], [`Notification`], [`Response`],
//! [`ErrorResponse`] and [`MessageOf`] (one of them), request ids, error
//! objects and codes, and how each is written.

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{DecodeError, decode_message, kind_of, raw_to_value};

/// The only JSON-RPC version string MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// Standard JSON-RPC and MCP error codes.
pub mod error_code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: the requested resource does not exist.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A request refused because the server's session already runs its cap
    /// of requests at once; the client may send it again once one of its
    /// requests is answered. In JSON-RPC's range for implementation-defined
    /// server errors, in the part MCP leaves to implementations (-32000 to
    /// -32019; -32020 to -32099 are the protocol's), clear of the codes in
    /// use there (-32000 and -32001 for a closed connection and a timeout in
    /// the SDKs, [`RESOURCE_NOT_FOUND`] -32002).
    pub const SERVER_BUSY: i64 = -32010;
    /// MCP 2025-11-25: the server needs a URL-mode elicitation to finish first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// MCP: the user rejected a sampling request.
    pub const USER_REJECTED: i64 = -1;
    /// MCP 2026-07-28: a routing header disagrees with the message body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: the request needs a client capability that was not declared.
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    /// MCP 2026-07-28: the server does not support the request's protocol version.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A request id: a string or an integer, never `null`.
///
/// Ids are compared exactly: the string `"1"` and the number `1` are different
/// ids, as JSON-RPC says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id (the client core allocates these).
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    pub(super) fn from_raw(raw: &RawValue) -> Result<Self, DecodeError> {
        match serde_json::from_str::<i64>(raw.get()) {
            Ok(n) => Ok(RequestId::Number(n)),
            Err(_) => RequestId::from_value(raw_to_value(raw)?),
        }
    }

    pub(super) fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::String(s) => Ok(RequestId::String(s)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(RequestId::Number(i)),
                None => Err(DecodeError::InvalidId(format!(
                    "number {n} is not an integer in the signed 64-bit range"
                ))),
            },
            Value::Null => Err(DecodeError::NullId),
            other => Err(DecodeError::InvalidId(format!(
                "expected a string or an integer, found {}",
                kind_of(&other)
            ))),
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }
}

/// One write per id: the integer, or the string as `str` hashes it. Equal
/// ids are of one kind with equal contents, so they hash alike; the number
/// `1` and the string `"1"` may collide, which only costs a comparison.
impl Hash for RequestId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            RequestId::Number(n) => state.write_i64(*n),
            RequestId::String(s) => s.hash(state),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RequestId::from_value(Value::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

/// A request: it has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, such as `tools/call`.
    pub method: String,
    /// The parameters: an object or an array, if present.
    pub params: Option<Value>,
}

impl Request {
    /// A request with the given id, method and parameters.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request { id: id.into(), method: method.into(), params }
    }
}

/// A notification: no id, and no response is ever sent for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, such as `notifications/progress`.
    pub method: String,
    /// The parameters: an object or an array, if present.
    pub params: Option<Value>,
}

impl Notification {
    /// A notification with the given method and parameters.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification { method: method.into(), params }
    }
}

/// A successful response.
///
/// `R` is how the result is held: a parsed [`Value`] (the default), or the
/// result's JSON text as a [`RawValue`] (`Box<RawValue>`), which a client
/// decodes straight into the result's type without building a `Value` first
/// (see [`decode_slice_as`]).
///
/// [`decode_slice_as`]: super::decode_slice_as
#[derive(Debug, Clone, PartialEq)]
pub struct Response<R = Value> {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result (any JSON value; MCP results are objects).
    pub result: R,
}

impl<R> Response<R> {
    /// A successful response to `id`.
    pub fn new(id: RequestId, result: R) -> Self {
        Response { id, result }
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`error_code`]).
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Additional information, if the peer gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// The standard "method not found" error for `method`.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(error_code::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// An error response.
///
/// Its id is `None` only when the peer could not tell which request it
/// answers (JSON-RPC sends `"id": null` then, for example after a parse error).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, if known.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// An error response to `id`.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse { id, error }
    }
}

/// Exactly one JSON-RPC message, with results as [`Value`]s.
pub type Message = MessageOf<Value>;

/// Exactly one JSON-RPC message; `R` is how a response's result is held
/// (see [`Response`]). [`Message`] is the usual form.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageOf<R> {
    /// A request (has an id and a method).
    Request(Request),
    /// A notification (a method, no id).
    Notification(Notification),
    /// A successful response (an id and a result).
    Response(Response<R>),
    /// An error response (an error, and the id if known).
    Error(ErrorResponse),
}

impl<R: Serialize> MessageOf<R> {
    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            MessageOf::Request(r) => Some(&r.method),
            MessageOf::Notification(n) => Some(&n.method),
            MessageOf::Response(_) | MessageOf::Error(_) => None,
        }
    }

    /// The id, for requests and responses that carry one.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            MessageOf::Request(r) => Some(&r.id),
            MessageOf::Response(r) => Some(&r.id),
            MessageOf::Error(e) => e.id.as_ref(),
            MessageOf::Notification(_) => None,
        }
    }

    /// Encodes the message as compact JSON on one line (no line feed or
    /// carriage return, as stdio framing needs), also when it holds raw
    /// JSON text that was pretty-printed (see [`make_one_line`]).
    pub fn to_vec(&self) -> Vec<u8> {
        // Serialising these types cannot fail: every map key is a string and
        // `Value` never holds anything JSON cannot represent.
        let mut text = serde_json::to_vec(self).unwrap_or_default();
        make_one_line(&mut text);
        text
    }
}

/// Turns every line feed and carriage return of JSON text into a space,
/// so that the text is one line (stdio frames messages by line, and some
/// readers also end a line at a lone carriage return).
///
/// The value is unchanged: in valid JSON text these bytes can only be
/// whitespace between tokens, since a string holds them escaped. serde_json
/// writes none of them; raw JSON text kept verbatim (a [`RawValue`] result,
/// or parameters that serialize one) may, when it was pretty-printed.
///
/// [`RawValue`]: serde_json::value::RawValue
pub fn make_one_line(text: &mut [u8]) {
    if memchr::memchr2(b'\n', b'\r', text).is_none() {
        return;
    }
    for byte in text.iter_mut().filter(|b| matches!(b, b'\n' | b'\r')) {
        *byte = b' ';
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl<R> From<Response<R>> for MessageOf<R> {
    fn from(r: Response<R>) -> Self {
        MessageOf::Response(r)
    }
}

impl From<ErrorResponse> for Message {
    fn from(e: ErrorResponse) -> Self {
        Message::Error(e)
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3 + usize::from(self.params.is_some())))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + usize::from(self.params.is_some())))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl<R: Serialize> Serialize for Response<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("result", &self.result)?;
        map.end()
    }
}

impl Serialize for ErrorResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("error", &self.error)?;
        map.end()
    }
}

impl<R: Serialize> Serialize for MessageOf<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageOf::Request(r) => r.serialize(serializer),
            MessageOf::Notification(n) => n.serialize(serializer),
            MessageOf::Response(r) => r.serialize(serializer),
            MessageOf::Error(e) => e.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        decode_message(Value::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}
