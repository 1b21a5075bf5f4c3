//! What a server core hands its driver: one queue of [`Outgoing`] items,
//! written by one writer so messages never interleave.

use mcp_proto::jsonrpc::{Message, RequestId};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

/// One item a server core asks its driver to deliver.
#[derive(Debug, Clone)]
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
    /// A successful reply whose result is JSON text, written as it is
    /// (see [`Reply::LaterRaw`](crate::Reply::LaterRaw)): the reply to
    /// `id` from `origin`, related to that request. Drivers encode it with
    /// [`Outgoing::raw_reply_bytes`].
    #[non_exhaustive]
    RawReply {
        /// The request answered.
        id: RequestId,
        /// The result's JSON text.
        result: Box<RawValue>,
        /// Where the request came in (see [`Outgoing::Message`]).
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

impl PartialEq for Outgoing {
    fn eq(&self, other: &Self) -> bool {
        use Outgoing::{Exit, Message, RawLine, RawReply};
        match (self, other) {
            (
                Message { message, related, origin },
                Message { message: m, related: r, origin: o },
            ) => (message, related, origin) == (m, r, o),
            (RawReply { id, result, origin }, RawReply { id: i, result: r, origin: o }) => {
                (id, result.get(), origin) == (i, r.get(), o)
            }
            (RawLine(a), RawLine(b)) => a == b,
            (Exit(a), Exit(b)) => a == b,
            _ => false,
        }
    }
}

impl Outgoing {
    /// A message related to `related` from `origin`.
    pub fn message(message: Message, related: Option<RequestId>, origin: u64) -> Self {
        Outgoing::Message { message, related, origin }
    }

    /// A reply to `id` from `origin` whose result is JSON text.
    pub fn raw_reply(id: RequestId, result: Box<RawValue>, origin: u64) -> Self {
        Outgoing::RawReply { id, result, origin }
    }

    /// Appends the JSON text of a message or a raw reply to `out` as one
    /// line's text (no line ending), as a driver writes it: `Ok(false)`,
    /// nothing appended, for the other items.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> serde_json::Result<bool> {
        match self {
            Outgoing::Message { message, .. } => serde_json::to_writer(&mut *out, message)?,
            Outgoing::RawReply { id, result, .. } => Outgoing::raw_reply_bytes(id, result, out),
            Outgoing::RawLine(_) | Outgoing::Exit(_) => return Ok(false),
        }
        Ok(true)
    }

    /// Appends the JSON-RPC response of a [`Outgoing::RawReply`] to `out`
    /// as one line's text (no line ending): the result's text as it is,
    /// except that line breaks between its tokens (a pretty-printed
    /// result) become spaces.
    pub fn raw_reply_bytes(id: &RequestId, result: &RawValue, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        // Writing an id to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, id);
        out.extend_from_slice(br#","result":"#);
        let start = out.len();
        out.extend_from_slice(result.get().as_bytes());
        mcp_proto::jsonrpc::make_one_line(&mut out[start..]);
        out.push(b'}');
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
