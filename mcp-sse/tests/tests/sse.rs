//! One table per rule of "Interpreting an event stream": fixture in, items
//! out. `check` runs every fixture through every way of feeding it (whole,
//! byte by byte, every split into two chunks, every split into three chunks
//! for short fixtures, and the tokio codec) and requires the same items from
//! each.

use std::borrow::Cow;

use mcp_sse::sse::{DecodeError, Decoder, Event, Item, ItemRef};

pub(crate) fn ev(event: &str, data: &str) -> Item {
    Item::Event(Event { event: event.to_owned().into(), data: data.into(), id: None, retry: None })
}

pub(crate) fn ev_id(event: &str, data: &str, id: &str) -> Item {
    Item::Event(Event {
        event: event.to_owned().into(),
        data: data.into(),
        id: Some(id.into()),
        retry: None,
    })
}

fn ev_retry(data: &str, retry: u64) -> Item {
    Item::Event(Event { event: "message".into(), data: data.into(), id: None, retry: Some(retry) })
}

fn msg(data: &str) -> Item {
    ev("message", data)
}

fn no_data(id: Option<&str>, retry: Option<u64>) -> Item {
    Item::NoData { id: id.map(Into::into), retry }
}

fn comment(text: &str) -> Item {
    Item::Comment(text.into())
}

/// An event over `limit` whose data started with `head`.
fn too_large(limit: usize, head: &[u8]) -> Item {
    Item::Error(DecodeError::EventTooLarge { limit, head: head.to_vec() })
}

fn unfinished(discarded: usize) -> Item {
    Item::Error(DecodeError::UnfinishedEvent { discarded })
}

/// Feeds `chunks` in order, then finishes the stream.
pub(crate) fn decode_chunks<'a>(
    max: usize,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for chunk in chunks {
        items.extend(decoder.decode(chunk));
    }
    items.extend(decoder.finish_items());
    items
}

/// Feeds `chunks` in order to the borrowing [`Decoder::decode_with`], then
/// finishes the stream through it too; the items made owned for comparison.
pub(crate) fn decode_borrowed<'a>(
    max: usize,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.decode_with(chunk, |item| items.push(item.into_owned()));
    }
    decoder.finish();
    decoder.decode_with(b"", |item| items.push(item.into_owned()));
    items
}

/// Alternates the owned and the borrowing API chunk by chunk (they share
/// the decoder's state), finishing with the owned one.
pub(crate) fn decode_mixed<'a>(
    max: usize,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if i % 2 == 0 {
            decoder.decode_with(chunk, |item| items.push(item.into_owned()));
        } else {
            items.extend(decoder.decode(chunk));
        }
    }
    items.extend(decoder.finish_items());
    items
}

fn feed_and_next_item(max: usize, input: &[u8]) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for byte in input.chunks(1) {
        decoder.feed(byte);
        while let Some(item) = decoder.next_item() {
            items.push(item);
        }
    }
    decoder.finish();
    while let Some(item) = decoder.next_item() {
        items.push(item);
    }
    items
}

/// Reads at most one item after each chunk, dropping the iterator with
/// items still unread; the decoder must keep them.
fn read_lazily(max: usize, input: &[u8], chunk: usize) -> Vec<Item> {
    let mut decoder = Decoder::with_max_event_size(max);
    let mut items = Vec::new();
    for piece in input.chunks(chunk) {
        items.extend(decoder.decode(piece).next());
    }
    items.extend(decoder.decode(b""));
    items.extend(decoder.finish_items());
    items
}

