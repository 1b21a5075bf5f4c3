//! OAuth servers end to end on loopback: the testkit's HTTP server requires
//! a bearer token and points its 401 at the testkit's fake authorization
//! server. Without a login a call fails with the host's login command;
//! after `Registry::login` (headless handler) the tokens are in the file
//! store (`0600`) and a fresh registry uses them without asking anyone.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mcp_host_registry::mcp_auth::FileTokenStore;
use mcp_host_registry::{Config, DefaultConnector, Error, OAuthHandler, Registry, RegistryOptions};
use mcp_testkit::oauth::FakeAuthServer;
use mcp_testkit::{HttpConfig, serve_http};
use serde_json::json;

const TOKEN: &str = "registry-oauth-access-token-7";
const LOGIN_LIMIT: Duration = Duration::from_secs(30);

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("mcp-registry-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn registry(url: &str, store: &TempDir, handler: OAuthHandler) -> Registry {
    registry_with(url, store, handler, "")
}

/// `auth_extra`: more members of the `auth` table (`, scopes = [...]`).
fn registry_with(url: &str, store: &TempDir, handler: OAuthHandler, auth_extra: &str) -> Registry {
    let toml = format!(
        "[mcp_client]\n\
         [[mcp_client.servers]]\nname = \"remote\"\nendpoint = \"{url}\"\nauth = {{ kind = \"oauth\"{auth_extra} }}\n\
         [[mcp_client.servers]]\nname = \"plain\"\nendpoint = \"{url}\"\n"
    );
    let config = Config::from_toml_str(&toml, &Default::default()).unwrap().config;
    let mut connector = DefaultConnector::default();
    connector.discover_path = false;
    connector.oauth_handler = handler;
    connector.token_store = Some(Arc::new(FileTokenStore::new(&store.0)));
    let mut options = RegistryOptions::with_connector(connector);
    options.login_command = Some("my-host login {server}".into());
    Registry::new(config, options)
}

/// The fake authorization server and an MCP server it protects, whose 401
/// carries `challenge(auth)` (by default the fake server's own challenge,
/// which names the scope `mcp`).
async fn protected(
    challenge: Option<fn(&FakeAuthServer) -> String>,
) -> (FakeAuthServer, mcp_testkit::HttpServerHandle) {
    let auth = FakeAuthServer::start(TOKEN).await.unwrap();
    let challenge = challenge.map_or_else(|| auth.challenge(), |make| make(&auth));
    let http = serve_http(HttpConfig {
        require_auth: Some(TOKEN.into()),
        challenge: Some(challenge),
        ..Default::default()
    })
    .await
    .unwrap();
    auth.set_resource(http.url());
    (auth, http)
}

#[tokio::test]
async fn login_then_calls_use_the_stored_token() {
    let (auth, http) = protected(None).await;
    let store = TempDir::new("login");

    // No login yet, no handler: a clear error with the host's command, and
    // nothing registered or authorized behind the user's back.
    let first = registry(&http.url(), &store, OAuthHandler::None);
    let err = first.list_tools("remote").await.unwrap_err();
    assert!(matches!(err, Error::LoginRequired { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "MCP server \"remote\" needs an OAuth login: run `my-host login remote`"
    );
    let err = first.call_tool("remote", "echo", None).await.unwrap_err();
    assert!(matches!(err, Error::LoginRequired { .. }), "{err:?}");
    assert_eq!(auth.tokens_issued(), 0);
    assert!(!auth.paths().iter().any(|p| p == "/register" || p == "/authorize"));

    // A login on a server without OAuth is refused.
    let err = first.login("plain", None, LOGIN_LIMIT).await.unwrap_err();
    assert!(matches!(err, Error::NotOAuth { .. }), "{err:?}");

    // The login, with the handler given for it.
    first.login("remote", Some(OAuthHandler::Headless(None)), LOGIN_LIMIT).await.unwrap();
    assert_eq!(auth.tokens_issued(), 1);
    let tools = first.list_tools("remote").await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    first.close_all().await;

    // The file store: one file, 0600 on Unix.
    let files: Vec<PathBuf> =
        std::fs::read_dir(&store.0).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // A fresh registry (a later run) finds the token: no new authorization.
    let later = registry(&http.url(), &store, OAuthHandler::None);
    let args = json!({"message": "hi"}).as_object().cloned();
    let result = later.call_tool("remote", "echo", args).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    assert_eq!(auth.tokens_issued(), 1);
    // The token went to the MCP server only, never into an error.
    assert!(!auth.paths().iter().any(|p| p.contains(TOKEN)));
    later.close_all().await;
    http.shutdown().await;
}

#[tokio::test]
async fn configured_scopes_are_asked_for_when_the_challenge_names_none() {
    // A challenge without `scope`: the configured scopes replace the
    // metadata's `scopes_supported` (["mcp"]).
    let (auth, http) = protected(Some(|auth: &FakeAuthServer| {
        format!("Bearer resource_metadata=\"{}/prm\"", auth.base())
    }))
    .await;
    let store = TempDir::new("scopes");
    let reg = registry_with(
        &http.url(),
        &store,
        OAuthHandler::None,
        ", scopes = [\"files:read\", \"files:write\"]",
    );
    reg.login("remote", Some(OAuthHandler::Headless(None)), LOGIN_LIMIT).await.unwrap();
    assert_eq!(auth.authorize_scopes(), vec![Some("files:read files:write".to_owned())]);
    reg.close_all().await;
    http.shutdown().await;

    // A challenge that names a scope wins over the configuration.
    let (auth, http) = protected(None).await;
    let store = TempDir::new("scopes-challenged");
    let reg = registry_with(&http.url(), &store, OAuthHandler::None, ", scopes = [\"files:read\"]");
    reg.login("remote", Some(OAuthHandler::Headless(None)), LOGIN_LIMIT).await.unwrap();
    assert_eq!(auth.authorize_scopes(), vec![Some("mcp".to_owned())]);
    reg.close_all().await;
    http.shutdown().await;
}
