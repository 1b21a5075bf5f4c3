//! Deadlines on tokio's paused clock: timeouts and their cancellation,
//! one timer for every request, progress that restarts a deadline, a
//! cancelled call, the handshake's own timer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_peer::memory::MemoryError;
use mcp_peer::{CallError, RequestOptions, ServerNotification};
use mcp_proto::client::ClientError;
use mcp_testkit::Config;
use serde_json::{Value, json};

use crate::common::{Pair, options, pair, pair_filtered, text};

#[tokio::test(start_paused = true)]
async fn a_timeout_cancels_on_the_paused_clock() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let started = tokio::time::Instant::now();
    let quick = RequestOptions::with_timeout(Duration::from_secs(30));
    let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { ref method, after })
            if method == "tools/call" && after >= Duration::from_secs(30)
                && after < Duration::from_secs(31)),
        "{err:?}"
    );
    // Thirty seconds of virtual time, none of real time to speak of.
    assert!(started.elapsed() >= Duration::from_secs(30));
    // The server heard the cancellation of that request (id 2: after
    // initialize's 1).
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[2]");
}

/// One timer keeps every request's deadline: a request started after a
/// longer one, with an earlier deadline, still times out on time (it wakes
/// the timer that slept until the longer one's), and the longer one then
/// times out on its own.
#[tokio::test(start_paused = true)]
async fn an_earlier_deadline_started_later_is_kept() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let started = tokio::time::Instant::now();
    let long = RequestOptions::with_timeout(Duration::from_secs(60));
    let short = RequestOptions::with_timeout(Duration::from_secs(5));
    let slow = client.clone();
    let long_call = tokio::spawn(async move { slow.call_tool_with("hang", (), long).await });
    tokio::task::yield_now().await;
    let err = client.call_tool_with("hang", (), short).await.unwrap_err();
    let short_took = started.elapsed();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { after, .. })
            if after >= Duration::from_secs(5) && after < Duration::from_secs(6)),
        "{err:?}"
    );
    assert!(short_took < Duration::from_secs(6), "{short_took:?}");
    let err = long_call.await.unwrap().unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { after, .. })
            if after >= Duration::from_secs(60) && after < Duration::from_secs(61)),
        "{err:?}"
    );
    // A third request after both: the timer, idle meanwhile, wakes again.
    let quick = RequestOptions::with_timeout(Duration::from_secs(1));
    let before = tokio::time::Instant::now();
    let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Timeout { .. })), "{err:?}");
    assert!(before.elapsed() < Duration::from_secs(2), "{:?}", before.elapsed());
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_deadline_up_to_the_total() {
    let Pair { client, .. } = pair(options());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let options = RequestOptions {
        // Each step takes 50 ms: without the reset, 80 ms would not do.
        timeout: Some(Duration::from_millis(80)),
        reset_timeout_on_progress: true,
        max_total_timeout: Some(Duration::from_secs(5)),
        on_progress: Some(Arc::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })),
        meta: None,
        no_cache: false,
        headers: Vec::new(),
        caller_round: None,
    };
    let mut stream = client.notifications();
    let r = client.call_tool_with("slow", json!({"ms": 50, "steps": 4}), options).await.unwrap();
    assert!(!r.is_error.unwrap_or(false));
    assert_eq!(seen.load(Ordering::SeqCst), 4);
    // Progress is on the notification stream too.
    match stream.recv().await {
        Some(ServerNotification::Progress(p)) => assert!(p.progress > 0.0, "{p:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_handle_tells_the_server() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let handle = client.spawn_call_tool("hang", (), RequestOptions::default());
    // Let the request go out.
    tokio::time::sleep(Duration::from_millis(10)).await;
    handle.cancel();
    assert!(matches!(handle.await, Err(CallError::Cancelled)));
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[2]");
}

#[tokio::test(start_paused = true)]
async fn a_silent_initialize_times_out_under_its_own_timer() {
    let not_initialize = |v: &Value| v["method"] != "initialize";
    let mut o = options();
    o.request_timeout = Duration::from_secs(7);
    let Pair { client, .. } = pair_filtered(o, Config::default(), not_initialize);
    let started = tokio::time::Instant::now();
    let err = client.initialize().await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::Timeout { ref method, .. })
            if method == "initialize"),
        "{err:?}"
    );
    assert!(started.elapsed() >= Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_task_starts_with_the_first_request_after_the_handshake() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    // An idle session holds no deadline task: the handshake kept its
    // deadline with a timer of its own.
    let metrics = tokio::runtime::Handle::current().metrics();
    let idle = metrics.num_alive_tasks();
    client.ping().await.unwrap();
    assert_eq!(metrics.num_alive_tasks(), idle + 1);
    client.ping().await.unwrap();
    assert_eq!(metrics.num_alive_tasks(), idle + 1);
}
