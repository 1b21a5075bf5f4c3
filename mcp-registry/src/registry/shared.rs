//! What the registry's handles and its supervisors share: making and
//! caching connections, reloading the configuration, retiring servers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use super::slot::{Declared, Slot, lock};
use super::subscriptions::resubscribe;
use super::{CLOSE_LOCK_WAIT, RegistryOptions, ReloadReport, calls};
use crate::config::{Config, ServerConfig};
use crate::error::{Error, TransportError};
use crate::pins::PinBook;
use crate::relay::{NotificationEvent, Relay};
use crate::supervisor::{Health, HealthEvent, WhileDown, back_off, supervise};
use crate::transport::ServerClient;
use tokio::sync::broadcast;

/// How long connecting may take beyond the server's request timeout (the
/// spawn, with its one-off PATH probe, or the TCP and TLS set-up).
pub(crate) const CONNECT_GRACE: Duration = Duration::from_secs(10);
/// How long closing one connection may take in [`Registry::close_all`].
pub(crate) const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the registry's handles and its supervisors share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) me: Weak<Shared>,
    pub(crate) declared: Declared,
    pub(crate) slots: std::sync::RwLock<Arc<[Arc<Slot>]>>,
    pub(crate) options: RegistryOptions,
    pub(crate) generation: AtomicU64,
    /// Counts [`close_all`](Registry::close_all) calls: a connection made
    /// by a connect that began before one is closed, not kept.
    pub(crate) closes: AtomicU64,
    pub(crate) events: broadcast::Sender<HealthEvent>,
    /// Every connection's notifications.
    pub(crate) notices: broadcast::Sender<NotificationEvent>,
    /// One reload at a time.
    pub(crate) reload: tokio::sync::Mutex<()>,
    /// The tool pins and their policy.
    pub(crate) pins: PinBook,
    /// Call approval's answers remembered for the session.
    pub(crate) gate: crate::trust::gate::CallGate,
    /// The servers the managed policy kept out.
    pub(crate) blocked: std::sync::Mutex<Vec<crate::trust::managed::Blocked>>,
}

/// How many health changes a slow [`Registry::health_events`] subscriber
/// may fall behind before it skips the oldest.
pub(crate) const HEALTH_EVENTS: usize = 256;

impl Shared {
    pub(crate) fn snapshot(&self) -> Arc<[Arc<Slot>]> {
        self.slots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn slot(&self, name: &str) -> Result<Arc<Slot>, Error> {
        // Found under the read lock: only the slot is cloned, not the list.
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| Error::UnknownServer { server: name.to_owned() })
    }

    /// See [`Registry::connection`]. A wait while the server is down lasts
    /// at most `wait` (the server's timeout by default), and how long it
    /// lasted comes back with the connection.
    pub(crate) async fn connection(
        &self,
        slot: &Arc<Slot>,
        wait: Option<Duration>,
    ) -> Result<(u64, ServerClient, Duration), Error> {
        if let Some(missing) = &slot.config().unusable {
            return Err(Error::ServerUnusable {
                server: slot.name.clone(),
                missing: missing.clone(),
            });
        }
        if let Some(supervision) = &self.options.supervision {
            let health = slot.health();
            if matches!(health, Health::BackingOff { .. }) && slot.is_supervised() {
                match supervision.while_down {
                    WhileDown::FailFast => {
                        return Err(Error::Unavailable { server: slot.name.clone(), health });
                    }
                    _ => {
                        let started = tokio::time::Instant::now();
                        self.wait_while_down(slot, wait).await?;
                        let (generation, conn) = self.connect_slot(slot).await?;
                        return Ok((generation, conn, started.elapsed()));
                    }
                }
            }
        }
        let (generation, conn) = self.connect_slot(slot).await?;
        Ok((generation, conn, Duration::ZERO))
    }

