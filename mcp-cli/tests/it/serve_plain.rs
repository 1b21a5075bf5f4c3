//! A handshake-era host's plain `tools/call` (its name and arguments only)
//! is forwarded with no future of its own; the same call with a `_meta`
//! takes the general path. A raw host on `mcpc serve`'s stdio sends each
//! call both ways and sees the same bytes: results, `isError` results,
//! errors, a timeout, an upstream crash, a server's request meanwhile; a
//! cancellation, a reused id and one call over the cap as on the general
//! path. Which calls took the plain path is read from its debug event.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::run::Sandbox;
use crate::serve_support::server_spec;

/// Every wait for a line is bounded by this.
const LIMIT: Duration = Duration::from_secs(30);

/// The debug event of a call taken by the plain path.
const PLAIN: &str = "forwarded with no future";

/// `mcpc serve` on the testkit, spoken to line by line.
struct RawHost {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    log: std::path::PathBuf,
}

impl RawHost {
    /// Started with `extra` arguments, initialized (declaring roots) and
    /// told so; its stderr in `log`.
    fn start(s: &Sandbox, log: &str, extra: &[&str]) -> RawHost {
        let spec = server_spec("");
        let mut args = vec!["serve", "--server", &spec];
        args.extend_from_slice(extra);
        let log = s.dir.join(log);
        let mut cmd = s.command(&args);
        cmd.env("RUST_LOG", "mcpc::serve::plain=debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut host = RawHost { child, stdin, lines, log };
        host.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
            "clientInfo": {"name": "raw", "version": "1"}}}));
        assert!(host.next().contains("\"protocolVersion\""));
        host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        // The first call lists the tools the plain path looks its tool up
        // in: it takes the general path.
        let warm = host.answer(-1, "echo", &json!({"message": "warm"}), true);
        assert!(warm.contains("warm"), "{warm}");
        host
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next answer or request to the host (notifications, such as a
    /// restarted server's tool list changing, skipped).
    fn next(&self) -> String {
        loop {
            let line = self.lines.recv_timeout(LIMIT).expect("a line from mcpc serve in time");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                return line;
            }
        }
    }

    /// Sends `tools/call` of `name`: plain, or with an empty `_meta` (the
    /// general path).
    fn call(&mut self, id: i64, name: &str, arguments: &Value, plain: bool) {
        let mut params = json!({ "name": name, "arguments": arguments });
        if !plain {
            params["_meta"] = json!({});
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    /// The call's answer (the next line).
    fn answer(&mut self, id: i64, name: &str, arguments: &Value, plain: bool) -> String {
        self.call(id, name, arguments, plain);
        self.next()
    }

    /// The answers of the call made both ways, one after the other.
    fn both(&mut self, id: i64, name: &str, arguments: Value) -> (String, String) {
        (self.answer(id, name, &arguments, true), self.answer(id, name, &arguments, false))
    }

    fn cancel(&mut self, id: i64) {
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id}}));
    }

    /// How many calls the plain path took, by the host's id.
    fn plain_count(&self, id: i64) -> usize {
        let log = std::fs::read_to_string(&self.log).unwrap();
        let id = format!("id={id}");
        log.lines().filter(|l| l.contains(PLAIN) && l.split_whitespace().any(|w| w == id)).count()
    }

    /// The upstream requests the testkit saw cancelled, once at least
    /// `n` are (bounded).
    fn cancelled_upstream(&mut self, id: i64, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let answer: Value =
                serde_json::from_str(&self.answer(id, "cancelled_log", &json!({}), true)).unwrap();
            let text = answer["result"]["content"][0]["text"].as_str();
            let text = text.unwrap_or_else(|| panic!("{answer}")).to_owned();
            let seen: Vec<Value> = serde_json::from_str(&text).unwrap();
            if seen.len() >= n {
                return seen;
            }
            assert!(Instant::now() < deadline, "{n} cancellations upstream: {seen:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RawHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn plain_and_general_calls_give_the_host_the_same_bytes() {
    let s = Sandbox::new("serve-plain-same");
    let mut host = RawHost::start(&s, "serve.log", &[]);
    let odd = "tab\t \"quoted\" back\\slash \u{1} é ✓ 😀 \u{2028}";
    let cases = [
        ("echo", json!({"message": "hi"})),
        ("echo", json!({"message": odd})),
        ("annotated", json!({"n": 1, "d": [1.5, null, {"x": "y"}]})),
        ("fail", json!({"message": "no"})),
        ("add", json!({"a": "x"})),
        ("big", json!({"bytes": 70000})),
        ("echo", json!({})),
    ];
    for (n, (tool, arguments)) in (1..).zip(cases) {
        let (plain, general) = host.both(n, tool, arguments.clone());
        assert_eq!(plain, general, "{tool} {arguments}");
        assert!(plain.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{n},"result":"#)), "{plain}");
        assert_eq!(host.plain_count(n), 1, "{tool}: taken plainly once");
    }
    // A tool the server does not list: the registry says so, both ways.
    let (plain, general) = host.both(20, "nosuch", json!({}));
    assert_eq!(plain, general);
    assert!(plain.contains("\"error\""), "{plain}");
    assert_eq!(host.plain_count(20), 0);
    // Arguments that are not an object: the bridge's error, both ways.
    let (plain, general) = host.both(21, "echo", json!([1]));
    assert_eq!(plain, general);
    assert!(plain.contains("-32602"), "{plain}");

    // The server asks the host during the call: the request reaches it,
    // its answer goes back, and the result is the same.
    let mut asked = Vec::new();
    for plain in [true, false] {
        host.call(30, "ask", &json!({"what": "roots"}), plain);
        let request: Value = serde_json::from_str(&host.next()).unwrap();
        assert_eq!(request["method"], "roots/list", "{request}");
        let roots = json!({"roots": [{"uri": "file:///tmp/r", "name": "r"}]});
        host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": roots}));
        asked.push(host.next());
    }
    assert_eq!(asked[0], asked[1]);
    assert!(asked[0].contains("file:///tmp/r"), "{}", asked[0]);
    assert_eq!(host.plain_count(30), 1);

    // The server crashing during the call: the same error, and the
    // bridge serves on (the general path waits for the restart).
    let crashed = host.answer(40, "crash", &json!({}), true);
    assert_eq!(host.plain_count(40), 1);
    let again = host.answer(41, "echo", &json!({"message": "back"}), false);
    assert!(again.contains("back"), "{again}");
    let general = host.answer(40, "crash", &json!({}), false);
    // The same error; what it says of the exit (its status, the stderr's
    // tail) is what the server's reaper had collected by then, either way.
    let (crashed, general): (Value, Value) =
        (serde_json::from_str(&crashed).unwrap(), serde_json::from_str(&general).unwrap());
    assert_eq!((&crashed["id"], &crashed["error"]["code"]), (&json!(40), &json!(-32603)));
    assert_eq!((&general["id"], &general["error"]["code"]), (&json!(40), &json!(-32603)));
    for error in [&crashed, &general] {
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("\"server\""), "{error}");
    }
    let again = host.answer(42, "echo", &json!({"message": "back"}), false);
    assert!(again.contains("back"), "{again}");
}

#[test]
fn a_plain_call_times_out_as_a_general_one() {
    let s = Sandbox::new("serve-plain-timeout");
    let mut host = RawHost::start(&s, "serve.log", &["--timeout", "0.3"]);
    let (plain, general) = host.both(1, "hang", json!({}));
    assert_eq!(host.plain_count(1), 1);
    // The time waited is in the message, to a tenth of a second.
    let (plain, general): (Value, Value) =
        (serde_json::from_str(&plain).unwrap(), serde_json::from_str(&general).unwrap());
    assert_eq!(plain["error"]["code"], general["error"]["code"]);
    let message = |v: &Value| {
        let m = v["error"]["message"].as_str().unwrap_or_default();
        m.split_whitespace().filter(|w| !w.ends_with('s') || !w.contains('.')).collect::<String>()
    };
    assert_eq!(message(&plain), message(&general), "{plain} {general}");
    assert!(plain["error"]["message"].as_str().unwrap().contains("timed out"), "{plain}");
}

#[test]
fn a_plain_call_is_cancelled_refused_and_capped_as_a_general_one() {
    let s = Sandbox::new("serve-plain-cancel");
    let mut host = RawHost::start(&s, "serve.log", &["--max-in-flight", "2"]);
    let hang = json!({});
    // Cancelled: no answer, and the server is told.
    host.call(1, "hang", &hang, true);
    host.cancel(1);
    let seen = host.cancelled_upstream(2, 1);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(host.plain_count(1), 1);

    // A reused id, both ways: the same refusal.
    let mut reused = Vec::new();
    for plain in [true, false] {
        host.call(3, "hang", &hang, plain);
        reused.push(host.answer(3, "echo", &json!({"message": "x"}), plain));
        host.cancel(3);
    }
    assert_eq!(reused[0], reused[1]);
    assert!(reused[0].contains("-32600"), "{}", reused[0]);
    // Both hangs cancelled upstream (the answer after them is the next
    // line: none came for them).
    host.cancelled_upstream(4, 3);

    // One over the cap, both ways: the same `SERVER_BUSY`.
    let mut busy = Vec::new();
    for plain in [true, false] {
        host.call(5, "hang", &hang, plain);
        host.call(6, "hang", &hang, plain);
        busy.push(host.answer(7, "echo", &json!({"message": "x"}), plain));
        host.cancel(5);
        host.cancel(6);
    }
    assert_eq!(busy[0], busy[1]);
    assert!(busy[0].contains("\"id\":7") && busy[0].contains("\"error\""), "{}", busy[0]);
    host.cancelled_upstream(8, 7);
    assert_eq!(host.plain_count(5), 1);
}
