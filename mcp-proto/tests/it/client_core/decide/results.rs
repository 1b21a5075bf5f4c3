//! Results and caching.

use std::time::Duration;

use mcp_proto::Era;
use mcp_proto::client::decide::result::{
    DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, ResultContext, cache_hint,
    is_cacheable, may_cache, poll_interval, ttl,
};
use mcp_proto::client::decide::{ResultStep, rules};
use mcp_proto::client::{ClientError, RequestOptions};
use mcp_proto::types::CacheHint;

#[test]
fn what_a_stateless_result_asks_for() {
    let era = rules(Era::Modern);
    let tasks = ResultContext { tasks_declared: true, ..ResultContext::default() };
    let cacheable = ResultContext { cacheable: true, ..ResultContext::default() };
    let plain = ResultContext::default();
    let rounds = ResultContext { rounds_to_caller: true, ..ResultContext::default() };
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
        // The caller takes the rounds: delivered as it came, never cached.
        (
            "tools/call",
            r#"{"resultType":"input_required","requestState":"s"}"#,
            rounds,
            ResultStep::Deliver { cache: None },
        ),
        (
            "resources/read",
            r#"{"resultType":"input_required","ttlMs":500}"#,
            ResultContext { rounds_to_caller: true, cacheable: true, tasks_declared: false },
            ResultStep::Deliver { cache: None },
        ),
        ("tools/call", r#"{"resultType":"task","taskId":"t"}"#, rounds, invalid("tools/call")),
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
    let rounds = RequestOptions {
        caller_round: Some(mcp_proto::client::CallerRound::default()),
        ..Default::default()
    };
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
        ("tools/list", &rounds, false),
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
