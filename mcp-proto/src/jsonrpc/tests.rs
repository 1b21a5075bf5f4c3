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
        (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#, true),
        (r#"{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text"}]}}"#, true),
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
        (r#"{"id":1,"jsonrpc":"2.0","result":{"a":1},"error":{"code":1,"message":"m"}}"#, false),
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
        let (MessageOf::Response(fast), Ok(MessageOf::Response(general))) = (fast, general) else {
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
        (r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"m","params":{"a":"}\"{"}}"#, true),
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

/// The id of the usual messages read digit by digit is what the standard
/// parse of the same digits gives: 1 to 18 digits, no leading zero, the
/// text after them kept; anything else refused.
#[test]
fn a_plain_id_is_what_a_parse_of_its_digits_gives() {
    fn reference(rest: &str) -> Option<(i64, &str)> {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 18 || (digits > 1 && rest.starts_with('0')) {
            return None;
        }
        Some((rest[..digits].parse::<i64>().ok()?, &rest[digits..]))
    }
    let mut ids: Vec<String> = ["0", "1", "7", "10", "00", "01", "-1", "+1", "", "a", "1a", "1e3"]
        .map(str::to_owned)
        .into();
    for len in 1..=20 {
        ids.push("9".repeat(len));
        ids.push(format!("1{}", "0".repeat(len - 1)));
        ids.push(format!("0{}", "1".repeat(len - 1)));
    }
    ids.push(i64::MAX.to_string());
    let mut read = 0;
    for id in ids {
        for after in ["", ",", r#","result":{}}"#, "5"] {
            let rest = format!("{id}{after}");
            let found = super::plain_id(&rest);
            assert_eq!(found, reference(&rest), "{rest:?}");
            read += usize::from(found.is_some());
        }
    }
    assert!(read > 40, "{read}");
    assert_eq!(super::plain_id("999999999999999999,"), Some((999_999_999_999_999_999, ",")));
}
