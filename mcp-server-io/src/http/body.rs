//! The response body: a fixed buffer, or an event stream fed through a
//! channel that can end cleanly (the sender is dropped) or be cut (an
//! [`BodyItem::Abort`], which makes hyper drop the connection without the
//! final chunk).
//!
//! An event stream's channel is bounded by count: its queue (a `VecDeque`
//! behind a mutex, one allocation with the count and the body's waker)
//! holds the events not yet taken by hyper, which takes them as the socket
//! takes bytes, and the sender refuses one more at its cap
//! ([`Refused::Full`]): a client that does not read its stream cannot make
//! the server queue without bound.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// One item on an event-stream body's channel.
#[derive(Debug)]
pub enum BodyItem {
    /// Bytes to write.
    Data(Bytes),
    /// Cut the connection: the body fails, so the chunked encoding is never
    /// finished.
    Abort,
}

/// Why an event-stream body took no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// The body is gone (the client went away, or the response is over).
    Closed,
    /// The cap of events waiting unsent is reached: the client does not
    /// read (or reads more slowly than the server sends).
    Full,
}

/// The channel between an [`EventSender`] and its body.
#[derive(Debug, Default)]
struct Chan {
    state: Mutex<ChanState>,
}

#[derive(Debug, Default)]
struct ChanState {
    queue: VecDeque<BodyItem>,
    /// The [`BodyItem::Data`] in `queue`.
    unsent: usize,
    /// The body's task, waiting for an item.
    waker: Option<Waker>,
    /// The sender is dropped: the body ends after the queue.
    sender_gone: bool,
    /// The body is dropped, or cut: nothing more is taken.
    body_gone: bool,
}

impl Chan {
    fn lock(&self) -> MutexGuard<'_, ChanState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the body's task, if it waits, outside the lock.
    fn wake(waker: Option<Waker>) {
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The sending half of an event-stream body: it queues events, at most
/// its cap of them waiting unsent, and the body takes them. The body ends
/// when the sender is dropped.
#[derive(Debug)]
pub struct EventSender {
    chan: Arc<Chan>,
    cap: usize,
}

impl EventSender {
    /// Queues an event, unless `cap` of them already wait unsent.
    pub fn send(&self, bytes: Bytes) -> Result<(), Refused> {
        self.push(BodyItem::Data(bytes), true)
    }

    /// Queues an event whatever the count: for the last event of a
    /// stream (its reply), so a stream holds at most its cap and one, and
    /// for a replay of what a stream's log holds.
    pub fn send_past_cap(&self, bytes: Bytes) -> Result<(), Refused> {
        self.push(BodyItem::Data(bytes), false)
    }

    /// Queues the cut of the connection (after the events before it);
    /// never refused for the count.
    pub fn cut(&self) {
        let _ = self.push(BodyItem::Abort, false);
    }

    fn push(&self, item: BodyItem, capped: bool) -> Result<(), Refused> {
        let waker = {
            let mut state = self.chan.lock();
            if state.body_gone {
                return Err(Refused::Closed);
            }
            if let BodyItem::Data(_) = item {
                if capped && state.unsent >= self.cap {
                    return Err(Refused::Full);
                }
                state.unsent += 1;
            }
            state.queue.push_back(item);
            state.waker.take()
        };
        Chan::wake(waker);
        Ok(())
    }

    /// Whether one more event would be taken (fewer than the cap wait).
    pub fn has_room(&self) -> bool {
        self.unsent() < self.cap
    }

    /// How many events wait unsent.
    pub fn unsent(&self) -> usize {
        self.chan.lock().unsent
    }
}

impl Drop for EventSender {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.chan.lock();
            state.sender_gone = true;
            state.waker.take()
        };
        Chan::wake(waker);
    }
}

/// Every response the driver sends has this body.
pub struct ResponseBody {
    kind: Kind,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

enum Kind {
    Full(Option<Bytes>),
    /// The channel its sender feeds.
    Events(Arc<Chan>),
    /// An event stream whose every item had come before the response went
    /// out, and which ends with a cut: these bytes, then the failure.
    CutAfter(Option<Bytes>),
}

impl ResponseBody {
    /// A body of exactly these bytes.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        let kind = if bytes.is_empty() { Kind::Full(None) } else { Kind::Full(Some(bytes)) };
        ResponseBody { kind, on_drop: None }
    }

