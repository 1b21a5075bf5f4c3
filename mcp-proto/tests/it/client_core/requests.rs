//! The client's requests: matching answers, timeouts and cancellation,
//! failed waiters, batches and how requests are written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{ClientError, Event, RequestOptions};
use mcp_proto::jsonrpc::{ErrorObject, Message, RequestId, Response};
use serde_json::{Value, json};

use super::{Core, config, events, msg, ready, stateless, transmitted};

#[test]
fn replies_are_matched_by_id_in_any_order() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions::default();
    let a = core.start_request("tools/list", None, &opts, "a", t0).unwrap();
    let b = core.start_request("ping", None, &opts, "b", t0).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(core.pending_requests(), 2);
    core.handle_message(Message::Response(Response::new(b.id.clone(), json!({}))), t0);
    core.handle_message(
        Message::Error(mcp_proto::ErrorResponse::new(
            Some(a.id.clone()),
            ErrorObject::new(-32603, "boom"),
        )),
        t0,
    );
    // Late duplicate and unknown ids are dropped.
    core.handle_message(Message::Response(Response::new(b.id.clone(), json!({}))), t0);
    core.handle_message(Message::Response(Response::new(RequestId::from("zzz"), json!({}))), t0);
    core.handle_message(Message::Response(Response::new(RequestId::Number(999), json!({}))), t0);
    let evs = events(&mut core);
    assert_eq!(evs.len(), 2);
    assert!(matches!(&evs[0], Event::Reply { waiter: "b", outcome: Ok(_), .. }));
    match &evs[1] {
        Event::Reply { waiter: "a", outcome: Err(ClientError::Rpc { method, error }), .. } => {
            assert_eq!(method, "tools/list");
            assert_eq!(error.code, -32603);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(core.pending_requests(), 0);
}

/// A request answered with a result the driver read itself is finished
/// by `take_answered` as a result finishes it, with no event; the probe
/// and `initialize` are never taken so (the core reads their results).
#[test]
fn a_request_answered_outside_the_core_is_finished_without_an_event() {
    let t0 = Instant::now();
    let mut fresh = Core::new(config());
    let init = fresh.initialize("init", t0).unwrap();
    let RequestId::Number(n) = init.id else { panic!("{:?}", init.id) };
    assert_eq!(fresh.waiter(n), None);
    assert_eq!(fresh.take_answered(n), None);
    assert_eq!(fresh.pending_requests(), 1);
    let mut probing = Core::new(config());
    let probe =
        probing.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "probe", t0).unwrap();
    let RequestId::Number(p) = probe.id else { panic!("{:?}", probe.id) };
    assert_eq!(probing.take_answered(p), None);
    assert_eq!(probing.pending_requests(), 1);

    let mut core = ready(t0);
    let opts = RequestOptions::default();
    let a = core.start_request("tools/call", None, &opts, "a", t0).unwrap();
    let b = core.start_request("tools/call", None, &opts, "b", t0).unwrap();
    let (RequestId::Number(a_id), RequestId::Number(b_id)) = (&a.id, &b.id) else { panic!() };
    assert_eq!(core.waiter(*a_id), Some(&"a"));
    assert_eq!(core.waiter(999), None);
    assert_eq!(core.take_answered(999), None);
    assert_eq!(core.take_answered(*a_id), Some("a"));
    assert_eq!(core.waiter(*a_id), None);
    assert_eq!(core.pending_requests(), 1);
    assert!(events(&mut core).is_empty());
    assert!(transmitted(&mut core).is_empty());
    // Its deadline is gone with it; a late answer is dropped.
    core.handle_message(Message::Response(Response::new(a.id.clone(), json!({}))), t0);
    core.handle_timeout(t0 + Duration::from_secs(3600));
    let evs = events(&mut core);
    assert!(
        matches!(
            &evs[..],
            [Event::Reply { waiter: "b", outcome: Err(ClientError::Timeout { .. }), .. }]
        ),
        "{evs:?}"
    );
    assert_eq!(core.take_answered(*b_id), None);
}

