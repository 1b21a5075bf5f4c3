//! Requests from the server: answered by the core, passed to the host
//! when declared, and a server's cancellation of a client's request.

use std::sync::Arc;
use std::time::Instant;

use mcp_proto::client::{ClientError, Event, Handlers, RequestOptions, StaticRoots};
use mcp_proto::error_code;
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use mcp_proto::types::Root;
use serde_json::json;

use super::{Core, config, events, init_reply, msg, ready, ready_with, stateless, transmitted};

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
