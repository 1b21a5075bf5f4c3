//! Supervision: restarts and reconnects with capped backoff, keepalive,
//! health transitions seen through the subscription, calls while a server
//! is down, and supervisors stopped by `close_all`. In-memory servers run
//! on a paused clock; real processes on real time, with short bounded
//! waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client_stdio::ServerCommand;
use mcp_host_registry::NotificationEvent;
use mcp_host_registry::{
    Backoff, ClientIdentity, Config, Connector, Error, Health, HealthEvent, Keepalive, Registry,
    RegistryOptions, ServerClient, ServerConfig, Supervision, TransportError, WhileDown,
};
use mcp_proto::client::{BoxFuture, RequestOptions, ServerNotification};
use serde_json::json;
use tokio::sync::broadcast;

use crate::common::{args, memory_testkit, pid, stdio_connector, testkit};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn supervision(backoff: Backoff, keepalive: Option<Keepalive>) -> Supervision {
    let mut s = Supervision::default();
    s.backoff = backoff;
    s.keepalive = keepalive;
    s.check_interval = ms(20);
    s
}

fn registry(
    servers: Vec<ServerConfig>,
    connector: Arc<dyn Connector>,
    supervision: Supervision,
) -> Registry {
    let mut options = RegistryOptions::default().with_supervision(supervision);
    options.connector = connector;
    Registry::new(Config { servers, ..Default::default() }, options)
}

/// The health events of `server` until one passes `until` (inclusive),
/// within `limit`.
async fn events_until(
    events: &mut broadcast::Receiver<HealthEvent>,
    server: &str,
    limit: Duration,
    until: impl Fn(&Health, &[Health]) -> bool,
) -> Vec<Health> {
    let mut seen = Vec::new();
    let collect = async {
        loop {
            let event = events.recv().await.expect("health events");
            if event.server != server {
                continue;
            }
            let done = until(&event.health, &seen);
            seen.push(event.health);
            if done {
                return;
            }
        }
    };
    if tokio::time::timeout(limit, collect).await.is_err() {
        panic!("no end within {limit:?}; seen {seen:?}");
    }
    seen
}

/// `backoff` with at most a fifth of each wait random (the default is full
/// jitter: anything from nothing to the whole wait), for tests that
/// measure the waits.
fn twenty_percent(mut backoff: Backoff) -> Backoff {
    backoff.jitter = 0.2;
    backoff
}

/// The (attempt, wait) of each `BackingOff` among `seen`.
fn backoffs(seen: &[Health]) -> Vec<(u32, Duration)> {
    let wait = |h: &Health| match h {
        Health::BackingOff { attempt, retry_in } => Some((*attempt, *retry_in)),
        _ => None,
    };
    seen.iter().filter_map(wait).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_stdio_server_is_restarted_and_subscribed_again() {
    let uri = "test://static/text/1";
    let registry = registry(
        vec![ServerConfig::stdio("k", testkit(&[]))],
        Arc::new(stdio_connector()),
        supervision(Backoff::new(ms(20), ms(200)), None),
    );
    let mut events = registry.health_events();
    registry.subscribe_resource("k", uri).await.unwrap();
    assert_eq!(registry.subscriptions("k").unwrap(), [uri]);
    let seen =
        events_until(&mut events, "k", Duration::from_secs(10), |h, _| *h == Health::Ready).await;
    assert_eq!(seen, [Health::Connecting, Health::Ready]);
    let first_pid = pid(&registry, "k").await.unwrap();
    let first = registry.status("k").await.unwrap().connection.unwrap();

    let err =
        registry.call_tool("k", "crash", args(json!({"stderr": "down we go"}))).await.unwrap_err();
    assert!(err.to_string().contains("down we go"), "{err}");
    // Restarted by the supervisor, with no call asking for it.
    let seen = events_until(&mut events, "k", Duration::from_secs(10), |h, seen| {
        *h == Health::Ready && seen.iter().any(|h| matches!(h, Health::BackingOff { .. }))
    })
    .await;
    match seen.as_slice() {
        [.., Health::BackingOff { attempt: 1, retry_in }, Health::Connecting, Health::Ready] => {
            assert!(*retry_in <= ms(20), "{retry_in:?}");
        }
        other => panic!("{other:?}"),
    }
    let status = registry.status("k").await.unwrap();
    assert!(status.connected && status.health == Health::Ready, "{status:?}");
    assert_ne!(status.connection, Some(first));
    assert_ne!(pid(&registry, "k").await.unwrap(), first_pid);
    // The new process was subscribed again before it was used, and its
    // update reaches the registry's one notification stream.
    let mut notices = registry.notifications();
    let r = registry.call_tool("k", "touch", args(json!({"uri": uri}))).await.unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "touched");
    assert_eq!(next_update(&mut notices, "k").await, uri);

    let start = Instant::now();
    registry.close_all().await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(registry.health("k").unwrap(), Health::Idle);
}

