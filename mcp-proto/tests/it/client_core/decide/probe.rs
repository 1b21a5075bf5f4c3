//! The era probe.

use mcp_proto::client::ClientError;
use mcp_proto::client::decide::probe::MAX_PROBES;
use mcp_proto::client::decide::{Failure, ProbeState, ProbeStep};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::{ProtocolVersion as V, error_code};
use serde_json::{Value, json};

use super::{
    ALL, LEGACY_ONLY, MODERN_ONLY, NOTHING, REFUSAL, STREAM_LOST, closed, header_mismatch,
    missing_capability, refused, rpc, timeout,
};

/// What a probe is fed.
enum Feed<'a> {
    Answer(Value),
    Fail(Failure<'a>),
}

/// Runs a probe (preferred version, accepted versions, pinned) through
/// `feeds`, checking each step, and the tries counted at the end.
fn probe(
    preferred: V,
    versions: &[V],
    pinned: bool,
    feeds: Vec<(Feed<'_>, ProbeStep)>,
    tries: u32,
) {
    let mut state = ProbeState::new(preferred, versions, pinned);
    for (i, (feed, expected)) in feeds.into_iter().enumerate() {
        let step = match feed {
            Feed::Answer(v) => state.handle_answer(&v.to_string()),
            Feed::Fail(f) => state.handle_failure(f),
        };
        assert_eq!(step, expected, "step {i}");
    }
    assert_eq!(state.tries(), tries);
}

fn discovery(versions: &[&str]) -> Value {
    json!({"supportedVersions": versions, "capabilities": {}, "_meta": {
        "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}})
}

fn entered(answer: &Value, version: V) -> ProbeStep {
    let discovered = serde_json::from_value(answer.clone()).unwrap();
    ProbeStep::Enter { version, discovered: Some(Box::new(discovered)) }
}

fn no_common(listed: &[&str], ours: &[V]) -> ProbeStep {
    ProbeStep::Fail(ClientError::UnsupportedProtocolVersion {
        method: "server/discover".into(),
        supported: listed.iter().map(|s| s.to_string()).collect(),
        requested: "2026-07-28".into(),
        client_versions: ours.into(),
        error: Box::new(ErrorObject::new(
            error_code::UNSUPPORTED_PROTOCOL_VERSION,
            "no protocol version in common",
        )),
    })
}

#[test]
fn the_probe_asks_first_for_the_preferred_stateless_version() {
    // (preferred, accepted, asked)
    let cases: &[(V, &[V], V)] = &[
        (V::V2026_07_28, ALL, V::V2026_07_28),
        (V::V2025_11_25, ALL, V::V2026_07_28),
        (V::V2025_11_25, LEGACY_ONLY, V::LATEST),
    ];
    for (preferred, versions, asked) in cases {
        let state = ProbeState::new(*preferred, versions, false);
        assert_eq!((state.version(), state.tries()), (*asked, 1), "{preferred:?} {versions:?}");
    }
    assert_eq!(ProbeState::new(V::LATEST, ALL, false).client_versions(), ALL);
    assert_eq!(ProbeState::new(V::LATEST, ALL, true).client_versions(), MODERN_ONLY);
}

#[test]
fn a_discovery_settles_the_era() {
    let both = discovery(&["2025-11-25", "2026-07-28"]);
    let modern = discovery(&["2026-07-28"]);
    let legacy = discovery(&["2025-11-25"]);
    let future = discovery(&["2099-01-01"]);
    let not_one = json!({});
    let l = V::LATEST;
    // The newest in common, of the stateless era.
    probe(l, ALL, false, vec![(Feed::Answer(both.clone()), entered(&both, V::V2026_07_28))], 1);
    probe(l, ALL, true, vec![(Feed::Answer(modern.clone()), entered(&modern, V::V2026_07_28))], 1);
    // Only handshake-era versions in common: initialize, unless pinned.
    probe(l, ALL, false, vec![(Feed::Answer(legacy.clone()), ProbeStep::Legacy)], 1);
    probe(l, ALL, true, vec![(Feed::Answer(legacy), no_common(&["2025-11-25"], MODERN_ONLY))], 1);
    // Nothing in common.
    probe(l, ALL, false, vec![(Feed::Answer(future.clone()), no_common(&["2099-01-01"], ALL))], 1);
    probe(l, MODERN_ONLY, false, vec![(Feed::Answer(both), entered_both())], 1);
    // No discovery: a handshake-era server, unless pinned.
    probe(l, ALL, false, vec![(Feed::Answer(not_one.clone()), ProbeStep::Legacy)], 1);
    let ProbeStep::Fail(ClientError::InvalidResult { method, .. }) =
        ProbeState::new(l, ALL, true).handle_answer(&not_one.to_string())
    else {
        panic!("a pinned probe refuses an answer that is no discovery")
    };
    assert_eq!(method, "server/discover");
}

fn entered_both() -> ProbeStep {
    entered(&discovery(&["2025-11-25", "2026-07-28"]), V::V2026_07_28)
}

#[test]
fn a_refused_version_is_asked_again_while_it_helps() {
    let l = V::LATEST;
    let lists_ours = refused(&["2026-07-28"]);
    let lists_legacy = refused(&["2025-11-25"]);
    let lists_none = refused(&["2099-01-01"]);
    let ours_from_core = Failure::core(&lists_ours);
    let ours_over_http = Failure::transport(Some(&lists_ours), REFUSAL);
    let enriched = |e: &ClientError, ours: &[V]| {
        ProbeStep::Fail(e.clone().with_client_versions(ours, Some(V::V2026_07_28)))
    };
    // Once more with the version it lists (even the same one), then given
    // up: two probes, not MAX_PROBES.
    probe(
        l,
        ALL,
        false,
        vec![
            (Feed::Fail(ours_from_core), ProbeStep::Retry(V::V2026_07_28)),
            (Feed::Fail(ours_from_core), enriched(&lists_ours, ALL)),
        ],
        2,
    );
    const { assert!(MAX_PROBES > 2) };
    // The same over HTTP (a transport error carrying it): remembered too.
    probe(
        l,
        ALL,
        false,
        vec![
            (Feed::Fail(ours_over_http), ProbeStep::Retry(V::V2026_07_28)),
            (Feed::Fail(ours_over_http), enriched(&lists_ours, ALL)),
        ],
        2,
    );
    // Alternating claims: given up when the list names nothing in common.
    probe(
        l,
        ALL,
        false,
        vec![
            (Feed::Fail(ours_from_core), ProbeStep::Retry(V::V2026_07_28)),
            (Feed::Fail(Failure::core(&lists_none)), enriched(&lists_none, ALL)),
        ],
        2,
    );
    // A dual-era server listing only handshake versions: initialize,
    // unless pinned.
    probe(l, ALL, false, vec![(Feed::Fail(Failure::core(&lists_legacy)), ProbeStep::Legacy)], 1);
    probe(
        l,
        ALL,
        true,
        vec![(Feed::Fail(Failure::core(&lists_legacy)), enriched(&lists_legacy, MODERN_ONLY))],
        1,
    );
}

#[test]
fn other_failures_of_the_probe() {
    let l = V::LATEST;
    let headers = header_mismatch();
    let capability = missing_capability();
    let not_found = rpc(-32601);
    let enter_pinned = ProbeStep::Enter { version: V::V2026_07_28, discovered: None };
    let cancelled = ClientError::Cancelled { method: "m".into() };
    let invalid = ClientError::InvalidResult { method: "m".into(), reason: "x".into() };
    let unreadable = ClientError::AnswerUnreadable { method: "m".into(), reason: "x".into() };
    let (timeout, closed) = (timeout(), closed());
    // (failure, expected when not pinned, expected when pinned)
    let cases: Vec<(Failure<'_>, ProbeStep, ProbeStep)> = vec![
        // A stateless-era server that will not serve this client: from the
        // core it is the connection's error; over HTTP it keeps its context.
        (
            Failure::core(&headers),
            ProbeStep::Fail(headers.clone()),
            ProbeStep::Fail(headers.clone()),
        ),
        (
            Failure::core(&capability),
            ProbeStep::Fail(capability.clone()),
            ProbeStep::Fail(capability.clone()),
        ),
        (
            Failure::transport(Some(&headers), REFUSAL),
            ProbeStep::FailAsItCame,
            ProbeStep::FailAsItCame,
        ),
        // Signs of a handshake-era server.
        (Failure::core(&not_found), ProbeStep::Legacy, enter_pinned.clone()),
        (Failure::core(&timeout), ProbeStep::Legacy, enter_pinned.clone()),
        (Failure::core(&invalid), ProbeStep::Legacy, enter_pinned.clone()),
        (Failure::transport(None, REFUSAL), ProbeStep::Legacy, enter_pinned.clone()),
        (Failure::transport(Some(&not_found), NOTHING), ProbeStep::Legacy, enter_pinned.clone()),
        // Anything else is the connection's failure.
        (Failure::core(&closed), ProbeStep::FailAsItCame, ProbeStep::FailAsItCame),
        (Failure::core(&cancelled), ProbeStep::FailAsItCame, ProbeStep::FailAsItCame),
        (Failure::core(&unreadable), ProbeStep::FailAsItCame, ProbeStep::FailAsItCame),
        (Failure::transport(None, NOTHING), ProbeStep::FailAsItCame, ProbeStep::FailAsItCame),
        (Failure::transport(None, STREAM_LOST), ProbeStep::FailAsItCame, ProbeStep::FailAsItCame),
        (
            Failure::transport(Some(&timeout), NOTHING),
            ProbeStep::FailAsItCame,
            ProbeStep::FailAsItCame,
        ),
    ];
    for (failure, auto, pinned) in cases {
        assert_eq!(ProbeState::new(l, ALL, false).handle_failure(failure), auto, "{failure:?}");
        assert_eq!(ProbeState::new(l, ALL, true).handle_failure(failure), pinned, "{failure:?}");
    }
}
