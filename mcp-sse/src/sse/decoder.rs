//! The decoder: its input buffer, the chunk read in place, and the line
//! reading (the fast path for the common lines, the general one for the
//! rest).

use super::interpreter::Interpreter;
use super::interpreter::shared_id;
use super::lines::{Head, find_line_end, find_short_line_end, line_head, line_rest};
use super::text::Utf8Cache;
use super::{BOM, DEFAULT_MAX_EVENT_SIZE, DecodeError, Item, ItemRef};

/// The incremental `text/event-stream` decoder. See the [module
/// documentation](super) for the rules it follows.
///
/// ```
/// use mcp_sse::sse::{Decoder, Item};
///
/// let mut decoder = Decoder::new();
/// decoder.feed(b"id: 7\r\ndata: {\"jsonrpc\":");
/// assert_eq!(decoder.next_item(), None); // the event is not complete yet
/// decoder.feed(b"\"2.0\"}\r\n\r");
/// let Some(Item::Event(event)) = decoder.next_item() else { panic!() };
/// assert_eq!(event.data, r#"{"jsonrpc":"2.0"}"#);
/// assert_eq!(event.id.as_deref(), Some("7"));
/// assert_eq!(decoder.last_event_id(), "7");
/// ```
#[derive(Debug, Clone)]
pub struct Decoder {
    /// Bytes fed and not yet consumed start at `pos`.
    buf: Vec<u8>,
    pub(super) pos: usize,
    /// No line end lies in `buf[pos..scan]`.
    pub(super) scan: usize,
    /// The byte-order mark question is still open (start of a stream).
    at_start: bool,
    /// The last line ended with a CR that was the last byte fed: an LF that
    /// comes next belongs to that line end.
    after_cr: bool,
    /// The beginning of the current line was discarded (while skipping).
    line_discarded: bool,
    /// [`Decoder::finish`] was called.
    eof: bool,
    interp: Interpreter,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder with the [`DEFAULT_MAX_EVENT_SIZE`] bound.
    pub fn new() -> Self {
        Decoder::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder that skips events (and comment lines) larger than
    /// `max_event_size` bytes, counting the field lines of the event without
    /// their line ends. `usize::MAX` means no bound.
    pub fn with_max_event_size(max_event_size: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            pos: 0,
            scan: 0,
            at_start: true,
            after_cr: false,
            line_discarded: false,
            eof: false,
            interp: Interpreter {
                data: Vec::new(),
                pending_data: None,
                dispatched: false,
                event_type: Vec::new(),
                id_buffer: String::new(),
                id_changed: false,
                pending_id: None,
                last_event_id: None,
                last_id: None,
                retry: None,
                block_id: false,
                block_retry: None,
                block_size: 0,
                skipping: false,
                max: max_event_size,
            },
        }
    }

    /// The maximum event size in force.
    pub fn max_event_size(&self) -> usize {
        self.interp.max
    }

    /// The last event ID: what a reconnecting client sends as
    /// `Last-Event-ID`. Empty when none was set or an empty `id` reset it.
    pub fn last_event_id(&self) -> &str {
        self.interp.last_event_id.as_deref().unwrap_or_default()
    }

    /// The reconnection time in milliseconds set by the latest valid `retry`
    /// field, if any. It takes effect as soon as the field is read, even
    /// when no event is dispatched afterwards.
    pub fn retry(&self) -> Option<u64> {
        self.interp.retry
    }

    /// Sets the last event ID, for a decoder that continues a stream from an
    /// earlier connection.
    pub fn set_last_event_id(&mut self, id: &str) {
        self.interp.settle();
        self.interp.last_event_id = shared_id(id);
        self.interp.id_buffer = id.to_owned();
        self.interp.id_changed = false;
        self.interp.pending_id = None;
        self.interp.last_id = None;
    }