/// The URI of the next `notifications/resources/updated` of `server` on
/// the registry's notification stream (other notifications skipped),
/// within 10 s.
async fn next_update(notices: &mut broadcast::Receiver<NotificationEvent>, server: &str) -> String {
    let next = async {
        loop {
            let event = notices.recv().await.expect("notification events");
            if let (true, ServerNotification::ResourceUpdated(params)) =
                (event.server == server, &event.notification)
            {
                return params.uri.clone();
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), next).await.expect("no update within 10 s")
}

/// The stateless era: a resource subscribed through the registry is a
/// `subscriptions/listen` stream, opened again on the restarted process,
/// and reopened without a URI that is unsubscribed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_stateless_server_listens_again_after_its_restart() {
    let (one, two) = ("test://static/text/1", "test://static/text/2");
    let registry = registry(
        vec![ServerConfig::stdio("k", testkit(&["--era", "modern"]))],
        Arc::new(stdio_connector()),
        supervision(Backoff::new(ms(20), ms(200)), None),
    );
    let mut events = registry.health_events();
    let mut notices = registry.notifications();
    let touch = |uri: &'static str| {
        let registry = &registry;
        async move {
            let r = registry.call_tool("k", "touch", args(json!({"uri": uri}))).await.unwrap();
            mcp_proto::render_tool_result(&r).text
        }
    };
    // Nothing listens yet.
    assert_eq!(touch(one).await, "not subscribed");
    let status = registry.status("k").await.unwrap();
    assert!(status.protocol_version.is_some_and(|v| v.is_modern()), "{status:?}");
    registry.subscribe_resource("k", one).await.unwrap();
    registry.subscribe_resource("k", two).await.unwrap();
    assert_eq!(registry.subscriptions("k").unwrap(), [one, two]);
    // One stream carries both (the first one was replaced, not added to).
    assert_eq!(touch(one).await, "touched");
    assert_eq!(next_update(&mut notices, "k").await, one);
    assert_eq!(touch(two).await, "touched");
    assert_eq!(next_update(&mut notices, "k").await, two);
    // A resource the server does not have is refused and not remembered.
    let err = registry.subscribe_resource("k", "test://nope").await.unwrap_err();
    assert!(
        matches!(&err, Error::SubscriptionRefused { uri, .. } if uri == "test://nope"),
        "{err:?}"
    );
    assert!(err.to_string().contains("test://nope"), "{err}");
    assert_eq!(registry.subscriptions("k").unwrap(), [one, two]);
    assert_eq!(touch(one).await, "touched");
    assert_eq!(next_update(&mut notices, "k").await, one);

    let first_pid = pid(&registry, "k").await.unwrap();
    let _ = registry.call_tool("k", "crash", None).await.unwrap_err();
    let _ = events_until(&mut events, "k", Duration::from_secs(10), |h, seen| {
        *h == Health::Ready && seen.iter().any(|h| matches!(h, Health::BackingOff { .. }))
    })
    .await;
    assert_ne!(pid(&registry, "k").await.unwrap(), first_pid);
    // The restarted process was asked for both again.
    assert_eq!(touch(two).await, "touched");
    assert_eq!(next_update(&mut notices, "k").await, two);

    // Unsubscribing reopens the stream without it; the last one closes it.
    registry.unsubscribe_resource("k", two).await.unwrap();
    assert_eq!(touch(two).await, "not subscribed");
    assert_eq!(touch(one).await, "touched");
    assert_eq!(next_update(&mut notices, "k").await, one);
    registry.unsubscribe_resource("k", one).await.unwrap();
    assert_eq!(touch(one).await, "not subscribed");
    assert!(registry.subscriptions("k").unwrap().is_empty());
    registry.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_backs_off_exponentially_up_to_the_cap() {
    // Answers the era probe, `initialize` and one ping, then exits: every
    // connection ends at its first keepalive.
    let registry = registry(
        vec![ServerConfig::stdio("loop", testkit(&["--exit-after", "3"]))],
        Arc::new(stdio_connector()),
        // The cap is well above a connection's life (about 50 ms), so the
        // count never starts again even on a busy machine. A fifth of each
        // wait at most is random, so the growth shows.
        supervision(
            twenty_percent(Backoff::new(ms(10), ms(1000))),
            Some(Keepalive::new(ms(30), ms(500))),
        ),
    );
    let mut events = registry.health_events();
    registry.initialize("loop").await.unwrap();
    let seen = events_until(&mut events, "loop", Duration::from_secs(20), |h, _| {
        matches!(h, Health::BackingOff { attempt: 8, .. })
    })
    .await;
    let waits = backoffs(&seen);
    let attempts: Vec<u32> = waits.iter().map(|(a, _)| *a).collect();
    assert_eq!(attempts, [1, 2, 3, 4, 5, 6, 7, 8], "{seen:?}");
    for (attempt, wait) in waits {
        // 10 ms doubling, at most 1 s (attempt 8), jitter takes up to 20 % off.
        let full = ms(10 * (1 << (attempt - 1))).min(ms(1000));
        assert!(wait <= full && wait >= full * 4 / 5, "attempt {attempt}: {wait:?}");
    }
    // Between the waits the server was restarted and ready each time.
    assert!(seen.iter().filter(|h| **h == Health::Ready).count() >= 7, "{seen:?}");
    registry.close_all().await;
}

