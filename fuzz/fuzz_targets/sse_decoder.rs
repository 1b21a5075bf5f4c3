//! The event-stream decoder never panics, and gives the same items whether
//! the input comes whole or in chunks (sizes and bound taken from the input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sse::sse::{Decoder, Item};

fn decode<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for chunk in chunks {
        items.extend(decoder.decode(chunk));
    }
    items.extend(decoder.finish_items());
    items
}

fuzz_target!(|input: &[u8]| {
    // The first two bytes choose the chunk sizes and the bound.
    let (head, body) = input.split_at(input.len().min(2));
    let seed = head.iter().fold(0usize, |acc, b| acc * 256 + usize::from(*b));
    let max = match seed % 4 {
        0 => usize::MAX,
        _ => 1 + seed / 4 % 64,
    };
    let whole = decode(max, [body]);
    for chunk in [1, 2, 3, 1 + seed % 17] {
        assert_eq!(whole, decode(max, body.chunks(chunk)), "chunks of {chunk}");
    }
    // Uneven chunks: lengths taken from the body itself.
    let mut chunks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = (usize::from(rest[0]) % 9 + 1).min(rest.len());
        let (chunk, tail) = rest.split_at(n);
        chunks.push(chunk);
        rest = tail;
    }
    assert_eq!(whole, decode(max, chunks), "uneven chunks");
});
