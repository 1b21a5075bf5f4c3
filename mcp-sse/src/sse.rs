//! An incremental `text/event-stream` decoder.
//!
//! This is the "Interpreting an event stream" part of the WHATWG HTML
//! standard ("Server-sent events"), with no I/O: [`Decoder::feed`] takes the
//! bytes of a response body in chunks of any size, and [`Decoder::next_item`]
//! hands out what they mean ([`Item`]). The same input gives the same items
//! however it is split into chunks.
//!
//! How the standard is read here:
//!
//! - The stream is UTF-8, decoded with replacement: invalid bytes become
//!   U+FFFD and never stop the stream. One byte-order mark at the very start
//!   of the stream is skipped.
//! - A line ends with CRLF, LF or a lone CR. A CR that ends one chunk and an
//!   LF that starts the next are one line end; the line the CR ended is
//!   interpreted at once, without waiting for the next chunk.
//! - A line starting with `:` is a comment ([`Item::Comment`], useful as a
//!   keep-alive signal). Otherwise the line is a field: the name up to the
//!   first `:`, the value after it with one leading space removed; a line with
//!   no `:` is a field with an empty value. Unknown fields are ignored.
//! - `data` appends its value and an LF to the data buffer; `event` sets the
//!   event type; `id` sets the last event ID buffer unless the value contains
//!   NUL; `retry` sets the reconnection time if the value is only ASCII
//!   digits (the [`Decoder::retry`] value changes at once).
//! - An empty line dispatches: the last event ID buffer becomes the last event
//!   ID ([`Decoder::last_event_id`]); if the data buffer is empty nothing is
//!   dispatched (the decoder reports [`Item::NoData`] when that block carried
//!   an `id` or `retry`, which is what an MCP priming event is); otherwise the
//!   final LF is removed and an [`Event`] comes out, of type `message` unless
//!   an `event` field said otherwise.
//! - At the end of the stream ([`Decoder::finish`]) an unfinished event is
//!   dropped, as the standard says, and reported as
//!   [`DecodeError::UnfinishedEvent`].
//!
//! One addition the standard leaves to implementations: a bound. An event
//! whose lines add up to more than the maximum event size
//! ([`Decoder::with_max_event_size`], [`DEFAULT_MAX_EVENT_SIZE`] by default)
//! is reported as [`DecodeError::EventTooLarge`] and its remaining lines are
//! skipped up to the empty line that ends it; the stream goes on after that.
//! The decoder never holds more than about that many bytes of one event.
//!
//! How it reads (none of this changes what comes out): [`Decoder::decode`]
//! and [`Decoder::decode_with`] read the complete lines of a chunk in place.
//! The empty line and `data:`, `id:` and `event:` lines (the name and its
//! colon) are recognised by their first eight bytes, and read one after
//! the other until one gives an item; every other line goes through the
//! general line splitting and field grammar. The UTF-8 of the lines read in
//! place is checked once for the rest of the chunk, on first need, instead
//! of line by line; a line with invalid UTF-8 is still replaced on its own.
//! A `data` value and the last event ID are kept as ranges of the chunk
//! where they can be: `decode_with` lends them from the chunk until it
//! ends; `decode` copies an event's data once, from the chunk into the
//! event, and copies anything else still in the chunk before each item is
//! handed out (so that nothing refers to the chunk between calls).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use memchr::{memchr2, memchr3};
use nom::IResult;
use nom::Parser;
use nom::bytes::complete::{tag, take_till};
use nom::combinator::{opt, rest};
use nom::sequence::preceded;

/// The maximum event size of [`Decoder::new`]: 16 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// How much of an event's data [`DecodeError::EventTooLarge`] keeps.
pub const EVENT_HEAD_SIZE: usize = 4096;

/// Data buffers at least this long are moved out of the decoder when their
/// event is dispatched; shorter ones are copied so that the buffer keeps its
/// capacity for the next event.
const MOVE_OUT_THRESHOLD: usize = 4096;

/// After an oversized event, a data buffer with more capacity than this is
/// released rather than kept for the next event.
const KEEP_CAPACITY: usize = 64 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// The event type: the last `event` field of the block, or `message`
    /// (borrowed then, so the common case allocates nothing).
    pub event: Cow<'static, str>,
    /// The `data` lines joined with LF.
    pub data: String,
    /// The last event ID when the event was dispatched (it persists from
    /// earlier events); `None` when it is empty. Shared with the decoder and
    /// the other events that carry it, so handing it out copies nothing.
    pub id: Option<Arc<str>>,
    /// The reconnection time, in milliseconds, set by a `retry` field of this
    /// event's block, if any.
    pub retry: Option<u64>,
}

