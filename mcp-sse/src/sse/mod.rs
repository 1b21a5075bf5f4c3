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
//!
//! The code, by job: `decoder.rs` the decoder, its buffer and line
//! reading; `interpreter.rs` the fields and dispatch; `lines.rs` line
//! splitting and the field grammar; `text.rs` UTF-8; `item.rs` and
//! `error.rs` what comes out.

mod decoder;
mod error;
mod interpreter;
mod item;
mod lines;
mod text;

pub use decoder::{Decoder, Items};
pub use error::DecodeError;
pub use item::{Event, EventRef, Item, ItemRef};

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
