//! Configuration cases, both formats: each input is loaded and summarised
//! as lines (`server ...`, `warn ...`) or an error message.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_host_registry::{
    AuthConfig, ClientIdentity, Config, ConfigError, LoadOptions, Loaded, ServerCommand,
    ServerConfig, TransportConfig, WarningKind,
};

const SECRET: &str = "s3cr3t-t0ken";

fn options(strict: bool) -> LoadOptions {
    let env: HashMap<&str, &str> =
        [("REMOTE_TOKEN", SECRET), ("API_KEY", "k-123"), ("USER_NAME", "ada")].into();
    LoadOptions {
        strict,
        env: Arc::new(move |name| env.get(name).map(|v| (*v).to_owned())),
        ..Default::default()
    }
}

pub(crate) fn server_line(s: &ServerConfig) -> String {
    let mut line = match &s.transport {
        TransportConfig::Stdio(c) => {
            let mut words = vec![c.command.clone()];
            words.extend(c.args.iter().cloned());
            let mut l = format!("server {} stdio {}", s.name, words.join("|"));
            for (k, v) in &c.env {
                l.push_str(&format!(" env:{k}={v}"));
            }
            if let Some(cwd) = &c.cwd {
                l.push_str(&format!(" cwd:{}", cwd.display()));
            }
            l
        }
        TransportConfig::Http { endpoint, headers, auth, network } => {
            let mut l = format!("server {} http {endpoint}", s.name);
            if let Some(proxy) = &network.proxy {
                l.push_str(&format!(" proxy={}", proxy.expose()));
            }
            if let Some(no_proxy) = &network.no_proxy {
                l.push_str(&format!(" no_proxy={no_proxy}"));
            }
            if let Some(ca_file) = &network.ca_file {
                l.push_str(&format!(" ca_file={}", ca_file.display()));
            }
            for (k, v) in headers {
                l.push_str(&format!(" h:{k}={}", v.expose()));
            }
            match auth {
                AuthConfig::None => {}
                AuthConfig::Bearer { token } => l.push_str(&format!(" bearer={}", token.expose())),
                AuthConfig::Basic { username, password } => {
                    l.push_str(&format!(" basic={username}:{}", password.expose()))
                }
                AuthConfig::Header { name, value } => {
                    l.push_str(&format!(" header={name}:{}", value.expose()))
                }
                AuthConfig::Headers(list) => {
                    for (n, v) in list {
                        l.push_str(&format!(" headers={n}:{}", v.expose()));
                    }
                }
                AuthConfig::QueryParam { name, value } => {
                    l.push_str(&format!(" query={name}={}", value.expose()))
                }
                AuthConfig::OAuth(o) => l.push_str(&format!(
                    " oauth client={:?} scopes={:?} secret={}",
                    o.client_id,
                    o.scopes,
                    o.client_secret.as_ref().map(|s| s.expose()).unwrap_or("-")
                )),
                other => panic!("unexpected auth {other:?}"),
            }
            l
        }
        other => panic!("unexpected transport {other:?}"),
    };
    if let Some(d) = &s.description {
        line.push_str(&format!(" desc={d}"));
    }
    if !s.policy.allowed().is_empty() {
        line.push_str(&format!(" allow={}", s.policy.allowed().join(",")));
    }
    if !s.policy.denied().is_empty() {
        line.push_str(&format!(" deny={}", s.policy.denied().join(",")));
    }
    if s.timeout != Duration::from_secs(30) {
        line.push_str(&format!(" timeout={}", s.timeout.as_secs()));
    }
    if let Some(policy) = s.pin_policy {
        line.push_str(&format!(" pins={policy}"));
    }
    if let Some(version) = s.protocol {
        line.push_str(&format!(" protocol={version}"));
    }
    if let Some(missing) = &s.unusable {
        line.push_str(&format!(" unusable={}", missing.variable));
    }
    line
}

pub(crate) fn summary(result: Result<Loaded, ConfigError>) -> Vec<String> {
    match result {
        Ok(loaded) => {
            let mut lines: Vec<String> = loaded.config.servers.iter().map(server_line).collect();
            if !loaded.config.enabled {
                lines.insert(0, "disabled".into());
            }
            for w in &loaded.warnings {
                lines.push(format!("warn {:?} {w}", w.kind));
            }
            lines
        }
        Err(e) => {
            let text = e.to_string();
            assert!(!text.contains(SECRET), "a secret leaked: {text}");
            vec![format!("error {text}")]
        }
    }
}

fn check_toml(what: &str, input: &str, strict: bool, expected: &[&str]) {
    let got = summary(Config::from_toml_str(input, &options(strict)));
    assert_eq!(got, expected, "{what}\n--- input (strict {strict}) ---\n{input}");
}

fn check_json(what: &str, input: &str, strict: bool, expected: &[&str]) {
    let got = summary(Config::from_json_str(input, &options(strict)));
    assert_eq!(got, expected, "{what}\n--- input (strict {strict}) ---\n{input}");
}

