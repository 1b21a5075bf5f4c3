//! What a server core hands its driver: one queue of [`Outgoing`] items,
//! written by one writer so messages never interleave.

use mcp_proto::jsonrpc::{Message, RequestId};
use tokio::sync::mpsc;

/// One item a server core asks its driver to deliver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outgoing {
    /// A JSON-RPC message for the client (build it with
    /// [`Outgoing::message`]).
    #[non_exhaustive]
    Message {
        /// The message.
        message: Message,
        /// The client request this message belongs to: the request a reply
        /// answers, or the request during which a progress notification,
        /// log message or server-to-client request was made; `None` for
        /// messages that belong to no request. A Streamable HTTP driver
        /// routes on this: related messages go on that request's response
        /// stream, the others on the standalone GET stream. The reply
        /// itself is the response or error whose id equals `related`;
        /// nothing related to that request follows it.
        related: Option<RequestId>,
        /// Where the related request came in: a driver that serves several
        /// clients from one core (the stateless era over HTTP: one origin
        /// per POST) tells their requests apart by it, since two clients
        /// may use the same ids; 0 when the driver serves one.
        origin: u64,
    },
    /// Raw bytes to write as one line as they are (stdio only; an HTTP
    /// driver drops them). A hook for test servers that inject garbage
    /// into the stream: a product server never queues one.
    RawLine(Vec<u8>),
    /// Flush what is queued before it, then stop serving and report the
    /// exit code to the caller (a test server's crash on request). The
    /// driver returns; it never ends the process itself.
    Exit(i32),
}

impl Outgoing {
    /// A message related to `related` from `origin`.
    pub fn message(message: Message, related: Option<RequestId>, origin: u64) -> Self {
        Outgoing::Message { message, related, origin }
    }
}

/// The sending half of a core's queue.
pub type OutgoingSender = mpsc::UnboundedSender<Outgoing>;

/// The receiving half: the driver delivers each item in order.
pub type OutgoingQueue = mpsc::UnboundedReceiver<Outgoing>;

/// A new queue.
pub fn queue() -> (OutgoingSender, OutgoingQueue) {
    mpsc::unbounded_channel()
}
