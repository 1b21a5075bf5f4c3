//! JSON-RPC 2.0: the envelope every MCP message travels in.
//!
//! [`decode`] and [`decode_slice`] classify any incoming JSON value into
//! exactly one [`Message`] (or a batch of them, which 2025-03-26 peers may
//! send) and reject everything else with a [`DecodeError`] that says what was
//! wrong; [`decode_received`] does the same for a server, a request's
//! parameters kept as their JSON text ([`RawRequest`]). Encoding goes through [`serde::Serialize`] on the message types,
//! which always writes `"jsonrpc": "2.0"` and never a `null` id on a request;
//! [`write_json`] writes any value's text as `serde_json::to_writer` does,
//! copying strings that need no escaping whole.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

mod text;

pub use text::{raw_json, write_json, write_json_str};

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
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id (the client core allocates these).
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    fn from_raw(raw: &RawValue) -> Result<Self, DecodeError> {
        match serde_json::from_str::<i64>(raw.get()) {
            Ok(n) => Ok(RequestId::Number(n)),
            Err(_) => RequestId::from_value(raw_to_value(raw)?),
        }
    }

    fn from_value(value: Value) -> Result<Self, DecodeError> {
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

/// What one incoming JSON text held, with results as [`Value`]s.
pub type Incoming = IncomingOf<Value>;

/// What one incoming JSON text held; `R` is how a response's result is held
/// (see [`Response`]). [`Incoming`] is the usual form.
#[derive(Debug, Clone, PartialEq)]
pub enum IncomingOf<R> {
    /// A single message.
    Single(MessageOf<R>),
    /// A non-empty batch (JSON array) of messages, as 2025-03-26 peers may
    /// send. Each element is classified on its own: one bad element does not
    /// poison the others.
    Batch(Vec<Result<MessageOf<R>, DecodeError>>),
}

/// The error of a single error response that carries no id (the server
/// could not read the request's id: a parse error, say). Where a transport
/// ties each reply to its request (an HTTP POST and its JSON body), such an
/// error answers that request; elsewhere it answers nothing.
pub fn unaddressed_error<R>(incoming: &IncomingOf<R>) -> Option<&ErrorObject> {
    match incoming {
        IncomingOf::Single(MessageOf::Error(e)) if e.id.is_none() => Some(&e.error),
        _ => None,
    }
}

/// The answer JSON-RPC asks for when a peer sent a request whose id cannot
/// be read (`null`, or neither a string nor an integer): an error response
/// `-32600` with a `null` id. `None` for every other decoding failure
/// (garbage, responses, notifications get no answer: answering them could
/// start a loop).
pub fn invalid_request_reply(bytes: &[u8], error: &DecodeError) -> Option<Message> {
    if !matches!(error, DecodeError::NullId | DecodeError::InvalidId(_)) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let object = value.as_object()?;
    if !object.get("method").is_some_and(serde_json::Value::is_string) {
        return None;
    }
    Some(Message::Error(ErrorResponse {
        id: None,
        error: ErrorObject::new(error_code::INVALID_REQUEST, format!("Invalid Request: {error}")),
    }))
}

/// The id of the response a text begins, when it can be read even though
/// the whole text cannot (it was cut at a size limit, or is broken further
/// on): the top-level members before the break must be well-formed, and
/// among them must be the `id` (an integer or a string) and a `result` or
/// `error` member that has begun, with no `method` (a request's id means
/// nothing to the client). Lets a transport fail the one request whose
/// answer it had to drop, with the reason, instead of leaving it to time
/// out.
pub fn response_id_of_prefix(text: &[u8]) -> Option<RequestId> {
    let mut s = Scan { b: text, i: 0 };
    s.ws();
    s.eat(b'{')?;
    let mut id = None;
    let mut response = false;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            break;
        }
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        match key.as_slice() {
            b"id" => {
                let start = s.i;
                s.skip_value()?;
                let v: serde_json::Value = serde_json::from_slice(&text[start..s.i]).ok()?;
                id = match v {
                    serde_json::Value::String(x) => Some(RequestId::String(x)),
                    serde_json::Value::Number(n) => Some(RequestId::Number(n.as_i64()?)),
                    _ => return None,
                };
            }
            b"method" => return None,
            b"result" | b"error" => {
                response = true;
                if id.is_some() {
                    break;
                }
                s.skip_value()?;
            }
            _ => s.skip_value()?,
        }
        if response && id.is_some() {
            break;
        }
        s.ws();
        // The object ending here (`}`) holds no response id we could use:
        // that was found above, or there is none.
        match s.peek()? {
            b',' => s.i += 1,
            _ => return None,
        }
    }
    if response { id } else { None }
}

