//! Supervision: each server's health, the options of the task that keeps a
//! supervised server connected (restart or reconnect with backoff,
//! keepalive), and that task.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_proto::backoff::Backoff;
use tokio::time::Instant;

use crate::registry::{Shared, Slot, round_trip};

/// The health of one server's connection, as the registry sees it
/// ([`Registry::health`](crate::Registry::health),
/// [`ServerStatus::health`](crate::ServerStatus::health), and every change
/// through [`Registry::health_events`](crate::Registry::health_events)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Health {
    /// Not connected and nothing under way: not used yet, closed, or (not
    /// supervised) its connection was lost and the next use connects again.
    Idle,
    /// A connection is being made (spawn or connect, then the handshake).
    Connecting,
    /// Connected; the last keepalive (if any) was answered.
    Ready,
    /// Connected, but this many keepalive pings in a row failed (at least
    /// the [`Keepalive::failures`] threshold): calls may still work, or
    /// time out.
    Degraded {
        /// Consecutive failed pings.
        failures: u32,
    },
    /// The connection was lost or could not be made; the supervisor tries
    /// again in `retry_in` (attempt `attempt`, counting from 1).
    BackingOff {
        /// Which attempt comes next.
        attempt: u32,
        /// The wait before it (exponential, capped, with jitter).
        retry_in: Duration,
    },
    /// Connecting failed and nobody retries on their own: unsupervised, or
    /// the supervisor gave up ([`Supervision::give_up_after`]) or the
    /// failure cannot mend itself (a missing transport, a bad setting). The
    /// next use tries again.
    Failed {
        /// Why, as the error said it (never a secret).
        reason: String,
    },
    /// A [`Registry::reload`](crate::Registry::reload) removed or replaced
    /// the server: this state is its last.
    Removed,
}

impl Health {
    /// Whether a connection is open ([`Ready`](Self::Ready) or
    /// [`Degraded`](Self::Degraded)).
    pub fn is_connected(&self) -> bool {
        matches!(self, Health::Ready | Health::Degraded { .. })
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Health::Idle => f.write_str("idle"),
            Health::Connecting => f.write_str("connecting"),
            Health::Ready => f.write_str("ready"),
            Health::Degraded { failures } => {
                write!(f, "degraded ({failures} keepalive pings failed in a row)")
            }
            Health::BackingOff { attempt, retry_in } => {
                write!(f, "backing off (attempt {attempt} in {:.1}s)", retry_in.as_secs_f64())
            }
            Health::Failed { reason } => write!(f, "failed: {reason}"),
            Health::Removed => f.write_str("removed"),
        }
    }
}

/// One change of a server's [`Health`], as
/// [`Registry::health_events`](crate::Registry::health_events) delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthEvent {
    /// The server's name.
    pub server: String,
    /// Its new health.
    pub health: Health,
}

/// Keepalive pings of a supervised server: every `interval` a round trip
/// (`ping`; for a server of the stateless era, which has no `ping`,
/// `server/discover`, as [`Registry::ping`](crate::Registry::ping) does),
/// each within `timeout`; `failures` failures in a row mark the server
/// [`Health::Degraded`] before a call finds out. A ping that finds the
/// connection gone starts a reconnect at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Keepalive {
    /// Between pings (30 s).
    pub interval: Duration,
    /// How long one ping may take (10 s).
    pub timeout: Duration,
    /// Failed pings in a row that make the server degraded (2; at least 1).
    pub failures: u32,
}

impl Default for Keepalive {
    fn default() -> Self {
        Keepalive {
            interval: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
            failures: 2,
        }
    }
}

impl Keepalive {
    /// Pings every `interval`, each within `timeout`, degraded after 2
    /// failures in a row.
    pub fn new(interval: Duration, timeout: Duration) -> Self {
        Keepalive { interval, timeout, ..Keepalive::default() }
    }
}

