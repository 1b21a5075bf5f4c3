//! `Registry::reload`: servers added, removed and changed while calls are
//! in flight; unchanged connections survive.

use std::time::{Duration, Instant};

use mcp_host_registry::{
    ClientIdentity, Config, Error, Health, Registry, RegistryOptions, ReloadReport, ServerConfig,
    Supervision, ToolPolicy, TransportError,
};
use serde_json::json;

use crate::common::{self, args, stdio_connector, testkit};

fn options() -> RegistryOptions {
    RegistryOptions::with_connector(stdio_connector())
}

fn config(servers: Vec<ServerConfig>) -> Config {
    Config { servers, ..Default::default() }
}

async fn pid(registry: &Registry, server: &str) -> u32 {
    common::pid(registry, server).await.unwrap()
}

async fn connection(registry: &Registry, server: &str) -> Option<u64> {
    registry.status(server).await.unwrap().connection
}

fn report(added: &[&str], removed: &[&str], changed: &[&str]) -> ReloadReport {
    let mut r = ReloadReport::default();
    r.added = added.iter().map(|s| s.to_string()).collect();
    r.removed = removed.iter().map(|s| s.to_string()).collect();
    r.changed = changed.iter().map(|s| s.to_string()).collect();
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_removed_and_changed_servers_while_calls_are_in_flight() {
    let before = vec![
        ServerConfig::stdio("keep", testkit(&[])),
        ServerConfig::stdio("gone", testkit(&[])),
        ServerConfig::stdio("changed", testkit(&[])),
        ServerConfig::stdio("policy", testkit(&[])),
    ];
    let registry = Registry::new(config(before.clone()), options());
    for r in registry.initialize_all().await {
        r.result.unwrap_or_else(|e| panic!("{}: {e}", r.server));
    }
    let keep = (connection(&registry, "keep").await, pid(&registry, "keep").await);
    let policy = (connection(&registry, "policy").await, pid(&registry, "policy").await);
    let changed_pid = pid(&registry, "changed").await;
    let mut gone_health = registry.watch_health("gone").unwrap();
    let mut events = registry.health_events();

    let after = vec![
        ServerConfig::stdio("added", testkit(&[])),
        before[0].clone(),
        ServerConfig::stdio("changed", testkit(&["--stderr-banner", "v2"])),
        before[3].clone().with_policy(ToolPolicy::new(Vec::<String>::new(), ["echo"])),
    ];
    let slow = |server: &'static str| {
        let registry = &registry;
        async move {
            let r = registry.call_tool(server, "slow", args(json!({"ms": 700, "steps": 1}))).await;
            mcp_proto::render_tool_result(&r.unwrap_or_else(|e| panic!("{server}: {e}"))).text
        }
    };
    let reload = async {
        // The calls are out before the reload starts.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let start = Instant::now();
        let report = registry.reload(config(after.clone())).await;
        (report, start.elapsed())
    };
    let (a, b, c, d, (report, took)) =
        tokio::join!(slow("keep"), slow("gone"), slow("changed"), slow("policy"), reload);
    // Every call in flight finished, on the removed and replaced servers
    // too: the reload let them drain before it closed those connections.
    assert_eq!([a, b, c, d], ["done", "done", "done", "done"]);
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(5), "{took:?}");
    assert_eq!(report, self::report(&["added"], &["gone"], &["changed", "policy"]));

    // The new set, in the new order.
    let names: Vec<&str> = registry.list().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["added", "keep", "changed", "policy"]);
    assert!(registry.get("gone").is_none());
    assert_eq!(registry.get("policy").unwrap(), &after[3]);

    // Unchanged, and changed only in policy: the same connection and
    // process.
    assert_eq!((connection(&registry, "keep").await, pid(&registry, "keep").await), keep);
    assert_eq!((connection(&registry, "policy").await, pid(&registry, "policy").await), policy);
    let err = registry.call_tool("policy", "echo", None).await.unwrap_err();
    assert!(matches!(err, Error::ToolNotAllowed { .. }), "{err:?}");
    // Replaced: connected anew on next use, a new process.
    assert_eq!(connection(&registry, "changed").await, None);
    let r = registry.call_tool("changed", "echo", args(json!({"message": "v2"}))).await.unwrap();
    assert_eq!(mcp_proto::render_tool_result(&r).text, "v2");
    assert_ne!(pid(&registry, "changed").await, changed_pid);
    // Removed: unknown, its health ended as removed.
    let err = registry.call_tool("gone", "echo", None).await.unwrap_err();
    assert!(matches!(err, Error::UnknownServer { .. }), "{err:?}");
    assert_eq!(*gone_health.borrow_and_update(), Health::Removed);
    let mut removed = false;
    while let Ok(e) = events.try_recv() {
        removed |= e.server == "gone" && e.health == Health::Removed;
    }
    assert!(removed);
    // Added: works.
    registry.ping("added").await.unwrap();
    registry.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_outlives_the_drain_fails_cleanly() {
    let mut options = options();
    options.drain_timeout = Duration::from_millis(200);
    let registry = Registry::new(config(vec![ServerConfig::stdio("x", testkit(&[]))]), options);
    registry.ping("x").await.unwrap();
    let hang = async {
        let start = Instant::now();
        let result = registry.call_tool("x", "hang", None).await;
        (result, start.elapsed())
    };
    let reload = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        registry.reload(config(Vec::new())).await
    };
    let ((result, took), reloaded) = tokio::join!(hang, reload);
    assert_eq!(reloaded, report(&[], &["x"], &[]));
    let err = result.unwrap_err();
    let Some(TransportError::Stdio(inner)) = err.transport_error() else { panic!("{err:?}") };
    assert!(matches!(**inner, mcp_client_stdio::Error::Closed { .. }), "{err}");
    // Ended by the close after the drain, not by the 30 s timeout.
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(registry.list().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_without_changes_keeps_everything_and_a_new_identity_replaces_all() {
    let servers =
        vec![ServerConfig::stdio("a", testkit(&[])), ServerConfig::stdio("b", testkit(&[]))];
    let registry = Registry::new(config(servers.clone()), options());
    registry.initialize_all().await;
    let a = connection(&registry, "a").await;
    let report = registry.reload(config(servers.clone())).await;
    assert!(report.is_empty(), "{report:?}");
    assert_eq!(connection(&registry, "a").await, a);

    let mut renamed = config(servers);
    renamed.client_identity = ClientIdentity::new("another-host", "2.0");
    let report = registry.reload(renamed).await;
    assert!(report.identity_changed);
    assert_eq!(report.changed, ["a", "b"]);
    assert_eq!(registry.client_identity().name, "another-host");
    assert_eq!(connection(&registry, "a").await, None);
    registry.ping("a").await.unwrap();
    assert_ne!(connection(&registry, "a").await, a);

    // Disabling the configuration removes every server.
    let report = registry.reload(Config { enabled: false, ..Default::default() }).await;
    assert_eq!(report.removed, ["a", "b"]);
    assert_eq!(registry.list().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_supervised_server_is_connected_again_at_once() {
    let mut sup = Supervision::default();
    sup.keepalive = None;
    let registry = Registry::new(
        config(vec![ServerConfig::stdio("s", testkit(&[]))]),
        options().with_supervision(sup),
    );
    registry.ping("s").await.unwrap();
    let first = connection(&registry, "s").await;
    let report =
        registry.reload(config(vec![ServerConfig::stdio("s", testkit(&["--ttl-ms", "5"]))])).await;
    assert_eq!(report.changed, ["s"]);
    let mut health = registry.watch_health("s").unwrap();
    let ready =
        tokio::time::timeout(Duration::from_secs(10), health.wait_for(|h| *h == Health::Ready));
    assert!(ready.await.is_ok(), "{:?}", registry.health("s"));
    let now = connection(&registry, "s").await;
    assert!(now.is_some() && now != first);
    registry.close_all().await;
}