/// Every way of feeding `input` this test suite knows, each with its name.
pub(crate) fn all_feedings(max: usize, input: &[u8]) -> Vec<(String, Vec<Item>)> {
    let mut runs = vec![
        ("whole".to_owned(), decode_chunks(max, [input])),
        ("feed and next_item, byte by byte".to_owned(), feed_and_next_item(max, input)),
        ("one item read per chunk of 3".to_owned(), read_lazily(max, input, 3)),
        ("one item read per chunk of 1".to_owned(), read_lazily(max, input, 1)),
        ("byte by byte".to_owned(), decode_chunks(max, input.chunks(1))),
        ("borrowed, whole".to_owned(), decode_borrowed(max, [input])),
        ("borrowed, byte by byte".to_owned(), decode_borrowed(max, input.chunks(1))),
        ("borrowed and owned, byte by byte".to_owned(), decode_mixed(max, input.chunks(1))),
        ("borrowed and owned, chunks of 3".to_owned(), decode_mixed(max, input.chunks(3))),
        ("codec, byte by byte".to_owned(), crate::codec::decode_with_codec(max, input, 1)),
        (
            "codec, whole".to_owned(),
            crate::codec::decode_with_codec(max, input, input.len().max(1)),
        ),
    ];
    for i in 0..=input.len() {
        runs.push((format!("split at {i}"), decode_chunks(max, [&input[..i], &input[i..]])));
        runs.push((
            format!("borrowed, split at {i}"),
            decode_borrowed(max, [&input[..i], &input[i..]]),
        ));
    }
    if input.len() <= 48 {
        for i in 0..=input.len() {
            for j in i..=input.len() {
                runs.push((
                    format!("split at {i} and {j}"),
                    decode_chunks(max, [&input[..i], &input[i..j], &input[j..]]),
                ));
                runs.push((
                    format!("borrowed, split at {i} and {j}"),
                    decode_borrowed(max, [&input[..i], &input[i..j], &input[j..]]),
                ));
            }
        }
    }
    runs
}