#[test]
fn toml_cases() {
    let cases: &[(&str, &str, bool, &[&str])] = &[
        ("no mcp_client table: no servers", "[other]\nx = 1\n", false, &[]),
        (
            "stdio and http, every field",
            r#"
[mcp_client]
enabled = true
[[mcp_client.servers]]
name = " files "
command = " npx "
args = ["-y", "@modelcontextprotocol/server-filesystem", "./data"]
env = { LOG_LEVEL = "info" }
cwd = "/tmp"
description = "Files"
allowed_tools = [" read ", "", "read", "list"]
disallowed_tools = ["write_file"]
timeout_secs = 5
[[mcp_client.servers]]
name = "remote"
endpoint = "  https://example.com/mcp?x=1  "
auth = { kind = "bearer_token", token_env = "REMOTE_TOKEN" }
"#,
            false,
            &[
                "server files stdio npx|-y|@modelcontextprotocol/server-filesystem|./data env:LOG_LEVEL=info cwd:/tmp desc=Files allow=read,list deny=write_file timeout=5",
                "server remote http https://example.com/mcp?x=1 bearer=s3cr3t-t0ken",
            ],
        ),
        (
            "a disabled client is empty",
            "[mcp_client]\nenabled = false\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\n",
            false,
            &["disabled"],
        ),
        (
            "disabled entries are skipped silently",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = false\n[[mcp_client.servers]]\nenabled = false\n[[mcp_client.servers]]\nname = \"b\"\ncommand = \"y\"\n",
            true,
            &["server b stdio y"],
        ),
        (
            "a nameless entry is skipped with its index",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp_client.servers]]\nname = \"  \"\ncommand = \"y\"\n",
            false,
            &["server a stdio x", "warn SkippedEntry server #2: the entry has no name"],
        ),
        (
            "a nameless entry is an error in strict mode",
            "[mcp_client]\n[[mcp_client.servers]]\ncommand = \"y\"\n",
            true,
            &["error invalid MCP configuration: server #1: the entry has no name"],
        ),
        (
            "an entry without target is skipped with its name",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"t\"\ncommand = \"  \"\nendpoint = \"\"\n",
            false,
            &["warn SkippedEntry server \"t\": the entry has neither an endpoint nor a command"],
        ),
        (
            "an entry without target is an error in strict mode",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"t\"\n",
            true,
            &[
                "error invalid MCP configuration: server \"t\": the entry has neither an endpoint nor a command",
            ],
        ),
        (
            "a blank command means HTTP to the trimmed endpoint",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"h\"\ncommand = \" \"\nendpoint = \" http://127.0.0.1:1/mcp \"\n",
            false,
            &["server h http http://127.0.0.1:1/mcp"],
        ),
        (
            "a command wins over an endpoint",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"c\"\ncommand = \"run\"\nendpoint = \"http://h/mcp\"\n",
            false,
            &[
                "server c stdio run",
                "warn Ignored server \"c\", key `endpoint`: ignored: a command is given, so the server is spawned",
            ],
        ),
        (
            "unknown keys are warnings",
            "[mcp_client]\ncolour = 1\n[mcp_client.client_identity]\nnick = \"x\"\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\ncomand = \"typo\"\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token = \"t\", extra = 1 }\n",
            false,
            &[
                "server a stdio x",
                "server r http http://h/ bearer=t",
                "warn UnknownKey key `mcp_client.colour`: unknown key",
                "warn UnknownKey key `mcp_client.client_identity.nick`: unknown key",
                "warn UnknownKey server \"a\", key `comand`: unknown key",
                "warn UnknownKey server \"r\", key `auth.extra`: unknown key",
            ],
        ),
        (
            "unknown keys are errors in strict mode, naming server and key",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\ncomand = \"typo\"\n",
            true,
            &["error invalid MCP configuration: server \"a\", key `comand`: unknown key"],
        ),
        (
            "a duplicate replaces the earlier entry in place",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"first\"\n[[mcp_client.servers]]\nname = \"b\"\ncommand = \"b\"\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"second\"\n",
            false,
            &[
                "server a stdio second",
                "server b stdio b",
                "warn DuplicateName server \"a\": a later entry with the same name replaces the earlier one",
            ],
        ),
        (
            "a missing variable makes only its server unusable, named with the key",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token_env = \"NOPE\" }\n[[mcp_client.servers]]\nname = \"ok\"\ncommand = \"x\"\n",
            false,
            &[
                "server r http http://h/ bearer= unusable=NOPE",
                "server ok stdio x",
                "warn ServerUnusable server \"r\", key `auth.token_env`: the environment variable NOPE is not set; the server cannot be used until it is",
            ],
        ),
        (
            "a missing variable is an error in strict mode",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token_env = \"NOPE\" }\n",
            true,
            &[
                "error invalid MCP configuration: server \"r\", key `auth.token_env`: the environment variable NOPE is not set",
            ],
        ),
        (
            "secrets from the environment, every kind",
            r#"
[mcp_client]
[[mcp_client.servers]]
name = "basic"
endpoint = "http://h/"
auth = { kind = "basic", username_env = "USER_NAME", password_env = "API_KEY" }
[[mcp_client.servers]]
name = "header"
endpoint = "http://h/"
auth = { kind = "header", name = "X-Api-Key", value_env = "API_KEY" }
[[mcp_client.servers]]
name = "headers"
endpoint = "http://h/"
auth = { kind = "headers", headers = { X-A = "1" }, headers_env = { X-B = "API_KEY" } }
[[mcp_client.servers]]
name = "query"
endpoint = "http://h/"
auth = { kind = "query_param", name = "key", value = "literal" }
[[mcp_client.servers]]
name = "none"
endpoint = "http://h/"
headers = { X-Trace = "${env:API_KEY}-${API_KEY}-${not a ref}" }
auth = { kind = "none" }
[[mcp_client.servers]]
name = "oauth"
endpoint = "http://h/"
auth = { kind = "oauth", client_id = "cid", client_secret_env = "API_KEY", scopes = ["read"] }
[[mcp_client.servers]]
name = "envs"
command = "srv"
env = { TOKEN = "${env:REMOTE_TOKEN}" }
"#,
            false,
            &[
                "server basic http http://h/ basic=ada:k-123",
                "server header http http://h/ header=X-Api-Key:k-123",
                "server headers http http://h/ headers=X-A:1 headers=X-B:k-123",
                "server query http http://h/ query=key=literal",
                "server none http http://h/ h:X-Trace=k-123-k-123-${not a ref}",
                "server oauth http http://h/ oauth client=Some(\"cid\") scopes=[\"read\"] secret=k-123",
                "server envs stdio srv env:TOKEN=s3cr3t-t0ken",
            ],
        ),
        (
            "a missing variable in env names the key",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"e\"\ncommand = \"x\"\nenv = { T = \"${env:MISSING}\" }\n",
            true,
            &[
                "error invalid MCP configuration: server \"e\", key `env.T`: the environment variable MISSING is not set",
            ],
        ),
        (
            "a secret given twice",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token = \"a\", token_env = \"API_KEY\" }\n",
            false,
            &[
                "error invalid MCP configuration: server \"r\", key `auth.token`: give `token` or `token_env`, not both",
            ],
        ),
        (
            "a secret missing",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"header\", name = \"X\" }\n",
            false,
            &[
                "error invalid MCP configuration: server \"r\", key `auth.value`: is missing (or give `value_env`)",
            ],
        ),
        (
            "an unknown auth kind",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\nendpoint = \"http://h/\"\nauth = { kind = \"magic\" }\n",
            false,
            &[
                "error invalid MCP configuration: server \"r\", key `auth.kind`: must be one of none, bearer_token, basic, header, headers, query_param, oauth",
            ],
        ),
        (
            "a timeout that is not a number",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout_secs = \"30\"\n",
            false,
            &[
                "error invalid MCP configuration: server \"a\", key `timeout_secs`: must be a whole number of seconds from 1 to 86400",
            ],
        ),
        (
            "a zero timeout",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout_secs = 0\n",
            false,
            &[
                "error invalid MCP configuration: server \"a\", key `timeout_secs`: must be a whole number of seconds from 1 to 86400",
            ],
        ),
        (
            "args that are not a list",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nargs = \"-y\"\n",
            false,
            &[
                "error invalid MCP configuration: server \"a\", key `args`: must be a list of strings",
            ],
        ),
        (
            "enabled that is not a boolean",
            "[mcp_client]\nenabled = \"yes\"\n",
            false,
            &["error invalid MCP configuration: key `mcp_client.enabled`: must be true or false"],
        ),
        (
            "servers that are not an array",
            "[mcp_client]\nservers = 3\n",
            false,
            &[
                "error invalid MCP configuration: key `mcp_client.servers`: must be an array of tables",
            ],
        ),
        (
            "stdio-only keys on an HTTP server are ignored with a warning",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"h\"\nendpoint = \"http://h/\"\nargs = [\"x\"]\n",
            false,
            &[
                "server h http http://h/",
                "warn Ignored server \"h\", key `args`: ignored: the server is reached over HTTP",
            ],
        ),
        (
            "invalid TOML gives a line, never the text",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"r\"\ntoken = s3cr3t-t0ken\n",
            false,
            &[
                "error invalid TOML in the MCP configuration at line 4, column 9: string values must be quoted, expected literal string",
            ],
        ),
    ];
    for (what, input, strict, expected) in cases {
        check_toml(what, input, *strict, expected);
    }
}