/// A forward scanner over JSON text that may end early: every step says
/// `None` when the text ends or is malformed there.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string's raw bytes (escapes kept as written).
    fn string(&mut self) -> Option<Vec<u8>> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match self.peek()? {
                b'"' => {
                    let raw = self.b[start..self.i].to_vec();
                    self.i += 1;
                    return Some(raw);
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value; nesting is counted, strings skipped whole. A
    /// missing value (a delimiter where it should begin) is malformed.
    fn skip_value(&mut self) -> Option<()> {
        if matches!(self.peek()?, b',' | b':' | b'}' | b']') {
            return None;
        }
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.i += 1;
                }
                _ => self.i += 1,
            }
            if depth == 0 {
                // A value ends at a delimiter; the text ending right after it
                // may have cut it (inside a number, say).
                match self.peek()? {
                    b',' | b'}' => return Some(()),
                    b' ' | b'\t' | b'\n' | b'\r' => {
                        self.ws();
                        return Some(());
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Why an incoming JSON value is not a valid JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not JSON at all.
    Json(String),
    /// The value is neither an object nor an array of objects.
    NotAnObject(&'static str),
    /// An empty JSON array.
    EmptyBatch,
    /// A batch element is itself an array.
    NestedBatch,
    /// `jsonrpc` is missing.
    MissingVersion,
    /// `jsonrpc` is present but not `"2.0"`.
    WrongVersion(String),
    /// The object has no `method`, `result` or `error`.
    NoMethodResultOrError,
    /// `method` is not a string.
    MethodNotString,
    /// A request or a response has `"id": null`.
    NullId,
    /// The id is neither a string nor an integer.
    InvalidId(String),
    /// A response without an id.
    MissingId,
    /// A message has both `result` and `error`.
    BothResultAndError,
    /// A message has both `method` and `result` or `error`.
    MethodAndOutcome,
    /// `params` is neither an object nor an array.
    InvalidParams(&'static str),
    /// The `error` member is not a valid error object.
    InvalidErrorObject(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Json(e) => write!(f, "not valid JSON: {e}"),
            DecodeError::NotAnObject(kind) => {
                write!(f, "a JSON-RPC message must be an object, found {kind}")
            }
            DecodeError::EmptyBatch => f.write_str("an empty batch (JSON array) is not valid"),
            DecodeError::NestedBatch => {
                f.write_str("a batch element must be an object, found an array")
            }
            DecodeError::MissingVersion => f.write_str("the \"jsonrpc\" member is missing"),
            DecodeError::WrongVersion(v) => write!(f, "\"jsonrpc\" must be \"2.0\", found {v}"),
            DecodeError::NoMethodResultOrError => {
                f.write_str("the object has no \"method\", \"result\" or \"error\"")
            }
            DecodeError::MethodNotString => f.write_str("\"method\" must be a string"),
            DecodeError::NullId => f.write_str("the id must not be null"),
            DecodeError::InvalidId(why) => write!(f, "invalid id: {why}"),
            DecodeError::MissingId => f.write_str("a response must carry the id of its request"),
            DecodeError::BothResultAndError => {
                f.write_str("a response must not have both \"result\" and \"error\"")
            }
            DecodeError::MethodAndOutcome => {
                f.write_str("a message must not have both \"method\" and \"result\"/\"error\"")
            }
            DecodeError::InvalidParams(kind) => {
                write!(f, "\"params\" must be an object or an array, found {kind}")
            }
            DecodeError::InvalidErrorObject(why) => write!(f, "invalid error object: {why}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// How a decoded response holds its result: as a parsed [`Value`], or as
/// the result's JSON text (`Box<RawValue>`), kept for decoding straight into
/// a typed result later.
///
/// The trait is sealed: those are the two forms.
pub trait ResultBody: Sized + sealed::Sealed {
    /// Takes the result from its JSON text (already checked to be JSON).
    fn from_raw(raw: &RawValue) -> Result<Self, DecodeError>;
    /// The result as JSON text.
    fn into_raw(self) -> Box<RawValue>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for serde_json::Value {}
    impl Sealed for Box<serde_json::value::RawValue> {}
}

impl ResultBody for Value {
    fn from_raw(raw: &RawValue) -> Result<Self, DecodeError> {
        serde_json::from_str(raw.get()).map_err(|e| DecodeError::Json(e.to_string()))
    }

    fn into_raw(self) -> Box<RawValue> {
        // A `Value` always encodes (its keys are strings, its numbers finite).
        serde_json::value::to_raw_value(&self).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

impl ResultBody for Box<RawValue> {
    fn from_raw(raw: &RawValue) -> Result<Self, DecodeError> {
        Ok(raw.to_owned())
    }

    fn into_raw(self) -> Box<RawValue> {
        self
    }
}

/// Classifies the JSON text in `bytes` (one message or a batch).
pub fn decode_slice(bytes: &[u8]) -> Result<Incoming, DecodeError> {
    decode_slice_as(bytes)
}

/// Classifies the JSON text in `bytes` (one message or a batch), holding
/// response results as `R`.
///
/// The text is read once: the envelope's members are located without
/// building a [`Value`] of the whole message, and with
/// `R = Box<RawValue>` a result stays JSON text until its reader decodes
/// it into its own type. Members other than the JSON-RPC ones are ignored.
pub fn decode_slice_as<R: ResultBody>(bytes: &[u8]) -> Result<IncomingOf<R>, DecodeError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {
            // UTF-8 checked once for the whole text, rather than string by
            // string and again for each member kept as JSON text; invalid
            // text goes the byte path, for the parser's own error.
            let parts: Parts<'_> = match std::str::from_utf8(bytes) {
                Ok(text) => {
                    if let Some(message) = plain_response(text).or_else(|| plain_request(text)) {
                        return Ok(IncomingOf::Single(message));
                    }
                    serde_json::from_str(text)
                }
                Err(_) => serde_json::from_slice(bytes),
            }
            .map_err(json_error)?;
            classify(parts).map(IncomingOf::Single)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_slice(bytes).map_err(json_error)?;
            if items.is_empty() {
                return Err(DecodeError::EmptyBatch);
            }
            Ok(IncomingOf::Batch(items.into_iter().map(decode_element).collect()))
        }
        _ => Err(not_a_message(bytes)),
    }
}

/// Text that is neither an object nor an array: what it is, or why it is
/// not JSON.
fn not_a_message(bytes: &[u8]) -> DecodeError {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => DecodeError::NotAnObject(kind_of(&value)),
        Err(e) => json_error(e),
    }
}

/// A request as a server reads it: its parameters kept as the JSON text
/// the client wrote, for the handler to decode into its own types (or pass
/// on as they are, byte for byte).
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, such as `tools/call`.
    pub method: String,
    /// The parameters' JSON text (an object or an array), if present.
    pub params: Option<Box<RawValue>>,
}

impl PartialEq for RawRequest {
    fn eq(&self, other: &Self) -> bool {
        let text = |p: &Option<Box<RawValue>>| p.as_ref().map(|p| p.get().to_owned());
        self.id == other.id
            && self.method == other.method
            && text(&self.params) == text(&other.params)
    }
}

/// One message as a server reads it: a request with its parameters as
/// text, or any other message.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// A request, its parameters as text.
    Request(RawRequest),
    /// A notification or a response (never a request).
    Message(Message),
}

/// What one incoming JSON text held, as a server reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReceivedIncoming {
    /// A single message.
    Single(Received),
    /// A non-empty batch, each element classified on its own.
    Batch(Vec<Result<Received, DecodeError>>),
}

/// Classifies the JSON text in `bytes` as [`decode_slice`] does, keeping a
/// request's parameters as their JSON text ([`RawRequest`]): a server
/// decodes them once, into what its method takes, and numbers beyond what
/// a [`Value`] holds (integers past 64 bits, decimals past a double's
/// precision) stay as the client wrote them. Everything else is decoded
/// and refused exactly as [`decode_slice`] does.
pub fn decode_received(bytes: &[u8]) -> Result<ReceivedIncoming, DecodeError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {
            let parts: Parts<'_> = match std::str::from_utf8(bytes) {
                Ok(text) => {
                    if let Some(request) = plain_raw_request(text) {
                        return Ok(ReceivedIncoming::Single(Received::Request(request)));
                    }
                    serde_json::from_str(text)
                }
                Err(_) => serde_json::from_slice(bytes),
            }
            .map_err(json_error)?;
            classify_received(parts).map(ReceivedIncoming::Single)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_slice(bytes).map_err(json_error)?;
            if items.is_empty() {
                return Err(DecodeError::EmptyBatch);
            }
            let element = |raw| element_with(raw, classify_received);
            Ok(ReceivedIncoming::Batch(items.into_iter().map(element).collect()))
        }
        _ => Err(not_a_message(bytes)),
    }
}

