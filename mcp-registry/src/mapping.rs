//! The configuration of a server as the transports' options: HTTP options
//! (network settings, static credentials and headers, OAuth), checked when
//! the configuration is loaded ([`check`]) and built when connecting.

#[cfg(feature = "http")]
use std::sync::Arc;

#[cfg(feature = "http")]
use base64::Engine as _;
#[cfg(feature = "http")]
use mcp_http::mcp_auth::{
    self, ClientRegistration, DpopMode, FileTokenStore, MemoryTokenStore, ProviderQuirks,
    ResourceParam, TokenEndpointAuthMethod, TokenStore,
};
#[cfg(feature = "http")]
use mcp_http::{AddressPolicy, HttpOptions, OAuthHandler, OAuthOptions, ProxyConfig, StaticAuth};

use crate::config::ServerConfig;
#[cfg(feature = "http")]
use crate::config::{
    AuthConfig, ClientIdentity, OAuthAddressPolicy, OAuthConfig, OAuthDpop, OAuthResource,
    TransportConfig,
};
#[cfg(feature = "http")]
use crate::connector::{DefaultConnector, default_token_dir};
use crate::error::ConfigError;
#[cfg(feature = "http")]
use crate::error::{Error, Location};

/// What the configuration and the connector set in a server's client
/// options: the `protocol` pin (a handshake-era revision opens with
/// `initialize` offering it, no era probe; a stateless-era one speaks that
/// era only; none leaves the probe), the MCP Apps declaration and that
/// of the tasks extension.
#[cfg(any(feature = "stdio", feature = "http"))]
pub(crate) fn client_settings(
    client: &mut mcp_peer::ClientOptions,
    server: &ServerConfig,
    apps: bool,
    tasks: bool,
) {
    use mcp_peer::EraChoice;
    if let Some(version) = server.protocol {
        client.protocol_version = version;
        client.era = if version.is_modern() { EraChoice::Modern } else { EraChoice::Legacy };
    }
    if apps {
        client.declare_extension(mcp_proto::apps::EXTENSION_ID, mcp_proto::apps::client_settings());
    }
    if tasks {
        client.declare_extension(mcp_proto::types::TASKS_EXTENSION, serde_json::json!({}));
    }
}

/// Builds the transport options of `server` and throws them away, so what
/// the mapping refuses (headers beside OAuth, a client secret without a
/// client id, a client metadata URL that is not one, query credentials
/// beside headers) is found when the configuration is loaded, named by
/// file and key, not at the first connection. Reads and writes nothing
/// (the tokens would go to a store in memory). Without the `http` feature
/// there is nothing to map: such a server is refused when used.
pub(crate) fn check(server: &ServerConfig) -> Result<(), ConfigError> {
    #[cfg(feature = "http")]
    if let TransportConfig::Http { headers, auth, .. } = &server.transport {
        let connector = DefaultConnector {
            token_store: Some(Arc::new(MemoryTokenStore::new())),
            ..DefaultConnector::default()
        };
        let identity = ClientIdentity::default();
        if let Err(Error::Config(e)) =
            connector.http_options(server, &identity, headers, auth, None)
        {
            return Err(e);
        }
    }
    #[cfg(not(feature = "http"))]
    let _ = server;
    Ok(())
}

#[cfg(feature = "http")]
impl DefaultConnector {
    /// The token store: the host's, else the default file store.
    pub(crate) fn store(&self) -> Option<Arc<dyn TokenStore>> {
        if let Some(store) = &self.token_store {
            return Some(store.clone());
        }
        let dir = default_token_dir("mcp-registry")?;
        Some(Arc::new(FileTokenStore::new(dir)))
    }

