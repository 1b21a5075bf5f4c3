//! The client core driven with a virtual clock and no process: a scripted
//! server answers through plain values.

/// The decisions of `mcp_proto::client::decide`, on tables of cases.
#[path = "client_core/decide.rs"]
mod decide;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_proto::client::{
    ClientCore, ClientError, CoreConfig, Event, Handlers, ListKind, RequestOptions, ServerEvent,
    StaticRoots,
};
use mcp_proto::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use mcp_proto::types::{Implementation, Root, Tool};
use mcp_proto::{ProtocolVersion, error_code};
use serde_json::{Value, json};

type Core = ClientCore<&'static str>;

fn config() -> CoreConfig {
    CoreConfig::new(Implementation::new("test-client", "1.0.0"))
}

fn msg(v: Value) -> Message {
    serde_json::from_value(v).unwrap()
}

fn transmitted(core: &mut Core) -> Vec<Value> {
    std::iter::from_fn(|| core.poll_transmit()).map(|m| serde_json::to_value(&m).unwrap()).collect()
}

fn events(core: &mut Core) -> Vec<Event<&'static str>> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

fn init_reply(id: &RequestId, version: &str) -> Message {
    msg(json!({"jsonrpc":"2.0","id":id,"result":{
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "srv", "version": "0.1"}
    }}))
}

/// A core in the stateless era (no discovery result).
fn stateless() -> Core {
    let mut core = Core::new(config());
    core.enter_modern(ProtocolVersion::LATEST, None).unwrap();
    core
}

/// A core that finished the handshake at `t0`.
fn ready(t0: Instant) -> Core {
    ready_with(json!({}), t0)
}

/// A core that declared `capabilities` and finished the handshake at `t0`.
fn ready_with(capabilities: Value, t0: Instant) -> Core {
    let mut config = config();
    config.capabilities = serde_json::from_value(capabilities).unwrap();
    let mut core = Core::new(config);
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(init_reply(&req.id, "2025-11-25"), t0);
    let _ = transmitted(&mut core);
    let _ = events(&mut core);
    assert!(core.is_ready());
    core
}

#[test]
fn handshake_negotiates_and_sends_initialized() {
    let t0 = Instant::now();
    let mut core = Core::new(config());
    let req = core.initialize("init", t0).unwrap();
    let v = serde_json::to_value(Message::Request(req.clone())).unwrap();
    assert_eq!(v["method"], "initialize");
    assert_eq!(v["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(v["params"]["clientInfo"]["name"], "test-client");
    assert_eq!(v["params"]["capabilities"], json!({}));
    // Nothing but ping before the handshake finished.
    assert!(matches!(
        core.start_request("tools/list", None, &RequestOptions::default(), "x", t0),
        Err(ClientError::NotInitialized { .. })
    ));
    assert!(core.start_request("ping", None, &RequestOptions::default(), "p", t0).is_ok());
    // A notification that arrives before the reply (as real servers send) is routed, not taken as the reply.
    core.handle_message(
        msg(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})),
        t0,
    );
    core.handle_message(init_reply(&req.id, "2025-06-18"), t0);
    assert!(core.is_ready());
    assert_eq!(core.protocol_version(), Some(ProtocolVersion::V2025_06_18));
    assert_eq!(core.initialize_result().unwrap().server_info.name, "srv");
    assert_eq!(
        transmitted(&mut core),
        vec![json!({"jsonrpc":"2.0","method":"notifications/initialized"})]
    );
    let evs = events(&mut core);
    assert!(matches!(evs[0], Event::ListChanged(ListKind::Tools)));
    assert!(matches!(&evs[1], Event::Reply { waiter: "init", outcome: Ok(_), .. }));
    assert!(matches!(core.initialize("again", t0), Err(ClientError::AlreadyInitialized)));
}

