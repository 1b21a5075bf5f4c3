//! The field interpretation: the data, event type and id buffers, the
//! bound, and dispatch.

use std::borrow::Cow;
use std::sync::Arc;

use super::decoder::{Found, Name};
use super::lines::field;
use super::text::{Utf8Cache, into_string, lossy, lossy_cow};
use super::{
    DecodeError, EVENT_HEAD_SIZE, Event, EventRef, Item, ItemRef, KEEP_CAPACITY, MOVE_OUT_THRESHOLD,
};

/// The field interpretation, apart from line splitting (so that a line can
/// be borrowed from the input buffer while this is mutated).
#[derive(Debug, Clone)]
pub(super) struct Interpreter {
    pub(super) data: Vec<u8>,
    /// The value of the block's only `data` line so far, when it was read in
    /// place from the caller's chunk by [`Decoder::decode_with`]: a range of
    /// that chunk, standing for `data` (which is then empty). Copied into
    /// `data` when a second `data` line comes or the chunk ends.
    pub(super) pending_data: Option<(usize, usize)>,
    /// An event was handed out and its block is still to be reset (after the
    /// caller's callback returned, or at the next line if it panicked).
    pub(super) dispatched: bool,
    /// The event type buffer; empty for `message`, which it never holds.
    pub(super) event_type: Vec<u8>,
    /// Meaningful only with `id_changed`: otherwise the last event ID buffer
    /// is `last_event_id` (or `last_id`, or `pending_id`).
    pub(super) id_buffer: String,
    /// `id_buffer` was set since the last dispatch (it may differ from
    /// `last_event_id`).
    pub(super) id_changed: bool,
    /// The last event ID buffer, when the block's last `id` line was read in
    /// place by [`Decoder::decode_with`]: a range of the caller's chunk
    /// (valid until the chunk ends, when it is copied into `id_buffer`).
    pub(super) pending_id: Option<(usize, usize)>,
    /// The last event ID; `None` when it is empty. Shared with the owned
    /// items that carry it.
    pub(super) last_event_id: Option<Arc<str>>,
    /// The last event ID, when the `id` line that set it was read in place
    /// from the caller's chunk: a range of that chunk, valid UTF-8
    /// (`last_event_id` is stale then). Copied into `last_event_id` when the
    /// chunk ends, and before an owned item is made.
    pub(super) last_id: Option<(usize, usize)>,
    pub(super) retry: Option<u64>,
    pub(super) block_id: bool,
    pub(super) block_retry: Option<u64>,
    /// Bytes of field lines in the current block.
    pub(super) block_size: usize,
    pub(super) skipping: bool,
    pub(super) max: usize,
}

impl Interpreter {
    /// The line `input[start..end]`. With `borrow`, a `data` value may be
    /// kept as a range of `input` (see `pending_data`).
    pub(super) fn line<'c>(
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
    pub(super) fn field<'c>(
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
    pub(super) fn data_value(&mut self, input: &[u8], start: usize, end: usize, borrow: bool) {
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
    pub(super) fn event_value(&mut self, value: &[u8]) {
        self.event_type.clear();
        // `message` is what an empty event type stands for too.
        if value != b"message" {
            self.event_type.extend_from_slice(value);
        }
    }

    /// An `id` field with the value `input[start..end]`, which holds no NUL.
    #[inline(always)]
    pub(super) fn id_value<'c>(
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
    pub(super) fn keep_pending_id(&mut self, input: &[u8]) {
        if let Some((start, end)) = self.pending_id.take() {
            self.id_buffer.clear();
            self.id_buffer.push_str(&lossy_cow(&input[start..end]));
            self.id_changed = true;
        }
    }

    /// Copies a last event ID left in `input` into `last_event_id`.
    #[inline]
    pub(super) fn keep_last_id<'c>(&mut self, input: &'c [u8], text: &mut Utf8Cache<'c>) {
        if let Some((start, end)) = self.last_id.take() {
            self.last_event_id = shared_id(&text.get(input, start, end));
        }
    }

    /// Copies a `data` value borrowed from `input` into the data buffer.
    pub(super) fn keep_pending(&mut self, input: &[u8]) {
        if let Some((start, end)) = self.pending_data.take() {
            self.data.extend_from_slice(&input[start..end]);
            self.data.push(b'\n');
        }
    }

    /// Resets the block of an event handed out.
    pub(super) fn settle(&mut self) {
        if self.dispatched {
            self.dispatched = false;
            self.reset_block();
        }
    }

    /// Whether a partial line of `len` bytes already exceeds the bound.
    pub(super) fn over_limit(&self, len: usize, comment: bool) -> bool {
        let before = if comment { 0 } else { self.block_size };
        before.saturating_add(len) > self.max
    }

    /// Drops the event being read, which went over the bound with `line`
    /// (a line of `input`, maybe partial, after `before` bytes of the
    /// event's lines); reports it with the start of its data. Of `line`,
    /// only the bytes up to one past the bound count, which every way of
    /// cutting the input into chunks has read, so the head does not
    /// depend on the cutting.
    pub(super) fn start_skipping(
        &mut self,
        input: &[u8],
        line: &[u8],
        before: usize,
    ) -> Option<Found> {
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

    pub(super) fn reset_block(&mut self) {
        self.data.clear();
        self.pending_data = None;
        self.event_type.clear();
        self.block_id = false;
        self.block_retry = None;
        self.block_size = 0;
        self.skipping = false;
    }

    pub(super) fn current_id(&self) -> Option<Arc<str>> {
        self.last_event_id.clone()
    }

    /// The last event ID, for a borrowed item read from `input`.
    #[inline(always)]
    pub(super) fn id_ref<'b, 'c: 'b>(
        &'b self,
        input: &'c [u8],
        text: &mut Utf8Cache<'c>,
    ) -> Option<&'b str> {
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
    pub(super) fn dispatch<'c>(
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
    pub(super) fn event_type(&self) -> Cow<'_, str> {
        if self.event_type.is_empty() {
            Cow::Borrowed("message")
        } else {
            lossy_cow(&self.event_type)
        }
    }

    /// `found`, read from `input`, as an owned item.
    pub(super) fn owned<'c>(
        &mut self,
        found: Found,
        input: &'c [u8],
        text: &mut Utf8Cache<'c>,
    ) -> Item {
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
    pub(super) fn borrowed<'b, 'c: 'b>(
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

    pub(super) fn end_of_stream(&mut self, partial: usize) -> Option<Found> {
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

/// A last event ID as the decoder keeps it: `None` when empty.
pub(super) fn shared_id(id: &str) -> Option<Arc<str>> {
    (!id.is_empty()).then(|| Arc::from(id))
}
