//! The writes of one scheduler turn gathered into one.
//!
//! Many calls in flight at once each send their request as the caller's
//! task is polled; written one by one, every line is its own `write`,
//! and each wakes the server, which on a shared CPU preempts the client.
//! So a request sent while another of the connection awaits its answer
//! joins a [`Batch`]: its sender (the first of the turn) yields once, and
//! the requests sent meanwhile are written with it, in one `write`, in
//! the order they were added. A lone call (no other request awaiting an
//! answer, nothing gathered) is written at once, with no yield; and when
//! the core queued nothing either, as ever: one flag read, then its line
//! written alone, without the batch's lock.
//!
//! - A sender dropped before its line was taken for writing takes the
//!   line back out: a cancelled call's request is never written.
//! - A failed write's error reaches every sender of its batch.
//! - What the protocol core queued (notifications, answers to the
//!   server's requests) is taken into the batch before each line added,
//!   and after the last at the write: messages leave in the order they
//!   were made, so a `notifications/cancelled` never goes ahead of its
//!   request.
//! - Bounded: a line that brings the batch to its cap is written at once
//!   (with the lines before it) instead of waiting.

use std::collections::VecDeque;
use std::io;
use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use mcp_peer::Link;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::conn::lock;
use crate::lines::take_queued;

/// The batch's cap: a line bringing it to this many bytes is written at
/// once (a pipe's default buffer on Linux; one write of it does not block
/// on a server that reads).
pub(crate) const BATCH_CAP: usize = 64 * 1024;

/// The lines of one connection waiting for one write.
#[derive(Debug)]
pub(crate) struct Batch {
    cap: usize,
    /// Whether lines are gathered or a sender leads: read without the
    /// lock by a lone call, which goes alone when it is false.
    busy: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The lines, in the order added; a sender's carries its number, the
    /// core's queued messages none.
    lines: VecDeque<(Option<u64>, Vec<u8>)>,
    bytes: usize,
    /// The next sender's number.
    next: u64,
    /// The sender yielding to gather this turn's lines.
    leader: Option<u64>,
    /// The senders' numbers of the write under way.
    writing: Option<RangeInclusive<u64>>,
    /// Senders of the write under way that left before it ended.
    writing_gone: usize,
    /// Failed writes whose senders have not all heard of it.
    failures: Vec<Failure>,
    /// The senders waiting for a leader's write, by number. They are
    /// woken when it fails or when the leader leaves; a write that
    /// succeeds lets them be (the answer wakes each, or its deadline).
    waiting: Vec<(u64, Waker)>,
}

#[derive(Debug)]
struct Failure {
    senders: RangeInclusive<u64>,
    kind: io::ErrorKind,
    text: String,
    /// Senders still to be told.
    untold: usize,
}

/// Where a sender's line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Queued,
    Writing,
    Written,
    Failed,
}

impl State {
    /// Whether lines are gathered or a sender leads.
    fn busy(&self) -> bool {
        !self.lines.is_empty() || self.leader.is_some()
    }

    fn place(&self, seq: u64) -> Place {
        if self.lines.iter().any(|(s, _)| *s == Some(seq)) {
            Place::Queued
        } else if self.writing.as_ref().is_some_and(|w| w.contains(&seq)) {
            Place::Writing
        } else if self.failures.iter().any(|f| f.senders.contains(&seq)) {
            Place::Failed
        } else {
            Place::Written
        }
    }

    /// A sender's failure, told (once).
    fn tell_failure(&mut self, seq: u64) -> Option<io::Error> {
        let at = self.failures.iter().position(|f| f.senders.contains(&seq))?;
        let failure = &mut self.failures[at];
        let error = io::Error::new(failure.kind, failure.text.clone());
        failure.untold -= 1;
        if failure.untold == 0 {
            self.failures.swap_remove(at);
        }
        Some(error)
    }

    /// Takes the core's queued messages into the batch.
    fn take_queued(&mut self, link: &Link) {
        let mut queued = Vec::new();
        take_queued(link, &mut queued);
        if !queued.is_empty() {
            self.bytes += queued.len();
            self.lines.push_back((None, queued));
        }
    }
}

/// How a sender joined.
pub(crate) enum Join<'a> {
    /// Nothing gathered and no other request awaits an answer: write the
    /// line at once, as ever.
    Alone(Vec<u8>),
    /// The line is in the batch.
    Queued(Ticket<'a>),
}

/// A sender's line in the batch; dropped, it takes the line back out
/// (when not yet taken for writing) and hands the lead on.
pub(crate) struct Ticket<'a> {
    batch: &'a Batch,
    link: &'a Link,
    seq: u64,
    /// This sender yields to gather the turn's lines, then writes them.
    leads: bool,
    /// The cap was reached: write at once.
    now: bool,
    /// The sender has its outcome.
    done: bool,
}