    /// Appends a chunk of the stream. Call [`Decoder::next_item`] until it
    /// returns `None` before feeding more: the decoder keeps everything fed
    /// and not yet read.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            self.scan = 0;
        } else if self.pos >= self.buf.len() - self.pos {
            // At least half was read (with nothing read, `pos` is 0 and the
            // buffer is not empty: no move).
            self.buf.drain(..self.pos);
            self.scan -= self.pos;
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// Feeds a chunk and returns an iterator over the items now complete
    /// (the same items as [`Decoder::feed`] then [`Decoder::next_item`]
    /// until `None`, but faster: complete lines are read straight from
    /// `chunk`, and only what the iterator leaves unread, usually the start
    /// of a line, is copied into the decoder when it is dropped).
    pub fn decode<'a>(&'a mut self, chunk: &'a [u8]) -> Items<'a> {
        let mut start = 0;
        if self.pos < self.buf.len() && !self.eof {
            // The decoder holds the start of a line: complete it from the
            // chunk (with the LF of a CRLF), and read the rest in place.
            start = line_rest(chunk);
            self.feed(&chunk[..start]);
        }
        Items {
            decoder: self,
            chunk,
            cursor: Cursor { pos: start, scan: start },
            in_chunk: false,
            text: Utf8Cache::at(start),
        }
    }

    /// Marks the end of the stream. The following calls to
    /// [`Decoder::next_item`] return the items still complete in the input,
    /// then [`DecodeError::UnfinishedEvent`] if an event was cut short (its
    /// data is dropped, as the standard says), then `None`.
    ///
    /// After that the decoder is ready for a new stream (a reconnection): it
    /// keeps [`Decoder::last_event_id`] and [`Decoder::retry`] (the new
    /// stream's last event ID buffer starts from the last event ID, as
    /// browsers do), and starts everything else afresh, including the
    /// byte-order mark check.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// [`Decoder::finish`], then an iterator over the remaining items.
    pub fn finish_items(&mut self) -> Items<'_> {
        self.finish();
        Items {
            decoder: self,
            chunk: &[],
            cursor: Cursor { pos: 0, scan: 0 },
            in_chunk: false,
            text: Utf8Cache::none(),
        }
    }

    /// The next complete item, or `None` when more input is needed (or, after
    /// [`Decoder::finish`], when the stream is done).
    pub fn next_item(&mut self) -> Option<Item> {
        let found = self.next_found()?;
        Some(self.interp.owned(found, &self.buf, &mut Utf8Cache::none()))
    }

    /// The next item in the decoder's own input (its ranges are in
    /// `self.buf`), with the end of the stream after [`Decoder::finish`].
    fn next_found(&mut self) -> Option<Found> {
        let buf = std::mem::take(&mut self.buf);
        let mut cursor = Cursor { pos: self.pos, scan: self.scan };
        let found = self.scan_lines(&buf, &mut cursor, false, &mut Utf8Cache::none());
        self.buf = buf;
        self.pos = cursor.pos;
        self.scan = cursor.scan;
        if found.is_none() && self.eof {
            return self.end_of_stream();
        }
        found
    }

    /// Feeds a chunk and calls `each` with every item now complete, in
    /// order: the same items as [`Decoder::decode`], borrowed where that
    /// saves a copy (see [`ItemRef`]). An event whose single `data` line lies
    /// complete in `chunk` lends its data straight from `chunk`; data made of
    /// several lines, or of a line that began in an earlier chunk, is lent
    /// from the decoder's buffer; only data that needs U+FFFD replacements
    /// is copied. Nothing is allocated per event.
    ///
    /// ```
    /// use mcp_sse::sse::{Decoder, ItemRef};
    ///
    /// let mut decoder = Decoder::new();
    /// let mut seen = Vec::new();
    /// for chunk in [&b"id: 1\ndata: {\"jsonrpc\":\"2.0\"}\n\ndata: a\nda"[..], b"ta: b\n\n"] {
    ///     decoder.decode_with(chunk, |item| {
    ///         if let ItemRef::Event(event) = item {
    ///             // `event.data` is a `Cow<str>`: parse it in place.
    ///             seen.push((event.data.into_owned(), event.id.map(str::to_owned)));
    ///         }
    ///     });
    /// }
    /// assert_eq!(seen[0], (r#"{"jsonrpc":"2.0"}"#.to_owned(), Some("1".to_owned())));
    /// assert_eq!(seen[1], ("a\nb".to_owned(), Some("1".to_owned())));
    /// ```
    pub fn decode_with<F>(&mut self, chunk: &[u8], mut each: F)
    where
        F: FnMut(ItemRef<'_>),
    {
        let mut start = 0;
        if self.pos < self.buf.len() && !self.eof {
            start = line_rest(chunk);
            self.feed(&chunk[..start]);
        }
        // What the decoder holds comes first.
        while let Some(found) = self.next_found() {
            each(self.interp.borrowed(found, &self.buf, &mut Utf8Cache::none()));
            self.interp.settle();
        }
        if self.pos < self.buf.len() {
            // The decoder still holds the start of a line (or of a
            // byte-order mark): the chunk must join it.
            self.feed(&chunk[start..]);
            while let Some(found) = self.next_found() {
                each(self.interp.borrowed(found, &self.buf, &mut Utf8Cache::none()));
                self.interp.settle();
            }
            return;
        }
        // Then the chunk, in place; the guard keeps what is left of it.
        let mut rest = ChunkRest {
            decoder: self,
            chunk,
            cursor: Cursor { pos: start, scan: start },
            text: Utf8Cache::at(start),
        };
        while let Some(found) =
            rest.decoder.scan_lines(chunk, &mut rest.cursor, true, &mut rest.text)
        {
            each(rest.decoder.interp.borrowed(found, chunk, &mut rest.text));
            rest.decoder.interp.settle();
        }
    }

    /// Reads lines from `input` at `cursor` until one gives an item; `None`
    /// when the rest of `input` is not a complete line (or is being skipped).
    /// With `borrow`, `input` is the caller's chunk and a `data` value may be
    /// kept as a range of it.
    #[inline(always)]
    fn scan_lines<'c>(
        &mut self,
        input: &'c [u8],
        cursor: &mut Cursor,
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) -> Option<Found> {
        // The block of an event handed out by a callback that panicked.
        self.interp.settle();
        loop {
            if self.at_start {
                let avail = &input[cursor.pos..];
                if avail.len() < BOM.len() && BOM.starts_with(avail) && !self.eof {
                    return None;
                }
                if avail.starts_with(BOM) {
                    cursor.pos += BOM.len();
                }
                self.at_start = false;
                cursor.scan = cursor.pos;
            }
            if self.after_cr {
                if cursor.pos == input.len() {
                    return None;
                }
                if input[cursor.pos] == b'\n' {
                    cursor.pos += 1;
                }
                self.after_cr = false;
                cursor.scan = cursor.pos;
            }
            if cursor.scan == cursor.pos && !self.interp.skipping && !self.line_discarded {
                match self.fast_lines(input, cursor, borrow, text) {
                    Fast::Found(found) => return Some(found),
                    Fast::Read => continue,
                    Fast::Slow => {}
                }
            }
            match find_line_end(&input[cursor.scan..]) {
                Some(i) => {
                    let start = cursor.pos;
                    let end = cursor.scan + i;
                    let mut next = end + 1;
                    if input[end] == b'\r' {
                        if next < input.len() {
                            if input[next] == b'\n' {
                                next += 1;
                            }
                        } else {
                            self.after_cr = true;
                        }
                    }
                    cursor.pos = next;
                    cursor.scan = next;
                    let continued = std::mem::take(&mut self.line_discarded);
                    if let Some(found) =
                        self.interp.line(input, start, end, continued, borrow, text)
                    {
                        return Some(found);
                    }
                }
                None => {
                    cursor.scan = input.len();
                    let partial = input.len() - cursor.pos;
                    let mut item = None;
                    if partial > 0 {
                        if !self.interp.skipping
                            && self.interp.over_limit(partial, input[cursor.pos] == b':')
                        {
                            item = self.interp.start_skipping(
                                input,
                                &input[cursor.pos..],
                                self.interp.block_size,
                            );
                        }
                        if self.interp.skipping {
                            // The start of this line is not needed.
                            cursor.pos = input.len();
                            cursor.scan = cursor.pos;
                            self.line_discarded = true;
                        }
                    }
                    return item;
                }
            }
        }
    }

    /// The common lines, read without the general line splitting and field
    /// grammar: empty lines, and complete `data`, `id` and `event` lines
    /// whose name is followed by its colon, one after the other until one
    /// gives an item ([`Fast::Found`]) or a line is something else
    /// ([`Fast::Slow`]: the general path reads that line; nothing of it was
    /// read). Only called at the start of a line that is not being skipped,
    /// and whose end has not been looked for yet.
    #[inline]
    fn fast_lines<'c>(
        &mut self,
        input: &'c [u8],
        cursor: &mut Cursor,
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) -> Fast {
        loop {
            let start = cursor.pos;
            let Some((head, value)) = line_head(&input[start..]) else {
                return Fast::Slow;
            };
            let value = start + value;
            let found = match head {
                Head::Empty => {
                    // An empty line: it dispatches.
                    let mut next = start + 1;
                    if input[start] == b'\r' {
                        match input.get(next) {
                            Some(b'\n') => next += 1,
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    cursor.pos = next;
                    cursor.scan = next;
                    match self.interp.dispatch(input, borrow, text) {
                        Some(found) => return Fast::Found(found),
                        None => continue,
                    }
                }
                // Data values are long, ids and event types short.
                Head::Data => find_line_end(&input[value..]),
                Head::Id => find_short_line_end::<true>(&input[value..]),
                Head::Event => find_short_line_end::<false>(&input[value..]),
            };
            let Some(i) = found else {
                // No line end from `start` on: the general path takes the
                // rest.
                cursor.scan = input.len();
                return Fast::Slow;
            };
            let end = value + i;
            let mut next = end + 1;
            match input[end] {
                b'\n' => {}
                b'\r' => match input.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                },
                // A NUL in an `id` value (the only search that stops at
                // one): the general path reads the line.
                _ => return Fast::Slow,
            }
            cursor.pos = next;
            cursor.scan = next;
            let interp = &mut self.interp;
            interp.block_size += end - start;
            if interp.block_size > interp.max {
                return match interp.start_skipping(
                    input,
                    &input[start..end],
                    interp.block_size - (end - start),
                ) {
                    Some(found) => Fast::Found(found),
                    None => Fast::Read,
                };
            }
            match head {
                Head::Data => interp.data_value(input, value, end, borrow),
                // No NUL in the value: the search would have stopped there.
                Head::Id => interp.id_value(input, value, end, borrow, text),
                Head::Event => interp.event_value(&input[value..end]),
                Head::Empty => {}
            }
        }
    }

    /// The end of a stream after every complete line was read: report an
    /// unfinished event and start afresh.
    fn end_of_stream(&mut self) -> Option<Found> {
        // A partial comment line at the end is not part of an event.
        let partial = match self.buf.get(self.pos) {
            Some(b':') | None => 0,
            Some(_) => self.buf.len() - self.pos,
        };
        let report = self.interp.end_of_stream(partial);
        self.buf.clear();
        self.pos = 0;
        self.scan = 0;
        self.at_start = true;
        self.after_cr = false;
        self.line_discarded = false;
        self.eof = false;
        report
    }
}

