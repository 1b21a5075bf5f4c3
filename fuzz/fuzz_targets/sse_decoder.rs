//! The event-stream decoder never panics, and gives the same items whether
//! the input comes whole or in chunks (sizes and bound taken from the input),
//! through the owned `decode` or the borrowing `decode_with`.
#![no_main]

mod common;

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

/// The same through the borrowing API, its items made owned to compare.
fn decode_borrowed<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.decode_with(chunk, |item| items.push(item.into_owned()));
    }
    decoder.finish();
    decoder.decode_with(b"", |item| items.push(item.into_owned()));
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
    assert_eq!(whole, decode_borrowed(max, [body]), "borrowed, whole");
    for chunk in [1, 2, 3, 1 + seed % 17] {
        assert_eq!(whole, decode(max, body.chunks(chunk)), "chunks of {chunk}");
        assert_eq!(whole, decode_borrowed(max, body.chunks(chunk)), "borrowed, chunks of {chunk}");
    }
    // Uneven chunks: lengths taken from the body itself.
    let chunks = common::uneven_chunks(body);
    assert_eq!(whole, decode(max, chunks.iter().copied()), "uneven chunks");
    assert_eq!(whole, decode_borrowed(max, chunks), "borrowed, uneven chunks");
});