#[test]
fn unsupported_version_fails_the_handshake() {
    let t0 = Instant::now();
    let mut core = Core::new(config());
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(init_reply(&req.id, "1999-01-01"), t0);
    let evs = events(&mut core);
    match &evs[0] {
        Event::Reply { outcome: Err(ClientError::UnsupportedVersion(e)), .. } => {
            assert_eq!(e.offered, "1999-01-01");
            assert!(e.to_string().contains("2025-11-25"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        transmitted(&mut core).is_empty(),
        "no initialized notification after a failed handshake"
    );
    assert!(!core.is_ready());
    assert!(core.start_request("tools/list", None, &RequestOptions::default(), "x", t0).is_err());
}

#[test]
fn invalid_initialize_result_is_an_error() {
    let t0 = Instant::now();
    let mut core = Core::new(config());
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(
        msg(json!({"jsonrpc":"2.0","id":req.id,"result":{"protocolVersion": 5}})),
        t0,
    );
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { outcome: Err(ClientError::InvalidResult { .. }), .. }
    ));
}

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
fn progress_is_routed_and_resets_the_deadline_within_the_maximum() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let opts = RequestOptions {
        timeout: Some(Duration::from_secs(10)),
        reset_timeout_on_progress: true,
        max_total_timeout: Some(Duration::from_secs(25)),
        on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push(p.progress))),
        meta: None,
        no_cache: false,
        headers: Vec::new(),
    };
    let req =
        core.start_request("tools/call", Some(json!({"name":"slow"})), &opts, "s", t0).unwrap();
    let v = serde_json::to_value(Message::Request(req.clone())).unwrap();
    let token = v["params"]["_meta"]["progressToken"].clone();
    assert_eq!(token, serde_json::to_value(&req.id).unwrap());
    assert_eq!(v["params"]["name"], "slow");

    let progress = |p: f64| {
        msg(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":p,"total":10}}),
        )
    };
    for (secs, p) in [(8u64, 1.0), (16, 2.0), (24, 3.0)] {
        core.handle_message(progress(p), t0 + Duration::from_secs(secs));
        core.handle_timeout(t0 + Duration::from_secs(secs));
    }
    let evs = events(&mut core);
    assert_eq!(evs.len(), 3);
    for e in &evs {
        match e {
            Event::Progress { callback: Some(cb), params, .. } => cb(params),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    // Reset at 24 s would move it to 34 s, but the maximum total is 25 s.
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_secs(25)));
    core.handle_timeout(t0 + Duration::from_secs(25));
    assert!(matches!(
        &events(&mut core)[0],
        Event::Reply { outcome: Err(ClientError::Timeout { .. }), .. }
    ));
    // Progress for unknown tokens is ignored.
    core.handle_message(progress(4.0), t0 + Duration::from_secs(26));
    assert!(events(&mut core).is_empty());
}

#[test]
fn progress_without_reset_keeps_the_deadline() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions {
        timeout: Some(Duration::from_secs(10)),
        on_progress: Some(Arc::new(|_| {})),
        ..Default::default()
    };
    let req =
        core.start_request("tools/call", Some(json!({"name":"slow"})), &opts, "s", t0).unwrap();
    core.handle_message(
        msg(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":req.id,"progress":1}})),
        t0 + Duration::from_secs(9),
    );
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_secs(10)));
}

#[test]
fn progress_needs_object_params() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions { on_progress: Some(Arc::new(|_| {})), ..Default::default() };
    assert!(matches!(
        core.start_request("x", Some(json!([1])), &opts, "x", t0),
        Err(ClientError::InvalidParams { .. })
    ));
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
fn server_ping_is_answered_and_undeclared_requests_get_method_not_found() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    for (id, method) in [
        (1, "ping"),
        (2, "roots/list"),
        (3, "sampling/createMessage"),
        (4, "elicitation/create"),
        (5, "bogus/thing"),
    ] {
        core.handle_message(Message::Request(Request::new(id, method, None)), t0);
    }
    let sent = transmitted(&mut core);
    assert_eq!(sent[0], json!({"jsonrpc":"2.0","id":1,"result":{}}));
    for (i, s) in sent[1..].iter().enumerate() {
        assert_eq!(s["id"], json!(i + 2));
        assert_eq!(s["error"]["code"], error_code::METHOD_NOT_FOUND);
    }
    assert!(events(&mut core).is_empty());
}

#[test]
fn declared_server_requests_go_to_the_host_and_cancellation_is_honoured() {
    let t0 = Instant::now();
    let handlers = Handlers {
        roots: Some(Arc::new(StaticRoots(vec![Root {
            uri: "file:///tmp".into(),
            ..Default::default()
        }]))),
        ..Default::default()
    };
    let mut cfg = config();
    cfg.capabilities = handlers.capabilities();
    let mut core = Core::new(cfg);
    let req = core.initialize("init", t0).unwrap();
    let v = serde_json::to_value(Message::Request(req.clone())).unwrap();
    assert!(v["params"]["capabilities"]["roots"].is_object());
    assert!(v["params"]["capabilities"].get("sampling").is_none());
    core.handle_message(init_reply(&req.id, "2025-11-25"), t0);
    let _ = (transmitted(&mut core), events(&mut core));

    core.handle_message(Message::Request(Request::new("r1", "roots/list", None)), t0);
    core.handle_message(Message::Request(Request::new("r2", "roots/list", None)), t0);
    let evs = events(&mut core);
    assert_eq!(evs.len(), 2);
    let Event::ServerRequest(sr) = &evs[0] else { panic!("{evs:?}") };
    assert_eq!(sr.method, "roots/list");
    let answer = futures_lite_block_on(handlers.handle(&sr.method, sr.params.clone())).unwrap();
    core.respond(sr.id.clone(), Ok(answer));
    // The server cancels r2: the answer is not sent.
    core.handle_message(
        Message::Notification(Notification::new(
            "notifications/cancelled",
            Some(json!({"requestId":"r2","reason":"no longer needed"})),
        )),
        t0,
    );
    assert!(
        matches!(&events(&mut core)[0], Event::ServerRequestCancelled { id, .. } if *id == RequestId::from("r2"))
    );
    core.respond(RequestId::from("r2"), Ok(json!({"roots":[]})));
    let sent = transmitted(&mut core);
    assert_eq!(
        sent,
        vec![json!({"jsonrpc":"2.0","id":"r1","result":{"roots":[{"uri":"file:///tmp"}]}})]
    );
}

