//! The registry against several testkit servers at once: stdio ones (one
//! crashing, one slow to start), an in-process HTTP one, and a host's own
//! transport.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client_stdio::ServerCommand;
use mcp_host_registry::{
    AuthConfig, AuthorizationInfo, ClientIdentity, Config, Connector, DefaultConnector, Error,
    OAuthConfig, Registry, RegistryOptions, ServerClient, ServerConfig, ToolPolicy,
    TransportConfig, TransportError,
};
use mcp_proto::client::{BoxFuture, RequestOptions};
use mcp_proto::types::JsonObject;
use mcp_test_support::text;
use mcp_testkit::{HttpConfig, serve_http};
use serde_json::{Value, json};

fn testkit(args: &[&str]) -> ServerCommand {
    ServerCommand::new(mcp_testkit::binary_path().to_string_lossy().into_owned())
        .arg("stdio")
        .args(args.iter().copied())
}

/// The default connector, without the login-shell PATH probe (the testkit
/// is an absolute path), counting connections and delaying some.
#[derive(Debug)]
struct TestConnector {
    inner: DefaultConnector,
    connects: AtomicUsize,
    slow: Vec<(String, Duration)>,
}

impl TestConnector {
    fn new() -> Self {
        let mut inner = DefaultConnector::default();
        inner.discover_path = false;
        // Never the user's token directory.
        inner.token_store = Some(Arc::new(mcp_host_registry::mcp_auth::MemoryTokenStore::new()));
        TestConnector { inner, connects: AtomicUsize::new(0), slow: Vec::new() }
    }
}

impl Connector for TestConnector {
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>> {
        Box::pin(async move {
            self.connects.fetch_add(1, Ordering::SeqCst);
            if let Some((_, delay)) = self.slow.iter().find(|(n, _)| *n == server.name) {
                tokio::time::sleep(*delay).await;
            }
            self.inner.connect(server, identity).await
        })
    }
}

fn registry(
    servers: Vec<ServerConfig>,
    connector: TestConnector,
) -> (Registry, Arc<TestConnector>) {
    let connector = Arc::new(connector);
    let mut options = RegistryOptions::default();
    options.connector = connector.clone();
    let config = Config { servers, ..Default::default() };
    (Registry::new(config, options), connector)
}

fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_servers_at_once_with_failures_beside_results() {
    let http = serve_http(HttpConfig::default()).await.unwrap();
    let servers = vec![
        ServerConfig::stdio("good", testkit(&[])),
        // Answers `initialize`, then exits: every later request fails.
        ServerConfig::stdio("crashing", testkit(&["--exit-after", "1"])),
        ServerConfig::stdio("slow", testkit(&[])),
        ServerConfig::http("web", http.url()),
        ServerConfig::stdio("missing", ServerCommand::new("/nonexistent/mcp-server-xyz")),
    ];
    let mut connector = TestConnector::new();
    connector.slow.push(("slow".into(), Duration::from_millis(700)));
    let (registry, _) = registry(servers, connector);
    assert_eq!(registry.list().count(), 5);
    assert!(registry.get("web").is_some() && registry.get("nope").is_none());

    let start = Instant::now();
    let all = registry.list_all_tools().await;
    let elapsed = start.elapsed();
    let names: Vec<&str> = all.iter().map(|r| r.server.as_str()).collect();
    assert_eq!(names, ["good", "crashing", "slow", "web", "missing"]);
    for r in &all {
        match r.server.as_str() {
            "good" | "slow" | "web" => {
                let tools = r.result.as_ref().unwrap_or_else(|e| panic!("{}: {e}", r.server));
                assert!(tools.iter().any(|t| t.name == "echo"), "{}", r.server);
            }
            "crashing" => {
                let e = r.result.as_ref().unwrap_err();
                assert!(matches!(e, Error::Transport { .. }), "{e:?}");
                assert_eq!(e.server(), Some("crashing"));
            }
            "missing" => {
                let e = r.result.as_ref().unwrap_err();
                let TransportError::Stdio(inner) = e.transport_error().unwrap() else {
                    panic!("{e:?}")
                };
                assert!(matches!(**inner, mcp_client_stdio::Error::CommandNotFound { .. }), "{e}");
            }
            other => panic!("unexpected {other}"),
        }
    }
    // The slow server's start did not hold the others up one after another.
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    // The healthy servers keep working, over both transports.
    let r = registry.call_tool("good", "echo", args(json!({"message": "hi"}))).await.unwrap();
    assert_eq!(text(&r), "hi");
    let r = registry.call_tool("web", "add", args(json!({"a": 2, "b": 3}))).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 5.0})));
    registry.ping("web").await.unwrap();
    registry.ping("good").await.unwrap();

    let init = registry.initialize_all().await;
    let ok: Vec<bool> = init.iter().map(|r| r.result.is_ok()).collect();
    assert_eq!([ok[0], ok[2], ok[3], ok[4]], [true, true, true, false]);
    // `crashing` is started again (its lost connection was dropped), answers
    // `initialize` once more and exits: whether the client gets to send
    // `notifications/initialized` before the pipe closes is a race, so the
    // handshake either succeeds or fails with the exit, never otherwise.
    match &init[1].result {
        Ok(_) => {}
        Err(e) => {
            let Some(TransportError::Stdio(inner)) = e.transport_error() else { panic!("{e:?}") };
            assert!(matches!(**inner, mcp_client_stdio::Error::ServerExited { .. }), "{e}");
        }
    }

    registry.close_all().await;
    for name in ["good", "slow", "web"] {
        assert!(!registry.is_connected(name).await, "{name}");
    }
    assert_eq!(http.deletes(), 1, "closing the HTTP client ends its session");
    http.shutdown().await;
}

