//! Reaching servers: a server given on the command line over stdio, HTTP
//! and a Unix socket, the protocol version and era of each, and pinning it.

use std::path::Path;

use mcp_testkit::{HttpConfig, serve_http};
use serde_json::Value;

use super::testkit;
use crate::run::{Sandbox, json_of};

#[test]
fn server_spec_over_stdio_and_http() {
    let s = Sandbox::new("spec");
    let spec = format!("  {} stdio  ", testkit());
    let r = s.run(&["--server", &spec, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("server: "), "{r:?}");
    let r = s.run(&["--server", &spec, "call", "echo", "message=over stdio"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "over stdio\n"), "{r:?}");
    let r = s.run(&["--server", &spec, "call", "server", "echo", "message=named"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "named\n"), "{r:?}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let http = rt
        .block_on(serve_http(HttpConfig {
            require_auth: Some("tok-1".into()),
            ..Default::default()
        }))
        .unwrap();
    // Upper-case scheme, path kept verbatim.
    let url = http.url().replacen("http://", "HTTP://", 1);
    let r = s.run(&[
        "--server",
        &url,
        "-H",
        "Authorization: Bearer wrong",
        "-H",
        "authorization:  Bearer tok-1 ",
        "call",
        "echo",
        "message=over http",
    ]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "over http\n"), "{r:?}");
    let r = s.run(&["--server", &url, "ping"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("unauthorized"), "{r:?}");
    let r = s.run(&[
        "--server",
        &url,
        "-H",
        "Authorization: Bearer tok-1",
        "--output",
        "json",
        "tools",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v[0]["server"], "server");
    assert!(!r.stderr.contains("tok-1") && !r.stdout.contains("tok-1"));
    rt.block_on(http.shutdown());
}

#[test]
fn each_server_shows_its_protocol_version_and_era() {
    let s = Sandbox::new("eras");
    let toml = format!(
        r#"
[mcp_client]
[[mcp_client.servers]]
name = "old"
command = "{tk}"
args = ["stdio"]
[[mcp_client.servers]]
name = "new"
command = "{tk}"
args = ["stdio", "--era", "modern"]
description = "stateless"
"#,
        tk = testkit()
    );
    s.write_approved("mcp.toml", &toml);

    let r = s.run(&["tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let headers: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(headers.len(), 3, "{r:?}"); // two headers and the blank line between
    assert!(
        headers[0].starts_with("old: ") && headers[0].ends_with(" tools (2025-11-25, legacy era)"),
        "{r:?}"
    );
    assert!(
        headers[2].starts_with("new: ") && headers[2].ends_with(" tools (2026-07-28, modern era)"),
        "{r:?}"
    );

    let r = s.run(&["--output", "json", "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (&v[0]["server"], &v[0]["protocol_version"], &v[0]["era"]),
        (&"old".into(), &"2025-11-25".into(), &"legacy".into()),
        "{r:?}"
    );
    assert_eq!(
        (&v[1]["server"], &v[1]["protocol_version"], &v[1]["era"]),
        (&"new".into(), &"2026-07-28".into(), &"modern".into()),
        "{r:?}"
    );
    assert!(v[1]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{r:?}");

    // Listing the servers connects nothing unless asked to.
    let r = s.run(&["servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("legacy") && !r.stdout.contains("2026-07-28"), "{r:?}");
    let r = s.run(&["--output", "json", "servers"]);
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    for server in v.as_array().unwrap() {
        assert_eq!(server["connected"], false, "{r:?}");
        assert!(server["protocol_version"].is_null() && server["era"].is_null(), "{r:?}");
    }

    let r = s.run(&["servers", "--connect"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{r:?}");
    assert!(
        lines[0].starts_with("old  stdio  ") && lines[0].ends_with("  2025-11-25 legacy"),
        "{r:?}"
    );
    assert!(
        lines[1].starts_with("new  stdio  ")
            && lines[1].ends_with("  2026-07-28 modern  stateless"),
        "{r:?}"
    );
    let r = s.run(&["--output", "json", "servers", "--connect"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v[0]["connected"], true, "{r:?}");
    assert_eq!(v[0]["era"], "legacy", "{r:?}");
    assert_eq!(v[1]["protocol_version"], "2026-07-28", "{r:?}");
    assert_eq!(v[1]["era"], "modern", "{r:?}");

    // A stateless server has no `ping`: the round trip still works.
    let r = s.run(&["ping", "new"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with("new: pong in ")
            && r.stdout.ends_with(" ms (2026-07-28, modern era)\n"),
        "{r:?}"
    );
    let r = s.run(&["--output", "json", "ping", "old"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!((v["ok"].as_bool(), v["era"].as_str()), (Some(true), Some("legacy")), "{r:?}");
    // The demo server too.
    let d = Sandbox::new("eras-demo");
    let r = d.run(&["tools"]);
    assert!(r.stdout.lines().next().unwrap().ends_with(" (2025-11-25, legacy era)"), "{r:?}");

    // One server that cannot start: reported, the others still shown, exit 3.
    let json = format!(
        r#"{{"mcpServers": {{"new": {{"command": "{tk}", "args": ["stdio", "--era", "modern"]}}, "bad": {{"command": "/nonexistent/srv"}}}}}}"#,
        tk = testkit()
    );
    let path = s.write("other/two.json", &json);
    let r = s.run(&["--config", path.to_str().unwrap(), "servers", "--connect"]);
    assert_eq!(r.code, 3, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("new ") && lines[0].ends_with("2026-07-28 modern"), "{r:?}");
    assert!(lines[1].starts_with("bad ") && lines[1].ends_with("unreachable"), "{r:?}");
    assert!(r.stderr.contains("\"bad\""), "{r:?}");
    let r =
        s.run(&["--config", path.to_str().unwrap(), "--output", "json", "servers", "--connect"]);
    assert_eq!(r.code, 3, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v[0]["era"], "modern", "{r:?}");
    assert!(v[1]["error"].is_string() && v[1]["era"].is_null(), "{r:?}");
    assert_eq!(v[1]["connected"], false, "{r:?}");
}

#[test]
fn the_stateless_era_too() {
    let s = Sandbox::new("modern");
    let spec = format!("{} stdio --era modern", testkit());
    let r = s.run(&["--server", &spec, "info"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("  protocol      2026-07-28 (modern era)"), "{r:?}");
    // The log level rides on each request.
    let r = s.run(&[
        "--server",
        &spec,
        "--log-level",
        "info",
        "call",
        "log",
        "level=notice",
        "message=per request",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("server: [notice] mcp-testkit: per request"), "{r:?}");
    // Roots answer an input request of the call.
    let r = s.run(&["--server", &spec, "--root", "/srv", "call", "ask", "what=roots"]);
    assert_eq!(json_of(&r)["result"]["roots"][0]["uri"], "file:///srv", "{r:?}");
    let r = s.run(&["--server", &spec, "resources", "read", "test://static/text/4"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "This is text resource 4.\n"), "{r:?}");
}

#[cfg(unix)]
#[test]
fn a_server_behind_a_unix_socket() {
    let s = Sandbox::new("unix-socket");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http = rt.block_on(serve_http(HttpConfig::default())).unwrap();
    let socket = s.dir.join("mcp.sock");
    let _relay = rt.block_on(async { mcp_test_support::unix_relay(&socket, http.local_addr()) });
    let spec = format!("unix:{}", socket.display());
    let r = s.run(&["--server", &spec, "call", "echo", "message=over a socket"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "over a socket\n"), "{r:?}");
    // In a configuration, shown as the socket.
    let config = s.write_approved(
        "mcp.toml",
        &format!("[mcp_client]\n[[mcp_client.servers]]\nname = \"sock\"\nendpoint = {spec:?}\n"),
    );
    let r = s.run(&["--config", config.to_str().unwrap(), "servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains(&spec), "{r:?}");
    let r = s.run(&["--config", config.to_str().unwrap(), "call", "echo", "message=configured"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "configured\n"), "{r:?}");
    drop(http);
}

/// A handshake-era server that exits on a method it does not know
/// (`tests/data/strict_server.py`), as a `--server` command.
fn strict_server() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/strict_server.py");
    format!("python3 {}", script.display())
}

#[test]
fn a_server_that_dies_on_the_probe_is_reached_once_its_protocol_is_pinned() {
    let s = Sandbox::new("protocol-pin");
    let server = strict_server();
    // Unpinned, the era probe ends it: the error says to pin it.
    let r = s.run(&["--server", &server, "call", "echo", "message=hi"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("server/discover"), "{r:?}");
    assert!(r.stderr.contains("--protocol 2025-11-25"), "{r:?}");
    // Pinned on the command line: `initialize` first, no probe.
    let r = s.run(&["--protocol", "2025-11-25", "--server", &server, "call", "echo", "message=hi"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "hi"), "{r:?}");
    // Pinned in the configuration, shown by `servers`, and `auto` on the
    // command line lifts the pin again.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/strict_server.py");
    let config = s.write(
        "pinned.toml",
        &format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"strict\"\ncommand = \"python3\"\nargs = [{:?}]\nprotocol = \"2025-11-25\"\n",
            script.display().to_string()
        ),
    );
    let config = config.to_str().unwrap();
    let r = s.run(&["--config", config, "servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("pinned 2025-11-25"), "{r:?}");
    let r = s.run(&["--config", config, "--output", "json", "servers", "--connect"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    assert_eq!(
        (v[0]["protocol"].as_str(), v[0]["protocol_version"].as_str()),
        (Some("2025-11-25"), Some("2025-11-25")),
        "{v}"
    );
    let r = s.run(&["--config", config, "call", "echo", "message=pinned"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "pinned"), "{r:?}");
    let r = s.run(&["--config", config, "--protocol", "auto", "tools"]);
    assert_eq!(r.code, 3, "{r:?}");
    // A revision nobody speaks is a usage error naming the known ones.
    let r = s.run(&["--protocol", "2099-01-01", "--server", &server, "tools"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("2026-07-28"), "{r:?}");
    // And in the configuration, an error that names the key.
    let bad = s.write("bad.toml", "[mcp_client]\n[[mcp_client.servers]]\nname = \"x\"\ncommand = \"true\"\nprotocol = \"latest\"\n");
    let r = s.run(&["--config", bad.to_str().unwrap(), "servers"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("protocol"), "{r:?}");
}