/// What a call does when its supervised server is backing off (its
/// connection was lost or could not be made and the supervisor waits
/// before the next attempt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WhileDown {
    /// Wait for the server to be ready again, up to the call's timeout
    /// (the `RequestOptions::timeout` given to
    /// [`Registry::call_tool_with`](crate::Registry::call_tool_with), whose
    /// call then has what is left of it), or else the server's timeout
    /// (then [`Error::Unavailable`](crate::Error::Unavailable)). The
    /// default.
    #[default]
    Wait,
    /// Fail at once with [`Error::Unavailable`](crate::Error::Unavailable).
    FailFast,
}

/// How supervised servers are kept connected
/// ([`RegistryOptions::supervision`](crate::RegistryOptions::supervision)).
///
/// Supervision starts for a server at its first use (or with
/// [`Registry::supervise_all`](crate::Registry::supervise_all)) and runs
/// as one small task per server until [`Registry::close`](crate::Registry::close),
/// [`Registry::close_all`](crate::Registry::close_all), a reload that
/// removes the server, or the registry's drop. It restarts a stdio server
/// whose process ended and reconnects an HTTP server whose connection
/// failed, after a [`Backoff`], and subscribes again to the resources
/// subscribed through [`Registry::subscribe_resource`](crate::Registry::subscribe_resource).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Supervision {
    /// The waits between attempts.
    pub backoff: Backoff,
    /// Keepalive pings (`None`: no pings; a lost connection is then seen
    /// when a call fails or, for a stdio server, when its process ends).
    pub keepalive: Option<Keepalive>,
    /// How often the supervisor looks whether a stdio server's process
    /// still runs (500 ms; a look is a lock and a field, no I/O).
    pub check_interval: Duration,
    /// What calls do while the server is backing off.
    pub while_down: WhileDown,
    /// Give up after this many failed attempts in a row
    /// ([`Health::Failed`]; the next use tries again). `None` (the
    /// default): never, the waits stay at the backoff's cap.
    pub give_up_after: Option<u32>,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            backoff: Backoff::default(),
            keepalive: Some(Keepalive::default()),
            check_interval: Duration::from_millis(500),
            while_down: WhileDown::Wait,
            give_up_after: None,
        }
    }
}

/// How watching one connection ended.
enum Watched {
    /// It was lost (the process ended, a ping found it gone, a call
    /// dropped it).
    Lost,
    /// The slot holds another connection now (a call made it).
    Replaced,
    /// The registry is gone.
    Gone,
}

/// Announces the wait before attempt `attempt`, or that the supervisor
/// gives up (then `None`).
pub(crate) fn back_off(slot: &Slot, options: &Supervision, attempt: u32) -> Option<Duration> {
    if options.give_up_after.is_some_and(|n| attempt > n) {
        let reason = format!("gave up after {} attempts", attempt - 1);
        slot.set_health(Health::Failed { reason });
        return None;
    }
    let retry_in = options.backoff.delay(attempt);
    slot.set_health(Health::BackingOff { attempt, retry_in });
    Some(retry_in)
}

/// The supervisor of one server: connects when there is no connection,
/// watches the one there is, and after a loss waits the backoff and
/// connects again. `first_wait`: the caller's own connect just failed, and
/// the first attempt's wait (already announced) comes first.
pub(crate) async fn supervise(
    shared: Weak<Shared>,
    slot: Arc<Slot>,
    options: Supervision,
    first_wait: Option<Duration>,
) {
    let mut attempt: u32 = u32::from(first_wait.is_some());
    if let Some(wait) = first_wait {
        tokio::time::sleep(wait).await;
    }
    let mut wait = false;
    loop {
        if wait {
            attempt = attempt.saturating_add(1);
            let Some(retry_in) = back_off(&slot, &options, attempt) else { return };
            tokio::time::sleep(retry_in).await;
        }
        let Some(registry) = shared.upgrade() else { return };
        let (generation, conn) = match registry.connect_slot(&slot).await {
            Ok(connected) => connected,
            Err(e) if e.is_usage() => {
                // Nothing a retry can mend (the failure is already the
                // slot's health).
                return;
            }
            Err(e) => {
                tracing::debug!(server = %slot.name, "reconnecting failed: {e}");
                wait = true;
                continue;
            }
        };
        drop(registry);
        let since = Instant::now();
        match watch(&shared, &slot, generation, &conn, &options).await {
            Watched::Gone => return,
            Watched::Replaced => {
                wait = false;
            }
            Watched::Lost => {
                // A connection that lasted resets the count: only a crash
                // loop climbs to the cap.
                if since.elapsed() >= options.backoff.max {
                    attempt = 0;
                }
                wait = true;
            }
        }
    }
}