#[tokio::test]
async fn initialize_all_is_bounded_and_connections_are_cached() {
    let servers: Vec<ServerConfig> =
        (0..4).map(|i| ServerConfig::stdio(format!("s{i}"), testkit(&[]))).collect();
    let mut connector = TestConnector::new();
    for i in 0..4 {
        connector.slow.push((format!("s{i}"), Duration::from_millis(300)));
    }
    let connector = Arc::new(connector);
    let mut options = RegistryOptions::default();
    options.connector = connector.clone();
    options.max_concurrency = 2;
    let registry = Registry::new(Config { servers, ..Default::default() }, options);
    let start = Instant::now();
    let results = registry.initialize_all().await;
    let elapsed = start.elapsed();
    assert!(results.iter().all(|r| r.result.is_ok()));
    // Four 300 ms starts, two at a time: at least two rounds.
    assert!(elapsed >= Duration::from_millis(600), "{elapsed:?}");
    assert_eq!(connector.connects.load(Ordering::SeqCst), 4);
    // Cached: no new connections.
    registry.list_all_tools().await;
    registry.call_tool("s1", "echo", args(json!({"message": "x"}))).await.unwrap();
    assert_eq!(connector.connects.load(Ordering::SeqCst), 4);
    // Concurrent first uses of one server share one connection.
    registry.close("s0").await.unwrap();
    let (a, b) = tokio::join!(registry.list_tools("s0"), registry.ping("s0"));
    a.unwrap();
    b.unwrap();
    assert_eq!(connector.connects.load(Ordering::SeqCst), 5);
    registry.close_all().await;
}

#[tokio::test]
async fn a_server_that_failed_is_retried() {
    let (registry, connector) =
        registry(vec![ServerConfig::stdio("k", testkit(&[]))], TestConnector::new());
    registry.list_tools("k").await.unwrap();
    // `crash` ends the process without answering.
    let err = registry
        .call_tool("k", "crash", args(json!({"code": 7, "stderr": "bye now"})))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("bye now"), "{message}");
    assert!(!registry.is_connected("k").await, "the lost connection is dropped");
    let r = registry.call_tool("k", "echo", args(json!({"message": "again"}))).await.unwrap();
    assert_eq!(text(&r), "again");
    assert_eq!(connector.connects.load(Ordering::SeqCst), 2);
    registry.close_all().await;
}

