//! A hostile server: the text it sends reaches the terminal inert, and
//! the URLs it asks to open are opened only when safe.

use std::path::Path;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

use crate::run::{Run, Sandbox, json_of};

/// The hostile server of `tests/data/hostile_server.py`, as a `--server`
/// command.
fn hostile_server() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile_server.py");
    format!("python3 {}", script.display())
}

/// Nothing a terminal would act on reached stdout or stderr.
fn assert_inert(r: &Run) {
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        if let Some(c) = text.chars().find(|c| mcp_proto::display::needs_escape(*c)) {
            panic!("{stream} holds {c:?}: {r:?}");
        }
    }
}

/// The escaped form of the hostile server's sequence, as text output shows it.
const EVIL_SHOWN: &str =
    r"\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[8mhidden\x1b[0m\u{9b}31m\u{202e}evil\rX";

#[test]
fn server_text_reaches_the_terminal_inert_on_every_path() {
    let s = Sandbox::new("hostile-text");
    let server = hostile_server();
    let with = |args: &[&str]| {
        let mut all = vec!["--server", server.as_str()];
        all.extend_from_slice(args);
        s.run(&all)
    };
    // Name, version, title and instructions.
    let r = with(&["info"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(
        r.stdout.contains(&format!("hostile{EVIL_SHOWN} 6.6.6{EVIL_SHOWN} (T{EVIL_SHOWN})")),
        "{r:?}"
    );
    assert!(r.stdout.contains(&format!("Read me {EVIL_SHOWN}\n    second line")), "{r:?}");
    // Tool names and descriptions: one line each.
    let r = with(&["tools"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(r.stdout.contains(&format!("  echo{EVIL_SHOWN}")), "{r:?}");
    assert!(!r.stdout.contains("second line"), "a description shows its first line: {r:?}");
    // A tool's result keeps its lines.
    let r = with(&["call", "echo"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(r.stdout.contains(&format!("result {EVIL_SHOWN}\nline two")), "{r:?}");
    // Error messages.
    let r = with(&["call", "fail"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(r.stderr.contains(&format!("it broke {EVIL_SHOWN}")), "{r:?}");
    // Log messages and progress messages.
    let r = with(&["--log-level", "debug", "call", "log"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(r.stderr.contains(&format!("lg{EVIL_SHOWN}: logged {EVIL_SHOWN}")), "{r:?}");
    // The progress bar draws with sequences of its own; the server's
    // message in it is inert.
    let r = with(&["--progress", "always", "call", "log"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains(&format!("step {EVIL_SHOWN}")), "{r:?}");
    for raw in ["\u{1b}]0;", "\u{1b}[2J", "\u{9b}", "\u{202e}", "\u{7}"] {
        assert!(!r.stderr.contains(raw), "{raw:?} in {r:?}");
    }
    // Elicitation prompts.
    let r = with(&["--accept-defaults", "call", "visit", "url=https://auth.example.com/x"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_inert(&r);
    assert!(r.stderr.contains(&format!("Please sign in {EVIL_SHOWN}")), "{r:?}");
    // JSON output is JSON: the text as it came, escaped by the encoder.
    let r = with(&["--output", "json", "info"]);
    assert_eq!(r.code, 0, "{r:?}");
    let name = json_of(&r)["server_info"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("hostile\u{1b}[2J"), "{name:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn url_elicitation_opens_only_https_and_loopback_http_as_one_argument() {
    use std::os::unix::fs::PermissionsExt as _;
    let s = Sandbox::new("hostile-url");
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A stand-in opener that records the arguments it was given, one a line.
    let record = s.dir.join("opened");
    let opener = s.write(
        "bin/xdg-open",
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '{}'\n",
            record.display()
        ),
    );
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let server = hostile_server();
    let visit = |url: &str| {
        let arg = format!("url={url}");
        let r = s.run_env(
            &["--server", &server, "--accept-defaults", "--open", "call", "visit", &arg],
            &[("PATH", &path), ("DISPLAY", ":0"), ("MCPC_NO_BROWSER", "")],
        );
        assert_eq!(r.code, 0, "{r:?}");
        assert_inert(&r);
        r
    };
    // What the opener was given, once it has written `lines` lines (it
    // runs in the background).
    let opened = |lines: usize| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&record).unwrap_or_default();
            if text.lines().count() >= lines || Instant::now() > deadline {
                return text;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    for url in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "ssh://evil.example/",
        "x-custom-scheme://do-something",
        "-a https://auth.example.com/",
        "--help",
        "http://evil.example/",
        "https://bank.example@evil.example/",
        "https://auth.example.com/\u{1b}[1A\u{1b}[2Khttps://bank.example/",
        "https://ex\u{430}mple.com/",
    ] {
        let r = visit(url);
        assert!(r.stdout.contains("action=decline"), "{url}: {r:?}");
        assert!(r.stderr.contains("this URL is not opened and not offered"), "{url}: {r:?}");
    }
    let mut expected = String::new();
    for (url, host) in [
        ("https://auth.example.com/consent?state=a%20b", "auth.example.com"),
        ("http://127.0.0.1:8080/cb", "127.0.0.1"),
        ("http://localhost/x", "localhost"),
    ] {
        let r = visit(url);
        assert!(r.stdout.contains("action=accept"), "{r:?}");
        assert!(r.stderr.contains(&format!("  {url}\n  host: {host}\n")), "{r:?}");
        // Each URL opened alone, as one argument; none of the refused.
        expected.push_str(url);
        expected.push('\n');
        assert_eq!(opened(expected.lines().count()), expected);
    }
}
