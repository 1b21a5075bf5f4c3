//! The JSON-RPC decoder: `decode_slice` and `decode_slice_as::<Box<RawValue>>`
//! never panic and classify every text alike; a decoded message encodes on
//! one line and decodes back to itself; `response_id_of_prefix`, on the
//! text or any cut of it, never names another id than the decoded
//! response's, nor any id
//! for a request or a notification (texts with a repeated `"id"` member,
//! or a `\u` escape, left out: the scanner takes the first id, the decoder
//! the last); `invalid_request_reply` answers only an
//! unreadable request id, with `-32600` and a null id.
#![no_main]

mod common;

use common::same_json;
use libfuzzer_sys::fuzz_target;
use mcp_proto::jsonrpc::{
    self, DecodeError, IncomingOf, Message, MessageOf, RequestId, decode_slice, decode_slice_as,
    error_code, invalid_request_reply, response_id_of_prefix, unaddressed_error,
};
use serde_json::Value;
use serde_json::value::RawValue;

type Raw = Box<RawValue>;

/// A text with its line feeds and carriage returns as spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn same_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_json(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The same message, results compared as text (a raw result is kept
/// verbatim, but for its line breaks, which the encoder turns into spaces:
/// see `make_one_line`), other values by value.
fn same_message(a: &MessageOf<Raw>, b: &MessageOf<Raw>) -> bool {
    match (a, b) {
        (MessageOf::Request(x), MessageOf::Request(y)) => {
            x.id == y.id && x.method == y.method && same_opt(x.params.as_ref(), y.params.as_ref())
        }
        (MessageOf::Notification(x), MessageOf::Notification(y)) => {
            x.method == y.method && same_opt(x.params.as_ref(), y.params.as_ref())
        }
        (MessageOf::Response(x), MessageOf::Response(y)) => {
            x.id == y.id && one_line(x.result.get()) == y.result.get()
        }
        (MessageOf::Error(x), MessageOf::Error(y)) => {
            x.id == y.id
                && x.error.code == y.error.code
                && x.error.message == y.error.message
                && same_opt(x.error.data.as_ref(), y.error.data.as_ref())
        }
        _ => false,
    }
}

/// The raw and the parsed forms hold the same message.
fn agree(raw: &MessageOf<Raw>, parsed: &MessageOf<Value>) -> bool {
    match (raw, parsed) {
        (MessageOf::Response(x), MessageOf::Response(y)) => {
            x.id == y.id
                && serde_json::from_str::<Value>(x.result.get()).ok().as_ref() == Some(&y.result)
        }
        (MessageOf::Request(x), MessageOf::Request(y)) => x == y,
        (MessageOf::Notification(x), MessageOf::Notification(y)) => x == y,
        (MessageOf::Error(x), MessageOf::Error(y)) => x == y,
        _ => false,
    }
}

/// A result past one of serde_json's limits for a `Value` is fine as raw
/// text (kept verbatim, its numbers not read): nested deeper than the
/// recursion limit, or holding a number beyond `f64`'s range (valid JSON;
/// a typed result that reads it fails then, as `InvalidResult`). The only
/// ways the two forms may part.
fn too_deep(e: &DecodeError) -> bool {
    matches!(e, DecodeError::Json(m) if m.contains("recursion limit") || m.contains("number out of range"))
}

fn check_agreement(
    raw: &Result<IncomingOf<Raw>, DecodeError>,
    parsed: &Result<IncomingOf<Value>, DecodeError>,
) {
    match (raw, parsed) {
        (Ok(IncomingOf::Single(a)), Ok(IncomingOf::Single(b))) => {
            assert!(agree(a, b), "{a:?} / {b:?}")
        }
        (Ok(IncomingOf::Batch(a)), Ok(IncomingOf::Batch(b))) => {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                match (x, y) {
                    (Ok(x), Ok(y)) => assert!(agree(x, y), "{x:?} / {y:?}"),
                    (Err(x), Err(y)) => assert_eq!(x, y),
                    (Ok(_), Err(e)) => assert!(too_deep(e), "{e:?}"),
                    (Err(e), Ok(_)) => panic!("raw fails where parsed does not: {e:?}"),
                }
            }
        }
        (Err(x), Err(y)) => assert_eq!(x, y),
        (Ok(IncomingOf::Single(_)), Err(e)) => assert!(too_deep(e), "{e:?}"),
        (a, b) => panic!("the two decoders disagree: {a:?} / {b:?}"),
    }
}

/// A decoded message encodes as one line and decodes back to itself.
fn round_trip(message: &MessageOf<Raw>) {
    let text = message.to_vec();
    assert!(!text.contains(&b'\n'), "an encoded message holds a newline");
    match decode_slice_as::<Raw>(&text) {
        Ok(IncomingOf::Single(again)) => {
            assert!(same_message(message, &again), "{message:?} / {again:?}")
        }
        other => {
            panic!("{message:?} encoded as {} decodes as {other:?}", String::from_utf8_lossy(&text))
        }
    }
}

/// The response id read from a text (or from a cut of it), if any, is the
/// decoded message's; a request's or notification's text yields none.
fn check_prefix(text: &[u8], message: &MessageOf<Raw>) {
    let expected: Option<&RequestId> = match message {
        MessageOf::Response(r) => Some(&r.id),
        MessageOf::Error(e) => e.id.as_ref(),
        MessageOf::Request(_) | MessageOf::Notification(_) => None,
    };
    // A repeated `id` member counts as its last occurrence in the decoder
    // but as its first in the prefix scanner: such texts are left out (and
    // those with `\u` escapes, which may spell a second `id`).
    let ids = text.windows(4).filter(|w| w == b"\"id\"").count();
    if ids > 1 || text.windows(2).any(|w| w == b"\\u") {
        return;
    }
    // The whole text, and up to 16 cuts.
    let step = (text.len() / 16).max(1);
    for end in (0..text.len()).step_by(step).chain([text.len()]) {
        if let Some(id) = response_id_of_prefix(&text[..end]) {
            assert_eq!(Some(&id), expected, "the prefix of {end} bytes names another id");
        }
    }
}

fn check_reply(bytes: &[u8], error: &DecodeError) {
    let _ = error.to_string();
    if let Some(reply) = invalid_request_reply(bytes, error) {
        assert!(matches!(error, DecodeError::NullId | DecodeError::InvalidId(_)), "{error:?}");
        let Message::Error(e) = &reply else { panic!("not an error response: {reply:?}") };
        assert!(e.id.is_none());
        assert_eq!(e.error.code, error_code::INVALID_REQUEST);
        assert_eq!(jsonrpc::decode_slice(&reply.to_vec()), Ok(IncomingOf::Single(reply)));
    }
}

fuzz_target!(|bytes: &[u8]| {
    let raw = decode_slice_as::<Raw>(bytes);
    let parsed = decode_slice(bytes);
    check_agreement(&raw, &parsed);
    let _ = response_id_of_prefix(bytes);
    match &raw {
        Ok(incoming) => {
            let _ = unaddressed_error(incoming);
            match incoming {
                IncomingOf::Single(message) => {
                    round_trip(message);
                    check_prefix(bytes, message);
                }
                IncomingOf::Batch(items) => {
                    assert!(!items.is_empty());
                    for item in items {
                        match item {
                            Ok(message) => round_trip(message),
                            Err(e) => {
                                let _ = e.to_string();
                            }
                        }
                    }
                }
            }
        }
        Err(error) => check_reply(bytes, error),
    }
});