#[test]
fn an_abandoned_request_fails_its_waiter_and_tells_the_server_nothing() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let req = core
        .start_request(
            "tools/call",
            Some(json!({"name":"echo"})),
            &RequestOptions::with_timeout(Duration::from_secs(5)),
            "c",
            t0,
        )
        .unwrap();
    transmitted(&mut core);
    core.abandon(&req.id);
    match &events(&mut core)[..] {
        [Event::Reply { waiter: "c", outcome: Err(ClientError::Cancelled { method }), .. }] => {
            assert_eq!(method, "tools/call");
        }
        other => panic!("{other:?}"),
    }
    assert!(transmitted(&mut core).is_empty(), "no notifications/cancelled");
    assert_eq!(core.poll_timeout(), None);
    assert_eq!(core.deadline(&req.id), None);
    // An unknown id, and the same one again, are ignored.
    core.abandon(&req.id);
    core.abandon(&RequestId::from("x"));
    assert!(events(&mut core).is_empty());
    // A late answer is dropped.
    core.handle_message(Message::Response(Response::new(req.id, json!({}))), t0);
    assert!(events(&mut core).is_empty());
}

/// A request ended before its answer, its waiter taken back: the server
/// is told (as a cancellation tells it) when a reason is given, nothing
/// otherwise; no event either way, and the request is over.
#[test]
fn a_request_taken_back_ends_without_an_event() {
    let t0 = Instant::now();
    for reason in [Some("the transport failed"), None] {
        let mut core = ready(t0);
        let opts = RequestOptions::with_timeout(Duration::from_secs(5));
        let req = core.start_request("tools/call", None, &opts, "c", t0).unwrap();
        transmitted(&mut core);
        assert_eq!(core.take_ended(&req.id, reason), Some("c"));
        assert!(events(&mut core).is_empty());
        let sent = transmitted(&mut core);
        match reason {
            Some(reason) => {
                assert_eq!(sent.len(), 1, "{sent:?}");
                assert_eq!(sent[0]["method"], "notifications/cancelled");
                assert_eq!(sent[0]["params"]["requestId"], json!(req.id));
                assert_eq!(sent[0]["params"]["reason"], reason);
            }
            None => assert!(sent.is_empty(), "{sent:?}"),
        }
        assert_eq!(core.pending_requests(), 0);
        assert_eq!(core.deadline(&req.id), None);
        // Once only; unknown ids give nothing.
        assert_eq!(core.take_ended(&req.id, reason), None);
        assert_eq!(core.take_ended(&RequestId::from("x"), reason), None);
        core.handle_timeout(t0 + Duration::from_secs(6));
        assert!(events(&mut core).is_empty());
    }
}

/// `take_answered_if` takes a request only when its waiter is wanted,
/// leaving it in place otherwise.
#[test]
fn a_request_is_taken_as_answered_only_when_wanted() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions::default();
    let req = core.start_request("tools/call", None, &opts, "c", t0).unwrap();
    let RequestId::Number(n) = req.id else { panic!("{:?}", req.id) };
    assert_eq!(core.take_answered_if(n, |w| *w == "other"), None);
    assert_eq!(core.pending_requests(), 1);
    assert_eq!(core.take_answered_if(n, |w| *w == "c"), Some("c"));
    assert_eq!(core.pending_requests(), 0);
    assert_eq!(core.take_answered_if(n, |_| true), None);
    assert!(events(&mut core).is_empty());
}

#[test]
fn timeout_sends_cancelled_and_drops_late_reply() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let req = core
        .start_request(
            "tools/call",
            Some(json!({"name":"hang"})),
            &RequestOptions::with_timeout(Duration::from_secs(5)),
            "c",
            t0,
        )
        .unwrap();
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_secs(5)));
    core.handle_timeout(t0 + Duration::from_secs(4));
    assert!(events(&mut core).is_empty());
    core.handle_timeout(t0 + Duration::from_secs(5));
    match &events(&mut core)[0] {
        Event::Reply {
            waiter: "c",
            outcome: Err(e @ ClientError::Timeout { method, after }),
            ..
        } => {
            assert_eq!(method, "tools/call");
            assert_eq!(*after, Duration::from_secs(5));
            assert!(e.to_string().contains("tools/call timed out after 5.0s"));
        }
        other => panic!("{other:?}"),
    }
    let sent = transmitted(&mut core);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "notifications/cancelled");
    assert_eq!(sent[0]["params"]["requestId"], serde_json::to_value(&req.id).unwrap());
    assert!(sent[0]["params"]["reason"].as_str().unwrap().contains("timed out"));
    assert_eq!(core.poll_timeout(), None);
    core.handle_message(
        Message::Response(Response::new(req.id, json!({}))),
        t0 + Duration::from_secs(6),
    );
    assert!(events(&mut core).is_empty(), "a late reply is dropped");
}

