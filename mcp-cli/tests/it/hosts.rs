//! The hosts' configuration formats from the command line: VS Code's
//! inputs from the environment (the paths without a terminal), the error
//! that names the variable to set, a project's inputs asked for only after
//! approval, and `mcpc add --from server.json`.

use serde_json::Value;

use crate::run::{Sandbox, json_of};

fn testkit() -> String {
    mcp_testkit::binary_path().to_string_lossy().into_owned()
}

/// A VS Code `servers` file (with comments) whose server gets a password
/// input in its environment.
fn vscode_file(tk: &str) -> String {
    format!(
        r#"{{
  // As VS Code writes it.
  "inputs": [
    {{ "type": "promptString", "id": "api-token", "description": "The token", "password": true }},
  ],
  "servers": {{
    "kit": {{
      "type": "stdio",
      "command": "{tk}",
      "args": ["stdio"],
      "env": {{ "KIT_TOKEN": "${{input:api-token}}", "KIT_HOME": "${{workspaceFolder}}" }},
    }},
  }},
}}"#
    )
}

#[test]
fn an_input_comes_from_the_environment_or_names_the_variable_to_set() {
    let s = Sandbox::new("inputs");
    let path = s.write("proj/.vscode/mcp.json", &vscode_file(&testkit()));
    let config = path.to_str().unwrap();
    let call = ["--config", config, "--output", "json", "call", "kit", "env", "name=KIT_TOKEN"];
    let r = s.run_env(&call, &[("MCPC_INPUT_API_TOKEN", "tok-1")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("tok-1"), "{r:?}");
    let home = ["--config", config, "call", "kit", "env", "name=KIT_HOME"];
    let r = s.run_env(&home, &[("MCPC_INPUT_API_TOKEN", "tok-1")]);
    assert!(r.stdout.contains(&s.dir.join("proj").display().to_string()), "{r:?}");

    // No terminal, no variable: a configuration error naming the file, the
    // key and the variable.
    let r = s.run(&call);
    assert_eq!(r.code, 2, "{r:?}");
    let error = &json_of(&r)["error"];
    assert_eq!(error["kind"], "config", "{r:?}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(".vscode/mcp.json:"), "{message}");
    assert!(message.contains("key `env.KIT_TOKEN`"), "{message}");
    assert!(message.contains("set the environment variable MCPC_INPUT_API_TOKEN"), "{message}");
}

#[test]
fn a_projects_inputs_are_asked_for_only_once_it_is_approved() {
    let s = Sandbox::new("project-inputs");
    std::fs::create_dir_all(s.dir.join("repo/.git")).unwrap();
    s.write("repo/.vscode/mcp.json", &vscode_file(&testkit()));
    let repo = s.dir.join("repo");
    let run_in = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = s.command(args);
        cmd.current_dir(&repo);
        for (k, v) in env {
            cmd.env(k, v);
        }
        crate::run::run_bounded(cmd, crate::run::RUN_LIMIT)
    };
    // Unapproved: refused for want of approval, not of the input.
    let r = run_in(&["tools"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("has not been approved"), "{r:?}");
    // Approved as written, with the input shown as its reference.
    let r = run_in(&["trust"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("kit: runs"), "{r:?}");
    // Then the input is read, and a new value asks for no new approval.
    for token in ["tok-2", "tok-3"] {
        let r =
            run_in(&["call", "kit", "env", "name=KIT_TOKEN"], &[("MCPC_INPUT_API_TOKEN", token)]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains(token), "{r:?}");
    }
}

const SERVER_JSON: &str = r#"{
  "name": "io.github.example/weather-mcp",
  "description": "Python MCP server for weather data access",
  "version": "0.5.0",
  "packages": [{
    "registryType": "pypi", "identifier": "weather-mcp-server", "version": "0.5.0",
    "runtimeHint": "uvx", "transport": {"type": "stdio"},
    "environmentVariables": [
      {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true},
      {"name": "WEATHER_UNITS", "default": "celsius"}
    ]
  }],
  "remotes": [{"type": "streamable-http", "url": "https://weather.example.com/mcp"}]
}"#;

#[test]
fn add_prints_the_entry_of_a_server_json() {
    let s = Sandbox::new("add");
    let file = s.write("server.json", SERVER_JSON);
    let from = file.to_str().unwrap();
    let r = s.run(&["add", "--from", from]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        "# set WEATHER_API_KEY (required, secret)\n# set WEATHER_UNITS (optional)\n\
         [[mcp_client.servers]]\nname = \"weather-mcp\"\n\
         description = \"Python MCP server for weather data access\"\ncommand = \"uvx\"\n\
         args = [\"weather-mcp-server==0.5.0\"]\nenv = { WEATHER_API_KEY = \"${WEATHER_API_KEY}\", \
         WEATHER_UNITS = \"${WEATHER_UNITS:-celsius}\" }\n"
    );
    // The entry loads as it is printed.
    let config = s.write("xdg/mcpc/mcp.toml", &format!("[mcp_client]\n{}", r.stdout));
    let r = s.run(&["--config", config.to_str().unwrap(), "--output", "json", "servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(json_of(&r)[0]["name"], "weather-mcp", "{r:?}");

    let r = s.run(&["--output", "json", "add", "--from", from, "--remote", "1", "--name", "w"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = json_of(&r);
    assert_eq!(v["name"], "w");
    assert!(v["toml"].as_str().unwrap().contains("endpoint = \"https://weather.example.com/mcp\""));

    let r = s.run(&["add", "--from", from, "--remote", "2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("server.json key `remotes`: there is no entry 2 (it has 1)"),
        "{r:?}"
    );
    let unknown = s.write(
        "bundle.json",
        r#"{"name": "a/b", "packages": [{"registryType": "mcpb", "identifier": "x"}]}"#,
    );
    let r = s.run(&["add", "--from", unknown.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("bundle.json: server.json key `packages[0].registryType`"), "{r:?}");
}
