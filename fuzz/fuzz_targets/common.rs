//! Helpers shared by the targets (each includes this file as a module).

#![allow(dead_code)]

use serde_json::Value;

/// Whether two JSON values are the same, numbers compared by value: a
/// float printed and read back may differ in its last bit (serde_json's
/// default parser is not exact for every decimal), so floats are equal when
/// within a few ULP of each other.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q || (p - q).abs() <= p.abs().max(q.abs()) * 1e-14,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Chunk sizes for feeding `body` in pieces: lengths taken from the bytes
/// themselves (1 to 9).
pub fn uneven_chunks(body: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = (usize::from(rest[0]) % 9 + 1).min(rest.len());
        let (chunk, tail) = rest.split_at(n);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}