#[test]
fn notifications_are_routed() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let n = |method: &str, params: Value| {
        Message::Notification(Notification::new(method, Some(params)))
    };
    core.handle_message(
        n("notifications/message", json!({"level":"warning","logger":"db","data":"disk low"})),
        t0,
    );
    core.handle_message(n("notifications/prompts/list_changed", json!({})), t0);
    core.handle_message(n("notifications/resources/list_changed", json!({})), t0);
    core.handle_message(n("notifications/resources/updated", json!({"uri":"file:///a"})), t0);
    let evs = events(&mut core);
    assert!(matches!(&evs[0], Event::Log(p) if p.data == json!("disk low")));
    assert!(matches!(evs[1], Event::ListChanged(ListKind::Prompts)));
    assert!(matches!(evs[2], Event::ListChanged(ListKind::Resources)));
    assert!(
        matches!(&evs[3], Event::Notification(n) if n.method == "notifications/resources/updated")
    );
}

#[test]
fn tool_cache_is_invalidated_by_list_changed_even_mid_listing() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let tool = |name: &str| -> Tool {
        serde_json::from_value(json!({"name":name,"inputSchema":{"type":"object"}})).unwrap()
    };
    let g = core.tools_generation();
    core.store_tools(g, vec![tool("a")]);
    assert_eq!(core.cached_tools().unwrap().len(), 1);
    core.handle_message(
        Message::Notification(Notification::new("notifications/tools/list_changed", None)),
        t0,
    );
    assert!(core.cached_tools().is_none());
    // A list fetched across a change is returned but not cached.
    let g = core.tools_generation();
    core.handle_message(
        Message::Notification(Notification::new("notifications/tools/list_changed", None)),
        t0,
    );
    let got = core.store_tools(g, vec![tool("b")]);
    assert_eq!(got[0].name, "b");
    assert!(core.cached_tools().is_none());
    // A list fetched after the changes is cached.
    let g = core.tools_generation();
    assert_ne!(g, 0);
    core.store_tools(g, vec![tool("c")]);
    assert_eq!(core.cached_tools().unwrap()[0].name, "c");
    // A reset forgets the cache and outdates a listing in flight.
    core.reset();
    assert!(core.cached_tools().is_none());
    assert_ne!(core.tools_generation(), g);
    core.store_tools(g, vec![tool("d")]);
    assert!(core.cached_tools().is_none());
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

/// Polls a future that never waits (the handlers here answer at once).
fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the handler future was not ready"),
    }
}

#[test]
fn deliver_routes_each_event_and_leaves_only_driver_work() {
    use mcp_proto::client::{DriverWork, ServerEvent};
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.capabilities =
        Handlers { roots: Some(Arc::new(StaticRoots(vec![]))), ..Default::default() }
            .capabilities();
    let mut core = Core::new(cfg);
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(init_reply(&req.id, "2025-11-25"), t0);
    let _ = transmitted(&mut core);

    let heard = Arc::new(Mutex::new(Vec::new()));
    let heard2 = heard.clone();
    let on_event: mcp_proto::client::EventCallback =
        Arc::new(move |e: &ServerEvent| heard2.lock().unwrap().push(e.clone()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let progress2 = progress.clone();
    let opts = RequestOptions {
        on_progress: Some(Arc::new(move |p| progress2.lock().unwrap().push(p.progress))),
        ..Default::default()
    };
    let call =
        core.start_request("tools/call", Some(json!({"name":"slow"})), &opts, "call", t0).unwrap();
    let token = serde_json::to_value(&call.id).unwrap();
    core.handle_message(msg(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":7}})), t0);
    core.handle_message(
        msg(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})),
        t0,
    );
    core.handle_message(Message::Request(Request::new("r1", "roots/list", None)), t0);
    core.handle_message(
        msg(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}),
        ),
        t0,
    );
    core.handle_message(
        Message::Response(Response::new(call.id.clone(), json!({"content":[]}))),
        t0,
    );

    let mut replies = Vec::new();
    let mut work = Vec::new();
    for event in events(&mut core) {
        if let Some(w) = event
            .deliver(Some(&on_event), |waiter, outcome| replies.push((waiter, outcome.is_ok())))
        {
            work.push(w);
        }
    }
    assert_eq!(*progress.lock().unwrap(), vec![7.0]);
    assert_eq!(*heard.lock().unwrap(), vec![ServerEvent::ListChanged(ListKind::Tools)]);
    assert_eq!(replies, vec![("init", true), ("call", true)]);
    assert_eq!(work.len(), 2);
    assert!(matches!(&work[0], DriverWork::AnswerServerRequest(r) if r.method == "roots/list"));
    assert_eq!(work[1], DriverWork::StopServerRequest(RequestId::from("r1")));
}

