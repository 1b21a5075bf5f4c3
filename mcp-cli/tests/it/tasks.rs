//! `mcpc call --task` and `mcpc tasks` against a stateless-era server (the
//! testkit over HTTP, `--era modern` with the conformance suite's task
//! fixtures): the tasks extension (2026-07-28), which mcpc declares.

use std::time::{Duration, Instant};

use mcp_testkit::{Config, HttpConfig, HttpServerHandle, ServeEra, serve_http};
use serde_json::Value;

use crate::run::{Run, Sandbox, json_of};

/// A stateless-era testkit over HTTP with the task fixtures, and its
/// runtime.
fn modern_server() -> (tokio::runtime::Runtime, HttpServerHandle) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = Config { era: ServeEra::Modern, conformance_fixtures: true, ..Config::default() };
    let http = rt.block_on(serve_http(HttpConfig { server, ..HttpConfig::default() })).unwrap();
    (rt, http)
}

/// `mcpc --server URL args...`.
fn run(s: &Sandbox, url: &str, args: &[&str]) -> Run {
    let mut all = vec!["--server", url];
    all.extend_from_slice(args);
    s.run(&all)
}

/// The task's id of a `--output json call --task --detach`.
fn detached(r: &Run) -> String {
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(r);
    assert_eq!(
        (&v["task"]["resultType"], &v["task"]["status"]),
        (&"task".into(), &"working".into())
    );
    v["task"]["taskId"].as_str().unwrap_or_else(|| panic!("no task id: {r:?}")).to_owned()
}