impl Batch {
    pub(crate) fn new(cap: usize) -> Self {
        Batch { cap, busy: AtomicBool::new(false), state: Mutex::new(State::default()) }
    }

    /// Adds `line` (ending in a newline) unless it goes alone: when
    /// nothing is gathered and `others` (another request awaits its
    /// answer) is false. [`send`] reads the batch's flag first, without
    /// the lock, and comes here only when it is set or `others`.
    pub(crate) fn join<'a>(&'a self, link: &'a Link, line: Vec<u8>, others: bool) -> Join<'a> {
        let mut state = lock(&self.state);
        if !others && !state.busy() {
            return Join::Alone(line);
        }
        self.busy.store(true, Ordering::Release);
        state.take_queued(link);
        let seq = state.next;
        state.next += 1;
        state.bytes += line.len();
        state.lines.push_back((Some(seq), line));
        let now = state.bytes >= self.cap;
        let leads = !now && state.leader.is_none();
        if leads {
            state.leader = Some(seq);
        }
        Join::Queued(Ticket { batch: self, link, seq, leads, now, done: false })
    }

    /// Whether nothing waits to be written: the core queued nothing and
    /// no line is gathered. Read without the batch's lock by a lone call
    /// holding the writer's lock, in this order: a sender gathering on
    /// another thread marks the batch busy before it takes the core's
    /// queue, so a queue found empty after such a take is seen with the
    /// mark (the core's lock orders the two); nothing a lone line would
    /// overtake is left behind.
    #[inline]
    fn nothing_waits(&self, link: &Link) -> bool {
        !link.has_transmit() && !self.busy.load(Ordering::Acquire)
    }

    /// Whether nothing is gathered.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        lock(&self.state).lines.is_empty()
    }

    /// Takes every line gathered and what the core queued since, as one
    /// buffer, marking them as being written (`Some` writing); with
    /// nothing gathered, only what the core queued (`None`). The caller
    /// holds the writer's lock and ends a batch's write with
    /// [`Writing::finish`].
    fn take(&self, link: &Link) -> (Vec<u8>, Option<Writing<'_>>) {
        let mut state = lock(&self.state);
        if state.lines.is_empty() {
            // Under the lock: no sender takes the queue into a batch
            // meanwhile, to be written after what is written here.
            let mut queued = Vec::new();
            take_queued(link, &mut queued);
            return (queued, None);
        }
        state.take_queued(link);
        let mut bytes = Vec::with_capacity(state.bytes);
        let (mut first, mut last, mut senders) = (None, None, 0);
        for (seq, line) in state.lines.drain(..) {
            if let Some(seq) = seq {
                first.get_or_insert(seq);
                last = Some(seq);
                senders += 1;
            }
            bytes.extend_from_slice(&line);
        }
        state.bytes = 0;
        // The lead ends with the gathering: a line added from now on
        // starts a new batch.
        state.leader = None;
        self.busy.store(false, Ordering::Release);
        let range = first.zip(last).map(|(a, b)| a..=b);
        state.writing = range.clone();
        state.writing_gone = 0;
        (bytes, Some(Writing { batch: self, senders: range, count: senders, ended: false }))
    }
}

/// A batch being written; ended (or dropped: the write was abandoned),
/// it records the outcome for the batch's senders and wakes them.
struct Writing<'a> {
    batch: &'a Batch,
    senders: Option<RangeInclusive<u64>>,
    /// Senders in the batch, the writer among them when its line is.
    count: usize,
    ended: bool,
}

