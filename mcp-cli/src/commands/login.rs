//! `mcpc login` and `mcpc logout`: a server's OAuth tokens, got in the
//! browser and kept for later runs, or revoked and deleted; `mcpc
//! accounts`: who holds tokens, and moving them between the token files and
//! the OS keychain.

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::loopback::LoopbackHandler;
use mcp_auth::url::{redact, resource_matches};
use mcp_auth::{KeychainTokenStore, TokenStore};
use mcp_host_registry::{
    OAuthConfig, OAuthHandler, Registry, Revocation, ServerConfig, TokenStoreConfig,
    TransportConfig,
};
use serde_json::json;

use crate::cli::{MigrateTo, Output};
use crate::ctx::Ctx;
use crate::failure::{Failure, Kind};
use crate::output::{emit, emit_json, note, offer_url, table as table_lines};

/// How long the token exchanges of a login may take beyond the user's
/// part (`--timeout`).
pub(crate) const LOGIN_GRACE: Duration = Duration::from_secs(60);
/// How long `mcpc login` waits for the user by default.
pub(crate) const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// `mcpc login SERVER`: the loopback handler (or the hidden headless one),
/// the tokens into the file store.
pub(crate) async fn login(ctx: &Ctx<'_>, server: &str, headless: bool) -> Result<u8, Failure> {
    let server = ctx.pick(Some(server))?;
    if !ctx.registry.get(&server).is_some_and(ServerConfig::uses_oauth) {
        return Err(Failure::usage(format!(
            "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log in to"
        ))
        .with_server(&server));
    }
    let wait = ctx.g.timeout.map_or(DEFAULT_LOGIN_TIMEOUT, Duration::from_secs_f64);
    let handler = if headless {
        OAuthHandler::Headless(None)
    } else {
        loopback(ctx.registry, &server, wait).await?
    };
    ctx.registry
        .login(&server, Some(handler), wait + LOGIN_GRACE)
        .await
        .map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Text => emit(&format!("logged in to {server}")),
        Output::Json => emit_json(&json!({"server": server, "logged_in": true})),
    }
    Ok(0)
}

/// The browser's part of a login: a loopback listener waiting `wait` for
/// the redirect, the authorization URL opened through the safe opener and
/// printed on stderr. A client pre-registered with one exact redirect URI
/// listens on it.
pub(crate) async fn loopback(
    registry: &Registry,
    server: &str,
    wait: Duration,
) -> Result<OAuthHandler, Failure> {
    let redirect = registry
        .get(server)
        .and_then(ServerConfig::oauth)
        .and_then(OAuthConfig::loopback_redirect_uri);
    let bound = match redirect {
        Some(uri) => LoopbackHandler::bind_redirect_uri(&uri, wait).await,
        None => LoopbackHandler::bind(wait).await,
    };
    let handler =
        bound.map_err(|e| Failure::new(Kind::Auth, e).with_server(server))?.on_url(|url| {
            note("Open this URL to log in:");
            offer_url(url, true);
        });
    Ok(OAuthHandler::Custom(Arc::new(handler)))
}

/// How long a logout (discovery and revocation) may take.
const LOGOUT_TIMEOUT: Duration = Duration::from_secs(60);

/// `mcpc logout SERVER`: revocation where offered, then the tokens deleted
/// from the store (also when the revocation failed: that is a warning).
pub(crate) async fn logout(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    if !ctx.registry.get(&server).is_some_and(ServerConfig::uses_oauth) {
        return Err(Failure::usage(format!(
            "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log out of"
        ))
        .with_server(&server));
    }
    let revocation = ctx.registry.logout(&server, LOGOUT_TIMEOUT).await.map_err(|e| ctx.fail(e))?;
    let revoked = match &revocation {
        Revocation::Revoked => Some(true),
        Revocation::NotOffered => None,
        Revocation::Failed(e) => {
            note(&format!("mcpc: warning: {server}: the tokens could not be revoked: {e}"));
            Some(false)
        }
        _ => None,
    };
    match ctx.output() {
        Output::Text => emit(&match revoked {
            Some(true) => format!("logged out of {server} (tokens revoked and deleted)"),
            Some(false) => format!("logged out of {server} (tokens deleted; not revoked)"),
            None => format!("logged out of {server} (tokens deleted)"),
        }),
        Output::Json => {
            emit_json(&json!({"server": server, "logged_out": true, "revoked": revoked}))
        }
    }
    Ok(0)
}