#[test]
fn the_timer_heap_does_not_grow_with_the_number_of_requests() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let mut most = 0;
    // 10,000 requests answered one by one, and 10,000 more with 8 in flight.
    for depth in [1usize, 8] {
        let mut out = std::collections::VecDeque::new();
        for i in 0..10_000u32 {
            let now = t0 + Duration::from_millis(u64::from(i));
            let req =
                core.start_request("ping", None, &RequestOptions::default(), "w", now).unwrap();
            out.push_back(req.id);
            if out.len() == depth {
                let id = out.pop_front().unwrap();
                core.handle_message(msg(json!({"jsonrpc":"2.0","id":id,"result":{}})), now);
                let _ = events(&mut core);
            }
            most = most.max(core.timer_entries());
        }
        for id in out {
            core.handle_message(msg(json!({"jsonrpc":"2.0","id":id,"result":{}})), t0);
        }
        let _ = events(&mut core);
    }
    assert_eq!(core.pending_requests(), 0);
    assert!(most <= 2 * 8 + 64 + 1, "{most} timer entries for at most 8 waiting requests");
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

/// The stateless era entered through the core alone: the probe's request
/// and its `_meta`, the states in which probing and entering are allowed,
/// and what the core reports once in.
#[test]
fn the_stateless_era_is_probed_and_entered() {
    let t0 = Instant::now();
    let mut config = config();
    config.log_level = Some(mcp_proto::types::LoggingLevel::Warning);
    let mut core = Core::new(config.clone());
    assert!(core.is_fresh() && !core.is_closed() && !core.is_ready() && !core.is_modern());
    assert!(core.initialize_result().is_none());

    let probe =
        core.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "probe", t0).unwrap();
    assert_eq!(probe.method, "server/discover");
    let meta = &probe.params.as_ref().unwrap()["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert_eq!(Value::Object(config.modern_meta(ProtocolVersion::LATEST)), *meta);
    assert!(!core.is_fresh());
    assert!(matches!(
        core.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "again", t0),
        Err(ClientError::AlreadyInitialized)
    ));
    assert!(matches!(
        core.enter_modern(ProtocolVersion::LATEST, None),
        Err(ClientError::AlreadyInitialized)
    ));

    // The answer goes to the probe's waiter; the core is fresh again.
    let discover = json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "instructions": "be brief",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "srv", "version": "2"}},
    });
    core.handle_message(msg(json!({"jsonrpc":"2.0","id":probe.id,"result":discover})), t0);
    assert!(matches!(
        &events(&mut core)[..],
        [Event::Reply { waiter: "probe", outcome: Ok(_), .. }]
    ));
    assert!(core.is_fresh());

    // Only a version of the stateless era can be entered.
    assert!(matches!(
        core.enter_modern(ProtocolVersion::V2025_11_25, None),
        Err(ClientError::UnsupportedVersion(_))
    ));
    assert!(core.is_fresh() && !core.is_modern());
    core.enter_modern(ProtocolVersion::LATEST, Some(serde_json::from_value(discover).unwrap()))
        .unwrap();
    assert!(core.is_modern() && core.is_ready());
    assert_eq!(core.protocol_version(), Some(ProtocolVersion::LATEST));
    // The discovery is kept once, as the initialize result: its members
    // moved there, serverInfo read from its `_meta`, the rest in `extra`.
    let init = core.initialize_result().unwrap();
    assert_eq!(
        (init.server_info.name.as_str(), init.protocol_version.as_str()),
        ("srv", "2026-07-28")
    );
    assert_eq!(init.instructions.as_deref(), Some("be brief"));
    assert!(init.capabilities.tools.is_some());
    assert_eq!(init.meta.as_ref().unwrap()["io.modelcontextprotocol/serverInfo"]["name"], "srv");
    assert_eq!(init.extra["supportedVersions"], json!(["2026-07-28"]));
    // Entering again (another version after an unsupported-version error)
    // is allowed once modern; a probe is not.
    core.enter_modern(ProtocolVersion::LATEST, None).unwrap();
    assert_eq!(core.initialize_result().unwrap().server_info.name, "srv");
    assert!(matches!(
        core.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "late", t0),
        Err(ClientError::AlreadyInitialized)
    ));

    // A handshake-era session cannot switch eras.
    let mut legacy = ready(t0);
    assert!(matches!(
        legacy.enter_modern(ProtocolVersion::LATEST, None),
        Err(ClientError::AlreadyInitialized)
    ));
    assert!(!legacy.is_modern());

    // Closed: neither.
    for mut closed in [Core::new(config.clone()), ready(t0)] {
        closed.close();
        assert!(closed.is_closed() && !closed.is_fresh() && !closed.is_ready());
        assert!(matches!(
            closed.start_probe(ProtocolVersion::LATEST, Duration::from_secs(5), "x", t0),
            Err(ClientError::Closed { .. })
        ));
        assert!(matches!(
            closed.enter_modern(ProtocolVersion::LATEST, None),
            Err(ClientError::Closed { .. })
        ));
    }
}

