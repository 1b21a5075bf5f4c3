//! Golden tests: configuration files as the hosts write them (VS Code,
//! Cursor, Claude Desktop), each loaded and summarised as lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mcp_host_registry::{
    Config, ConfigError, InputKind, InputRequest, LoadOptions, TransportConfig, WarningKind,
};

use crate::config::summary;

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hosts").join(path)
}

fn env_options(vars: &[(&str, &str)]) -> LoadOptions {
    let env: HashMap<String, String> =
        vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    LoadOptions { env: Arc::new(move |name| env.get(name).cloned()), ..Default::default() }
}

/// The summary, with the file's folder written `{dir}` and the project's
/// folder `{ws}`.
fn golden(file: &str, workspace: &str, options: &LoadOptions) -> Vec<String> {
    let path = data(file);
    let dir = path.parent().unwrap().display().to_string();
    let ws = data(workspace).display().to_string();
    summary(Config::load(&path, options))
        .into_iter()
        .map(|l| l.replace(&dir, "{dir}").replace(&ws, "{ws}"))
        .collect()
}

#[test]
fn vscode_servers_with_comments_inputs_and_variables() {
    let mut options = env_options(&[
        ("HOME", "/home/ada"),
        ("GITHUB_TOKEN", "ghp-1"),
        ("HOSTS_INPUT_LOG_LEVEL", "debug"),
    ]);
    options.input_env_prefix = Some("HOSTS_INPUT_".into());
    let asked: Arc<Mutex<Vec<InputRequest>>> = Arc::default();
    let seen = asked.clone();
    options.inputs = Some(Arc::new(move |request: &InputRequest| {
        seen.lock().unwrap().push(request.clone());
        (request.id == "perplexity-key").then(|| "pplx-2".to_owned())
    }));
    let got = golden("vscode/.vscode/mcp.json", "vscode", &options);
    assert_eq!(
        got,
        [
            "server Perplexity stdio npx|-y|server-perplexity-ask env:PERPLEXITY_API_KEY=pplx-2",
            "server fetch stdio uvx|mcp-server-fetch|--log-level|debug",
            "server workspace-tools stdio node|{ws}/build/index.js|--name|vscode \
             env:NOTES=/home/ada/notes cwd:{ws}",
            "server github http https://api.githubcopilot.com/mcp/ h:Authorization=Bearer ghp-1",
            "server legacy http http://localhost:3001/sse",
            "warn Ignored {dir}/mcp.json:40: server \"workspace-tools\", key `dev`: \
             ignored: it is VS Code's own",
            "warn Ignored {dir}/mcp.json:51: server \"github\", key `gallery`: \
             ignored: it is VS Code's own",
        ]
    );
    // The environment answered `log-level`; the host was asked only for
    // the password, once.
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].id, "perplexity-key");
        assert_eq!(asked[0].kind, InputKind::PromptString);
        assert!(asked[0].password);
        assert_eq!(asked[0].description.as_deref(), Some("Perplexity API Key"));
    }
    // The password's value is a secret: nowhere in Debug.
    let loaded = Config::load(&data("vscode/.vscode/mcp.json"), &options).unwrap();
    assert!(!format!("{loaded:?}").contains("pplx-2"));
}

#[test]
fn an_input_nobody_supplies_names_the_file_key_and_variable() {
    let mut options = env_options(&[("HOME", "/home/ada"), ("GITHUB_TOKEN", "ghp-1")]);
    options.input_env_prefix = Some("HOSTS_INPUT_".into());
    let path = data("vscode/.vscode/mcp.json");
    let e = Config::load(&path, &options).unwrap_err();
    assert!(matches!(e.problem(), ConfigError::MissingInput(m) if m.input == "perplexity-key"));
    assert_eq!(e.path(), Some(path.as_path()));
    assert_eq!(
        e.to_string(),
        format!(
            "{}:24: invalid MCP configuration: server \"Perplexity\", key \
             `env.PERPLEXITY_API_KEY`: the input `perplexity-key` has no value; set the \
             environment variable HOSTS_INPUT_PERPLEXITY_KEY",
            path.display()
        )
    );
    // Without a prefix, nothing supplies it and the message says so.
    options.input_env_prefix = None;
    let e = Config::load(&path, &options).unwrap_err();
    assert!(e.to_string().ends_with("has no value; nothing supplies inputs here"), "{e}");
}