/// What the decoder found in the stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Item {
    /// A dispatched event.
    Event(Event),
    /// A block that ended with an empty data buffer, so no event was
    /// dispatched, but that carried an `id` field (the last event ID was
    /// updated: MCP's priming event) or a `retry` field. Blocks with neither
    /// leave no trace.
    NoData {
        /// The last event ID after the block; `None` when it is empty (an
        /// empty `id` field resets it).
        id: Option<Arc<str>>,
        /// The reconnection time, in milliseconds, set by the block, if any.
        retry: Option<u64>,
    },
    /// A comment line: the text after the `:`, verbatim (invalid UTF-8
    /// replaced). Servers send these as keep-alives.
    Comment(String),
    /// Something was dropped; the stream goes on.
    Error(DecodeError),
}

/// One dispatched event, borrowed: see [`Decoder::decode_with`]. The same
/// fields as [`Event`], each lent rather than owned when it can be.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventRef<'a> {
    /// The event type (`message` unless an `event` field said otherwise).
    pub event: Cow<'a, str>,
    /// The `data` lines joined with LF: borrowed from the caller's chunk when
    /// the event's single `data` line lies complete in it, otherwise from the
    /// decoder's buffer; owned only when invalid UTF-8 was replaced.
    pub data: Cow<'a, str>,
    /// The last event ID when the event was dispatched; `None` when empty.
    pub id: Option<&'a str>,
    /// The reconnection time set by a `retry` field of this event's block.
    pub retry: Option<u64>,
}

/// What the decoder found in the stream, borrowed: the items of
/// [`Decoder::decode_with`], one for one the same as the [`Item`]s of
/// [`Decoder::decode`] ([`ItemRef::into_owned`] turns one into the other).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemRef<'a> {
    /// A dispatched event.
    Event(EventRef<'a>),
    /// See [`Item::NoData`].
    NoData {
        /// The last event ID after the block; `None` when it is empty.
        id: Option<&'a str>,
        /// The reconnection time, in milliseconds, set by the block, if any.
        retry: Option<u64>,
    },
    /// A comment line: the text after the `:` (invalid UTF-8 replaced).
    Comment(Cow<'a, str>),
    /// Something was dropped; the stream goes on.
    Error(DecodeError),
}

impl ItemRef<'_> {
    /// The owned [`Item`] with the same content.
    pub fn into_owned(self) -> Item {
        match self {
            ItemRef::Event(e) => Item::Event(Event {
                event: match e.event {
                    Cow::Borrowed("message") => Cow::Borrowed("message"),
                    other => Cow::Owned(other.into_owned()),
                },
                data: e.data.into_owned(),
                id: e.id.map(Arc::from),
                retry: e.retry,
            }),
            ItemRef::NoData { id, retry } => Item::NoData { id: id.map(Arc::from), retry },
            ItemRef::Comment(text) => Item::Comment(text.into_owned()),
            ItemRef::Error(e) => Item::Error(e),
        }
    }
}

