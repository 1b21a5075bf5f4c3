//! One declared server's place in the registry: its configuration, its
//! cached connection, its health, its subscriptions and its supervisor;
//! and the configurations the registry was given.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::config::{ClientIdentity, ServerConfig};
use crate::supervisor::{Health, HealthEvent};
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::AbortHandle;

use super::conn::ConnCell;

/// One server: its configuration, its connection (once made) and health,
/// the resources subscribed to through the registry, its supervisor.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    /// Replaced in place by a reload that changes only the tool policy or
    /// the description.
    pub(crate) config: std::sync::RwLock<Arc<ServerConfig>>,
    /// The connection, once made; held while connecting, so concurrent
    /// first uses share one spawn. Published for plain calls.
    pub(crate) conn: ConnCell,
    pub(crate) health: watch::Sender<Health>,
    pub(crate) events: broadcast::Sender<HealthEvent>,
    /// Wakes the supervisor when a call dropped the connection.
    pub(crate) wake: Notify,
    /// The URIs of `resources/subscribe` made through the registry, made
    /// again on every new connection.
    pub(crate) subscriptions: std::sync::Mutex<BTreeSet<String>>,
    /// One change of the subscriptions at a time (in the stateless era a
    /// change opens the connection's listen stream again).
    pub(crate) subscribing: tokio::sync::Mutex<()>,
    pub(crate) supervisor: std::sync::Mutex<Option<AbortHandle>>,
    /// Set when a reload removed or replaced the server.
    pub(crate) retired: AtomicBool,
    /// What [`Registry::plain_route`](crate::Registry::plain_route) found
    /// allowed, for as long as it holds.
    pub(crate) plain: std::sync::Mutex<Option<super::plain::Allowed>>,
    /// Counts the changes of `config` and of `health`: a
    /// [`PlainRoute`](crate::PlainRoute) holds while neither changed.
    config_changes: AtomicU64,
    health_changes: AtomicU64,
}

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Slot {
    pub(crate) fn new(config: Arc<ServerConfig>, events: broadcast::Sender<HealthEvent>) -> Slot {
        Slot {
            name: config.name.clone(),
            config: std::sync::RwLock::new(config),
            conn: ConnCell::default(),
            health: watch::Sender::new(Health::Idle),
            events,
            wake: Notify::new(),
            subscriptions: std::sync::Mutex::new(BTreeSet::new()),
            subscribing: tokio::sync::Mutex::new(()),
            supervisor: std::sync::Mutex::new(None),
            retired: AtomicBool::new(false),
            plain: std::sync::Mutex::new(None),
            config_changes: AtomicU64::new(0),
            health_changes: AtomicU64::new(0),
        }
    }

    pub(crate) fn config(&self) -> Arc<ServerConfig> {
        self.config.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_config(&self, config: Arc<ServerConfig>) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
        self.config_changes.fetch_add(1, Ordering::SeqCst);
    }

    /// How many times the configuration changed: read before it, a count
    /// that is the same later means it did not change in between.
    pub(crate) fn config_changes(&self) -> u64 {
        self.config_changes.load(Ordering::SeqCst)
    }

    /// How many times the health changed, as
    /// [`config_changes`](Self::config_changes) counts.
    pub(crate) fn health_changes(&self) -> u64 {
        self.health_changes.load(Ordering::SeqCst)
    }

    pub(crate) fn health(&self) -> Health {
        self.health.borrow().clone()
    }

    /// Whether the server is backing off ([`Health::BackingOff`]), read
    /// in place.
    pub(crate) fn is_backing_off(&self) -> bool {
        matches!(*self.health.borrow(), Health::BackingOff { .. })
    }

    /// Sets the health; a change is announced to the registry's
    /// subscribers.
    pub(crate) fn set_health(&self, health: Health) {
        self.set_health_if(|_| true, health);
    }

    /// Sets the health when the current one passes `when`.
    pub(crate) fn set_health_if(&self, when: impl Fn(&Health) -> bool, health: Health) {
        let changed = self.health.send_if_modified(|h| {
            if *h == health || !when(h) {
                return false;
            }
            *h = health.clone();
            true
        });
        if changed {
            self.health_changes.fetch_add(1, Ordering::SeqCst);
            tracing::debug!(server = %self.name, %health, "MCP server health");
            let _ = self.events.send(HealthEvent { server: self.name.clone(), health });
        }
    }

    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::SeqCst)
    }

    /// The generation of the cached connection (`Some(None)`: none), or
    /// `None` while someone holds the slot (a connect in progress).
    pub(crate) fn current_generation(&self) -> Option<Option<u64>> {
        self.conn.try_lock().map(|c| c.as_ref().map(|(g, _, _)| *g))
    }

    /// Forgets connection `generation` (lost), if it is still the cached
    /// one.
    pub(crate) async fn drop_connection(&self, generation: u64) -> bool {
        self.conn.lock().await.forget(generation)
    }

    /// [`drop_connection`](Self::drop_connection) with no wait: `None`
    /// when the connection is locked now.
    pub(crate) fn try_drop_connection(&self, generation: u64) -> Option<bool> {
        Some(self.conn.try_lock()?.forget(generation))
    }

    /// Stops the supervisor, if one runs.
    pub(crate) fn stop_supervisor(&self) {
        if let Some(task) = lock(&self.supervisor).take() {
            task.abort();
        }
    }

    pub(crate) fn is_supervised(&self) -> bool {
        lock(&self.supervisor).as_ref().is_some_and(|t| !t.is_finished())
    }

    /// The supervisor's task while it runs.
    pub(crate) fn running_supervisor(&self) -> Option<AbortHandle> {
        lock(&self.supervisor).as_ref().filter(|t| !t.is_finished()).cloned()
    }

    /// The health set without a word to the registry's subscribers (a
    /// retired server's successor announces the server's health).
    pub(crate) fn set_health_quietly(&self, health: Health) {
        self.health.send_replace(health);
        self.health_changes.fetch_add(1, Ordering::SeqCst);
    }
}

