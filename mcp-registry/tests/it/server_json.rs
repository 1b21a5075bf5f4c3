//! Golden tests: MCP Registry `server.json` files (the registry's own
//! examples) imported as configuration entries, and the entries loaded
//! back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_host_registry::{Config, ImportedServer, LoadOptions, ServerJsonChoice, ServerJsonError};

use crate::config::summary;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/server-json").join(name)
}

fn import(name: &str, choice: ServerJsonChoice) -> ImportedServer {
    ImportedServer::from_file(&data(name), choice, None).unwrap()
}

/// The entry loaded back (with `vars` as the environment), summarised.
fn load_back(imported: &ImportedServer, vars: &[(&str, &str)]) -> Vec<String> {
    let env: HashMap<String, String> =
        vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let options = LoadOptions { env: Arc::new(move |n| env.get(n).cloned()), ..Default::default() };
    let text = format!("[mcp_client]\n{}", imported.to_toml());
    summary(Config::from_toml_str(&text, &options))
}

fn variables(imported: &ImportedServer) -> Vec<String> {
    imported
        .variables
        .iter()
        .map(|v| {
            format!(
                "{} required={} secret={} default={:?}",
                v.name, v.required, v.secret, v.default
            )
        })
        .collect()
}

#[test]
fn npm_package() {
    let imported = import("npm-local-weather.json", ServerJsonChoice::First);
    assert_eq!(imported.to_toml(), "\
# set CONFIG_PATH (required)
# set API_KEY (required, secret)
[[mcp_client.servers]]
name = \"local-weather\"
description = \"Local MCP server distributed as an npm package.\"
command = \"npx\"
args = [\"-y\", \"@modelcontextprotocol/server-weather@1.0.0\", \"${CONFIG_PATH}\", \"--port\", \"8080\"]
env = { API_KEY = \"${API_KEY}\" }
");
    assert_eq!(
        load_back(&imported, &[("CONFIG_PATH", "/etc/w.toml"), ("API_KEY", "k-1")]),
        ["server local-weather stdio npx|-y|@modelcontextprotocol/server-weather@1.0.0|\
          /etc/w.toml|--port|8080 env:API_KEY=k-1 desc=Local MCP server distributed as an npm package."]
    );
    // Unset, the server is loaded but unusable until it is.
    let unset = load_back(&imported, &[]);
    assert!(unset[0].ends_with("unusable=CONFIG_PATH"), "{unset:?}");
}

#[test]
fn pypi_package() {
    let imported = import("pypi-weather.json", ServerJsonChoice::First);
    assert_eq!(
        variables(&imported),
        [
            "WEATHER_API_KEY required=true secret=true default=None",
            "WEATHER_UNITS required=false secret=false default=Some(\"celsius\")",
        ]
    );
    assert_eq!(
        imported.to_toml(),
        "\
# set WEATHER_API_KEY (required, secret)
# set WEATHER_UNITS (optional)
[[mcp_client.servers]]
name = \"weather-mcp\"
description = \"Python MCP server for weather data access\"
command = \"uvx\"
args = [\"weather-mcp-server==0.5.0\"]
env = { WEATHER_API_KEY = \"${WEATHER_API_KEY}\", WEATHER_UNITS = \"${WEATHER_UNITS:-celsius}\" }
"
    );
    assert_eq!(
        load_back(&imported, &[("WEATHER_API_KEY", "w-1")]),
        ["server weather-mcp stdio uvx|weather-mcp-server==0.5.0 env:WEATHER_API_KEY=w-1 \
          env:WEATHER_UNITS=celsius desc=Python MCP server for weather data access"]
    );
}

#[test]
fn remote_with_a_url_variable_and_a_secret_header() {
    let imported = import("remote-weather.json", ServerJsonChoice::First);
    assert_eq!(
        imported.to_toml(),
        "\
# set HOST (optional)
# set AUTHORIZATION (required, secret)
[[mcp_client.servers]]
name = \"remote-weather\"
description = \"Remote MCP server reachable over streamable HTTP.\"
endpoint = \"https://${HOST:-api.example.com}/mcp\"
headers = { Authorization = \"${AUTHORIZATION}\" }
"
    );
    assert_eq!(
        load_back(&imported, &[("AUTHORIZATION", "Bearer t-1")]),
        ["server remote-weather http https://api.example.com/mcp h:Authorization=Bearer t-1 \
          desc=Remote MCP server reachable over streamable HTTP."]
    );
}

#[test]
fn a_package_or_a_remote_of_the_same_file() {
    let package = import("hybrid.json", ServerJsonChoice::Package(0));
    let first = import("hybrid.json", ServerJsonChoice::First);
    assert_eq!(package, first);
    assert_eq!(
        load_back(&package, &[]),
        ["server hybrid-mcp stdio npx|-y|@example/hybrid-mcp-server@1.5.0|--mode|local \
          desc=MCP server available as both local package and remote service"]
    );
    let remote = import("hybrid.json", ServerJsonChoice::Remote(0));
    assert_eq!(
        variables(&remote),
        [
            "X_API_KEY required=true secret=true default=None",
            "X_REGION required=false secret=false default=Some(\"us-east-1\")",
        ]
    );
    assert_eq!(
        load_back(&remote, &[("X_API_KEY", "k-9")]),
        ["server hybrid-mcp http https://mcp.anonymous.modelcontextprotocol.io/http \
          h:X-API-Key=k-9 h:X-Region=us-east-1 \
          desc=MCP server available as both local package and remote service"]
    );
    let sse =
        ImportedServer::from_file(&data("hybrid.json"), ServerJsonChoice::Remote(1), Some("h2"))
            .unwrap();
    assert_eq!(
        load_back(&sse, &[]),
        ["server h2 http https://mcp.anonymous.modelcontextprotocol.io/sse \
          desc=MCP server available as both local package and remote service"]
    );
}

#[test]
fn oci_package_runs_in_docker() {
    let imported = import("filesystem-npm-oci.json", ServerJsonChoice::Package(1));
    assert_eq!(
        load_back(&imported, &[("SOURCE_PATH", "/home/ada/src")]),
        ["server filesystem stdio docker|run|-i|--rm|--mount|\
          type=bind,src=/home/ada/src,dst=/project|-e|LOG_LEVEL|docker.io/mcp/filesystem:1.0.2|\
          /project env:LOG_LEVEL=info desc=Node.js server implementing Model Context Protocol \
          (MCP) for filesystem operations."]
    );
    let npm = import("filesystem-npm-oci.json", ServerJsonChoice::Package(0));
    assert_eq!(
        load_back(&npm, &[]),
        ["server filesystem stdio npx|-y|@modelcontextprotocol/server-filesystem@1.0.2|\
          /Users/username/Desktop env:LOG_LEVEL=info desc=Node.js server implementing Model \
          Context Protocol (MCP) for filesystem operations."]
    );
}

#[test]
fn errors_name_the_file_and_key() {
    let path = data("mcpb-text-editor.json");
    let e = ImportedServer::from_file(&path, ServerJsonChoice::First, None).unwrap_err();
    assert!(
        matches!(&e, ServerJsonError::UnknownRegistryType { registry_type, .. } if registry_type == "mcpb")
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{}: server.json key `packages[0].registryType`: the registry type \"mcpb\" cannot \
             be started here (npm, pypi, oci and nuget can)",
            path.display()
        )
    );
    let e =
        ImportedServer::from_file(&data("pypi-weather.json"), ServerJsonChoice::Remote(0), None)
            .unwrap_err();
    assert!(
        e.to_string().ends_with("server.json key `remotes`: there is no entry 1 (it has 0)"),
        "{e}"
    );
    let cases: &[(&str, &str)] = &[
        ("[]", "server.json key `(top)`: must be an object"),
        (
            "{\"name\": \"a/b\"}",
            "server.json key `packages`: the file has no packages and no remotes",
        ),
        (
            "{\n  \"name\": 1,\n",
            "invalid JSON in the server.json at line 3, column 0: EOF while parsing a value",
        ),
        (
            r#"{"name": "a/b", "packages": [{"registryType": "npm", "identifier": "x", "transport": {"type": "streamable-http"}}]}"#,
            "server.json key `packages[0].transport.type`: the package serves over HTTP once \
             started; only stdio packages are started by this client (import a remote instead)",
        ),
        (
            r#"{"name": "a/b", "remotes": [{"type": "websocket", "url": "wss://x"}]}"#,
            "server.json key `remotes[0].type`: must be \"streamable-http\" or \"sse\"",
        ),
        (
            r#"{"name": "a/b", "packages": [{"registryType": "npm", "identifier": "x", "environmentVariables": [{"name": "A B"}]}]}"#,
            "server.json key `packages[0].environmentVariables[0].name`: must be an environment \
             variable name",
        ),
    ];
    for (text, expected) in cases {
        let e = ImportedServer::from_str(text, ServerJsonChoice::First, None).unwrap_err();
        assert_eq!(e.to_string(), *expected, "{text}");
    }
}

#[test]
fn the_files_text_is_never_an_environment_reference() {
    let text = r#"{"name": "a/b", "description": "d\u001b[31m", "packages": [{"registryType": "pypi",
        "identifier": "x", "packageArguments": [{"type": "positional", "value": "${HOME}"}],
        "environmentVariables": [{"name": "T", "value": "${AWS_SECRET_ACCESS_KEY}"}]}]}"#;
    let imported = ImportedServer::from_str(text, ServerJsonChoice::First, Some("n")).unwrap();
    assert!(imported.variables.is_empty());
    let toml = imported.to_toml();
    assert!(toml.contains("\"$${HOME}\""), "{toml}");
    assert!(!toml.contains('\u{1b}'), "{toml}");
    assert_eq!(
        load_back(&imported, &[("HOME", "/home/ada"), ("AWS_SECRET_ACCESS_KEY", "no")]),
        ["server n stdio uvx|x|${HOME} env:T=${AWS_SECRET_ACCESS_KEY} desc=d\u{1b}[31m"]
    );
}
