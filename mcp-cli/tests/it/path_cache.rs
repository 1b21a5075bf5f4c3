//! The login shell's PATH kept between runs: a second start with a command
//! server runs no login shell, a changed startup file or
//! `MCPC_NO_PATH_CACHE` runs it again.

#![cfg(unix)]

use crate::run::Sandbox;

/// How many times the login shell read the sandbox's `.profile`.
fn probes(s: &Sandbox) -> usize {
    std::fs::read_to_string(s.dir.join("probe-runs")).map_or(0, |t| t.lines().count())
}

#[test]
fn a_second_start_runs_no_login_shell() {
    let s = Sandbox::new("path-cache");
    // `/bin/sh -il` reads `$HOME/.profile`: it notes each run (outside the
    // files the cache watches) and adds a directory to the PATH.
    s.write(".profile", "echo run >> \"$HOME/probe-runs\"\nPATH=\"/opt/login-only/bin:$PATH\"\n");
    s.write_approved(
        "mcp.toml",
        &format!(
            "[[mcp_client.servers]]\nname = \"a\"\ncommand = \"{}\"\nargs = [\"stdio\"]\n",
            mcp_testkit::binary_path().display()
        ),
    );
    let run = |env: &[(&str, &str)]| {
        let mut env = env.to_vec();
        env.push(("SHELL", "/bin/sh"));
        let r = s.run_env(&["tools", "a"], &env);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.starts_with("a: "), "{r:?}");
    };

    run(&[]);
    assert_eq!(probes(&s), 1, "the first start probes the login shell");
    let cache = s.dir.join("cache/mcpc/login-shell-path");
    let text = std::fs::read(&cache).expect("the PATH is cached");
    let text = String::from_utf8_lossy(&text);
    assert!(text.lines().last().unwrap().starts_with("/opt/login-only/bin:"), "{text}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    run(&[]);
    run(&[]);
    assert_eq!(probes(&s), 1, "later starts use the cached PATH");

    // A changed startup file: probed again, then cached again.
    s.write(
        ".profile",
        "echo run >> \"$HOME/probe-runs\"\nPATH=\"/opt/login-only/bin:/opt/more/bin:$PATH\"\n",
    );
    run(&[]);
    assert_eq!(probes(&s), 2, "a changed .profile is probed again");
    run(&[]);
    assert_eq!(probes(&s), 2);

    // Turned off: every start probes.
    run(&[("MCPC_NO_PATH_CACHE", "1")]);
    assert_eq!(probes(&s), 3, "MCPC_NO_PATH_CACHE probes every time");

    // A corrupt cache file: probed again and rewritten.
    std::fs::write(&cache, "not a cache file\n").unwrap();
    run(&[]);
    assert_eq!(probes(&s), 4, "a corrupt cache file is a miss");
    run(&[]);
    assert_eq!(probes(&s), 4, "and is rewritten");
}