/// The end of [`Decoder::decode_with`]'s reading of a chunk in place (also
/// when the callback panics): a `data` value still borrowed from the chunk
/// and the unread rest of the chunk are copied into the decoder.
struct ChunkRest<'d, 'c> {
    decoder: &'d mut Decoder,
    chunk: &'c [u8],
    cursor: Cursor,
    /// What of `chunk` is known to be UTF-8.
    text: Utf8Cache<'c>,
}

impl Drop for ChunkRest<'_, '_> {
    fn drop(&mut self) {
        self.decoder.interp.settle();
        self.decoder.interp.keep_pending(self.chunk);
        self.decoder.interp.keep_last_id(self.chunk, &mut self.text);
        self.decoder.interp.keep_pending_id(self.chunk);
        if self.cursor.pos < self.chunk.len() {
            self.decoder.feed(&self.chunk[self.cursor.pos..]);
        }
    }
}

/// What a line (or the end of the stream) gave, before it is made an
/// [`Item`] or an [`ItemRef`]. Ranges are in the input the line was read
/// from.
#[derive(Debug)]
pub(super) enum Found {
    /// An event; its data, type and id are in the interpreter until
    /// [`Interpreter::settle`].
    Event {
        retry: Option<u64>,
    },
    NoData {
        retry: Option<u64>,
    },
    Comment {
        start: usize,
        end: usize,
    },
    Error(DecodeError),
}