#[test]
fn default_timeout_comes_from_config() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.request_timeout = Duration::from_millis(250);
    let mut core = Core::new(cfg);
    core.initialize("init", t0).unwrap();
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_millis(250)));
    core.handle_timeout(t0 + Duration::from_millis(250));
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { outcome: Err(ClientError::Timeout { .. }), .. }
    ));
    assert!(transmitted(&mut core).is_empty(), "initialize is never cancelled");
}

#[test]
fn encoded_requests_match_value_requests_and_are_answered_alike() {
    let t0 = Instant::now();
    let mut fresh = Core::new(config());
    let params = mcp_proto::types::CallToolRequestParams::new("echo", None);
    assert!(matches!(
        fresh.start_request_encoded("tools/call", &params, &RequestOptions::default(), "x", t0),
        Err(ClientError::NotInitialized { .. })
    ));

    let mut core = ready(t0);
    let mut args = serde_json::Map::new();
    args.insert("message".into(), json!("hi \"there\""));
    let params = mcp_proto::types::CallToolRequestParams::new("echo", Some(args));
    let by_value = core
        .start_request(
            "tools/call",
            Some(serde_json::to_value(&params).unwrap()),
            &RequestOptions::default(),
            "a",
            t0,
        )
        .unwrap();
    let (id, text) = core
        .start_request_encoded("tools/call", &params, &RequestOptions::default(), "b", t0)
        .unwrap();
    assert_ne!(id, by_value.id, "every request gets its own id");
    let encoded: Value = serde_json::from_slice(&text).unwrap();
    let mut expected = serde_json::to_value(Message::Request(by_value)).unwrap();
    expected["id"] = serde_json::to_value(&id).unwrap();
    assert_eq!(encoded, expected);
    assert!(!text.contains(&b'\n'), "one line");

    // The encoded request is pending like any other.
    core.handle_message(msg(json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}})), t0);
    let evs = events(&mut core);
    assert!(
        matches!(&evs[..], [Event::Reply { waiter: "b", outcome: Ok(r), .. }] if r.get() == r#"{"content":[]}"#)
    );

    // Asking for progress adds the token (the request's id) to `_meta`.
    let opts = RequestOptions { on_progress: Some(Arc::new(|_| {})), ..Default::default() };
    let (id, text) = core.start_request_encoded("tools/call", &params, &opts, "c", t0).unwrap();
    let encoded: Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(encoded["params"]["_meta"]["progressToken"], serde_json::to_value(&id).unwrap());
    assert_eq!(encoded["params"]["arguments"]["message"], "hi \"there\"");
}

#[test]
fn cancel_close_and_reset_fail_waiters() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions::default();
    let a = core.start_request("tools/call", Some(json!({})), &opts, "a", t0).unwrap();
    core.start_request("tools/list", None, &opts, "b", t0).unwrap();
    core.cancel(&a.id, "caller gave up");
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { waiter: "a", outcome: Err(ClientError::Cancelled { .. }), .. }
    ));
    let sent = transmitted(&mut core);
    assert_eq!(sent[0]["params"]["reason"], "caller gave up");
    core.reset();
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { waiter: "b", outcome: Err(ClientError::Closed { .. }), .. }
    ));
    assert!(core.is_fresh());
    let init = core.initialize("init2", t0).unwrap();
    assert!(matches!(init.id, RequestId::Number(n) if n > 3), "ids are never reused");
    core.close();
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { waiter: "init2", outcome: Err(ClientError::Closed { .. }), .. }
    ));
    assert!(matches!(
        core.start_request("ping", None, &opts, "p", t0),
        Err(ClientError::Closed { .. })
    ));
}

