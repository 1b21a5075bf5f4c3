//! Input rounds.

use std::time::Duration;

use mcp_proto::Era;
use mcp_proto::client::CallerRound;
use mcp_proto::client::ClientError;
use mcp_proto::client::decide::input::{
    DEFAULT_MAX_INPUT_ANSWER_BYTES, DEFAULT_MAX_INPUT_REQUESTS, DEFAULT_MAX_INPUT_ROUNDS,
    count_input_requests, retry_params, sends_caller_round,
};
use mcp_proto::client::decide::{InputLimits, InputRounds};
use serde_json::{Value, json};

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

#[test]
fn a_callers_round_goes_only_to_a_stateless_server() {
    let answers =
        serde_json::Map::from_iter([("user_name".to_owned(), json!({"action": "accept"}))]);
    let both =
        CallerRound { input_responses: Some(answers.clone()), request_state: Some("s".into()) };
    let only_answers = CallerRound { input_responses: Some(answers), request_state: None };
    let only_state = CallerRound { input_responses: None, request_state: Some("s".into()) };
    // (era, round, whether its members are sent)
    let cases = [
        (Era::Modern, &both, true),
        (Era::Modern, &only_answers, true),
        (Era::Modern, &only_state, true),
        (Era::Modern, &CallerRound::default(), false),
        (Era::Legacy, &both, false),
        (Era::Legacy, &only_answers, false),
    ];
    for (era, round, sent) in cases {
        assert_eq!(sends_caller_round(era, round), sent, "{era:?} {round:?}");
    }
    // What the round holds never shows in its debug form.
    let shown = format!("{both:?}");
    assert!(shown.contains("user_name") && !shown.contains("accept") && !shown.contains("\"s\""));
}