/// `mcpc accounts [SERVER]`: which accounts hold OAuth tokens for each
/// OAuth server (its endpoint identifies the stored tokens' resource), and
/// at which authorization server. No token is read out.
pub(crate) fn accounts(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let only = server.map(|s| ctx.pick(Some(s))).transpose()?;
    let keys = crate::setup::token_store()
        .keys()
        .map_err(|e| Failure::new(Kind::Auth, format!("cannot list the stored tokens: {e}")))?;
    let store = crate::setup::token_store();
    let mut rows: Vec<(String, Option<String>, String)> = Vec::new();
    for config in ctx.registry.list().filter(|c| c.uses_oauth()) {
        if only.as_deref().is_some_and(|o| o != config.name) {
            continue;
        }
        let TransportConfig::Http { endpoint, .. } = &config.transport else { continue };
        for key in keys.iter().filter(|k| resource_matches(&k.resource, endpoint)) {
            // An entry whose tokens were logged out (its registration
            // kept) holds no tokens.
            let holds = store.load(key).ok().flatten().is_some_and(|s| s.tokens.is_some());
            if holds {
                rows.push((config.name.clone(), key.account.clone(), redact(&key.issuer)));
            }
        }
    }
    rows.sort();
    match ctx.output() {
        Output::Text => {
            let mut table = vec![vec!["SERVER".into(), "ACCOUNT".into(), "ISSUER".into()]];
            for (server, account, issuer) in &rows {
                let account = account.clone().unwrap_or_else(|| "(default)".into());
                // `table` shows each cell on one line, terminal-safe.
                table.push(vec![server.clone(), account, issuer.clone()]);
            }
            if rows.is_empty() {
                note("no account holds tokens");
            } else {
                for line in table_lines(&table) {
                    emit(&line);
                }
            }
        }
        Output::Json => emit_json(&json!(
            rows.iter()
                .map(|(s, a, i)| json!({"server": s, "account": a, "issuer": i}))
                .collect::<Vec<_>>()
        )),
    }
    Ok(0)
}

/// `mcpc accounts migrate --to keychain|file`: every stored token moved
/// between the token files and the OS keychain (the service of
/// `keychain_service`, else `mcpc`), each entry removed from the source
/// only once the target holds it.
pub(crate) fn migrate(ctx: &Ctx<'_>, to: MigrateTo) -> Result<u8, Failure> {
    let settings = crate::setup::token_store_config();
    let service = settings.service(crate::setup::APP);
    let files = TokenStoreConfig::file_store(crate::setup::APP);
    let keychain = KeychainTokenStore::open(service)
        .map_err(|e| Failure::new(Kind::Auth, format!("cannot move tokens: {e}")))?;
    let (from, into, from_name, into_name): (&dyn TokenStore, &dyn TokenStore, _, _) = match to {
        MigrateTo::Keychain => (&*files, &keychain, "the token files", "the keychain"),
        MigrateTo::File => (&keychain, &*files, "the keychain", "the token files"),
    };
    let done = mcp_auth::migrate(from, into).map_err(|e| {
        Failure::new(
            Kind::Auth,
            format!("moving tokens from {from_name} to {into_name} stopped: {e} (run it again to finish)"),
        )
    })?;
    match ctx.output() {
        Output::Text => emit(&format!(
            "moved {} account(s) from {from_name} to {into_name}{}",
            done.moved,
            if done.already > 0 {
                format!(" ({} already there)", done.already)
            } else {
                String::new()
            }
        )),
        Output::Json => emit_json(&json!({
            "to": match to { MigrateTo::Keychain => "keychain", MigrateTo::File => "file" },
            "moved": done.moved,
            "already": done.already,
        })),
    }
    Ok(0)
}
