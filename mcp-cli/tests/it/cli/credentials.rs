//! Credentials: `mcpc login` failures, stored tokens reused, and secrets
//! from the environment never printed.

use std::path::PathBuf;

use mcp_testkit::oauth::FakeAuthServer;
use mcp_testkit::{HttpConfig, serve_http};
use serde_json::Value;

use crate::run::{Run, Sandbox};

#[test]
fn login_failures_exit_3_or_2() {
    let s = Sandbox::new("login");
    s.write_approved(
        "mcp.toml",
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"remote\"\nendpoint = \"http://127.0.0.1:1/mcp\"\nauth = { kind = \"oauth\", scopes = [\"read\"] }\n",
    );
    let r = s.run(&["login", "remote", "--timeout", "5"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("remote"), "{r:?}");
    assert!(!r.stdout.contains("logged in"), "{r:?}");
    let r = s.run(&["login", "elsewhere"]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = s.run(&["tools", "remote", "--headless"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unexpected argument '--headless'"), "{r:?}");
}

#[test]
fn login_then_tools_reuse_the_stored_token() {
    const TOKEN: &str = "cli-oauth-access-token-9";
    let s = Sandbox::new("oauth");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (auth, http) = rt.block_on(async {
        let auth = FakeAuthServer::start(TOKEN).await.unwrap();
        let http = serve_http(HttpConfig {
            require_auth: Some(TOKEN.into()),
            challenge: Some(auth.challenge()),
            ..Default::default()
        })
        .await
        .unwrap();
        auth.set_resource(http.url());
        (auth, http)
    });
    s.write_approved(
        "mcp.toml",
        &format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"remote\"\nendpoint = \"{}\"\nauth = {{ kind = \"oauth\" }}\n",
            http.url()
        ),
    );
    let clean = |r: &Run| assert!(!r.stdout.contains(TOKEN) && !r.stderr.contains(TOKEN), "{r:?}");

    // Before the login: the command to run, exit 3, no prompt.
    let r = s.run(&["tools", "remote"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("needs an OAuth login: run `mcpc login remote`"), "{r:?}");
    assert!(!r.stderr.contains("Open this URL"), "{r:?}");
    clean(&r);
    assert_eq!(auth.tokens_issued(), 0);

    let r = s.run(&["login", "remote", "--headless", "--timeout", "30"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "logged in to remote\n"), "{r:?}");
    clean(&r);
    assert_eq!(auth.tokens_issued(), 1);

    // The token file, in the sandbox's data directory, 0600.
    let dir = s.dir.join("data").join("mcpc").join("oauth");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // Later runs use the stored token: no new authorization.
    let r = s.run(&["tools", "remote"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("echo"), "{r:?}");
    clean(&r);
    let r = s.run(&["call", "remote", "echo", "message=authorized"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "authorized\n"), "{r:?}");
    clean(&r);
    let r = s.run(&["--output", "json", "login", "remote", "--headless"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v, serde_json::json!({"server": "remote", "logged_in": true}));
    assert_eq!(auth.tokens_issued(), 1);

    // Logout: this authorization server offers no revocation; the tokens
    // are deleted, so the next run needs a login again.
    let r = s.run(&["logout", "remote"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "logged out of remote (tokens deleted)\n"),
        "{r:?}"
    );
    clean(&r);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!stored.contains(TOKEN) && !stored.contains("\"tokens\""), "{stored}");
    let r = s.run(&["tools", "remote"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("run `mcpc login remote`"), "{r:?}");
    let r = s.run(&["--output", "json", "logout"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v, serde_json::json!({"server": "remote", "logged_out": true, "revoked": null}));
    assert_eq!(auth.tokens_issued(), 1);
    rt.block_on(http.shutdown());
}

#[test]
fn secrets_from_the_environment_never_printed() {
    let s = Sandbox::new("secrets");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http = rt
        .block_on(serve_http(HttpConfig {
            require_auth: Some("env-secret-42".into()),
            ..Default::default()
        }))
        .unwrap();
    s.write_approved(
        "mcp.toml",
        &format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"web\"\nendpoint = \"{}\"\nauth = {{ kind = \"bearer_token\", token_env = \"WEB_TOKEN\" }}\n",
            http.url()
        ),
    );
    let r = s.run_env(&["call", "web", "echo", "message=ok"], &[("WEB_TOKEN", "env-secret-42")]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "ok\n"), "{r:?}");
    let r = s.run_env(&["servers"], &[("WEB_TOKEN", "env-secret-42")]);
    assert!(!r.stdout.contains("env-secret-42") && !r.stdout.contains("/mcp"), "{r:?}");
    // A missing secret makes only its server unusable: listed with a
    // warning, and its use refused as a configuration error naming the
    // variable.
    let r = s.run(&["servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(
            "server \"web\", key `auth.token_env`: the environment variable WEB_TOKEN is not set"
        ),
        "{r:?}"
    );
    let r = s.run(&["call", "web", "echo", "message=ok"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("WEB_TOKEN"), "{r:?}");
    let r = s.run_env(&["ping", "web"], &[("WEB_TOKEN", "wrong-secret-77")]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(!r.stderr.contains("wrong-secret-77"), "{r:?}");
    rt.block_on(http.shutdown());
}
