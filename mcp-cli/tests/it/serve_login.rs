//! `mcpc serve` and an OAuth server: a 401, at the start or in the middle
//! of a session, is one login in the browser (the test), then the host's
//! requests are answered.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_support::wait_exit;

/// Lines of a child's output, read as they come.
fn line_reader(from: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The first line of `lines` after one that contains `after` (`after`
/// empty: the first line that `pick` takes), within 30 s.
fn line_after(
    lines: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    mut pick: impl FnMut(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).unwrap_or_else(|e| panic!("{e}; so far: {seen:?}"));
        seen.push(line.clone());
        if pick(&line) {
            return line;
        }
    }
}

/// The login `mcpc serve` asks for on stderr, under the same words as
/// `mcpc login`'s, completed with the test as the browser.
fn log_in_as_the_browser(
    w: &crate::login::World,
    stderr: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
) {
    line_after(stderr, seen, |l| l.contains("\"remote\" needs an OAuth login"));
    line_after(stderr, seen, |l| l.contains("Open this URL to log in:"));
    let url = line_after(stderr, seen, |_| true).trim().to_owned();
    assert!(url.starts_with(&format!("{}/authorize?", w.auth.base())), "{url}");
    let (_, location, _) = w.browse(&url);
    let (status, _, page) = w.browse(&location.expect("a redirect to the loopback listener"));
    assert_eq!(status.as_u16(), 200);
    assert!(page.contains("Authorization complete"), "{page}");
}

#[test]
fn a_server_that_answers_401_is_logged_in_in_the_browser_then_served() {
    let w = crate::login::World::new("serve");
    let mut child = w.mcpc(&["serve"]).stdin(Stdio::piped()).spawn().expect("mcpc serve starts");
    let stderr = line_reader(child.stderr.take().unwrap());
    let stdout = line_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();

    log_in_as_the_browser(&w, &stderr, &mut seen);
    line_after(&stderr, &mut seen, |l| l.contains("logged in to remote"));

    // Then the host is served, with the token kept for later runs.
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = Vec::new();
    let listed = line_after(&stdout, &mut out, |l| {
        // stdout is the host's: JSON-RPC only.
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        v["id"] == 2
    });
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let tools = listed["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{listed}");
    drop(stdin);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}; stderr: {seen:?}");
    assert_eq!(w.auth.tokens_issued(), 1);
    assert_eq!(w.token_files().len(), 1);
    while let Ok(line) = stderr.recv_timeout(Duration::from_secs(5)) {
        seen.push(line);
    }
    let all = seen.join("\n") + &out.join("\n");
    assert!(!all.contains(crate::login::TOKEN), "{all}");
}

/// Two requests that meet a 401 in the middle of the session (the token
/// revoked, as it were): one login in the browser, then both are sent
/// again and answered.
#[test]
fn a_resource_read_and_a_prompt_get_behind_a_401_log_in_once_and_are_answered() {
    let w = crate::login::World::new("serve-mid-401");
    // Connected without a token while the server does not ask for one.
    w.http().waive_auth(true);
    let mut child = w.mcpc(&["serve"]).stdin(Stdio::piped()).spawn().expect("mcpc serve starts");
    let stderr = line_reader(child.stderr.take().unwrap());
    let stdout = line_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let mut out = Vec::new();
    let mut send = move |messages: &[Value]| {
        for message in messages {
            writeln!(stdin, "{message}").unwrap();
        }
        stdin.flush().unwrap();
    };
    let answer = |out: &mut Vec<String>, wanted: fn(u64) -> bool| -> Value {
        let line = line_after(&stdout, out, |l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            v["id"].as_u64().is_some_and(wanted)
        });
        serde_json::from_str(&line).unwrap()
    };
    send(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
    ]);
    let listed = answer(&mut out, |id| id == 2);
    assert!(listed["result"]["prompts"].as_array().is_some_and(|p| !p.is_empty()), "{listed}");
    assert_eq!(w.auth.tokens_issued(), 0);

    // Now the server wants a token: both requests meet a 401.
    w.http().waive_auth(false);
    send(&[
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
            "params": {"uri": "test://static/text/1"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
            "params": {"name": "greet", "arguments": {"name": "Ada"}}}),
    ]);
    log_in_as_the_browser(&w, &stderr, &mut seen);

    // Answered in either order.
    let (mut read, mut got) = (Value::Null, Value::Null);
    while read.is_null() || got.is_null() {
        let v = answer(&mut out, |id| id == 3 || id == 4);
        if v["id"] == 3 { read = v } else { got = v }
    }
    let contents = read["result"]["contents"].as_array().unwrap_or_else(|| panic!("{read}"));
    assert_eq!(contents[0]["uri"], "test://static/text/1", "{read}");
    let text = &got["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Hello, Ada!", "{got}");
    drop(send);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}; stderr: {seen:?}");
    // One login for both.
    assert_eq!(w.auth.tokens_issued(), 1);
    while let Ok(line) = stderr.recv_timeout(Duration::from_secs(5)) {
        seen.push(line);
    }
    let logins = seen.iter().filter(|l| l.contains("needs an OAuth login")).count();
    assert_eq!(logins, 1, "{seen:?}");
    let all = seen.join("\n") + &out.join("\n");
    assert!(!all.contains(crate::login::TOKEN), "{all}");
}
