//! The opening's answers read once: the usual answer's discovery
//! (`probe::usual_discovery`, `ProbeState::handle_discovery`,
//! `ClientCore::take_probe_answered`) and result of `initialize`
//! (`ClientCore::take_usual_initialize`) against the general path (the
//! envelope decoded, then the result read by `ProbeState::handle_answer`
//! or the core), on tables of answers: odd but valid JSON, and near misses
//! the shortcut must leave to the general path.

use std::time::{Duration, Instant};

use mcp_proto::ProtocolVersion;
use mcp_proto::client::decide::ProbeState;
use mcp_proto::client::decide::probe::usual_discovery;
use mcp_proto::client::{ClientCore, CoreConfig, Event};
use mcp_proto::jsonrpc::{self, IncomingOf, MessageOf, RequestId};
use mcp_proto::types::Implementation;
use serde_json::value::RawValue;

type Core = ClientCore<&'static str>;

fn core() -> Core {
    Core::new(CoreConfig::new(Implementation::new("test-client", "1.0.0")))
}

/// The usual envelope around `result`, as most servers write it.
fn usual(id: i64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// An answer's id and result, as the general path reads them.
type Answered = Option<(RequestId, Box<RawValue>)>;

/// The result's text of the usual answer and, through the general path,
/// the answer's result: both `None` where the text is not such an answer.
fn both_paths(text: &str) -> (Option<(i64, &str)>, Answered) {
    let general = match jsonrpc::decode_slice_as::<Box<RawValue>>(text.as_bytes()) {
        Ok(IncomingOf::Single(MessageOf::Response(r))) => Some((r.id, r.result)),
        _ => None,
    };
    (jsonrpc::usual_answer(text), general)
}

/// Discovery answers: the message, and whether the shortcut takes it.
fn discovery_answers() -> Vec<(String, bool)> {
    let testkit = r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-testkit","title":"MCP testkit","version":"0.1.0"}},"cacheScope":"public","capabilities":{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}},"instructions":"A scriptable test server.","resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}"#;
    let mut cases = vec![
        (usual(1, testkit), true),
        (format!(r#"{{"id":1,"jsonrpc":"2.0","result":{testkit}}}"#), true),
        (format!("{}\r\n ", usual(1, testkit)), true),
        // Members in another order, spaces, escapes in values and keys.
        (
            usual(
                1,
                r#" { "supportedVersions" : [ "2026-07-28" , "2025-11-25" ] , "instructions" : "a \"b\" \u0041\n\u00e9\ud83d\ude00" , "\u005fmeta" : { "io.modelcontextprotocol/serverInfo" : { "name" : "s\u0031" , "version" : "1" } } } "#,
            ),
            true,
        ),
        // A member twice: the last counts on both paths.
        (
            usual(1, r#"{"supportedVersions":["1999-01-01"],"supportedVersions":["2026-07-28"]}"#),
            true,
        ),
        (
            usual(1, r#"{"supportedVersions":["2026-07-28"],"supportedVersions":["1999-01-01"]}"#),
            true,
        ),
        (
            usual(
                1,
                r#"{"capabilities":{"tools":{}},"capabilities":{"prompts":{"listChanged":false}},"supportedVersions":["2026-07-28"]}"#,
            ),
            true,
        ),
        // Unknown members kept in `extra`, nested ones included.
        (
            usual(
                1,
                r#"{"supportedVersions":["2026-07-28"],"x-vendor":{"a":[1,2.5,-3e2,null,true]},"ttlMs":5,"cacheScope":"private","capabilities":{"x-cap":{"deep":{}}}}"#,
            ),
            true,
        ),
        // Decodes, then no version in common, or only handshake-era ones.
        (usual(1, r#"{"supportedVersions":["1999-01-01"]}"#), true),
        (usual(1, r#"{"supportedVersions":["2025-11-25","2025-06-18"]}"#), true),
        (usual(1, r#"{"supportedVersions":[]}"#), true),
        (usual(123_456_789_012, r#"{"supportedVersions":["2026-07-28"]}"#), true),
        // No discovery: the general path decides (a handshake-era server,
        // or a failure when pinned).
        (usual(1, r#"{"capabilities":{}}"#), false),
        (usual(1, r#"{"supportedVersions":"2026-07-28"}"#), false),
        (usual(1, "null"), false),
        (usual(1, "[]"), false),
        (usual(1, r#"{"supportedVersions":["2026-07-28"],"instructions":"\ud800"}"#), false),
        // The usual shape but not one JSON value as the result, or more
        // members after it: the general path's to read.
        (usual(1, r#"{"supportedVersions":["2026-07-28"]} x"#), false),
        (usual(1, r#"{"supportedVersions":["2026-07-28"]},"extra":1"#), false),
        (
            usual(
                1,
                r#"{"supportedVersions":["2026-07-28"]},"result":{"supportedVersions":["1999-01-01"]}"#,
            ),
            false,
        ),
        (format!("{}x", usual(1, r#"{"supportedVersions":["2026-07-28"]}"#)), false),
        (usual(1, r#"{"supportedVersions":["2026-07-28"]"#), false),
        // Another shape: ids the shortcut does not read, another order.
        (
            r#"{"jsonrpc":"2.0","id":"1","result":{"supportedVersions":["2026-07-28"]}}"#.into(),
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":01,"result":{"supportedVersions":["2026-07-28"]}}"#.into(),
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-1,"result":{"supportedVersions":["2026-07-28"]}}"#.into(),
            false,
        ),
        (r#"{"jsonrpc":"2.0","result":{"supportedVersions":["2026-07-28"]},"id":1}"#.into(), false),
        (
            r#"{ "jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}"#.into(),
            false,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#.into(), false),
    ];
    // Every prefix of the usual answer is a near miss too.
    let whole = usual(1, r#"{"supportedVersions":["2026-07-28"],"ttlMs":1}"#);
    cases.extend((1..whole.len()).map(|n| (whole[..n].to_owned(), false)));
    cases
}

#[test]
fn the_usual_discovery_takes_the_general_paths_step() {
    let supported = [ProtocolVersion::LATEST, ProtocolVersion::V2025_11_25];
    let mut taken = 0;
    for (text, expected) in discovery_answers() {
        let (usual, general) = both_paths(&text);
        let discovered = usual.and_then(|(id, body)| Some((id, usual_discovery(body)?)));
        assert_eq!(discovered.is_some(), expected, "{text}");
        let Some((id, discovered)) = discovered else { continue };
        taken += 1;
        // Whatever the shortcut takes was a valid answer, the same one.
        let (general_id, raw) = general.unwrap_or_else(|| panic!("not an answer: {text}"));
        assert_eq!(general_id, RequestId::Number(id), "{text}");
        assert_eq!(serde_json::from_str(raw.get()).ok(), Some(discovered.clone()), "{text}");
        for pinned in [false, true] {
            for preferred in supported {
                let mut shortcut = ProbeState::new(preferred, &supported, pinned);
                let mut reference = ProbeState::new(preferred, &supported, pinned);
                let step = shortcut.handle_discovery(discovered.clone());
                assert_eq!(step, reference.handle_answer(raw.get()), "{text} pinned {pinned}");
                assert_eq!(shortcut.client_versions(), reference.client_versions());
            }
        }
    }
    assert_eq!(taken, 12, "the shortcut took fewer answers than the table expects");
}

#[test]
fn the_usual_discovery_ends_the_probe_as_its_answer_does() {
    let t0 = Instant::now();
    let timeout = Duration::from_secs(5);
    let version = ProtocolVersion::LATEST;
    for (text, expected) in discovery_answers() {
        let (mut shortcut, mut reference) = (core(), core());
        let id = shortcut.start_probe(version, timeout, "probe", t0).unwrap().id;
        assert_eq!(reference.start_probe(version, timeout, "probe", t0).unwrap().id, id);
        let RequestId::Number(n) = id else { panic!("a numeric id") };
        let text = text.replace(r#""id":1,"#, &format!(r#""id":{n},"#));
        let usual =
            jsonrpc::usual_answer(&text).filter(|(_, body)| usual_discovery(body).is_some());
        let Some((answered, _)) = usual else {
            assert!(!expected, "{text}");
            continue;
        };
        if answered != n {
            // Another request's answer is not the probe's to take.
            assert!(!shortcut.is_probe(answered));
            assert_eq!(shortcut.take_probe_answered(answered), None);
            assert!(shortcut.is_probe(n));
            continue;
        }
        assert!(shortcut.is_probe(answered));
        assert_eq!(shortcut.take_probe_answered(answered), Some("probe"), "{text}");
        assert_eq!(shortcut.take_probe_answered(answered), None, "{text}");
        let incoming = jsonrpc::decode_slice_as::<Box<RawValue>>(text.as_bytes()).unwrap();
        reference.handle_incoming(incoming, t0);
        let events: Vec<_> = std::iter::from_fn(|| reference.poll_event()).collect();
        assert!(
            matches!(&events[..], [Event::Reply { waiter: "probe", outcome: Ok(_), .. }]),
            "{events:?}"
        );
        assert!(shortcut.poll_event().is_none());
        for core in [&mut shortcut, &mut reference] {
            assert!(!core.is_probe(answered) && !core.is_ready());
            assert_eq!(core.deadline(&RequestId::Number(answered)), None);
            assert_eq!(core.poll_timeout(), None);
        }
        // Either core may probe again or enter the era, as after any answer.
        for core in [&mut shortcut, &mut reference] {
            assert!(core.start_probe(version, timeout, "again", t0).is_ok(), "{text}");
        }
    }
    // An id that is not the probe's is not taken.
    let mut c = core();
    let RequestId::Number(n) = c.start_probe(version, timeout, "probe", t0).unwrap().id else {
        panic!("a numeric id")
    };
    assert!(!c.is_probe(n + 1));
    assert_eq!(c.take_probe_answered(n + 1), None);
    assert!(c.is_probe(n));
}

/// `initialize` answers: the result, and whether the shortcut takes it.
fn initialize_results() -> Vec<(&'static str, bool)> {
    vec![
        (
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"0.1"}}"#,
            true,
        ),
        (
            r#" { "serverInfo" : { "version" : "1" , "name" : "\u0073rv" } , "capabilities" : { } , "protocolVersion" : "2025-06-18" , "instructions" : "\"hi\"\n" } "#,
            true,
        ),
        (
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"a","version":"1"},"_meta":{"k":[1,{"v":null}]},"x-unknown":{"deep":[true]},"\u0070rotocolVersion":"2025-03-26"}"#,
            true,
        ),
        (
            r#"{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"a","version":"1"}}"#,
            true,
        ),
        (
            r#"{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"a","version":"1"}}"#,
            true,
        ),
        (r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#, false),
        (
            r#"{"protocolVersion":2025,"capabilities":{},"serverInfo":{"name":"a","version":"1"}}"#,
            false,
        ),
        ("null", false),
        (
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"a","version":"1"}},"extra":1"#,
            false,
        ),
        (
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"a","version":"1"}} {}"#,
            false,
        ),
    ]
}

#[test]
fn the_usual_initialize_result_finishes_the_handshake_as_its_answer_does() {
    let t0 = Instant::now();
    let mut taken = 0;
    for (result, expected) in initialize_results() {
        let (mut shortcut, mut reference) = (core(), core());
        let id = shortcut.initialize("init", t0).unwrap().id;
        assert_eq!(reference.initialize("init", t0).unwrap().id, id);
        let RequestId::Number(n) = id else { panic!("a numeric id") };
        let text = usual(n, result);
        let (usual, _) = both_paths(&text);
        let (answered, body) = usual.unwrap_or_else(|| panic!("the usual shape: {text}"));
        assert!(shortcut.is_initialize(answered));
        // Another id is never taken.
        assert!(shortcut.take_usual_initialize(answered + 1, body).is_none());
        let took = shortcut.take_usual_initialize(answered, body);
        assert_eq!(took.is_some(), expected, "{text}");
        let incoming = jsonrpc::decode_slice_as::<Box<RawValue>>(text.as_bytes());
        let Some((waiter, outcome)) = took else {
            // Left as it was, for the general path to decide.
            assert!(shortcut.is_initialize(answered) && !shortcut.is_ready(), "{text}");
            assert!(shortcut.deadline(&RequestId::Number(answered)).is_some(), "{text}");
            if let Ok(incoming) = incoming {
                shortcut.handle_incoming(incoming, t0);
            }
            continue;
        };
        taken += 1;
        assert_eq!(waiter, "init");
        reference.handle_incoming(incoming.unwrap(), t0);
        let events: Vec<_> = std::iter::from_fn(|| reference.poll_event()).collect();
        let [Event::Reply { waiter: "init", outcome: general, .. }] = &events[..] else {
            panic!("{events:?}")
        };
        match (&outcome, general) {
            (Ok(kept), Ok(raw)) => {
                assert_eq!(Some(kept), reference.initialize_result(), "{text}");
                assert_eq!(Some(kept), shortcut.initialize_result(), "{text}");
                assert_eq!(**kept, serde_json::from_str(raw.get()).unwrap(), "{text}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
            other => panic!("{text}: {other:?}"),
        }
        assert!(shortcut.poll_event().is_none());
        assert_eq!(shortcut.is_ready(), reference.is_ready(), "{text}");
        assert_eq!(shortcut.protocol_version(), reference.protocol_version(), "{text}");
        assert!(!shortcut.is_initialize(answered) && !reference.is_initialize(answered));
        let sent = |core: &mut Core| {
            std::iter::from_fn(|| core.poll_transmit())
                .map(|m| serde_json::to_string(&m).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(sent(&mut shortcut), sent(&mut reference), "{text}");
    }
    assert_eq!(taken, 5, "the shortcut took fewer answers than the table expects");
}