#[test]
fn json_cases() {
    let cases: &[(&str, &str, bool, &[&str])] = &[
        (
            "Claude Desktop / Cursor, order kept",
            r#"{"globalShortcut": "x", "mcpServers": {
                "zeta": {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "${env:API_KEY}"}},
                "alpha": {"url": " https://example.com/mcp ", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
                "mid": {"type": "sse", "url": "http://h/sse", "description": "old"}
            }}"#,
            false,
            &[
                "server zeta stdio npx|-y|pkg env:K=k-123",
                "server alpha http https://example.com/mcp h:Authorization=Bearer s3cr3t-t0ken",
                "server mid http http://h/sse desc=old",
            ],
        ),
        (
            "VS Code servers with type",
            r#"{"inputs": [], "servers": {"web": {"type": "http", "url": "http://h/mcp"}, "local": {"type": "stdio", "command": "node", "args": ["s.js"], "cwd": "/srv"}}}"#,
            false,
            &["server web http http://h/mcp", "server local stdio node|s.js cwd:/srv"],
        ),
        (
            "disabled entries skipped, policy and timeout read",
            r#"{"mcpServers": {"off": {"command": "x", "disabled": true}, "off2": {"command": "x", "enabled": false},
                "on": {"command": "y", "allowed_tools": ["a"], "disallowed_tools": ["b"], "timeout_secs": 9}}}"#,
            true,
            &["server on stdio y allow=a deny=b timeout=9"],
        ),
        (
            "a blank name is skipped",
            r#"{"mcpServers": {" ": {"command": "x"}, "ok": {"command": "y"}}}"#,
            false,
            &["server ok stdio y", "warn SkippedEntry server #1: the entry has no name"],
        ),
        (
            "neither url nor command",
            r#"{"mcpServers": {"t": {"type": "http"}}}"#,
            false,
            &["warn SkippedEntry server \"t\": the entry has neither a url nor a command"],
        ),
        (
            "neither url nor command, strict",
            r#"{"mcpServers": {"t": {"args": []}}}"#,
            true,
            &[
                "error invalid MCP configuration: server \"t\": the entry has neither a url nor a command",
            ],
        ),
        (
            "unknown keys warn",
            r#"{"mcpServers": {"a": {"command": "x", "envFile": ".env"}}}"#,
            false,
            &["server a stdio x", "warn UnknownKey server \"a\", key `envFile`: unknown key"],
        ),
        (
            "unknown keys are errors in strict mode",
            r#"{"mcpServers": {"a": {"command": "x", "envFile": ".env"}}}"#,
            true,
            &["error invalid MCP configuration: server \"a\", key `envFile`: unknown key"],
        ),
        (
            "a bad type",
            r#"{"mcpServers": {"a": {"command": ["x"]}}}"#,
            false,
            &["error invalid MCP configuration: server \"a\", key `command`: must be a string"],
        ),
        (
            "an unknown transport type",
            r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://h"}}}"#,
            false,
            &[
                "error invalid MCP configuration: server \"a\", key `type`: must be \"stdio\", \"http\", \"streamable-http\" or \"sse\"",
            ],
        ),
        (
            "a missing variable in a header",
            r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"X-Key": "${env:NOPE}"}}}}"#,
            true,
            &[
                "error invalid MCP configuration: server \"a\", key `headers.X-Key`: the environment variable NOPE is not set",
            ],
        ),
        (
            "the mcp_client shape in JSON",
            r#"{"mcp_client": {"servers": [{"name": "a", "command": "x"}, {"name": "a", "endpoint": "http://h/"}]}}"#,
            false,
            &[
                "server a http http://h/",
                "warn DuplicateName server \"a\": a later entry with the same name replaces the earlier one",
            ],
        ),
        (
            "invalid JSON gives a line",
            "{\"mcpServers\": {\n  \"a\": {\"command\": \"s3cr3t-t0ken\" \"x\"}\n}}",
            false,
            &[
                "error invalid JSON in the MCP configuration at line 2, column 35: expected `,` or `}`",
            ],
        ),
        (
            "comments and trailing commas (JSONC): accepted, and positions stay right",
            "{\"mcpServers\": { // servers\n  /* one */ \"a\": {\"command\": \"s\",},\n},\n}",
            false,
            &["server a stdio s"],
        ),
        (
            "an error after a comment is at its own line and column",
            "{\"mcpServers\": { /* a\n  comment */ \"a\": {\"command\": 1,},\n}}",
            false,
            &["error invalid MCP configuration: server \"a\", key `command`: must be a string"],
        ),
        (
            "a comment inside a string is text",
            "{\"mcpServers\": {\"a\": {\"command\": \"s\", \"args\": [\"//x\", \"/*y*/\"],}}}",
            false,
            &["server a stdio s|//x|/*y*/"],
        ),
        (
            "no servers at all: a warning",
            "{}",
            false,
            &[
                "warn NoServers configuration: no `mcpServers`, `servers` or `mcp_client` key: no servers are declared",
            ],
        ),
        ("an empty server map is no problem", r#"{"mcpServers": {}}"#, false, &[]),
        (
            "a command wins over a url; headers are ignored for it",
            r#"{"mcpServers": {"c": {"command": "run", "url": "http://h/", "headers": {"A": "1"}}}}"#,
            false,
            &[
                "server c stdio run",
                "warn Ignored server \"c\", key `url`: ignored: a command is given, so the server is spawned",
                "warn Ignored server \"c\", key `headers`: ignored: headers apply to HTTP servers only",
            ],
        ),
        (
            "a non-object server map",
            r#"{"mcpServers": ["a"]}"#,
            false,
            &[
                "error invalid JSON in the MCP configuration at line 1, column 15: invalid type: sequence, expected an object of servers",
            ],
        ),
    ];
    for (what, input, strict, expected) in cases {
        check_json(what, input, *strict, expected);
    }
}

