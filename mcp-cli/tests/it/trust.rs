//! Consent before a project's configuration runs anything: a hostile
//! repository's servers are never started or contacted until approved.

use std::net::TcpListener;
use std::path::Path;

use crate::run::{Sandbox, json_of};

/// A repository (with `.git`) whose `mcp.toml` runs a command that leaves
/// a marker, and whose `.mcp.json` would be reached over HTTP.
fn hostile(s: &Sandbox, marker: &Path, extra: &str) {
    std::fs::create_dir_all(s.dir.join("repo/.git")).unwrap();
    std::fs::create_dir_all(s.dir.join("repo/src/deep")).unwrap();
    s.write(
        "repo/mcp.toml",
        &format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"innocent\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch '{}'{extra}\"]\n",
            marker.display()
        ),
    );
}

#[test]
fn a_hostile_project_configuration_starts_nothing_until_approved() {
    let s = Sandbox::new("hostile");
    let marker = s.dir.join("marker");
    hostile(&s, &marker, "");
    let repo = s.dir.join("repo");
    let deep = repo.join("src/deep");
    let run_in = |dir: &Path, args: &[&str]| {
        let mut cmd = s.command(args);
        cmd.current_dir(dir);
        crate::run::run_bounded(cmd, crate::run::RUN_LIMIT)
    };

    // From the repository and from below it: refused, nothing started.
    for dir in [&repo, &deep] {
        let r = run_in(dir, &["tools"]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("mcp.toml has not been approved"), "{r:?}");
        assert!(r.stderr.contains("none of its servers was started"), "{r:?}");
        assert!(r.stderr.contains("`mcpc trust`"), "{r:?}");
        assert!(r.stdout.is_empty(), "{r:?}");
        assert!(!marker.exists(), "the project's command ran");
    }
    let r = run_in(&deep, &["--output", "json", "call", "innocent", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(json_of(&r)["error"]["kind"], "untrusted", "{r:?}");
    assert!(!marker.exists(), "the project's command ran");
    // Not even listed: the configuration is not used at all.
    let r = run_in(&repo, &["servers"]);
    assert_eq!(r.code, 2, "{r:?}");

    // Approved as it is: it runs (it is no MCP server, so the call fails,
    // but the command ran).
    let r = run_in(&deep, &["trust"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("innocent: runs sh -c"), "{r:?}");
    let records = s.dir.join(".local/state/mcpc/trusted-configs.json");
    assert!(records.is_file(), "{r:?}");
    let r = run_in(&repo, &["tools", "--timeout", "5", "--connect-timeout", "5"]);
    assert_ne!(r.code, 2, "{r:?}");
    assert!(marker.exists(), "the approved command did not run: {r:?}");
    std::fs::remove_file(&marker).unwrap();

    // What it runs changes: asked again, nothing started.
    hostile(&s, &marker, "; true");
    let r = run_in(&repo, &["tools"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("changed what it runs since it was approved"), "{r:?}");
    assert!(!marker.exists(), "the changed command ran");
    // --trust runs it once, without recording it.
    let before = std::fs::read_to_string(&records).unwrap();
    let r = run_in(&repo, &["--trust", "tools", "--timeout", "5", "--connect-timeout", "5"]);
    assert!(marker.exists(), "--trust did not run it: {r:?}");
    assert_eq!(std::fs::read_to_string(&records).unwrap(), before);
    std::fs::remove_file(&marker).unwrap();
    // Revoked: refused again.
    hostile(&s, &marker, "");
    let r = run_in(&repo, &["trust", "--revoke"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_in(&repo, &["tools"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!marker.exists());
}

#[test]
fn a_project_json_url_is_not_contacted_and_an_explicit_config_is_trusted() {
    let s = Sandbox::new("hostile-json");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    s.write(".mcp.json", &format!("{{\"mcpServers\": {{\"web\": {{\"url\": \"{url}\"}}}}}}"));
    let r = s.run(&["ping", "web"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains(".mcp.json has not been approved"), "{r:?}");
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the project's URL was contacted: {accepted:?}"
    );
    // The same file named with --config is the user's choice: used.
    let r = s.run(&["--config", ".mcp.json", "servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("web "), "{r:?}");
    // A consent file that cannot be read is an error naming it; nothing runs.
    s.write(".local/state/mcpc/trusted-configs.json", "{broken");
    let r = s.run(&["ping", "web"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("trusted-configs.json is not valid"), "{r:?}");
    let r = s.run(&["trust"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(listener.accept().is_err());
}

/// On a terminal, a project's configuration is shown and asked about:
/// "no" starts nothing, "yes" starts it and remembers the approval.
#[cfg(target_os = "linux")]
#[test]
fn a_project_configuration_is_asked_about_on_a_terminal() {
    use crate::terminal::Terminal;

    let s = Sandbox::new("consent-pty");
    let tk = mcp_testkit::binary_path().to_string_lossy().into_owned();
    s.write(
        "mcp.toml",
        &format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"kit\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\nenv = {{ TOKEN = \"secret-env-value\" }}\n"
        ),
    );
    let ask = |answer: &str| {
        let mut t = Terminal::start(s.command(&["call", "kit", "echo", "message=hi"]));
        t.wait_for("Start its servers? [y]es and remember, [o]nce, [N]o: ");
        let screen = t.screen();
        assert!(screen.contains("mcp.toml comes with this project and has not been approved"));
        assert!(screen.contains(&format!("kit: runs {tk} stdio with TOKEN")), "{screen}");
        assert!(!screen.contains("secret-env-value"), "{screen}");
        t.type_line(answer);
        t.finish()
    };
    let (code, out) = ask("n");
    assert_eq!((code, out.as_str()), (2, ""));
    let (code, out) = ask("y");
    assert_eq!((code, out.as_str()), (0, "hi\n"));
    // Remembered: no question any more, even without a terminal.
    let r = s.run(&["call", "kit", "echo", "message=again"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "again\n"), "{r:?}");
}

/// On a terminal, a call the policy marks `ask` is asked about once,
/// always or never; "always" and "never" are kept.
#[cfg(target_os = "linux")]
#[test]
fn a_call_is_asked_about_on_a_terminal_and_always_is_kept() {
    use crate::terminal::Terminal;

    let s = Sandbox::new("approve-pty");
    let tk = mcp_testkit::binary_path().to_string_lossy().into_owned();
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n[mcp_client.approval]\ndefault = \"ask\"\n[[mcp_client.servers]]\nname = \"kit\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n"
        ),
    );
    let call = |tool: &str, answer: &str| {
        let args = ["--config", "conf/mcp.toml", "call", "kit", tool, "message=\u{1b}[2Jx"];
        let mut t = Terminal::start(s.command(&args));
        t.wait_for("Allow it? [o]nce, [a]lways, [N]o, ne[v]er: ");
        let screen = t.screen();
        assert!(screen.contains(&format!("call tool {tool} of server kit (the default tier)?")));
        // The arguments are shown, and inert.
        assert!(screen.contains("arguments: {\"message\":\"\\u001b[2Jx\"}"), "{screen:?}");
        assert!(!screen.contains("\u{1b}[2J"), "{screen:?}");
        t.type_line(answer);
        t.finish()
    };
    let (code, _) = call("echo", "n");
    assert_eq!(code, 2);
    let (code, out) = call("echo", "o");
    // The result as output.rs shows it: inert.
    assert_eq!((code, out.as_str()), (0, "\\x1b[2Jx\n"));
    let (code, _) = call("echo", "a");
    assert_eq!(code, 0);
    let (code, _) = call("add", "v");
    assert_eq!(code, 2);
    // Kept: no question, either way, without a terminal.
    let config = ["--config", "conf/mcp.toml"];
    let r = s.run(&[&config[..], &["call", "kit", "echo", "message=ok"]].concat());
    assert_eq!((r.code, r.stdout.as_str()), (0, "ok\n"), "{r:?}");
    let r = s.run(&[&config[..], &["--yes", "call", "kit", "add", "a=1", "b=1"]].concat());
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("an earlier answer"), "{r:?}");
    assert!(s.dir.join(".local/state/mcpc/approvals.json").is_file());
}
