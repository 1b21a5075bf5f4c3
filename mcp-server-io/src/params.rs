//! A request's parameters as the session hands them to the handler:
//! [`Params`], the JSON text the client wrote or a value, decoded once by
//! whoever needs them, into what they need.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use memchr::memmem;

use mcp_proto::jsonrpc::{ErrorObject, PlainCall, error_code, plain_call};
use mcp_proto::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request's parameters: the JSON text the client wrote (from a driver
/// that hands the session text, as the stdio driver does), or a value
/// (from one that decoded the message itself).
///
/// A handler decodes them once, straight into what its method takes
/// ([`decode`](Params::decode)); passes them on as they are
/// ([`into_text`](Params::into_text): byte for byte, numbers beyond what a
/// [`Value`] holds included); or takes them as a value
/// ([`into_value`](Params::into_value)).
#[derive(Clone, Default)]
pub struct Params(Repr);

#[derive(Clone, Default)]
enum Repr {
    #[default]
    Absent,
    /// The text, and where a `tools/call`'s usual members (and its
    /// `_meta`) lie in it when the decoding that checked it found them.
    Text(Box<RawValue>, Option<PlainCall>),
    Value(Value),
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The client's text: shown as it is, as a `Value` would be.
        match &self.0 {
            Repr::Absent => f.write_str("Params(none)"),
            Repr::Text(text, _) => write!(f, "Params({})", text.get()),
            Repr::Value(value) => write!(f, "Params({value})"),
        }
    }
}

impl Params {
    /// Parameters given as JSON text (an object or an array, as JSON-RPC
    /// has them), or none.
    pub fn from_text(text: Option<Box<RawValue>>) -> Self {
        Params::received(text, None)
    }

    /// Parameters as a server's decoding gives them
    /// ([`RawRequest`](mcp_proto::jsonrpc::RawRequest)): their text and,
    /// for the usual `tools/call`, where its members lie in it.
    pub fn received(text: Option<Box<RawValue>>, call: Option<PlainCall>) -> Self {
        Params(text.map_or(Repr::Absent, |text| Repr::Text(text, call)))
    }

    /// Parameters given as a value, or none.
    pub fn from_value(value: Option<Value>) -> Self {
        Params(value.map_or(Repr::Absent, Repr::Value))
    }

    /// Whether the request had no parameters (or `null`).
    pub fn is_absent(&self) -> bool {
        matches!(self.0, Repr::Absent)
    }