/// The testkit server in this process, joined by `mcp-peer`'s in-memory
/// transport; connecting fails while `failures` is above zero, and a muted
/// server reads but never answers.
#[derive(Debug, Default)]
struct MemoryConnector {
    /// Each connect first waits this many milliseconds.
    delay_ms: AtomicUsize,
    failures: AtomicUsize,
    connects: AtomicUsize,
    mute: Arc<AtomicBool>,
}

impl Connector for MemoryConnector {
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        _identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>> {
        Box::pin(async move {
            self.connects.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(ms(self.delay_ms.load(Ordering::SeqCst) as u64)).await;
            let left = self.failures.load(Ordering::SeqCst);
            if left > 0 {
                self.failures.store(left - 1, Ordering::SeqCst);
                return Err(Error::Transport {
                    server: server.name.clone(),
                    source: TransportError::Other("connection refused".into()),
                });
            }
            let transport = memory_testkit(self.mute.clone());
            let mut options = mcp_peer::ClientOptions::new(server.name.clone());
            options.request_timeout = server.timeout;
            Ok(mcp_peer::Client::new(transport, options))
        })
    }
}

fn memory_registry(
    connector: Arc<MemoryConnector>,
    supervision: Supervision,
    timeout: Duration,
) -> Registry {
    let server = ServerConfig::stdio("m", ServerCommand::new("unused")).with_timeout(timeout);
    registry(vec![server], connector, supervision)
}