    /// Waits, up to `limit` (the server's timeout by default), until a
    /// supervised server is no longer backing off or connecting.
    pub(crate) async fn wait_while_down(
        &self,
        slot: &Slot,
        limit: Option<Duration>,
    ) -> Result<(), Error> {
        let after = limit.unwrap_or_else(|| slot.config().timeout);
        let mut health = slot.health.subscribe();
        let wait =
            health.wait_for(|h| !matches!(h, Health::BackingOff { .. } | Health::Connecting));
        match tokio::time::timeout(after, wait).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(Error::Reloaded { server: slot.name.clone() }),
            Err(_) => Err(Error::Unavailable { server: slot.name.clone(), health: slot.health() }),
        }
    }

    /// The cached connection or a new one; starts the supervisor when
    /// supervision is on.
    pub(crate) async fn connect_slot(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<(u64, ServerClient), Error> {
        let result = self.connect_locked(slot).await;
        if self.options.supervision.is_some() {
            match &result {
                Ok(_) => self.ensure_supervisor(slot, false),
                Err(Error::Closed { .. } | Error::Reloaded { .. }) => {}
                Err(e) if e.is_usage() => {}
                Err(_) => self.ensure_supervisor(slot, true),
            }
        }
        result
    }

    /// Starts the slot's supervisor unless one runs (or supervision is off,
    /// or the slot was retired). `failed_first`: a connect just failed.
    pub(crate) fn ensure_supervisor(&self, slot: &Arc<Slot>, failed_first: bool) {
        let Some(options) = &self.options.supervision else { return };
        let mut task = lock(&slot.supervisor);
        if task.as_ref().is_some_and(|t| !t.is_finished()) || slot.is_retired() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // Announced before the task runs, so a call right after this one
        // sees the server backing off.
        let first_wait = if failed_first {
            match back_off(slot, options, 1) {
                Some(wait) => Some(wait),
                None => return,
            }
        } else {
            None
        };
        let handle =
            runtime.spawn(supervise(self.me.clone(), slot.clone(), options.clone(), first_wait));
        *task = Some(handle.abort_handle());
    }

    pub(crate) async fn connect_locked(&self, slot: &Slot) -> Result<(u64, ServerClient), Error> {
        let mut cached = slot.conn.lock().await;
        if let Some((generation, conn, _)) = &*cached {
            return Ok((*generation, conn.clone()));
        }
        if slot.is_retired() {
            return Err(Error::Reloaded { server: slot.name.clone() });
        }
        let server = slot.config();
        let identity = &self.declared.latest().identity;
        let limit = server.timeout + CONNECT_GRACE;
        let closes = self.closes.load(Ordering::SeqCst);
        slot.set_health(Health::Connecting);
        // A caller that gives up (drops this future) leaves no stale
        // `Connecting` behind.
        let connecting = Connecting { slot, armed: AtomicBool::new(true) };
        let connect = async {
            let conn = self.options.connector.connect(&server, identity).await?;
            // From the first message on.
            let notifications = conn.notifications();
            calls::initialize(&conn)
                .await
                .map_err(|source| self.transport_error(&server.name, source))?;
            Ok::<_, Error>((conn, notifications))
        };
        let failed = |e: Error| {
            // Supervised, a failure that a retry may mend is announced as
            // the wait before that retry, by the supervisor.
            if self.options.supervision.is_none() || e.is_usage() {
                slot.set_health(Health::Failed { reason: e.to_string() });
            } else {
                connecting.armed.store(false, Ordering::Relaxed);
            }
            Err(e)
        };
        let (conn, notifications) = match tokio::time::timeout(limit, connect).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return failed(e),
            Err(_) => {
                return failed(Error::ConnectTimeout { server: server.name.clone(), after: limit });
            }
        };
        if self.closes.load(Ordering::SeqCst) != closes {
            // `close_all` ran meanwhile (and could not wait for this).
            close_bounded(&server.name, conn).await;
            slot.set_health(Health::Idle);
            return Err(Error::Closed { server: server.name.clone() });
        }
        if slot.is_retired() {
            close_bounded(&server.name, conn).await;
            return Err(Error::Reloaded { server: server.name.clone() });
        }
        let relay = Relay::start(&server.name, notifications, self.notices.clone());
        resubscribe(slot, &server, &conn, &relay, self.options.listen_list_changes).await;
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(server = %server.name, "MCP server connected");
        cached.set(generation, conn.clone(), relay);
        slot.set_health(Health::Ready);
        Ok((generation, conn))
    }

    /// A transport error of `server`, or [`Error::LoginRequired`] when the
    /// OAuth flow needed the user and nobody was set to ask them.
    pub(crate) fn transport_error(&self, server: &str, source: TransportError) -> Error {
        if source.is_login_required() {
            let command =
                self.options.login_command.as_ref().map(|c| c.replace("{server}", server));
            return Error::LoginRequired { server: server.to_owned(), command };
        }
        Error::Transport { server: server.to_owned(), source }
    }

    pub(crate) async fn reload(&self, config: Config) -> ReloadReport {
        let _one_at_a_time = self.reload.lock().await;
        let declared = self.declared.latest();
        let identity_changed = config.client_identity != declared.identity;
        let servers = if config.enabled { config.servers } else { Vec::new() };
        let (servers, blocked) = self.options.trust.managed.admit(servers);
        *lock(&self.blocked) = blocked;
        let old = self.snapshot();
        let mut report = ReloadReport { identity_changed, ..ReloadReport::default() };
        let mut next: Vec<Arc<Slot>> = Vec::with_capacity(servers.len());
        let mut configs = Vec::with_capacity(servers.len());
        // (old slot, whether it is removed rather than replaced)
        let mut retired: Vec<(Arc<Slot>, bool)> = Vec::new();
        let mut in_place = Vec::new();
        for server in servers {
            let server = Arc::new(server);
            let Some(slot) = old.iter().find(|s| s.name == server.name) else {
                report.added.push(server.name.clone());
                next.push(Arc::new(Slot::new(server.clone(), self.events.clone())));
                configs.push(server);
                continue;
            };
            let current = slot.config();
            if *current == *server && !identity_changed {
                next.push(slot.clone());
                configs.push(current);
                continue;
            }
            report.changed.push(server.name.clone());
            if same_connection(&current, &server) && !identity_changed {
                in_place.push((slot.clone(), server.clone()));
                next.push(slot.clone());
            } else {
                retired.push((slot.clone(), false));
                next.push(Arc::new(Slot::new(server.clone(), self.events.clone())));
            }
            configs.push(server);
        }
        for slot in old.iter() {
            if !next.iter().any(|s| s.name == slot.name) {
                report.removed.push(slot.name.clone());
                retired.push((slot.clone(), true));
            }
        }
        if report.is_empty() {
            return report;
        }
        for (slot, config) in in_place {
            slot.set_config(config);
        }
        let _ = declared.next.set(Box::new(Declared {
            identity: config.client_identity,
            servers: configs,
            next: OnceLock::new(),
        }));
        let next: Arc<[Arc<Slot>]> = next.into();
        *self.slots.write().unwrap_or_else(|e| e.into_inner()) = next.clone();
        for (slot, _) in &retired {
            slot.retired.store(true, Ordering::SeqCst);
        }
        tracing::debug!(
            added = report.added.len(),
            removed = report.removed.len(),
            changed = report.changed.len(),
            "MCP configuration reloaded"
        );
        // A replaced server that was supervised is supervised again (and
        // so connected at once).
        for (slot, removed) in &retired {
            let successor = next.iter().find(|s| s.name == slot.name);
            if let Some(new) = successor.filter(|_| !removed && slot.is_supervised()) {
                self.ensure_supervisor(new, false);
            }
        }
        // Only the retired list holds the old slots now (the drain counts
        // references).
        drop(old);
        drop(next);
        let drain = self.options.drain_timeout;
        futures_util::future::join_all(
            retired.into_iter().map(|(slot, removed)| retire(slot, removed, drain)),
        )
        .await;
        report
    }
}

