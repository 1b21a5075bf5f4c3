//! Deadlines: progress that moves them, and the timer heap's pruning.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_proto::client::{ClientError, Event, RequestOptions};
use mcp_proto::jsonrpc::{Message, RequestId};
use serde_json::{Value, json};

use super::{Core, config, events, msg, ready};

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
        caller_round: None,
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
