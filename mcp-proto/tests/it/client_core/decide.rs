//! The client's decisions (`mcp_proto::client::decide`), each checked on a
//! table of cases: every condition both ways.

use std::time::Duration;

use mcp_proto::client::decide::input::{
    DEFAULT_MAX_INPUT_ANSWER_BYTES, DEFAULT_MAX_INPUT_REQUESTS, DEFAULT_MAX_INPUT_ROUNDS,
    count_input_requests, retry_params,
};
use mcp_proto::client::decide::open::{first_step, probe_after_failed_handshake};
use mcp_proto::client::decide::probe::MAX_PROBES;
use mcp_proto::client::decide::recovery::{changed_tool, decide};
use mcp_proto::client::decide::result::{
    DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, ResultContext, cache_hint,
    is_cacheable, may_cache, poll_interval, ttl,
};
use mcp_proto::client::decide::{
    Action, Attempt, EraChoice, Failure, GiveUp, InputLimits, InputRounds, OpenStep, Origin,
    ProbeState, ProbeStep, ResultStep, TransportFacts, rules,
};
use mcp_proto::client::{ClientError, RequestOptions};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{CacheHint, Tool};
use mcp_proto::{Era, ProtocolVersion as V, error_code};
use serde_json::{Value, json};

const ALL: &[V] = V::SUPPORTED;
const LEGACY_ONLY: &[V] = &[V::V2025_06_18, V::V2025_11_25];
const MODERN_ONLY: &[V] = &[V::V2026_07_28];

fn rpc(code: i64) -> ClientError {
    ClientError::from_rpc("m", ErrorObject::new(code, "no"))
}

fn refused(listed: &[&str]) -> ClientError {
    let mut error = ErrorObject::new(error_code::UNSUPPORTED_PROTOCOL_VERSION, "unsupported");
    error.data = Some(json!({"supported": listed, "requested": "2026-07-28"}));
    ClientError::from_rpc("server/discover", error)
}

fn header_mismatch() -> ClientError {
    rpc(error_code::HEADER_MISMATCH)
}

fn missing_capability() -> ClientError {
    rpc(error_code::MISSING_CLIENT_CAPABILITY)
}

fn closed() -> ClientError {
    ClientError::Closed { method: "m".into() }
}

fn timeout() -> ClientError {
    ClientError::Timeout { method: "m".into(), after: Duration::from_secs(1) }
}

const NOTHING: TransportFacts =
    TransportFacts { refusal: false, stream_lost: false, session_expired: false };
const REFUSAL: TransportFacts = TransportFacts { refusal: true, ..NOTHING };
const STREAM_LOST: TransportFacts = TransportFacts { stream_lost: true, ..NOTHING };
const SESSION_EXPIRED: TransportFacts = TransportFacts { session_expired: true, ..NOTHING };

// Opening.

#[test]
fn the_first_step_of_an_opening() {
    let probe_if_refused = |b| OpenStep::Handshake { probe_if_refused: b };
    // (choice, versions accepted, remembered as handshake-era, expected)
    let cases: &[(EraChoice, &[V], bool, OpenStep)] = &[
        (EraChoice::Legacy, ALL, false, probe_if_refused(false)),
        (EraChoice::Legacy, ALL, true, probe_if_refused(false)),
        (EraChoice::Auto, ALL, false, OpenStep::Probe),
        (EraChoice::Auto, ALL, true, probe_if_refused(true)),
        (EraChoice::Auto, LEGACY_ONLY, false, probe_if_refused(false)),
        (EraChoice::Auto, LEGACY_ONLY, true, probe_if_refused(true)),
        (EraChoice::Modern, ALL, false, OpenStep::Probe),
        (EraChoice::Modern, ALL, true, OpenStep::Probe),
        (EraChoice::Modern, MODERN_ONLY, false, OpenStep::Probe),
    ];
    for (choice, versions, remembered, expected) in cases {
        assert_eq!(
            first_step(*choice, versions, *remembered),
            *expected,
            "{choice:?} {versions:?} {remembered}"
        );
    }
    assert_eq!(EraChoice::default(), EraChoice::Auto);
}

