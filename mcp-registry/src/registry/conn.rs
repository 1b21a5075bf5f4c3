//! A server's cached connection ([`Slot::conn`](super::slot::Slot)): held
//! under an async lock while it is made or changed, and published for
//! plain calls ([`Registry::plain_route`](crate::Registry::plain_route),
//! [`PlainRoute::call`](crate::PlainRoute::call)), which read it with no
//! wait.
//!
//! Every change goes through the guard, which keeps the published copy
//! in step: a connection is published once it is cached, and taken back
//! before it is dropped or closed, while the async lock is held. So a
//! plain call never sees a connection the cache no longer holds, and sees
//! none while a change that drops one is under way: as reading the cache
//! with `try_lock` did, but with neither the async lock's permits nor its
//! waiters' lock to pay on each call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::relay::Relay;
use crate::transport::ServerClient;

/// The connection, its generation, and its relay (which ends with it).
pub(crate) type Cached<C = ServerClient, R = Relay> = Option<(u64, C, R)>;

/// The cached connection and its published copy (a client `C` and a relay
/// `R`: other types only in tests).
#[derive(Debug)]
pub(crate) struct ConnCell<C = ServerClient, R = Relay> {
    cached: tokio::sync::Mutex<Cached<C, R>>,
    /// The cached connection's generation and client, while it is cached
    /// and no change that drops it is under way.
    published: RwLock<Option<(u64, C)>>,
    /// The published generation plus one (0: none), read with no lock.
    generation: AtomicU64,
}

impl<C, R> Default for ConnCell<C, R> {
    fn default() -> Self {
        ConnCell {
            cached: tokio::sync::Mutex::new(None),
            published: RwLock::new(None),
            generation: AtomicU64::new(0),
        }
    }
}

/// The cached connection, locked: read through `Deref`, changed by
/// [`set`](Self::set), [`take`](Self::take) and [`forget`](Self::forget)
/// only.
pub(crate) struct ConnGuard<'a, C = ServerClient, R = Relay> {
    cached: tokio::sync::MutexGuard<'a, Cached<C, R>>,
    cell: &'a ConnCell<C, R>,
}

impl<C: Clone, R> ConnCell<C, R> {
    /// Waits for the lock.
    pub(crate) async fn lock(&self) -> ConnGuard<'_, C, R> {
        ConnGuard { cached: self.cached.lock().await, cell: self }
    }

    /// The lock if free now.
    pub(crate) fn try_lock(&self) -> Option<ConnGuard<'_, C, R>> {
        let cached = self.cached.try_lock().ok()?;
        Some(ConnGuard { cached, cell: self })
    }

    /// The published connection (its generation and client), with no
    /// wait: `None` when none is cached, or while one is being dropped.
    pub(crate) fn published(&self) -> Option<(u64, C)> {
        let published = self.published.read().unwrap_or_else(PoisonError::into_inner);
        published.as_ref().map(|(generation, client)| (*generation, client.clone()))
    }

    /// The published connection's generation, read with no lock: as
    /// [`published`](Self::published) gives it.
    pub(crate) fn published_generation(&self) -> Option<u64> {
        self.generation.load(Ordering::SeqCst).checked_sub(1)
    }
}

impl<C: Clone, R> ConnGuard<'_, C, R> {
    /// Caches a new connection (none is cached) and publishes it.
    pub(crate) fn set(&mut self, generation: u64, client: C, relay: R) {
        *self.cached = Some((generation, client.clone(), relay));
        *self.cell.published.write().unwrap_or_else(PoisonError::into_inner) =
            Some((generation, client));
        self.cell.generation.store(generation.wrapping_add(1), Ordering::SeqCst);
    }

    /// Takes the cached connection, unpublished first.
    pub(crate) fn take(&mut self) -> Cached<C, R> {
        self.cell.generation.store(0, Ordering::SeqCst);
        self.cell.published.write().unwrap_or_else(PoisonError::into_inner).take();
        self.cached.take()
    }

    /// Forgets connection `generation` if it is the cached one; whether it
    /// was.
    pub(crate) fn forget(&mut self, generation: u64) -> bool {
        if self.cached.as_ref().is_none_or(|(g, _, _)| *g != generation) {
            return false;
        }
        self.take();
        true
    }
}

impl<C, R> std::ops::Deref for ConnGuard<'_, C, R> {
    type Target = Cached<C, R>;

    fn deref(&self) -> &Cached<C, R> {
        &self.cached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client and a relay: names.
    type Cell = ConnCell<&'static str, &'static str>;

    /// What `published` gives (and `published_generation`, the same).
    fn published(cell: &Cell) -> Option<(u64, &'static str)> {
        let published = cell.published();
        assert_eq!(cell.published_generation(), published.map(|(g, _)| g));
        published
    }

    #[tokio::test]
    async fn the_published_copy_follows_every_change() {
        let cell = Cell::default();
        assert_eq!(published(&cell), None, "nothing cached yet");
        cell.lock().await.set(7, "a", "relay a");
        assert_eq!(published(&cell), Some((7, "a")));
        {
            // Held by someone else (a reader): still published.
            let held = cell.try_lock().expect("free");
            assert!(held.is_some());
            assert_eq!(published(&cell), Some((7, "a")));
            assert!(cell.try_lock().is_none(), "held");
        }
        // Another generation is not forgotten.
        assert!(!cell.lock().await.forget(6));
        assert_eq!(published(&cell), Some((7, "a")));
        assert!(cell.lock().await.forget(7));
        assert_eq!(published(&cell), None);
        assert!(cell.lock().await.is_none());
        cell.lock().await.set(8, "b", "relay b");
        assert_eq!(published(&cell), Some((8, "b")));
        let taken = cell.lock().await.take();
        assert_eq!(taken, Some((8, "b", "relay b")));
        assert_eq!(published(&cell), None);
    }

    #[tokio::test]
    async fn a_change_unpublishes_before_the_connection_leaves_the_cache() {
        let cell = Cell::default();
        cell.lock().await.set(1, "a", "relay a");
        let mut guard = cell.lock().await;
        let taken = guard.take();
        // Still locked, the connection out of the cache but not closed:
        // no plain call can take it up now.
        assert_eq!(published(&cell), None);
        assert!(taken.is_some() && guard.is_none());
    }
}
