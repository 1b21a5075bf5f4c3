//! The memory of which servers speak the handshake era, passed in through
//! [`ClientOptions::era_memory`](crate::ClientOptions::era_memory) as
//! rustls passes in its session storage.
//!
//! The era is a property of the server, not of a request: once a probe
//! found a handshake-era server behind a key (Streamable HTTP: the
//! endpoint's origin), later clients of that key sharing the memory skip
//! the probe and send `initialize` at once. An entry that stops holding
//! (the server answers `initialize` with a refusal or with a stateless-era
//! error) is forgotten and the server probed again. A stateless-era server
//! needs no entry: its probe, `server/discover`, is also what the era
//! opens with.
//!
//! By default every client of the process shares one bounded table
//! ([`shared`]); a host may give a client a table of its own
//! ([`EraTable::new`]), or its own store (persisted, ...) implementing
//! [`EraMemory`], or none (`None`: every connection probes).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use crate::sync::lock;

/// The most keys an [`EraTable`] remembers by default.
pub const CAPACITY: usize = 1024;

/// A store of the servers found to speak the handshake era. Keys are
/// redacted endpoints (no secret).
pub trait EraMemory: Send + Sync + fmt::Debug {
    /// Whether the server behind `key` was found to speak the handshake era.
    fn known_legacy(&self, key: &str) -> bool;
    /// Remembers that the server behind `key` speaks the handshake era.
    fn remember_legacy(&self, key: &str);
    /// Forgets what was found of the server behind `key` (it is probed
    /// again).
    fn forget(&self, key: &str);
}

/// The default [`EraMemory`]: in memory, bounded (the oldest half is
/// dropped when full).
#[derive(Debug)]
pub struct EraTable {
    capacity: usize,
    /// Each key with the order it was remembered in.
    entries: Mutex<HashMap<String, u64>>,
}

impl EraTable {
    /// A table of at most `capacity` keys (at least one).
    pub fn new(capacity: usize) -> EraTable {
        EraTable { capacity: capacity.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every server (each is probed again).
    pub fn clear(&self) {
        lock(&self.entries).clear();
    }
}

impl Default for EraTable {
    fn default() -> Self {
        EraTable::new(CAPACITY)
    }
}

impl EraMemory for EraTable {
    fn known_legacy(&self, key: &str) -> bool {
        lock(&self.entries).contains_key(key)
    }

    fn remember_legacy(&self, key: &str) {
        let mut entries = lock(&self.entries);
        if entries.len() >= self.capacity && !entries.contains_key(key) {
            let mut ages: Vec<u64> = entries.values().copied().collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            entries.retain(|_, age| *age > cut);
        }
        let next = entries.values().copied().max().unwrap_or(0) + 1;
        entries.insert(key.to_owned(), next);
    }

    fn forget(&self, key: &str) {
        lock(&self.entries).remove(key);
    }
}

/// The table every client of the process shares unless its options name
/// another.
pub fn shared() -> Arc<EraTable> {
    static SHARED: OnceLock<Arc<EraTable>> = OnceLock::new();
    SHARED.get_or_init(|| Arc::new(EraTable::default())).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_forgets_and_stays_bounded() {
        let table = EraTable::new(8);
        let key = "test://era-unit";
        assert!(!table.known_legacy(key));
        table.remember_legacy(key);
        assert!(table.known_legacy(key));
        table.forget(key);
        assert!(!table.known_legacy(key));
        for i in 0..(8 + 3) {
            table.remember_legacy(&format!("test://bounded-{i}"));
            assert!(table.len() <= 8);
        }
        // The newest stay; the oldest half went.
        assert!(table.known_legacy("test://bounded-10"));
        assert!(!table.known_legacy("test://bounded-0"));
        // Remembering a key again when full drops nothing.
        let before = table.len();
        table.remember_legacy("test://bounded-10");
        assert_eq!(table.len(), before);
        table.clear();
        assert!(table.is_empty());
        assert_eq!(EraTable::new(0).capacity, 1);
        assert_eq!(EraTable::default().capacity, CAPACITY);
    }

    #[test]
    fn tables_are_apart_and_the_shared_one_is_one() {
        let (a, b) = (EraTable::default(), EraTable::default());
        a.remember_legacy("test://apart");
        assert!(!b.known_legacy("test://apart"));
        assert!(Arc::ptr_eq(&shared(), &shared()));
    }
}
