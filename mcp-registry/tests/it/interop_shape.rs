//! Schemas shaped for every target from the real tool schemas of the
//! official servers (everything, filesystem, memory): their tools listed
//! through the registry, each schema shaped, and sample arguments valid
//! under the shaped schema checked, with a JSON Schema validator, to be
//! valid under the original once mapped back. Run by `cargo xtask interop`
//! (feature `interop-tests`), with `MCP_EVERYTHING_JS`,
//! `MCP_FILESYSTEM_JS` and `MCP_MEMORY_JS` naming the servers' entry
//! points.

use mcp_host_registry::shape::SchemaTarget;
use mcp_host_registry::{
    Config, DefaultConnector, Registry, RegistryOptions, ServerCommand, ServerConfig,
};
use mcp_test_support::TempDir;

use crate::shape::check_round_trip;

fn entry(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} must name the server's dist/index.js: run `cargo xtask interop`")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_servers_tool_schemas_shape_for_every_target() {
    let tmp = TempDir::new("shape-interop");
    let memory_file = tmp.path().join("memory.jsonl");
    let node = |var: &str| ServerCommand::new("node").arg(entry(var));
    let servers = vec![
        ServerConfig::stdio("everything", node("MCP_EVERYTHING_JS").arg("stdio")),
        ServerConfig::stdio(
            "filesystem",
            node("MCP_FILESYSTEM_JS").arg(tmp.path().to_string_lossy().into_owned()),
        ),
        ServerConfig::stdio(
            "memory",
            node("MCP_MEMORY_JS")
                .env("MEMORY_FILE_PATH", memory_file.to_string_lossy().into_owned()),
        ),
    ];
    let config = Config { servers, ..Default::default() };
    let registry =
        Registry::new(config, RegistryOptions::with_connector(DefaultConnector::default()));
    mcp_test_support::bounded(async {
        let mut shaped_count = 0;
        let mut with_stand_ins = 0;
        for listed in registry.list_all_tools().await {
            let tools = listed.result.unwrap_or_else(|e| panic!("{}: {e}", listed.server));
            assert!(!tools.is_empty(), "{} lists no tools", listed.server);
            for tool in tools {
                let original = serde_json::to_value(&tool.input_schema).unwrap();
                let what = format!("{}/{}", listed.server, tool.name);
                let shaped = check_round_trip(&what, &original);
                assert_eq!(shaped.len(), SchemaTarget::ALL.len());
                for (target, shaped) in shaped {
                    let text = shaped.schema.to_string();
                    if target != SchemaTarget::Unchanged {
                        assert!(!text.contains("\"$ref\""), "{what} for {target}: {text}");
                    }
                    if target == SchemaTarget::Strict && !shaped.arguments.is_empty() {
                        with_stand_ins += 1;
                    }
                    if target == SchemaTarget::Plain {
                        assert!(!text.contains("\"format\":\""), "{what}: {text}");
                    }
                }
                shaped_count += 1;
            }
        }
        // Every server's tools were shaped (the everything server alone has
        // more than ten).
        assert!(shaped_count > 20, "only {shaped_count} tools");
        // Optional properties were made nullable and mapped back.
        assert!(with_stand_ins > 5, "only {with_stand_ins} tools with optional properties");
    })
    .await;
    registry.close_all().await;
}