#[tokio::test(start_paused = true)]
async fn backoff_is_exponential_capped_and_calls_fail_fast_meanwhile() {
    let connector = Arc::new(MemoryConnector::default());
    connector.failures.store(6, Ordering::SeqCst);
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
    backoff.jitter = 0.5;
    let mut sup = supervision(backoff, None);
    sup.while_down = WhileDown::FailFast;
    let registry = memory_registry(connector.clone(), sup, Duration::from_secs(30));
    let mut events = registry.health_events();
    let start = tokio::time::Instant::now();

    let err = registry.ping("m").await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    // Backing off now: a call fails at once, without a connect.
    let err = registry.ping("m").await.unwrap_err();
    let Error::Unavailable { health: Health::BackingOff { attempt: 1, .. }, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(err.server(), Some("m"));
    assert_eq!(connector.connects.load(Ordering::SeqCst), 1);

    let seen =
        events_until(&mut events, "m", Duration::from_secs(120), |h, _| *h == Health::Ready).await;
    // Each failed attempt goes straight to the next wait.
    for pair in seen.windows(2) {
        if let [Health::Connecting, next] = pair {
            assert!(matches!(next, Health::BackingOff { .. } | Health::Ready), "{seen:?}");
        }
    }
    let waits = backoffs(&seen);
    assert_eq!(waits.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6], "{seen:?}");
    let mut total = Duration::ZERO;
    for (attempt, wait) in waits {
        let full = Duration::from_secs(1 << (attempt - 1)).min(Duration::from_secs(8));
        assert!(wait <= full && wait >= full / 2, "attempt {attempt}: {wait:?}");
        total += wait;
    }
    // The clock moved by the waits, not more (connects take no time here).
    let elapsed = start.elapsed();
    assert!(elapsed >= total && elapsed < total + ms(100), "{elapsed:?} vs {total:?}");
    assert_eq!(connector.connects.load(Ordering::SeqCst), 7);
    assert_eq!(seen.last(), Some(&Health::Ready));
    registry.ping("m").await.unwrap();
    registry.close_all().await;
}

#[tokio::test(start_paused = true)]
async fn calls_wait_for_a_reconnect_up_to_the_servers_timeout() {
    let connector = Arc::new(MemoryConnector::default());
    connector.failures.store(2, Ordering::SeqCst);
    let backoff = twenty_percent(Backoff::new(Duration::from_secs(1), Duration::from_secs(4)));
    let registry =
        memory_registry(connector.clone(), supervision(backoff, None), Duration::from_secs(10));
    assert!(registry.ping("m").await.is_err());
    assert!(matches!(registry.health("m").unwrap(), Health::BackingOff { attempt: 1, .. }));
    // Waits through the second failure and the next wait, then succeeds.
    let start = tokio::time::Instant::now();
    registry.ping("m").await.unwrap();
    assert!(start.elapsed() >= ms(800 + 1600), "{:?}", start.elapsed());
    assert_eq!(registry.health("m").unwrap(), Health::Ready);
    registry.close_all().await;

    // A server that stays down: the call gives up at its timeout.
    connector.failures.store(usize::MAX, Ordering::SeqCst);
    assert!(registry.ping("m").await.is_err());
    let start = tokio::time::Instant::now();
    let err = registry.ping("m").await.unwrap_err();
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(10) && waited < Duration::from_secs(11), "{waited:?}");
    // A call with its own timeout gives up at that one.
    let start = tokio::time::Instant::now();
    let options = RequestOptions::with_timeout(Duration::from_secs(2));
    let err = registry.call_tool_with("m", "echo", None, options).await.unwrap_err();
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(3), "{waited:?}");
    registry.close_all().await;
}

