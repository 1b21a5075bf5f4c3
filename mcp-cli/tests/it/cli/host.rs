//! The host side: roots, sampling and elicitation answered, server log
//! messages, `listen` and `resources subscribe`, and the elicitation form
//! on a terminal.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_testkit::{HttpConfig, serve_http};
#[cfg(target_os = "linux")]
use serde_json::Value;

use crate::run::{Sandbox, json_of};

#[test]
fn the_host_side_roots_sampling_and_elicitation() {
    let s = Sandbox::new("host");
    let r = s.run(&["call", "ask", "what=roots"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = json_of(&r);
    let uri = v["result"]["roots"][0]["uri"].as_str().unwrap();
    assert!(uri.starts_with("file:///") && uri.ends_with("-host"), "the current directory: {r:?}");
    let r = s.run(&["--root", "/srv/data", "--root", "/tmp/a b", "call", "ask", "what=roots"]);
    assert_eq!(
        json_of(&r)["result"]["roots"],
        serde_json::json!([{"uri": "file:///srv/data", "name": "data"}, {"uri": "file:///tmp/a%20b", "name": "a b"}])
    );
    let r = s.run(&["call", "ask", "what=sample"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(json_of(&r)["error"]["code"], -1, "{r:?}");
    assert!(r.stderr.contains("mcpc has no model"), "{r:?}");
    // No terminal: declined, also with --accept-defaults when a required
    // field has no default.
    for extra in [&[][..], &["--accept-defaults"]] {
        let mut args = vec!["call", "ask", "what=elicit"];
        args.extend_from_slice(extra);
        let r = s.run(&args);
        assert_eq!(json_of(&r), serde_json::json!({"result": {"action": "decline"}}), "{r:?}");
        assert!(r.stderr.contains("mcp-testkit asks for your name"), "{r:?}");
    }
}

#[test]
fn server_log_messages_with_log_level() {
    let s = Sandbox::new("logs");
    let r = s.run(&["--log-level", "info", "call", "log", "level=warning", "message=disk low"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("demo: [warning] mcp-testkit: disk low"), "{r:?}");
    let r = s.run(&["--log-level", "error", "call", "log", "level=warning", "message=disk low"]);
    assert!(!r.stderr.contains("disk low"), "{r:?}");
    let r = s.run(&["call", "log", "level=warning", "message=disk low"]);
    assert!(!r.stderr.contains("disk low"), "{r:?}");
    // -v shows the client's own diagnostics, RUST_LOG chooses them.
    let r = s.run(&["-vv", "ping"]);
    assert!(r.stderr.contains("DEBUG"), "{r:?}");
    let r = s.run_env(&["ping"], &[("RUST_LOG", "mcp_host_registry=debug")]);
    assert!(r.stderr.contains("MCP server connected server=demo"), "{r:?}");
    // Warnings show by default: lines a server wrote that are not
    // messages are dropped, and said to be.
    let r = s.run(&["call", "noisy", "lines=1"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("WARN")
            && r.stderr.contains("skipping lines that are not JSON-RPC messages")
            && r.stderr.contains("skipped=1"),
        "{r:?}"
    );
    // A flood of them is a line per second, not a line each.
    let r = s.run(&["call", "noisy", "lines=0", "garbage_rounds=2000"]);
    assert_eq!(r.code, 0, "{r:?}");
    let warned = r.stderr.matches("skipping lines that are not JSON-RPC messages").count();
    assert!((1..=5).contains(&warned), "{warned} lines: {r:?}");
    let r = s.run(&["ping"]);
    assert!(!r.stderr.contains("WARN") && !r.stderr.contains("DEBUG"), "{r:?}");
}

/// Runs `mcpc args` in the background, its stdout read line by line.
struct Background {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Background {
    fn start(s: &Sandbox, args: &[&str]) -> Background {
        let mut child =
            s.command(args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Background { child, lines }
    }

    /// The next line, within a bound.
    #[track_caller]
    fn line(&self) -> String {
        self.lines.recv_timeout(Duration::from_secs(20)).expect("a line from mcpc")
    }

    /// SIGINT, then the exit code.
    #[cfg(unix)]
    fn interrupt(self) -> Option<i32> {
        self.stop_with("-INT")
    }

    /// Sends `signal` (as `kill` takes it) and waits, at most 20 s, for the
    /// exit code (`None`: killed after that, or ended by a signal).
    fn stop_with(mut self, signal: &str) -> Option<i32> {
        let _ = Command::new("kill").args([signal, &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(unix)]
#[test]
fn listen_and_subscribe_run_until_ctrl_c() {
    let s = Sandbox::new("listen");
    // `resources subscribe`: subscribed (the server accepts the URI), the
    // resource read once, then waiting for updates; Ctrl-C ends it with 0.
    let subscribe = Background::start(&s, &["resources", "subscribe", "test://static/text/3"]);
    assert_eq!(subscribe.line(), "demo: subscribed to test://static/text/3 (Ctrl-C ends)");
    assert_eq!(subscribe.line(), "This is text resource 3.");
    assert_eq!(subscribe.interrupt(), Some(0));
    // A URI the server does not have is refused at once.
    let r = s.run(&["resources", "subscribe", "test://nope"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("-32002"), "{r:?}");
    // `listen`: open until Ctrl-C, which ends it with 0; nothing on stdout
    // from a server that sends nothing.
    let listen = Background::start(&s, &["--output", "json", "listen"]);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(listen.lines.try_recv().is_err());
    assert_eq!(listen.interrupt(), Some(0));
    // SIGTERM is not the normal end: 143.
    let listen = Background::start(&s, &["listen"]);
    std::thread::sleep(Duration::from_millis(1000));
    // One signal only: a SIGINT after it could be handled first.
    assert_eq!(listen.stop_with("-TERM"), Some(143));
}

/// Over HTTP, `listen` reads the standalone GET stream; when that stream is
/// given up (here: every GET brings only an event with a fresh id and
/// `retry: 0`, so the reconnections run out), `listen` says so and exits 3
/// instead of running on in silence.
#[test]
fn listen_over_http_says_when_its_stream_is_given_up_and_exits_3() {
    let s = Sandbox::new("listen-given-up");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let config = HttpConfig { id_only_events: true, ..Default::default() };
    let http = rt.block_on(serve_http(config)).unwrap();
    let url = http.url();
    let start = Instant::now();
    let r = s.run(&["--server", &url, "listen"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("listening to server"), "{r:?}");
    assert!(r.stderr.contains("the notification stream of MCP server \"server\" ended"), "{r:?}");
    assert!(r.stderr.contains("5 times in a row without a message"), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    // Five reconnections, at least 100 ms apart, well under a minute.
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
    // The first GET and `max_reconnects` (5) more.
    assert_eq!(http.request_count(&hyper::Method::GET), 6);
    // The same failure as JSON.
    let r = s.run(&["--server", &url, "--output", "json", "listen"]);
    assert_eq!(r.code, 3, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["error"]["kind"], "connection", "{r:?}");
    assert_eq!(v["error"]["exit_code"], 3, "{r:?}");
    rt.block_on(http.shutdown());
}

/// The elicitation form on a terminal: a pseudo-terminal is mcpc's stdin
/// and stderr; the answers are typed into it.
#[cfg(target_os = "linux")]
#[test]
fn elicitation_is_asked_on_the_terminal() {
    use std::io::Write as _;
    use std::sync::{Arc, Mutex};

    let s = Sandbox::new("pty");
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut master = std::fs::File::from(pty.master);
    let slave = pty.slave;
    let mut child = s
        .command(&["call", "ask", "what=elicit"])
        // A terminal with colours: as a person has it (progress bar too).
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let screen = Arc::new(Mutex::new(String::new()));
    {
        let mut reader = master.try_clone().unwrap();
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let wait_for = |text: &str, count: usize| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while screen.lock().unwrap().matches(text).count() < count {
            assert!(
                Instant::now() < deadline,
                "no {text:?} on the terminal: {:?}",
                screen.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("Name (Your name): ", 1);
    assert!(screen.lock().unwrap().contains("mcp-testkit asks for your name"));
    // An empty answer to a required field is asked again.
    master.write_all(b"\n").unwrap();
    wait_for("an answer is required", 1);
    wait_for("Name (Your name): ", 2);
    master.write_all(b"Ada Lovelace\n").unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"result": {"action": "accept", "content": {"name": "Ada Lovelace"}}})
    );

    // Ctrl-C while the form waits for a line: mcpc ends at once (130).
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut master = std::fs::File::from(pty.master);
    let mut child = s
        .command(&["call", "ask", "what=elicit"])
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::from(pty.slave))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains("Name (Your name): ") {
        assert!(Instant::now() < deadline, "no question: {seen:?}");
        let mut buf = [0u8; 512];
        let n = master.read(&mut buf).unwrap();
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let after = Arc::new(Mutex::new(String::new()));
    {
        let after = after.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                after.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let sent = Instant::now();
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcpc did not end after Ctrl-C: {:?}", after.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    assert!(sent.elapsed() < Duration::from_secs(3), "{:?}", sent.elapsed());
}
