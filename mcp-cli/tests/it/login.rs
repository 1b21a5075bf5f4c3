//! `mcpc login` end to end through the real loopback listener, with this
//! test as the browser: `mcpc` prints the authorization URL on stderr
//! (`MCPC_NO_BROWSER` keeps it from opening one), the test fetches it from
//! the testkit's authorization server, follows the redirect to the
//! `redirect_uri` on `127.0.0.1`, and `mcpc` exchanges the code and keeps
//! the token for later runs. Also the ways a login fails: the user says no,
//! a callback with another `state`, nobody comes.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Empty};
use hyper::StatusCode;
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mcp_auth::url::query_params;
use mcp_testkit::oauth::FakeAuthServer;
use mcp_testkit::{HttpConfig, HttpServerHandle};

pub(crate) const TOKEN: &str = "loopback-login-access-token-5";
/// How long one `mcpc` run may take.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// How long `mcpc login` may take to print the URL.
const URL_LIMIT: Duration = Duration::from_secs(30);

/// An MCP server that requires a token, its authorization server, and a
/// scratch directory (working directory, home, config and data) with a
/// configuration naming the server `remote`.
pub(crate) struct World {
    rt: tokio::runtime::Runtime,
    pub(crate) auth: FakeAuthServer,
    /// `None` once shut down.
    http: Option<HttpServerHandle>,
    dir: PathBuf,
    config: PathBuf,
}

impl World {
    pub(crate) fn new(name: &str) -> World {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (auth, http) = rt
            .block_on(FakeAuthServer::with_protected_server(TOKEN, HttpConfig::default()))
            .expect("the servers start");
        let dir = std::env::temp_dir().join(format!("mcpc-login-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("servers.toml");
        std::fs::write(
            &config,
            format!(
                "[mcp_client]\n[[mcp_client.servers]]\nname = \"remote\"\nendpoint = \"{}\"\nauth = {{ kind = \"oauth\" }}\n",
                http.url()
            ),
        )
        .unwrap();
        World { rt, auth, http: Some(http), dir, config }
    }

    pub(crate) fn http(&self) -> &HttpServerHandle {
        self.http.as_ref().expect("the MCP server runs")
    }

    /// `mcpc --config FILE ARGS...`, confined to the scratch directory, no
    /// browser opened.
    pub(crate) fn mcpc(&self, args: &[&str]) -> Command {
        confined_mcpc(&self.config, &self.dir, args)
    }

    /// Starts `mcpc login remote` with these extra arguments.
    fn login(&self, extra: &[&str]) -> Running {
        let mut args = vec!["login", "remote"];
        args.extend_from_slice(extra);
        Running::start(self.mcpc(&args))
    }

    /// Runs `mcpc ARGS...` to its end.
    fn run(&self, args: &[&str]) -> Finished {
        Running::start(self.mcpc(args)).finish()
    }

    /// The browser: one GET, redirects not followed.
    pub(crate) fn browse(&self, url: &str) -> (StatusCode, Option<String>, String) {
        self.rt.block_on(async {
            let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
            let uri: hyper::Uri = url.parse().unwrap();
            let exchange = async {
                let resp = client.get(uri).await.unwrap();
                let status = resp.status();
                let location =
                    resp.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
                let body = resp.into_body().collect().await.unwrap().to_bytes();
                (status, location, String::from_utf8_lossy(&body).into_owned())
            };
            tokio::time::timeout(Duration::from_secs(10), exchange).await.expect("bounded")
        })
    }

    /// The stored token files.
    pub(crate) fn token_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.dir.join("data").join("mcpc").join("oauth")) {
            Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// `mcpc --config CONFIG ARGS...` confined to `dir` (its home, XDG config
/// and data folders, working directory), no browser opened, no colour,
/// stdout and stderr captured.
pub(crate) fn confined_mcpc(config: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpc"));
    cmd.arg("--config")
        .arg(config)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("MCPC_NO_BROWSER", "1")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An `mcpc` process whose stderr is read line by line as it comes.
pub(crate) struct Running {
    child: Child,
    started: Instant,
    lines: mpsc::Receiver<String>,
    stderr: Vec<String>,
    stdout: std::thread::JoinHandle<String>,
}

pub(crate) struct Finished {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    elapsed: Duration,
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {} after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.elapsed, self.stdout, self.stderr
        )
    }
}

impl Running {
    pub(crate) fn start(mut cmd: Command) -> Running {
        let mut child = cmd.spawn().expect("mcpc starts");
        let mut out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, started: Instant::now(), lines, stderr: Vec::new(), stdout }
    }

    /// The authorization URL `mcpc` prints under "Open this URL to log in:".
    pub(crate) fn url(&mut self) -> String {
        let deadline = Instant::now() + URL_LIMIT;
        let mut announced = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(e) => {
                    let _ = self.child.kill();
                    panic!("no authorization URL ({e}); stderr so far: {:?}", self.stderr);
                }
            };
            self.stderr.push(line.clone());
            if announced {
                return line.trim().to_owned();
            }
            announced = line.contains("Open this URL to log in:");
        }
    }

    /// Waits for the end (at most [`RUN_LIMIT`]; killed and failed beyond).
    pub(crate) fn finish(mut self) -> Finished {
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if self.started.elapsed() > RUN_LIMIT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("mcpc did not finish within {RUN_LIMIT:?}; stderr: {:?}", self.stderr);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let elapsed = self.started.elapsed();
        // The reader ends with the pipe, which ended with the process.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stderr.push(line);
        }
        Finished {
            code: status.code().unwrap_or(-1),
            stdout: self.stdout.join().unwrap(),
            stderr: self.stderr.join("\n"),
            elapsed,
        }
    }
}