#[tokio::test]
async fn policy_filters_and_refuses_before_anything_is_sent() {
    let http = serve_http(HttpConfig::default()).await.unwrap();
    let policy = ToolPolicy::new(["echo", "add", "slow"], ["add"]);
    let servers = vec![
        ServerConfig::stdio("local", testkit(&[])).with_policy(policy.clone()),
        ServerConfig::http("web", http.url()).with_policy(policy),
    ];
    let (registry, connector) = registry(servers, TestConnector::new());

    // Refused before any spawn or request.
    for server in ["local", "web"] {
        let err = registry.call_tool(server, "add", None).await.unwrap_err();
        assert!(matches!(err, Error::ToolNotAllowed { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "tool \"add\" of MCP server \"{server}\" is not allowed by the server's tool policy"
            )
        );
        let err = registry.call_tool(server, "crash", None).await.unwrap_err();
        assert!(matches!(err, Error::ToolNotAllowed { .. }), "{err:?}");
    }
    assert_eq!(connector.connects.load(Ordering::SeqCst), 0);
    assert!(http.rpc_methods().is_empty(), "{:?}", http.rpc_methods());

    for server in ["local", "web"] {
        let tools = registry.list_tools(server).await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "slow"], "{server}");
    }
    // An allowed name the server does not have: refused before tools/call.
    let policy = ToolPolicy::new(["echo", "nosuch"], Vec::<String>::new());
    let (registry2, _) = registry_with_http(&http, policy);
    let err = registry2.call_tool("web", "nosuch", None).await.unwrap_err();
    assert!(matches!(err, Error::UnknownTool { .. }), "{err:?}");
    assert_eq!(err.to_string(), "MCP server \"web\" has no tool named \"nosuch\"");
    assert!(!http.rpc_methods().iter().any(|m| m == "tools/call"), "{:?}", http.rpc_methods());

    let err = registry.call_tool("nowhere", "echo", None).await.unwrap_err();
    assert!(matches!(err, Error::UnknownServer { .. }) && err.is_usage());
    registry.close_all().await;
    registry2.close_all().await;
    http.shutdown().await;
}

fn registry_with_http(
    http: &mcp_testkit::HttpServerHandle,
    policy: ToolPolicy,
) -> (Registry, Arc<TestConnector>) {
    registry(vec![ServerConfig::http("web", http.url()).with_policy(policy)], TestConnector::new())
}

#[tokio::test]
async fn timeouts_progress_and_tool_errors() {
    let servers =
        vec![ServerConfig::stdio("quick", testkit(&[])).with_timeout(Duration::from_secs(1))];
    let (registry, _) = registry(servers, TestConnector::new());
    let start = Instant::now();
    let err = registry.call_tool("quick", "hang", None).await.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let TransportError::Stdio(inner) = err.transport_error().unwrap() else { panic!("{err:?}") };
    assert!(matches!(**inner, mcp_client_stdio::Error::Timeout { .. }), "{err}");
    // The connection survives a timeout.
    assert!(registry.is_connected("quick").await);

    let seen = Arc::new(AtomicUsize::new(0));
    let seen2 = seen.clone();
    let options = RequestOptions {
        on_progress: Some(Arc::new(move |_| {
            seen2.fetch_add(1, Ordering::SeqCst);
        })),
        ..Default::default()
    };
    let r = registry
        .call_tool_with("quick", "slow", args(json!({"ms": 200, "steps": 3})), options)
        .await
        .unwrap();
    assert_eq!(text(&r), "done");
    assert_eq!(seen.load(Ordering::SeqCst), 3);

    let r = registry.call_tool("quick", "fail", args(json!({"message": "boom"}))).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    registry.close_all().await;
}

