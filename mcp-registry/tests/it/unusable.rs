//! One server's missing secret affects that server alone: the
//! configuration loads, the others are listed and called, and the use of
//! that one fails with a typed error naming the variable and the key.

use std::sync::Arc;

use mcp_host_registry::{Config, Error, LoadOptions, Registry, RegistryOptions};
use serde_json::json;

use crate::scripted::Scripted;

#[tokio::test]
async fn a_missing_secret_makes_only_its_server_unusable() {
    let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "remote"
endpoint = "https://example.com/mcp"
auth = { kind = "bearer_token", token_env = "REMOTE_TOKEN_UNSET" }
[[mcp_client.servers]]
name = "local"
command = "local-server"
env = { KEY = "${LOCAL_KEY}" }
"#;
    let options = LoadOptions {
        env: Arc::new(|name| (name == "LOCAL_KEY").then(|| "value".to_owned())),
        ..Default::default()
    };
    let loaded = Config::from_toml_str(toml, &options).unwrap();
    assert_eq!(loaded.config.servers.len(), 2);
    let script = Scripted::new(vec![json!({"name": "echo", "inputSchema": {"type": "object"}})]);
    let registry = Registry::new(loaded.config, RegistryOptions::with_connector(script));

    let all = registry.list_all_tools().await;
    let local = all.iter().find(|r| r.server == "local").unwrap();
    assert_eq!(local.result.as_ref().unwrap().len(), 1);
    let remote = all.iter().find(|r| r.server == "remote").unwrap();
    let err = remote.result.as_ref().unwrap_err();
    let Error::ServerUnusable { server, missing } = err else { panic!("{err:?}") };
    assert_eq!(server, "remote");
    assert_eq!(missing.variable, "REMOTE_TOKEN_UNSET");
    assert_eq!(missing.location.key.as_deref(), Some("auth.token_env"));
    assert!(err.is_usage());
    assert_eq!(
        err.to_string(),
        "MCP server \"remote\" cannot be used: key `auth.token_env` refers to the environment \
         variable REMOTE_TOKEN_UNSET, which is not set"
    );
    assert!(matches!(registry.ping("remote").await, Err(Error::ServerUnusable { .. })));
    assert!(matches!(
        registry.call_tool("remote", "echo", None).await,
        Err(Error::ServerUnusable { .. })
    ));
    assert!(registry.call_tool("local", "echo", None).await.is_ok());
    registry.close_all().await;
}