/// A query parameter of a URL.
fn param(url: &str, name: &str) -> Option<String> {
    query_params(url).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// Neither output of a run shows a token or a code.
fn no_secrets(run: &Finished, secrets: &[&str]) {
    for secret in secrets.iter().chain([&TOKEN]) {
        assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret), "{secret}: {run:?}");
    }
}

fn path_count(auth: &FakeAuthServer, path: &str) -> usize {
    auth.paths().iter().filter(|p| *p == path).count()
}

#[test]
fn the_browser_completes_the_login_and_later_runs_use_the_stored_token() {
    let w = World::new("ok");
    let mut login = w.login(&["--timeout", "30"]);
    let url = login.url();

    // The URL leads to the authorization endpoint and names the loopback
    // listener as the redirect URI.
    assert!(url.starts_with(&format!("{}/authorize?", w.auth.base())), "{url}");
    let redirect_uri = param(&url, "redirect_uri").expect("a redirect_uri");
    let port = redirect_uri
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/callback"))
        .and_then(|p| p.parse::<u16>().ok());
    assert!(port.is_some_and(|p| p != 0), "{redirect_uri}");
    let state = param(&url, "state").expect("a state");

    // The authorization server approves and redirects the browser there.
    let (status, location, _) = w.browse(&url);
    assert_eq!(status, StatusCode::FOUND);
    let location = location.expect("a Location");
    assert!(location.starts_with(&format!("{redirect_uri}?")), "{location}");
    assert_eq!(param(&location, "state").as_deref(), Some(state.as_str()));
    let code = param(&location, "code").expect("a code");

    // The listener takes the callback and tells the user.
    let (status, _, page) = w.browse(&location);
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Authorization complete"), "{page}");

    let run = login.finish();
    assert_eq!((run.code, run.stdout.as_str()), (0, "logged in to remote\n"), "{run:?}");
    no_secrets(&run, &[&code]);
    assert_eq!(w.auth.tokens_issued(), 1);
    let files = w.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(std::fs::read_to_string(&files[0]).unwrap().contains(TOKEN));

    // The next run uses the stored token: no login, no new authorization.
    // (Its first request may go without: the 401 names the authorization
    // server, whose issuer is half of the token's key in the store.)
    let before = w.http().requests().len();
    let run = w.run(&["tools", "remote"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("echo"), "{run:?}");
    no_secrets(&run, &[&code]);
    assert_eq!(w.auth.tokens_issued(), 1);
    assert_eq!(path_count(&w.auth, "/authorize"), 1);
    let bearer = format!("Bearer {TOKEN}");
    let requests = &w.http().requests()[before..];
    assert!(requests.len() >= 2, "{requests:?}");
    for r in &requests[1..] {
        let auth = r.headers.get("authorization").and_then(|v| v.to_str().ok());
        assert_eq!(auth, Some(bearer.as_str()), "{} {}", r.method, r.target);
    }
}

#[test]
fn a_denied_authorization_fails_with_the_reason_and_stores_nothing() {
    let w = World::new("denied");
    w.auth.deny_authorizations(true);
    let mut login = w.login(&["--timeout", "30"]);
    let url = login.url();
    let (status, location, _) = w.browse(&url);
    assert_eq!(status, StatusCode::FOUND);
    let location = location.expect("a Location");
    assert_eq!(param(&location, "error").as_deref(), Some("access_denied"));
    assert!(param(&location, "code").is_none());
    let (status, _, page) = w.browse(&location);
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("did not complete"), "{page}");

    let run = login.finish();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(run.stderr.contains("OAuth login to MCP server \"remote\" failed"), "{run:?}");
    assert!(run.stderr.contains("access_denied"), "{run:?}");
    assert!(run.stderr.contains("the user denied access"), "{run:?}");
    assert_eq!((w.auth.tokens_issued(), path_count(&w.auth, "/token")), (0, 0));
    let stored: String =
        w.token_files().iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(!stored.contains("\"tokens\""), "{stored}");

    // Still logged out.
    let run = w.run(&["tools", "remote"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("run `mcpc login remote`"), "{run:?}");
}

#[test]
fn a_callback_with_another_state_is_refused_before_the_code_is_used() {
    let w = World::new("state");
    let mut login = w.login(&["--timeout", "30"]);
    let url = login.url();
    let state = param(&url, "state").expect("a state");
    let (_, location, _) = w.browse(&url);
    let location = location.expect("a Location");
    let code = param(&location, "code").expect("a code");
    // Someone else's redirect: the right code, a state this login never made.
    let forged = location.replace(&format!("state={state}"), "state=forged-state-value");
    assert_ne!(forged, location);
    let (status, _, page) = w.browse(&forged);
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("did not complete"), "{page}");

    let run = login.finish();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("state does not match"), "{run:?}");
    no_secrets(&run, &[&code]);
    // The code never reached the token endpoint.
    assert_eq!((w.auth.tokens_issued(), path_count(&w.auth, "/token")), (0, 0));
    assert!(w.token_files().iter().all(|f| !std::fs::read_to_string(f).unwrap().contains(TOKEN)));
}

