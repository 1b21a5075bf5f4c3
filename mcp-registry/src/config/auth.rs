//! A server's `auth` table.

use serde_json::Value;

use super::types::{AuthConfig, OAuthAddressPolicy, OAuthConfig, OAuthDpop, OAuthResource, Secret};
use super::validate::{
    Ctx, Entry, invalid, opt_bool, opt_str, opt_str_map, required_str, type_error,
};
use crate::error::ConfigError;

impl Ctx<'_> {
    /// The `auth` table.
    pub(super) fn auth(&mut self, value: &Value, entry: &Entry) -> Result<AuthConfig, ConfigError> {
        let Value::Object(map) = value else {
            return Err(invalid(entry.at("auth"), "must be a table with a `kind`"));
        };
        let at = |k: &str| entry.at(format!("auth.{k}"));
        let Some(kind) = opt_str(map, "kind", || at("kind"))? else {
            return Err(invalid(at("kind"), "is missing"));
        };
        let (keys, auth): (&[&str], AuthConfig) = match kind {
            "none" => (&["kind"], AuthConfig::None),
            "bearer_token" => {
                let token = self.secret(map, "token", entry)?;
                (&["kind", "token", "token_env"], AuthConfig::Bearer { token })
            }
            "basic" => {
                let username = self.secret(map, "username", entry)?.0;
                let password = self.secret(map, "password", entry)?;
                (
                    &["kind", "username", "username_env", "password", "password_env"],
                    AuthConfig::Basic { username, password },
                )
            }
            "header" => {
                let name = required_str(map, "name", || at("name"))?;
                let value = self.secret(map, "value", entry)?;
                (&["kind", "name", "value", "value_env"], AuthConfig::Header { name, value })
            }
            "headers" => {
                let mut list = Vec::new();
                for (name, value) in self.string_map(map, "headers", at)? {
                    list.push((name, Secret(value)));
                }
                for (name, var) in
                    opt_str_map(map, "headers_env", || at("headers_env"))?.unwrap_or_default()
                {
                    let location = at(&format!("headers_env.{name}"));
                    list.push((name, Secret(self.var(&var, location)?)));
                }
                if list.is_empty() {
                    return Err(invalid(at("headers"), "no headers are given"));
                }
                (&["kind", "headers", "headers_env"], AuthConfig::Headers(list))
            }
            "query_param" => {
                let name = required_str(map, "name", || at("name"))?;
                let value = self.secret(map, "value", entry)?;
                (&["kind", "name", "value", "value_env"], AuthConfig::QueryParam { name, value })
            }
            "oauth" => {
                let client_secret = match (map.get("client_secret"), map.get("client_secret_env")) {
                    (None, None) => None,
                    _ => Some(self.secret(map, "client_secret", entry)?),
                };
                let mut auth_string = |key: &str| match opt_str(map, key, || at(key))? {
                    Some(text) => self.expand(text, at(key)).map(Some),
                    None => Ok::<_, ConfigError>(None),
                };
                let client_id = auth_string("client_id")?;
                let client_metadata_url = auth_string("client_metadata_url")?;
                let redirect_uri = auth_string("redirect_uri")?;
                let metadata_url = auth_string("metadata_url")?;
                let account = auth_string("account")?.filter(|a| !a.trim().is_empty());
                let resource = match map.get("resource") {
                    None => OAuthResource::Server,
                    Some(Value::Bool(false)) => OAuthResource::Omit,
                    Some(Value::String(text)) => {
                        OAuthResource::Value(self.expand(text, at("resource"))?)
                    }
                    Some(_) => return Err(type_error(at("resource"), "false or a string")),
                };
                let redirect_port = match map.get("redirect_port") {
                    None => None,
                    Some(v) => Some(
                        v.as_u64()
                            .and_then(|p| u16::try_from(p).ok())
                            .filter(|p| *p > 0)
                            .ok_or_else(|| {
                                type_error(at("redirect_port"), "a port (1 to 65535)")
                            })?,
                    ),
                };
                let authorization_params =
                    self.string_map(map, "authorization_params", |k| at(k))?;
                let scopes_override =
                    opt_bool(map, "scopes_override", || at("scopes_override"))?.unwrap_or(false);
                let word = |key: &str, words: &[&str]| -> Result<usize, ConfigError> {
                    match opt_str(map, key, || at(key))? {
                        None => Ok(0),
                        Some(w) => words.iter().position(|x| *x == w).ok_or_else(|| {
                            invalid(at(key), &format!("must be one of {}", words.join(", ")))
                        }),
                    }
                };
                let address_policy = match word(
                    "address_policy",
                    &["same_network", "allow_private", "allow_all"],
                )? {
                    1 => OAuthAddressPolicy::AllowPrivate,
                    2 => OAuthAddressPolicy::AllowAll,
                    _ => OAuthAddressPolicy::SameNetwork,
                };
                let dpop = match word("dpop", &["when_required", "always", "never"])? {
                    1 => OAuthDpop::Always,
                    2 => OAuthDpop::Never,
                    _ => OAuthDpop::WhenRequired,
                };
                let offline_access =
                    opt_bool(map, "offline_access", || at("offline_access"))?.unwrap_or(true);
                let scopes = self.string_list(map, "scopes", || at("scopes"))?.unwrap_or_default();
                if scopes_override && scopes.is_empty() {
                    return Err(invalid(at("scopes_override"), "needs `scopes`"));
                }
                let oauth = OAuthConfig {
                    client_id,
                    client_secret,
                    scopes,
                    client_metadata_url,
                    redirect_uri,
                    redirect_port,
                    resource,
                    metadata_url,
                    authorization_params,
                    scopes_override,
                    address_policy,
                    dpop,
                    offline_access,
                    account,
                };
                (
                    &[
                        "kind",
                        "client_id",
                        "client_secret",
                        "client_secret_env",
                        "scopes",
                        "client_metadata_url",
                        "redirect_uri",
                        "redirect_port",
                        "resource",
                        "metadata_url",
                        "authorization_params",
                        "scopes_override",
                        "address_policy",
                        "dpop",
                        "offline_access",
                        "account",
                    ],
                    AuthConfig::OAuth(Box::new(oauth)),
                )
            }
            _ => {
                return Err(invalid(
                    at("kind"),
                    "must be one of none, bearer_token, basic, header, headers, query_param, oauth",
                ));
            }
        };
        let prefix = "auth.";
        self.check_keys(map, keys, prefix, Some(entry))?;
        Ok(auth)
    }
}
