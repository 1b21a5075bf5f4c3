//! The response body: a fixed buffer, or an event stream fed through a
//! channel that can end cleanly (the sender is dropped) or be cut (an
//! [`BodyItem::Abort`], which makes hyper drop the connection without the
//! final chunk).

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// One item on an event-stream body's channel.
#[derive(Debug)]
pub enum BodyItem {
    /// Bytes to write.
    Data(Bytes),
    /// Cut the connection: the body fails, so the chunked encoding is never
    /// finished.
    Abort,
}

/// The sending half of an event-stream body.
pub type EventSender = mpsc::UnboundedSender<BodyItem>;

/// Every response the driver sends has this body.
pub struct ResponseBody {
    kind: Kind,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

enum Kind {
    Full(Option<Bytes>),
    Events(mpsc::UnboundedReceiver<BodyItem>),
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

    /// A streamed body and the channel that feeds it. The body ends when
    /// every sender is gone.
    pub fn events() -> (EventSender, Self) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, ResponseBody { kind: Kind::Events(rx), on_drop: None })
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
        }
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
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
            Kind::Events(rx) => match rx.poll_recv(cx) {
                Poll::Ready(Some(BodyItem::Data(b))) => Poll::Ready(Some(Ok(Frame::data(b)))),
                Poll::Ready(Some(BodyItem::Abort)) => {
                    rx.close();
                    Poll::Ready(Some(Err(io::Error::other("stream cut on purpose"))))
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, Bytes::len) as u64),
            Kind::Events(_) => SizeHint::default(),
        }
    }
}
