//! The process-wide memory of which servers speak the handshake era.
//!
//! The era is a property of the server, not of a request: once a probe
//! found a handshake-era server behind a key (Streamable HTTP: the
//! endpoint's origin), later clients of that key skip the probe and send
//! `initialize` at once. An entry that stops holding (the server answers
//! `initialize` with a refusal or with a stateless-era error) is forgotten
//! and the server probed again. A stateless-era server needs no entry: its
//! probe, `server/discover`, is also what the era opens with.
//!
//! The memory is bounded ([`CAPACITY`] keys; the oldest half is dropped
//! when full) and holds no secret: keys are redacted endpoints.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The most keys remembered.
pub const CAPACITY: usize = 1024;

fn table() -> &'static Mutex<HashMap<String, u64>> {
    static TABLE: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn with<R>(f: impl FnOnce(&mut HashMap<String, u64>) -> R) -> R {
    f(&mut table().lock().unwrap_or_else(|e| e.into_inner()))
}

/// Whether the server behind `key` was found to speak the handshake era.
pub fn known_legacy(key: &str) -> bool {
    with(|t| t.contains_key(key))
}

/// Remembers that the server behind `key` speaks the handshake era.
pub fn remember_legacy(key: &str) {
    with(|t| {
        if t.len() >= CAPACITY && !t.contains_key(key) {
            let mut ages: Vec<u64> = t.values().copied().collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            t.retain(|_, age| *age > cut);
        }
        let next = t.values().copied().max().unwrap_or(0) + 1;
        t.insert(key.to_owned(), next);
    });
}

/// Forgets what was found of the server behind `key` (it is probed again).
pub fn forget(key: &str) {
    with(|t| {
        t.remove(key);
    });
}

/// Forgets every server (each is probed again).
pub fn clear() {
    with(HashMap::clear);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_forgets_and_stays_bounded() {
        let key = "test://era-unit";
        assert!(!known_legacy(key));
        remember_legacy(key);
        assert!(known_legacy(key));
        forget(key);
        assert!(!known_legacy(key));
        for i in 0..(CAPACITY + 10) {
            remember_legacy(&format!("test://bounded-{i}"));
        }
        assert!(with(|t| t.len()) <= CAPACITY);
        assert!(known_legacy(&format!("test://bounded-{}", CAPACITY + 9)));
    }
}