/// The fields the standard gives a meaning to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Name {
    Data,
    Event,
    Id,
    Retry,
}

/// A read position in some input: lines start at `pos`, and no line end lies
/// in `pos..scan`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor {
    pub(super) pos: usize,
    pub(super) scan: usize,
}

/// What [`Decoder::fast_lines`] did.
#[derive(Debug)]
pub(super) enum Fast {
    /// It read lines, the last of which gave this.
    Found(Found),
    /// It read lines, none of which gave anything, and stopped (the event
    /// went over the bound).
    Read,
    /// It read the lines before the current one (if any), which gave
    /// nothing; the general path must read the current one.
    Slow,
}

/// The items complete in a [`Decoder`]'s input: see [`Decoder::decode`].
/// Dropping it early loses nothing: the unread input stays in the decoder.
#[derive(Debug)]
pub struct Items<'a> {
    decoder: &'a mut Decoder,
    /// The chunk being decoded; what the decoder held is read first.
    chunk: &'a [u8],
    cursor: Cursor,
    /// Reading `chunk` in place (the decoder's own input is used up).
    in_chunk: bool,
    /// What of `chunk` is known to be UTF-8.
    text: Utf8Cache<'a>,
}

impl Iterator for Items<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        if !self.in_chunk {
            if let Some(item) = self.decoder.next_item() {
                return Some(item);
            }
            if self.decoder.pos < self.decoder.buf.len() {
                // The decoder still holds the start of a line (or of a
                // byte-order mark): the chunk must join it.
                self.decoder.feed(&self.chunk[self.cursor.pos..]);
                self.cursor = Cursor { pos: self.chunk.len(), scan: self.chunk.len() };
                return self.decoder.next_item();
            }
            self.in_chunk = true;
        }
        let found = self.decoder.scan_lines(self.chunk, &mut self.cursor, true, &mut self.text);
        // Nothing stays borrowed from the chunk past this call (the iterator
        // may be forgotten rather than dropped): an event's data is taken
        // by `owned`, anything else is copied now.
        let interp = &mut self.decoder.interp;
        interp.keep_last_id(self.chunk, &mut self.text);
        if !matches!(found, Some(Found::Event { .. })) {
            interp.keep_pending(self.chunk);
            interp.keep_pending_id(self.chunk);
        }
        Some(interp.owned(found?, self.chunk, &mut self.text))
    }
}