#[tokio::test]
async fn http_credentials_and_authorization_discovery() {
    let challenge = "Bearer resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource\", scope=\"tools\"";
    let http = serve_http(HttpConfig {
        require_auth: Some("right-token".into()),
        challenge: Some(challenge.into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let with = |name: &str, auth: AuthConfig| {
        ServerConfig::new(
            name,
            TransportConfig::Http {
                endpoint: http.url(),
                headers: Vec::new(),
                auth,
                network: Default::default(),
            },
        )
    };
    let token = |t: &str| {
        let toml = format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"x\"\nendpoint = \"http://h/\"\nauth = {{ kind = \"bearer_token\", token = \"{t}\" }}\n"
        );
        let loaded = Config::from_toml_str(&toml, &Default::default()).unwrap();
        let TransportConfig::Http { auth, .. } = &loaded.config.servers[0].transport else {
            unreachable!()
        };
        auth.clone()
    };
    let mut oauth = OAuthConfig::default();
    oauth.scopes = vec!["tools".into()];
    let servers = vec![
        with("right", token("right-token")),
        with("wrong", token("wrong-token")),
        with("oauth", AuthConfig::OAuth(Box::new(oauth))),
        ServerConfig::stdio("local", testkit(&[])),
    ];
    let (registry, _) = registry(servers, TestConnector::new());

    registry.list_tools("right").await.unwrap();
    let err = registry.list_tools("wrong").await.unwrap_err();
    assert!(err.transport_error().is_some_and(TransportError::is_unauthorized), "{err:?}");
    assert!(!err.to_string().contains("wrong-token"), "{err}");
    assert!(!format!("{err:?}").contains("wrong-token"));

    // The OAuth flow starts, but this challenge's metadata URL is
    // unreachable: a transport error naming the server, not a login prompt.
    let err = registry.list_tools("oauth").await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert!(err.to_string().starts_with("MCP server \"oauth\" (http://127.0.0.1:"), "{err}");
    // The protected resource metadata can be probed without credentials.
    let info: AuthorizationInfo = registry.discover_authorization("oauth").await.unwrap().unwrap();
    assert_eq!(info.status, 401);
    assert_eq!(
        info.resource_metadata.as_deref(),
        Some("http://127.0.0.1:1/.well-known/oauth-protected-resource")
    );
    assert_eq!(info.scopes, ["tools"]);
    assert!(registry.discover_authorization("wrong").await.unwrap().is_some());
    assert_eq!(registry.discover_authorization("right").await.unwrap(), None);
    assert_eq!(registry.discover_authorization("local").await.unwrap(), None);
    registry.close_all().await;
    http.shutdown().await;
}

#[tokio::test]
async fn a_disabled_config_gives_an_empty_registry() {
    let config = Config {
        enabled: false,
        servers: vec![ServerConfig::stdio("a", testkit(&[]))],
        ..Default::default()
    };
    let registry = Registry::new(config, RegistryOptions::default());
    assert_eq!(registry.list().count(), 0);
    assert!(registry.list_all_tools().await.is_empty());
    assert!(matches!(registry.ping("a").await, Err(Error::UnknownServer { .. })));
}

/// A host's own transport: the testkit server in this process, joined by
/// `mcp-peer`'s in-memory transport.
#[derive(Debug)]
struct MemoryConnector;

impl Connector for MemoryConnector {
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        _identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>> {
        Box::pin(async move {
            let transport = crate::common::memory_testkit(Default::default());
            let options = mcp_peer::ClientOptions::new(server.name.clone());
            let client = mcp_peer::Client::new(transport, options);
            Ok(client)
        })
    }
}

#[tokio::test]
async fn a_hosts_own_transport() {
    let server = ServerConfig::stdio("mem", ServerCommand::new("unused"));
    let config = Config { servers: vec![server], ..Default::default() };
    let registry = Registry::new(config, RegistryOptions::with_connector(MemoryConnector));
    let init = registry.initialize("mem").await.unwrap();
    assert_eq!(init.server_info.name, "mcp-testkit");
    registry.ping("mem").await.unwrap();
    for expected in ["1", "2"] {
        let r = registry.call_tool("mem", "echo", args(json!({"message": expected}))).await;
        assert_eq!(text(&r.unwrap()), expected);
    }
    let err = registry.call_tool("mem", "other", None).await.unwrap_err();
    assert!(matches!(err, Error::UnknownTool { .. }));
    registry.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_server_reports_its_protocol_version_and_era() {
    use mcp_proto::{Era, ProtocolVersion};

    let mut modern_http = HttpConfig::default();
    modern_http.server.era = mcp_testkit::ServeEra::Modern;
    let modern_http = serve_http(modern_http).await.unwrap();
    let legacy_http = serve_http(HttpConfig::default()).await.unwrap();
    let servers = vec![
        ServerConfig::stdio("old", testkit(&[])),
        ServerConfig::stdio("new", testkit(&["--era", "modern"])),
        ServerConfig::stdio("dual", testkit(&["--era", "both"])),
        ServerConfig::http("old-web", legacy_http.url()),
        ServerConfig::http("new-web", modern_http.url()),
        // Pinned (`protocol`): a dual-era server spoken to in the pinned
        // revision, with no probe.
        ServerConfig::stdio("dual-pinned", testkit(&["--era", "both"]))
            .with_protocol(ProtocolVersion::V2025_06_18),
        ServerConfig::http("old-web-pinned", legacy_http.url())
            .with_protocol(ProtocolVersion::V2025_03_26),
    ];
    let (registry, _) = registry(servers, TestConnector::new());

    // Nothing connected yet: nothing known, nothing spawned.
    let before = registry.statuses().await;
    assert_eq!(before.len(), 7);
    for s in &before {
        assert!(!s.connected && s.protocol_version.is_none() && s.era.is_none(), "{s:?}");
        assert!(s.server_info.is_none(), "{s:?}");
    }
    assert!(matches!(registry.status("nope").await, Err(Error::UnknownServer { .. })));

    for r in registry.initialize_all().await {
        r.result.unwrap_or_else(|e| panic!("{}: {e}", r.server));
    }
    let expected = [
        ("old", ProtocolVersion::LATEST_LEGACY, Era::Legacy),
        ("new", ProtocolVersion::V2026_07_28, Era::Modern),
        // A dual-era server is spoken to in the newer era.
        ("dual", ProtocolVersion::V2026_07_28, Era::Modern),
        ("old-web", ProtocolVersion::LATEST_LEGACY, Era::Legacy),
        ("new-web", ProtocolVersion::V2026_07_28, Era::Modern),
        ("dual-pinned", ProtocolVersion::V2025_06_18, Era::Legacy),
        ("old-web-pinned", ProtocolVersion::V2025_03_26, Era::Legacy),
    ];
    let statuses = registry.statuses().await;
    for (status, (name, version, era)) in statuses.iter().zip(expected) {
        assert_eq!(status.server, name);
        assert!(status.connected, "{status:?}");
        assert_eq!(status.protocol_version, Some(version), "{status:?}");
        assert_eq!(status.era, Some(era), "{status:?}");
        assert_eq!(status.server_info.as_ref().map(|i| i.name.as_str()), Some("mcp-testkit"));
        assert_eq!(registry.status(name).await.unwrap(), *status);
        // A round trip in either era (the stateless one has no `ping`).
        registry.ping(name).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = registry.call_tool(name, "echo", args(json!({"message": name}))).await.unwrap();
        assert_eq!(text(&r), name);
    }

    registry.close("new").await.unwrap();
    let closed = registry.status("new").await.unwrap();
    assert!(!closed.connected && closed.protocol_version.is_none() && closed.era.is_none());
    registry.close_all().await;
    modern_http.shutdown().await;
    legacy_http.shutdown().await;
}

/// `tests/data/apps_server.py`, pinned to the handshake era (it knows no
/// `server/discover`).
fn apps_server() -> ServerConfig {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps_server.py");
    ServerConfig::stdio(
        "apps",
        ServerCommand::new("python3").arg(script.to_string_lossy().into_owned()),
    )
    .with_protocol(mcp_proto::ProtocolVersion::V2025_11_25)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_only_an_app_s_view_may_call_stay_away_from_the_model() {
    // The default: the lists are the model's.
    let (registry, _) = registry(vec![apps_server()], TestConnector::new());
    let names =
        |tools: Vec<mcp_proto::types::Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(
        names(registry.list_tools("apps").await.unwrap()),
        ["show", "plain", "caps", "calls"]
    );
    let err = registry.call_tool("apps", "refresh", None).await.unwrap_err();
    assert!(
        matches!(&err, Error::AppOnlyTool { server, tool } if server == "apps" && tool == "refresh"),
        "{err}"
    );
    assert!(err.is_usage() && err.to_string().contains("MCP App view"), "{err}");
    assert_eq!(text(&registry.call_tool("apps", "show", None).await.unwrap()), "show");
    // Nothing of the refused call reached the server.
    let calls = registry.call_tool("apps", "calls", None).await.unwrap();
    assert_eq!(text(&calls), r#"["show", "calls"]"#);
    // The extension is not declared unless the connector says so.
    assert_eq!(text(&registry.call_tool("apps", "caps", None).await.unwrap()), "{}");
    registry.close_all().await;

    // A host that shows every tool to a person, and declares MCP Apps.
    let mut connector = TestConnector::new();
    connector.inner.apps = true;
    let connector = Arc::new(connector);
    let mut options = RegistryOptions::default();
    options.connector = connector.clone();
    options.app_only_tools = true;
    let registry =
        Registry::new(Config { servers: vec![apps_server()], ..Default::default() }, options);
    assert_eq!(
        names(registry.list_tools("apps").await.unwrap()),
        ["show", "refresh", "plain", "caps", "calls"]
    );
    assert_eq!(text(&registry.call_tool("apps", "refresh", None).await.unwrap()), "refresh");
    let caps: Value =
        serde_json::from_str(&text(&registry.call_tool("apps", "caps", None).await.unwrap()))
            .unwrap();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );
    registry.close_all().await;
}