    /// An empty body.
    pub fn empty() -> Self {
        ResponseBody { kind: Kind::Full(None), on_drop: None }
    }

    /// A streamed body and the sender that feeds it, which takes at most
    /// `cap` events waiting unsent (a cap of 0 is taken as 1). The body
    /// ends when the sender is gone.
    pub fn events(cap: usize) -> (EventSender, Self) {
        let chan = Arc::new(Chan::default());
        let body = ResponseBody { kind: Kind::Events(chan.clone()), on_drop: None };
        (EventSender { chan, cap: cap.max(1) }, body)
    }

    /// A streamed body whose every sender is gone becomes the bytes it
    /// holds: a fixed body (one write with the head, a `Content-Length`, no
    /// chunks), or those bytes and then its cut. A body that can still get
    /// items is left as it is. What the body yields does not change.
    #[must_use]
    pub fn settle(mut self) -> Self {
        let Kind::Events(chan) = &self.kind else { return self };
        let mut parts: Vec<Bytes> = Vec::new();
        let mut cut = false;
        let settled = {
            let mut state = chan.lock();
            if state.sender_gone {
                while let Some(item) = state.queue.pop_front() {
                    match item {
                        BodyItem::Data(bytes) => parts.push(bytes),
                        BodyItem::Abort => {
                            cut = true;
                            break;
                        }
                    }
                }
                state.unsent = 0;
            }
            state.sender_gone
        };
        if !settled {
            return self;
        }
        let bytes = match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Bytes::from(parts.concat())),
        }
        .filter(|b| !b.is_empty());
        self.kind = if cut { Kind::CutAfter(bytes) } else { Kind::Full(bytes) };
        self
    }

    /// Runs `f` when hyper drops the body (the response is done or the
    /// client went away).
    pub fn on_drop(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_drop = Some(Box::new(f));
        self
    }
}

impl fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Full(b) => {
                write!(f, "ResponseBody::Full({} bytes)", b.as_ref().map_or(0, Bytes::len))
            }
            Kind::Events(_) => f.write_str("ResponseBody::Events"),
            Kind::CutAfter(b) => {
                write!(f, "ResponseBody::CutAfter({} bytes)", b.as_ref().map_or(0, Bytes::len))
            }
        }
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        if let Kind::Events(chan) = &self.kind {
            // The sender's next event is refused, and what waits is freed.
            let mut state = chan.lock();
            state.body_gone = true;
            state.queue.clear();
            state.unsent = 0;
        }
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        match &mut this.kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Events(chan) => {
                let mut state = chan.lock();
                match state.queue.pop_front() {
                    Some(BodyItem::Data(b)) => {
                        state.unsent -= 1;
                        Poll::Ready(Some(Ok(Frame::data(b))))
                    }
                    Some(BodyItem::Abort) => {
                        state.body_gone = true;
                        state.queue.clear();
                        state.unsent = 0;
                        Poll::Ready(Some(Err(cut())))
                    }
                    None if state.sender_gone || state.body_gone => Poll::Ready(None),
                    None => {
                        if !state.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                            state.waker = Some(cx.waker().clone());
                        }
                        Poll::Pending
                    }
                }
            }
            Kind::CutAfter(bytes) => match bytes.take() {
                Some(b) => Poll::Ready(Some(Ok(Frame::data(b)))),
                None => {
                    // Cut once: the body is over after it.
                    this.kind = Kind::Full(None);
                    Poll::Ready(Some(Err(cut())))
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, Bytes::len) as u64),
            Kind::Events(_) | Kind::CutAfter(_) => SizeHint::default(),
        }
    }
}

