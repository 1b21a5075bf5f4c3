//! Property tests: random streams, random splits.

use proptest::prelude::*;

use crate::reference;
use crate::sse::{decode_borrowed, decode_chunks, decode_mixed};

/// Pieces that exercise every rule: field names, separators, every line
/// end, a BOM, invalid and multi-byte UTF-8, NUL, digits.
const PIECES: &[&[u8]] = &[
    b"data",
    b"event",
    b"id",
    b"retry",
    b"dat",
    b":",
    b": ",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\r\n\r\n",
    b"\xEF\xBB\xBF",
    b"\xEF\xBB",
    b"\xFF",
    b"\xE2\x82",
    "é€".as_bytes(),
    b"\0",
    b"1",
    b"42",
    b"x",
    b"hello",
    b"{\"jsonrpc\":\"2.0\"}",
    b"data: ",
    b"id: ",
    b"retry: 10",
];

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Made of meaningful pieces...
        prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|p| p.concat()),
        // ...or arbitrary bytes.
        prop::collection::vec(any::<u8>(), 0..200),
    ]
}

/// Cut points, as fractions of the input length.
fn cuts() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(0.0..=1.0f64, 0..12)
}

fn split<'a>(input: &'a [u8], cuts: &[f64]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|f| ((input.len() as f64) * f) as usize).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for p in points {
        chunks.push(&input[start..p]);
        start = p;
    }
    chunks.push(&input[start..]);
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn every_split_gives_the_same_items(input in stream(), cuts in cuts(), max in prop_oneof![Just(usize::MAX), 1usize..40]) {
        let whole = decode_chunks(max, [&input[..]]);
        let chunked = decode_chunks(max, split(&input, &cuts));
        prop_assert_eq!(&whole, &chunked);
        let borrowed = decode_borrowed(max, split(&input, &cuts));
        prop_assert_eq!(&whole, &borrowed);
        prop_assert_eq!(&whole, &decode_borrowed(max, [&input[..]]));
        prop_assert_eq!(&whole, &decode_mixed(max, split(&input, &cuts)));
        let by_codec = crate::codec::decode_with_codec(max, &input, 1 + (cuts.len() * 3));
        prop_assert_eq!(&whole, &by_codec);
        // Reading lazily, dropping iterators with items unread.
        let mut decoder = mcp_sse::Decoder::with_max_event_size(max);
        let mut lazy = Vec::new();
        for chunk in split(&input, &cuts) {
            lazy.extend(decoder.decode(chunk).next());
        }
        lazy.extend(decoder.decode(b""));
        lazy.extend(decoder.finish_items());
        prop_assert_eq!(&whole, &lazy);
    }

    #[test]
    fn the_decoder_agrees_with_a_literal_reading_of_the_standard(input in stream(), cuts in cuts()) {
        let expected = reference::normalise(reference::interpret(&input));
        let decoded = decode_chunks(usize::MAX, split(&input, &cuts));
        prop_assert_eq!(reference::normalise(decoded), expected.clone());
        let borrowed = decode_borrowed(usize::MAX, split(&input, &cuts));
        prop_assert_eq!(reference::normalise(borrowed), expected);
    }
}