/// With nothing else waiting, stale deadline entries are kept until 64,
/// then dropped at the next request (amortised pruning, no per-reply cost).
#[test]
fn stale_timer_entries_are_pruned_once_they_reach_the_bound() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let mut sizes = Vec::new();
    for _ in 0..200 {
        let req = core.start_request("ping", None, &RequestOptions::default(), "w", t0).unwrap();
        sizes.push(core.timer_entries());
        core.handle_message(msg(json!({"jsonrpc":"2.0","id":req.id,"result":{}})), t0);
        let _ = events(&mut core);
    }
    assert_eq!(sizes.iter().max(), Some(&64), "{sizes:?}");
    let drops = sizes.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(drops >= 3 && sizes.windows(2).all(|w| w[1] == w[0] + 1 || w == [64, 1]), "{sizes:?}");
}

/// The text forms a host logs, and the host-facing part of each event.
#[test]
fn debug_forms_and_server_events() {
    let options = RequestOptions {
        timeout: Some(Duration::from_secs(3)),
        on_progress: Some(Arc::new(|_| {})),
        ..Default::default()
    };
    let text = format!("{options:?}");
    assert!(text.starts_with("RequestOptions {") && text.contains("<callback>"), "{text}");
    assert!(text.contains("timeout: Some(3s)"), "{text}");
    let core = ready(Instant::now());
    let text = format!("{core:?}");
    assert!(text.starts_with("ClientCore {") && text.contains("phase: Ready"), "{text}");

    let log: mcp_proto::types::LoggingMessageNotificationParams =
        serde_json::from_value(json!({"level": "error", "data": "boom"})).unwrap();
    let note = Notification::new("notifications/resources/updated", Some(json!({"uri": "x"})));
    let cases: Vec<(Event<&str>, Option<ServerEvent>)> = vec![
        (Event::ListChanged(ListKind::Tools), Some(ServerEvent::ListChanged(ListKind::Tools))),
        (Event::Log(log.clone()), Some(ServerEvent::Log(log))),
        (Event::Notification(note.clone()), Some(ServerEvent::Notification(note))),
        (
            Event::Reply {
                id: 1.into(),
                waiter: "w",
                outcome: Err(ClientError::Closed { method: "m".into() }),
            },
            None,
        ),
    ];
    for (event, expected) in cases {
        let text = format!("{event:?}");
        assert!(!text.is_empty() && text.chars().next().unwrap().is_uppercase(), "{text}");
        assert_eq!(event.server_event(), expected, "{text}");
    }
    let reply = Event::<&str>::Reply {
        id: 9.into(),
        waiter: "w",
        outcome: Err(ClientError::Closed { method: "m".into() }),
    };
    assert!(format!("{reply:?}").starts_with("Reply { id: Number(9)"), "{reply:?}");
}

/// Pruning drops only stale entries: a request that waits through many
/// pruning rounds still times out at its deadline.
#[test]
fn pruning_keeps_the_deadlines_of_waiting_requests() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let long = RequestOptions::with_timeout(Duration::from_secs(100));
    core.start_request("tools/call", None, &long, "kept", t0).unwrap();
    for _ in 0..300 {
        let req = core.start_request("ping", None, &RequestOptions::default(), "w", t0).unwrap();
        core.handle_message(msg(json!({"jsonrpc":"2.0","id":req.id,"result":{}})), t0);
    }
    let _ = events(&mut core);
    assert!(core.timer_entries() < 300);
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_secs(100)));
    core.handle_timeout(t0 + Duration::from_secs(100));
    let evs = events(&mut core);
    assert!(
        matches!(
            &evs[..],
            [Event::Reply { waiter: "kept", outcome: Err(ClientError::Timeout { .. }), .. }]
        ),
        "{evs:?}"
    );
}