    /// The parameters' JSON text: as the client wrote it, or the value
    /// encoded.
    pub fn text(&self) -> Option<Cow<'_, RawValue>> {
        match &self.0 {
            Repr::Absent => None,
            Repr::Text(text, _) => Some(Cow::Borrowed(text)),
            Repr::Value(value) => Some(Cow::Owned(encode(value))),
        }
    }

    /// The parameters when they are held as a value (the driver decoded
    /// the message itself): read without encoding them. `None` for text.
    pub fn value(&self) -> Option<&Value> {
        match &self.0 {
            Repr::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The parameters' JSON text, owned: as the client wrote it, or the
    /// value encoded.
    pub fn into_text(self) -> Option<Box<RawValue>> {
        match self.0 {
            Repr::Absent => None,
            Repr::Text(text, _) => Some(text),
            Repr::Value(value) => Some(encode(&value)),
        }
    }

    /// The parameters as a value: `-32602` when the text holds what a
    /// [`Value`] cannot (a number beyond a double's range, `1e400`).
    pub fn into_value(self) -> Result<Option<Value>, ErrorObject> {
        match self.0 {
            Repr::Absent => Ok(None),
            Repr::Text(text, _) => serde_json::from_str(text.get()).map(Some).map_err(invalid),
            Repr::Value(value) => Ok(Some(value)),
        }
    }

    /// The parameters decoded into `T` (`None` when there are none),
    /// which may borrow from them (`&str`, `&RawValue`): `-32602`, saying
    /// why, when they do not fit it.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> Result<Option<T>, ErrorObject> {
        match &self.0 {
            Repr::Absent => Ok(None),
            Repr::Text(text, _) => serde_json::from_str(text.get()).map(Some).map_err(invalid),
            Repr::Value(value) => T::deserialize(value).map(Some).map_err(invalid),
        }
    }

    /// The usual `tools/call` parameters, exactly the members `name` (a
    /// string without escapes) and `arguments` (not `null`), or `name`
    /// alone, each once, in either order, whitespace between tokens
    /// allowed: the name and the arguments' text (one JSON value: a part
    /// of the parameters' text, which is one), found by a scan of the text
    /// rather than a decoding of it. `None` for anything else (another
    /// member, a member twice, an escape in a member name or the name, a
    /// name that is not a string, parameters held as a value), which a
    /// decoding reads: when this gives the two, a decoding gives the same.
    pub fn plain_call(&self) -> Option<(&str, Option<&str>)> {
        match &self.0 {
            // Found while the text was checked.
            Repr::Text(text, Some(call)) => call.parts(text.get()),
            Repr::Text(text, None) => plain_call(text.get()),
            _ => None,
        }
    }

    /// [`plain_call`](Params::plain_call), a `_meta` allowed too: the
    /// name, the arguments' text and the text of `_meta` (any JSON value,
    /// as written; a client asking for progress sends
    /// `{"progressToken":...}`), found by the decoding that checked the
    /// text, so `_meta` need not send the whole text through a decoding.
    /// `None` where [`plain_call`](Params::plain_call) gives `None` and
    /// the decoding found no such call.
    pub fn plain_call_and_meta(&self) -> Option<(&str, Option<&str>, Option<&str>)> {
        match &self.0 {
            Repr::Text(text, Some(call)) => call.parts_and_meta(text.get()),
            _ => self.plain_call().map(|(name, arguments)| (name, arguments, None)),
        }
    }

    /// [`plain_call`](Params::plain_call), the arguments borrowed as a raw
    /// value: for text its decoding found the call in, the arguments'
    /// part of that checked text without checking it again
    /// ([`PlainCall::borrowed_parts`]); else the part found by a scan,
    /// checked as `serde_json` checks a borrowed raw value (the same text
    /// either way).
    pub fn plain_call_raw(&self) -> Option<(&str, Option<&RawValue>)> {
        if let Repr::Text(text, Some(call)) = &self.0
            && let Some(parts) = call.borrowed_parts(text)
        {
            return Some(parts);
        }
        let (name, arguments) = self.plain_call()?;
        let arguments = match arguments {
            Some(arguments) => Some(serde_json::from_str::<&RawValue>(arguments).ok()?),
            None => None,
        };
        Some((name, arguments))
    }

    /// Whether the parameters may carry a stateless-era `_meta` key:
    /// `false` only for text that holds neither the keys' common prefix
    /// nor any escape (which could spell it), found by a byte search
    /// rather than a parse.
    pub(crate) fn may_be_stateless(&self) -> bool {
        match &self.0 {
            // Only `name`, `arguments` and perhaps `_meta`: only `_meta`
            // may.
            Repr::Text(text, Some(call)) => {
                call.has_meta()
                    && call.parts_and_meta(text.get()).is_some_and(|(_, _, meta)| {
                        meta.is_some_and(|m| may_be_stateless(m.as_bytes()))
                    })
            }
            Repr::Text(text, None) => text_may_be_stateless(text),
            Repr::Absent => false,
            Repr::Value(_) => true,
        }
    }

    /// The members the session reads itself (`_meta`, and a stateless-era
    /// retry's `inputResponses` and `requestState`), the rest of the text
    /// skipped without building anything.
    pub(crate) fn head(&self) -> Result<Head, ErrorObject> {
        match &self.0 {
            // Only `name` and `arguments`: none of the head's members.
            Repr::Absent => Ok(Head::default()),
            Repr::Text(_, Some(call)) if !call.has_meta() => Ok(Head::default()),
            Repr::Text(text, _) => match text.get().as_bytes().first() {
                Some(b'{') => serde_json::from_str(text.get()).map_err(invalid),
                _ => Ok(Head::default()),
            },
            Repr::Value(value) => Ok(Head::of_value(value)),
        }
    }
}