impl Writing<'_> {
    /// Records the write's outcome; `writer` is the number of the sender
    /// writing, which hears it directly.
    fn finish(mut self, outcome: &io::Result<()>, writer: Option<u64>) {
        self.ended = true;
        let error = outcome.as_ref().err().map(|e| (e.kind(), e.to_string()));
        self.record(error, writer);
    }

    fn record(&mut self, error: Option<(io::ErrorKind, String)>, writer: Option<u64>) {
        let mut wake = Vec::new();
        {
            let mut state = lock(&self.batch.state);
            if let Some(senders) = &self.senders {
                let failed = error.is_some();
                state.waiting.retain(|(seq, waker)| {
                    let mine = senders.contains(seq);
                    if mine && failed {
                        wake.push(waker.clone());
                    }
                    !mine
                });
            }
            state.writing = None;
            let gone = std::mem::take(&mut state.writing_gone);
            if let (Some(senders), Some((kind, text))) = (self.senders.clone(), error) {
                let own = usize::from(writer.is_some_and(|w| senders.contains(&w)));
                let untold = self.count.saturating_sub(own + gone);
                if untold > 0 {
                    state.failures.push(Failure { senders, kind, text, untold });
                }
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let text = "the write of this request was abandoned mid-line".to_owned();
            self.record(Some((io::ErrorKind::BrokenPipe, text)), None);
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let seq = self.seq;
        if self.done {
            let mut state = lock(&self.batch.state);
            state.waiting.retain(|(s, _)| *s != seq);
            return;
        }
        let (orphans, wake) = {
            let mut state = lock(&self.batch.state);
            state.waiting.retain(|(s, _)| *s != seq);
            let before = state.lines.len();
            let mut freed = 0;
            state.lines.retain(|(s, line)| {
                let mine = *s == Some(seq);
                if mine {
                    freed = line.len();
                }
                !mine
            });
            state.bytes -= freed;
            if state.lines.len() == before {
                match state.place(seq) {
                    Place::Writing => state.writing_gone += 1,
                    Place::Failed => drop(state.tell_failure(seq)),
                    Place::Queued | Place::Written => {}
                }
            }
            // The senders left waited on the leader: woken, one of them
            // takes the lead.
            let mut wake = Vec::new();
            if state.leader == Some(seq) {
                state.leader = None;
                wake = std::mem::take(&mut state.waiting);
            }
            self.batch.busy.store(state.busy(), Ordering::Release);
            // What the core queued, left with no sender to write it.
            let orphans = !state.lines.is_empty() && state.lines.iter().all(|(s, _)| s.is_none());
            (orphans, wake)
        };
        wake.into_iter().for_each(|(_, waker)| waker.wake());
        if orphans {
            self.link.flush_soon();
        }
    }
}

impl Ticket<'_> {
    /// The sender's outcome, once its line was written or failed.
    fn outcome(&mut self) -> Option<io::Result<()>> {
        let mut state = lock(&self.batch.state);
        let outcome = match state.place(self.seq) {
            Place::Queued | Place::Writing => return None,
            Place::Written => Ok(()),
            Place::Failed => state.tell_failure(self.seq).map_or(Ok(()), Err),
        };
        self.done = true;
        Some(outcome)
    }

    /// Ready with the sender's outcome once its line was written or
    /// failed, with `None` when it is to write (its line is still gathered
    /// and no one leads); else waits for a failed write or for the leader
    /// to leave.
    fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<()>>> {
        let mut state = lock(&self.batch.state);
        let outcome = match state.place(self.seq) {
            Place::Written => Ok(()),
            Place::Failed => state.tell_failure(self.seq).map_or(Ok(()), Err),
            Place::Queued if state.leader.is_none() => return Poll::Ready(None),
            Place::Queued | Place::Writing => {
                let seq = self.seq;
                match state.waiting.iter_mut().find(|(s, _)| *s == seq) {
                    Some((_, waker)) => waker.clone_from(cx.waker()),
                    None => state.waiting.push((seq, cx.waker().clone())),
                }
                return Poll::Pending;
            }
        };
        self.done = true;
        Poll::Ready(Some(outcome))
    }
}

/// Sends `line` (ending in a newline) under `writer`'s lock: at once when
/// it goes alone (see [`Batch::join`]; `others`: another request awaits
/// its answer), else gathered with the turn's other lines and written in
/// one write by the first of their senders to write. `abandon` ends the
/// connection when a write is dropped mid-line.
pub(crate) async fn send<W: AsyncWrite + Unpin>(
    batch: &Batch,
    link: &Link,
    writer: &tokio::sync::Mutex<Option<W>>,
    line: Vec<u8>,
    others: bool,
    abandon: &(dyn Fn() + Sync),
) -> io::Result<()> {
    // A lone call reads one flag here, without the lock (a line gathered
    // meanwhile on another thread is seen under the writer's lock, by
    // `nothing_waits`), then writes as ever: no lock of the batch when
    // nothing waits.
    let line = if !others && !batch.busy.load(Ordering::Acquire) {
        line
    } else {
        match batch.join(link, line, others) {
            Join::Alone(line) => line,
            // Boxed: a lone call's future stays small.
            Join::Queued(ticket) => {
                return Box::pin(gathered(ticket, link, writer, abandon)).await;
            }
        }
    };
    // Free almost always for a lone call: taken without a future to poll.
    let mut guard = match writer.try_lock() {
        Ok(guard) => guard,
        Err(_) => writer.lock().await,
    };
    let pipe = open(&mut guard)?;
    if !batch.nothing_waits(link) {
        return write_batch(batch, link, pipe, Some(&line), None, abandon).await;
    }
    // Nothing made before this line waits to be written: it goes out on
    // its own. A write abandoned half-way ends the connection (see
    // `write_batch`).
    let mut unfinished = Unfinished(Some(abandon));
    let written = pipe.write_all(&line).await;
    unfinished.0 = None;
    written
}

