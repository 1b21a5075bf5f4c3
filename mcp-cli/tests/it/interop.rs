//! Interop: `mcpc --server` against `@modelcontextprotocol/server-everything`
//! from npm, a server nobody in this project wrote, over stdio and over
//! Streamable HTTP (the handshake era), and against a server written with
//! the TypeScript SDK v2 (`xtask/interop/ts-server.mjs`, the stateless era).
//!
//! MCP Apps: against `@modelcontextprotocol/server-map` (an official example
//! app server) and a server written with `@modelcontextprotocol/ext-apps`
//! (`xtask/interop/apps-server.mjs`).
//!
//! `cargo xtask interop` installs the pinned versions and runs this file with
//! `MCP_EVERYTHING_JS`, `MCP_TS_SERVER_JS`, `MCP_APPS_SERVER_JS` and
//! `MCP_MAP_SERVER_JS` set to their entry points (compiled only with the
//! `interop-tests` feature).

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::{Run, json_of, run_bounded};

/// How long one `mcpc` run may take (npm servers start slowly).
const RUN_LIMIT: Duration = Duration::from_secs(90);
/// How long the HTTP server may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(30);

fn everything_js() -> String {
    std::env::var("MCP_EVERYTHING_JS").expect(
        "MCP_EVERYTHING_JS must point at server-everything's dist/index.js: run `cargo xtask interop`",
    )
}

