//! The stateless era: the probe, entering the era, and the `_meta` its
//! requests carry.

use std::time::{Duration, Instant};

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{ClientError, Event, ListKind, RequestOptions};
use mcp_proto::jsonrpc::RequestId;
use serde_json::{Value, json};

use super::{Core, config, events, msg, ready, stateless};

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
