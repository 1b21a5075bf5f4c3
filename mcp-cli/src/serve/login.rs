//! Login on a 401: a served server that needs an OAuth login (it
//! answered 401 and is configured for OAuth) is logged in through the
//! loopback flow of `mcpc login` (the URL opened in the browser through
//! the safe opener and printed on stderr; never on stdout, which is the
//! host's), then what failed is tried once more. Every request forwarded
//! to a server goes through [`Logins::retrying`], the one place this is
//! done. Bounded: one login of a server at a time, and at most one per
//! [`LOGIN_EVERY`], each waiting at most `mcpc login`'s default for the
//! user; a request that failed while a login ran waits for it (bounded by
//! the same) and is tried again with the new tokens.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_host_registry::{Error, Registry, ServerConfig};

use crate::commands::login::{DEFAULT_LOGIN_TIMEOUT, LOGIN_GRACE, loopback};
use crate::output::note;

/// The least time between two logins of one server.
pub(crate) const LOGIN_EVERY: Duration = Duration::from_secs(600);

/// The last login of one server.
#[derive(Debug, Default)]
struct Last {
    /// When it started.
    started: Option<Instant>,
    /// When it ended with new tokens.
    succeeded: Option<Instant>,
}

/// What a request that needs a login does next.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// A login ended with new tokens since the request was sent: it is
    /// tried again.
    Retry,
    /// A login is started now.
    LogIn,
    /// None may be tried now: the error stands.
    GiveUp,
}

impl Last {
    /// What a request sent at `sent` that failed for want of a login does
    /// at `now`.
    fn next(&self, sent: Instant, now: Instant) -> Next {
        if self.succeeded.is_some_and(|at| at >= sent) {
            return Next::Retry;
        }
        match self.started {
            Some(at) if now.saturating_duration_since(at) < LOGIN_EVERY => Next::GiveUp,
            _ => Next::LogIn,
        }
    }
}

/// The logins tried, by server.
#[derive(Debug, Default)]
pub(crate) struct Logins {
    /// One lock per server: held by the login running.
    servers: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Last>>>>,
}

impl Logins {
    /// Runs `attempt` (a request to `server`); when it fails for want of
    /// an OAuth login, logs in (or waits for the login running) and runs
    /// it once more (only for a server that [`may_retry`](Self::may_retry)).
    pub(crate) async fn retrying<T, F, Fut>(
        &self,
        registry: &Registry,
        server: &str,
        mut attempt: F,
    ) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let sent = Instant::now();
        match attempt().await {
            // Boxed: a login's future is large, and every request's future
            // would otherwise make room for it (and be copied with it).
            Err(e) if Box::pin(self.after(registry, server, &e, sent)).await => attempt().await,
            done => done,
        }
    }

    /// Whether [`retrying`](Self::retrying) may run a request to `server`
    /// twice (it uses OAuth): else its first attempt may use up what it
    /// sends.
    pub(crate) fn may_retry(registry: &Registry, server: &str) -> bool {
        registry.get(server).is_some_and(ServerConfig::uses_oauth)
    }

    /// After `e`, an error of `server` to a request sent at `sent`: logs
    /// in when it asks for a login and none was tried of late. Whether the
    /// server has new tokens since (then the request may be tried again).
    pub(crate) async fn after(
        &self,
        registry: &Registry,
        server: &str,
        e: &Error,
        sent: Instant,
    ) -> bool {
        if !matches!(e, Error::LoginRequired { .. }) || !Self::may_retry(registry, server) {
            return false;
        }
        let slot = self.slot(server);
        // Held through the login: a request failing meanwhile waits here.
        let mut last = slot.lock().await;
        let now = Instant::now();
        match last.next(sent, now) {
            Next::Retry => return true,
            Next::GiveUp => return false,
            Next::LogIn => {}
        }
        last.started = Some(now);
        if log_in(registry, server).await {
            last.succeeded = Some(Instant::now());
            true
        } else {
            false
        }
    }

    fn slot(&self, server: &str) -> Arc<tokio::sync::Mutex<Last>> {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        servers.entry(server.to_owned()).or_default().clone()
    }
}

/// One login of `server` through the loopback flow; whether it gave tokens.
async fn log_in(registry: &Registry, server: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_login_per_period_and_a_request_older_than_a_login_tried_again() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let never = Last::default();
        assert_eq!(never.next(t0, t0), Next::LogIn);

        // A login started at t0 that failed: none again within the period.
        let failed = Last { started: Some(t0), succeeded: None };
        assert_eq!(failed.next(t0 + s(1), t0 + s(2)), Next::GiveUp);
        assert_eq!(failed.next(t0, t0 + LOGIN_EVERY - s(1)), Next::GiveUp);
        assert_eq!(failed.next(t0, t0 + LOGIN_EVERY), Next::LogIn);

        // One that ended with tokens at t0 + 5 s: a request sent before
        // then is tried again; one sent after (the tokens refused) is not
        // logged in again within the period.
        let done = Last { started: Some(t0), succeeded: Some(t0 + s(5)) };
        assert_eq!(done.next(t0 + s(1), t0 + s(6)), Next::Retry);
        assert_eq!(done.next(t0 + s(5), t0 + s(6)), Next::Retry);
        assert_eq!(done.next(t0 + s(6), t0 + s(7)), Next::GiveUp);
        assert_eq!(done.next(t0 + s(6), t0 + LOGIN_EVERY + s(1)), Next::LogIn);
    }
}
