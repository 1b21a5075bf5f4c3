//! What each feature set builds: both kinds of entry load whatever the
//! features, and a server whose transport is compiled out is a typed error
//! (nothing spawned or sent), beside the servers that work.

#[cfg(not(all(feature = "stdio", feature = "http")))]
use mcp_host_registry::Error;
use mcp_host_registry::{
    Config, DefaultConnector, LoadOptions, Registry, RegistryOptions, TransportConfig,
};

const BOTH: &str = r#"
[mcp_client]
[[mcp_client.servers]]
name = "local"
command = "mcp-testkit"
args = ["stdio"]

[[mcp_client.servers]]
name = "remote"
endpoint = "http://127.0.0.1:9/mcp?key=abc"
auth = { kind = "bearer_token", token = "s3cret" }
"#;

/// The configuration, with the stdio server pointed at the built testkit.
fn registry() -> Registry {
    let mut loaded = Config::from_toml_str(BOTH, &LoadOptions::default()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    if let TransportConfig::Stdio(command) = &mut loaded.config.servers[0].transport {
        command.command = mcp_testkit::binary_path().to_string_lossy().into_owned();
    }
    let mut connector = DefaultConnector::default();
    connector.discover_path = false;
    Registry::new(loaded.config, RegistryOptions::with_connector(connector))
}

#[test]
fn both_kinds_of_entry_load_whatever_the_features() {
    let registry = registry();
    let kinds: Vec<(&str, bool)> =
        registry.list().map(|s| (s.name.as_str(), s.is_stdio())).collect();
    assert_eq!(kinds, [("local", true), ("remote", false)]);
    let debug = format!("{:?}", registry.get("remote").unwrap());
    assert!(!debug.contains("key=abc") && !debug.contains("s3cret"), "{debug}");
}

/// The error for a server whose transport is compiled out.
#[cfg(not(all(feature = "stdio", feature = "http")))]
fn check_unavailable(result: Result<(), Error>, server: &str, transport: &str) {
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::TransportUnavailable { server: s, transport: t } if s == server && *t == transport),
        "{err:?}"
    );
    assert!(err.is_usage());
    assert_eq!(err.server(), Some(server));
    assert_eq!(
        err.to_string(),
        format!(
            "MCP server \"{server}\" uses the {transport} transport, which this build does not \
             include (mcp-registry's `{transport}` feature is off)"
        )
    );
}

#[cfg(not(feature = "http"))]
#[tokio::test]
async fn an_http_server_without_the_http_feature_is_a_typed_error() {
    let registry = registry();
    check_unavailable(registry.ping("remote").await, "remote", "http");
    #[cfg(feature = "stdio")]
    {
        // The stdio server beside it works.
        let all = registry.list_all_tools().await;
        assert!(all[0].result.as_ref().is_ok_and(|t| t.iter().any(|t| t.name == "echo")));
        assert!(matches!(all[1].result, Err(Error::TransportUnavailable { .. })));
        registry.close_all().await;
    }
}

#[cfg(not(feature = "stdio"))]
#[tokio::test]
async fn a_stdio_server_without_the_stdio_feature_is_a_typed_error() {
    let registry = registry();
    check_unavailable(registry.ping("local").await, "local", "stdio");
    check_unavailable(registry.call_tool("local", "echo", None).await.map(drop), "local", "stdio");
}
