//! The stdio driver's output: the client's pipe and the bytes taken for
//! it, shared by the driver's writer and, with
//! [`serve_direct`](super::serve_direct), a task that writes a reply
//! itself ([`OutgoingSender::send_now`](crate::outgoing::OutgoingSender::send_now)).
//!
//! A reply whose answer another task holds (a forwarded call's, read by
//! the upstream client's reader) would otherwise be queued, wake the
//! driver's task and wait for it to turn; written by the task that has it,
//! the driver's task is not woken at all. The rules that keep every
//! message whole and in order:
//!
//! - Everything written goes through the buffer under one lock, and the
//!   writer takes items from the queue into it under that lock: a line is
//!   never split by another.
//! - A reply is written at once only while the queue holds nothing and
//!   the buffer is empty (nothing sent before it waits); otherwise it is
//!   queued, after what waits.
//! - A line the pipe takes only in part stays in the buffer and the
//!   driver's task, woken when the pipe takes more, finishes it before
//!   anything else; meanwhile every reply is queued. So the output holds
//!   at most one line the queue's cap does not count.
//! - Once the driver has ended (input closed, an exit, an error, or its
//!   future dropped), nothing is written: a reply is queued, and never
//!   delivered, as to any ended driver.

use std::io;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use tokio::io::AsyncWrite;

use mcp_proto::jsonrpc::RequestId;
use serde_json::value::RawValue;

use crate::outgoing::{Backlog, Outgoing, WriteNow};

/// The output and who may write to it.
#[derive(Debug)]
pub(super) struct Out<W> {
    state: Mutex<State<W>>,
    /// How many items wait in the driver's queue.
    backlog: Backlog,
    /// Wakes the driver's task (through its gate) when the pipe takes
    /// the rest of a line written from elsewhere.
    driver: Waker,
}

#[derive(Debug)]
pub(super) struct State<W> {
    /// `None` once the driver has ended.
    sink: Option<W>,
    /// Whole lines taken for writing; `written` of its bytes are written.
    buf: Vec<u8>,
    written: usize,
    /// Written since the sink was last flushed.
    unflushed: bool,
}

impl<W> Out<W> {
    pub(super) fn new(sink: W, backlog: Backlog, driver: Waker) -> Self {
        let state = State { sink: Some(sink), buf: Vec::new(), written: 0, unflushed: false };
        Out { state: Mutex::new(state), backlog, driver }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State<W>> {
        // Nothing panics while holding it but the sink's own code; what it
        // left is still whole lines and a count of their written bytes.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the output: nothing more is written, the sink is dropped.
    pub(super) fn close(&self) {
        let sink = self.lock().sink.take();
        drop(sink);
    }
}

impl<W: AsyncWrite + Unpin> State<W> {
    /// Whether nothing waits in the buffer.
    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// How many bytes wait in the buffer.
    pub(super) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Appends `item` to the buffer as one line: `Ok(None)`, or for an
    /// exit (nothing written) `Ok(Some(code))`.
    pub(super) fn push(&mut self, item: &Outgoing) -> io::Result<Option<i32>> {
        match item {
            Outgoing::Message { .. } | Outgoing::RawReply { .. } => {
                let start = self.buf.len();
                if let Err(e) = item.encode_into(&mut self.buf) {
                    self.buf.truncate(start);
                    return Err(io::Error::other(e));
                }
            }
            Outgoing::RawLine(line) => self.buf.extend_from_slice(line),
            Outgoing::Exit(code) => return Ok(Some(*code)),
        }
        self.buf.push(b'\n');
        Ok(None)
    }

    /// Appends a reply whose result is JSON text to the buffer as one
    /// line, as [`push`](Self::push) appends an [`Outgoing::RawReply`].
    fn push_raw_reply(&mut self, id: &RequestId, result: &RawValue) {
        Outgoing::raw_reply_bytes(id, result, &mut self.buf);
        self.buf.push(b'\n');
    }

    /// Writes what the buffer holds, then flushes the sink: ready once
    /// both are done (at once when there is nothing to do).
    pub(super) fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(sink) = self.sink.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        };
        while self.written < self.buf.len() {
            let n = ready!(Pin::new(&mut *sink).poll_write(cx, &self.buf[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
            self.unflushed = true;
        }
        self.buf.clear();
        self.written = 0;
        if self.unflushed {
            ready!(Pin::new(sink).poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> Out<W> {
    /// Whether a line may be written now: the driver runs and nothing
    /// waits before it. The queue's count is looked at under the lock the
    /// writer takes items under (`state`'s): an item taken is in the
    /// buffer by then.
    fn takes_now(&self, state: &State<W>) -> bool {
        state.sink.is_some() && state.is_empty() && !state.unflushed && self.backlog.is_empty()
    }

    /// Writes the line just put in the buffer. What the pipe does not take
    /// now (it is full, or failed), the driver's task writes when woken:
    /// by the pipe when it is ready, or here for an error (the writer
    /// meets it again and ends).
    fn drain_now(&self, state: &mut State<W>) {
        let mut cx = Context::from_waker(&self.driver);
        if let Poll::Ready(Err(_)) = state.poll_drain(&mut cx) {
            self.driver.wake_by_ref();
        }
    }
}

impl<W: AsyncWrite + Unpin + Send> WriteNow for Out<W> {
    fn write_now(&self, item: Outgoing) -> Result<(), Outgoing> {
        let mut state = self.lock();
        if !self.takes_now(&state) {
            return Err(item);
        }
        match &item {
            Outgoing::Message { .. } | Outgoing::RawReply { .. } => {}
            Outgoing::RawLine(_) | Outgoing::Exit(_) => return Err(item),
        }
        if state.push(&item).is_err() {
            // The driver's writer meets the same error.
            return Err(item);
        }
        self.drain_now(&mut state);
        Ok(())
    }

    fn write_raw_reply_now(&self, id: &RequestId, result: &RawValue) -> bool {
        let mut state = self.lock();
        if !self.takes_now(&state) {
            return false;
        }
        state.push_raw_reply(id, result);
        self.drain_now(&mut state);
        true
    }
}
