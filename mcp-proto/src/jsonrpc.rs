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

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

mod message;
pub(crate) mod scan;
mod text;

pub use scan::{PlainCall, plain_call, plain_members, plain_str};
pub use text::{one_raw_value, raw_json, text_result_json, write_json, write_json_str};

pub use message::{
    ErrorObject, ErrorResponse, JSONRPC_VERSION, Message, MessageOf, Notification, Request,
    RequestId, Response, error_code, make_one_line,
};

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
    /// The method name, such as `tools/call`: borrowed for the names of
    /// [`methods`](crate::methods) ([`client_request`](crate::methods::client_request)),
    /// so the usual request owns no copy of it.
    pub method: Cow<'static, str>,
    /// The parameters' JSON text (an object or an array), if present.
    pub params: Option<Box<RawValue>>,
    /// For a `tools/call` whose parameters are the usual ones
    /// ([`plain_call`]), where its name and arguments lie in them: found
    /// while the text was checked. `None` when not looked for (another
    /// method, a message decoded member by member) or not found; a reader
    /// then scans the text itself.
    pub call: Option<PlainCall>,
}

/// Equal when the id, the method and the parameters' text are:
/// [`call`](RawRequest::call) only says where in that text a reader finds what it
/// would find itself.
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
/// value and kept as their text. The check is a scan that allocates
/// nothing ([`scan::is_one_value`]); what it does not decide (nesting past
/// its depth) the parser checks, which answers the same. A `tools/call`'s
/// check also finds where its usual members lie ([`RawRequest::call`]), in
/// the same pass.
fn plain_raw_request(text: &str) -> Option<RawRequest> {
    let (id, method, body) = plain_request_parts(text)?;
    let checked = if method == crate::methods::TOOLS_CALL {
        scan::checked_call(body)
    } else {
        scan::is_one_value(body).then_some(None)
    };
    let (params, call) = match checked {
        Some(call) => {
            // The value's own text, as the parser keeps it: without the
            // whitespace after it (it starts with its brace, so the
            // places found in `body` are places in it).
            let value = body.trim_end_matches([' ', '\t', '\n', '\r']);
            (text::boxed_raw(value.to_owned()).ok()?, call)
        }
        None => (serde_json::from_str::<&RawValue>(body).ok()?.to_owned(), None),
    };
    let method = crate::methods::client_request(method)
        .map_or_else(|| Cow::Owned(method.to_owned()), Cow::Borrowed);
    Some(RawRequest { id: RequestId::Number(id), method, params: Some(params), call })
}

/// The most brackets and braces the usual request's parameters may open
/// for the plain path to parse them.
const MAX_PLAIN_OPENINGS: usize = 64;

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
    // deeper: far enough from the limit (128), both agree. Text of at
    // most `2 * MAX_PLAIN_OPENINGS` bytes that is JSON cannot open more
    // (each opening has its closing), and what is not JSON fails the
    // parse below either way: only longer text is counted.
    let openings = || memchr::memchr2_iter(b'{', b'[', body.as_bytes()).count();
    if !body.starts_with('{')
        || (body.len() > 2 * MAX_PLAIN_OPENINGS && openings() > MAX_PLAIN_OPENINGS)
    {
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
    let bytes = rest.as_bytes();
    let (mut id, mut digits) = (0i64, 0usize);
    while let Some(&digit @ b'0'..=b'9') = bytes.get(digits) {
        // At most 18 digits fit an i64 whatever they are: no overflow.
        if digits == 18 {
            return None;
        }
        id = id * 10 + i64::from(digit - b'0');
        digits += 1;
    }
    // A leading zero is not JSON.
    if digits == 0 || (digits > 1 && bytes[0] == b'0') {
        return None;
    }
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
    let id = RequestId::from_raw(id)?;
    Ok(Received::Request(RawRequest { id, method: Cow::Owned(method), params, call: None }))
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
mod tests;

#[cfg(test)]
mod received_tests;