impl From<Option<Value>> for Params {
    fn from(value: Option<Value>) -> Self {
        Params::from_value(value)
    }
}

/// Whether parameters' text carries a stateless-era `_meta` key (the
/// protocol version or the client capabilities), read as the session reads
/// it: text that cannot hold one is not parsed; text the head cannot be
/// read from carries none.
#[cfg(feature = "http")]
pub(crate) fn text_has_stateless_meta(text: &RawValue) -> bool {
    text_may_be_stateless(text)
        && text.get().starts_with('{')
        && serde_json::from_str::<Head>(text.get()).is_ok_and(|head| head.is_stateless())
}

/// [`Params::may_be_stateless`] of text.
fn text_may_be_stateless(text: &RawValue) -> bool {
    may_be_stateless(text.get().as_bytes())
}

/// Whether JSON text may hold a stateless-era `_meta` key: it holds the
/// keys' common prefix, or an escape (which could spell it).
fn may_be_stateless(text: &[u8]) -> bool {
    // The searcher is built once: building it costs more than a search of
    // a request's text.
    static PREFIX: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(STATELESS_KEY_PREFIX));
    memchr::memchr(b'\\', text).is_some() || PREFIX.find(text).is_some()
}

/// What the stateless era's `_meta` keys begin with.
const STATELESS_KEY_PREFIX: &str = "io.modelcontextprotocol/";

fn encode(value: &Value) -> Box<RawValue> {
    // A `Value` always encodes (its keys are strings, its numbers finite).
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

fn invalid(e: serde_json::Error) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, format!("Invalid params: {e}"))
}

/// The members of a request's parameters the session reads itself. A
/// member given twice counts as its last, as in a parsed object.
#[derive(Debug, Default)]
pub(crate) struct Head {
    /// The stateless era's members of `_meta` (none when `_meta` is not
    /// an object).
    pub(crate) meta: Option<MetaHead>,
    pub(crate) input_responses: Option<Value>,
    pub(crate) request_state: Option<Value>,
}

impl Head {
    /// The head of parameters held as a value.
    pub(crate) fn of_value(params: &Value) -> Head {
        Head {
            meta: params.get("_meta").and_then(MetaHead::of_value),
            input_responses: params.get("inputResponses").cloned(),
            request_state: params.get("requestState").cloned(),
        }
    }

    /// Whether `_meta` carries a stateless-era key (the protocol version
    /// or the client capabilities).
    pub(crate) fn is_stateless(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.version.is_some() || m.capabilities.is_some())
    }
}

/// The members of a request's `_meta` the stateless era reads, the rest
/// skipped; each as its value.
#[derive(Debug, Default)]
pub(crate) struct MetaHead {
    pub(crate) version: Option<Value>,
    pub(crate) capabilities: Option<Value>,
    pub(crate) client_info: Option<Value>,
    pub(crate) log_level: Option<Value>,
}

impl MetaHead {
    fn of_value(meta: &Value) -> Option<MetaHead> {
        let meta = meta.as_object()?;
        Some(MetaHead {
            version: meta.get(PROTOCOL_VERSION_META_KEY).cloned(),
            capabilities: meta.get(CLIENT_CAPABILITIES_META_KEY).cloned(),
            client_info: meta.get(CLIENT_INFO_META_KEY).cloned(),
            log_level: meta.get(LOG_LEVEL_META_KEY).cloned(),
        })
    }
}

/// `_meta` as the head reads it: an object's stateless members, or
/// nothing for any other value.
struct MetaSlot(Option<MetaHead>);

