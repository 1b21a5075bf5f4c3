//! What a server core hands its driver: one queue of [`Outgoing`] items,
//! written by one writer so messages never interleave.

use mcp_proto::jsonrpc::{Message, RequestId};
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

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

/// The sending half of a core's queue: cloning shares it. Each item sent
/// is counted until the receiving half takes it, so a driver can tell how
/// much waits unwritten ([`OutgoingQueue::backlog`]) with one atomic load.
#[derive(Debug, Clone)]
pub struct OutgoingSender {
    tx: mpsc::UnboundedSender<Outgoing>,
    shared: Arc<Shared>,
}

/// What both halves of a queue share.
#[derive(Default)]
struct Shared {
    /// Items sent and not yet taken.
    queued: AtomicUsize,
    /// The driver's output, when it lets a sender write an item there
    /// itself ([`OutgoingSender::send_now`]).
    direct: OnceLock<Arc<dyn WriteNow>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("queued", &self.queued)
            .field("direct", &self.direct.get().is_some())
            .finish()
    }
}

/// A driver's output that a sender may write an item to from its own task
/// ([`OutgoingSender::send_now`]): the stdio driver's, with
/// [`stdio::serve_direct`](crate::stdio::serve_direct).
pub(crate) trait WriteNow: Send + Sync {
    /// Writes `item` (a message or a raw reply) now, unless something
    /// waits to be written before it (in the queue or the driver's
    /// buffer) or the driver has ended: then gives it back, unwritten. A
    /// line the output takes only in part is finished by the driver's
    /// task, before anything else.
    fn write_now(&self, item: Outgoing) -> Result<(), Outgoing>;

    /// [`write_now`](Self::write_now) for a raw reply whose result is
    /// borrowed: whether it was written (else nothing was, and it goes to
    /// the queue).
    fn write_raw_reply_now(&self, id: &RequestId, result: &RawValue) -> bool;
}

impl OutgoingSender {
    /// Queues `item`; gives it back when the receiving half is gone.
    pub fn send(&self, item: Outgoing) -> Result<(), mpsc::error::SendError<Outgoing>> {
        // Counted before it can be taken, so the count never goes below
        // what the queue holds (the receiver subtracts what it takes).
        self.shared.queued.fetch_add(1, Ordering::Relaxed);
        let sent = self.tx.send(item);
        if sent.is_err() {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Writes `item` to the driver's output from the calling task, with no
    /// hop to the driver's writer, when the driver allows it (the stdio
    /// driver's [`serve_direct`](crate::stdio::serve_direct)) and nothing
    /// waits to be written before it; otherwise queues it as
    /// [`send`](Self::send) does. Either way it goes out after everything
    /// sent before it and as one whole line, never inside another.
    pub fn send_now(&self, item: Outgoing) -> Result<(), mpsc::error::SendError<Outgoing>> {
        match self.shared.direct.get() {
            Some(direct) => match direct.write_now(item) {
                Ok(()) => Ok(()),
                Err(item) => self.send(item),
            },
            None => self.send(item),
        }
    }

    /// [`send_now`](Self::send_now) for a reply to `id` from `origin`
    /// whose result is JSON text that the caller keeps: copied only when
    /// it is queued, not when the calling task writes it.
    pub fn send_raw_reply_now(
        &self,
        id: RequestId,
        result: &RawValue,
        origin: u64,
    ) -> Result<(), mpsc::error::SendError<Outgoing>> {
        if let Some(direct) = self.shared.direct.get()
            && direct.write_raw_reply_now(&id, result)
        {
            return Ok(());
        }
        self.send(Outgoing::raw_reply(id, result.to_owned(), origin))
    }

    /// Whether the receiving half is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The receiving half: the driver delivers each item in order.
#[derive(Debug)]
pub struct OutgoingQueue {
    rx: mpsc::UnboundedReceiver<Outgoing>,
    shared: Arc<Shared>,
}

impl OutgoingQueue {
    /// The next item, waiting for one; `None` once every sender is gone
    /// and the queue is empty (or after [`close`](Self::close)).
    pub async fn recv(&mut self) -> Option<Outgoing> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next item if one is queued.
    pub fn try_recv(&mut self) -> Result<Outgoing, mpsc::error::TryRecvError> {
        let item = self.rx.try_recv()?;
        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        Ok(item)
    }

    /// Polls for the next item (see [`recv`](Self::recv)).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(_)) = &polled {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        }
        polled
    }

    /// Refuses further items; those queued can still be taken.
    pub fn close(&mut self) {
        self.rx.close();
    }

    /// How many items wait in the queue now.
    pub fn len(&self) -> usize {
        self.shared.queued.load(Ordering::Relaxed)
    }

    /// Whether no item waits in the queue now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A handle that reads [`len`](Self::len) from elsewhere: a driver's
    /// reader, while its writer owns the queue.
    pub fn backlog(&self) -> Backlog {
        Backlog { shared: self.shared.clone() }
    }

    /// Lets [`OutgoingSender::send_now`] write to `direct` from now on
    /// (once per queue: a queue has one driver). Whether it was set.
    pub(crate) fn write_now_to(&self, direct: Arc<dyn WriteNow>) -> bool {
        self.shared.direct.set(direct).is_ok()
    }
}

/// How many items wait in an [`OutgoingQueue`] (see
/// [`OutgoingQueue::backlog`]).
#[derive(Debug, Clone)]
pub struct Backlog {
    shared: Arc<Shared>,
}

impl Backlog {
    /// How many items wait in the queue now: at least what it holds, at
    /// most that plus the items being sent at this moment.
    pub fn len(&self) -> usize {
        self.shared.queued.load(Ordering::Relaxed)
    }

    /// Whether no item waits in the queue now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A new queue.
pub fn queue() -> (OutgoingSender, OutgoingQueue) {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared::default());
    (OutgoingSender { tx, shared: shared.clone() }, OutgoingQueue { rx, shared })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_count_follows_what_is_sent_and_taken() {
        let (tx, mut queue) = queue();
        let backlog = queue.backlog();
        assert!(queue.is_empty() && backlog.is_empty());
        let other = tx.clone();
        for code in 0..5 {
            tx.send(Outgoing::Exit(code)).unwrap();
        }
        other.send(Outgoing::RawLine(b"x".to_vec())).unwrap();
        assert_eq!((queue.len(), backlog.len()), (6, 6));
        assert_eq!(queue.try_recv().unwrap(), Outgoing::Exit(0));
        assert_eq!(queue.recv().await, Some(Outgoing::Exit(1)));
        let polled = std::future::poll_fn(|cx| Poll::Ready(queue.poll_recv(cx))).await;
        assert_eq!(polled, Poll::Ready(Some(Outgoing::Exit(2))));
        assert_eq!(backlog.len(), 3);
        // A poll with nothing queued takes nothing off the count.
        while queue.try_recv().is_ok() {}
        assert_eq!(backlog.len(), 0);
        let polled = std::future::poll_fn(|cx| Poll::Ready(queue.poll_recv(cx))).await;
        assert!(polled.is_pending());
        assert!(queue.try_recv().is_err());
        assert_eq!(backlog.len(), 0);
        // Sent to a closed queue: given back, not counted.
        queue.close();
        assert!(tx.send(Outgoing::Exit(9)).is_err());
        assert!(tx.is_closed());
        assert_eq!(backlog.len(), 0);
        drop(queue);
        assert!(other.send(Outgoing::Exit(9)).is_err());
        assert_eq!(backlog.len(), 0);
    }
}