#[test]
fn a_login_nobody_completes_ends_at_its_timeout() {
    let w = World::new("timeout");
    let mut login = w.login(&["--timeout", "2"]);
    let url = login.url();
    let redirect_uri = param(&url, "redirect_uri").expect("a redirect_uri");
    let run = login.finish();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("timed out waiting for the authorization callback"), "{run:?}");
    assert!(run.elapsed >= Duration::from_secs(2), "{run:?}");
    assert!(run.elapsed < Duration::from_secs(20), "{run:?}");
    assert_eq!(path_count(&w.auth, "/token"), 0);
    // The listener went with the process.
    let addr = redirect_uri.trim_start_matches("http://").trim_end_matches("/callback");
    assert!(std::net::TcpStream::connect(addr).is_err(), "{addr} still listening");
}

/// A whole login, the browser approving.
fn log_in(w: &World) {
    let mut login = w.login(&["--timeout", "30"]);
    let url = login.url();
    let (_, location, _) = w.browse(&url);
    w.browse(&location.expect("a Location"));
    let run = login.finish();
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn logout_forgets_the_tokens_after_the_server_is_gone() {
    let mut w = World::new("gone");
    log_in(&w);
    let files = w.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(std::fs::read_to_string(&files[0]).unwrap().contains(TOKEN));

    // The MCP server is shut down; its authorization server (the issuer
    // kept with the tokens) still answers, and offers no revocation.
    let http = w.http.take().expect("the MCP server runs");
    w.rt.block_on(http.shutdown());
    let run = w.run(&["logout", "remote"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "logged out of remote (tokens deleted)\n"),
        "{run:?}"
    );
    no_secrets(&run, &[]);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!stored.contains(TOKEN) && !stored.contains("\"tokens\""), "{stored}");
    assert!(stored.contains("registered-client"), "the registration is kept: {stored}");
}

#[test]
fn logout_forgets_the_tokens_when_neither_server_answers() {
    let mut w = World::new("nobody");
    log_in(&w);
    let files = w.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let http = w.http.take().expect("the MCP server runs");
    w.rt.block_on(http.shutdown());
    // The authorization server stops with the runtime that started it.
    let old = std::mem::replace(&mut w.rt, tokio::runtime::Runtime::new().unwrap());
    old.shutdown_timeout(std::time::Duration::from_secs(5));

    let run = w.run(&["logout", "remote"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("logged out of remote"), "{run:?}");
    assert!(run.stderr.contains("could not be revoked"), "{run:?}");
    no_secrets(&run, &[]);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!stored.contains(TOKEN) && !stored.contains("\"tokens\""), "{stored}");
}
