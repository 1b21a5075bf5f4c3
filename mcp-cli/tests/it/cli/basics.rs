//! Calls against the embedded demo server: every method, the output
//! forms, progress, timeouts, exit codes and shell completions.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::testkit;
use crate::run::{Sandbox, json_of};

#[test]
fn demo_lists_tools_and_calls_them() {
    let s = Sandbox::new("demo");
    let r = s.run(&["tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("demo: "), "{r:?}");
    assert!(r.stdout.lines().any(|l| l.starts_with("  echo ")), "{r:?}");
    assert!(r.stdout.lines().any(|l| l.starts_with("  add ")), "{r:?}");

    let r = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "hi\n"), "{r:?}");
    // One server: its name may be left out; a number-looking string stays a string.
    let r = s.run(&["call", "echo", "message=123"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "123\n"), "{r:?}");

    let r = s.run(&["call", "demo", "add", "a=2", "b=3.5"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "5.5\n\nstructuredContent:\n{\n  \"sum\": 5.5\n}\n", "{r:?}");

    let r = s.run(&[
        "--output",
        "json",
        "call",
        "demo",
        "add",
        "--json",
        "{\"a\": 1, \"b\": 1}",
        "b=4",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["structuredContent"]["sum"], 5.0, "{r:?}");
    assert_eq!(v["content"][0]["text"], "5", "{r:?}");

    let r = s.run(&["call", "demo", "fail", "message=boom"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, "boom\n"), "{r:?}");

    let r = s.run(&["ping"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("demo: pong in "), "{r:?}");

    let r = s.run(&["servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("demo  stdio  "), "{r:?}");
    assert!(r.stdout.contains("__demo-server"), "{r:?}");

    let r = s.run(&["--output", "json", "tools", "demo"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v[0]["server"], "demo");
    assert!(v[0]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"));
}

#[test]
fn progress_bar_on_stderr() {
    let s = Sandbox::new("progress");
    let r = s.run(&["call", "demo", "slow", "ms=300", "steps=3", "--progress", "always"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "done\n"), "{r:?}");
    assert!(r.stderr.contains("100% 3/3"), "{r:?}");
    assert!(r.stderr.contains("step 3 of 3"), "{r:?}");
    assert!(!r.stderr.contains("\x1b[36m"), "NO_COLOR is set: {r:?}");
    // Not a terminal, auto: no bar.
    let r = s.run(&["call", "demo", "slow", "ms=100", "steps=2"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.is_empty(), "{r:?}");
}

#[test]
fn usage_errors_exit_2() {
    let s = Sandbox::new("usage");
    let cases: &[(&[&str], &str)] = &[
        (&[], "Usage: mcpc [OPTIONS] <COMMAND>"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (&["--output", "yaml", "tools"], "invalid value 'yaml' for '--output"),
        (&["tools", "a", "b"], "unexpected argument 'b'"),
        (&["--timeout", "0", "call", "echo"], "expected a number of seconds"),
        (&["-e", "NOVALUE", "tools"], "-e takes KEY=VALUE"),
        (&["--server", "srv 'unclosed", "tools"], "cannot split the command into words"),
        (&["--cwd", "no/such/dir", "tools"], "--cwd no/such/dir: no such directory"),
        (&["call", "demo"], "call demo needs a TOOL"),
        (&["call", "demo", "echo", "message"], "expected key=value"),
        (&["call", "demo", "add", "a=x", "b=1"], "argument \"a\" must be number"),
        (&["call", "demo", "nosuch"], "MCP server \"demo\" has no tool named \"nosuch\""),
        (&["call", "demo", "echo", "--json", "[1]"], "--json must be a JSON object"),
        (&["tools", "nope"], "no server is named \"nope\" (servers: demo)"),
        (&["login", "demo"], "is not configured for OAuth"),
        (&["logout"], "is not configured for OAuth"),
        (&["logout", "nope"], "no server is named \"nope\""),
        (&["--server", "", "tools"], "give a URL"),
        (&["--server", "   ", "tools"], "or a command to spawn"),
        (
            &["--server", "some-command --flag", "-H", "X-Key: 1", "tools"],
            "headers (-H) can only be sent",
        ),
        (&["-H", "X-Key: 1", "tools"], "-H is for a server given with --server URL"),
        (&["--server", "http://127.0.0.1:9/mcp", "--config", "x.toml", "tools"], "not both"),
        (&["--config", "missing.toml", "tools"], "does not exist"),
    ];
    for (args, expected) in cases {
        let r = s.run(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains(expected), "{args:?}: expected {expected:?} in {r:?}");
        assert!(r.stdout.is_empty(), "{args:?}: {r:?}");
    }
    // The empty spec shows both forms.
    let r = s.run(&["--server", "", "tools"]);
    assert!(r.stderr.contains("https://example.com/mcp") && r.stderr.contains("npx -y"), "{r:?}");
    for args in [&["--help"][..], &["-V"][..], &["help"][..]] {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains("mcpc"), "{r:?}");
    }
}

#[test]
fn connection_failures_exit_3() {
    let s = Sandbox::new("conn");
    // Nothing listens on port 1. The message names the server once, with
    // the URL's path.
    let r = s.run(&["--server", "http://127.0.0.1:1/some/path?key=secret", "tools"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.contains("MCP server \"server\" (http://127.0.0.1:1/some/path): server/discover failed to connect"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("server: MCP server") && !r.stderr.contains("secret"), "{r:?}");
    // `http:/x` is not a URL: it is spawned as a command, and not found.
    let r = s.run(&["--server", "http:/x", "tools"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("http:/x"), "{r:?}");
    let r = s.run(&["--server", "httpx://127.0.0.1:1/mcp", "ping"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("httpx://127.0.0.1:1/mcp"), "{r:?}");
    // A server that dies mid-call.
    let r = s.run(&["call", "demo", "crash", "stderr=going down"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("going down"), "{r:?}");
}

#[test]
fn every_method_against_the_demo_server() {
    let s = Sandbox::new("methods");
    let r = s.run(&["info"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("demo: mcp-testkit "), "{r:?}");
    assert_eq!(lines[1], "  protocol      2025-11-25 (legacy era)", "{r:?}");
    assert!(lines[2].contains("resources (listChanged, subscribe)"), "{r:?}");
    assert!(r.stdout.contains("  instructions\n    A scriptable test server"), "{r:?}");
    let v = json_of(&s.run(&["--output", "json", "info"]));
    assert_eq!(
        (&v["server"], &v["server_info"]["name"], &v["protocol_version"], &v["era"]),
        (&"demo".into(), &"mcp-testkit".into(), &"2025-11-25".into(), &"legacy".into())
    );
    assert_eq!(v["capabilities"]["resources"]["subscribe"], true, "{v}");
    assert!(v["instructions"].as_str().unwrap().starts_with("A scriptable test server"));

    let r = s.run(&["resources", "list"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().next(), Some("demo: 6 resources"), "{r:?}");
    assert!(r.stdout.contains("  test://static/blob/1  application/octet-stream  blob-1"), "{r:?}");
    let v = json_of(&s.run(&["--output", "json", "resources", "list", "demo"]));
    assert_eq!(v["resources"].as_array().unwrap().len(), 6, "{v}");
    let r = s.run(&["resources", "templates"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("  test://static/text/{id}  text/plain"), "{r:?}");

    // Golden: a text resource, in both forms; a blob as its size.
    let r = s.run(&["resources", "read", "test://static/text/2"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "This is text resource 2.\n"), "{r:?}");
    let r = s.run(&["--output", "json", "resources", "read", "demo", "test://static/text/2"]);
    assert_eq!(
        json_of(&r),
        serde_json::json!({"server": "demo", "contents": [{
            "uri": "test://static/text/2", "mimeType": "text/plain", "text": "This is text resource 2."
        }]})
    );
    let r = s.run(&["resources", "read", "test://static/blob/1"]);
    assert!(r.stdout.starts_with("[blob: application/octet-stream, 24 bytes"), "{r:?}");
    // A resource the server does not have: its error, exit 3.
    let r = s.run(&["resources", "read", "test://nope"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("MCP server \"demo\"") && r.stderr.contains("-32002"), "{r:?}");

    let r = s.run(&["prompts", "list"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().any(|l| l.starts_with("  greet   name ")), "{r:?}");
    let r = s.run(&["prompts", "get", "greet", "name=Ada"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "demo: A greeting\n[user] Hello, Ada!\n"), "{r:?}");
    let r = s.run(&["prompts", "get", "demo", "greet", "name=Ada", "--output", "json"]);
    assert_eq!(json_of(&r)["messages"][0]["content"]["text"], "Hello, Ada!", "{r:?}");
    let r = s.run(&["prompts", "get", "greet"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("-32602"), "{r:?}");

    let r = s.run(&["complete", "--prompt", "greet", "name=", "--output", "json"]);
    assert_eq!(
        json_of(&r),
        serde_json::json!({"server": "demo", "completion": {"values": ["alice", "bob", "carol"], "total": 3, "hasMore": false}})
    );
    let r = s.run(&["complete", "--prompt", "greet", "name=b"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "bob\n"), "{r:?}");
    let r = s.run(&["complete", "demo", "--resource", "test://static/text/{id}", "id="]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "1\n2\n3\n4\n5\n"), "{r:?}");

    // Tasks: a call as a task, followed to its result; the list of a fresh
    // server; an unknown task.
    let r = s.run(&["call", "--task", "slow", "ms=200"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "done\n"), "{r:?}");
    assert!(r.stderr.contains("mcpc: task task-1 working"), "{r:?}");
    let r = s.run(&["--output", "json", "call", "--task", "--detach", "slow", "ms=200"]);
    let v = json_of(&r);
    assert_eq!(
        (&v["server"], &v["task"]["taskId"], &v["task"]["status"]),
        (&"demo".into(), &"task-1".into(), &"working".into())
    );
    let r = s.run(&["call", "--task", "fail", "message=boom"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, "boom\n"), "{r:?}");
    let r = s.run(&["tasks", "list"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "demo: 0 tasks\n"), "{r:?}");
    for what in ["get", "cancel", "result"] {
        let r = s.run(&["--output", "json", "tasks", what, "task-9"]);
        assert_eq!(r.code, 3, "{r:?}");
        let v = json_of(&r);
        assert_eq!(
            (&v["error"]["kind"], &v["error"]["server"]),
            (&"protocol".into(), &"demo".into()),
            "{r:?}"
        );
    }
}

#[test]
fn errors_as_json_with_their_exit_codes() {
    let s = Sandbox::new("json-errors");
    // Golden: the shape, for an unknown server (also in `call`, where the
    // first word could have been a tool).
    for args in [
        &["--output", "json", "call", "nosuchserver", "echo", "message=hi"][..],
        &["--output", "json", "tools", "nosuchserver"],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(
            json_of(&r),
            serde_json::json!({"error": {
                "kind": "not_found",
                "message": "no server is named \"nosuchserver\" (servers: demo)",
                "server": "nosuchserver",
                "exit_code": 2,
            }})
        );
    }
    let r = s.run(&["call", "nosuchserver", "echo", "message=hi"]);
    assert!(r.stderr.contains("no server is named \"nosuchserver\""), "{r:?}");
    let cases: &[(&[&str], &str, i32)] = &[
        (&["--output", "json", "frobnicate"], "usage", 2),
        (&["--output=json", "call", "demo", "nosuch"], "not_found", 2),
        (&["--output", "json", "call", "demo", "echo", "message"], "usage", 2),
        (&["--output", "json", "--server", "https://me:pw@127.0.0.1:1/mcp", "tools"], "config", 2),
        (&["--output", "json", "--config", "missing.toml", "tools"], "config", 2),
        (&["--output", "json", "--server", "http://127.0.0.1:1/mcp", "ping"], "connection", 3),
        (&["--output", "json", "--timeout", "0.5", "call", "hang"], "timeout", 3),
        (&["--output", "json", "call", "crash"], "connection", 3),
    ];
    for (args, kind, code) in cases {
        let r = s.run(args);
        assert_eq!(r.code, *code, "{args:?}: {r:?}");
        let v = json_of(&r);
        assert_eq!(v["error"]["kind"], *kind, "{args:?}: {r:?}");
        assert_eq!(v["error"]["exit_code"], *code, "{args:?}: {r:?}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(!message.is_empty() && !message.contains("StaticAuth"), "{args:?}: {r:?}");
        assert!(!r.stdout.contains("pw@"), "{r:?}");
    }
    let v = json_of(&s.run(&["--output", "json", "--server", "http://127.0.0.1:1/a/b", "ping"]));
    assert_eq!(v["error"]["server"], "server");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("MCP server \"server\" (http://127.0.0.1:1/a/b): "),
        "{v}"
    );
}

#[test]
fn ping_reports_the_connect_time_apart() {
    let s = Sandbox::new("ping");
    // A server that takes half a second to start.
    let spec = format!("sh -c 'sleep 0.5; exec \"{}\" stdio'", testkit());
    let r = s.run(&["--server", &spec, "--output", "json", "ping"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    let (ms, connect_ms) = (v["ms"].as_f64().unwrap(), v["connect_ms"].as_f64().unwrap());
    assert!(connect_ms >= 500.0, "{r:?}");
    assert!(ms < 400.0 && ms < connect_ms, "the round trip alone: {r:?}");
    let r = s.run(&["--server", &spec, "ping"]);
    assert!(
        r.stdout.starts_with("server: pong in ") && r.stdout.contains(" ms, connected in "),
        "{r:?}"
    );
}

#[test]
fn a_server_that_ignores_the_end_of_its_input_does_not_hold_up_the_run() {
    let s = Sandbox::new("grace");
    // The shell goes on (sleeping) after the server has read its input's
    // end: mcpc waits its short grace, then ends the process group.
    let spec = format!("sh -c '\"{}\" stdio; sleep 30'", testkit());
    let start = Instant::now();
    let r = s.run(&["--server", &spec, "ping"]);
    let took = start.elapsed();
    assert_eq!(r.code, 0, "{r:?}");
    // The stdio transport's own default grace (2 s) would be spent twice.
    assert!(took < Duration::from_millis(1500), "the run took {took:?}: {r:?}");
}

#[test]
fn completions_generate_for_each_shell() {
    let s = Sandbox::new("completions");
    for shell in ["bash", "zsh", "fish"] {
        let r = s.run(&["completions", shell]);
        assert_eq!(r.code, 0, "{r:?}");
        for word in ["mcpc", "resources", "prompts", "connect-timeout"] {
            assert!(r.stdout.contains(word), "{shell}: {word} missing");
        }
    }
    let r = s.run(&["completions", "tcsh"]);
    assert_eq!(r.code, 2, "{r:?}");
    // Every command has its own help.
    for command in [
        "servers",
        "info",
        "tools",
        "call",
        "ping",
        "resources",
        "prompts",
        "complete",
        "tasks",
        "listen",
        "login",
        "logout",
        "completions",
    ] {
        let r = s.run(&[command, "--help"]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains(&format!("Usage: mcpc {command}")), "{command}: {r:?}");
    }
    let r = s.run(&["resources", "read", "--help"]);
    assert!(r.stdout.contains("Usage: mcpc resources read [OPTIONS] <ARGS>..."), "{r:?}");
    let r = s.run(&["--help"]);
    assert!(r.stdout.contains("shell-words") && r.stdout.contains("\"exit_code\""), "{r:?}");
}

#[test]
fn progress_restarts_the_timeout_up_to_the_maximum() {
    let s = Sandbox::new("timeouts");
    // 2.5 s of work with progress every quarter second: a 1 s timeout is
    // restarted by each notification.
    let r = s.run(&["--timeout", "1", "call", "slow", "ms=2500", "steps=10"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "done\n"), "{r:?}");
    // Without progress the same timeout ends the call...
    let r = s.run(&["--output", "json", "--timeout", "1", "call", "slow", "ms=2500", "steps=0"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert_eq!(json_of(&r)["error"]["kind"], "timeout", "{r:?}");
    // ...and so does --max-time, progress or not.
    let start = Instant::now();
    let r = s.run(&["--timeout", "1", "--max-time", "1.5", "call", "slow", "ms=5000", "steps=20"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(4), "{r:?}");
}

#[test]
fn connect_timeout_bounds_a_server_that_does_not_start() {
    let s = Sandbox::new("connect-timeout");
    let spec = format!("sh -c 'sleep 30; exec \"{}\" stdio'", testkit());
    let start = Instant::now();
    let r = s.run(&["--output", "json", "--connect-timeout", "1", "--server", &spec, "tools"]);
    let took = start.elapsed();
    assert_eq!(r.code, 3, "{r:?}");
    let v = json_of(&r);
    assert_eq!(
        (&v["error"]["kind"], &v["error"]["server"]),
        (&"timeout".into(), &"server".into()),
        "{r:?}"
    );
    assert!(v["error"]["message"].as_str().unwrap().contains("did not connect within 1s"), "{r:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn tools_search_ranks_by_relevance() {
    let s = Sandbox::new("search");
    let r = s.run(&["tools", "--search", "add two numbers", "-k", "3"]);
    assert_eq!(r.code, 0, "{r:?}");
    let first = r.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("demo") && first.contains(" add "), "{r:?}");
    assert!(r.stdout.lines().count() <= 3, "{r:?}");
    let r = s.run(&["--output", "json", "tools", "--search", "echo the message", "-k", "1"]);
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v, json!([{"server": "demo", "tool": "echo", "score": v[0]["score"]}]));
    assert!(v[0]["score"].as_f64().unwrap() > 0.0);
    // -k needs --search.
    let r = s.run(&["tools", "-k", "3"]);
    assert_eq!(r.code, 2, "{r:?}");
}