#[test]
fn a_failed_remembered_handshake_is_followed_by_the_probe() {
    let remembered = OpenStep::Handshake { probe_if_refused: true };
    let pinned = OpenStep::Handshake { probe_if_refused: false };
    let modern = header_mismatch();
    let other = rpc(-32601);
    // (step, failure, expected)
    let cases: &[(OpenStep, Failure<'_>, bool)] = &[
        (remembered, Failure::transport(None, REFUSAL), true),
        (remembered, Failure::transport(Some(&modern), NOTHING), true),
        (remembered, Failure::core(&modern), true),
        (remembered, Failure::transport(None, NOTHING), false),
        (remembered, Failure::transport(Some(&other), NOTHING), false),
        (remembered, Failure::core(&other), false),
        (remembered, Failure::transport(None, STREAM_LOST), false),
        (pinned, Failure::transport(None, REFUSAL), false),
        (pinned, Failure::core(&modern), false),
        (OpenStep::Probe, Failure::transport(None, REFUSAL), false),
    ];
    for (step, failure, expected) in cases {
        assert_eq!(
            probe_after_failed_handshake(*step, *failure),
            *expected,
            "{step:?} {failure:?}"
        );
    }
}

// The era probe.

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

// Recovery after a failed attempt.

fn attempt<'a>(method: &'a str, era: Option<Era>, failure: Failure<'a>) -> Attempt<'a> {
    Attempt {
        method,
        era,
        failure,
        already_retried: false,
        has_tool: false,
        lost_connection: false,
        transport_resends_after_loss: false,
    }
}

#[test]
fn what_follows_a_failed_attempt() {
    let modern = Some(Era::Modern);
    let legacy = Some(Era::Legacy);
    let (headers, upv, closed, rpc_error) = (header_mismatch(), refused(&["x"]), closed(), rpc(-1));
    let not_init = ClientError::NotInitialized { method: "m".into() };
    let give_up = Action::GiveUp(GiveUp::AsItCame);
    let lost = Action::GiveUp(GiveUp::ConnectionLost);
    let with = |a: Attempt<'static>, f: fn(&mut Attempt<'static>)| {
        let mut a = a;
        f(&mut a);
        a
    };
    // Leaked so the table's borrows live for 'static.
    let headers: &'static ClientError = Box::leak(Box::new(headers));
    let upv: &'static ClientError = Box::leak(Box::new(upv));
    let closed: &'static ClientError = Box::leak(Box::new(closed));
    let rpc_error: &'static ClientError = Box::leak(Box::new(rpc_error));
    let not_init: &'static ClientError = Box::leak(Box::new(not_init));
    let call = "tools/call";
    let read = "tools/list";
    let mismatch = Failure::transport(Some(headers), REFUSAL);
    let cases: Vec<(Attempt<'static>, Action)> = vec![
        // -32020 on a call with a tool definition: relist, once, stateless only.
        (
            with(attempt(call, modern, mismatch), |a| a.has_tool = true),
            Action::RelistToolsAndResend,
        ),
        (
            with(attempt(call, modern, Failure::core(headers)), |a| a.has_tool = true),
            Action::RelistToolsAndResend,
        ),
        (attempt(call, modern, mismatch), give_up),
        (
            with(attempt(call, modern, mismatch), |a| {
                a.has_tool = true;
                a.already_retried = true
            }),
            give_up,
        ),
        (with(attempt(call, legacy, mismatch), |a| a.has_tool = true), give_up),
        // A broken answer stream: resend reads, give up the others.
        (attempt(read, modern, Failure::transport(None, STREAM_LOST)), Action::ResendNewId),
        (attempt(call, modern, Failure::transport(None, STREAM_LOST)), give_up),
        (
            with(attempt(read, modern, Failure::transport(None, STREAM_LOST)), |a| {
                a.already_retried = true
            }),
            give_up,
        ),
        (attempt(read, legacy, Failure::transport(None, STREAM_LOST)), give_up),
        (attempt(read, None, Failure::transport(None, STREAM_LOST)), give_up),
        // -32022: discover again, once, stateless only, whoever carried it.
        (attempt(call, modern, Failure::core(upv)), Action::Rediscover),
        (attempt(call, modern, Failure::transport(Some(upv), REFUSAL)), Action::Rediscover),
        (with(attempt(call, modern, Failure::core(upv)), |a| a.already_retried = true), give_up),
        (attempt(call, legacy, Failure::core(upv)), give_up),
        // An expired session: a new one, once, handshake era only.
        (attempt(call, legacy, Failure::transport(None, SESSION_EXPIRED)), Action::NewSession),
        (
            with(attempt(call, legacy, Failure::transport(None, SESSION_EXPIRED)), |a| {
                a.already_retried = true
            }),
            give_up,
        ),
        (attempt(call, modern, Failure::transport(None, SESSION_EXPIRED)), give_up),
        (attempt(call, None, Failure::transport(None, SESSION_EXPIRED)), give_up),
        // Any other transport failure.
        (attempt(call, legacy, Failure::transport(None, REFUSAL)), give_up),
        (attempt(call, legacy, Failure::transport(Some(closed), NOTHING)), give_up),
        // The connection lost with the request out.
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            Action::RenewConnection,
        ),
        (
            with(attempt(read, None, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            Action::RenewConnection,
        ),
        (
            with(attempt(call, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            lost,
        ),
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true;
                a.already_retried = true
            }),
            lost,
        ),
        (with(attempt(read, legacy, Failure::core(closed)), |a| a.lost_connection = true), give_up),
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.transport_resends_after_loss = true
            }),
            give_up,
        ),
        // The connection renewed between the check and the send.
        (attempt(call, legacy, Failure::core(not_init)), Action::Reinitialize),
        (attempt(call, None, Failure::core(not_init)), Action::Reinitialize),
        (
            with(attempt(call, legacy, Failure::core(not_init)), |a| a.already_retried = true),
            give_up,
        ),
        (attempt(call, legacy, Failure::transport(Some(not_init), NOTHING)), give_up),
        // The server's answer stands.
        (attempt(call, legacy, Failure::core(rpc_error)), give_up),
        (attempt(call, modern, Failure::core(rpc_error)), give_up),
    ];
    for (a, expected) in cases {
        assert_eq!(decide(&a), expected, "{a:?}");
    }
}