/// The failure of a body cut on purpose.
fn cut() -> io::Error {
    io::Error::other("stream cut on purpose")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// What a body yields: its bytes, and whether it ended with a failure.
    async fn read(mut body: ResponseBody) -> (Vec<u8>, bool) {
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => bytes.extend_from_slice(&frame.into_data().unwrap()),
                Err(_) => return (bytes, true),
            }
        }
        (bytes, false)
    }

    fn data(text: &'static str) -> BodyItem {
        BodyItem::Data(Bytes::from_static(text.as_bytes()))
    }

    /// A streamed body fed `items`, its sender dropped when `closed`.
    fn fed(items: &[&BodyItem], closed: bool) -> (ResponseBody, Option<EventSender>) {
        let (tx, body) = ResponseBody::events(items.len());
        for item in items {
            match item {
                BodyItem::Data(b) => tx.send(b.clone()).unwrap(),
                BodyItem::Abort => tx.cut(),
            }
        }
        (body, (!closed).then_some(tx))
    }

    #[tokio::test]
    async fn a_settled_body_yields_what_the_stream_would() {
        let (a, b, empty, abort) =
            (data("id: s-0\ndata:\n\n"), data("data: {}\n\n"), data(""), BodyItem::Abort);
        let table: [(&[&BodyItem], bool); 9] = [
            (&[], true),
            (&[&a], true),
            (&[&a, &b], true),
            (&[&empty, &b], true),
            (&[&empty], true),
            (&[&a, &abort], true),
            (&[&abort], true),
            (&[&a, &abort, &b], true),
            // A sender still there: not settled, the same bytes follow.
            (&[&a, &b], false),
        ];
        for (items, closed) in table {
            let (general, sender) = fed(items, closed);
            drop(sender);
            let (settled, sender) = fed(items, closed);
            let settled = settled.settle();
            let fixed = matches!(settled.kind, Kind::Full(_));
            let cut = items.iter().any(|i| matches!(i, BodyItem::Abort));
            assert_eq!(fixed, closed && !cut, "{items:?} {closed}");
            if fixed {
                let (len, expected) = (settled.size_hint().exact(), read(fed(items, true).0).await);
                assert_eq!(len, Some(expected.0.len() as u64), "{items:?}");
            }
            drop(sender);
            assert_eq!(read(settled).await, read(general).await, "{items:?} {closed}");
        }
        // A full body stays as it is.
        let full = ResponseBody::full("x").settle();
        assert_eq!(read(full).await, (b"x".to_vec(), false));
    }

    #[tokio::test]
    async fn the_count_follows_what_is_sent_and_taken_and_refuses_only_at_the_cap() {
        // (cap, events sent, events taken before the next send): whether the
        // next `send` is taken.
        let table: [(usize, usize, usize, bool); 9] = [
            (1, 0, 0, true),
            (1, 1, 0, false),
            (1, 1, 1, true),
            (0, 0, 0, true),
            (0, 1, 0, false),
            (3, 2, 0, true),
            (3, 3, 0, false),
            (3, 3, 1, true),
            (3, 4, 2, true),
        ];
        for (cap, sent, taken, room) in table {
            let (tx, mut body) = ResponseBody::events(cap);
            for i in 0..sent {
                // Past the cap only where the table sends more than it.
                let bytes = Bytes::from(vec![b'a'; i + 1]);
                if i < cap.max(1) {
                    tx.send(bytes).unwrap()
                } else {
                    tx.send_past_cap(bytes).unwrap()
                }
            }
            for _ in 0..taken {
                body.frame().await.unwrap().unwrap();
            }
            assert_eq!(tx.unsent(), sent - taken, "{cap} {sent} {taken}");
            assert_eq!(tx.has_room(), room, "{cap} {sent} {taken}");
            let next = tx.send(Bytes::from_static(b"next"));
            assert_eq!(
                next,
                if room { Ok(()) } else { Err(Refused::Full) },
                "{cap} {sent} {taken}"
            );
            // A cut is never refused, and not counted.
            let before = tx.unsent();
            tx.cut();
            assert_eq!(tx.unsent(), before);
            // A gone body frees what waited; a send to it is refused, even
            // at the cap, and not counted.
            drop(body);
            assert_eq!(tx.unsent(), 0);
            assert_eq!(tx.send_past_cap(Bytes::from_static(b"gone")), Err(Refused::Closed));
            assert_eq!(tx.send(Bytes::from_static(b"gone")), Err(Refused::Closed));
            assert_eq!(tx.unsent(), 0, "a send to a gone body is not counted");
        }
    }
}