impl<'de> Deserialize<'de> for MetaSlot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = MetaSlot;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaSlot, A::Error> {
                let mut meta = MetaHead::default();
                while let Some(key) = map.next_key::<MetaKey>()? {
                    let slot = match key {
                        MetaKey::Version => &mut meta.version,
                        MetaKey::Capabilities => &mut meta.capabilities,
                        MetaKey::ClientInfo => &mut meta.client_info,
                        MetaKey::LogLevel => &mut meta.log_level,
                        MetaKey::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(MetaSlot(Some(meta)))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<MetaSlot, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MetaSlot(None))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }

            fn visit_unit<E: de::Error>(self) -> Result<MetaSlot, E> {
                Ok(MetaSlot(None))
            }
        }
        deserializer.deserialize_any(MetaVisitor)
    }
}

/// A member name of `_meta`, as [`MetaSlot`] sorts them.
enum MetaKey {
    Version,
    Capabilities,
    ClientInfo,
    LogLevel,
    Other,
}

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = MetaKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<MetaKey, E> {
                Ok(match name {
                    PROTOCOL_VERSION_META_KEY => MetaKey::Version,
                    CLIENT_CAPABILITIES_META_KEY => MetaKey::Capabilities,
                    CLIENT_INFO_META_KEY => MetaKey::ClientInfo,
                    LOG_LEVEL_META_KEY => MetaKey::LogLevel,
                    _ => MetaKey::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct HeadVisitor;
        impl<'de> Visitor<'de> for HeadVisitor {
            type Value = Head;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("request parameters")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
                let mut head = Head::default();
                while let Some(member) = map.next_key::<HeadMember>()? {
                    let slot = match member {
                        HeadMember::Meta => {
                            head.meta = map.next_value::<MetaSlot>()?.0;
                            continue;
                        }
                        HeadMember::InputResponses => &mut head.input_responses,
                        HeadMember::RequestState => &mut head.request_state,
                        HeadMember::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(head)
            }
        }
        deserializer.deserialize_map(HeadVisitor)
    }
}

/// A member name of request parameters, as [`Head`] sorts them.
enum HeadMember {
    Meta,
    InputResponses,
    RequestState,
    Other,
}

impl<'de> Deserialize<'de> for HeadMember {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = HeadMember;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<HeadMember, E> {
                Ok(match name {
                    "_meta" => HeadMember::Meta,
                    "inputResponses" => HeadMember::InputResponses,
                    "requestState" => HeadMember::RequestState,
                    _ => HeadMember::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Params {
        Params::from_text(Some(RawValue::from_string(s.to_owned()).unwrap()))
    }

    #[test]
    fn text_stays_as_written_and_decodes_into_what_is_asked() {
        let written =
            r#"{"n":123456789012345678901234567890,"d":1.00000000000000000001,"s":"\u00e9"}"#;
        let params = text(written);
        assert_eq!(params.text().unwrap().get(), written);
        #[derive(Debug, Deserialize)]
        struct S {
            s: String,
        }
        assert_eq!(params.decode::<S>().unwrap().unwrap().s, "é");
        assert_eq!(params.clone().into_text().unwrap().get(), written);
        // A value has no room for the big integer: decoded approximately,
        // never refused.
        assert!(params.into_value().unwrap().unwrap()["n"].is_f64());
        // What a value cannot hold at all is -32602.
        let e = text(r#"{"x":1e400}"#).into_value().unwrap_err();
        assert_eq!(e.code, error_code::INVALID_PARAMS);
        let e = text(r#"{"s":1}"#).decode::<S>().unwrap_err();
        assert_eq!(e.code, error_code::INVALID_PARAMS);
        assert!(Params::default().decode::<S>().unwrap().is_none());
        // A value is encoded when text is asked for.
        let value = Params::from_value(Some(json!({"a": [1]})));
        assert_eq!(value.text().unwrap().get(), r#"{"a":[1]}"#);
        assert_eq!(value.decode::<Value>().unwrap(), Some(json!({"a": [1]})));
    }

    /// What a decoding reads of a call's parameters when they hold only
    /// `name` and `arguments`, each once.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct OnlyNameAndArguments<'a> {
        name: Option<Value>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }

    /// `tools/call` parameters of the usual shape and near misses, each
    /// name with each arguments' text (`@` and `#` of the shapes).
    fn call_shapes() -> ([&'static str; 18], [&'static str; 14]) {
        let values = [
            r#""echo""#,
            r#""e\"c\\ho""#,
            r#""\u0065cho""#,
            r#""}],{[""#,
            r#""é😀""#,
            r#""0123456\"89abcdef\\0123456789\\""#,
            r#""0123456789abcdefghijklmn""#,
            "1",
            "-1.5e3",
            "1e400",
            "true",
            "null",
            "[]",
            r#"[1,"]",{"a":"}"}]"#,
            r#"{"message":"the quick brown fox"}"#,
            r#"{"message":"a \"quoted\" }","n":[{"deep":[[]]}]}"#,
            r#"{ "a" : { "b" : [ 1 , 2 ] } }"#,
            "{}",
        ];
        let shapes = [
            r#"{"name":@,"arguments":#}"#,
            r#"{"arguments":#,"name":@}"#,
            " {\n \"name\" :\t@ ,\r\n\"arguments\":  #  } ",
            r#"{"name":@}"#,
            r#"{"arguments":#}"#,
            r#"{"name":@,"arguments":#,"name":@}"#,
            r#"{"name":@,"arguments":#,"arguments":#}"#,
            r#"{"name":@,"arguments":#,"_meta":{"progressToken":1}}"#,
            r#"{"task":{},"name":@,"arguments":#}"#,
            r#"{"n\u0061me":@,"arguments":#}"#,
            r#"{"name":@,"Arguments":#}"#,
            r#"{"name":@,"arguments":#,"x":null}"#,
            "{}",
            "[@,#]",
        ];
        (values, shapes)
    }

    #[test]
    fn a_plain_call_is_what_a_decoding_reads() {
        let (values, shapes) = call_shapes();
        let mut plain = 0;
        for shape in shapes {
            for name in values {
                for arguments in values {
                    let case = shape.replace('@', name).replace('#', arguments);
                    let Ok(raw) = RawValue::from_string(case.clone()) else { continue };
                    let params = Params::from_text(Some(raw));
                    let Some((n, a)) = params.plain_call() else { continue };
                    plain += 1;
                    let read: OnlyNameAndArguments<'_> = serde_json::from_str(&case).unwrap();
                    assert_eq!(read.name, Some(Value::String(n.to_owned())), "{case}");
                    assert_eq!(read.arguments.map(RawValue::get), a, "{case}");
                    assert!(read.arguments.is_none_or(|a| a.get() != "null"), "{case}");
                }
            }
        }
        // Every plain name (no escapes) with non-null arguments, in the
        // three shapes that hold both once, and alone (for each of the 18
        // arguments it is shown without).
        assert_eq!(plain, 3 * 4 * 17 + 4 * 18, "{plain}");
        for near in [r#"{"name":"echo","arguments":null}"#, r#"{"name":"a\"b"}"#, "{ }"] {
            let params = Params::from_text(Some(RawValue::from_string(near.to_owned()).unwrap()));
            assert!(params.plain_call().is_none(), "{near}");
        }
        let value = Params::from_value(Some(json!({"name": "echo", "arguments": {}})));
        assert!(value.plain_call().is_none());
    }

    /// Parameters as the session gets them from a decoding, a call's
    /// members already found: what the same text alone reads.
    #[test]
    fn a_call_found_by_the_decoding_reads_as_its_text() {
        use mcp_proto::jsonrpc::{Received, ReceivedIncoming, decode_received};
        let (values, shapes) = call_shapes();
        let (mut found, mut with_meta) = (0, 0);
        for shape in shapes {
            for name in values {
                for arguments in values {
                    let case = shape.replace('@', name).replace('#', arguments);
                    let message = format!(
                        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{case}}}"#
                    );
                    let Ok(ReceivedIncoming::Single(Received::Request(request))) =
                        decode_received(message.as_bytes())
                    else {
                        continue;
                    };
                    found += usize::from(request.call.is_some_and(|c| !c.has_meta()));
                    with_meta += usize::from(request.call.is_some_and(|c| c.has_meta()));
                    let alone = Params::from_text(request.params.clone());
                    let received = Params::received(request.params, request.call);
                    assert_eq!(received.plain_call(), alone.plain_call(), "{case}");
                    // Borrowed without a second check: the text a check owns.
                    let owned = |p: &Params| {
                        p.plain_call_raw()
                            .map(|(n, a)| (n.to_owned(), a.map(|a| a.get().to_owned())))
                    };
                    let read =
                        received.plain_call().map(|(n, a)| (n.to_owned(), a.map(str::to_owned)));
                    assert_eq!(owned(&received), read, "{case}");
                    assert_eq!(owned(&alone), read, "{case}");
                    let head = |p: &Params| format!("{:?}", p.head());
                    assert_eq!(head(&received), head(&alone), "{case}");
                    // Skipping the head only where it holds no stateless key.
                    if !received.may_be_stateless() {
                        assert!(!alone.head().unwrap().is_stateless(), "{case}");
                    }
                }
            }
        }
        // As `a_plain_call_is_what_a_decoding_reads` counts, but for the
        // shape with space before its brace: a message the general path
        // decodes (its call found by the scan of the text, when asked).
        assert_eq!(found, 2 * 4 * 17 + 4 * 18, "{found}");
        // The shapes with a `_meta` the decoding finds too (their head read
        // from the text: the same).
        assert!(with_meta > 50, "{with_meta}");
    }

    #[test]
    fn only_text_that_cannot_hold_a_stateless_key_skips_the_head() {
        let cases = [
            (r#"{"name":"echo","arguments":{"m":"x"},"_meta":{"progressToken":1}}"#, false),
            (r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v"}}"#, true),
            (r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"v"}}"#, true),
            (r#"{"_meta":{"\u0069o.modelcontextprotocol/clientCapabilities":{}}}"#, true),
        ];
        for (case, may) in cases {
            assert_eq!(text(case).may_be_stateless(), may, "{case}");
            if !may {
                assert!(!text(case).head().unwrap().is_stateless(), "{case}");
            }
        }
        assert!(!Params::default().may_be_stateless());
    }

    #[test]
    fn the_head_is_read_from_text_as_from_a_value() {
        let cases = [
            r#"{"name":"t","_meta":{"progressToken":1},"arguments":{"_meta":2}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v","io.modelcontextprotocol/clientCapabilities":{"a":{}},"io.modelcontextprotocol/logLevel":"info","x":[1]}}"#,
            r#"{"_meta":"text"}"#,
            r#"{"_meta":[1,{"a":2}],"requestState":null}"#,
            r#"{"_meta":{"a":1},"_meta":{"b":2},"requestState":"s","inputResponses":{"k":{}}}"#,
            r#"{"_met\u0061":{"a":1},"requestState":3}"#,
            r#"{}"#,
            r#"[1,2]"#,
        ];
        for case in cases {
            let from_text = text(case).head().unwrap();
            let value: Value = serde_json::from_str(case).unwrap();
            let from_value = Params::from_value(Some(value)).head().unwrap();
            let meta = |h: &Head| h.meta.as_ref().map(|m| format!("{m:?}"));
            assert_eq!(meta(&from_text), meta(&from_value), "{case}");
            assert_eq!(from_text.is_stateless(), from_value.is_stateless(), "{case}");
            assert_eq!(from_text.input_responses, from_value.input_responses, "{case}");
            assert_eq!(from_text.request_state, from_value.request_state, "{case}");
        }
        // What the session reads must be a value; the rest is skipped.
        assert!(text(r#"{"_meta":{"x":1e400},"y":1e400}"#).head().is_ok());
        let caps = r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"x":1e400}}}"#;
        assert!(text(caps).head().is_err());
    }
}