fn check_with(max: usize, input: &[u8], expected: &[Item]) {
    for (how, items) in all_feedings(max, input) {
        assert_eq!(items, expected, "input {:?} fed {how}", String::from_utf8_lossy(input));
    }
    // The literal reading of the standard agrees (its byte counts differ
    // where invalid UTF-8 was replaced, so unfinished reports are compared
    // without them).
    if max == usize::MAX {
        assert_eq!(
            crate::reference::normalise(crate::reference::interpret(input)),
            crate::reference::normalise(expected.to_vec()),
            "reference for {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

fn check(input: &[u8], expected: &[Item]) {
    check_with(usize::MAX, input, expected);
    // The default bound changes nothing for small inputs.
    assert_eq!(
        decode_default(input),
        expected,
        "input {:?} fed to the default decoder",
        String::from_utf8_lossy(input)
    );
}

fn decode_default(input: &[u8]) -> Vec<Item> {
    let mut decoder = Decoder::new();
    let mut items: Vec<Item> = decoder.decode(input).collect();
    items.extend(decoder.finish_items());
    items
}

#[test]
fn line_endings() {
    check(b"data: a\n\n", &[msg("a")]);
    check(b"data: a\r\n\r\n", &[msg("a")]);
    check(b"data: a\r\r", &[msg("a")]);
    check(b"data: a\rdata: b\r\ndata: c\n\r\n", &[msg("a\nb\nc")]);
    // CR CR LF: the first CR ends the line, CR LF is the empty line.
    check(b"data: a\r\r\n", &[msg("a")]);
    // LF CR: two line ends, so an empty line.
    check(b"data: a\n\rdata: b\n\n", &[msg("a"), msg("b")]);
    // CR LF LF: one line end and one empty line.
    check(b"data: a\r\n\ndata: b\r\n\r\n", &[msg("a"), msg("b")]);
    check(b"\r\n\r\n\n\rdata: x\r\n\r", &[msg("x")]);
}

#[test]
fn byte_order_mark() {
    check(b"\xEF\xBB\xBFdata: a\n\n", &[msg("a")]);
    // Only one is skipped: the second is part of the field name.
    check(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n", &[msg("b")]);
    // Not at the start: part of the field name again.
    check(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n", &[msg("a")]);
    // A BOM prefix that is not a BOM is data.
    check(b"\xEF\xBBdata: a\n\ndata: b\n\n", &[msg("b")]);
    check(b"\xEF\xBB\xBF", &[]);
    check(b"\xEF\xBB\xBF\n", &[]);
    check(b"\xEF\xBB\xBF:hi\n", &[comment("hi")]);
}

#[test]
fn utf8_with_replacement() {
    check(b"data: a\xFFb\n\n", &[msg("a\u{FFFD}b")]);
    check("data: é€😀\n\n".as_bytes(), &[msg("é€😀")]);
    // A sequence cut short by the line end is replaced; the line end stays.
    check(b"data: \xE2\x82\ndata: x\n\n", &[msg("\u{FFFD}\nx")]);
    check(b"data: \xF0\x9F\x98\r\n\r\n", &[msg("\u{FFFD}")]);
    check(b"event: \xC3\x28\ndata: x\n\n", &[ev("\u{FFFD}(", "x")]);
    check(b"id: \xFF\ndata: x\n\n", &[ev_id("message", "x", "\u{FFFD}")]);
    // Overlong and surrogate encodings, one U+FFFD per maximal subpart.
    check(b"data: \xC0\xAF\xED\xA0\x80\n\n", &[msg("\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}")]);
}

#[test]
fn comments() {
    check(b": keep-alive\n\n", &[comment(" keep-alive")]);
    check(b":\n", &[comment("")]);
    check(b"data: a\n:comment\ndata: b\n\n", &[comment("comment"), msg("a\nb")]);
    check(b":x\r:y\r\n:z\n", &[comment("x"), comment("y"), comment("z")]);
    check(b":a\xFFb\n", &[comment("a\u{FFFD}b")]);
    // An unfinished comment line at the end is not an unfinished event.
    check(b": ping", &[]);
}

#[test]
fn fields() {
    // No colon: the whole line is the name, the value is empty.
    check(b"data\n\n", &[msg("")]);
    check(b"data\ndata\n\n", &[msg("\n")]);
    check(b"event\ndata: x\n\n", &[msg("x")]);
    // One space after the colon is removed, no more.
    check(b"data:x\n\n", &[msg("x")]);
    check(b"data:  x\n\n", &[msg(" x")]);
    check(b"data: x \n\n", &[msg("x ")]);
    check(b"data:\tx\n\n", &[msg("\tx")]);
    // Only the first colon splits.
    check(b"data: a:b: c\n\n", &[msg("a:b: c")]);
    check(b"data::\n\n", &[msg(":")]);
    // Unknown fields, and names are case-sensitive.
    check(b"foo: bar\ndata: x\nDATA: y\n Data: z\ndata : w\n\n", &[msg("x")]);
    check(b"foo\n\n", &[]);
    check(b"data: a\0b\n\n", &[msg("a\0b")]);
}

/// The common `data:`, `id:` and `event:` lines and the empty line are read
/// by a fast path; lines that only look like them must still take the
/// general one. `check` also splits every fixture inside each prefix.
#[test]
fn fast_path_look_alikes() {
    // Names that merely start like a known one are unknown fields.
    check(b"datax: y\ndata: x\n\n", &[msg("x")]);
    check(b"dat: y\ndata: x\n\n", &[msg("x")]);
    check(b"ida: 1\nid: 2\ndata: x\n\n", &[ev_id("message", "x", "2")]);
    check(b"eventx: add\nevents: y\ndata: x\n\n", &[msg("x")]);
    check(b"evenT: add\nEvent: y\ndata: x\n\n", &[msg("x")]);
    // A known name without a colon: an empty value.
    check(b"data\r\n\r\n", &[msg("")]);
    check(b"data\rdata: x\r\r", &[msg("\nx")]);
    check(b"id: 1\ndata: a\n\nid\rdata: b\r\n\r\n", &[ev_id("message", "a", "1"), msg("b")]);
    check(b"event\r\ndata: x\r\n\r\n", &[msg("x")]);
    // No space after the colon, one space, two, a tab.
    check(b"event:add\ndata:x\nid:7\n\n", &[ev_id("add", "x", "7")]);
    check(b"event:  add\ndata: x\n\n", &[ev(" add", "x")]);
    check(b"id:\t7\ndata: x\n\n", &[ev_id("message", "x", "\t7")]);
    check(b"data: \n\n", &[msg("")]);
    check(b"data:\r\ndata: \r\n\r\n", &[msg("\n")]);
    check(b"event: \ndata: x\n\n", &[msg("x")]);
    check(b"event:message\ndata: x\n\n", &[msg("x")]);
    check(b"event: messages\ndata: x\n\n", &[ev("messages", "x")]);
    check(b"event: add\nevent: message\ndata: x\n\n", &[msg("x")]);
    // Values with a colon, and lines longer than the short-line scan.
    check(b"id: a:b\ndata: x\n\n", &[ev_id("message", "x", "a:b")]);
    check(
        b"id: 0123456789abcdefghij\r\nevent: a-rather-long-event-type\r\ndata: x\r\n\r\n",
        &[Item::Event(Event {
            event: "a-rather-long-event-type".into(),
            data: "x".into(),
            id: Some("0123456789abcdefghij".into()),
            retry: None,
        })],
    );
    for len in 0..40 {
        let id = "7".repeat(len);
        let input = format!("id: {id}\ndata: x\n\n");
        let expected = if len == 0 { msg("x") } else { ev_id("message", "x", &id) };
        check(input.as_bytes(), &[expected]);
    }
    // Invalid UTF-8 in an id; an id equal to the current one.
    check(b"id: a\xFFb\ndata: x\n\n", &[ev_id("message", "x", "a\u{FFFD}b")]);
    check(
        b"id: 1\ndata: a\n\nid: 1\ndata: b\n\n",
        &[ev_id("message", "a", "1"), ev_id("message", "b", "1")],
    );
    // An id, then an unknown field and a comment, in one block.
    check(b"id: 5\nfoo: x\n: hi\ndata: d\n\n", &[comment(" hi"), ev_id("message", "d", "5")]);
    // The field grammar still applies after a fast-path line.
    check(b"data: a\ndata\ndata:b\n\n", &[msg("a\n\nb")]);
}

/// UTF-8 is validated for many lines at once; an invalid byte must still be
/// replaced in its own line only, wherever it is.
#[test]
fn invalid_utf8_among_valid_lines() {
    check(
        b"data: a\n\ndata: \xFF\n\nid: 9\ndata: c\xE2\x82\xAC\n\n: \xC3\n\ndata: e\n\n",
        &[
            msg("a"),
            msg("\u{FFFD}"),
            ev_id("message", "c\u{20AC}", "9"),
            comment(" \u{FFFD}"),
            ev_id("message", "e", "9"),
        ],
    );
    // Data read before a comment that comes first in the same block.
    check(b"data: \xE2\x82\xAC\n: \xFF\n\n", &[comment(" \u{FFFD}"), msg("\u{20AC}")]);
    // A code point cut by the end of a chunk (the splits of `check`).
    check("data: é€\nid: é\n\n".as_bytes(), &[ev_id("message", "é€", "é")]);
}

#[test]
fn data_lines() {
    check(b"data: a\ndata: b\ndata: c\n\n", &[msg("a\nb\nc")]);
    // Only the final LF is removed.
    check(b"data: a\ndata:\n\n", &[msg("a\n")]);
    check(b"data:\ndata:\n\n", &[msg("\n")]);
    check(b"data:\n\n", &[msg("")]);
    check(b"data: a\n\n\n\n\ndata: b\n\n", &[msg("a"), msg("b")]);
    check(b"data: {\"jsonrpc\":\"2.0\",\"id\":1}\n\n", &[msg(r#"{"jsonrpc":"2.0","id":1}"#)]);
}

#[test]
fn event_type() {
    check(b"event: add\ndata: x\n\n", &[ev("add", "x")]);
    check(b"event: add\nevent: remove\ndata: x\n\n", &[ev("remove", "x")]);
    // The type does not outlive its event.
    check(b"event: add\ndata: x\n\ndata: y\n\n", &[ev("add", "x"), msg("y")]);
    // An event type with no data dispatches nothing and is forgotten.
    check(b"event: add\n\ndata: y\n\n", &[msg("y")]);
    check(b"event:\ndata: x\n\n", &[msg("x")]);
    check(b"event: message\ndata: x\n\n", &[msg("x")]);
}

#[test]
fn last_event_id() {
    check(b"id: 1\ndata: a\n\n", &[ev_id("message", "a", "1")]);
    // It persists across events.
    check(
        b"id: 1\ndata: a\n\ndata: b\n\n",
        &[ev_id("message", "a", "1"), ev_id("message", "b", "1")],
    );
    // An empty id resets it, with or without a colon.
    check(b"id: 1\ndata: a\n\nid\ndata: b\n\n", &[ev_id("message", "a", "1"), msg("b")]);
    check(b"id: 1\ndata: a\n\nid:\ndata: b\n\n", &[ev_id("message", "a", "1"), msg("b")]);
    // An id with NUL is ignored.
    check(
        b"id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n",
        &[ev_id("message", "a", "1"), ev_id("message", "b", "1")],
    );
    // The fast path's search for the end of an id line stops at a NUL:
    // first byte, within the first 8 or 16 bytes, or past them (a CR right
    // after the NUL too).
    for id in [&b"\0"[..], b"a\0", b"0123456\0b", b"0123456789ab\0c", b"0123456789abcdefgh\0"] {
        let mut input = b"id: 1\ndata: a\n\nid: ".to_vec();
        input.extend_from_slice(id);
        input.extend_from_slice(b"\r\ndata: b\n\n");
        check(&input, &[ev_id("message", "a", "1"), ev_id("message", "b", "1")]);
    }
    // The last one in a block wins, wherever it is.
    check(b"data: a\nid: 1\nid: 2\n\n", &[ev_id("message", "a", "2")]);
    check(b"id: 1\nid: x\0\nid: 2\nid: y\0\ndata: a\n\n", &[ev_id("message", "a", "2")]);
    // Ids that change or stay over several events, some long.
    check(
        b"id: 1\ndata: a\n\ndata: b\n\nid: 0123456789abcdefghij\ndata: c\n\nid: 3\n\ndata: d\n\n",
        &[
            ev_id("message", "a", "1"),
            ev_id("message", "b", "1"),
            ev_id("message", "c", "0123456789abcdefghij"),
            no_data(Some("3"), None),
            ev_id("message", "d", "3"),
        ],
    );
    check(b"id:  spaced \ndata: a\n\n", &[ev_id("message", "a", " spaced ")]);
    // An id in an event that never ends does not take effect.
    check(b"id: 1\ndata: a\n\nid: 2\ndata: b\n", &[ev_id("message", "a", "1"), unfinished(12)]);
}

#[test]
fn empty_data_updates_the_id() {
    // MCP's priming event: an id and no data.
    check(b"id: 42\n\n", &[no_data(Some("42"), None)]);
    check(b"id: 42\ndata: x\n\n", &[ev_id("message", "x", "42")]);
    check(b"id: 1\n\ndata: x\n\n", &[no_data(Some("1"), None), ev_id("message", "x", "1")]);
    check(
        b"id: 1\n\nid\n\ndata: x\n\n",
        &[no_data(Some("1"), None), no_data(None, None), msg("x")],
    );
    check(b"retry: 3000\n\n", &[no_data(None, Some(3000))]);
    check(b"id: 7\nretry: 10\nevent: x\n\n", &[no_data(Some("7"), Some(10))]);
    // Blocks that change nothing leave no trace.
    check(b"event: x\n\n\n\nfoo\n\n", &[]);
    // An id with NUL is no id field.
    check(b"id: a\0\n\n", &[]);
}

#[test]
fn retry() {
    check(b"retry: 1500\ndata: a\n\n", &[ev_retry("a", 1500)]);
    check(b"retry: 0\ndata: a\n\n", &[ev_retry("a", 0)]);
    check(b"retry: 0012\ndata: a\n\n", &[ev_retry("a", 12)]);
    // Anything but ASCII digits is ignored.
    for bad in [
        "retry: 15x",
        "retry: -1",
        "retry: 1.5",
        "retry:  15",
        "retry: 15 ",
        "retry:",
        "retry",
        "retry: ١٢",
    ] {
        let input = format!("{bad}\ndata: a\n\n");
        check(input.as_bytes(), &[msg("a")]);
    }
    // Too large for u64: saturates.
    check(b"retry: 99999999999999999999999\n\n", &[no_data(None, Some(u64::MAX))]);
    // The retry field does not carry over to the next event.
    check(b"retry: 5\ndata: a\n\ndata: b\n\n", &[ev_retry("a", 5), msg("b")]);
}

#[test]
fn end_of_stream() {
    // An unfinished event is dropped and reported with its size.
    check(b"data: a\n", &[unfinished(7)]);
    check(b"data: a", &[unfinished(7)]);
    check(b"data: a\r", &[unfinished(7)]);
    check(b"data: a\n\ndata: b\ndata: c", &[msg("a"), unfinished(14)]);
    check(b"event: x\n", &[unfinished(8)]);
    check(b"data: a\n\n", &[msg("a")]);
    check(b"", &[]);
}

#[test]
fn bounded() {
    // Exactly at the limit is fine; one more byte is not.
    check_with(8, b"data: ab\n\n", &[msg("ab")]);
    check_with(8, b"data: abc\n\ndata: ok\n\n", &[too_large(8, b"abc"), msg("ok")]);
    // Lines add up: the event is skipped to its end, the next one is read.
    check_with(
        16,
        b"data: 0123456\ndata: 0123456\ndata: x\nid: 9\n\ndata: ok\n\n",
        &[too_large(16, b"0123456\n"), msg("ok")],
    );
    // An id before the overflow took effect; one after it did not.
    check_with(
        16,
        b"id: 1\ndata: 0123456789\nid: 2\n\ndata: ok\n\n",
        &[too_large(16, b"012345"), ev_id("message", "ok", "1")],
    );
    // Comment lines do not add up but each one is bounded.
    check_with(
        8,
        b":1234567\n:1234567\ndata: ok\n\n",
        &[comment("1234567"), comment("1234567"), msg("ok")],
    );
    check_with(8, b":12345678\ndata: ok\n\ndata: ok\n\n", &[too_large(8, b""), msg("ok")]);
    // An oversized event at the end of the stream is reported once.
    check_with(8, b"data: 0123456789", &[too_large(8, b"012")]);
    check_with(8, b"data: 0123456789\n", &[too_large(8, b"012")]);
    // A long line made only of line ends is fine.
    check_with(7, b"\n\n\n\n\n\n\n\n\n\ndata: x\n\n", &[msg("x")]);
}

#[test]
fn cr_at_chunk_end_dispatches_at_once() {
    let mut decoder = Decoder::new();
    let items: Vec<Item> = decoder.decode(b"data: a\r\r").collect();
    assert_eq!(items, [msg("a")]);
    // The LF that follows is the end of the same empty line, not another.
    let items: Vec<Item> = decoder.decode(b"\ndata: b\r").collect();
    assert_eq!(items, []);
    let items: Vec<Item> = decoder.decode(b"\n\r").collect();
    assert_eq!(items, [msg("b")]);
    let items: Vec<Item> = decoder.decode(b"\n").collect();
    assert_eq!(items, []);
    assert_eq!(decoder.finish_items().count(), 0);
}

#[test]
fn state_is_observable() {
    let mut decoder = Decoder::new();
    assert_eq!(decoder.last_event_id(), "");
    assert_eq!(decoder.retry(), None);
    decoder.feed(b"retry: 2500\n");
    assert_eq!(decoder.next_item(), None);
    // retry takes effect when its line is read.
    assert_eq!(decoder.retry(), Some(2500));
    decoder.feed(b"id: 9\n");
    assert_eq!(decoder.next_item(), None);
    // the id only when the block ends.
    assert_eq!(decoder.last_event_id(), "");
    decoder.feed(b"\n");
    assert_eq!(decoder.next_item(), Some(no_data(Some("9"), Some(2500))));
    assert_eq!(decoder.last_event_id(), "9");
}

#[test]
fn a_finished_decoder_reads_the_next_stream() {
    let mut decoder = Decoder::new();
    let items: Vec<Item> = decoder.decode(b"id: 1\ndata: a\n\nid: 2\ndata: cut").collect();
    assert_eq!(items, [ev_id("message", "a", "1")]);
    assert_eq!(decoder.finish_items().collect::<Vec<_>>(), [unfinished(14)]);
    // The id of the cut event never took effect; the last one persists.
    assert_eq!(decoder.last_event_id(), "1");
    // A new stream: its BOM is skipped, the id carries over.
    let mut items: Vec<Item> = decoder.decode(b"\xEF\xBB\xBFdata: b\n\n").collect();
    items.extend(decoder.finish_items());
    assert_eq!(items, [ev_id("message", "b", "1")]);
}

#[test]
fn set_last_event_id_continues_an_earlier_connection() {
    let mut decoder = Decoder::new();
    decoder.set_last_event_id("resume-7");
    let items: Vec<Item> = decoder.decode(b"data: x\n\n").collect();
    assert_eq!(items, [ev_id("message", "x", "resume-7")]);
}

#[test]
fn large_event_of_many_lines() {
    let line = "x".repeat(1000);
    let mut input = String::new();
    for _ in 0..2000 {
        input.push_str("data: ");
        input.push_str(&line);
        input.push_str("\r\n");
    }
    input.push_str("\r\n");
    let expected = vec![line.as_str(); 2000].join("\n");
    let bytes = input.as_bytes();
    for chunk in [1usize, 7, 4096, 65536, bytes.len()] {
        let items = decode_chunks(usize::MAX, bytes.chunks(chunk));
        assert_eq!(items, [msg(&expected)], "chunks of {chunk}");
    }
    // One byte under its size, it is skipped.
    let size = 2000 * 1006;
    let items = decode_chunks(size - 1, bytes.chunks(4096));
    assert_eq!(items, [too_large(size - 1, &expected.as_bytes()[..mcp_sse::sse::EVENT_HEAD_SIZE])]);
    let items = decode_chunks(size, bytes.chunks(4096));
    assert_eq!(items, [msg(&expected)]);
}

#[test]
fn a_long_unterminated_line_is_not_buffered_past_the_bound() {
    let mut decoder = Decoder::with_max_event_size(1024);
    decoder.feed(b"data: ");
    let mut items: Vec<Item> = Vec::new();
    for _ in 0..10_000 {
        items.extend(decoder.decode(&[b'x'; 100]));
    }
    assert_eq!(items, [too_large(1024, &[b'x'; 1024 + 1 - 6])]);
    items.clear();
    items.extend(decoder.decode(b"\n\ndata: next\n\n"));
    assert_eq!(items, [msg("next")]);
}

#[test]
fn errors_display() {
    assert_eq!(
        DecodeError::EventTooLarge { limit: 10, head: b"{}".to_vec() }.to_string(),
        "server-sent event larger than the 10-byte limit was skipped"
    );
    assert_eq!(
        DecodeError::UnfinishedEvent { discarded: 3 }.to_string(),
        "the event stream ended inside an event (3 bytes not dispatched)"
    );
}

#[test]
fn borrowed_data_comes_from_the_chunk_when_it_can() {
    // (data, whether it is lent from the chunk itself)
    let mut seen: Vec<(String, bool)> = Vec::new();
    let mut decoder = Decoder::new();
    let chunks: [&[u8]; 3] = [
        b"id: 1\nevent: progress\ndata: {\"a\":1}\n\ndata: x\ndata: y\n\ndata: sp",
        b"lit\n\ndata: w\n\ndata: \xFF\n\n",
        b"data: z\n\n",
    ];
    for chunk in chunks {
        let range = chunk.as_ptr_range();
        decoder.decode_with(chunk, |item| {
            let ItemRef::Event(event) = item else { panic!("{item:?}") };
            let in_chunk = match &event.data {
                Cow::Borrowed(s) => range.contains(&s.as_ptr()),
                Cow::Owned(_) => false,
            };
            if event.data == r#"{"a":1}"# {
                assert_eq!((event.event.as_ref(), event.id), ("progress", Some("1")));
                // The id of its own block is lent from the chunk too.
                assert!(event.id.is_some_and(|id| range.contains(&id.as_ptr())));
            }
            seen.push((event.data.into_owned(), in_chunk));
        });
    }
    assert_eq!(
        seen,
        [
            (r#"{"a":1}"#.to_owned(), true),
            // Several lines: lent from the decoder's buffer.
            ("x\ny".to_owned(), false),
            // A line split across chunks.
            ("split".to_owned(), false),
            // After the line that joined the decoder's: in place again.
            ("w".to_owned(), true),
            // Replacement needed.
            ("\u{FFFD}".to_owned(), false),
            ("z".to_owned(), true),
        ]
    );
    assert_eq!(decoder.last_event_id(), "1");
}

/// `decode` reads the chunk in place; an iterator that is forgotten rather
/// than dropped loses the unread rest of its chunk, but must leave nothing
/// in the decoder that still refers to that chunk.
#[test]
fn a_forgotten_iterator_leaves_the_decoder_consistent() {
    // Forgotten after an item read in the middle of a block: the block's
    // data and id so far stay in the decoder.
    let mut decoder = Decoder::new();
    let mut items = decoder.decode(b"id: 7\ndata: x\n: c\nlost");
    assert_eq!(items.next(), Some(comment(" c")));
    std::mem::forget(items);
    let items: Vec<Item> = decoder.decode(b"\n").collect();
    assert_eq!(items, [ev_id("message", "x", "7")]);
    assert_eq!(decoder.last_event_id(), "7");
    // Forgotten after an event: its id is the last event ID.
    let mut decoder = Decoder::new();
    let mut items = decoder.decode(b"id: 9\ndata: a\n\ndata: lost\n\n");
    assert_eq!(items.next(), Some(ev_id("message", "a", "9")));
    std::mem::forget(items);
    assert_eq!(decoder.last_event_id(), "9");
    let mut items: Vec<Item> = decoder.decode(b"data: b\n\n").collect();
    items.extend(decoder.finish_items());
    assert_eq!(items, [ev_id("message", "b", "9")]);
}

#[test]
fn a_panicking_callback_leaves_the_decoder_consistent() {
    let mut decoder = Decoder::new();
    let input = b"data: a\n\ndata: b\n\ndata: c";
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decoder.decode_with(input, |_| panic!("callback"));
    }));
    assert!(caught.is_err());
    // The first event was handed out; the rest of the chunk is kept.
    let mut items: Vec<Item> = decoder.decode(b"\n\n").collect();
    items.extend(decoder.finish_items());
    assert_eq!(items, [msg("b"), msg("c")]);
}

/// Every split of a stream, every line end: the error for an event over
/// the bound carries the start of that event's data (so that a client can
/// still read the id of an answer too large to take).
#[test]
fn an_oversized_event_reports_the_start_of_its_data() {
    let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{}\"}}", "y".repeat(300));
    for eol in ["\n", "\r\n", "\r"] {
        let stream = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}{eol}{eol}\
             id: 5{eol}event: message{eol}data:{big}{eol}{eol}\
             data: after{eol}{eol}"
        );
        // The bytes up to one past the bound: after `id: 5` and `event: message`.
        let head = &big.as_bytes()[..101 - 5 - 14 - "data:".len()];
        check_with(
            100,
            stream.as_bytes(),
            &[
                msg(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
                too_large(100, head),
                ev_id("message", "after", "5"),
            ],
        );
        // Over several data lines: the earlier lines, then the one that
        // went over.
        let stream = format!("data: {{\"id\":{eol}data: 8,{eol}data: {big}{eol}{eol}");
        let expected = format!("{{\"id\":\n8,\n{}", &big[..101 - 12 - 8 - 6]);
        check_with(100, stream.as_bytes(), &[too_large(100, expected.as_bytes())]);
    }
    // The head is bounded.
    let huge = format!("data: {}\n\n", "z".repeat(3 * mcp_sse::sse::EVENT_HEAD_SIZE));
    let items = decode_chunks(2 * mcp_sse::sse::EVENT_HEAD_SIZE, [huge.as_bytes()]);
    assert_eq!(
        items,
        [too_large(2 * mcp_sse::sse::EVENT_HEAD_SIZE, &[b'z'; mcp_sse::sse::EVENT_HEAD_SIZE])]
    );
}