    /// The HTTP options of an endpoint server; `handler` overrides
    /// [`oauth_handler`](Self::oauth_handler) for an OAuth server.
    pub(crate) fn http_options(
        &self,
        server: &ServerConfig,
        identity: &ClientIdentity,
        headers: &[(String, crate::Secret)],
        auth: &AuthConfig,
        handler: Option<OAuthHandler>,
    ) -> Result<HttpOptions, Error> {
        let mut options = HttpOptions::new(server.name.clone());
        options.client_info = identity.to_implementation();
        options.request_timeout = server.timeout;
        options.handlers = self.handlers.clone();
        client_settings(&mut options, server, self.apps, self.tasks);
        if let TransportConfig::Http { network, .. } = &server.transport {
            options.ca_file.clone_from(&network.ca_file);
            if let Some(helper) = &network.headers_helper {
                options.header_source = Some(Arc::new(crate::headers_helper::CommandHeaders {
                    server: server.name.clone(),
                    helper: helper.clone(),
                }));
            }
            match (&network.proxy, &network.no_proxy) {
                (Some(proxy), _) if proxy.expose().trim().eq_ignore_ascii_case("none") => {
                    options.proxy = ProxyConfig::None;
                }
                (Some(proxy), no_proxy) => {
                    options.proxy = ProxyConfig::Url {
                        url: proxy.expose().trim().to_owned(),
                        no_proxy: no_proxy.clone(),
                    };
                }
                (None, _) => {}
            }
        }
        if let AuthConfig::OAuth(oauth) = auth {
            if !headers.is_empty() {
                return Err(invalid_at(
                    server,
                    "headers",
                    "`headers` cannot be combined with OAuth",
                ));
            }
            let handler = handler.unwrap_or_else(|| self.oauth_handler.clone());
            options.oauth = Some(oauth_options(server, identity, oauth, handler, self.store())?);
        } else {
            options.auth = static_auth(server, headers, auth)?;
        }
        Ok(options)
    }
}

/// A configuration error at `auth.<key>` of `server`.
#[cfg(feature = "http")]
fn invalid_auth(server: &ServerConfig, key: &str, reason: &str) -> Error {
    invalid_at(server, &format!("auth.{key}"), reason)
}

/// A configuration error at `key` of `server`.
#[cfg(feature = "http")]
fn invalid_at(server: &ServerConfig, key: &str, reason: &str) -> Error {
    Error::Config(ConfigError::Invalid {
        location: Location {
            server: Some(server.name.clone()),
            index: None,
            key: Some(key.into()),
        },
        reason: reason.into(),
    })
}

/// The registry's OAuth settings as the HTTP transport's [`OAuthOptions`].
/// `scopes` become `mcp-auth`'s configured scopes: asked for when the
/// server's challenge names none.
#[cfg(feature = "http")]
pub(crate) fn oauth_options(
    server: &ServerConfig,
    identity: &ClientIdentity,
    oauth: &OAuthConfig,
    handler: OAuthHandler,
    store: Option<Arc<dyn TokenStore>>,
) -> Result<OAuthOptions, Error> {
    let mut config = mcp_auth::OAuthConfig::new(String::new(), identity.name.clone());
    if let Some(url) = &oauth.client_metadata_url {
        config = config
            .with_client_metadata_url(url.clone())
            .map_err(|e| invalid_auth(server, "client_metadata_url", &e.to_string()))?;
    }
    match (&oauth.client_id, &oauth.client_secret) {
        (Some(id), Some(secret)) => {
            config = config.with_pre_registered(ClientRegistration::confidential(
                id.clone(),
                secret.expose(),
                TokenEndpointAuthMethod::ClientSecretBasic,
            ));
        }
        (Some(id), None) => {
            config = config.with_pre_registered(ClientRegistration::public(id.clone()))
        }
        (None, Some(_)) => {
            return Err(invalid_auth(
                server,
                "client_secret",
                "a client secret needs a `client_id`",
            ));
        }
        (None, None) => {}
    }
    config = config.with_scopes(oauth.scopes.iter().cloned());
    config = config.with_quirks(quirks(oauth)).with_offline_access(oauth.offline_access);
    if let Some(account) = &oauth.account {
        config = config.with_account(account.clone());
    }
    config = config.with_dpop(match oauth.dpop {
        OAuthDpop::Always => DpopMode::Always,
        OAuthDpop::Never => DpopMode::Never,
        _ => DpopMode::WhenRequired,
    });
    config.quirks.check().map_err(|e| {
        let key = match &e {
            mcp_auth::Error::InvalidQuirk(_) => "authorization_params",
            _ => "metadata_url",
        };
        invalid_auth(server, key, &e.to_string())
    })?;
    let handler = match (handler, oauth.loopback_redirect_uri()) {
        (OAuthHandler::Headless(None), Some(uri)) => OAuthHandler::Headless(Some(uri)),
        (h, _) => h,
    };
    let mut options =
        OAuthOptions::from_config(config).with_address_policy(match oauth.address_policy {
            OAuthAddressPolicy::AllowPrivate => AddressPolicy::AllowPrivate,
            OAuthAddressPolicy::AllowAll => AddressPolicy::AllowAll,
            _ => AddressPolicy::SameNetwork,
        });
    options.handler = handler;
    options.store = store;
    Ok(options)
}

