//! `mcpc login`, a call and `mcpc logout` against a real OpenID provider
//! (`oidc-provider`, see `mcp-test-support`'s `idp` module) set up the way
//! an Entra ID app registration is: it refuses the MCP server's URL as
//! `resource` and gives tokens for its application id URI, and knows one
//! exact redirect URI for a pre-registered client. The configuration says
//! so (`resource = false`, `redirect_port`, `client_id`); the test plays
//! the browser. Nothing the provider issued shows in `mcpc`'s output.

use std::path::PathBuf;
use std::process::Command;

use mcp_test_support::idp::{Browser, Provider};
use mcp_testkit::{HttpConfig, HttpServerHandle, JwtAuth, serve_http};
use serde_json::json;

use crate::login::{Finished, Running, confined_mcpc};

/// The provider's application id URI for the MCP server.
const APP: &str = "api://mcp-server";

struct World {
    rt: tokio::runtime::Runtime,
    _idp: Provider,
    _http: HttpServerHandle,
    dir: PathBuf,
    config: PathBuf,
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl World {
    fn new(name: &str) -> World {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let idp = Provider::start(&json!({
            "resources": [APP],
            "default_resource": APP,
            "clients": [{
                "client_id": "mcpc-desktop",
                "application_type": "native",
                "redirect_uris": [format!("http://127.0.0.1:{port}/callback")],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }],
        }));
        let auth = JwtAuth::new(idp.issuer(), idp.jwks_uri()).with_audience(APP);
        let http = rt
            .block_on(serve_http(HttpConfig { jwt_auth: Some(auth), ..HttpConfig::default() }))
            .expect("the MCP server starts");
        let dir = std::env::temp_dir().join(format!("mcpc-idp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("servers.toml");
        std::fs::write(
            &config,
            format!(
                "[mcp_client]\n[[mcp_client.servers]]\nname = \"remote\"\nendpoint = \"{}\"\n\
                 auth = {{ kind = \"oauth\", client_id = \"mcpc-desktop\", resource = false, redirect_port = {port} }}\n",
                http.url()
            ),
        )
        .unwrap();
        World { rt, _idp: idp, _http: http, dir, config }
    }

    fn mcpc(&self, args: &[&str]) -> Command {
        confined_mcpc(&self.config, &self.dir, args)
    }

    fn run(&self, args: &[&str]) -> Finished {
        Running::start(self.mcpc(args)).finish()
    }

    /// The stored token file's text.
    fn stored(&self) -> String {
        let dir = self.dir.join("data").join("mcpc").join("oauth");
        let mut text = String::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten() {
            text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default());
        }
        text
    }
}

/// The string values of a stored token file that look like credentials.
fn credentials(stored: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(stored).unwrap_or_default();
    let mut out = Vec::new();
    let mut stack = vec![&value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    if matches!(k.as_str(), "access_token" | "refresh_token")
                        && let Some(s) = v.as_str()
                    {
                        out.push(s.to_owned());
                    }
                    stack.push(v);
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

#[test]
fn login_call_and_logout_with_an_entra_style_provider() {
    let w = World::new("entra");
    let mut login = Running::start(w.mcpc(&["login", "remote", "--timeout", "30"]));
    let url = login.url();
    assert!(!url.contains("resource="), "resource = false: {url}");
    let (callback, status) = w.rt.block_on(Browser::new().authorize(&url)).expect("the login");
    assert_eq!(status, 200);
    let run = login.finish();
    assert_eq!((run.code, run.stdout.as_str()), (0, "logged in to remote\n"), "{run:?}");
    let stored = w.stored();
    let secrets = credentials(&stored);
    assert!(!secrets.is_empty(), "tokens are stored: {stored}");
    let code = callback.split("code=").nth(1).unwrap_or_default().split('&').next().unwrap();

    // The stored token opens the MCP server, which checks it is the
    // provider's, for the application id URI.
    let call = w.run(&["call", "remote", "echo", "message=via entra"]);
    assert_eq!(call.code, 0, "{call:?}");
    assert!(call.stdout.contains("via entra"), "{call:?}");

    let logout = w.run(&["logout", "remote"]);
    assert_eq!(logout.code, 0, "{logout:?}");
    assert!(logout.stdout.starts_with("logged out of remote"), "{logout:?}");
    assert!(credentials(&w.stored()).is_empty(), "the tokens are deleted");
    for run in [&run, &call, &logout] {
        for secret in secrets.iter().map(String::as_str).chain([code]) {
            assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret), "{run:?}");
        }
    }
}

impl World {
    /// `mcpc login remote ARGS...` with this test as the browser.
    fn login(&self, extra: &[&str]) -> Finished {
        let mut args = vec!["login", "remote", "--timeout", "30"];
        args.extend_from_slice(extra);
        let mut login = Running::start(self.mcpc(&args));
        let url = login.url();
        self.rt.block_on(Browser::new().authorize(&url)).expect("the login");
        login.finish()
    }
}

#[test]
fn accounts_log_in_are_listed_and_log_out_apart() {
    let w = World::new("accounts");
    assert_eq!(w.login(&[]).code, 0);
    let work = w.login(&["--account", "work"]);
    assert_eq!((work.code, work.stdout.as_str()), (0, "logged in to remote\n"), "{work:?}");
    let listed = w.run(&["accounts"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{listed:?}");
    assert!(lines[1].starts_with("remote") && lines[1].contains("(default)"), "{listed:?}");
    assert!(lines[2].starts_with("remote") && lines[2].contains("work"), "{listed:?}");
    let secrets = credentials_of_all(&w);
    assert_eq!(secrets.len(), 4, "two accounts, an access and a refresh token each");

    let out = w.run(&["logout", "remote", "--account", "work"]);
    assert_eq!(out.code, 0, "{out:?}");
    let json = w.run(&["--output", "json", "accounts", "remote"]);
    let rows: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("JSON");
    assert_eq!(rows, json!([{"server": "remote", "account": null, "issuer": rows[0]["issuer"]}]));
    // The default account still works.
    let call = w.run(&["call", "remote", "echo", "message=still here"]);
    assert_eq!(call.code, 0, "{call:?}");
    for run in [&work, &listed, &out, &json, &call] {
        for secret in &secrets {
            assert!(!run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()));
        }
    }
}

/// The tokens in every stored file.
fn credentials_of_all(w: &World) -> Vec<String> {
    let dir = w.dir.join("data").join("mcpc").join("oauth");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten() {
        out.extend(credentials(
            &std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default(),
        ));
    }
    out
}