#[test]
fn host_defaults_are_seeded_and_explicit_entries_win() {
    let mut opts = options(false);
    opts.defaults = vec![
        ServerConfig::http("docs", "https://docs.example.com/mcp"),
        ServerConfig::stdio("local", ServerCommand::new("local-server")),
    ];
    let toml = "[mcp_client]\n[[mcp_client.servers]]\nname = \"extra\"\ncommand = \"e\"\n[[mcp_client.servers]]\nname = \"docs\"\nendpoint = \"http://127.0.0.1:9/mcp\"\n";
    let lines = summary(Config::from_toml_str(toml, &opts));
    assert_eq!(
        lines,
        [
            "server docs http http://127.0.0.1:9/mcp",
            "server local stdio local-server",
            "server extra stdio e",
        ]
    );
    // No file section: the defaults alone (and a warning that the file
    // declares nothing).
    let empty = Config::from_toml_str("", &opts).unwrap();
    assert_eq!(empty.config.servers.len(), 2);
    assert_eq!(empty.warnings[0].kind, WarningKind::NoServers);
    let json = r#"{"mcpServers": {"local": {"command": "mine"}}}"#;
    assert_eq!(
        summary(Config::from_json_str(json, &opts)),
        ["server docs http https://docs.example.com/mcp", "server local stdio mine"]
    );
    // A disabled client drops the defaults too.
    let off = summary(Config::from_toml_str("[mcp_client]\nenabled = false\n", &opts));
    assert_eq!(off, ["disabled"]);
}

