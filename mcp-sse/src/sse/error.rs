//! Input the decoder dropped.

use std::fmt;

#[cfg(doc)]
use super::EVENT_HEAD_SIZE;

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