/// Watches connection `generation` until it is lost or replaced: the
/// process check at every `check_interval`, a keepalive ping when due, and
/// a wake-up when a call drops the connection.
async fn watch(
    shared: &Weak<Shared>,
    slot: &Arc<Slot>,
    generation: u64,
    conn: &crate::ServerClient,
    options: &Supervision,
) -> Watched {
    let mut failures: u32 = 0;
    let mut next_ping = options.keepalive.map(|k| Instant::now() + k.interval);
    let check = options.check_interval.max(Duration::from_millis(1));
    loop {
        let mut until = Instant::now() + check;
        if let Some(at) = next_ping {
            until = until.min(at);
        }
        tokio::select! {
            () = tokio::time::sleep_until(until) => {}
            () = slot.wake.notified() => {}
        }
        match slot.current_generation() {
            Some(Some(g)) if g == generation => {}
            Some(Some(_)) => return Watched::Replaced,
            Some(None) => return Watched::Lost,
            // Someone holds the slot (a connect in progress): look again.
            None => continue,
        }
        if process_ended(conn) {
            tracing::info!(server = %slot.name, "MCP server process ended; restarting");
            slot.drop_connection(generation).await;
            return Watched::Lost;
        }
        let (Some(keepalive), Some(at)) = (options.keepalive, next_ping) else { continue };
        if Instant::now() < at {
            continue;
        }
        next_ping = Some(Instant::now() + keepalive.interval);
        if shared.strong_count() == 0 {
            return Watched::Gone;
        }
        let ping = tokio::time::timeout(keepalive.timeout, round_trip(conn)).await;
        match ping {
            Ok(Ok(())) => {
                failures = 0;
                slot.set_health_if(|h| matches!(h, Health::Degraded { .. }), Health::Ready);
            }
            Ok(Err(e)) if e.is_connection_lost() => {
                tracing::info!(server = %slot.name, "keepalive: the MCP connection is gone: {e}");
                slot.drop_connection(generation).await;
                return Watched::Lost;
            }
            outcome => {
                failures = failures.saturating_add(1);
                match outcome {
                    Ok(Err(e)) => {
                        tracing::debug!(server = %slot.name, failures, "keepalive ping failed: {e}")
                    }
                    _ => tracing::debug!(server = %slot.name, failures, "keepalive ping timed out"),
                }
                if failures >= keepalive.failures.max(1) {
                    slot.set_health_if(Health::is_connected, Health::Degraded { failures });
                }
            }
        }
    }
}

/// Whether the connection's stdio server process ended (the stdio
/// transport restarts nothing itself: the registry gives it no restart
/// policy, so an ended process stays ended).
fn process_ended(conn: &crate::ServerClient) -> bool {
    #[cfg(feature = "stdio")]
    {
        let transport: &dyn mcp_peer::DynTransport<crate::TransportError> = &**conn.transport();
        if let Some(stdio) = transport.as_any().downcast_ref::<mcp_client_stdio::StdioTransport>() {
            return stdio.pid().is_none();
        }
    }
    let _ = conn;
    false
}