/// A call that waited for its server has what is left of its timeout for
/// the server's answer, not the whole of it again.
#[tokio::test(start_paused = true)]
async fn a_call_that_waited_has_the_rest_of_its_timeout() {
    let connector = Arc::new(MemoryConnector::default());
    connector.failures.store(1, Ordering::SeqCst);
    let backoff = twenty_percent(Backoff::new(Duration::from_secs(1), Duration::from_secs(4)));
    let registry =
        memory_registry(connector.clone(), supervision(backoff, None), Duration::from_secs(30));
    assert!(registry.ping("m").await.is_err());
    let start = tokio::time::Instant::now();
    // About 1 s of waiting (less the jitter, at most a fifth), then a 1 s
    // tool: 1.5 s is not enough for both.
    let options = RequestOptions::with_timeout(ms(1500));
    let slow = args(json!({"ms": 1000}));
    let err = registry.call_tool_with("m", "slow", slow.clone(), options).await.unwrap_err();
    assert!(err.to_string().contains("timed out"), "{err}");
    let took = start.elapsed();
    assert!(took >= ms(1500) && took < ms(1600), "{took:?}");
    // Ready now: the same call fits.
    let options = RequestOptions::with_timeout(ms(1500));
    registry.call_tool_with("m", "slow", slow, options).await.unwrap();
    registry.close_all().await;
}

/// A crash (the connection drops under a call), then a restart that fails
/// twice, on a paused clock: the call fails with the loss, the supervisor
/// backs off 1 s, 2 s and 4 s (no jitter) and connects again with no call
/// asking, and the subscription is made again on the new connection.
#[tokio::test(start_paused = true)]
async fn a_crash_then_failed_restarts_back_off_exactly_on_a_paused_clock() {
    let connector = Arc::new(MemoryConnector::default());
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
    backoff.jitter = 0.0;
    let registry = memory_registry(connector.clone(), supervision(backoff, None), ms(5000));
    let mut events = registry.health_events();
    let uri = "test://static/text/1";
    registry.subscribe_resource("m", uri).await.unwrap();
    assert_eq!(connector.connects.load(Ordering::SeqCst), 1);
    connector.failures.store(2, Ordering::SeqCst);
    let crashed = tokio::time::Instant::now();
    let err = registry.call_tool("m", "crash", None).await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport { source, .. } if source.is_connection_lost()),
        "{err:?}"
    );
    let seen = events_until(&mut events, "m", Duration::from_secs(60), |h, seen| {
        *h == Health::Ready && seen.iter().any(|h| matches!(h, Health::BackingOff { .. }))
    })
    .await;
    assert_eq!(
        backoffs(&seen),
        [(1, Duration::from_secs(1)), (2, Duration::from_secs(2)), (3, Duration::from_secs(4))],
        "{seen:?}"
    );
    // The clock moved by the waits and nothing else.
    assert_eq!(crashed.elapsed(), Duration::from_secs(7));
    assert_eq!(connector.connects.load(Ordering::SeqCst), 4);
    let r = registry.call_tool("m", "touch", args(json!({"uri": uri}))).await.unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "touched");
    registry.close_all().await;
}

#[tokio::test(start_paused = true)]
async fn the_supervisor_gives_up_after_the_configured_attempts() {
    let connector = Arc::new(MemoryConnector::default());
    connector.failures.store(usize::MAX, Ordering::SeqCst);
    let mut sup = supervision(Backoff::new(ms(100), ms(400)), None);
    sup.give_up_after = Some(3);
    let registry = memory_registry(connector.clone(), sup, Duration::from_secs(5));
    let mut health = registry.watch_health("m").unwrap();
    assert!(registry.ping("m").await.is_err());
    let failed = tokio::time::timeout(
        Duration::from_secs(10),
        health.wait_for(|h| matches!(h, Health::Failed { reason } if reason.contains("gave up"))),
    )
    .await
    .is_ok_and(|r| r.is_ok());
    assert!(failed, "{:?}", registry.health("m"));
    // The first connect and three attempts; nothing after.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(connector.connects.load(Ordering::SeqCst), 4);
    // The next use tries again.
    connector.failures.store(0, Ordering::SeqCst);
    registry.ping("m").await.unwrap();
    registry.close_all().await;
}

