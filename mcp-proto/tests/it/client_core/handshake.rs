//! The handshake era's opening (`initialize`, `notifications/initialized`),
//! the encoded openings, and what the lifecycle allows a host to send.

use std::time::{Duration, Instant};

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{ClientError, Event, ListKind, RequestOptions};
use mcp_proto::jsonrpc::{ErrorObject, Message, Notification};
use serde_json::{Value, json};

use super::{Core, config, events, init_reply, msg, ready, transmitted};

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