/// A progress that moves a request's deadline: `deadline` and
/// `poll_timeout` give the new one (the old heap entry is stale); options
/// that need the parameters by value (progress, extra `_meta`) put them in
/// the encoded request too; a closed core refuses `initialize` as closed.
#[test]
fn moved_deadlines_and_options_that_need_the_parameters_by_value() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let opts = RequestOptions {
        timeout: Some(Duration::from_secs(10)),
        reset_timeout_on_progress: true,
        ..Default::default()
    };
    let params = mcp_proto::types::CallToolRequestParams::new("slow", None);
    let (id, text) = core.start_request_encoded("tools/call", &params, &opts, "s", t0).unwrap();
    let sent: Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(sent["params"]["_meta"]["progressToken"], serde_json::to_value(&id).unwrap());
    assert_eq!(core.deadline(&id), Some(t0 + Duration::from_secs(10)));
    assert_eq!(core.deadline(&RequestId::from("other")), None);
    let progress = json!({"jsonrpc":"2.0","method":"notifications/progress",
        "params":{"progressToken":id,"progress":1}});
    core.handle_message(msg(progress.clone()), t0 + Duration::from_secs(5));
    assert_eq!(core.deadline(&id), Some(t0 + Duration::from_secs(15)));
    assert_eq!(core.poll_timeout(), Some(t0 + Duration::from_secs(15)));
    // More progress at the same instant moves nothing: no new entry.
    let entries = core.timer_entries();
    core.handle_message(msg(progress), t0 + Duration::from_secs(5));
    assert_eq!(core.timer_entries(), entries);

    let mut extra = serde_json::Map::new();
    extra.insert("traceparent".into(), json!("00-abc-def-01"));
    let opts = RequestOptions { meta: Some(extra), ..Default::default() };
    let (_, text) = core.start_request_encoded("tools/call", &params, &opts, "m", t0).unwrap();
    let sent: Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(sent["params"]["_meta"]["traceparent"], "00-abc-def-01");

    let mut closed = Core::new(config());
    closed.close();
    assert!(matches!(closed.initialize("i", t0), Err(ClientError::Closed { .. })));
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

/// A server request for a declared capability reaches the host; the same
/// request without the capability is answered method-not-found.
#[test]
fn sampling_requests_reach_the_host_only_when_declared() {
    let t0 = Instant::now();
    let sampling = json!({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage",
        "params":{"messages":[],"maxTokens":10}});
    let mut core = ready_with(json!({"sampling": {}}), t0);
    core.handle_message(msg(sampling.clone()), t0);
    assert!(transmitted(&mut core).is_empty());
    assert!(
        matches!(&events(&mut core)[..], [Event::ServerRequest(r)] if r.method == "sampling/createMessage")
    );

    let mut plain = ready(t0);
    plain.handle_message(msg(sampling), t0);
    assert_eq!(transmitted(&mut plain)[0]["error"]["code"], -32601);

    // Elicitation alike.
    let elicit = json!({"jsonrpc":"2.0","id":"e1","method":"elicitation/create",
        "params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}});
    let mut core = ready_with(json!({"elicitation": {}}), t0);
    core.handle_message(msg(elicit.clone()), t0);
    assert!(
        matches!(&events(&mut core)[..], [Event::ServerRequest(r)] if r.method == "elicitation/create")
    );
    plain.handle_message(msg(elicit), t0);
    assert_eq!(transmitted(&mut plain)[0]["error"]["code"], -32601);
}

/// A server's `notifications/cancelled` for one of the client's requests
/// ends it only when it is a `subscriptions/listen` (stdio, 2026-07-28: the
/// server ends a subscription); any other request waits on for its answer.
#[test]
fn a_server_cancels_only_a_listen_of_the_client() {
    let t0 = Instant::now();
    let mut core = stateless();
    let call = core
        .start_request(
            "tools/call",
            Some(json!({"name":"x"})),
            &RequestOptions::default(),
            "call",
            t0,
        )
        .unwrap();
    let listen = core
        .start_request(
            "subscriptions/listen",
            Some(json!({"notifications":{}})),
            &RequestOptions::default(),
            "listen",
            t0,
        )
        .unwrap();
    for id in [&call.id, &listen.id] {
        core.handle_message(
            msg(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})),
            t0,
        );
    }
    let evs = events(&mut core);
    assert!(
        matches!(
            &evs[..],
            [Event::Reply { waiter: "listen", outcome: Err(ClientError::Cancelled { .. }), .. }]
        ),
        "{evs:?}"
    );
    assert_eq!(core.pending_requests(), 1);
    assert!(core.deadline(&call.id).is_some());
}

