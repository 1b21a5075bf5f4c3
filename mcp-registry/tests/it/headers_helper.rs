//! `headers_helper`: a command whose output gives a server's headers,
//! against the testkit requiring a bearer token. The helper is a shell
//! script that counts its runs in a file. It runs at connect and at each
//! new connection, its headers are reused while they are good, a 401 to
//! them runs it once more before giving up; a helper that hangs, fails,
//! prints garbage or too much is a typed error naming the server, and its
//! output is shown nowhere.

use std::path::{Path, PathBuf};

use mcp_host_registry::{Config, DefaultConnector, Error, HelperError, Registry, RegistryOptions};
use mcp_test_support::LogCapture;
use mcp_testkit::{HttpConfig, HttpServerHandle, serve_http};

const TOKEN: &str = "helper-minted-token-41";
const GARBAGE: &str = "garbage-with-a-secret-42";

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir =
        std::env::temp_dir().join(format!("mcp-headers-helper-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// How often the helper ran.
fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs")).map_or(0, |s| s.lines().count())
}

/// A registry of one server `corp` at `url` whose helper runs `script`
/// (with `$RUNS` the count file) and has `extra` keys.
fn registry(url: &str, dir: &Path, script: &str, extra: &str) -> Registry {
    let script = format!("echo x >> '{}'; {script}", dir.join("runs").display());
    let toml = format!(
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"corp\"\nendpoint = \"{url}\"\n\
         headers_helper = {{ command = \"sh\", args = [\"-c\", {script:?}]{extra} }}\n"
    );
    let loaded = Config::from_toml_str(&toml, &Default::default()).unwrap();
    let mut connector = DefaultConnector::default();
    connector.discover_path = false;
    Registry::new(loaded.config, RegistryOptions::with_connector(connector))
}

async fn server() -> HttpServerHandle {
    serve_http(HttpConfig { require_auth: Some(TOKEN.into()), ..HttpConfig::default() })
        .await
        .expect("the testkit starts")
}

/// The helper's error inside a registry error.
fn helper_error(err: &Error) -> HelperError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(h) = e.downcast_ref::<HelperError>() {
            return h.clone();
        }
        source = e.source();
    }
    panic!("no HelperError in {err:?}")
}

#[tokio::test]
async fn headers_come_from_the_helper_are_reused_and_made_again_after_a_401() {
    let logs = LogCapture::start(tracing::Level::TRACE);
    let http = server().await;
    // JSON, good for five minutes: one run for several requests.
    let dir = scratch("json");
    let json = format!(
        r#"printf '{{"headers": {{"Authorization": "Bearer {TOKEN}"}}, "expires_in": 300}}'"#
    );
    let reg = registry(&http.url(), &dir.0, &json, "");
    reg.list_tools("corp").await.expect("tools with the helper's token");
    reg.ping("corp").await.expect("ping");
    assert_eq!(runs(&dir.0), 1);
    // A new connection runs it again.
    reg.close("corp").await.expect("close");
    reg.ping("corp").await.expect("ping after reconnecting");
    assert_eq!(runs(&dir.0), 2);
    reg.close_all().await;

    // Lines; the first run's token is stale: the 401 runs it again.
    let dir = scratch("lines");
    let stale = format!(
        "if [ $(wc -l < '{}') -eq 1 ]; then echo 'Authorization: Bearer stale'; else echo 'Authorization: Bearer {TOKEN}'; fi",
        dir.0.join("runs").display()
    );
    let reg = registry(&http.url(), &dir.0, &stale, "");
    reg.list_tools("corp").await.expect("tools after the helper ran again");
    assert_eq!(runs(&dir.0), 2);
    reg.close_all().await;

    // Always stale: one more run, then the 401 is the answer.
    let dir = scratch("stale");
    let reg = registry(&http.url(), &dir.0, "echo 'Authorization: Bearer stale'", "");
    let err = reg.list_tools("corp").await.unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    assert_eq!(runs(&dir.0), 2);
    reg.close_all().await;
    assert!(!logs.text().contains(TOKEN), "the helper's token reached the log");
    http.shutdown().await;
}

#[tokio::test]
async fn a_helper_that_hangs_fails_or_prints_garbage_is_an_error_naming_the_server() {
    let logs = LogCapture::start(tracing::Level::TRACE);
    let http = server().await;
    let garbage = format!("echo '{GARBAGE}'");
    let cases = [
        ("sleep 30", ", timeout_secs = 1", "took longer than 1s"),
        ("echo 'Authorization: Bearer x'; exit 3", "", "exited with code 3"),
        (garbage.as_str(), "", "unusable"),
        ("yes 'A: b'", ", max_output_bytes = 1000", "more than 1000 bytes"),
        ("true", "", "unusable (no headers"),
    ];
    for (i, (script, extra, expected)) in cases.into_iter().enumerate() {
        let dir = scratch(&format!("bad-{i}"));
        let reg = registry(&http.url(), &dir.0, script, extra);
        let started = std::time::Instant::now();
        let err = reg.list_tools("corp").await.unwrap_err();
        assert!(started.elapsed().as_secs() < 10, "{script}: bounded");
        let shown = err.to_string();
        assert!(shown.contains(expected), "{script}: {shown}");
        let helper = helper_error(&err);
        assert!(helper.to_string().contains("server \"corp\""), "{helper}");
        assert!(!shown.contains(GARBAGE) && !format!("{err:?}").contains(GARBAGE), "{shown}");
        reg.close_all().await;
    }
    let missing = scratch("missing");
    let toml = format!(
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"corp\"\nendpoint = \"{}\"\n\
         headers_helper = {{ command = \"/nonexistent/helper-{}\" }}\n",
        http.url(),
        std::process::id()
    );
    let loaded = Config::from_toml_str(&toml, &Default::default()).unwrap();
    let reg = Registry::new(loaded.config, RegistryOptions::default());
    let err = reg.list_tools("corp").await.unwrap_err();
    assert!(matches!(helper_error(&err), HelperError::Start { .. }), "{err:?}");
    drop(missing);
    assert!(!logs.text().contains(GARBAGE), "the helper's output reached the log");
    http.shutdown().await;
}