#[tokio::test(start_paused = true)]
async fn keepalive_marks_a_silent_server_degraded_then_ready() {
    let connector = Arc::new(MemoryConnector::default());
    let mut keepalive = Keepalive::new(Duration::from_secs(1), ms(500));
    keepalive.failures = 2;
    let registry = memory_registry(
        connector.clone(),
        supervision(Backoff::default(), Some(keepalive)),
        Duration::from_secs(5),
    );
    let mut events = registry.health_events();
    registry.ping("m").await.unwrap();
    assert_eq!(registry.health("m").unwrap(), Health::Ready);

    connector.mute.store(true, Ordering::SeqCst);
    let start = tokio::time::Instant::now();
    let seen = events_until(&mut events, "m", Duration::from_secs(30), |h, _| {
        matches!(h, Health::Degraded { .. })
    })
    .await;
    assert_eq!(seen.last(), Some(&Health::Degraded { failures: 2 }), "{seen:?}");
    // Two pings, one interval apart, each given its timeout.
    let elapsed = start.elapsed();
    assert!(elapsed >= ms(1500) && elapsed <= ms(2600), "{elapsed:?}");
    let status = registry.status("m").await.unwrap();
    assert!(status.connected && status.health.is_connected(), "{status:?}");

    connector.mute.store(false, Ordering::SeqCst);
    let seen =
        events_until(&mut events, "m", Duration::from_secs(30), |h, _| *h == Health::Ready).await;
    assert!(seen.iter().all(|h| matches!(h, Health::Degraded { .. } | Health::Ready)), "{seen:?}");
    // Never reconnected: a silent server is degraded, not lost.
    assert_eq!(connector.connects.load(Ordering::SeqCst), 1);
    registry.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_does_not_make_a_server_unhealthy() {
    let registry = registry(
        vec![ServerConfig::stdio("h", testkit(&[])).with_timeout(ms(600))],
        Arc::new(stdio_connector()),
        supervision(Backoff::default(), Some(Keepalive::new(ms(100), ms(300)))),
    );
    let mut events = registry.health_events();
    // The server answers the keepalive pings while one tool hangs.
    let err = registry.call_tool("h", "hang", None).await.unwrap_err();
    let Some(TransportError::Stdio(inner)) = err.transport_error() else { panic!("{err:?}") };
    assert!(matches!(**inner, mcp_client_stdio::Error::Timeout { .. }), "{err}");
    tokio::time::sleep(ms(300)).await;
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(e.health);
    }
    assert_eq!(seen, [Health::Connecting, Health::Ready]);
    registry.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_goes_away_is_reconnected_when_back() {
    use mcp_testkit::{HttpConfig, serve_http};
    let http = serve_http(HttpConfig::default()).await.unwrap();
    let port = http.local_addr().port();
    let registry = registry(
        vec![ServerConfig::http("web", http.url()).with_timeout(Duration::from_secs(2))],
        Arc::new(stdio_connector()),
        supervision(Backoff::new(ms(50), ms(200)), Some(Keepalive::new(ms(100), ms(500)))),
    );
    let mut events = registry.health_events();
    registry.list_tools("web").await.unwrap();
    http.shutdown().await;
    // The keepalive finds it gone (connection refused): reconnecting, with
    // backoff, while nothing listens.
    let seen = events_until(&mut events, "web", Duration::from_secs(10), |h, _| {
        matches!(h, Health::BackingOff { attempt: 2, .. })
    })
    .await;
    assert_eq!(seen[..2], [Health::Connecting, Health::Ready], "{seen:?}");
    assert!(matches!(seen[2], Health::BackingOff { attempt: 1, .. }), "{seen:?}");

    let config = HttpConfig { port, ..HttpConfig::default() };
    let http = serve_http(config).await.unwrap();
    events_until(&mut events, "web", Duration::from_secs(10), |h, _| *h == Health::Ready).await;
    let r = registry.call_tool("web", "echo", args(json!({"message": "back"}))).await.unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "back");
    registry.close_all().await;
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_all_stops_supervisors_promptly() {
    let connector = Arc::new(MemoryConnector::default());
    connector.failures.store(usize::MAX, Ordering::SeqCst);
    let mut servers = vec![ServerConfig::stdio("down", ServerCommand::new("unused"))];
    servers.push(ServerConfig::stdio("up", ServerCommand::new("unused")));
    let sup = supervision(Backoff::new(ms(20), ms(40)), Some(Keepalive::new(ms(20), ms(100))));
    let registry = registry(servers, connector.clone(), sup);
    assert!(registry.ping("down").await.is_err());
    tokio::time::sleep(ms(150)).await;
    assert!(connector.connects.load(Ordering::SeqCst) >= 3, "the supervisor retries");

    let start = Instant::now();
    registry.close_all().await;
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
    let after = connector.connects.load(Ordering::SeqCst);
    tokio::time::sleep(ms(200)).await;
    assert_eq!(connector.connects.load(Ordering::SeqCst), after, "no attempt after close_all");
    assert_eq!(registry.health("down").unwrap(), Health::Idle);

    // Without supervision nothing runs in the background at all.
    let plain = Registry::new(
        Config { servers: vec![ServerConfig::stdio("k", testkit(&[]))], ..Default::default() },
        RegistryOptions::with_connector(stdio_connector()),
    );
    plain.ping("k").await.unwrap();
    assert_eq!(plain.health("k").unwrap(), Health::Ready);
    let _ = plain.call_tool("k", "crash", None).await;
    tokio::time::sleep(ms(200)).await;
    assert_eq!(plain.health("k").unwrap(), Health::Idle, "not restarted in the background");
    plain.close_all().await;
}

/// A host runs calls in tasks of its own: every registry future is `Send`
/// and `'static` given an `Arc<Registry>`.
#[tokio::test]
async fn registry_calls_can_be_spawned() {
    let registry = Arc::new(Registry::new(Config::default(), RegistryOptions::default()));
    let r = registry.clone();
    let task = tokio::spawn(async move {
        let mut unknown = 0;
        unknown += usize::from(r.call_tool("x", "y", None).await.is_err());
        unknown += usize::from(r.list_tools("x").await.is_err());
        unknown += usize::from(r.initialize("x").await.is_err());
        unknown += usize::from(r.ping("x").await.is_err());
        unknown += usize::from(r.subscribe_resource("x", "u").await.is_err());
        unknown += usize::from(r.unsubscribe_resource("x", "u").await.is_err());
        unknown += usize::from(r.discover_authorization("x").await.is_err());
        r.list_all_tools().await;
        r.initialize_all().await;
        r.reload(Config::default()).await;
        r.close_all().await;
        unknown
    });
    assert_eq!(task.await.unwrap(), 7);
}

#[tokio::test(start_paused = true)]
async fn an_abandoned_connect_leaves_no_stale_health() {
    let connector = Arc::new(MemoryConnector::default());
    connector.delay_ms.store(5_000, Ordering::SeqCst);
    let server = ServerConfig::stdio("m", ServerCommand::new("unused"));
    let mut options = RegistryOptions::default();
    options.connector = connector.clone();
    let registry = Registry::new(Config { servers: vec![server], ..Default::default() }, options);
    let mut events = registry.health_events();
    assert!(tokio::time::timeout(ms(100), registry.ping("m")).await.is_err());
    assert_eq!(registry.health("m").unwrap(), Health::Idle);
    let seen: Vec<Health> =
        std::iter::from_fn(|| events.try_recv().ok().map(|e| e.health)).collect();
    assert_eq!(seen, [Health::Connecting, Health::Idle]);
    // The next use connects.
    connector.delay_ms.store(0, Ordering::SeqCst);
    registry.ping("m").await.unwrap();
    assert_eq!(registry.health("m").unwrap(), Health::Ready);
    registry.close_all().await;
}

/// The next list change announced, within 10 s (`None` when none came).
async fn next_change(notices: &mut broadcast::Receiver<NotificationEvent>) -> Option<&'static str> {
    let next = async {
        loop {
            let event = notices.recv().await.expect("notification events");
            match event.notification {
                ServerNotification::ToolListChanged => return "tools",
                ServerNotification::PromptListChanged => return "prompts",
                ServerNotification::ResourceListChanged => return "resources",
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), next).await.ok()
}

/// The stateless era with `listen_list_changes`: every connection keeps a
/// `subscriptions/listen` stream for the list changes, with no resource
/// subscribed, opened again after a restart and kept when the last
/// resource is unsubscribed; without the option a change is never heard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_is_asked_for_its_list_changes_when_the_host_wants_them() {
    let servers = || vec![ServerConfig::stdio("k", testkit(&["--era", "modern"]))];
    let supervised = || supervision(Backoff::new(ms(20), ms(200)), None);

    // Without the option: the server has nobody to tell.
    let plain = registry(servers(), Arc::new(stdio_connector()), supervised());
    let mut notices = plain.notifications();
    plain.call_tool("k", "change", None).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_millis(500), next_change(&mut notices)).await;
    assert!(!matches!(heard, Ok(Some(_))), "{heard:?}");
    plain.close_all().await;

    let mut options = RegistryOptions::default().with_supervision(supervised());
    options.connector = Arc::new(stdio_connector());
    options.listen_list_changes = true;
    let registry = Registry::new(Config { servers: servers(), ..Default::default() }, options);
    let mut events = registry.health_events();
    let mut notices = registry.notifications();
    for list in ["tools", "prompts", "resources"] {
        registry.call_tool("k", "change", args(json!({"list": list}))).await.unwrap();
        assert_eq!(next_change(&mut notices).await, Some(list));
    }
    // A resource subscribed and unsubscribed: the stream stays for the lists.
    let uri = "test://static/text/1";
    registry.subscribe_resource("k", uri).await.unwrap();
    registry.unsubscribe_resource("k", uri).await.unwrap();
    registry.call_tool("k", "change", None).await.unwrap();
    assert_eq!(next_change(&mut notices).await, Some("tools"));
    // After a restart, the new process is asked again.
    let _ = registry.call_tool("k", "crash", None).await.unwrap_err();
    let _ = events_until(&mut events, "k", Duration::from_secs(10), |h, seen| {
        *h == Health::Ready && seen.iter().any(|h| matches!(h, Health::BackingOff { .. }))
    })
    .await;
    registry.call_tool("k", "change", args(json!({"list": "prompts"}))).await.unwrap();
    assert_eq!(next_change(&mut notices).await, Some("prompts"));
    registry.close_all().await;
}

