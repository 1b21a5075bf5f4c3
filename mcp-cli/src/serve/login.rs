//! Login on the first 401: a served server that needs an OAuth login (it
//! answered 401 and is configured for OAuth) is logged in through the
//! loopback flow of `mcpc login` (the URL opened in the browser through
//! the safe opener and printed on stderr; never on stdout, which is the
//! host's), then connected again. Bounded: one login per server per
//! [`LOGIN_EVERY`], each waiting at most `mcpc login`'s default for the
//! user.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_host_registry::{Error, Registry, ServerConfig};

use crate::commands::login::{DEFAULT_LOGIN_TIMEOUT, LOGIN_GRACE, loopback};
use crate::output::note;

/// The least time between two logins of one server.
pub(crate) const LOGIN_EVERY: Duration = Duration::from_secs(600);

/// The logins tried, by server.
#[derive(Debug, Default)]
pub(crate) struct Logins {
    tried: Mutex<HashMap<String, Instant>>,
}

impl Logins {
    /// Whether `e` (an error of `server`) calls for a login and one may be
    /// tried now (it is then counted as tried).
    fn may_try(&self, registry: &Registry, server: &str, e: &Error) -> bool {
        if !matches!(e, Error::LoginRequired { .. })
            || !registry.get(server).is_some_and(ServerConfig::uses_oauth)
        {
            return false;
        }
        self.claim(server, Instant::now())
    }

    /// Whether a login of `server` may start at `now` (none in the last
    /// [`LOGIN_EVERY`]); it is then counted.
    fn claim(&self, server: &str, now: Instant) -> bool {
        let mut tried = self.tried.lock().unwrap_or_else(PoisonError::into_inner);
        if tried.get(server).is_some_and(|at| now.saturating_duration_since(*at) < LOGIN_EVERY) {
            return false;
        }
        tried.insert(server.to_owned(), now);
        true
    }

    /// After `e`, an error of `server`: logs in when it asks for a login
    /// and none was tried of late. Whether the server has new tokens (then
    /// what failed may be tried again).
    pub(crate) async fn after(&self, registry: &Registry, server: &str, e: &Error) -> bool {
        if !self.may_try(registry, server, e) {
            return false;
        }
        note(&format!("mcpc: MCP server {server:?} needs an OAuth login"));
        let handler = match loopback(registry, server, DEFAULT_LOGIN_TIMEOUT).await {
            Ok(handler) => handler,
            Err(f) => {
                tracing::warn!(%server, "cannot log in: {}", f.message);
                return false;
            }
        };
        match registry.login(server, Some(handler), DEFAULT_LOGIN_TIMEOUT + LOGIN_GRACE).await {
            Ok(()) => {
                note(&format!("mcpc: logged in to {server}"));
                true
            }
            Err(e) => {
                tracing::warn!(%server, "the login failed: {e}");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_login_per_server_per_period() {
        let logins = Logins::default();
        let t0 = Instant::now();
        assert!(logins.claim("a", t0));
        assert!(!logins.claim("a", t0 + Duration::from_secs(1)));
        assert!(logins.claim("b", t0 + Duration::from_secs(1)));
        assert!(!logins.claim("a", t0 + LOGIN_EVERY - Duration::from_secs(1)));
        assert!(logins.claim("a", t0 + LOGIN_EVERY));
    }
}