/// Input the decoder dropped. Neither stops the stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// An event (or a comment line) went over the maximum event size. Its
    /// lines up to the empty line that ends it are skipped.
    EventTooLarge {
        /// The maximum event size in force, in bytes.
        limit: usize,
        /// The start of the event's data as read when it went over: its
        /// `data` values so far joined by line feeds, the line being read
        /// included, at most [`EVENT_HEAD_SIZE`] bytes (empty for a comment
        /// line). Enough, for example, to read the `id` of a JSON-RPC answer
        /// that was too large, and fail its request with the cause.
        head: Vec<u8>,
    },
    /// The stream ended in the middle of an event, which is therefore not
    /// dispatched.
    UnfinishedEvent {
        /// How many bytes of field lines were discarded (line ends not
        /// counted).
        discarded: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::EventTooLarge { limit, .. } => {
                write!(f, "server-sent event larger than the {limit}-byte limit was skipped")
            }
            DecodeError::UnfinishedEvent { discarded } => write!(
                f,
                "the event stream ended inside an event ({discarded} bytes not dispatched)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The incremental `text/event-stream` decoder. See the [module
/// documentation](self) for the rules it follows.
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
    pos: usize,
    /// No line end lies in `buf[pos..scan]`.
    scan: usize,
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

/// The field interpretation, apart from line splitting (so that a line can
/// be borrowed from the input buffer while this is mutated).
#[derive(Debug, Clone)]
struct Interpreter {
    data: Vec<u8>,
    /// The value of the block's only `data` line so far, when it was read in
    /// place from the caller's chunk by [`Decoder::decode_with`]: a range of
    /// that chunk, standing for `data` (which is then empty). Copied into
    /// `data` when a second `data` line comes or the chunk ends.
    pending_data: Option<(usize, usize)>,
    /// An event was handed out and its block is still to be reset (after the
    /// caller's callback returned, or at the next line if it panicked).
    dispatched: bool,
    /// The event type buffer; empty for `message`, which it never holds.
    event_type: Vec<u8>,
    /// Meaningful only with `id_changed`: otherwise the last event ID buffer
    /// is `last_event_id` (or `last_id`, or `pending_id`).
    id_buffer: String,
    /// `id_buffer` was set since the last dispatch (it may differ from
    /// `last_event_id`).
    id_changed: bool,
    /// The last event ID buffer, when the block's last `id` line was read in
    /// place by [`Decoder::decode_with`]: a range of the caller's chunk
    /// (valid until the chunk ends, when it is copied into `id_buffer`).
    pending_id: Option<(usize, usize)>,
    /// The last event ID; `None` when it is empty. Shared with the owned
    /// items that carry it.
    last_event_id: Option<Arc<str>>,
    /// The last event ID, when the `id` line that set it was read in place
    /// from the caller's chunk: a range of that chunk, valid UTF-8
    /// (`last_event_id` is stale then). Copied into `last_event_id` when the
    /// chunk ends, and before an owned item is made.
    last_id: Option<(usize, usize)>,
    retry: Option<u64>,
    block_id: bool,
    block_retry: Option<u64>,
    /// Bytes of field lines in the current block.
    block_size: usize,
    skipping: bool,
    max: usize,
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

/// How much of `chunk` completes a line the decoder holds the start of: up
/// to and including its first line end (with the LF of a CRLF).
fn line_rest(chunk: &[u8]) -> usize {
    match memchr2(b'\n', b'\r', chunk) {
        Some(i) if chunk[i] == b'\r' && chunk.get(i + 1) == Some(&b'\n') => i + 2,
        Some(i) => i + 1,
        None => chunk.len(),
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
enum Found {
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
enum Name {
    Data,
    Event,
    Id,
    Retry,
}

/// A read position in some input: lines start at `pos`, and no line end lies
/// in `pos..scan`.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    pos: usize,
    scan: usize,
}

/// What [`Decoder::fast_lines`] did.
#[derive(Debug)]
enum Fast {
    /// It read lines, the last of which gave this.
    Found(Found),
    /// It read lines, none of which gave anything, and stopped (the event
    /// went over the bound).
    Read,
    /// It read the lines before the current one (if any), which gave
    /// nothing; the general path must read the current one.
    Slow,
}

/// A line [`Decoder::fast_lines`] reads.
#[derive(Debug, Clone, Copy)]
enum Head {
    Empty,
    Data,
    Id,
    Event,
}

/// What line `rest` starts with, for [`Decoder::fast_lines`], and where the
/// value starts (after the name, the colon and one optional space); `None`
/// for any other line, or when the chunk ends before the value's first
/// byte.
#[inline(always)]
fn line_head(rest: &[u8]) -> Option<(Head, usize)> {
    if let Some(head) = rest.first_chunk::<8>() {
        // The name, its colon and the byte after: all in the first eight.
        let word = u64::from_le_bytes(*head);
        let space = |at: u32| usize::from((word >> (8 * at)) as u8 == b' ');
        const DATA: u64 = u64::from_le_bytes(*b"data:\0\0\0");
        const ID: u64 = u64::from_le_bytes(*b"id:\0\0\0\0\0");
        const EVENT: u64 = u64::from_le_bytes(*b"event:\0\0");
        return match head[0] {
            b'\n' | b'\r' => Some((Head::Empty, 0)),
            b'd' if word & 0xFF_FFFF_FFFF == DATA => Some((Head::Data, 5 + space(5))),
            b'i' if word & 0xFF_FFFF == ID => Some((Head::Id, 3 + space(3))),
            b'e' if word & 0xFFFF_FFFF_FFFF == EVENT => Some((Head::Event, 6 + space(6))),
            _ => None,
        };
    }
    let (head, mut value) = match rest {
        [b'\n' | b'\r', ..] => return Some((Head::Empty, 0)),
        [b'd', b'a', b't', b'a', b':', ..] => (Head::Data, 5),
        [b'i', b'd', b':', ..] => (Head::Id, 3),
        [b'e', b'v', b'e', b'n', b't', b':', ..] => (Head::Event, 6),
        _ => return None,
    };
    match rest.get(value) {
        Some(b' ') => value += 1,
        Some(_) => {}
        // The line may go on in the next chunk.
        None => return None,
    }
    Some((head, value))
}

/// The first CR or LF (with `NUL`, the first CR, LF or NUL) in a haystack
/// where it is expected within a few bytes: eight bytes at a time for the
/// first 16, then memchr.
#[inline(always)]
fn find_short_line_end<const NUL: bool>(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut at = 0;
    while at < 16 {
        let Some(word) = hay.get(at..at + 8) else { break };
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        // The high bit of each byte that is LF (`lf` is zero there), CR or
        // NUL; bits above the first such byte may be wrong, the lowest is
        // right.
        let lf = word ^ (ONES * u64::from(b'\n'));
        let cr = word ^ (ONES * u64::from(b'\r'));
        let mut hits = lf.wrapping_sub(ONES) & !lf | cr.wrapping_sub(ONES) & !cr;
        if NUL {
            hits |= word.wrapping_sub(ONES) & !word;
        }
        let hits = hits & HIGH;
        if hits != 0 {
            return Some(at + (hits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = &hay[at..];
    let found = if NUL { memchr3(b'\n', b'\r', 0, tail) } else { find_line_end(tail) };
    found.map(|i| at + i)
}

/// The first CR or LF: memchr's vector search. (A byte-by-byte look at the
/// first 16 bytes before it, for every line, measured slower: about 80
/// more instructions per line under callgrind. [`Decoder::fast_lines`]
/// uses it for `data` values, and [`find_short_line_end`] for the short
/// ones.)
#[inline(always)]
fn find_line_end(hay: &[u8]) -> Option<usize> {
    memchr2(b'\n', b'\r', hay)
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

/// A field line: the name up to the first colon, and the value after it
/// with one leading space removed (empty when there is no colon).
fn field(line: &[u8]) -> IResult<&[u8], (&[u8], &[u8]), ()> {
    (take_till(|b| b == b':'), opt(preceded(tag(&b":"[..]), preceded(opt(tag(&b" "[..])), rest))))
        .map(|(name, value): (&[u8], Option<&[u8]>)| (name, value.unwrap_or_default()))
        .parse(line)
}

/// A last event ID as the decoder keeps it: `None` when empty.
fn shared_id(id: &str) -> Option<Arc<str>> {
    (!id.is_empty()).then(|| Arc::from(id))
}

/// UTF-8 with replacement; valid input (the common case) takes the fast
/// validation path.
fn lossy(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn into_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => lossy(e.as_bytes()),
    }
}

/// What of an input is known to be UTF-8: the lines read in place from a
/// chunk are validated together, on first need, rather than each on its own
/// (much of the cost of validating a short line is the call).
///
/// `input[start..start + text.len()]` is `text`; after it lies an invalid
/// sequence or the incomplete last code point of the input, up to `checked`,
/// from which on nothing was looked at.
#[derive(Debug, Clone, Copy)]
struct Utf8Cache<'a> {
    start: usize,
    text: &'a str,
    checked: usize,
}

impl<'a> Utf8Cache<'a> {
    /// Nothing known; validation, when needed, starts at `start`.
    fn at(start: usize) -> Self {
        Utf8Cache { start, text: "", checked: start }
    }

    /// Every range validated on its own.
    fn none() -> Self {
        Utf8Cache { start: 0, text: "", checked: usize::MAX }
    }

    /// `input[start..end]` (a line or part of one) as text, with U+FFFD
    /// replacements: `input` must be the same every call.
    #[inline]
    fn get(&mut self, input: &'a [u8], start: usize, end: usize) -> Cow<'a, str> {
        // A range from `checked` on was not looked at. (A range that starts
        // before it and ends past `text` spans an invalid sequence or the
        // incomplete end: it is replaced on its own below.)
        if start >= self.checked {
            self.validate(input);
        }
        if start >= self.start
            && let Some(text) = self.text.get(start - self.start..end - self.start)
        {
            return Cow::Borrowed(text);
        }
        lossy_cow(&input[start..end])
    }

    /// Validates `input` from where the last look ended.
    #[inline(never)]
    fn validate(&mut self, input: &'a [u8]) {
        let from = self.checked;
        let (text, bad) = match std::str::from_utf8(&input[from..]) {
            Ok(text) => (text, 0),
            Err(e) => {
                let valid = &input[from..from + e.valid_up_to()];
                // Valid by the error; a second look, without `unsafe`.
                let text = std::str::from_utf8(valid).unwrap_or_default();
                let bad = e.error_len().unwrap_or(input.len() - from - text.len());
                (text, bad)
            }
        };
        self.start = from;
        self.text = text;
        self.checked = from + text.len() + bad.max(1);
    }
}

/// UTF-8 with replacement, borrowed when valid (`str::from_utf8` first:
/// `String::from_utf8_lossy` validates valid input several times slower).
fn lossy_cow(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
    }
}

impl Interpreter {
    /// The line `input[start..end]`. With `borrow`, a `data` value may be
    /// kept as a range of `input` (see `pending_data`).
    fn line<'c>(
        &mut self,
        input: &'c [u8],
        start: usize,
        end: usize,
        continued: bool,
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) -> Option<Found> {
        let line = &input[start..end];
        if line.is_empty() && !continued {
            return self.dispatch(input, borrow, text);
        }
        if self.skipping {
            return None;
        }
        if line[0] == b':' {
            if line.len() > self.max {
                return self.start_skipping(input, line, 0);
            }
            return Some(Found::Comment { start: start + 1, end });
        }
        self.block_size += line.len();
        if self.block_size > self.max {
            return self.start_skipping(input, line, self.block_size - line.len());
        }
        let (name, value) = match field(line) {
            Ok((_, name_value)) => name_value,
            Err(_) => (line, &[][..]),
        };
        let name = match name {
            b"data" => Name::Data,
            b"event" => Name::Event,
            b"id" => Name::Id,
            b"retry" => Name::Retry,
            _ => return None,
        };
        // The value is the end of the line.
        self.field(name, input, end - value.len(), end, borrow, text);
        None
    }

    /// The field `name` with the value `input[start..end]` (a field line
    /// that fits the bound).
    #[inline(always)]
    fn field<'c>(
        &mut self,
        name: Name,
        input: &'c [u8],
        start: usize,
        end: usize,
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) {
        let value = &input[start..end];
        match name {
            Name::Data => self.data_value(input, start, end, borrow),
            Name::Event => self.event_value(value),
            Name::Id if value.iter().all(|&b| b != 0) => {
                self.id_value(input, start, end, borrow, text);
            }
            Name::Retry if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Base ten; a value too large for u64 saturates.
                let ms = value
                    .iter()
                    .fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')));
                self.retry = Some(ms);
                self.block_retry = Some(ms);
            }
            Name::Id | Name::Retry => {}
        }
    }

    /// A `data` field with the value `input[start..end]`.
    #[inline(always)]
    fn data_value(&mut self, input: &[u8], start: usize, end: usize, borrow: bool) {
        if borrow && self.data.is_empty() && self.pending_data.is_none() {
            self.pending_data = Some((start, end));
        } else {
            self.keep_pending(input);
            self.data.extend_from_slice(&input[start..end]);
            self.data.push(b'\n');
        }
    }

    /// An `event` field with the value `value`.
    #[inline(always)]
    fn event_value(&mut self, value: &[u8]) {
        self.event_type.clear();
        // `message` is what an empty event type stands for too.
        if value != b"message" {
            self.event_type.extend_from_slice(value);
        }
    }

    /// An `id` field with the value `input[start..end]`, which holds no NUL.
    #[inline(always)]
    fn id_value<'c>(
        &mut self,
        input: &'c [u8],
        start: usize,
        end: usize,
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) {
        if borrow {
            self.pending_id = Some((start, end));
        } else {
            self.pending_id = None;
            self.id_buffer.clear();
            self.id_buffer.push_str(&text.get(input, start, end));
            self.id_changed = true;
        }
        self.block_id = true;
    }

    /// Copies an `id` value borrowed from `input` into the id buffer.
    fn keep_pending_id(&mut self, input: &[u8]) {
        if let Some((start, end)) = self.pending_id.take() {
            self.id_buffer.clear();
            self.id_buffer.push_str(&lossy_cow(&input[start..end]));
            self.id_changed = true;
        }
    }

    /// Copies a last event ID left in `input` into `last_event_id`.
    #[inline]
    fn keep_last_id<'c>(&mut self, input: &'c [u8], text: &mut Utf8Cache<'c>) {
        if let Some((start, end)) = self.last_id.take() {
            self.last_event_id = shared_id(&text.get(input, start, end));
        }
    }

    /// Copies a `data` value borrowed from `input` into the data buffer.
    fn keep_pending(&mut self, input: &[u8]) {
        if let Some((start, end)) = self.pending_data.take() {
            self.data.extend_from_slice(&input[start..end]);
            self.data.push(b'\n');
        }
    }

    /// Resets the block of an event handed out.
    fn settle(&mut self) {
        if self.dispatched {
            self.dispatched = false;
            self.reset_block();
        }
    }

    /// Whether a partial line of `len` bytes already exceeds the bound.
    fn over_limit(&self, len: usize, comment: bool) -> bool {
        let before = if comment { 0 } else { self.block_size };
        before.saturating_add(len) > self.max
    }

    /// Drops the event being read, which went over the bound with `line`
    /// (a line of `input`, maybe partial, after `before` bytes of the
    /// event's lines); reports it with the start of its data. Of `line`,
    /// only the bytes up to one past the bound count, which every way of
    /// cutting the input into chunks has read, so the head does not
    /// depend on the cutting.
    fn start_skipping(&mut self, input: &[u8], line: &[u8], before: usize) -> Option<Found> {
        if self.skipping {
            return None;
        }
        let mut head = Vec::new();
        let keep = |bytes: &[u8], head: &mut Vec<u8>| {
            let room = EVENT_HEAD_SIZE - head.len();
            head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        };
        match self.pending_data {
            Some((start, end)) => {
                keep(&input[start..end], &mut head);
                keep(b"\n", &mut head);
            }
            None => keep(&self.data, &mut head),
        }
        let line = &line[..line.len().min(self.max.saturating_sub(before).saturating_add(1))];
        if let Ok((_, (b"data", value))) = field(line) {
            keep(value, &mut head);
        }
        self.skipping = true;
        self.pending_data = None;
        self.data.clear();
        if self.data.capacity() > KEEP_CAPACITY {
            self.data = Vec::new();
        }
        self.event_type.clear();
        Some(Found::Error(DecodeError::EventTooLarge { limit: self.max, head }))
    }

    fn reset_block(&mut self) {
        self.data.clear();
        self.pending_data = None;
        self.event_type.clear();
        self.block_id = false;
        self.block_retry = None;
        self.block_size = 0;
        self.skipping = false;
    }

    fn current_id(&self) -> Option<Arc<str>> {
        self.last_event_id.clone()
    }

    /// The last event ID, for a borrowed item read from `input`.
    #[inline(always)]
    fn id_ref<'b, 'c: 'b>(&'b self, input: &'c [u8], text: &mut Utf8Cache<'c>) -> Option<&'b str> {
        let id = match self.last_id {
            // Valid UTF-8, as `dispatch` found: borrowed.
            Some((start, end)) => match text.get(input, start, end) {
                Cow::Borrowed(id) => id,
                // Not reached: the same bytes were valid then.
                Cow::Owned(_) => "",
            },
            None => self.last_event_id.as_deref().unwrap_or_default(),
        };
        (!id.is_empty()).then_some(id)
    }

    /// An empty line. For an event, its data (without the final LF), type
    /// and id stay here until [`Interpreter::settle`].
    /// With `borrow`, `input` is the caller's chunk, and the last event ID
    /// may be left there (see `last_id`).
    #[inline(always)]
    fn dispatch<'c>(
        &mut self,
        input: &'c [u8],
        borrow: bool,
        text: &mut Utf8Cache<'c>,
    ) -> Option<Found> {
        // Usually a new id; at worst an equal one is copied.
        if let Some((start, end)) = self.pending_id.take() {
            self.id_changed = false;
            match text.get(input, start, end) {
                Cow::Borrowed(_) if borrow => self.last_id = Some((start, end)),
                id => {
                    self.last_id = None;
                    self.last_event_id = shared_id(&id);
                }
            }
        } else if self.id_changed {
            self.id_changed = false;
            self.last_id = None;
            self.last_event_id = shared_id(&self.id_buffer);
        }
        if self.skipping {
            self.reset_block();
            return None;
        }
        let retry = self.block_retry;
        if self.data.is_empty() && self.pending_data.is_none() {
            let block_id = self.block_id;
            self.reset_block();
            return (block_id || retry.is_some()).then_some(Found::NoData { retry });
        }
        if self.pending_data.is_none() {
            self.data.pop();
        }
        self.dispatched = true;
        Some(Found::Event { retry })
    }

    #[inline(always)]
    fn event_type(&self) -> Cow<'_, str> {
        if self.event_type.is_empty() {
            Cow::Borrowed("message")
        } else {
            lossy_cow(&self.event_type)
        }
    }

    /// `found`, read from `input`, as an owned item.
    fn owned<'c>(&mut self, found: Found, input: &'c [u8], text: &mut Utf8Cache<'c>) -> Item {
        match found {
            Found::Event { retry } => {
                let data = match self.pending_data {
                    Some((start, end)) => text.get(input, start, end).into_owned(),
                    None if self.data.len() >= MOVE_OUT_THRESHOLD => {
                        into_string(std::mem::take(&mut self.data))
                    }
                    None => lossy(&self.data),
                };
                let event = if self.event_type.is_empty() {
                    Cow::Borrowed("message")
                } else {
                    Cow::Owned(lossy(&self.event_type))
                };
                let id = self.current_id();
                self.settle();
                Item::Event(Event { event, data, id, retry })
            }
            Found::NoData { retry } => Item::NoData { id: self.current_id(), retry },
            Found::Comment { start, end } => {
                Item::Comment(text.get(input, start, end).into_owned())
            }
            Found::Error(e) => Item::Error(e),
        }
    }

    /// `found`, read from `input`, as a borrowed item. An event's block is
    /// reset by the [`Interpreter::settle`] that follows.
    #[inline(always)]
    fn borrowed<'b, 'c: 'b>(
        &'b self,
        found: Found,
        input: &'c [u8],
        text: &mut Utf8Cache<'c>,
    ) -> ItemRef<'b> {
        match found {
            Found::Event { retry } => {
                let data = match self.pending_data {
                    Some((start, end)) => text.get(input, start, end),
                    None => lossy_cow(&self.data),
                };
                ItemRef::Event(EventRef {
                    event: self.event_type(),
                    data,
                    id: self.id_ref(input, text),
                    retry,
                })
            }
            Found::NoData { retry } => ItemRef::NoData { id: self.id_ref(input, text), retry },
            Found::Comment { start, end } => ItemRef::Comment(text.get(input, start, end)),
            Found::Error(e) => ItemRef::Error(e),
        }
    }

    fn end_of_stream(&mut self, partial: usize) -> Option<Found> {
        self.settle();
        let discarded = self.block_size + partial;
        let report = (!self.skipping && discarded > 0)
            .then_some(Found::Error(DecodeError::UnfinishedEvent { discarded }));
        self.reset_block();
        // An `id` read in the unfinished event never took effect. The next
        // stream starts from the last event ID (as browsers do), so an event
        // without `id` after a reconnection keeps it.
        self.id_buffer.clear();
        self.id_buffer.push_str(self.last_event_id.as_deref().unwrap_or_default());
        self.id_changed = false;
        self.pending_id = None;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// What completes a held line: up to its first line end, with the LF
    /// of a CRLF.
    #[test]
    fn line_rest_takes_one_line_end() {
        for (chunk, rest) in [
            (&b"ab\ncd"[..], 3),
            (b"ab\r\ncd", 4),
            (b"ab\rcd", 3),
            (b"ab\r", 3),
            (b"ab\n\ncd", 3),
            (b"ab\r\r\n", 3),
            (b"abc", 3),
            (b"", 0),
        ] {
            assert_eq!(line_rest(chunk), rest, "{chunk:?}");
        }
    }

    /// The lines the fast path reads, with where their value starts, and
    /// some it leaves to the general reader; eight bytes and more (one
    /// word) and fewer.
    #[test]
    fn line_head_recognises_the_common_lines() {
        let head = |line: &[u8]| line_head(line).map(|(head, at)| (format!("{head:?}"), at));
        let some = |head: &str, at: usize| Some((head.to_owned(), at));
        for (line, want) in [
            (&b"data: {\"a\":1}\n"[..], some("Data", 6)),
            (b"data:{\"a\":1}\n", some("Data", 5)),
            (b"id: 12345\n", some("Id", 4)),
            (b"id:12345\n", some("Id", 3)),
            (b"event: message\n", some("Event", 7)),
            (b"event:message\n", some("Event", 6)),
            (b"\ndata: x\n", some("Empty", 0)),
            (b"\r\ndata: x\n", some("Empty", 0)),
            (b"data x\n\n\n", None),
            (b"datum: 12\n", None),
            (b"retry: 1000\n", None),
            (b": comment\n", None),
            // Short: the line may go on in the next chunk.
            (b"data:x\n", some("Data", 5)),
            (b"data: \n", some("Data", 6)),
            (b"data:", None),
            (b"id: 1\n", some("Id", 4)),
            (b"id:\n", some("Id", 3)),
            (b"event:x", some("Event", 6)),
            (b"\n", some("Empty", 0)),
            (b"\r", some("Empty", 0)),
            (b"dat", None),
            (b"retry:", None),
        ] {
            assert_eq!(head(line), want, "{:?}", String::from_utf8_lossy(line));
        }
    }

    /// The first CR or LF (and NUL when asked) within the first word, the
    /// second, and past them.
    #[test]
    fn find_short_line_end_finds_the_first_end() {
        for (hay, lf_cr, with_nul) in [
            (&b"\nabc"[..], Some(0), Some(0)),
            (b"ab\rc\n", Some(2), Some(2)),
            (b"abcdefg\n", Some(7), Some(7)),
            (b"abcdefghij\r\n", Some(10), Some(10)),
            (b"abc\0def\n", Some(7), Some(3)),
            (b"abcdefghijk\0mn\r", Some(14), Some(11)),
            (b"abcdefghijklmnopqrs\n", Some(19), Some(19)),
            (b"abcdefghijklmnopq\0s\n", Some(19), Some(17)),
            (b"abcdefghijklmnopqrstuvwxyz", None, None),
            (b"", None, None),
        ] {
            assert_eq!(find_short_line_end::<false>(hay), lf_cr, "{hay:?}");
            assert_eq!(find_short_line_end::<true>(hay), with_nul, "{hay:?}");
        }
    }

    /// A chunk is validated from the first range asked for to its end in one
    /// look, up to an invalid sequence; a range over that sequence is
    /// replaced on its own, and the look goes on after it.
    #[test]
    fn utf8_cache_validates_each_byte_once() {
        // An invalid byte at 5, an incomplete code point at 11.
        let input = b"ab\ncd\xFFef\ngh\xE2\x82";
        let mut cache = Utf8Cache::at(0);
        assert_eq!(cache.get(input, 0, 2), Cow::Borrowed("ab"));
        assert_eq!((cache.start, cache.text, cache.checked), (0, "ab\ncd", 6));
        assert_eq!(cache.get(input, 3, 5), Cow::Borrowed("cd"));
        let replaced: Cow<'_, str> = Cow::Owned("cd\u{FFFD}e".to_owned());
        assert_eq!(cache.get(input, 3, 7), replaced);
        assert_eq!(cache.checked, 6);
        assert_eq!(cache.get(input, 6, 8), Cow::Borrowed("ef"));
        assert_eq!((cache.start, cache.text, cache.checked), (6, "ef\ngh", input.len()));
        assert_eq!(cache.get(input, 9, 11), Cow::Borrowed("gh"));
        assert_eq!(cache.get(input, 9, 13), Cow::<str>::Owned("gh\u{FFFD}".to_owned()));
        // Valid to the end: nothing is left to look at.
        let mut cache = Utf8Cache::at(2);
        assert_eq!(cache.get(b"x\nab\n", 2, 4), Cow::Borrowed("ab"));
        assert_eq!((cache.start, cache.text, cache.checked), (2, "ab\n", 6));
    }
}
