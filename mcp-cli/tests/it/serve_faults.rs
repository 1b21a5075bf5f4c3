//! `mcpc serve` when things go wrong: an upstream that crashes, hangs or
//! writes garbage; a usage error; the host closing stdin or a signal, which
//! end the bridge and its servers.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_peer::EraChoice;
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use serde_json::json;

use crate::run::Sandbox;
use crate::serve_support::{call, host, next_matching, server_spec, tools_changed, wait_exit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_crash_is_an_error_and_the_bridge_serves_on() {
    let s = Sandbox::new("serve-crash");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let mut n = c.notifications();
    let err = c.call_tool_with("crash", (), RequestOptions::default()).await.unwrap_err();
    let rpc = err.rpc_error().cloned().unwrap_or_else(|| panic!("not a JSON-RPC error: {err}"));
    assert_eq!(rpc.code, -32603, "{rpc:?}");
    assert!(rpc.message.contains("\"server\""), "{rpc:?}");
    // Supervision restarts it; the next call waits for it.
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "again"})).await), "again");
    // Restarted, it may list other tools: the host is told.
    next_matching(async || n.recv().await, tools_changed).await;
    // Garbage on the server's stdout is skipped; the call is answered.
    let r = text_blocks(&call(&c, "noisy", json!({"garbage_rounds": 2})).await);
    assert!(r.starts_with("noisy: wrote 6 garbage lines"), "{r}");
    c.close().await.unwrap();

    // A server that hangs past its timeout (`--timeout`): that call's error.
    let c = host(&s, &["--server", &spec, "--timeout", "0.5"], EraChoice::Legacy, None).await;
    let started = Instant::now();
    let err = c.call_tool_with("hang", (), RequestOptions::default()).await.unwrap_err();
    let rpc = err.rpc_error().cloned().unwrap_or_else(|| panic!("not a JSON-RPC error: {err}"));
    assert!(rpc.message.contains("tools/call") && rpc.message.contains("server"), "{rpc:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "still"})).await), "still");
    c.close().await.unwrap();
}

#[test]
fn an_unknown_server_is_a_usage_error_on_stderr_only() {
    let s = Sandbox::new("serve-usage");
    for args in [&["serve", "--only", "nope"][..], &["--output", "json", "serve", "--only", "nope"]]
    {
        let r = s.run(args);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("no server is named \"nope\" (servers: demo)"), "{r:?}");
        // stdout is the protocol's, even for errors asked as JSON.
        assert!(r.stdout.is_empty(), "{r:?}");
    }
    // No host on stdin: the bridge ends at once, and cleanly.
    let r = s.run(&["serve"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:?}");
}

/// The pids of the processes whose parent is `pid`.
#[cfg(target_os = "linux")]
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        // The parent is the second field after the command's closing parenthesis.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.push(child);
        }
    }
    found
}

#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat[stat.rfind(')').unwrap_or(0) + 1..].trim_start().starts_with('Z'))
}

/// `mcpc serve` started by hand, initialized, with the pid of its server.
#[cfg(target_os = "linux")]
fn started(s: &Sandbox) -> (std::process::Child, u32) {
    let spec = server_spec("");
    let mut cmd = s.command(&["serve", "--server", &spec]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"protocolVersion\""), "{line}");
    let upstream = children(child.id());
    assert_eq!(upstream.len(), 1, "{upstream:?}");
    // Kept for the closing test; dropped for the signal test.
    std::mem::forget(stdout);
    child.stdin = Some(stdin);
    (child, upstream[0])
}

#[cfg(target_os = "linux")]
#[test]
fn the_host_closing_stdin_or_a_signal_ends_the_bridge_and_its_servers() {
    let s = Sandbox::new("serve-end");
    let (mut child, upstream) = started(&s);
    drop(child.stdin.take());
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(upstream) {
        assert!(Instant::now() < deadline, "the upstream server {upstream} outlived the bridge");
        std::thread::sleep(Duration::from_millis(20));
    }

    let (mut child, upstream) = started(&s);
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(143), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(upstream) {
        assert!(Instant::now() < deadline, "the upstream server {upstream} outlived the bridge");
        std::thread::sleep(Duration::from_millis(20));
    }
}