/// The usual answer, exactly `{"jsonrpc":"2.0","id":N,"result":R}` as most
/// servers write it, or `{"id":N,"jsonrpc":"2.0","result":R}` (the members
/// in name order, as a server that writes a `serde_json` map does), N a
/// plain non-negative integer: taken apart without the member-by-member
/// decoding; `R` is still checked to be one JSON value. `None` for anything
/// else (members in another order, spaces, another id, a member twice,
/// trailing text), which the general path decodes: the outcome is the same
/// either way.
fn plain_response<R: ResultBody>(text: &str) -> Option<MessageOf<R>> {
    let (id, body) = usual_answer(text)?;
    let result: &RawValue = serde_json::from_str(body).ok()?;
    let result = R::from_raw(result).ok()?;
    Some(MessageOf::Response(Response { id: RequestId::Number(id), result }))
}

/// The id and the result's text of the usual answer, exactly
/// `{"jsonrpc":"2.0","id":N,"result":R}` or `{"id":N,"jsonrpc":"2.0","result":R}`
/// (N a plain non-negative integer that fits an `i64`; whitespace only
/// after the closing brace), found without reading `R`: `None` for
/// anything else.
///
/// `R` is **not checked**: it is whatever lies between `"result":` and the
/// last `}`, which is one JSON value only if the whole text is a valid
/// message. A client that decodes `R` straight into its type (serde_json
/// checks the text as it decodes, and refuses trailing text) has read a
/// valid answer when that succeeds, the same answer [`decode_slice_as`]
/// gives; when it fails, the text must go to [`decode_slice_as`], which
/// decides about it as about any other text.
pub fn usual_answer(text: &str) -> Option<(i64, &str)> {
    let (id, rest) = match plain_head(text) {
        Some(head) => head,
        None => {
            let (id, rest) = plain_id(text.strip_prefix(r#"{"id":"#)?)?;
            (id, rest.strip_prefix(r#","jsonrpc":"2.0""#)?)
        }
    };
    let rest = rest.strip_prefix(r#","result":"#)?;
    let body = rest.trim_end_matches([' ', '\t', '\n', '\r']).strip_suffix('}')?;
    Some((id, body))
}

/// The usual request, exactly
/// `{"jsonrpc":"2.0","id":N,"method":"M","params":{...}}` as most clients
/// write it (N a plain non-negative integer, M without escapes, the
/// parameters an object), taken apart without the member-by-member
/// decoding: the parameters are parsed once, straight into their value,
/// rather than located as text and then parsed. `None` for anything else
/// (members in another order, spaces, another id, a member twice, trailing
/// text, parameters nested deep enough to near the parser's depth limit),
/// which the general path decodes: the outcome is the same either way.
fn plain_request<R: ResultBody>(text: &str) -> Option<MessageOf<R>> {
    let (id, method, body) = plain_request_parts(text)?;
    let params: Value = serde_json::from_str(body).ok()?;
    let method = method.to_owned();
    Some(MessageOf::Request(Request { id: RequestId::Number(id), method, params: Some(params) }))
}

/// [`plain_request`] for a server: the parameters checked to be one JSON
/// value and kept as their text.
fn plain_raw_request(text: &str) -> Option<RawRequest> {
    let (id, method, body) = plain_request_parts(text)?;
    let params: &RawValue = serde_json::from_str(body).ok()?;
    let method = method.to_owned();
    Some(RawRequest { id: RequestId::Number(id), method, params: Some(params.to_owned()) })
}

/// The usual request's id, method and parameters' text (not yet checked
/// to be JSON), when the text has its shape (see [`plain_request`]).
fn plain_request_parts(text: &str) -> Option<(i64, &str, &str)> {
    let (id, rest) = plain_head(text)?;
    let rest = rest.strip_prefix(r#","method":""#)?;
    let end = rest.find('"')?;
    let method = &rest[..end];
    // An escape or a control character: the parser's to judge.
    if method.bytes().any(|b| b == b'\\' || b < 0x20) {
        return None;
    }
    let rest = rest[end + 1..].strip_prefix(r#","params":"#)?;
    let body = rest.trim_end_matches([' ', '\t', '\n', '\r']).strip_suffix('}')?;
    // Parsed here from depth 0 where the general path starts one level
    // deeper: far enough from the limit (128), both agree.
    if !body.starts_with('{') || memchr::memchr2_iter(b'{', b'[', body.as_bytes()).count() > 64 {
        return None;
    }
    Some((id, method, body))
}

/// `{"jsonrpc":"2.0","id":N` with N a plain non-negative integer that fits
/// an `i64`: N and the text after it.
fn plain_head(text: &str) -> Option<(i64, &str)> {
    plain_id(text.strip_prefix(r#"{"jsonrpc":"2.0","id":"#)?)
}

/// A plain non-negative integer id that fits an `i64` at the start of
/// `rest`: N and the text after it.
fn plain_id(rest: &str) -> Option<(i64, &str)> {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // At most 18 digits fit an i64; a leading zero is not JSON.
    if digits == 0 || digits > 18 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let id: i64 = rest[..digits].parse().ok()?;
    Some((id, &rest[digits..]))
}

/// Classifies an already parsed JSON value (one message or a batch).
pub fn decode(value: Value) -> Result<Incoming, DecodeError> {
    decode_slice(&serde_json::to_vec(&value).map_err(json_error)?)
}

/// Classifies one JSON value that must be a single message (not a batch).
pub fn decode_message(value: Value) -> Result<Message, DecodeError> {
    match value {
        Value::Object(_) => {
            decode_element(&serde_json::value::to_raw_value(&value).map_err(json_error)?)
        }
        other => Err(DecodeError::NotAnObject(kind_of(&other))),
    }
}

fn json_error(e: serde_json::Error) -> DecodeError {
    DecodeError::Json(e.to_string())
}

/// One element of a batch (or a lone message given as a value).
fn decode_element<R: ResultBody>(raw: &RawValue) -> Result<MessageOf<R>, DecodeError> {
    element_with(raw, classify)
}

/// One element of a batch, its members classified by `classify`.
fn element_with<T>(
    raw: &RawValue,
    classify: impl FnOnce(Parts<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match raw.get().as_bytes().first() {
        Some(b'{') => classify(serde_json::from_str(raw.get()).map_err(json_error)?),
        Some(b'[') => Err(DecodeError::NestedBatch),
        _ => Err(DecodeError::NotAnObject(kind_of_raw(raw))),
    }
}

/// The JSON-RPC members of one message object, as JSON text. A member given
/// more than once counts as its last occurrence, as in a parsed object.
#[derive(Default)]
struct Parts<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Parts<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PartsVisitor;
        impl<'de> de::Visitor<'de> for PartsVisitor {
            type Value = Parts<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }

            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Parts<'de>, A::Error> {
                let mut parts = Parts::default();
                while let Some(member) = map.next_key::<Member>()? {
                    let slot = match member {
                        Member::Jsonrpc => &mut parts.jsonrpc,
                        Member::Id => &mut parts.id,
                        Member::Method => &mut parts.method,
                        Member::Params => &mut parts.params,
                        Member::Result => &mut parts.result,
                        Member::Error => &mut parts.error,
                        Member::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(parts)
            }
        }
        deserializer.deserialize_map(PartsVisitor)
    }
}

/// A member name of a message object.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl de::Visitor<'_> for MemberVisitor {
            type Value = Member;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

/// Applies the JSON-RPC rules to one message's members.
fn classify<R: ResultBody>(parts: Parts<'_>) -> Result<MessageOf<R>, DecodeError> {
    check_version(parts.jsonrpc)?;

    if let Some(method) = parts.method {
        let (method, params) = request_parts(&parts, method)?;
        return match parts.id {
            None => Ok(MessageOf::Notification(Notification { method, params })),
            Some(id) => {
                Ok(MessageOf::Request(Request { id: RequestId::from_raw(id)?, method, params }))
            }
        };
    }

    match (parts.result, parts.error) {
        (Some(_), Some(_)) => Err(DecodeError::BothResultAndError),
        (Some(result), None) => match parts.id {
            None => Err(DecodeError::MissingId),
            Some(id) => Ok(MessageOf::Response(Response {
                id: RequestId::from_raw(id)?,
                result: R::from_raw(result)?,
            })),
        },
        (None, Some(error)) => {
            let id = match parts.id {
                Some(id) if id.get() != "null" => Some(RequestId::from_raw(id)?),
                _ => None,
            };
            let error = decode_error_object(raw_to_value(error)?)?;
            Ok(MessageOf::Error(ErrorResponse { id, error }))
        }
        (None, None) => Err(DecodeError::NoMethodResultOrError),
    }
}

/// [`classify`] for a server: a request's parameters kept as text.
fn classify_received(parts: Parts<'_>) -> Result<Received, DecodeError> {
    let (Some(method), Some(id)) = (parts.method, parts.id) else {
        return classify(parts).map(Received::Message);
    };
    check_version(parts.jsonrpc)?;
    let (method, params) = request_parts(&parts, method)?;
    Ok(Received::Request(RawRequest { id: RequestId::from_raw(id)?, method, params }))
}

/// The `jsonrpc` member must be `"2.0"`.
fn check_version(jsonrpc: Option<&RawValue>) -> Result<(), DecodeError> {
    match jsonrpc {
        None => Err(DecodeError::MissingVersion),
        // The common spelling, without parsing; an escaped "2.0" is parsed.
        Some(v) if v.get() == "\"2.0\"" => Ok(()),
        Some(v) => match raw_to_value(v)? {
            Value::String(s) if s == JSONRPC_VERSION => Ok(()),
            other => Err(DecodeError::WrongVersion(other.to_string())),
        },
    }
}

/// A request's or notification's method and parameters (an object or an
/// array; `null` counts as none), held as `P`.
fn request_parts<P: ResultBody>(
    parts: &Parts<'_>,
    method: &RawValue,
) -> Result<(String, Option<P>), DecodeError> {
    if parts.result.is_some() || parts.error.is_some() {
        return Err(DecodeError::MethodAndOutcome);
    }
    let method: String =
        serde_json::from_str(method.get()).map_err(|_| DecodeError::MethodNotString)?;
    let params = match parts.params {
        None => None,
        Some(p) => match p.get().as_bytes().first() {
            Some(b'{' | b'[') => Some(P::from_raw(p)?),
            Some(b'n') => None,
            _ => return Err(DecodeError::InvalidParams(kind_of_raw(p))),
        },
    };
    Ok((method, params))
}

fn raw_to_value(raw: &RawValue) -> Result<Value, DecodeError> {
    serde_json::from_str(raw.get()).map_err(json_error)
}

/// The JSON type of a piece of JSON text, from its first byte.
fn kind_of_raw(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}

fn decode_error_object(error: Value) -> Result<ErrorObject, DecodeError> {
    let mut obj = match error {
        Value::Object(obj) => obj,
        other => {
            return Err(DecodeError::InvalidErrorObject(format!(
                "expected an object, found {}",
                kind_of(&other)
            )));
        }
    };
    let code = match obj.remove("code") {
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
            DecodeError::InvalidErrorObject(format!("code {n} is not an integer"))
        })?,
        Some(other) => {
            return Err(DecodeError::InvalidErrorObject(format!(
                "code must be an integer, found {}",
                kind_of(&other)
            )));
        }
        None => return Err(DecodeError::InvalidErrorObject("code is missing".into())),
    };
    let message = match obj.remove("message") {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Err(DecodeError::InvalidErrorObject(format!(
                "message must be a string, found {}",
                kind_of(&other)
            )));
        }
        None => return Err(DecodeError::InvalidErrorObject("message is missing".into())),
    };
    Ok(ErrorObject { code, message, data: obj.remove("data") })
}

/// A short name for the JSON type of `value`, for error messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::{
        Deserialize, IncomingOf, Member, MessageOf, Parts, RawValue, Received, ReceivedIncoming,
        RequestId, Value, classify, decode_received, decode_slice, plain_request, plain_response,
        response_id_of_prefix,
    };

    /// The usual answer's shortcut takes its two shapes (members in the
    /// order most servers write them, or in name order), hands the rest to
    /// the general path, and what it takes decodes as the general path
    /// decodes it.
    #[test]
    fn the_usual_answer_takes_its_shapes_and_decodes_as_any_other() {
        // (input, whether the shortcut takes it)
        let cases: &[(&str, bool)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
                true,
            ),
            (
                r#"{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text"}]}}"#,
                true,
            ),
            (r#"{"id":0,"jsonrpc":"2.0","result":{}}"#, true),
            (r#"{"id":123456789012345678,"jsonrpc":"2.0","result":[1,"}"]}"#, true),
            (r#"{"id":7,"jsonrpc":"2.0","result":null}  "#, true),
            (r#"{"id":7,"jsonrpc":"2.0","result": {"a":"\u00e9"} }"#, true),
            (r#"{"id":7,"jsonrpc":"2.0","result":{"resultType":"task","task":{}}}"#, true),
            // Near misses: the general path's to decode (or refuse).
            (r#"{"id":07,"jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":-3,"jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":"a","jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":1.5,"jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":1234567890123456789012,"jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":1,"jsonrpc":"1.0","result":{}}"#, false),
            (r#"{"id":1,"result":{},"jsonrpc":"2.0"}"#, false),
            (r#"{"id":1, "jsonrpc":"2.0","result":{}}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"result":{"b":2}}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"id":2}"#, false),
            (
                r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"error":{"code":1,"message":"m"}}"#,
                false,
            ),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":1}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":}}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{}}x"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","method":"m","params":{}}"#, false),
            (r#" {"id":1,"jsonrpc":"2.0","result":{}}"#, false),
        ];
        for (input, taken) in cases {
            let fast = plain_response::<Box<RawValue>>(input);
            assert_eq!(fast.is_some(), *taken, "{input}");
            let Some(fast) = fast else { continue };
            let general = serde_json::from_str::<Parts<'_>>(input)
                .map_err(|e| e.to_string())
                .and_then(|parts| classify::<Box<RawValue>>(parts).map_err(|e| e.to_string()));
            let (MessageOf::Response(fast), Ok(MessageOf::Response(general))) = (fast, general)
            else {
                panic!("{input}: not an answer both ways");
            };
            assert_eq!(fast.id, general.id, "{input}");
            assert_eq!(fast.result.get(), general.result.get(), "{input}");
        }
    }

    /// The usual answer's parts, found without reading the result: where
    /// the result then decodes straight into its type, the general path
    /// takes the text as the same answer and its result decodes to the
    /// same value; where it does not, the general path decides (a result
    /// that is not one JSON value, a member after it).
    #[test]
    fn the_usual_answer_decoded_straight_is_the_general_paths_answer() {
        use crate::types::CallToolResult;
        // (input, the id and result text found, whether the result decodes)
        type Case<'a> = (&'a str, Option<(i64, &'a str)>, bool);
        let cases: &[Case<'_>] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
                Some((1, r#"{"content":[{"type":"text","text":"hi"}]}"#)),
                true,
            ),
            (
                r#"{"id":42,"jsonrpc":"2.0","result":{"content":[],"isError":true,"z":[1,{"a":"}"}]}}"#,
                Some((42, r#"{"content":[],"isError":true,"z":[1,{"a":"}"}]}"#)),
                true,
            ),
            (
                r#"{"id":7,"jsonrpc":"2.0","result": {"content":[]} }  "#,
                Some((7, r#" {"content":[]} "#)),
                true,
            ),
            (
                r#"{"id":7,"jsonrpc":"2.0","result":{"a":"\u00e9\n"}}"#,
                Some((7, r#"{"a":"\u00e9\n"}"#)),
                true,
            ),
            // Found, but the result does not decode: the general path's.
            (
                r#"{"id":7,"jsonrpc":"2.0","result":{"content":"x"}}"#,
                Some((7, r#"{"content":"x"}"#)),
                false,
            ),
            // A member twice: the last counts, both ways.
            (
                r#"{"id":7,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a"}],"content":[]}}"#,
                Some((7, r#"{"content":[{"type":"text","text":"a"}],"content":[]}"#)),
                true,
            ),
            (r#"{"id":7,"jsonrpc":"2.0","result":null}"#, Some((7, "null")), false),
            (
                r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"error":{"code":1,"message":"m"}}"#,
                Some((1, r#"{"a":1},"error":{"code":1,"message":"m"}"#)),
                false,
            ),
            (
                r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"id":2}"#,
                Some((1, r#"{"a":1},"id":2"#)),
                false,
            ),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":}}"#, Some((1, r#"{"a":}"#)), false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{}}x"#, None, false),
            (r#"{"id":1,"jsonrpc":"2.0","result":{"a":1}"#, Some((1, r#"{"a":1"#)), false),
            // Not the usual answer at all.
            (r#"{"id":07,"jsonrpc":"2.0","result":{}}"#, None, false),
            (r#"{"id":"a","jsonrpc":"2.0","result":{}}"#, None, false),
            (r#"{"id":1,"result":{},"jsonrpc":"2.0"}"#, None, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#, None, false),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#, None, false),
            (r#" {"id":1,"jsonrpc":"2.0","result":{}}"#, None, false),
        ];
        for (input, found, decodes) in cases {
            assert_eq!(&super::usual_answer(input), found, "{input}");
            let Some((id, result)) = found else { continue };
            let typed = serde_json::from_str::<CallToolResult>(result);
            assert_eq!(typed.is_ok(), *decodes, "{input}: {typed:?}");
            let Ok(typed) = typed else { continue };
            let general = serde_json::from_str::<Parts<'_>>(input)
                .map_err(|e| e.to_string())
                .and_then(|parts| classify::<Box<RawValue>>(parts).map_err(|e| e.to_string()));
            let Ok(MessageOf::Response(general)) = general else {
                panic!("{input}: not an answer to the general path: {general:?}");
            };
            assert_eq!(general.id, RequestId::Number(*id), "{input}");
            let expected: CallToolResult = serde_json::from_str(general.result.get()).unwrap();
            assert_eq!(typed, expected, "{input}");
        }
    }

    /// The usual request's shortcut takes what it should, hands the rest
    /// to the general path, and what it takes decodes as the general path
    /// decodes it.
    #[test]
    fn the_usual_request_takes_its_shape_and_decodes_as_any_other() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}1{}}}}}"#,
            "[".repeat(70),
            "]".repeat(70)
        );
        let within = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}1{}}}}}"#,
            "[".repeat(60),
            "]".repeat(60)
        );
        // (input, whether the shortcut takes it)
        let cases: &[(&str, bool)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
                true,
            ),
            (r#"{"jsonrpc":"2.0","id":0,"method":"ping","params":{}}"#, true),
            (
                r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"m","params":{"a":"}\"{"}}"#,
                true,
            ),
            (r#"{"jsonrpc":"2.0","id":7,"method":"","params":{"a":[1,{"b":null}]}}  "#, true),
            (r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":"\u00e9"} }"#, true),
            (r#"{"jsonrpc":"2.0","id":7,"method":"m","params": {}}"#, false),
            (r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1,"a":2}}"#, true),
            (r#"{"jsonrpc":"2.0","id":7,"method":"é","params":{}}"#, true),
            (within.as_str(), true),
            // Near misses: the general path's to decode (or refuse).
            (deep.as_str(), false),
            (r#"{"jsonrpc":"2.0","id":07,"method":"m","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":-3,"method":"m","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":"a","method":"m","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1234567890123456789012,"method":"m","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m\"x","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m\u0041","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":{"b":2}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"id":2}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"result":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}x"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#, false),
            (r#"{"jsonrpc":"2.0","method":"m","params":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"m","params":{}}"#, false),
            (r#"{"id":1,"jsonrpc":"2.0","method":"m","params":{}}"#, false),
            (r#" {"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#, false),
        ];
        for (input, taken) in cases {
            let fast = plain_request::<Value>(input);
            assert_eq!(fast.is_some(), *taken, "{input}");
            let Some(fast) = fast else { continue };
            let general = serde_json::from_str::<Parts<'_>>(input)
                .map_err(|e| e.to_string())
                .and_then(|parts| classify::<Value>(parts).map_err(|e| e.to_string()));
            assert_eq!(general.as_ref().ok(), Some(&fast), "{input}: {general:?}");
            assert!(matches!(fast, MessageOf::Request(_)), "{input}");
        }
    }

    /// A server's decoding classifies every text as the general one does,
    /// a request's parameters kept as the text the client wrote.
    #[test]
    fn a_server_reads_requests_as_written_and_everything_else_as_usual() {
        let same = |general: &MessageOf<Value>, received: &Received| match (general, received) {
            (MessageOf::Request(r), Received::Request(raw)) => {
                let params = raw.params.as_ref().map(|p| serde_json::from_str(p.get()).unwrap());
                r.id == raw.id && r.method == raw.method && r.params == params
            }
            (MessageOf::Request(_), _) | (_, Received::Request(_)) => false,
            (m, Received::Message(n)) => m == n,
        };
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params": {"a":[1,{"b":null}]}}"#,
            r#"{"id":"x","jsonrpc":"2.0","method":"m","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":{"b":2}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{"x":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{}},{"jsonrpc":"2.0","method":"n"},3,[]]"#,
            // Refused alike.
            r#"{"jsonrpc":"1.0","id":1,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":2,"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":}}"#,
            r#"[]"#,
            r#"3"#,
            r#"nope"#,
        ];
        for input in cases {
            match (decode_slice(input.as_bytes()), decode_received(input.as_bytes())) {
                (Ok(IncomingOf::Single(m)), Ok(ReceivedIncoming::Single(r))) => {
                    assert!(same(&m, &r), "{input}: {m:?} / {r:?}");
                }
                (Ok(IncomingOf::Batch(ms)), Ok(ReceivedIncoming::Batch(rs))) => {
                    assert_eq!(ms.len(), rs.len(), "{input}");
                    for (m, r) in ms.iter().zip(&rs) {
                        match (m, r) {
                            (Ok(m), Ok(r)) => assert!(same(m, r), "{input}: {m:?} / {r:?}"),
                            (Err(a), Err(b)) => assert_eq!(a, b, "{input}"),
                            other => panic!("{input}: {other:?}"),
                        }
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{input}"),
                other => panic!("{input}: {other:?}"),
            }
        }
        // What a `Value` would change stays as written, on either path.
        let params = r#"{"arguments":{"n":123456789012345678901234567890,"d":0.10000000000000000000000001,"e":1e400,"s":"\u00e9\n\"é"}}"#;
        for shape in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#),
            format!(r#"{{"method":"tools/call","params":{params},"id":1,"jsonrpc":"2.0"}}"#),
        ] {
            let Ok(ReceivedIncoming::Single(Received::Request(request))) =
                decode_received(shape.as_bytes())
            else {
                panic!("{shape}")
            };
            assert_eq!(request.params.as_ref().map(|p| p.get()), Some(params), "{shape}");
        }
    }

    #[test]
    fn ids_of_cut_or_broken_responses() {
        let n = |i| Some(RequestId::Number(i));
        let cases: &[(&str, Option<RequestId>)] = &[
            (r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"aaaa"#, n(7)),
            (
                r#"{"id":"a-1","jsonrpc":"2.0","error":{"code":-1"#,
                Some(RequestId::String("a-1".into())),
            ),
            (r#" { "jsonrpc" : "2.0" , "id" : 12 , "result" : "#, n(12)),
            // result first, id later.
            (r#"{"jsonrpc":"2.0","result":{"a":"}\"x"},"id":3,"x":[1,"#, n(3)),
            // A request's id is not ours.
            (r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"#, None),
            (r#"{"jsonrpc":"2.0","method":"x","id":7,"result":{"#, None),
            // No result or error began yet.
            (r#"{"jsonrpc":"2.0","id":7"#, None),
            (r#"{"jsonrpc":"2.0","id":7,"#, None),
            // Members before the id, with nesting, commas and whitespace.
            (r#"{"x":[1,{"y":[2,3]},"a,b"], "n" : -1.5e3 ,"id":4,"error":{"#, n(4)),
            (r#"{"x":true,"id":5 ,"result":"#, n(5)),
            // A malformed member before the id: nothing is read.
            (r#"{"x":1 2,"id":3,"result":{"#, None),
            (r#"{"x":,"id":3,"result":{"#, None),
            (r#"{"x":}"#, None),
            (r#"{"x":1}"#, None),
            (r#"{"id":1}"#, None),
            // The id itself was cut.
            (r#"{"jsonrpc":"2.0","id":1"#, None),
            (r#"{"jsonrpc":"2.0","id":"ab"#, None),
            (r#"{"jsonrpc":"2.0","id":null,"result":{"#, None),
            (r#"{"jsonrpc":"2.0","id":1.5,"result":{"#, None),
            ("not json", None),
            ("", None),
            ("[", None),
        ];
        for (text, expected) in cases {
            assert_eq!(&response_id_of_prefix(text.as_bytes()), expected, "{text}");
        }
        // Invalid UTF-8 after the id does not matter.
        let mut bytes = br#"{"jsonrpc":"2.0","id":9,"result":{"text":""#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe, b'"', b'}', b'}']);
        assert_eq!(response_id_of_prefix(&bytes), n(9));
    }

    /// What the visitors expect, as an error names it when something else
    /// comes (the decoders hand them only objects and member names, so
    /// this is seen only with another deserializer).
    #[test]
    fn the_visitors_name_what_they_expect() {
        let err = Parts::deserialize(Value::from(1)).err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("invalid type: integer `1`, expected a JSON-RPC message object")
        );
        let err = Member::deserialize(Value::from(true)).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("invalid type: boolean `true`, expected a member name"));
    }
}