#[test]
fn client_identity_defaults_per_field() {
    let mut opts = options(false);
    opts.client_identity = ClientIdentity::new("host", "1.2.3");
    let loaded = Config::from_toml_str("[mcp_client]\n", &opts).unwrap();
    assert_eq!(loaded.config.client_identity, ClientIdentity::new("host", "1.2.3"));
    let toml = "[mcp_client.client_identity]\nname = \"my-host\"\ntitle = \"My Host\"\n";
    let identity = Config::from_toml_str(toml, &opts).unwrap().config.client_identity;
    assert_eq!(identity.name, "my-host");
    assert_eq!(identity.title.as_deref(), Some("My Host"));
    assert_eq!(identity.version, "1.2.3");
    let imp = identity.to_implementation();
    assert_eq!((imp.name.as_str(), imp.version.as_str()), ("my-host", "1.2.3"));
    let err = Config::from_toml_str("[mcp_client.client_identity]\nname = \" \"\n", &opts);
    assert!(err.unwrap_err().to_string().contains("client_identity.name"));
}

#[test]
fn debug_never_shows_secrets() {
    let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "r"
endpoint = "https://example.com/mcp?key=abc"
headers = { X-Other = "${env:REMOTE_TOKEN}" }
auth = { kind = "bearer_token", token_env = "REMOTE_TOKEN" }
[[mcp_client.servers]]
name = "s"
command = "x"
env = { TOKEN = "${REMOTE_TOKEN}" }
"#;
    let loaded = Config::from_toml_str(toml, &options(false)).unwrap();
    let debug = format!("{loaded:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(!debug.contains("key=abc"), "{debug}");
    assert!(debug.contains("TOKEN") && debug.contains("X-Other"), "{debug}");
}

/// `proxy`, `no_proxy` and `ca_file` of an HTTP server; ignored with a
/// warning beside a command, `no_proxy` without `proxy` too; a relative
/// `ca_file` is the file's neighbour, the proxy's credentials are kept out
/// of `Debug`.
#[test]
fn http_network_keys() {
    check_toml(
        "network keys",
        r#"
[mcp_client]
[[mcp_client.servers]]
name = "a"
endpoint = "https://example.com/mcp"
proxy = "socks5h://user:${REMOTE_TOKEN}@proxy.corp:1080"
no_proxy = ".internal, 10.0.0.0/8"
ca_file = "/etc/corp/ca.pem"
[[mcp_client.servers]]
name = "b"
endpoint = "https://example.com/mcp"
proxy = "none"
[[mcp_client.servers]]
name = "c"
endpoint = "https://example.com/mcp"
no_proxy = "x"
[[mcp_client.servers]]
name = "d"
command = "x"
ca_file = "ca.pem"
"#,
        false,
        &[
            "server a http https://example.com/mcp proxy=socks5h://user:s3cr3t-t0ken@proxy.corp:1080 no_proxy=.internal, 10.0.0.0/8 ca_file=/etc/corp/ca.pem",
            "server b http https://example.com/mcp proxy=none",
            "server c http https://example.com/mcp",
            "server d stdio x",
            "warn Ignored server \"c\", key `no_proxy`: ignored: it applies to `proxy` (the environment's proxy uses NO_PROXY)",
            "warn Ignored server \"d\", key `ca_file`: ignored: the server is spawned, not reached over HTTP",
        ],
    );
    let dir = temp_dir("network");
    let file = dir.join("mcp.toml");
    let toml = "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\nendpoint = \"https://e.test/mcp\"\n\
                ca_file = \"certs/ca.pem\"\nproxy = \"http://u:${REMOTE_TOKEN}@p.test:3128\"\n";
    std::fs::write(&file, toml).unwrap();
    let loaded = Config::load(&file, &options(false)).unwrap();
    let TransportConfig::Http { network, .. } = &loaded.config.servers[0].transport else {
        panic!("{loaded:?}")
    };
    assert_eq!(network.ca_file.as_deref(), Some(dir.join("certs/ca.pem").as_path()));
    let debug = format!("{loaded:?}");
    assert!(!debug.contains(SECRET) && debug.contains("ca.pem"), "{debug}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_are_read_by_extension() {
    let dir = std::env::temp_dir().join(format!("mcp-registry-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("mcp.toml");
    std::fs::write(&toml, "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\n")
        .unwrap();
    let json = dir.join("claude_desktop_config.JSON");
    std::fs::write(&json, r#"{"mcpServers": {"b": {"command": "y"}}}"#).unwrap();
    assert_eq!(summary(Config::load(&toml, &options(false))), ["server a stdio x"]);
    assert_eq!(summary(Config::load(&json, &options(false))), ["server b stdio y"]);
    let missing = Config::load(&dir.join("nope.toml"), &options(false)).unwrap_err();
    assert!(matches!(missing, ConfigError::Io { .. }), "{missing}");
    assert!(missing.to_string().contains("nope.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn warnings_carry_kind_and_location() {
    let toml = "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nbogus = 1\n";
    let loaded = Config::from_toml_str(toml, &options(false)).unwrap();
    let w = &loaded.warnings[0];
    assert_eq!(w.kind, WarningKind::UnknownKey);
    assert_eq!(w.location.server.as_deref(), Some("a"));
    assert_eq!(w.location.index, Some(0));
    assert_eq!(w.location.key.as_deref(), Some("bogus"));
}

/// `${VAR}`, `${env:VAR}`, `${VAR:-default}` and `$${` in every string
/// value of an entry, both formats.
#[test]
fn variables_expand_in_every_string_value() {
    let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "stdio"
command = "${USER_NAME}-server"
args = ["--key=${API_KEY}", "${UNSET:-fallback}", "$${LITERAL}", "${env:USER_NAME:-x}", "$HOME"]
env = { K = "${API_KEY}" }
cwd = "/srv/${USER_NAME}"
description = "for ${USER_NAME}"
[[mcp_client.servers]]
name = "bearer"
endpoint = "https://${USER_NAME}.example.com/${UNSET:-mcp}"
headers = { X-Key = "${API_KEY}" }
auth = { kind = "bearer_token", token = "${REMOTE_TOKEN}" }
[[mcp_client.servers]]
name = "basic"
endpoint = "http://h/"
auth = { kind = "basic", username = "${USER_NAME}", password = "p-${API_KEY}" }
[[mcp_client.servers]]
name = "header"
endpoint = "http://h/"
auth = { kind = "header", name = "X-Api-Key", value = "${API_KEY}" }
[[mcp_client.servers]]
name = "headers"
endpoint = "http://h/"
auth = { kind = "headers", headers = { X-A = "${API_KEY}" } }
[[mcp_client.servers]]
name = "query"
endpoint = "http://h/"
auth = { kind = "query_param", name = "key", value = "${API_KEY}" }
[[mcp_client.servers]]
name = "oauth"
endpoint = "http://h/"
auth = { kind = "oauth", client_id = "${USER_NAME}", client_secret = "${API_KEY}", scopes = ["${USER_NAME}:read"], redirect_uri = "http://127.0.0.1/${UNSET:-cb}", client_metadata_url = "https://${USER_NAME}.example.com/client" }
"#;
    let loaded = Config::from_toml_str(toml, &options(true)).unwrap();
    assert_eq!(
        loaded.config.servers.iter().map(server_line).collect::<Vec<_>>(),
        [
            "server stdio stdio ada-server|--key=k-123|fallback|${LITERAL}|ada|$HOME env:K=k-123 cwd:/srv/ada desc=for ada",
            "server bearer http https://ada.example.com/mcp h:X-Key=k-123 bearer=s3cr3t-t0ken",
            "server basic http http://h/ basic=ada:p-k-123",
            "server header http http://h/ header=X-Api-Key:k-123",
            "server headers http http://h/ headers=X-A:k-123",
            "server query http http://h/ query=key=k-123",
            "server oauth http http://h/ oauth client=Some(\"ada\") scopes=[\"ada:read\"] secret=k-123",
        ]
    );
    let Some(TransportConfig::Http { auth: AuthConfig::OAuth(oauth), .. }) =
        loaded.config.servers.last().map(|s| &s.transport)
    else {
        panic!("not oauth")
    };
    assert_eq!(oauth.redirect_uri.as_deref(), Some("http://127.0.0.1/cb"));
    assert_eq!(oauth.client_metadata_url.as_deref(), Some("https://ada.example.com/client"));

    let json = r#"{"mcpServers": {
        "s": {"command": "${USER_NAME}", "args": ["${API_KEY}", "${UNSET:-d}"], "env": {"E": "${API_KEY}"}, "cwd": "${UNSET:-/tmp}", "description": "${USER_NAME}"},
        "h": {"url": "https://${USER_NAME}.example.com/mcp", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}
    }}"#;
    let loaded = Config::from_json_str(json, &options(true)).unwrap();
    assert_eq!(
        loaded.config.servers.iter().map(server_line).collect::<Vec<_>>(),
        [
            "server s stdio ada|k-123|d env:E=k-123 cwd:/tmp desc=ada",
            "server h http https://ada.example.com/mcp h:Authorization=Bearer s3cr3t-t0ken",
        ]
    );
}

/// A missing variable, wherever it is, makes only its own server unusable
/// (named with the key and the variable), in both formats.
#[test]
fn a_missing_variable_affects_only_its_server() {
    let places = [
        ("command = \"${GONE}\"", "command"),
        ("command = \"x\"\nargs = [\"${GONE}\"]", "args"),
        ("command = \"x\"\ncwd = \"${GONE}\"", "cwd"),
        ("command = \"x\"\nenv = { A = \"${GONE}\" }", "env.A"),
        ("endpoint = \"http://${GONE}/\"", "endpoint"),
        ("endpoint = \"http://h/\"\nheaders = { A = \"${GONE}\" }", "headers.A"),
        (
            "endpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token = \"${GONE}\" }",
            "auth.token",
        ),
        (
            "endpoint = \"http://h/\"\nauth = { kind = \"bearer_token\", token_env = \"GONE\" }",
            "auth.token_env",
        ),
        (
            "endpoint = \"http://h/\"\nauth = { kind = \"headers\", headers_env = { A = \"GONE\" } }",
            "auth.headers_env.A",
        ),
    ];
    for (entry, key) in places {
        let toml = format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"bad\"\n{entry}\n[[mcp_client.servers]]\nname = \"good\"\ncommand = \"g\"\n"
        );
        let loaded =
            Config::from_toml_str(&toml, &options(false)).unwrap_or_else(|e| panic!("{key}: {e}"));
        let servers = &loaded.config.servers;
        assert_eq!(servers.len(), 2, "{key}");
        let missing = servers[0].unusable.as_ref().unwrap_or_else(|| panic!("{key}: usable"));
        assert_eq!(missing.variable, "GONE", "{key}");
        assert_eq!(missing.location.key.as_deref(), Some(key));
        assert_eq!(missing.location.server.as_deref(), Some("bad"));
        assert!(servers[1].unusable.is_none(), "{key}");
        assert_eq!(loaded.warnings.len(), 1, "{key}");
        assert_eq!(loaded.warnings[0].kind, WarningKind::ServerUnusable);
    }
    let json = r#"{"mcpServers": {"bad": {"url": "http://h/", "headers": {"A": "${GONE}"}}, "good": {"command": "g"}}}"#;
    let loaded = Config::from_json_str(json, &options(false)).unwrap();
    assert_eq!(loaded.config.servers[0].unusable.as_ref().unwrap().variable, "GONE");
    assert!(loaded.config.servers[1].unusable.is_none());
}

/// Empty files and server lists outside `[mcp_client]` load with a warning
/// instead of silently declaring nothing.
#[test]
fn empty_and_misplaced_server_lists_are_warnings() {
    let kinds = |loaded: Loaded| loaded.warnings.iter().map(|w| w.kind).collect::<Vec<_>>();
    for text in ["", "  \n# only a comment\n"] {
        let loaded = Config::from_toml_str(text, &options(false)).unwrap();
        assert_eq!(kinds(loaded), [WarningKind::NoServers], "{text:?}");
    }
    let loaded = Config::from_json_str(" \n", &options(false)).unwrap();
    assert_eq!(kinds(loaded), [WarningKind::NoServers]);
    let loaded = Config::from_json_str(r#"{"other": 1}"#, &options(false)).unwrap();
    assert_eq!(kinds(loaded), [WarningKind::NoServers]);
    let misplaced = "[[servers]]\nname = \"a\"\ncommand = \"x\"\n";
    let loaded = Config::from_toml_str(misplaced, &options(false)).unwrap();
    assert!(loaded.config.servers.is_empty());
    let w = &loaded.warnings[0];
    assert_eq!(w.kind, WarningKind::MisplacedServers);
    assert!(w.to_string().contains("[[mcp_client.servers]]"), "{w}");
    // A host's own tables beside no `[mcp_client]` are not a problem.
    assert!(Config::from_toml_str("[app]\nx = 1\n", &options(false)).unwrap().warnings.is_empty());
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-registry-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The format comes from the content: JSON without a `.json` name loads.
#[test]
fn the_format_is_told_from_the_content() {
    let dir = temp_dir("detect");
    let cases = [
        (
            "mcp.conf",
            "\u{feff}  {\"mcpServers\": {\"b\": {\"command\": \"y\"}}}",
            "server b stdio y",
        ),
        (
            "config",
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\n",
            "server a stdio x",
        ),
        (
            "servers.toml",
            "{\"servers\": {\"v\": {\"url\": \"http://h/\"}}}",
            "server v http http://h/",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        assert_eq!(summary(Config::load(&path, &options(false))), [expected], "{name}");
    }
    let detected = Config::from_str_detected("{\"mcpServers\": {}}", &options(false)).unwrap();
    assert!(detected.warnings.is_empty() && detected.config.servers.is_empty());
    // An empty `.json` file is empty JSON: a warning, not a syntax error.
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let loaded = Config::load(&empty, &options(false)).unwrap();
    assert_eq!(loaded.warnings[0].kind, WarningKind::NoServers);
    assert_eq!(loaded.warnings[0].path.as_deref(), Some(empty.as_path()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Errors and warnings from a file name it, with the line (and the column
/// for syntax errors).
#[test]
fn errors_and_warnings_name_the_file_and_line() {
    let dir = temp_dir("lines");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // TOML syntax: line and column.
    let path =
        write("syntax.toml", "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = x\n");
    let e = Config::load(&path, &options(false)).unwrap_err();
    assert_eq!((e.path(), e.line()), (Some(path.as_path()), Some(4)));
    assert!(matches!(e, ConfigError::Syntax { column: Some(11), .. }), "{e:?}");
    assert!(e.to_string().starts_with(&format!("{}:4:11: invalid TOML", path.display())), "{e}");
    // JSON syntax without a `.json` name.
    let path = write("syntax.conf", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}\n");
    let e = Config::load(&path, &options(false)).unwrap_err();
    assert!(e.to_string().starts_with(&format!("{}:3:", path.display())), "{e}");
    assert!(matches!(
        e,
        ConfigError::Syntax { format: "JSON", line: Some(3), column: Some(_), .. }
    ));
    // A bad value: the entry's key line.
    let path = write(
        "invalid.toml",
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[mcp_client.servers]]\nname = \"b\"\ncommand = \"y\"\ntimeout_secs = 0\n",
    );
    let e = Config::load(&path, &options(false)).unwrap_err();
    assert_eq!(e.line(), Some(9), "{e}");
    assert!(matches!(e.problem(), ConfigError::Invalid { .. }), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "{}:9: invalid MCP configuration: server \"b\", key `timeout_secs`",
            path.display()
        )),
        "{e}"
    );
    let path = write(
        "invalid.json",
        "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\": {\n    \"command\": \"y\",\n    \"args\": 3\n  }\n}}\n",
    );
    let e = Config::load(&path, &options(false)).unwrap_err();
    assert_eq!(e.line(), Some(5), "{e}");
    // Warnings: the unknown key's line.
    let path = write(
        "warn.toml",
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nbogus = 1\n",
    );
    let loaded = Config::load(&path, &options(false)).unwrap();
    let w = &loaded.warnings[0];
    assert_eq!((w.path.as_deref(), w.line), (Some(path.as_path()), Some(5)));
    assert!(
        w.to_string().starts_with(&format!("{}:5: server \"a\", key `bogus`", path.display())),
        "{w}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn protocol_per_server() {
    let toml = "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nprotocol = \"2025-11-25\"\n[[mcp_client.servers]]\nname = \"b\"\ncommand = \"y\"\nprotocol = \"auto\"\n[[mcp_client.servers]]\nname = \"c\"\nendpoint = \"https://c.example/mcp\"\nprotocol = \" 2026-07-28 \"\n";
    let loaded = Config::from_toml_str(toml, &options(true)).unwrap();
    assert_eq!(
        summary(Ok(loaded)),
        [
            "server a stdio x protocol=2025-11-25",
            "server b stdio y",
            "server c http https://c.example/mcp protocol=2026-07-28"
        ]
    );
    let json = r#"{"mcpServers": {"a": {"command": "x", "protocol": "2024-11-05"}}}"#;
    assert_eq!(
        summary(Config::from_json_str(json, &options(true))),
        ["server a stdio x protocol=2024-11-05"]
    );
    for (value, error) in [
        (
            "\"latest\"",
            "must be \"auto\" or a protocol revision: \"2024-11-05\", \"2025-03-26\", \"2025-06-18\", \"2025-11-25\", \"2026-07-28\"",
        ),
        ("20251125", "must be a string"),
    ] {
        let bad = format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nprotocol = {value}\n"
        );
        let got = summary(Config::from_toml_str(&bad, &options(false)));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains("key `protocol`") && got[0].contains(error), "{got:?}");
    }
}

#[test]
fn pin_policy_per_server() {
    let toml = "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\npin_policy = \"block\"\n[[mcp_client.servers]]\nname = \"b\"\ncommand = \"y\"\n";
    let loaded = Config::from_toml_str(toml, &options(true)).unwrap();
    assert_eq!(summary(Ok(loaded)), ["server a stdio x pins=block", "server b stdio y"]);
    let json = r#"{"mcpServers": {"a": {"command": "x", "pin_policy": "allow"}}}"#;
    assert_eq!(
        summary(Config::from_json_str(json, &options(true))),
        ["server a stdio x pins=allow"]
    );
    let bad = "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\npin_policy = \"never\"\n";
    assert_eq!(
        summary(Config::from_toml_str(bad, &options(false))),
        [
            "error invalid MCP configuration: server \"a\", key `pin_policy`: must be \"warn\", \"block\" or \"allow\""
        ]
    );
}

/// `mcp_client.token_store` and `keychain_service`: the store kind (files
/// by default), in TOML and in the JSON `mcp_client` shape; a value that is
/// not a kind, or a blank service, is an error naming the file and the key.
#[cfg(feature = "http")]
#[test]
fn token_store_kind_and_keychain_service() {
    use mcp_host_registry::TokenStoreConfig;
    use mcp_host_registry::mcp_auth::StoreKind;
    let opts = options(true);
    let default = Config::from_toml_str("[mcp_client]\n", &opts).unwrap().config.token_store;
    assert_eq!(default, TokenStoreConfig::default());
    assert_eq!((default.kind, default.service("mcpc")), (StoreKind::File, "mcpc"));
    for (word, kind) in
        [("file", StoreKind::File), ("keychain", StoreKind::Keychain), ("auto", StoreKind::Auto)]
    {
        let toml =
            format!("[mcp_client]\ntoken_store = \"{word}\"\nkeychain_service = \" my-host \"\n");
        let loaded = Config::from_toml_str(&toml, &opts).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let store = loaded.config.token_store;
        assert_eq!((store.kind, store.service("mcpc")), (kind, "my-host"));
    }
    let json = r#"{"mcp_client": {"token_store": "auto", "servers": []}}"#;
    let loaded = Config::from_str_detected(json, &opts).unwrap();
    assert_eq!(loaded.config.token_store.kind, StoreKind::Auto);
    // A disabled configuration keeps its store settings (logout still works).
    let off = "[mcp_client]\nenabled = false\ntoken_store = \"keychain\"\n";
    assert_eq!(
        Config::from_toml_str(off, &opts).unwrap().config.token_store.kind,
        StoreKind::Keychain
    );

    let dir = temp_dir("token-store");
    let file = dir.join("mcp.toml");
    for (text, key, reason) in [
        (
            "token_store = \"vault\"",
            "mcp_client.token_store",
            "must be \"file\", \"keychain\" or \"auto\"",
        ),
        ("token_store = \"Keychain\"", "mcp_client.token_store", "must be"),
        ("token_store = 1", "mcp_client.token_store", "string"),
        ("keychain_service = \"  \"", "mcp_client.keychain_service", "must not be blank"),
    ] {
        std::fs::write(&file, format!("[mcp_client]\n{text}\n")).unwrap();
        // Lenient loading too: an unusable store is never a warning.
        let err = Config::load(&file, &options(false)).unwrap_err().to_string();
        assert!(err.contains("mcp.toml:2") && err.contains(key) && err.contains(reason), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