/// The most bytes a pipe takes in one write whole or not at all
/// (`PIPE_BUF`: 4096 on Linux, POSIX's floor of 512 elsewhere).
const WHOLE_WRITE: usize = if cfg!(target_os = "linux") { 4096 } else { 512 };

/// [`send`]'s lone line written with no future, when it goes at once:
/// no other request awaits its answer (`others` false), nothing is
/// gathered or queued before it, the writer is free and the pipe takes
/// the line whole in one write (a line of at most `PIPE_BUF` bytes, which
/// a pipe takes whole or not at all). Else the line comes back unwritten,
/// for `send`. Should a write take only part of it anyway, the connection
/// ends as when a write is abandoned mid-line.
pub(crate) fn send_now<W: AsyncWrite + Unpin>(
    batch: &Batch,
    link: &Link,
    writer: &tokio::sync::Mutex<Option<W>>,
    line: Vec<u8>,
    others: bool,
    abandon: &(dyn Fn() + Sync),
) -> Result<(), Vec<u8>> {
    if others || line.len() > WHOLE_WRITE || batch.busy.load(Ordering::Acquire) {
        return Err(line);
    }
    let Ok(mut guard) = writer.try_lock() else { return Err(line) };
    let Some(pipe) = guard.as_mut() else { return Err(line) };
    if !batch.nothing_waits(link) {
        return Err(line);
    }
    let mut cx = Context::from_waker(Waker::noop());
    match std::pin::Pin::new(pipe).poll_write(&mut cx, &line) {
        Poll::Ready(Ok(n)) if n == line.len() => Ok(()),
        Poll::Ready(Ok(0) | Err(_)) | Poll::Pending => Err(line),
        Poll::Ready(Ok(_)) => {
            abandon();
            Ok(())
        }
    }
}

/// The rest of [`send`] for a line in the batch.
async fn gathered<W: AsyncWrite + Unpin>(
    mut ticket: Ticket<'_>,
    link: &Link,
    writer: &tokio::sync::Mutex<Option<W>>,
    abandon: &(dyn Fn() + Sync),
) -> io::Result<()> {
    let batch = ticket.batch;
    if ticket.leads {
        // The turn's other senders add their lines meanwhile.
        tokio::task::yield_now().await;
    } else if !ticket.now
        && let Some(outcome) = std::future::poll_fn(|cx| ticket.poll_turn(cx)).await
    {
        return outcome;
    }
    let mut guard = writer.lock().await;
    if let Some(outcome) = ticket.outcome() {
        return outcome;
    }
    let pipe = open(&mut guard)?;
    let written = write_batch(batch, link, pipe, None, Some(ticket.seq), abandon).await;
    ticket.done = true;
    written
}

/// Writes what is gathered and what the core queued, under `writer`'s
/// lock (a flush: no line of its own).
pub(crate) async fn flush<W: AsyncWrite + Unpin>(
    batch: &Batch,
    link: &Link,
    writer: &tokio::sync::Mutex<Option<W>>,
    abandon: &(dyn Fn() + Sync),
) -> io::Result<()> {
    let mut guard = writer.lock().await;
    let pipe = open(&mut guard)?;
    write_batch(batch, link, pipe, None, None, abandon).await
}

fn open<W>(writer: &mut Option<W>) -> io::Result<&mut W> {
    writer.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))
}

/// Takes the batch (or, with nothing gathered, what the core queued) and
/// writes it with `alone` after it, in one write; the caller holds the
/// writer's lock. `writer`: the number of the sender writing its line.
async fn write_batch<W: AsyncWrite + Unpin>(
    batch: &Batch,
    link: &Link,
    pipe: &mut W,
    alone: Option<&[u8]>,
    writer: Option<u64>,
    abandon: &(dyn Fn() + Sync),
) -> io::Result<()> {
    let (mut bytes, writing) = batch.take(link);
    let out: &[u8] = match alone {
        Some(line) if bytes.is_empty() => line,
        Some(line) => {
            bytes.extend_from_slice(line);
            &bytes
        }
        None if bytes.is_empty() => return Ok(()),
        None => &bytes,
    };
    // A write abandoned half-way (its request's deadline passed while a
    // server that stopped reading left the pipe full) would leave half a
    // line in the pipe: the connection is broken then, and is ended.
    let mut unfinished = Unfinished(Some(abandon));
    let written = pipe.write_all(out).await;
    unfinished.0 = None;
    if let Some(writing) = writing {
        writing.finish(&written, writer);
    }
    written
}

/// Ends the connection when dropped armed: a write stopped mid-line.
struct Unfinished<'a>(Option<&'a (dyn Fn() + Sync)>);

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(abandon) = self.0.take() {
            abandon();
        }
    }
}

#[cfg(test)]
mod tests;