/// `tasks get` (JSON) until the task's status is no longer `working`.
fn settled(s: &Sandbox, url: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = run(s, url, &["--output", "json", "tasks", "get", id]);
        assert_eq!(r.code, 0, "{r:?}");
        let task = json_of(&r)["task"].clone();
        if task["status"] != "working" || Instant::now() > deadline {
            return task;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn call_task_follows_the_extensions_task_to_its_result() {
    let s = Sandbox::new("ext-task-call");
    let (_rt, http) = modern_server();
    let url = http.url();
    // The server makes a task of a call that waits; mcpc follows it,
    // each status on stderr.
    let r = run(&s, &url, &["call", "--task", "slow", "ms=300"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "done\n"), "{r:?}");
    assert!(r.stderr.contains("mcpc: task task-1 working\n"), "{r:?}");
    assert!(r.stderr.contains("mcpc: task task-1 completed\n"), "{r:?}");
    // A plain call is followed the same, silently.
    let r = run(&s, &url, &["call", "slow", "ms=100"]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "done\n", ""), "{r:?}");
    // A call the server answers at once: said so, and its result.
    let r = run(&s, &url, &["call", "--task", "echo", "message=now"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "now\n"), "{r:?}");
    assert!(r.stderr.contains("answered at once, with no task"), "{r:?}");
    // The task's input requests are asked as a call's: no terminal, so
    // the confirmation is declined, and the tool keeps the file.
    let r = run(&s, &url, &["call", "--task", "confirm_delete", "filename=a.txt"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "Kept a.txt\n"), "{r:?}");
    assert!(r.stderr.contains("input_required"), "{r:?}");
    assert!(r.stderr.contains("mcpc: declined"), "{r:?}");
}

#[test]
fn failing_and_protocol_error_tasks() {
    let s = Sandbox::new("ext-task-fail");
    let (_rt, http) = modern_server();
    let url = http.url();
    // A tool's own error: the task completes with it, exit 1.
    let r = run(&s, &url, &["call", "--task", "failing_job"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, "failing_job failed on purpose\n"), "{r:?}");
    assert!(r.stderr.contains(" completed\n"), "{r:?}");
    // A protocol error: the task fails with it, exit 3.
    let r = run(&s, &url, &["--output", "json", "call", "--task", "protocol_error_job"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("failed"), "{r:?}");
    let v = json_of(&r);
    assert_eq!(
        (&v["error"]["kind"], &v["error"]["server"]),
        (&"protocol".into(), &"server".into())
    );
    assert!(v["error"]["message"].as_str().unwrap().contains("-32603"), "{r:?}");
}

#[test]
fn detach_then_get_update_and_cancel() {
    let s = Sandbox::new("ext-task-detach");
    let (_rt, http) = modern_server();
    let url = http.url();
    // Detached: the task printed, then followed by id.
    let r = run(&s, &url, &["--output", "json", "call", "--task", "--detach", "slow", "ms=300"]);
    let id = detached(&r);
    let done = settled(&s, &url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let r = run(&s, &url, &["tasks", "get", &id]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with(&format!("{id}  completed  ")), "{r:?}");
    assert_eq!(lines[1..], ["done"], "{r:?}");

    // Waiting for input: shown, answered with tasks update, done.
    let r = run(
        &s,
        &url,
        &["--output", "json", "call", "--task", "--detach", "confirm_delete", "filename=b.txt"],
    );
    let id = detached(&r);
    let waiting = settled(&s, &url, &id);
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let r = run(&s, &url, &["tasks", "get", &id]);
    assert!(r.stdout.contains("\n  needs input: confirm (elicitation/create)\n"), "{r:?}");
    let answer = r#"{"confirm": {"action": "accept", "content": {"confirm": true}}}"#;
    let r = run(&s, &url, &["tasks", "update", &id, "--json", answer]);
    assert_eq!(r.code, 0, "{r:?}");
    let done = settled(&s, &url, &id);
    assert_eq!(
        (&done["status"], &done["result"]["content"][0]["text"]),
        (&"completed".into(), &"Deleted b.txt".into()),
        "{done}"
    );
    let r = run(&s, &url, &["tasks", "update", &id, "--json", "[1]"]);
    assert_eq!(r.code, 2, "{r:?}");

    // Cancelled while it works; the state after says so.
    let r = run(&s, &url, &["--output", "json", "call", "--task", "--detach", "slow", "ms=60000"]);
    let id = detached(&r);
    let r = run(&s, &url, &["tasks", "cancel", &id]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with(&format!("{id}  cancelled  ")), "{r:?}");
    // An unknown task: the server's -32602, exit 3.
    let r = run(&s, &url, &["--output", "json", "tasks", "get", "task-999"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(json_of(&r)["error"]["message"].as_str().unwrap().contains("-32602"), "{r:?}");
}

#[test]
fn what_the_extension_has_not_is_a_clear_error() {
    let s = Sandbox::new("ext-task-none");
    let (_rt, http) = modern_server();
    let url = http.url();
    for args in [&["tasks", "list"][..], &["tasks", "result", "task-1"][..]] {
        let r = run(&s, &url, args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("the tasks extension (2026-07-28)"), "{r:?}");
        assert!(r.stderr.contains("`mcpc tasks get server TASK_ID`"), "{r:?}");
    }
    // Against a handshake-era server (the demo), update is refused before
    // anything is sent, and the 2025-11-25 tasks are as before.
    let r = s.run(&["tasks", "update", "task-1", "--json", "{}"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("speaks an earlier revision"), "{r:?}");
    let r = s.run(&["call", "--task", "slow", "ms=100"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "done\n"), "{r:?}");
}

#[test]
fn a_task_call_passes_the_approval_and_is_audited() {
    let s = Sandbox::new("ext-task-approval");
    let (_rt, http) = modern_server();
    let tk = mcp_testkit::binary_path().to_string_lossy().into_owned();
    // A stateless-era server over HTTP and a handshake-era one over stdio
    // (the tasks of 2025-11-25), both under `ask`.
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n[mcp_client.approval]\ndefault = \"ask\"\ndeny = [\"*__hang\"]\n\
             [mcp_client.audit]\npath = \"audit.jsonl\"\n\
             [[mcp_client.servers]]\nname = \"m\"\nendpoint = \"{}\"\n\
             [[mcp_client.servers]]\nname = \"h\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n",
            http.url()
        ),
    );
    let c = ["--config", "conf/mcp.toml"];
    let run = |extra: &[&str]| s.run(&[&c[..], extra].concat());
    for server in ["m", "h"] {
        // No terminal to ask on: refused, nothing sent.
        let r = run(&["call", "--task", "--detach", server, "slow", "ms=50"]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("no terminal to ask on (--yes allows it)"), "{r:?}");
        // A deny rule: refused even with --yes.
        let r = run(&["--yes", "call", "--task", server, "hang"]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("the approval rule \"*__hang\""), "{r:?}");
        // Allowed: the task is made.
        let r = run(&[
            "--yes", "--output", "json", "call", "--task", "--detach", server, "slow", "ms=50",
        ]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    assert_eq!(http.rpc_methods().iter().filter(|m| *m == "tools/call").count(), 1);
    let text = std::fs::read_to_string(s.dir.join("conf/audit.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let outcomes: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["server"].as_str().unwrap(), l["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("m", "denied"),
            ("m", "denied"),
            ("m", "task"),
            ("h", "denied"),
            ("h", "denied"),
            ("h", "task"),
        ],
        "{text}"
    );
    assert!(lines[2]["task_id"].as_str().is_some_and(|id| !id.is_empty()), "{text}");
    assert!(lines[5]["task_id"].as_str().is_some_and(|id| !id.is_empty()), "{text}");
}

#[test]
fn a_task_followed_past_max_time_is_cancelled() {
    let s = Sandbox::new("ext-task-max-time");
    let (_rt, http) = modern_server();
    let url = http.url();
    let r = run(&s, &url, &["--max-time", "1", "call", "--task", "hang"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("did not end within --max-time"), "{r:?}");
    assert!(r.stderr.contains("it was cancelled"), "{r:?}");
    assert!(http.rpc_methods().iter().any(|m| m == "tasks/cancel"), "{:?}", http.rpc_methods());
    let id = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("mcpc: task ")?.strip_suffix(" working"))
        .unwrap_or_else(|| panic!("no task id: {r:?}"))
        .to_owned();
    let task = settled(&s, &url, &id);
    assert_eq!(task["status"], "cancelled", "{task}");
}