/// A plain route kept holds only while the server is served as it was
/// found. Closed (the connection dropped, the supervisor stopped, the
/// health set to idle), the route no longer holds; once the server is
/// connected again, a new one is found. (The slot's counts of changes
/// each route compares are tested in `slot.rs`.)
#[tokio::test]
async fn a_plain_route_holds_only_while_the_server_is_served_as_found() {
    let connector = Arc::new(MemoryConnector::default());
    let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
    let registry =
        memory_registry(connector.clone(), supervision(backoff, None), Duration::from_secs(10));
    assert!(registry.plain_route("m", "echo").is_none(), "not connected yet");
    registry.list_tools("m").await.unwrap();
    let route = registry.plain_route("m", "echo").expect("connected, listed, supervised");
    assert!(route.call().is_some());
    assert!(route.call().is_some(), "again");
    registry.close("m").await.unwrap();
    assert_eq!(registry.health("m").unwrap(), Health::Idle);
    assert!(route.call().is_none(), "closed");
    assert!(registry.plain_route("m", "echo").is_none());
    registry.list_tools("m").await.unwrap();
    assert!(route.call().is_none(), "another connection");
    let again = registry.plain_route("m", "echo").expect("connected again");
    assert!(again.call().is_some());
    registry.close_all().await;
    assert!(again.call().is_none());
}