/// Puts a slot still marked `Connecting` back to `Idle` when dropped armed:
/// the connect was abandoned (every other ending sets the health itself, or
/// leaves it to the supervisor, which announces its backoff next).
pub(crate) struct Connecting<'a> {
    slot: &'a Slot,
    armed: AtomicBool,
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        if self.armed.load(Ordering::Relaxed) {
            self.slot.set_health_if(|h| *h == Health::Connecting, Health::Idle);
        }
    }
}

/// Whether two configurations of a server connect the same way: they
/// differ at most in the tool policy and the description (any other
/// setting, present or future, counts as a new connection).
pub(crate) fn same_connection(old: &ServerConfig, new: &ServerConfig) -> bool {
    let mut probe = new.clone();
    probe.policy = old.policy.clone();
    probe.description = old.description.clone();
    probe.pin_policy = old.pin_policy;
    probe == *old
}

/// Takes a removed or replaced server out of service: stops its
/// supervisor, lets its calls in flight finish within `drain`, closes its
/// connection.
pub(crate) async fn retire(slot: Arc<Slot>, removed: bool, drain: Duration) {
    slot.stop_supervisor();
    if removed {
        slot.set_health(Health::Removed);
    } else {
        // Its successor announces the server's health from now on.
        slot.set_health_quietly(Health::Removed);
    }
    // Every call holds the slot while it runs: once this is the last
    // reference (the supervisor's goes with its task), none runs.
    let deadline = tokio::time::Instant::now() + drain;
    while Arc::strong_count(&slot) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(DRAIN_POLL).await;
    }
    let taken = match tokio::time::timeout(CLOSE_LOCK_WAIT, slot.conn.lock()).await {
        Ok(mut cached) => cached.take(),
        // A connect in progress sees the retirement and closes what it
        // made.
        Err(_) => None,
    };
    if let Some((_, conn, _)) = taken {
        close_bounded(&slot.name, conn).await;
    }
}

/// How often a reload looks whether a retired server's calls have ended.
pub(crate) const DRAIN_POLL: Duration = Duration::from_millis(10);

pub(crate) async fn close_bounded(name: &str, conn: ServerClient) {
    match tokio::time::timeout(CLOSE_TIMEOUT, calls::close(&conn)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(server = %name, "closing the MCP connection failed: {e}"),
        Err(_) => tracing::debug!(server = %name, "closing the MCP connection timed out"),
    }
}