#[test]
fn batches_are_handled_element_by_element() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions::default();
    let a = core.start_request("ping", None, &opts, "a", t0).unwrap();
    let text = format!(
        r#"[{{"jsonrpc":"2.0","id":{},"result":{{}}}},{{"bad":1}},{{"jsonrpc":"2.0","id":"s","method":"ping"}}]"#,
        serde_json::to_string(&a.id).unwrap()
    );
    core.handle_incoming(mcp_proto::jsonrpc::decode_slice(text.as_bytes()).unwrap(), t0);
    assert!(matches!(&events(&mut core)[0], Event::Reply { waiter: "a", outcome: Ok(_), .. }));
    assert_eq!(transmitted(&mut core), vec![json!({"jsonrpc":"2.0","id":"s","result":{}})]);
}

/// Parameters given as raw JSON text that was pretty-printed go out on one
/// line (stdio frames by line), with the stateless era's `_meta` added into
/// them: also into an empty object with whitespace inside.
#[test]
fn pretty_printed_raw_params_are_sent_on_one_line() {
    let t0 = Instant::now();
    for modern in [false, true] {
        let mut core = if modern { stateless() } else { ready(t0) };
        let cases = [
            (
                "{\n  \"name\": \"echo\",\r\n  \"arguments\": {\"text\": \"a\\nb\", \"n\": [1,\n2]}\n}",
                json!({"name": "echo", "arguments": {"text": "a\nb", "n": [1, 2]}}),
            ),
            ("{ \n\r\t}", json!({})),
        ];
        for (raw, expected) in cases {
            let params = serde_json::value::RawValue::from_string(raw.to_owned()).unwrap();
            let (_, text) = core
                .start_request_encoded("tools/call", &*params, &RequestOptions::default(), "r", t0)
                .unwrap();
            let line = String::from_utf8_lossy(&text);
            assert!(!text.contains(&b'\n') && !text.contains(&b'\r'), "{line}");
            let sent: Value = serde_json::from_slice(&text).unwrap();
            let mut params = sent["params"].clone();
            if modern {
                let meta = params.as_object_mut().unwrap().remove("_meta").unwrap();
                assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{line}");
            }
            assert_eq!(params, expected, "{line}");
        }
    }
}

/// An answer the transport had to drop fails its request with the reason;
/// for `initialize` the handshake has failed, for the probe the core is
/// fresh again; unknown ids are ignored.
#[test]
fn unreadable_answers_fail_their_request() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let req = core.start_request("tools/call", None, &RequestOptions::default(), "c", t0).unwrap();
    assert!(!core.fail_unreadable(&RequestId::from("x"), "too long"));
    assert!(!core.fail_unreadable(&RequestId::Number(999), "too long"));
    assert!(core.fail_unreadable(&req.id, "a line over 1 MiB"));
    assert!(!core.fail_unreadable(&req.id, "again"));
    let evs = events(&mut core);
    assert!(
        matches!(&evs[..], [Event::Reply { waiter: "c", outcome: Err(ClientError::AnswerUnreadable { reason, .. }), .. }] if reason == "a line over 1 MiB"),
        "{evs:?}"
    );
    assert!(core.is_ready() && transmitted(&mut core).is_empty(), "no cancellation");

    let mut fresh = Core::new(config());
    let init = fresh.initialize("init", t0).unwrap();
    assert!(fresh.fail_unreadable(&init.id, "cut"));
    assert!(!fresh.is_ready() && !fresh.is_fresh());
    assert!(matches!(
        fresh.start_request("tools/list", None, &RequestOptions::default(), "p", t0),
        Err(ClientError::NotInitialized { .. })
    ));

    let mut probing = Core::new(config());
    let probe =
        probing.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "p", t0).unwrap();
    assert!(probing.fail_unreadable(&probe.id, "cut"));
    assert!(probing.is_fresh());
}