impl Drop for Items<'_> {
    fn drop(&mut self) {
        if self.cursor.pos < self.chunk.len() {
            self.decoder.feed(&self.chunk[self.cursor.pos..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::{KEEP_CAPACITY, MOVE_OUT_THRESHOLD};

    /// A stream whose chunks never end at a line end: what was read is
    /// dropped from the buffer as the decoder goes, so it holds about one
    /// line however long the stream runs.
    #[test]
    fn the_buffer_stays_small_when_chunks_end_mid_line() {
        let mut decoder = Decoder::new();
        decoder.feed(b"data: par");
        let mut most = 0;
        for _ in 0..10_000 {
            decoder.feed(b"tial\n\ndata: par");
            match decoder.next_item() {
                Some(Item::Event(event)) => assert_eq!(event.data, "partial"),
                other => panic!("{other:?}"),
            }
            assert_eq!(decoder.next_item(), None);
            most = most.max(decoder.buf.len());
        }
        assert!(most < 64, "the buffer held {most} bytes");
    }

    /// After an event over the bound, the data buffer is kept for the next
    /// event while it is small, and released once it grew past 64 KiB.
    #[test]
    fn an_oversized_event_releases_only_a_large_buffer() {
        for (max, kept) in [(8 * 1024, true), (1024 * 1024, false)] {
            let mut decoder = Decoder::with_max_event_size(max);
            let line = format!("data: {}\n", "x".repeat(999));
            decoder.feed(line.repeat(max / 1000 + 2).as_bytes());
            decoder.feed(b"\n");
            let mut items = std::iter::from_fn(|| decoder.next_item());
            assert!(matches!(items.next(), Some(Item::Error(DecodeError::EventTooLarge { .. }))));
            assert_eq!(items.next(), None);
            assert_eq!(decoder.interp.data.capacity() > 0, kept, "bound {max}");
        }
    }

    /// The documented default bound.
    #[test]
    fn the_default_bound_is_16_mib() {
        assert_eq!(Decoder::new().max_event_size(), 16 << 20);
    }

    /// A data buffer of exactly the kept capacity is kept after an
    /// oversized event ("more capacity than this is released").
    #[test]
    fn a_buffer_of_exactly_the_kept_capacity_is_kept() {
        let mut decoder = Decoder::with_max_event_size(1024);
        decoder.interp.data = Vec::with_capacity(KEEP_CAPACITY);
        assert_eq!(decoder.interp.data.capacity(), KEEP_CAPACITY);
        decoder
            .feed(format!("data: {}\ndata: {}\n\n", "x".repeat(600), "y".repeat(600)).as_bytes());
        assert!(matches!(
            decoder.next_item(),
            Some(Item::Error(DecodeError::EventTooLarge { .. }))
        ));
        assert_eq!(decoder.interp.data.capacity(), KEEP_CAPACITY);
    }

    /// The data of a long event is moved out of the decoder (no copy); a
    /// short one is copied, and the buffer keeps its capacity.
    #[test]
    fn long_data_is_moved_out_and_short_data_copied() {
        let mut decoder = Decoder::new();
        let long = "z".repeat(MOVE_OUT_THRESHOLD / 2);
        decoder.feed(format!("data: {long}\ndata: {long}\n\n").as_bytes());
        let Some(Item::Event(event)) = decoder.next_item() else { panic!() };
        assert_eq!(event.data.len(), MOVE_OUT_THRESHOLD + 1);
        assert_eq!(decoder.interp.data.capacity(), 0);
        decoder.feed(b"data: a\ndata: b\n\n");
        let Some(Item::Event(event)) = decoder.next_item() else { panic!() };
        assert_eq!(event.data, "a\nb");
        assert!(decoder.interp.data.capacity() > 0);
    }

    /// `decode` copies into the decoder only what completes the line it
    /// held and what is left unread at the end; the lines in between are
    /// read in place.
    #[test]
    fn decode_copies_only_the_held_line_and_the_unread_end() {
        let data = |item: Option<Item>| match item {
            Some(Item::Event(event)) => event.data,
            other => panic!("{other:?}"),
        };
        // Nothing held: nothing is copied while the chunk has lines.
        let mut decoder = Decoder::new();
        let mut items = decoder.decode(b"data: a\n\ndata: b\n\nda");
        assert_eq!(data(items.next()), "a");
        assert!(items.decoder.buf.is_empty());
        assert_eq!(data(items.next()), "b");
        assert_eq!(items.next(), None);
        drop(items);
        assert_eq!(&decoder.buf[..], b"da");
        let mut decoder = Decoder::new();
        decoder.feed(b"data: sp");
        assert_eq!(decoder.next_item(), None);
        let mut items = decoder.decode(b"lit\n\ndata: w\n\ndata: par");
        assert_eq!(data(items.next()), "split");
        // The held line was completed (with its line end), nothing more.
        assert_eq!(&items.decoder.buf[..], b"data: split\n");
        assert!(items.in_chunk);
        assert_eq!(data(items.next()), "w");
        assert_eq!(items.next(), None);
        drop(items);
        assert_eq!((decoder.pos, &decoder.buf[..]), (0, &b"data: par"[..]));
    }

    /// `feed` moves the unread input to the front of the buffer only once
    /// at least half of the buffer was read, so that each byte is moved
    /// about once.
    #[test]
    fn feed_compacts_once_half_the_buffer_was_read() {
        let mut decoder = Decoder::new();
        decoder.feed(b"ab\ncdef");
        assert_eq!(decoder.next_item(), None);
        assert_eq!(decoder.pos, 3);
        decoder.feed(b"g");
        assert_eq!((decoder.pos, &decoder.buf[..]), (3, &b"ab\ncdefg"[..]));
        let mut decoder = Decoder::new();
        decoder.feed(b"abcd\nefg");
        assert_eq!(decoder.next_item(), None);
        decoder.feed(b"h");
        assert_eq!((decoder.pos, &decoder.buf[..]), (0, &b"efgh"[..]));
    }

    /// What was read is consumed at once: a byte-order mark as soon as it
    /// is complete, a line end in view whole with the line it ends, so that
    /// `pos` is where the next line starts when an item is handed out.
    #[test]
    fn what_was_read_is_consumed_at_once() {
        let mut decoder = Decoder::new();
        decoder.feed(BOM);
        assert_eq!(decoder.next_item(), None);
        assert_eq!((decoder.pos, decoder.at_start), (3, false));
        // A comment (the general reader) ended by a CRLF.
        let mut decoder = Decoder::new();
        decoder.feed(b": c\r\ndata");
        assert_eq!(decoder.next_item(), Some(Item::Comment(" c".to_owned())));
        assert_eq!((decoder.pos, decoder.after_cr), (5, false));
        // An event dispatched by a blank line (the fast path), then another
        // blank line: LF, then CRLF.
        for (stream, pos) in [(&b"data: a\n\n\n"[..], 9), (b"data: a\r\n\r\n\r\n", 11)] {
            let mut decoder = Decoder::new();
            decoder.feed(stream);
            assert!(matches!(decoder.next_item(), Some(Item::Event(_))));
            assert_eq!((decoder.pos, decoder.after_cr), (pos, false), "{stream:?}");
        }
    }
}
