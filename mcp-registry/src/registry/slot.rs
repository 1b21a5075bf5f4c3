//! One declared server's place in the registry: its configuration, its
//! cached connection, its health, its subscriptions and its supervisor;
//! and the configurations the registry was given.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::config::{ClientIdentity, ServerConfig};
use crate::relay::Relay;
use crate::supervisor::{Health, HealthEvent};
use crate::transport::ServerClient;
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::AbortHandle;

/// The connection, its generation, and its relay (which ends with it).
pub(crate) type Cached = Option<(u64, ServerClient, Relay)>;

/// One server: its configuration, its connection (once made) and health,
/// the resources subscribed to through the registry, its supervisor.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    /// Replaced in place by a reload that changes only the tool policy or
    /// the description.
    pub(crate) config: std::sync::RwLock<Arc<ServerConfig>>,
    /// The connection, once made; held while connecting, so concurrent
    /// first uses share one spawn.
    pub(crate) conn: tokio::sync::Mutex<Cached>,
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
    /// What [`Registry::plain_call`](crate::Registry::plain_call) found
    /// allowed, for as long as it holds.
    pub(crate) plain: std::sync::Mutex<Option<super::plain::Allowed>>,
}

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Slot {
    pub(crate) fn new(config: Arc<ServerConfig>, events: broadcast::Sender<HealthEvent>) -> Slot {
        Slot {
            name: config.name.clone(),
            config: std::sync::RwLock::new(config),
            conn: tokio::sync::Mutex::new(None),
            health: watch::Sender::new(Health::Idle),
            events,
            wake: Notify::new(),
            subscriptions: std::sync::Mutex::new(BTreeSet::new()),
            subscribing: tokio::sync::Mutex::new(()),
            supervisor: std::sync::Mutex::new(None),
            retired: AtomicBool::new(false),
            plain: std::sync::Mutex::new(None),
        }
    }

    pub(crate) fn config(&self) -> Arc<ServerConfig> {
        self.config.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_config(&self, config: Arc<ServerConfig>) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
    }

    pub(crate) fn health(&self) -> Health {
        self.health.borrow().clone()
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
        self.conn.try_lock().ok().map(|c| c.as_ref().map(|(g, _, _)| *g))
    }

    /// Forgets connection `generation` (lost), if it is still the cached
    /// one.
    pub(crate) async fn drop_connection(&self, generation: u64) -> bool {
        let mut cached = self.conn.lock().await;
        if cached.as_ref().is_some_and(|(g, _, _)| *g == generation) {
            *cached = None;
            return true;
        }
        false
    }

    /// [`drop_connection`](Self::drop_connection) with no wait: `None`
    /// when the connection is locked now.
    pub(crate) fn try_drop_connection(&self, generation: u64) -> Option<bool> {
        let mut cached = self.conn.try_lock().ok()?;
        if cached.as_ref().is_some_and(|(g, _, _)| *g == generation) {
            *cached = None;
            return Some(true);
        }
        Some(false)
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
