//! Data-driven decode and encode tests of the JSON-RPC envelope.

use mcp_proto::jsonrpc::{self, DecodeError, Incoming, IncomingOf, Message, MessageOf};
use mcp_proto::{ErrorObject, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// What a case should decode to, in a compact form.
#[derive(Debug, PartialEq)]
enum Kind {
    Request(RequestId, &'static str),
    Notification(&'static str),
    Response(RequestId),
    Error(Option<RequestId>, i64),
}

fn kind(m: &Message) -> Kind {
    match m {
        Message::Request(r) => Kind::Request(r.id.clone(), leak(&r.method)),
        Message::Notification(n) => Kind::Notification(leak(&n.method)),
        Message::Response(r) => Kind::Response(r.id.clone()),
        Message::Error(e) => Kind::Error(e.id.clone(), e.error.code),
    }
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// The message with its result (if any) parsed, so both decoded forms compare.
fn with_value(m: MessageOf<Box<RawValue>>) -> Message {
    match m {
        MessageOf::Response(r) => Message::Response(mcp_proto::Response::new(
            r.id,
            serde_json::from_str::<Value>(r.result.get()).unwrap(),
        )),
        MessageOf::Request(r) => Message::Request(r),
        MessageOf::Notification(n) => Message::Notification(n),
        MessageOf::Error(e) => Message::Error(e),
    }
}

fn check_ok(input: &str, expected: Kind) {
    let m = match jsonrpc::decode_slice(input.as_bytes()) {
        Ok(Incoming::Single(m)) => m,
        other => panic!("input {input}: expected a single message, got {other:?}"),
    };
    assert_eq!(kind(&m), expected, "input {input}");
    // The result kept as JSON text decodes to the same message.
    match jsonrpc::decode_slice_as::<Box<RawValue>>(input.as_bytes()) {
        Ok(IncomingOf::Single(raw)) => assert_eq!(with_value(raw), m, "input {input}"),
        other => panic!("input {input}: expected a single message, got {other:?}"),
    }
}

fn check_err(input: &str, expected: DecodeError) {
    match jsonrpc::decode_slice(input.as_bytes()) {
        Err(e) => {
            assert_eq!(e, expected, "input {input}");
            assert!(!e.to_string().is_empty());
        }
        Ok(other) => panic!("input {input}: expected {expected:?}, got {other:?}"),
    }
    match jsonrpc::decode_slice_as::<Box<RawValue>>(input.as_bytes()) {
        Err(e) => assert_eq!(e, expected, "input {input} (result as text)"),
        Ok(other) => panic!("input {input}: expected {expected:?}, got {other:?}"),
    }
}

#[test]
fn results_kept_as_text_are_the_exact_member() {
    let input = r#" {"id":4, "result" : {"content":[{"type":"text","text":"a\u0041"}], "x":1.50},"jsonrpc":"2.0"} "#;
    let Ok(IncomingOf::Single(MessageOf::Response(r))) =
        jsonrpc::decode_slice_as::<Box<RawValue>>(input.as_bytes())
    else {
        panic!("not a response");
    };
    assert_eq!(r.id, RequestId::Number(4));
    assert_eq!(r.result.get(), r#"{"content":[{"type":"text","text":"a\u0041"}], "x":1.50}"#);
}

#[test]
fn members_decode_as_in_a_parsed_object() {
    use Kind::*;
    // Member order is free, unknown members are ignored, an escaped version
    // string is still "2.0", and a repeated member counts as its last value.
    check_ok(r#"{"method":"m","extra":{"a":[1]},"id":2,"jsonrpc":"2.0"}"#, Request(2.into(), "m"));
    check_ok(r#"{"jsonrpc":"\u0032.0","id":3,"method":"m"}"#, Request(3.into(), "m"));
    check_ok(r#"{"jsonrpc":"2.0","id":1,"id":"b","method":"m"}"#, Request("b".into(), "m"));
    check_ok(r#"{"jsonrpc":"2.0","id":1,"result":1,"result":{}}"#, Response(1.into()));
    check_ok(r#"{"jsonrpc":"2.0","method":"a\/b"}"#, Notification("a/b"));
    check_err(
        r#"{"jsonrpc":"1.0","jsonrpc":"2.1","id":1,"method":"m"}"#,
        DecodeError::WrongVersion("\"2.1\"".into()),
    );
}

#[test]
fn valid_messages() {
    use Kind::*;
    let cases: &[(&str, Kind)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, Request(1.into(), "ping")),
        (
            r#"{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{}}"#,
            Request("abc".into(), "tools/list"),
        ),
        (r#"{"jsonrpc":"2.0","id":-7,"method":"x","params":[1,2]}"#, Request((-7).into(), "x")),
        (r#"{"jsonrpc":"2.0","id":0,"method":"x","params":null}"#, Request(0.into(), "x")),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            Notification("notifications/initialized"),
        ),
        (r#"{"method":"n","jsonrpc":"2.0","params":{"a":1}}"#, Notification("n")),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Response(1.into())),
        (r#"{"jsonrpc":"2.0","id":"1","result":null}"#, Response("1".into())),
        (r#"{"jsonrpc":"2.0","id":2,"result":{},"extra":true}"#, Response(2.into())),
        (
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}"#,
            Error(Some(3.into()), -32601),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
            Error(None, -32700),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad","data":{"x":1}}}"#,
            Error(None, -32600),
        ),
    ];
    for (input, expected) in cases {
        check_ok(input, clone_kind(expected));
    }
}

fn clone_kind(k: &Kind) -> Kind {
    match k {
        Kind::Request(id, m) => Kind::Request(id.clone(), m),
        Kind::Notification(m) => Kind::Notification(m),
        Kind::Response(id) => Kind::Response(id.clone()),
        Kind::Error(id, c) => Kind::Error(id.clone(), *c),
    }
}

#[test]
fn invalid_messages() {
    use DecodeError::*;
    let cases: Vec<(&str, DecodeError)> = vec![
        ("", Json(String::new())),
        ("{", Json(String::new())),
        ("42", NotAnObject("a number")),
        (r#""hi""#, NotAnObject("a string")),
        ("null", NotAnObject("null")),
        ("[]", EmptyBatch),
        (r#"{"id":1,"method":"ping"}"#, MissingVersion),
        (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, WrongVersion("\"1.0\"".into())),
        (r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#, WrongVersion("2.0".into())),
        (r#"{"jsonrpc":"2.0"}"#, NoMethodResultOrError),
        (r#"{"jsonrpc":"2.0","id":1}"#, NoMethodResultOrError),
        (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, MethodNotString),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, NullId),
        (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, NullId),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, InvalidId(String::new())),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, InvalidId(String::new())),
        (r#"{"jsonrpc":"2.0","id":{},"result":{}}"#, InvalidId(String::new())),
        (r#"{"jsonrpc":"2.0","result":{}}"#, MissingId),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            BothResultAndError,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#, MethodAndOutcome),
        (r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#, InvalidParams("a string")),
        (r#"{"jsonrpc":"2.0","method":"x","params":3}"#, InvalidParams("a number")),
        (r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#, InvalidErrorObject(String::new())),
        (r#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#, InvalidErrorObject(String::new())),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}"#,
            InvalidErrorObject(String::new()),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#, InvalidErrorObject(String::new())),
    ];
    for (input, expected) in cases {
        match jsonrpc::decode_slice(input.as_bytes()) {
            Err(e) => {
                // Variants carrying free text are compared by variant only.
                assert_eq!(
                    std::mem::discriminant(&e),
                    std::mem::discriminant(&expected),
                    "input {input}: {e}"
                );
                if !matches!(expected, Json(_) | InvalidId(_) | InvalidErrorObject(_)) {
                    check_err(input, expected);
                }
            }
            Ok(other) => panic!("input {input}: expected {expected:?}, got {other:?}"),
        }
    }
}

#[test]
fn batches_classify_each_element() {
    let input = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0"},[1],{"jsonrpc":"2.0","method":"n"}]"#;
    let Incoming::Batch(items) = jsonrpc::decode_slice(input.as_bytes()).unwrap() else {
        panic!("expected a batch")
    };
    assert_eq!(items.len(), 4);
    assert!(matches!(items[0], Ok(Message::Response(_))));
    assert_eq!(items[1], Err(DecodeError::NoMethodResultOrError));
    assert_eq!(items[2], Err(DecodeError::NestedBatch));
    assert!(matches!(items[3], Ok(Message::Notification(_))));

    // Elements that are not objects, each named by its kind.
    let input = br#"[null, true, false, "s", 4, -1.5]"#;
    let Incoming::Batch(items) = jsonrpc::decode_slice(input).unwrap() else {
        panic!("expected a batch")
    };
    let kinds: Vec<DecodeError> = items.into_iter().map(|i| i.unwrap_err()).collect();
    let expected = ["null", "a boolean", "a boolean", "a string", "a number", "a number"];
    assert_eq!(kinds, expected.map(DecodeError::NotAnObject));
}

#[test]
fn encode_round_trips() {
    let messages = vec![
        Message::Request(mcp_proto::Request::new(7, "tools/call", Some(json!({"name":"echo"})))),
        Message::Request(mcp_proto::Request::new("s-1", "ping", None)),
        Message::Notification(mcp_proto::Notification::new("notifications/initialized", None)),
        Message::Response(mcp_proto::Response::new(3.into(), json!({"ok":true}))),
        Message::Error(mcp_proto::ErrorResponse::new(
            Some(4.into()),
            ErrorObject::method_not_found("x"),
        )),
        Message::Error(mcp_proto::ErrorResponse::new(
            None,
            ErrorObject::new(-32700, "parse error"),
        )),
    ];
    for m in messages {
        let bytes = m.to_vec();
        assert!(!bytes.contains(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        let back: Message = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, m);
    }
}

/// A message holding raw JSON text that was pretty-printed (the decoded
/// fuzz input that found it: a result kept verbatim, line feeds between
/// its tokens) encodes on one line, as the same value.
#[test]
fn raw_text_with_line_breaks_encodes_on_one_line() {
    let input = "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\r\n\
        \"text\":\"a\\nb\"}\n\n],\"n\":\n1.50}}";
    let decoded = jsonrpc::decode_slice_as::<Box<RawValue>>(input.as_bytes());
    let Ok(IncomingOf::Single(message)) = decoded else { panic!("{decoded:?}") };
    let bytes = message.to_vec();
    assert!(
        !bytes.contains(&b'\n') && !bytes.contains(&b'\r'),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    let again: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let original: serde_json::Value = serde_json::from_str(input).unwrap();
    assert_eq!(again, original);
    assert_eq!(again["result"]["content"][0]["text"], "a\nb");

    let mut text = b"{\n\"a\":\r\"x\\ny\"\r\n}".to_vec();
    jsonrpc::make_one_line(&mut text);
    assert_eq!(text, b"{ \"a\": \"x\\ny\"  }");
}

/// The accessors and the text forms a host reads and logs.
#[test]
fn ids_methods_and_error_texts() {
    let number = RequestId::Number(-7);
    let text = RequestId::String("a \"b\"".into());
    assert_eq!(number.to_value(), json!(-7));
    assert_eq!(text.to_value(), json!("a \"b\""));
    assert_eq!(number.to_string(), "-7");
    assert_eq!(text.to_string(), r#""a \"b\"""#);
    let error = ErrorObject::new(-32601, "Method not found: x");
    assert_eq!(error.to_string(), "JSON-RPC error -32601: Method not found: x");

    let request = Message::Request(mcp_proto::Request::new(3, "tools/call", None));
    let notification =
        Message::Notification(mcp_proto::Notification::new("notifications/progress", None));
    let response = Message::Response(mcp_proto::Response::new(4.into(), json!({})));
    let error = Message::Error(mcp_proto::ErrorResponse::new(Some(5.into()), error));
    let unaddressed =
        Message::Error(mcp_proto::ErrorResponse::new(None, ErrorObject::new(-32700, "p")));
    let methods: Vec<Option<&str>> =
        [&request, &notification, &response, &error].iter().map(|m| m.method()).collect();
    assert_eq!(methods, [Some("tools/call"), Some("notifications/progress"), None, None]);
    let ids: Vec<Option<&RequestId>> =
        [&request, &notification, &response, &error, &unaddressed].iter().map(|m| m.id()).collect();
    assert_eq!(ids, [Some(&3.into()), None, Some(&4.into()), Some(&5.into()), None]);

    // Only a single error response without an id is unaddressed.
    let single = |m: &Message| jsonrpc::decode_slice(&m.to_vec()).unwrap();
    assert_eq!(jsonrpc::unaddressed_error(&single(&unaddressed)).map(|e| e.code), Some(-32700));
    for addressed in [&request, &response, &error] {
        assert_eq!(jsonrpc::unaddressed_error(&single(addressed)), None, "{addressed:?}");
    }
    let batch = jsonrpc::decode_slice(
        format!("[{}]", String::from_utf8(unaddressed.to_vec()).unwrap()).as_bytes(),
    )
    .unwrap();
    assert_eq!(jsonrpc::unaddressed_error(&batch), None);
}

#[test]
fn encoded_shapes_are_exact() {
    let r = Message::Request(mcp_proto::Request::new(1, "ping", None));
    assert_eq!(
        String::from_utf8(r.to_vec()).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    );
    let e: Message =
        Message::Error(mcp_proto::ErrorResponse::new(None, ErrorObject::new(-32700, "p")));
    assert_eq!(
        String::from_utf8(e.to_vec()).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}"#
    );
}

#[test]
fn error_codes_have_their_spec_values() {
    use mcp_proto::error_code::*;
    let table = [
        (PARSE_ERROR, -32700),
        (INVALID_REQUEST, -32600),
        (METHOD_NOT_FOUND, -32601),
        (INVALID_PARAMS, -32602),
        (INTERNAL_ERROR, -32603),
        (RESOURCE_NOT_FOUND, -32002),
        (URL_ELICITATION_REQUIRED, -32042),
        (USER_REJECTED, -1),
        (HEADER_MISMATCH, -32020),
        (MISSING_CLIENT_CAPABILITY, -32021),
        (UNSUPPORTED_PROTOCOL_VERSION, -32022),
    ];
    for (constant, value) in table {
        assert_eq!(constant, value);
    }
}

#[test]
fn a_request_whose_id_cannot_be_read_is_answered_32600_with_a_null_id() {
    use mcp_proto::jsonrpc::{Message, decode_slice_as, invalid_request_reply};
    let cases: [(&str, bool); 8] = [
        (r#"{"jsonrpc":"2.0","id":null,"method":"roots/list"}"#, true),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"roots/list"}"#, true),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, true),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, true),
        // A response with a bad id, a notification, garbage: no answer.
        (r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#, false),
        (r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#, false),
        (r#"{"jsonrpc":"2.0","id":null,"method":7}"#, false),
        ("not json", false),
    ];
    for (text, answered) in cases {
        let Err(e) = decode_slice_as::<Box<serde_json::value::RawValue>>(text.as_bytes()) else {
            assert!(!answered, "{text} decoded");
            continue;
        };
        match invalid_request_reply(text.as_bytes(), &e) {
            Some(Message::Error(reply)) => {
                assert!(answered, "{text} was answered");
                assert_eq!(reply.id, None);
                assert_eq!(reply.error.code, -32600);
                let wire = serde_json::to_value(Message::Error(reply)).unwrap();
                assert_eq!(wire["id"], serde_json::Value::Null, "{wire}");
            }
            Some(other) => panic!("{other:?}"),
            None => assert!(!answered, "{text} was not answered"),
        }
    }
}

/// The map lengths given to the serializer match the members written, so
/// that formats which write a length first (CBOR, MessagePack) get a valid
/// map; JSON ignores them.
#[test]
fn serialized_map_lengths_count_the_members() {
    use mcp_proto::jsonrpc::{Notification, Request};
    use serde_test::{Token, assert_ser_tokens};
    let params = || Some(json!({ "a": 1 }));
    let params_tokens = [
        Token::Str("params"),
        Token::Map { len: Some(1) },
        Token::Str("a"),
        Token::U64(1),
        Token::MapEnd,
    ];
    let mut with_params = vec![
        Token::Map { len: Some(4) },
        Token::Str("jsonrpc"),
        Token::Str("2.0"),
        Token::Str("id"),
        Token::I64(7),
        Token::Str("method"),
        Token::Str("tools/list"),
    ];
    with_params.extend(params_tokens);
    with_params.push(Token::MapEnd);
    assert_ser_tokens(&Request::new(7, "tools/list", params()), &with_params);
    let mut without = with_params[..7].to_vec();
    without[0] = Token::Map { len: Some(3) };
    without.push(Token::MapEnd);
    assert_ser_tokens(&Request::new(7, "tools/list", None), &without);

    let mut with_params = vec![
        Token::Map { len: Some(3) },
        Token::Str("jsonrpc"),
        Token::Str("2.0"),
        Token::Str("method"),
        Token::Str("notifications/progress"),
    ];
    with_params.extend(params_tokens);
    with_params.push(Token::MapEnd);
    assert_ser_tokens(&Notification::new("notifications/progress", params()), &with_params);
    let mut without = with_params[..5].to_vec();
    without[0] = Token::Map { len: Some(2) };
    without.push(Token::MapEnd);
    assert_ser_tokens(&Notification::new("notifications/progress", None), &without);
}

/// The usual answer's shortcut gives what the general decoding gives: each
/// input is decoded as written (the shortcut's shape, or a near miss) and
/// with its members reordered, `result` first (never the shortcut).
#[test]
fn the_usual_answer_decodes_as_any_other() {
    // (input, whether it has the shortcut's shape)
    let cases = [
        (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"hi","type":"text"}]}}"#, true),
        (r#"{"jsonrpc":"2.0","id":0,"result":{}}"#, true),
        (r#"{"jsonrpc":"2.0","id":123456789012345678,"result":[1,"}"]}"#, true),
        (r#"{"jsonrpc":"2.0","id":7,"result":null}  "#, true),
        (r#"{"jsonrpc":"2.0","id":7,"result": {"a":"\u00e9"} }"#, true),
        (r#"{"jsonrpc":"2.0","id":07,"result":{}}"#, false),
        (r#"{"jsonrpc":"2.0","id":-3,"result":{}}"#, false),
        (r#"{"jsonrpc":"2.0","id":1234567890123456789012,"result":{}}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"b":2}}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":{"code":1,"message":"m"}}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"a":}}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}x"#, false),
        (r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#, false),
    ];
    for (input, shortcut) in cases {
        let direct = jsonrpc::decode_slice_as::<Box<RawValue>>(input.as_bytes());
        if shortcut {
            assert!(matches!(direct, Ok(IncomingOf::Single(MessageOf::Response(_)))), "{input}");
        }
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(input) else {
            assert!(direct.is_err(), "{input}: {direct:?}");
            continue;
        };
        let mut members: Vec<_> = map.into_iter().collect();
        members.sort_by_key(|(k, _)| k != "result");
        let members: Vec<String> =
            members.iter().map(|(k, v)| format!("{}:{v}", Value::from(k.as_str()))).collect();
        let reordered = format!("{{{}}}", members.join(","));
        let general = jsonrpc::decode_slice_as::<Box<RawValue>>(reordered.as_bytes());
        assert_eq!(direct.is_ok(), general.is_ok(), "{input}: {direct:?} / {general:?}");
        if let (
            Ok(IncomingOf::Single(MessageOf::Response(a))),
            Ok(IncomingOf::Single(MessageOf::Response(b))),
        ) = (&direct, &general)
        {
            assert_eq!(a.id, b.id, "{input}");
            let a: Value = serde_json::from_str(a.result.get()).unwrap();
            let b: Value = serde_json::from_str(b.result.get()).unwrap();
            assert_eq!(a, b, "{input}");
        }
    }
}