/// A host's notification leaves once the session is ready; before, it is
/// refused as uninitialized, after close as closed. An error response is
/// dropped after close.
#[test]
fn host_notifications_and_error_responses_follow_the_lifecycle() {
    let t0 = Instant::now();
    let note = || Notification::new("notifications/roots/list_changed", None);
    let mut fresh = Core::new(config());
    assert!(matches!(fresh.queue_notification(note()), Err(ClientError::NotInitialized { .. })));
    assert!(!fresh.has_transmit());
    let mut core = ready(t0);
    core.queue_notification(note()).unwrap();
    assert!(core.has_transmit());
    assert_eq!(transmitted(&mut core)[0]["method"], "notifications/roots/list_changed");
    assert!(!core.has_transmit());
    core.close();
    assert!(matches!(core.queue_notification(note()), Err(ClientError::Closed { .. })));
    let error = mcp_proto::ErrorResponse::new(None, ErrorObject::new(-32600, "bad"));
    core.queue_error_response(error.clone());
    assert!(!core.has_transmit());
    fresh.queue_error_response(error);
    assert_eq!(transmitted(&mut fresh)[0]["error"]["code"], -32600);
}

/// Stateless era: parameters that bring their own `_meta` get the era's
/// members merged in (one `_meta`, never two); a caller's extra `_meta`
/// cannot replace the version, capabilities or identity, but adds the
/// rest; a notification of a listen stream names its subscription.
#[test]
fn stateless_meta_is_merged_once_and_keeps_the_era_members() {
    let t0 = Instant::now();
    let mut core = stateless();
    let params =
        serde_json::value::RawValue::from_string(r#"{"name":"echo","_meta":{"mine":1}}"#.into())
            .unwrap();
    let (_, text) = core
        .start_request_encoded("tools/call", &*params, &RequestOptions::default(), "a", t0)
        .unwrap();
    let line = String::from_utf8(text).unwrap();
    assert_eq!(line.matches("\"_meta\"").count(), 1, "{line}");
    let sent: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(sent["params"]["_meta"]["mine"], 1);
    assert_eq!(sent["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");

    let mut extra = serde_json::Map::new();
    extra.insert("io.modelcontextprotocol/protocolVersion".into(), json!("1999-01-01"));
    extra.insert("io.modelcontextprotocol/clientInfo".into(), json!({"name": "spoof"}));
    extra.insert("io.modelcontextprotocol/logLevel".into(), json!("debug"));
    extra.insert("traceparent".into(), json!("00-abc-def-01"));
    let opts = RequestOptions { meta: Some(extra), ..Default::default() };
    let plain = mcp_proto::types::CallToolRequestParams::new("echo", None);
    let (_, text) = core.start_request_encoded("tools/call", &plain, &opts, "b", t0).unwrap();
    let sent: Value = serde_json::from_slice(&text).unwrap();
    let meta = &sent["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "debug");
    assert_eq!(meta["traceparent"], "00-abc-def-01");

    core.handle_message(
        msg(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed",
            "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}})),
        t0,
    );
    let evs = events(&mut core);
    assert!(
        matches!(
            &evs[..],
            [
                Event::Subscription { id: RequestId::Number(5), .. },
                Event::ListChanged(ListKind::Tools)
            ]
        ),
        "{evs:?}"
    );
}

/// A server's log message goes to `tracing` at the matching level.
#[test]
fn server_log_messages_reach_tracing_at_their_level() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tracing::{Level, Metadata, span};

    /// Records the level of every event under the `mcp::server` target.
    struct Levels(Mutex<Vec<Level>>, AtomicU64);
    impl tracing::Subscriber for Levels {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(self.1.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            if event.metadata().target() == "mcp::server" {
                self.0.lock().unwrap().push(*event.metadata().level());
            }
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }

    let levels = Arc::new(Levels(Mutex::new(Vec::new()), AtomicU64::new(0)));
    let t0 = Instant::now();
    let mut core = ready(t0);
    tracing::subscriber::with_default(levels.clone(), || {
        for level in ["debug", "info", "notice", "warning", "error", "critical", "emergency"] {
            core.handle_message(
                msg(json!({"jsonrpc":"2.0","method":"notifications/message",
                    "params":{"level":level,"logger":"db","data":"x"}})),
                t0,
            );
        }
    });
    let got = levels.0.lock().unwrap().clone();
    use Level as L;
    assert_eq!(got, [L::DEBUG, L::INFO, L::INFO, L::WARN, L::ERROR, L::ERROR, L::ERROR]);
    assert_eq!(events(&mut core).len(), 7);
}

/// A request whose options ask for progress or add `_meta` is written as
/// text with the same parameters the value merge gives, in both eras,
/// also when a member of the caller's `_meta` collides with one the core
/// sets (then the value merge decides, as it always did).
#[test]
fn encoded_meta_matches_the_value_merge() {
    let t0 = Instant::now();
    let meta = |pairs: &[(&str, Value)]| {
        Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
    };
    let level = ("io.modelcontextprotocol/logLevel", json!("debug"));
    let trace = ("trace\"parent", json!({"nested": [1, "\u{e9}"]}));
    let cases: Vec<(bool, Option<serde_json::Map<String, Value>>)> = vec![
        (true, None),
        (false, meta(std::slice::from_ref(&level))),
        (true, meta(&[level.clone(), trace.clone()])),
        (true, meta(&[("progressToken", json!("mine")), trace.clone()])),
        (false, meta(&[("io.modelcontextprotocol/protocolVersion", json!("1999-01-01"))])),
        (true, Some(serde_json::Map::new())),
    ];
    let mut args = serde_json::Map::new();
    args.insert("message".into(), json!("hi"));
    let params = mcp_proto::types::CallToolRequestParams::new("echo", Some(args));
    for modern in [false, true] {
        let mut core = if modern { stateless() } else { ready(t0) };
        for (progress, extra) in &cases {
            let opts = RequestOptions {
                reset_timeout_on_progress: *progress,
                meta: extra.clone(),
                ..Default::default()
            };
            let value = serde_json::to_value(&params).unwrap();
            let by_value = core.start_request("tools/call", Some(value), &opts, "v", t0).unwrap();
            let (id, text) =
                core.start_request_encoded("tools/call", &params, &opts, "t", t0).unwrap();
            assert!(!text.contains(&b'\n'));
            let sent: Value = serde_json::from_slice(&text).unwrap();
            let mut expected = by_value.params.unwrap();
            // The token is each request's own id.
            if expected.pointer("/_meta/progressToken")
                == Some(&serde_json::to_value(&by_value.id).unwrap())
            {
                expected["_meta"]["progressToken"] = serde_json::to_value(&id).unwrap();
            }
            assert_eq!(sent["params"], expected, "modern {modern}, {progress}, {extra:?}");
            assert_eq!(sent["id"], serde_json::to_value(&id).unwrap());
        }
    }
}

/// The probe and `initialize` encoded straight to text are the requests
/// made by value, member for member; the era's `_meta` made for the probe
/// is the one entering the era keeps (its text and its map agree with
/// `CoreConfig::modern_meta`).
#[test]
fn openings_encoded_are_the_requests_made_by_value() {
    let t0 = Instant::now();
    let mut config = config();
    config.capabilities =
        serde_json::from_value(json!({"elicitation": {}, "x-cap": {"a": 1}})).unwrap();
    for level in [None, Some(mcp_proto::types::LoggingLevel::Debug)] {
        config.log_level = level;
        let version = ProtocolVersion::LATEST;
        let text: Value = serde_json::from_slice(&config.modern_meta_text(version)).unwrap();
        assert_eq!(text, Value::Object(config.modern_meta(version)));

        let mut by_value = Core::new(config.clone());
        let mut encoded = Core::new(config.clone());
        let request = by_value.start_probe(version, Duration::from_secs(5), "v", t0).unwrap();
        let (id, body) =
            encoded.start_probe_encoded(version, Duration::from_secs(5), "e", t0).unwrap();
        assert_eq!(id, request.id);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, serde_json::to_value(&request).unwrap());
        assert_eq!(encoded.pending_requests(), 1);

        // Entered after the probe, a request made by value and one
        // encoded carry the same `_meta`.
        let answer = json!({"supportedVersions": ["2026-07-28"]});
        for core in [&mut by_value, &mut encoded] {
            // The probe is each core's first request: id 1.
            core.handle_message(
                msg(json!({"jsonrpc": "2.0", "id": 1, "result": answer.clone()})),
                t0,
            );
            core.enter_modern(version, None).unwrap();
        }
        let options = RequestOptions::default();
        let r = by_value.start_request("tools/list", None, &options, "l", t0).unwrap();
        let (_, text) =
            encoded.start_request_encoded("tools/list", &(), &options, "l", t0).unwrap();
        let text: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(text["params"], r.params.unwrap());
        assert_eq!(text["params"]["_meta"], Value::Object(config.modern_meta(version)));

        let mut by_value = Core::new(config.clone());
        let mut encoded = Core::new(config.clone());
        let request = by_value.initialize("v", t0).unwrap();
        let (id, body) = encoded.initialize_encoded("e", t0).unwrap();
        assert_eq!(id, request.id);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, serde_json::to_value(&request).unwrap());
        assert!(matches!(
            encoded.initialize_encoded("again", t0),
            Err(ClientError::AlreadyInitialized)
        ));
    }
}