#[test]
fn input_and_variable_cases() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "an undeclared input",
            r#"{"servers": {"a": {"command": "s", "args": ["${input:nope}"]}}}"#,
            "error invalid MCP configuration: server \"a\", key `args`: `${input:nope}` names \
             no input declared in `inputs`",
        ),
        (
            "a pick outside its options",
            r#"{"inputs": [{"type": "pickString", "id": "p", "options": ["x", "y"]}],
                "servers": {"a": {"command": "s", "args": ["${input:p}"]}}}"#,
            "error invalid MCP configuration: server \"a\", key `args`: the value given for \
             input `p` is not one of its options",
        ),
        (
            "an input type VS Code's MCP files do not take",
            r#"{"inputs": [{"type": "command", "id": "c"}], "servers": {}}"#,
            "error invalid MCP configuration: key `inputs[0].type`: must be \"promptString\" \
             or \"pickString\"",
        ),
        (
            "a pick without options",
            r#"{"inputs": [{"type": "pickString", "id": "p"}], "servers": {}}"#,
            "error invalid MCP configuration: key `inputs[0].options`: a pickString needs options",
        ),
        (
            "the workspace folder without a file",
            r#"{"servers": {"a": {"command": "s", "cwd": "${workspaceFolder}"}}}"#,
            "error invalid MCP configuration: server \"a\", key `cwd`: `${workspaceFolder}`: no \
             workspace folder is known (load the file by its path)",
        ),
        (
            "a password input in the arguments: used, with a warning",
            r#"{"inputs": [{"type": "promptString", "id": "k", "password": true}],
                "servers": {"a": {"command": "s", "args": ["--key=${input:k}"]}}}"#,
            "server a stdio s|--key=v1 | warn SecretShown server \"a\", key `args`: a password \
             input is used here, where the value is shown as part of the command line or URL; \
             pass secrets in `env` or `headers`",
        ),
        (
            "`${env:...}` is the environment's even when named like a host variable",
            r#"{"servers": {"a": {"command": "s", "args": ["${env:userHome}", "${userHome}"]}}}"#,
            "server a stdio s|env-home|/home/ada",
        ),
        (
            "in the toolkit's own JSON shape the hosts' variables are the environment's",
            r#"{"mcp_client": {"servers": [{"name": "a", "command": "s", "args": ["${userHome}"]}]}}"#,
            "server a stdio s|env-home",
        ),
    ];
    for (what, input, expected) in cases {
        let mut options = env_options(&[("HOME", "/home/ada"), ("userHome", "env-home")]);
        options.inputs = Some(Arc::new(|r: &InputRequest| Some(format!("v{}", r.id.len()))));
        let got = summary(Config::from_json_str(input, &options)).join(" | ");
        assert_eq!(got, *expected, "{what}");
    }
}

#[test]
fn cursor_project_file() {
    let options =
        env_options(&[("HOME", "/home/ada"), ("API_KEY", "k-1"), ("MY_SERVICE_TOKEN", "t-1")]);
    let got = golden("cursor/.cursor/mcp.json", "cursor", &options);
    assert_eq!(
        got,
        [
            "server server-name stdio npx|-y|mcp-server env:API_KEY=k-1",
            "server remote-server http https://mcp.example.com/mcp h:Authorization=Bearer t-1",
            "server local-script stdio python|{ws}/tools/mcp_server.py \
             env:CONFIG_DIR=/home/ada/.config/my-tool",
        ]
    );
}

#[test]
fn claude_desktop_config() {
    let got = golden("claude/claude_desktop_config.json", "claude", &env_options(&[]));
    assert_eq!(
        got,
        [
            "server filesystem stdio npx|-y|@modelcontextprotocol/server-filesystem|\
             /Users/username/Desktop|/Users/username/Downloads",
            "server memory stdio npx|-y|@modelcontextprotocol/server-memory",
            "server brave-search stdio npx|-y|@modelcontextprotocol/server-brave-search \
             env:BRAVE_API_KEY=YOUR_API_KEY_HERE",
        ]
    );
    let loaded = Config::load(&data("claude/claude_desktop_config.json"), &env_options(&[]));
    let loaded = loaded.unwrap();
    assert!(loaded.warnings.iter().all(|w| w.kind != WarningKind::UnknownKey));
    assert!(loaded.config.servers.iter().all(|s| matches!(s.transport, TransportConfig::Stdio(_))));
}
