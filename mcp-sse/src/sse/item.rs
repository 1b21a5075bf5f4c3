//! What the decoder hands out: owned ([`Item`]) and borrowed ([`ItemRef`]).

use std::borrow::Cow;
use std::sync::Arc;

use super::DecodeError;
#[cfg(doc)]
use super::Decoder;

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
