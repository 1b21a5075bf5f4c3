//! What differs between the eras.

use mcp_proto::client::decide::result::ResultContext;
use mcp_proto::client::decide::{Action, Failure, Origin, ResultStep, rules};
use mcp_proto::{Era, ProtocolVersion as V};
use serde_json::json;

use super::{SESSION_EXPIRED, attempt, closed};

#[test]
fn each_era_s_rules() {
    let (legacy, modern) = (rules(Era::Legacy), rules(Era::Modern));
    assert_eq!((legacy.era(), modern.era()), (Era::Legacy, Era::Modern));
    assert_eq!(legacy.wire_version(V::V2025_11_25), None);
    assert_eq!(modern.wire_version(V::V2026_07_28), Some(V::V2026_07_28));
    assert!(!legacy.caches_results() && modern.caches_results());
    assert!(legacy.keeps_tool_list() && !modern.keeps_tool_list());
    // A broken exchange: the session is told, the stateless server is not.
    assert!(legacy.notifies_cancel_after_broken_exchange());
    assert!(!modern.notifies_cancel_after_broken_exchange());
    // (method, a handshake-era request, a stateless-era request)
    let requests: &[(&str, bool, bool)] = &[
        ("tools/call", true, true),
        ("ping", true, false),
        ("logging/setLevel", true, false),
        ("resources/subscribe", true, false),
        ("server/discover", false, true),
        ("subscriptions/listen", false, true),
    ];
    for (method, in_legacy, in_modern) in requests {
        assert_eq!(
            (legacy.has_request(method), modern.has_request(method)),
            (*in_legacy, *in_modern),
            "{method}"
        );
    }
    // (notification, handshake era, stateless era)
    let notifications: &[(&str, bool, bool)] = &[
        ("notifications/cancelled", true, true),
        ("notifications/initialized", true, false),
        ("notifications/roots/list_changed", true, false),
    ];
    for (method, in_legacy, in_modern) in notifications {
        assert_eq!(
            (legacy.sends_notification(method), modern.sends_notification(method)),
            (*in_legacy, *in_modern),
            "{method}"
        );
    }
    // The era's own recovery is asked only of the connection's era.
    let expired = Failure::transport(None, SESSION_EXPIRED);
    let a = attempt("tools/call", Some(Era::Legacy), expired);
    assert_eq!((legacy.recover(&a), modern.recover(&a)), (Some(Action::NewSession), None));
    assert!(matches!(expired.origin, Origin::Transport(_)));
    assert_eq!(Failure::core(&closed()).transport_facts(), None);
}

#[test]
fn the_deprecated_features_a_handshake_negotiated() {
    use mcp_proto::client::decide::handshake::deprecated_features;
    use mcp_proto::types::{ClientCapabilities, ServerCapabilities};
    let client =
        |v: serde_json::Value| -> ClientCapabilities { serde_json::from_value(v).unwrap() };
    let server =
        |v: serde_json::Value| -> ServerCapabilities { serde_json::from_value(v).unwrap() };
    let cases: &[(serde_json::Value, serde_json::Value, &[&str])] = &[
        (json!({}), json!({}), &[]),
        (json!({"elicitation": {}}), json!({"tools": {}}), &[]),
        (json!({"roots": {"listChanged": true}}), json!({}), &["roots"]),
        (json!({"sampling": {}}), json!({"logging": {}}), &["sampling", "logging"]),
        (
            json!({"roots": {}, "sampling": {}}),
            json!({"logging": {}}),
            &["roots", "sampling", "logging"],
        ),
    ];
    for (c, s, expected) in cases {
        assert_eq!(
            deprecated_features(&client(c.clone()), &server(s.clone())),
            *expected,
            "{c} {s}"
        );
    }
}

