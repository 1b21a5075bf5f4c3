//! Call approval and the managed policy through `mcpc`: `ask` without a
//! terminal is refused unless `--yes`, `deny` rules refuse before
//! anything starts, and the administrator's policy blocks servers and
//! pins tiers `--yes` cannot widen.

use crate::run::{Sandbox, json_of};

fn config(s: &Sandbox, approval: &str) {
    let tk = mcp_testkit::binary_path().to_string_lossy().into_owned();
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n[mcp_client.approval]\n{approval}\n\
             [[mcp_client.servers]]\nname = \"a\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n\
             [[mcp_client.servers]]\nname = \"b\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n"
        ),
    );
}

#[test]
fn ask_is_refused_without_a_terminal_unless_yes_and_deny_before_anything_starts() {
    let s = Sandbox::new("approval");
    config(&s, "default = \"ask\"\ndeny = [\"*__ad?\"]\nallow = [\"b__*\"]");
    let c = ["--config", "conf/mcp.toml"];
    let run = |extra: &[&str]| s.run(&[&c[..], extra].concat());

    let r = run(&["call", "a", "echo", "message=hi"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no terminal to ask on (--yes allows it)"), "{r:?}");
    assert!(r.stderr.contains("was refused"), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    let r = run(&["--output", "json", "call", "a", "echo", "message=hi"]);
    assert_eq!(json_of(&r)["error"]["kind"], "denied", "{r:?}");

    let r = run(&["--yes", "call", "a", "echo", "message=hi"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "hi\n"), "{r:?}");
    // An allow rule needs no answer.
    let r = run(&["call", "b", "echo", "message=ok"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "ok\n"), "{r:?}");

    // A deny rule: refused before the server starts (even with --yes), and
    // not listed.
    let r = run(&["--yes", "call", "a", "add", "a=1", "b=2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("the approval rule \"*__ad?\""), "{r:?}");
    let r = run(&["tools", "a"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().any(|l| l.starts_with("  echo ")), "{r:?}");
    assert!(!r.stdout.lines().any(|l| l.starts_with("  add ")), "{r:?}");

    // A policy table that does not parse is an error naming the file.
    config(&s, "default = \"sometimes\"");
    let r = run(&["servers"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("mcp.toml is not valid: [mcp_client.approval]"), "{r:?}");
}

#[test]
fn the_managed_policy_blocks_servers_and_pins_tiers() {
    let s = Sandbox::new("managed");
    config(&s, "default = \"allow\"\nallow = [\"*\"]");
    s.write("managed.toml", "[servers]\ndeny_names = [\"b\"]\n[tools]\nask = [\"a__echo\"]\n");
    let c = ["--config", "conf/mcp.toml"];
    let run = |extra: &[&str]| s.run(&[&c[..], extra].concat());

    let r = run(&["servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    let blocked: Vec<&str> = r.stdout.lines().filter(|l| l.contains("blocked")).collect();
    assert_eq!(blocked.len(), 1, "{r:?}");
    assert!(blocked[0].starts_with("b ") && blocked[0].contains("deny_names b"), "{r:?}");
    let r = run(&["--output", "json", "servers"]);
    let v = json_of(&r);
    assert_eq!(v[1]["name"], "b", "{r:?}");
    assert!(v[1]["blocked"].as_str().unwrap().contains("deny_names"), "{r:?}");
    let r = run(&["ping", "b"]);
    assert_eq!(r.code, 2, "{r:?}");

    // The user's `allow *` and --yes do not widen the pinned `ask`.
    let r = run(&["--yes", "call", "a", "echo", "message=hi"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("managed policy"), "{r:?}");
    let r = run(&["call", "a", "add", "a=1", "b=2"]);
    assert_eq!(r.code, 0, "{r:?}");

    s.write("managed.toml", "[servers]\nallow_names = 3\n");
    let r = run(&["servers"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("managed.toml is not valid"), "{r:?}");
}

#[test]
fn the_audit_log_is_enabled_from_the_configuration() {
    let s = Sandbox::new("audit");
    config(
        &s,
        "default = \"allow\"\ndeny = [\"a__add\"]\n[mcp_client.audit]\npath = \"logs/audit.jsonl\"",
    );
    let c = ["--config", "conf/mcp.toml"];
    let run = |extra: &[&str]| s.run(&[&c[..], extra].concat());
    let r = run(&["call", "a", "echo", "message=hi", "api_key=k-123"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run(&["call", "a", "add", "a=1", "b=2"]);
    assert_eq!(r.code, 2, "{r:?}");
    let text = std::fs::read_to_string(s.dir.join("conf/logs/audit.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["arguments"]["api_key"], "<redacted>");
    assert_eq!(lines[0]["arguments"]["message"], "hi");
    assert_eq!(lines[1]["outcome"], "denied");
    assert!(!text.contains("k-123"), "{text}");
    // Without a path: the state directory's audit.jsonl.
    config(&s, "[mcp_client.audit]\nenabled = true");
    let r = run(&["call", "a", "echo", "message=again"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(s.dir.join(".local/state/mcpc/audit.jsonl").is_file());
    // A bad table: an error naming the file; nothing runs.
    config(&s, "[mcp_client.audit]\nmax_bytes = 1");
    let r = run(&["call", "a", "echo", "message=no"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("[mcp_client.audit]: `max_bytes`"), "{r:?}");
}