#[test]
fn after_relisting_only_a_changed_tool_is_called_again() {
    let tool = |name: &str, description: &str| {
        let mut t: Tool = serde_json::from_value(json!({"name": name, "inputSchema": {}})).unwrap();
        t.description = Some(description.into());
        t
    };
    let called = tool("a", "old");
    // (fresh list, expected)
    let cases: Vec<(Vec<Tool>, Option<usize>)> = vec![
        (vec![tool("b", "x"), tool("a", "new")], Some(1)),
        (vec![tool("a", "old")], None),
        (vec![tool("b", "old")], None),
        (vec![], None),
    ];
    for (fresh, expected) in cases {
        assert_eq!(changed_tool(&called, &fresh), expected, "{fresh:?}");
    }
}

// Input rounds.

fn input_required(n: usize) -> String {
    let requests: serde_json::Map<String, Value> =
        (0..n).map(|i| (format!("k{i}"), json!({"method": "elicitation/create"}))).collect();
    json!({"resultType": "input_required", "inputRequests": requests}).to_string()
}

#[test]
fn input_rounds_are_bounded_before_anything_is_built() {
    let limits = InputLimits { max_rounds: 2, max_requests: 3, max_answer_bytes: 10 };
    let three = input_required(3);
    let state_only = json!({"resultType": "input_required", "requestState": "s"}).to_string();
    let neither = json!({"resultType": "input_required"}).to_string();
    // More input requests than allowed, in an answer that would not even
    // decode: refused on the count.
    let four_broken = r#"{"inputRequests":{"a":1,"b":2,"c":3,"d":4}}"#;
    // (method, answer, rounds already made, expected: Ok(keys) or the error's variant)
    let cases: Vec<(&str, &str, usize, Result<usize, &str>)> = vec![
        ("tools/call", &three, 0, Ok(3)),
        ("prompts/get", &state_only, 1, Ok(0)),
        ("resources/read", &three, 1, Ok(3)),
        ("tools/list", &three, 0, Err("InvalidResult")),
        ("tools/call", &three, 2, Err("TooManyInputRounds")),
        ("tools/call", four_broken, 0, Err("TooManyInputRequests")),
        ("tools/call", &neither, 0, Err("InvalidResult")),
        ("tools/call", r#"{"inputRequests":{"a":1}}"#, 0, Err("InvalidResult")),
        ("tools/call", r#"{"inputRequests":[]}"#, 0, Err("InvalidResult")),
    ];
    for (method, raw, before, expected) in cases {
        let mut rounds = InputRounds::new(limits);
        for _ in 0..before {
            rounds.task_round(method).unwrap();
        }
        let got = rounds.handle_input_required(method, raw);
        match (&got, expected) {
            (Ok(asked), Ok(keys)) => {
                assert_eq!(asked.input_requests.as_ref().map_or(0, |r| r.len()), keys)
            }
            (Err(e), Err(variant)) => {
                assert!(format!("{e:?}").starts_with(variant), "{method} {raw}: {e:?}")
            }
            _ => panic!("{method} {raw} after {before}: {got:?}"),
        }
        assert_eq!(rounds.rounds(), before + usize::from(methods_may_ask(method)));
    }
    let mut rounds = InputRounds::new(limits);
    let Err(ClientError::TooManyInputRequests { count, max, .. }) =
        rounds.handle_input_required("tools/call", four_broken)
    else {
        panic!()
    };
    assert_eq!((count, max), (4, 3));
}

fn methods_may_ask(method: &str) -> bool {
    mcp_proto::methods::may_require_input(method)
}

#[test]
fn a_flood_of_input_requests_is_counted_not_decoded() {
    // 440,000 input requests (about 16 MB): refused from the count.
    let flood = input_required(440_000);
    assert!(flood.len() > 12_000_000);
    let mut rounds = InputRounds::new(InputLimits::default());
    let started = std::time::Instant::now();
    let err = rounds.handle_input_required("tools/call", &flood).unwrap_err();
    assert_eq!(
        err,
        ClientError::TooManyInputRequests {
            method: "tools/call".into(),
            count: 440_000,
            max: DEFAULT_MAX_INPUT_REQUESTS
        }
    );
    // Linear in the text, whatever the count (a generous bound for a
    // loaded machine and a debug build).
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(err.to_string().contains("440000 inputs in one round, more than the 64 allowed"));
}

#[test]
fn a_task_s_input_counts_as_rounds() {
    let limits = InputLimits { max_rounds: 1, max_requests: 2, max_answer_bytes: 100 };
    let mut rounds = InputRounds::new(limits);
    let two = input_required(2);
    let three = input_required(3);
    assert_eq!(rounds.check_task_status("tools/call", &two), Ok(()));
    assert!(matches!(
        rounds.check_task_status("tools/call", &three),
        Err(ClientError::TooManyInputRequests { count: 3, max: 2, .. })
    ));
    assert!(matches!(
        rounds.check_task_status("tools/call", "1"),
        Err(ClientError::InvalidResult { .. })
    ));
    // Checking makes no round; a status asking for new input does.
    assert_eq!(rounds.rounds(), 0);
    assert_eq!(rounds.task_round("tools/call"), Ok(()));
    assert!(matches!(
        rounds.task_round("tools/call"),
        Err(ClientError::TooManyInputRounds { rounds: 1, .. })
    ));
}

#[test]
fn the_answers_of_a_round_are_bounded_in_size() {
    let limits = InputLimits { max_rounds: 1, max_requests: 1, max_answer_bytes: 20 };
    let rounds = InputRounds::new(limits);
    let mut budget = rounds.answer_budget("tools/call");
    // {"a":"bbbbbbbbbb"} is 18 bytes.
    assert_eq!(budget.add(&json!({"a": "bbbbbbbbbb"})), Ok(()));
    assert_eq!(budget.used(), 18);
    assert_eq!(budget.add(&json!(1)), Ok(()));
    assert_eq!(budget.add(&json!(2)), Ok(()));
    assert_eq!(budget.used(), 20);
    assert_eq!(
        budget.add(&json!(3)),
        Err(ClientError::InputAnswersTooLarge { method: "tools/call".into(), max_bytes: 20 })
    );
    // By default the answers of a round may take 4 MiB, not a byte more.
    let mut budget = InputRounds::new(InputLimits::default()).answer_budget("tools/call");
    let four_mib = Value::String("x".repeat(4 * 1024 * 1024 - 2));
    assert_eq!(budget.add(&four_mib), Ok(()));
    assert_eq!(budget.used(), 4_194_304);
    assert_eq!(
        budget.add(&json!(0)),
        Err(ClientError::InputAnswersTooLarge {
            method: "tools/call".into(),
            max_bytes: 4_194_304
        })
    );
    let defaults = InputLimits::default();
    assert_eq!(
        (defaults.max_rounds, defaults.max_requests, defaults.max_answer_bytes),
        (DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_MAX_INPUT_REQUESTS, DEFAULT_MAX_INPUT_ANSWER_BYTES)
    );
}

#[test]
fn input_requests_are_counted_in_the_text() {
    // (answer, expected count, or an error)
    let cases: &[(&str, Option<usize>)] = &[
        (r#"{"resultType":"input_required"}"#, Some(0)),
        (r#"{"inputRequests":{}}"#, Some(0)),
        (r#"{"inputRequests":null}"#, Some(0)),
        (r#"{"x":[1,{"inputRequests":{"a":1}}],"inputRequests":{"a":{},"b":[],"c":"d"}}"#, Some(3)),
        (r#"{"inputRequests":[1,2]}"#, None),
        (r#"{"inputRequests":{"a":}}"#, None),
        ("1", None),
    ];
    for (raw, expected) in cases {
        assert_eq!(count_input_requests(raw).ok(), *expected, "{raw}");
    }
    // Input requests that are not an object are refused saying so.
    let error = count_input_requests(r#"{"inputRequests":[1,2]}"#).unwrap_err();
    assert!(error.to_string().contains("expected an object of input requests"), "{error}");
}

#[test]
fn the_retry_carries_only_what_the_latest_round_asked_for() {
    let responses = || Some(serde_json::Map::from_iter([("k".to_owned(), json!({"ok": true}))]));
    // (parameters, responses, requestState, expected)
    type Responses = Option<serde_json::Map<String, Value>>;
    let cases: Vec<(Option<Value>, Responses, Option<&str>, Value)> = vec![
        (
            None,
            responses(),
            Some("s"),
            json!({"inputResponses": {"k": {"ok": true}}, "requestState": "s"}),
        ),
        (Some(Value::Null), None, Some("s"), json!({"requestState": "s"})),
        (
            Some(json!({"name": "t", "inputResponses": {"old": 1}, "requestState": "old"})),
            responses(),
            None,
            json!({"name": "t", "inputResponses": {"k": {"ok": true}}}),
        ),
        (Some(json!({"name": "t", "requestState": "old"})), None, None, json!({"name": "t"})),
    ];
    for (params, responses, state, expected) in cases {
        let got = retry_params("tools/call", params.clone(), responses, state.map(String::from));
        assert_eq!(got, Ok(expected), "{params:?}");
    }
    assert!(matches!(
        retry_params("tools/call", Some(json!([1])), None, None),
        Err(ClientError::InvalidParams { .. })
    ));
}

// Results and caching.

#[test]
fn what_a_stateless_result_asks_for() {
    let era = rules(Era::Modern);
    let tasks = ResultContext { tasks_declared: true, cacheable: false };
    let cacheable = ResultContext { tasks_declared: false, cacheable: true };
    let plain = ResultContext::default();
    let public = CacheHint { ttl_ms: Some(500), private: false };
    let private = CacheHint { ttl_ms: Some(500), private: true };
    let invalid = |m: &str| {
        ResultStep::Invalid(ClientError::InvalidResult { method: m.into(), reason: String::new() })
    };
    // (method, result, context, expected)
    let cases: Vec<(&str, &str, ResultContext, ResultStep)> = vec![
        ("tools/list", r#"{"tools":[]}"#, plain, ResultStep::Deliver { cache: None }),
        (
            "tools/list",
            r#"{"tools":[],"ttlMs":500,"cacheScope":"public"}"#,
            cacheable,
            ResultStep::Deliver { cache: Some((public, Duration::from_millis(500))) },
        ),
        (
            "tools/list",
            r#"{"tools":[],"ttlMs":500}"#,
            cacheable,
            ResultStep::Deliver { cache: Some((private, Duration::from_millis(500))) },
        ),
        ("tools/list", r#"{"tools":[],"ttlMs":500}"#, plain, ResultStep::Deliver { cache: None }),
        ("tools/list", r#"{"tools":[],"ttlMs":0}"#, cacheable, ResultStep::Deliver { cache: None }),
        (
            "tools/list",
            r#"{"tools":[],"resultType":"complete"}"#,
            cacheable,
            ResultStep::Deliver { cache: None },
        ),
        (
            "tools/call",
            r#"{"resultType":"input_required","requestState":"s"}"#,
            plain,
            ResultStep::InputRequired,
        ),
        ("tools/call", r#"{"resultType":"task","taskId":"t"}"#, tasks, ResultStep::Task),
        ("tools/call", r#"{"resultType":"task","taskId":"t"}"#, plain, invalid("tools/call")),
        ("prompts/get", r#"{"resultType":"task","taskId":"t"}"#, tasks, invalid("prompts/get")),
        ("tools/call", r#"{"resultType":"later"}"#, plain, invalid("tools/call")),
        ("tools/call", "[]", plain, invalid("tools/call")),
    ];
    for (method, raw, context, expected) in cases {
        let got = era.on_result(method, raw, context);
        match (&got, &expected) {
            // The reasons are for people; the variant and method are checked.
            (
                ResultStep::Invalid(ClientError::InvalidResult { method: a, .. }),
                ResultStep::Invalid(ClientError::InvalidResult { method: b, .. }),
            ) => assert_eq!(a, b),
            _ => assert_eq!(got, expected, "{method} {raw} {context:?}"),
        }
    }
    // The handshake era reads no kind: every result is final.
    let legacy = rules(Era::Legacy);
    let task = r#"{"resultType":"task","taskId":"t"}"#;
    assert_eq!(legacy.on_result("tools/call", task, tasks), ResultStep::Deliver { cache: None });
    assert_eq!(
        legacy.on_result("tools/list", r#"{"ttlMs":9}"#, cacheable),
        ResultStep::Deliver { cache: None }
    );
}

#[test]
fn what_may_be_cached() {
    let progress =
        RequestOptions { on_progress: Some(std::sync::Arc::new(|_| {})), ..Default::default() };
    let reset = RequestOptions { reset_timeout_on_progress: true, ..Default::default() };
    let meta = RequestOptions { meta: Some(serde_json::Map::new()), ..Default::default() };
    let fresh = RequestOptions { no_cache: true, ..Default::default() };
    let plain = RequestOptions::default();
    // (method, options, expected)
    let cases: Vec<(&str, &RequestOptions, bool)> = vec![
        ("tools/list", &plain, true),
        ("prompts/list", &plain, true),
        ("resources/list", &plain, true),
        ("resources/templates/list", &plain, true),
        ("resources/read", &plain, true),
        // Asked again, but its answer still refreshes the cache.
        ("resources/read", &fresh, true),
        ("tools/call", &plain, false),
        ("server/discover", &plain, false),
        ("tools/list", &progress, false),
        ("tools/list", &reset, false),
        ("tools/list", &meta, false),
    ];
    for (method, options, expected) in cases {
        assert_eq!(may_cache(method, options), expected, "{method} {options:?}");
        assert_eq!(is_cacheable(method), expected || method == "tools/list", "{method}");
    }
    // (result, hint, freshness)
    let hints: &[(&str, CacheHint, Option<Duration>)] = &[
        (
            r#"{"ttlMs":500,"cacheScope":"public"}"#,
            CacheHint { ttl_ms: Some(500), private: false },
            Some(Duration::from_millis(500)),
        ),
        (
            r#"{"ttlMs":500,"cacheScope":"private"}"#,
            CacheHint { ttl_ms: Some(500), private: true },
            Some(Duration::from_millis(500)),
        ),
        (r#"{"ttlMs":-3}"#, CacheHint { ttl_ms: None, private: true }, None),
        (r#"{"ttlMs":1.5}"#, CacheHint { ttl_ms: None, private: true }, None),
        (r#"{"ttlMs":0}"#, CacheHint { ttl_ms: Some(0), private: true }, None),
        (
            r#"{"ttlMs":1}"#,
            CacheHint { ttl_ms: Some(1), private: true },
            Some(Duration::from_millis(1)),
        ),
        ("not json", CacheHint::default(), None),
    ];
    for (raw, hint, fresh) in hints {
        assert_eq!(cache_hint(raw), *hint, "{raw}");
        assert_eq!(ttl(hint), *fresh, "{raw}");
    }
}

#[test]
fn when_a_task_is_polled_next() {
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    // (suggested ms, elapsed, limit, expected)
    let cases: &[(Option<u64>, Duration, Duration, Option<Duration>)] = &[
        (None, s(0), s(600), Some(DEFAULT_POLL_INTERVAL)),
        (Some(250), s(0), s(600), Some(ms(250))),
        (Some(1), s(0), s(600), Some(MIN_POLL_INTERVAL)),
        (Some(3_600_000), s(0), s(600), Some(MAX_POLL_INTERVAL)),
        (Some(5_000), s(598), s(600), Some(s(2))),
        (None, s(600), s(600), None),
        (None, s(700), s(600), None),
    ];
    for (suggested, elapsed, limit, expected) in cases {
        assert_eq!(
            poll_interval(*suggested, *elapsed, *limit),
            *expected,
            "{suggested:?} {elapsed:?}"
        );
    }
}

// What differs between the eras.

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
    let contexts =
        [ResultContext::default(), ResultContext { tasks_declared: true, cacheable: false }];
    let cacheable = ResultContext { tasks_declared: false, cacheable: true };
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
                for context in contexts.iter().chain(&[cacheable]) {
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
    let cacheable = ResultContext { tasks_declared: false, cacheable: true };
    let kept = r#"{"tools":[],"ttlMs":500}"#;
    assert!(modern.delivers_as_it_came("tools/list", kept, ResultContext::default()));
    assert!(!modern.delivers_as_it_came("tools/list", kept, cacheable));
    assert!(!modern.delivers_as_it_came(
        "tools/call",
        r#"{"resultType":"task"}"#,
        ResultContext::default()
    ));
}