/// The provider quirks a server's OAuth settings ask for.
#[cfg(feature = "http")]
fn quirks(oauth: &OAuthConfig) -> ProviderQuirks {
    let mut quirks = ProviderQuirks::default().with_resource(match &oauth.resource {
        OAuthResource::Omit => ResourceParam::Omit,
        OAuthResource::Value(v) => ResourceParam::Value(v.clone()),
        _ => ResourceParam::Metadata,
    });
    if let Some(url) = &oauth.metadata_url {
        quirks = quirks.with_metadata_url(url.clone());
    }
    for (name, value) in &oauth.authorization_params {
        quirks = quirks.with_authorization_param(name.clone(), value.clone());
    }
    if oauth.scopes_override {
        quirks = quirks.with_scopes_override(oauth.scopes.iter().cloned());
    }
    quirks
}

/// The configured headers and credentials as the HTTP transport's
/// [`StaticAuth`].
#[cfg(feature = "http")]
pub(crate) fn static_auth(
    server: &ServerConfig,
    headers: &[(String, crate::Secret)],
    auth: &AuthConfig,
) -> Result<StaticAuth, Error> {
    let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
    let mut list: Vec<(String, String)> =
        headers.iter().map(|(n, v)| pair(n, v.expose())).collect();
    let single = match auth {
        AuthConfig::None => None,
        AuthConfig::Bearer { token } => Some(StaticAuth::Bearer(token.expose().to_owned())),
        AuthConfig::Basic { username, password } => Some(StaticAuth::Basic {
            username: username.clone(),
            password: password.expose().to_owned(),
        }),
        AuthConfig::Header { name, value } => {
            Some(StaticAuth::Header { name: name.clone(), value: value.expose().to_owned() })
        }
        AuthConfig::Headers(h) => {
            Some(StaticAuth::Headers(h.iter().map(|(n, v)| pair(n, v.expose())).collect()))
        }
        AuthConfig::QueryParam { name, value } => {
            Some(StaticAuth::Query { name: name.clone(), value: value.expose().to_owned() })
        }
        AuthConfig::OAuth(_) => {
            return Err(invalid_auth(server, "kind", "OAuth is not a static credential"));
        }
    };
    if list.is_empty() {
        return Ok(single.unwrap_or_default());
    }
    // Headers and a credential together: everything becomes headers.
    match single {
        None => {}
        Some(StaticAuth::Bearer(token)) => {
            list.push(pair("Authorization", &format!("Bearer {}", token.trim())));
        }
        Some(StaticAuth::Basic { username, password }) => {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
            list.push(pair("Authorization", &format!("Basic {encoded}")));
        }
        Some(StaticAuth::Header { name, value }) => list.push((name, value)),
        Some(StaticAuth::Headers(h)) => list.extend(h),
        Some(_) => {
            return Err(invalid_auth(
                server,
                "kind",
                "query_param credentials cannot be combined with `headers`",
            ));
        }
    }
    Ok(StaticAuth::Headers(list))
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use crate::LoadOptions;
    use crate::config::Config;

    /// The configuration's `proxy`, `no_proxy` and `ca_file` become the
    /// HTTP transport's options (which `mcp-http`'s tests exercise against
    /// a proxy and a TLS server of their own).
    #[test]
    fn network_keys_reach_the_http_options() {
        let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "a"
endpoint = "https://e.test/mcp"
proxy = " socks5h://u:p@proxy.test:1080 "
no_proxy = ".internal"
ca_file = "/etc/corp/ca.pem"
[[mcp_client.servers]]
name = "b"
endpoint = "https://e.test/mcp"
proxy = "NONE"
[[mcp_client.servers]]
name = "c"
endpoint = "https://e.test/mcp"
"#;
        let loaded = Config::from_toml_str(toml, &LoadOptions::default()).unwrap();
        let connector = DefaultConnector::default();
        let identity = ClientIdentity::default();
        let options = |server: &ServerConfig| {
            let TransportConfig::Http { headers, auth, .. } = &server.transport else {
                panic!("{server:?}")
            };
            connector.http_options(server, &identity, headers, auth, None).unwrap()
        };
        let a = options(&loaded.config.servers[0]);
        assert_eq!(
            a.proxy,
            ProxyConfig::Url {
                url: "socks5h://u:p@proxy.test:1080".into(),
                no_proxy: Some(".internal".into())
            }
        );
        assert_eq!(a.ca_file.as_deref(), Some(std::path::Path::new("/etc/corp/ca.pem")));
        assert_eq!(options(&loaded.config.servers[1]).proxy, ProxyConfig::None);
        let c = options(&loaded.config.servers[2]);
        assert_eq!((c.proxy, c.ca_file), (ProxyConfig::FromEnv, None));
    }

    /// The provider quirks of the configuration reach `mcp-auth`'s
    /// options (the flow against a real provider is `mcp-http`'s
    /// `idp_quirks` tests).
    #[test]
    fn oauth_quirk_keys_reach_the_oauth_options() {
        let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "entra"
endpoint = "https://e.test/mcp"
auth = { kind = "oauth", resource = false, redirect_port = 8765, metadata_url = "https://login.test/t/v2.0/.well-known/openid-configuration", address_policy = "allow_private", dpop = "always", offline_access = false, account = "work" }
[[mcp_client.servers]]
name = "auth0"
endpoint = "https://e.test/mcp"
auth = { kind = "oauth", resource = "api://mcp", scopes = ["read"], scopes_override = true, authorization_params = { audience = "https://api.test", prompt = "consent" }, redirect_uri = "http://localhost:9000/done" }
[[mcp_client.servers]]
name = "plain"
endpoint = "https://e.test/mcp"
auth = { kind = "oauth" }
"#;
        let loaded = Config::from_toml_str(toml, &LoadOptions::default()).unwrap();
        let connector = DefaultConnector::default();
        let identity = ClientIdentity::default();
        let oauth_options = |i: usize| {
            let server = &loaded.config.servers[i];
            let TransportConfig::Http { headers, auth, .. } = &server.transport else {
                panic!("{server:?}")
            };
            let options = connector.http_options(server, &identity, headers, auth, None).unwrap();
            options.oauth.expect("oauth")
        };
        let quirks = |i: usize| oauth_options(i).config.quirks;
        let entra = oauth_options(0);
        assert_eq!(entra.address_policy, AddressPolicy::AllowPrivate);
        assert_eq!((entra.config.dpop, entra.config.offline_access), (DpopMode::Always, false));
        assert_eq!(entra.config.account.as_deref(), Some("work"));
        let plain = oauth_options(2);
        assert_eq!(plain.address_policy, AddressPolicy::SameNetwork);
        assert_eq!(
            (plain.config.dpop, plain.config.offline_access),
            (DpopMode::WhenRequired, true)
        );
        assert_eq!(plain.config.account, None);
        let entra = quirks(0);
        assert_eq!(entra.resource, ResourceParam::Omit);
        assert_eq!(
            entra.metadata_url.as_deref(),
            Some("https://login.test/t/v2.0/.well-known/openid-configuration")
        );
        let oauth = loaded.config.servers[0].oauth().expect("oauth");
        assert_eq!(
            oauth.loopback_redirect_uri().as_deref(),
            Some("http://127.0.0.1:8765/callback")
        );
        let auth0 = quirks(1);
        assert_eq!(auth0.resource, ResourceParam::Value("api://mcp".into()));
        assert_eq!(auth0.scopes_override, Some(vec!["read".to_owned()]));
        let params: Vec<(&str, &str)> =
            auth0.authorization_params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(params, [("audience", "https://api.test"), ("prompt", "consent")]);
        let oauth = loaded.config.servers[1].oauth().expect("oauth");
        assert_eq!(oauth.loopback_redirect_uri().as_deref(), Some("http://localhost:9000/done"));
        assert_eq!(quirks(2), ProviderQuirks::default());

        for (bad, key) in [
            ("resource = true", "auth.resource"),
            ("redirect_port = 0", "auth.redirect_port"),
            ("redirect_port = 70000", "auth.redirect_port"),
            ("scopes_override = true", "auth.scopes_override"),
            ("authorization_params = { prompt = 1 }", "auth.authorization_params"),
            ("address_policy = \"open\"", "auth.address_policy"),
            ("dpop = \"sometimes\"", "auth.dpop"),
            ("offline_access = \"no\"", "auth.offline_access"),
        ] {
            let toml = format!(
                "[mcp_client]\n[[mcp_client.servers]]\nname = \"x\"\nendpoint = \"https://e.test/mcp\"\nauth = {{ kind = \"oauth\", {bad} }}\n"
            );
            let e = Config::from_toml_str(&toml, &LoadOptions::default()).unwrap_err();
            let crate::error::ConfigError::Invalid { location, .. } = &e else {
                panic!("{bad}: {e:?}")
            };
            assert_eq!(location.key.as_deref(), Some(key), "{bad}: {e}");
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod load_tests {
    use crate::LoadOptions;
    use crate::config::Config;
    use crate::error::ConfigError;

    /// What the transport options refuse is an error of the file when it is
    /// loaded, at the entry's key, not of the first connection.
    #[test]
    fn the_mapping_runs_when_the_configuration_is_loaded() {
        let entry = |extra: &str| {
            format!(
                "[mcp_client]\n[[mcp_client.servers]]\nname = \"ok\"\nendpoint = \"https://a.test/mcp\"\n\
                 [[mcp_client.servers]]\nname = \"bad\"\nendpoint = \"https://e.test/mcp\"\n{extra}\n"
            )
        };
        let cases = [
            (
                "headers = { X-A = \"1\" }\nauth = { kind = \"oauth\" }",
                "headers",
                "cannot be combined with OAuth",
            ),
            (
                "auth = { kind = \"oauth\", client_secret = \"s\" }",
                "auth.client_secret",
                "needs a `client_id`",
            ),
            (
                "auth = { kind = \"oauth\", client_metadata_url = \"http://insecure.test/c\" }",
                "auth.client_metadata_url",
                "",
            ),
            (
                "auth = { kind = \"oauth\", authorization_params = { state = \"x\" } }",
                "auth.authorization_params",
                "the client's own",
            ),
            (
                "auth = { kind = \"oauth\", metadata_url = \"http://insecure.test/m\" }",
                "auth.metadata_url",
                "",
            ),
            (
                "headers = { X-A = \"1\" }\nauth = { kind = \"query_param\", name = \"k\", value = \"v\" }",
                "auth.kind",
                "cannot be combined with `headers`",
            ),
        ];
        for (extra, key, reason_part) in cases {
            let toml = entry(extra);
            let e = Config::from_toml_str(&toml, &LoadOptions::default()).unwrap_err();
            let ConfigError::Invalid { location, reason } = &e else { panic!("{extra}: {e:?}") };
            assert_eq!(location.server.as_deref(), Some("bad"), "{extra}");
            assert_eq!(location.index, Some(1), "{extra}");
            assert_eq!(location.key.as_deref(), Some(key), "{extra}: {e}");
            assert!(reason.contains(reason_part), "{extra}: {reason}");
            // Loaded from a file, the error names the file and the line.
            let dir = std::env::temp_dir().join(format!(
                "mcp-registry-mapping-{}-{}",
                std::process::id(),
                key
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("mcp.toml");
            std::fs::write(&path, &toml).unwrap();
            let e = Config::load(&path, &LoadOptions::default()).unwrap_err();
            assert_eq!(e.path(), Some(path.as_path()), "{e}");
            let shown = e.to_string();
            assert!(shown.contains("mcp.toml") && shown.contains("bad"), "{shown}");
            let _ = std::fs::remove_dir_all(&dir);
        }
        // Good entries load.
        assert!(Config::from_toml_str(&entry(""), &LoadOptions::default()).is_ok());
    }
}