fn mcpc(args: &[&str]) -> Run {
    let dir = std::env::temp_dir().join(format!("mcpc-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpc"));
    cmd.args(args)
        .current_dir(&dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    run_bounded(cmd, RUN_LIMIT)
}

#[test]
fn everything_over_stdio() {
    let spec = format!("node {} stdio", everything_js());
    let r = mcpc(&["--server", &spec, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    for tool in ["echo", "get-sum", "get-tiny-image"] {
        assert!(r.stdout.lines().any(|l| l.trim_start().starts_with(tool)), "{tool}: {r:?}");
    }
    let r = mcpc(&["--server", &spec, "call", "echo", "message=hello, everything"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("hello, everything"), "{r:?}");
    let r = mcpc(&["--server", &spec, "call", "get-sum", "a=19", "b=23"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("42"), "{r:?}");
    let r = mcpc(&["--server", &spec, "call", "get-tiny-image"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("[image: image/png"), "{r:?}");
    let r = mcpc(&[
        "--server",
        &spec,
        "--output",
        "json",
        "call",
        "get-sum",
        "--json",
        "{\"a\": 1, \"b\": 2}",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert!(v["content"].is_array(), "{r:?}");
}

/// The HTTP server process, killed (by its own handle) when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_loopback_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap().local_addr().unwrap().port()
}

#[test]
fn everything_over_streamable_http() {
    let port = free_loopback_port();
    let server = Server(
        Command::new("node")
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts"),
    );
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + LISTEN_LIMIT;
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < deadline, "server-everything did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let r = mcpc(&["--server", &url, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().any(|l| l.trim_start().starts_with("get-sum")), "{r:?}");
    let r = mcpc(&["--server", &url, "-H", "X-Interop: yes", "call", "echo", "message=over http"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("over http"), "{r:?}");
    let r = mcpc(&["--server", &url, "ping"]);
    assert_eq!(r.code, 0, "{r:?}");
    drop(server);
}

#[test]
fn everything_is_shown_in_the_handshake_era() {
    let spec = format!("node {} stdio", everything_js());
    let r = mcpc(&["--server", &spec, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let header = r.stdout.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("server: ") && header.ends_with(" (2025-11-25, legacy era)"),
        "{r:?}"
    );
}

#[test]
fn the_ts_sdk_v2_server_is_shown_in_the_stateless_era() {
    let js = std::env::var("MCP_TS_SERVER_JS").expect(
        "MCP_TS_SERVER_JS must point at the installed ts-server.mjs: run `cargo xtask interop`",
    );
    let spec = format!("node {js} stdio");
    let r = mcpc(&["--server", &spec, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let header = r.stdout.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("server: ") && header.ends_with(" (2026-07-28, modern era)"),
        "{r:?}"
    );
    let r = mcpc(&["--server", &spec, "--output", "json", "servers", "--connect"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (v[0]["protocol_version"].as_str(), v[0]["era"].as_str()),
        (Some("2026-07-28"), Some("modern")),
        "{r:?}"
    );
    // No `ping` in that era: the round trip is a server/discover.
    let r = mcpc(&["--server", &spec, "ping"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.ends_with(" ms (2026-07-28, modern era)\n"), "{r:?}");
    let r = mcpc(&["--server", &spec, "call", "add", "a=19", "b=23"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("\"sum\": 42"), "{r:?}");
}

#[test]
fn everything_info_resources_prompts_and_completion() {
    let spec = format!("node {} stdio", everything_js());
    let r = mcpc(&["--server", &spec, "--output", "json", "info"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    assert!(v["server_info"]["name"].as_str().is_some_and(|n| !n.is_empty()), "{r:?}");
    assert!(v["capabilities"]["resources"].is_object(), "{r:?}");
    assert!(v["capabilities"]["prompts"].is_object(), "{r:?}");
    let r = mcpc(&["--server", &spec, "info"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("  protocol      2025-11-25 (legacy era)"), "{r:?}");

    // Every listed resource's URI reads back.
    let r = mcpc(&["--server", &spec, "--output", "json", "resources", "list"]);
    assert_eq!(r.code, 0, "{r:?}");
    let resources = json_of(&r)["resources"].as_array().cloned().unwrap_or_default();
    assert!(!resources.is_empty(), "{r:?}");
    let uri = resources[0]["uri"].as_str().unwrap().to_owned();
    let r = mcpc(&["--server", &spec, "--output", "json", "resources", "read", &uri]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(json_of(&r)["contents"][0]["uri"], uri.as_str(), "{r:?}");
    let r = mcpc(&["--server", &spec, "resources", "templates"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("server: "), "{r:?}");

    // A prompt without required arguments, got; a prompt's argument,
    // completed.
    let r = mcpc(&["--server", &spec, "--output", "json", "prompts", "list"]);
    assert_eq!(r.code, 0, "{r:?}");
    let prompts = json_of(&r)["prompts"].as_array().cloned().unwrap_or_default();
    let required = |p: &serde_json::Value| {
        p["arguments"].as_array().is_some_and(|a| a.iter().any(|x| x["required"] == true))
    };
    let plain = prompts.iter().find(|p| !required(p)).expect("a prompt without required arguments");
    let name = plain["name"].as_str().unwrap();
    let r = mcpc(&["--server", &spec, "--output", "json", "prompts", "get", name]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(json_of(&r)["messages"].as_array().is_some_and(|m| !m.is_empty()), "{r:?}");
    if let Some(with_args) =
        prompts.iter().find(|p| p["arguments"].as_array().is_some_and(|a| !a.is_empty()))
    {
        let prompt = with_args["name"].as_str().unwrap();
        let argument = with_args["arguments"][0]["name"].as_str().unwrap();
        let r = mcpc(&[
            "--server",
            &spec,
            "--output",
            "json",
            "complete",
            "--prompt",
            prompt,
            &format!("{argument}="),
        ]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(json_of(&r)["completion"]["values"].is_array(), "{r:?}");
    }
    let r = mcpc(&["--server", &spec, "--output", "json", "ping"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    assert!(v["ms"].is_number() && v["connect_ms"].is_number(), "{r:?}");
}

fn peer(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} must be set: run `cargo xtask interop`"))
}

#[test]
fn mcp_apps_tools_views_and_the_declared_extension() {
    let spec = format!("node {}", peer("MCP_APPS_SERVER_JS"));
    // Tools with a view are marked; the one only the view may call too.
    let r = mcpc(&["--apps", "--server", &spec, "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let line = |tool: &str| {
        r.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{tool} ")))
            .unwrap_or_else(|| panic!("{tool}: {r:?}"))
            .to_owned()
    };
    assert!(line("show-chart").contains("[app]"), "{r:?}");
    assert!(line("refresh-chart").contains("[app only]"), "{r:?}");
    assert!(!line("plain").contains("[app"), "{r:?}");
    let r = mcpc(&["--apps", "--server", &spec, "--output", "json", "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    let tools = v[0]["tools"].as_array().unwrap();
    let app = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["app"].clone();
    assert_eq!(
        app("refresh-chart"),
        serde_json::json!({"view": "ui://interop/chart.html", "app_only": true})
    );
    assert_eq!(
        app("show-chart"),
        serde_json::json!({"view": "ui://interop/chart.html", "app_only": false})
    );
    assert!(app("plain").is_null());
    // The extension reaches the server as declared, and only with --apps,
    // in either era.
    for era in ["auto", "2025-11-25"] {
        let r = mcpc(&["--apps", "--protocol", era, "--server", &spec, "call", "ui-capability"]);
        assert_eq!(
            (r.code, r.stdout.trim()),
            (0, r#"{"mimeTypes":["text/html;profile=mcp-app"]}"#),
            "{era}: {r:?}"
        );
        let r = mcpc(&["--protocol", era, "--server", &spec, "call", "ui-capability"]);
        assert_eq!((r.code, r.stdout.trim()), (0, "null"), "{era}: {r:?}");
    }
    // The view: its HTML on stdout, what it asks of the host on stderr.
    let r = mcpc(&["--apps", "--server", &spec, "resources", "read", "ui://interop/chart.html"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("<!doctype html>"), "{r:?}");
    for shown in [
        "MCP App view ui://interop/chart.html",
        "connect: https://api.example.com",
        "resources: https://cdn.example.com",
        "frames: none",
        "permissions: clipboardWrite geolocation",
        "border: yes",
    ] {
        assert!(r.stderr.contains(shown), "{shown}: {r:?}");
    }
    // A person may call a tool only the view may call.
    let r = mcpc(&["--apps", "--server", &spec, "call", "refresh-chart"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "refreshed"), "{r:?}");
}

#[test]
fn the_official_map_app_server() {
    let spec = format!("node {} --stdio", peer("MCP_MAP_SERVER_JS"));
    let r = mcpc(&["--apps", "--server", &spec, "--output", "json", "tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    let tools = v[0]["tools"].as_array().unwrap();
    let map = tools.iter().find(|t| t["name"] == "show-map").unwrap_or_else(|| panic!("{v}"));
    let view = map["app"]["view"].as_str().unwrap_or_else(|| panic!("{map}"));
    assert!(view.starts_with("ui://"), "{map}");
    assert_eq!(map["app"]["app_only"], false);
    let r = mcpc(&["--apps", "--server", &spec, "resources", "read", view]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains(&format!("MCP App view {view}")), "{r:?}");
    assert!(r.stdout.to_ascii_lowercase().contains("<html"), "{}", &r.stderr);
}