/// What an era's rules say of a `tools/call` result read straight from the
/// usual answer (its text not yet checked to be JSON): where they say
/// "delivered as it came" and the text decodes as a `CallToolResult`, the
/// general path takes the line as the same answer, its rules deliver the
/// checked result with no cache, and it decodes to the same value. Anything
/// else goes to the general path, which decides as for any text.
#[test]
fn a_result_delivered_as_it_came_is_what_the_general_path_delivers() {
    use mcp_proto::jsonrpc::{IncomingOf, MessageOf, decode_slice_as, usual_answer};
    use mcp_proto::types::CallToolResult;
    use serde_json::value::RawValue;
    let results = [
        r#"{"content":[{"type":"text","text":"hi"}]}"#,
        r#"{"resultType":"complete","content":[]}"#,
        r#" {"_meta":{"resultType":"task"},"content":[],"resultType":"complete"} "#,
        r#"{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}"#,
        r#"{"resultType":"input_required","requestState":"s"}"#,
        r#"{"resultType":"task","task":{"taskId":"t"}}"#,
        r#"{"resultType":"later"}"#,
        r#"{"resultType":null,"content":[]}"#,
        r#"{"resultType":"complete","resultType":"complete"}"#,
        r#"{"result\u0054ype":"task","resultType":"complete"}"#,
        r#"{"resultType":"compl\u0065te"}"#,
        r#"{"ttlMs":500,"cacheScope":"public","content":[]}"#,
        r#"{"content":"no","resultType":"complete"}"#,
        r#"[]"#,
        r#"{"resultType":"complete"},"id":2"#,
        r#"{"resultType":"complete"}x"#,
        r#"{"resultType":"complete""#,
    ];
    let contexts = [
        ResultContext::default(),
        ResultContext { tasks_declared: true, ..ResultContext::default() },
    ];
    let cacheable = ResultContext { cacheable: true, ..ResultContext::default() };
    // A caller that takes the input rounds: `input_required` delivered too.
    let rounds = ResultContext { rounds_to_caller: true, ..ResultContext::default() };
    let mut taken = Vec::new();
    for era in [Era::Legacy, Era::Modern] {
        let rules = rules(era);
        for result in results {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
            let (id, found) = usual_answer(&line).expect("the usual answer's shape");
            assert_eq!((id, found), (3, result));
            // Read from the decoded member or from the text: the same.
            if let Ok(decoded) = serde_json::from_str::<CallToolResult>(found) {
                let member = decoded.extra.get("resultType");
                for context in contexts.iter().chain(&[cacheable, rounds]) {
                    assert_eq!(
                        rules.delivers_decoded_as_it_came("tools/call", found, member, *context),
                        rules.delivers_as_it_came("tools/call", found, *context),
                        "{era:?} {result} {context:?}"
                    );
                }
            }
            for context in contexts {
                let straight = rules
                    .delivers_as_it_came("tools/call", found, context)
                    .then(|| serde_json::from_str::<CallToolResult>(found).ok())
                    .flatten();
                let general = match decode_slice_as::<Box<RawValue>>(line.as_bytes()) {
                    Ok(IncomingOf::Single(MessageOf::Response(r))) if r.id == 3.into() => {
                        let step = rules.on_result("tools/call", r.result.get(), context);
                        matches!(step, ResultStep::Deliver { cache: None })
                            .then(|| serde_json::from_str::<CallToolResult>(r.result.get()).ok())
                            .flatten()
                    }
                    _ => None,
                };
                if straight.is_some() {
                    taken.push((era, result, context.tasks_declared));
                    assert_eq!(straight, general, "{era:?} {result} {context:?}");
                }
                // A result the general path delivers is taken straight
                // unless the line is not one message.
                if general.is_some() && straight.is_none() {
                    assert!(result.contains("\"id\":2"), "{era:?} {result} {context:?}");
                }
            }
        }
    }
    // Both eras take the complete results straight (the handshake era also
    // those it does not read the kind of).
    // The stateless era takes straight the complete results (kind absent,
    // `null`, or `complete` however spelled), in either context; the
    // handshake era every result that decodes.
    let in_era = |era: Era| -> Vec<(&str, bool)> {
        taken.iter().filter(|t| t.0 == era).map(|t| (t.1, t.2)).collect()
    };
    let complete = [0, 1, 2, 3, 7, 10, 11];
    let expected: Vec<(&str, bool)> =
        complete.iter().flat_map(|&i| [(results[i], false), (results[i], true)]).collect();
    assert_eq!(in_era(Era::Modern), expected);
    assert_eq!(in_era(Era::Legacy).len(), 2 * 12);
    // The handshake era reads no result: every one is delivered as it came.
    let legacy = rules(Era::Legacy);
    assert!(legacy.delivers_as_it_came("tools/call", "not even JSON", ResultContext::default()));
    // The stateless era delivers only a complete result that it keeps
    // nowhere (a cacheable one with a `ttlMs` goes to the cache).
    let modern = rules(Era::Modern);
    let cacheable = ResultContext { cacheable: true, ..ResultContext::default() };
    let kept = r#"{"tools":[],"ttlMs":500}"#;
    assert!(modern.delivers_as_it_came("tools/list", kept, ResultContext::default()));
    assert!(!modern.delivers_as_it_came("tools/list", kept, cacheable));
    assert!(!modern.delivers_as_it_came(
        "tools/call",
        r#"{"resultType":"task"}"#,
        ResultContext::default()
    ));
    // `input_required` goes to a caller that takes the rounds, as it came
    // (decoded or not), and to no other.
    let asked = r#"{"resultType":"input_required","requestState":"s"}"#;
    let kind = serde_json::json!("input_required");
    for (context, delivered) in [(ResultContext::default(), false), (rounds, true)] {
        assert_eq!(modern.delivers_as_it_came("tools/call", asked, context), delivered);
        assert_eq!(
            modern.delivers_decoded_as_it_came("tools/call", asked, Some(&kind), context),
            delivered
        );
    }
}