/// The configurations a registry was given (the first, then each reload's
/// that changed something), so [`Registry::list`] and [`Registry::get`]
/// can lend them: a reload appends, nothing is removed while the registry
/// lives. Unchanged servers' entries are shared between generations, so a
/// reload keeps only what it changed (and one pointer per server).
#[derive(Debug)]
pub(crate) struct Declared {
    pub(crate) identity: ClientIdentity,
    pub(crate) servers: Vec<Arc<ServerConfig>>,
    pub(crate) next: OnceLock<Box<Declared>>,
}

impl Declared {
    pub(crate) fn latest(&self) -> &Declared {
        let mut d = self;
        while let Some(next) = d.next.get() {
            d = next;
        }
        d
    }
}

impl Drop for Declared {
    fn drop(&mut self) {
        // Iteratively: a long chain must not recurse.
        let mut next = self.next.take();
        while let Some(mut d) = next {
            next = d.next.take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_spawn_env::ServerCommand;

    /// Every change of the configuration and of the health is counted, so
    /// that a plain route found before it no longer holds; setting the
    /// health it already has is no change.
    #[test]
    fn each_change_of_the_configuration_and_the_health_is_counted() {
        let config = Arc::new(ServerConfig::stdio("s", ServerCommand::new("unused")));
        let slot = Slot::new(config.clone(), broadcast::channel(4).0);
        assert_eq!((slot.config_changes(), slot.health_changes()), (0, 0));
        slot.set_config(config);
        assert_eq!((slot.config_changes(), slot.health_changes()), (1, 0));
        slot.set_health(Health::Idle);
        assert_eq!(slot.health_changes(), 0, "the health it had");
        slot.set_health(Health::Ready);
        assert_eq!(slot.health_changes(), 1);
        slot.set_health_if(|_| false, Health::Connecting);
        assert_eq!(slot.health_changes(), 1, "not set");
        slot.set_health_quietly(Health::Removed);
        assert_eq!(slot.health_changes(), 2);
        assert_eq!(slot.health(), Health::Removed);
        assert_eq!(slot.config_changes(), 1);
    }
}
