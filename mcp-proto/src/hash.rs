//! The hash maps on the per-request paths: [`SeededMap`], a hash map with
//! a fast hasher (`foldhash`) seeded at random, in place of the standard
//! SipHash where a look-up happens for every request.
//!
//! SipHash is there so that an attacker who chooses the keys cannot make
//! every key land in one bucket. `foldhash` keeps that out of reach of a
//! peer that cannot see the seed (it is random per process and per map),
//! at a fraction of the cost, though without SipHash's guarantees. So a
//! map keyed by what a peer chooses (its request ids, tool names) takes it
//! only where its size is capped otherwise (the requests a session runs at
//! once, the sessions an HTTP server keeps, the servers configured): even keys that all collided would then
//! cost a bounded scan, never an unbounded one.

use std::collections::HashMap;

/// A hash map with `foldhash`'s hasher, seeded at random per map (see the
/// [module](self) for where it may serve).
pub type SeededMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::SeededMap;
    use crate::jsonrpc::RequestId;

    #[test]
    fn request_ids_hash_with_their_equality() {
        let state = foldhash::fast::RandomState::default();
        for id in [RequestId::Number(-7), RequestId::from(""), RequestId::from("abc")] {
            assert_eq!(state.hash_one(&id), state.hash_one(id.clone()), "{id}");
        }
        // The number 1 and the string "1" are different keys, whatever they
        // hash to; so are a string and its prefix.
        let mut map = SeededMap::default();
        let ids = [
            RequestId::Number(1),
            RequestId::from("1"),
            RequestId::from(""),
            RequestId::from("abc"),
            RequestId::from("ab"),
        ];
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(map.insert(id.clone(), n), None, "{id}");
        }
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(map.get(id), Some(&n), "{id}");
        }
        assert_eq!(map.remove(&RequestId::Number(1)), Some(0));
        assert_eq!(map.get(&RequestId::from("1")), Some(&1));
    }
}
