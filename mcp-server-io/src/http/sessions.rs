//! The live sessions of an HTTP server, by `Mcp-Session-Id`: bounded in
//! number, and forgotten after an idle time.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcp_proto::hash::SeededMap;
use tokio::time::Instant;

use super::new_session_id;

/// The sessions of one server.
#[derive(Debug)]
pub struct SessionTable<S> {
    cap: usize,
    idle_timeout: Duration,
    /// Looked up on every POST, so with a fast hasher: the ids are ours
    /// (random), a client only looks them up, and there are at most `cap`.
    map: Mutex<SeededMap<String, Entry<S>>>,
}

#[derive(Debug)]
struct Entry<S> {
    session: Arc<S>,
    last_used: Instant,
}

impl<S> SessionTable<S> {
    /// A table of at most `cap` sessions, each forgotten once unused for
    /// `idle_timeout`.
    pub fn new(cap: usize, idle_timeout: Duration) -> Self {
        SessionTable { cap, idle_timeout, map: Mutex::new(SeededMap::default()) }
    }

    /// Forgets the sessions unused for the idle timeout and returns them,
    /// for the caller to end.
    pub fn evict_idle(&self) -> Vec<Arc<S>> {
        let now = Instant::now();
        let mut map = self.lock();
        let idle = self.idle_timeout;
        let stale: Vec<String> = map
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(e.last_used) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        stale.iter().filter_map(|id| map.remove(id)).map(|e| e.session).collect()
    }

    /// When the next session falls idle, unless used before: the earliest
    /// last use plus the idle timeout; `None` when no session is kept.
    pub fn next_expiry(&self) -> Option<Instant> {
        let idle = self.idle_timeout;
        self.lock().values().map(|e| e.last_used + idle).min()
    }

    /// The idle timeout.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// Makes a session under a fresh id; `None` when `cap` are kept (call
    /// [`SessionTable::evict_idle`] first to make room).
    pub fn insert_new(&self, make: impl FnOnce(&str) -> Arc<S>) -> Option<(String, Arc<S>)> {
        let mut map = self.lock();
        if map.len() >= self.cap {
            return None;
        }
        let id = new_session_id();
        let session = make(&id);
        map.insert(id.clone(), Entry { session: session.clone(), last_used: Instant::now() });
        Some((id, session))
    }

    /// The session of an id, marked used now; `None` when unknown, ended
    /// or idle too long.
    pub fn get(&self, id: &str) -> Option<Arc<S>> {
        let now = Instant::now();
        let mut map = self.lock();
        let entry = map.get_mut(id)?;
        if now.saturating_duration_since(entry.last_used) >= self.idle_timeout {
            return None;
        }
        entry.last_used = now;
        Some(entry.session.clone())
    }

    /// Forgets a session.
    pub fn remove(&self, id: &str) -> Option<Arc<S>> {
        self.lock().remove(id).map(|e| e.session)
    }

    /// Forgets every session.
    pub fn drain(&self) -> Vec<Arc<S>> {
        self.lock().drain().map(|(_, e)| e.session).collect()
    }

    /// How many sessions are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, SeededMap<String, Entry<S>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn sessions_are_bounded_and_idle_ones_evicted() {
        let table = SessionTable::new(2, Duration::from_secs(60));
        assert_eq!(table.next_expiry(), None);
        let start = Instant::now();
        let (a, _) = table.insert_new(|id| Arc::new(id.to_owned())).unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        let (b, _) = table.insert_new(|id| Arc::new(id.to_owned())).unwrap();
        assert_eq!(table.next_expiry(), Some(start + Duration::from_secs(60)));
        assert_eq!(table.insert_new(|id| Arc::new(id.to_owned())), None);
        tokio::time::sleep(Duration::from_secs(31)).await;
        // `a` has been idle a minute: it is gone, and makes room.
        assert!(table.get(&a).is_none());
        assert!(table.get(&b).is_some());
        let evicted = table.evict_idle();
        assert_eq!(evicted.iter().map(|s| s.as_str()).collect::<Vec<_>>(), [a.as_str()]);
        assert!(table.insert_new(|id| Arc::new(id.to_owned())).is_some());
        // Using `b` kept it; a minute more without use ends it too.
        tokio::time::sleep(Duration::from_secs(59)).await;
        assert!(table.get(&b).is_some());
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(table.get(&b).is_none());
        assert_eq!(table.remove(&b).as_deref(), Some(&b));
        assert_eq!(table.drain().len(), 1);
        assert!(table.is_empty());
    }
}
