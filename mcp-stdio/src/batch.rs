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
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};

    /// A writer that records each write (one `poll_write` each), or fails.
    #[derive(Clone, Default)]
    struct Recorder {
        writes: Arc<Mutex<Vec<Vec<u8>>>>,
        fail: bool,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            if self.fail {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "pipe closed")));
            }
            lock(&self.writes).push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    struct Rig {
        batch: Batch,
        link: Link,
        writer: tokio::sync::Mutex<Option<Recorder>>,
        writes: Arc<Mutex<Vec<Vec<u8>>>>,
    }

    fn rig(cap: usize, fail: bool) -> Rig {
        let recorder = Recorder { fail, ..Recorder::default() };
        Rig {
            batch: Batch::new(cap),
            link: Link::detached(),
            writes: recorder.writes.clone(),
            writer: tokio::sync::Mutex::new(Some(recorder)),
        }
    }

    impl Rig {
        fn send(&self, line: &str, others: bool) -> impl Future<Output = io::Result<()>> + use<'_> {
            let line = format!("{line}\n").into_bytes();
            send(&self.batch, &self.link, &self.writer, line, others, &|| {})
        }
        fn writes(&self) -> Vec<String> {
            lock(&self.writes).iter().map(|w| String::from_utf8_lossy(w).into_owned()).collect()
        }
    }

    fn poll<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Polls with a waker that counts its wake-ups.
    fn poll_counted<F: Future>(f: Pin<&mut F>, count: &Arc<Count>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(&Waker::from(count.clone())))
    }

    fn woken(count: &Count) -> usize {
        count.0.load(Ordering::SeqCst)
    }

    /// Lines sent in one turn while others await answers leave in one
    /// write, in the order they were added; sent alone, each is its own
    /// write with the same bytes.
    #[test]
    fn a_turns_lines_go_out_in_one_write_in_order() {
        for n in [1, 2, 3, 16] {
            let lines: Vec<String> = (0..n).map(|i| format!("{{\"id\":{i}}}")).collect();
            let batched = rig(BATCH_CAP, false);
            let mut sends: Vec<_> = lines.iter().map(|l| Box::pin(batched.send(l, true))).collect();
            // The first poll of each: the first yields, the others wait.
            for s in &mut sends {
                assert!(poll(s.as_mut()).is_pending(), "{n}");
            }
            assert!(batched.writes().is_empty());
            for s in &mut sends {
                assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))), "{n}");
            }
            let all: String = lines.iter().map(|l| format!("{l}\n")).collect();
            assert_eq!(batched.writes(), vec![all.clone()], "{n}");
            assert!(batched.batch.is_empty());

            let alone = rig(BATCH_CAP, false);
            for l in &lines {
                let mut s = std::pin::pin!(alone.send(l, false));
                assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))), "{n}");
            }
            assert_eq!(alone.writes().len(), n, "{n}");
            assert_eq!(alone.writes().concat(), all, "{n}");
        }
    }

    /// A lone call (no other request awaiting an answer, nothing
    /// gathered) is written within the first poll: no yield.
    #[test]
    fn a_lone_call_is_written_in_its_first_poll() {
        let r = rig(BATCH_CAP, false);
        let mut s = std::pin::pin!(r.send("{\"id\":1}", false));
        assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))));
        assert_eq!(r.writes(), vec!["{\"id\":1}\n".to_owned()]);
        // The near miss: with another request awaiting its answer, the
        // first poll yields and writes nothing.
        let r = rig(BATCH_CAP, false);
        let mut s = std::pin::pin!(r.send("{\"id\":1}", true));
        assert!(poll(s.as_mut()).is_pending());
        assert!(r.writes().is_empty());
        assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))));
        assert_eq!(r.writes(), vec!["{\"id\":1}\n".to_owned()]);
        // With something gathered, a call that would go alone joins it.
        let r = rig(BATCH_CAP, false);
        let mut first = Box::pin(r.send("{\"id\":1}", true));
        assert!(poll(first.as_mut()).is_pending());
        let mut second = Box::pin(r.send("{\"id\":2}", false));
        assert!(poll(second.as_mut()).is_pending());
        assert!(r.writes().is_empty());
        assert!(matches!(poll(first.as_mut()), Poll::Ready(Ok(()))));
        assert!(matches!(poll(second.as_mut()), Poll::Ready(Ok(()))));
        assert_eq!(r.writes(), vec!["{\"id\":1}\n{\"id\":2}\n".to_owned()]);
    }

    /// A lone call's write takes what was gathered after it went alone
    /// (another thread's senders) with it, and tells their senders.
    #[test]
    fn a_lone_write_takes_what_was_gathered_meanwhile() {
        let r = rig(BATCH_CAP, false);
        let Join::Alone(line) = r.batch.join(&r.link, b"a\n".to_vec(), false) else {
            panic!("a lone call goes alone")
        };
        let Join::Queued(mut ticket) = r.batch.join(&r.link, b"b\n".to_vec(), true) else {
            panic!("a call with company is gathered")
        };
        assert!(ticket.outcome().is_none());
        let mut recorder = r.writer.try_lock().unwrap().take().unwrap();
        let write = write_batch(&r.batch, &r.link, &mut recorder, Some(&line), None, &|| {});
        let mut write = std::pin::pin!(write);
        assert!(matches!(poll(write.as_mut()), Poll::Ready(Ok(()))));
        assert_eq!(r.writes(), vec!["b\na\n".to_owned()]);
        assert!(matches!(ticket.outcome(), Some(Ok(()))));
        assert!(r.batch.is_empty());
        assert!(!r.batch.busy.load(Ordering::Acquire));
    }

    /// A lone sender and two gathering senders on three threads at once:
    /// every line is written once, whole, and each sender's lines leave in
    /// the order it sent them (a lone write finding lines gathered takes
    /// them first; one finding nothing waiting writes its line alone).
    #[test]
    fn lone_and_gathering_senders_on_threads_keep_each_senders_order() {
        const N: usize = 400;
        let r = rig(BATCH_CAP, false);
        std::thread::scope(|scope| {
            for (name, others) in [("a", false), ("b", true), ("c", true)] {
                let r = &r;
                scope.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build();
                    rt.expect("a runtime").block_on(async {
                        let all = async {
                            for i in 0..N {
                                let mut send =
                                    std::pin::pin!(r.send(&format!("{name}{i}"), others));
                                // Polled again at once when pending: a
                                // sender waiting on a write that went
                                // through is woken by its answer, and
                                // here there is none.
                                let written = std::future::poll_fn(|cx| {
                                    let polled = send.as_mut().poll(cx);
                                    if polled.is_pending() {
                                        cx.waker().wake_by_ref();
                                    }
                                    polled
                                });
                                written.await.expect("written");
                            }
                        };
                        let bounded = tokio::time::timeout(std::time::Duration::from_secs(30), all);
                        bounded.await.expect("every send ends");
                    });
                });
            }
        });
        let writes = r.writes();
        assert!(writes.iter().all(|w| w.ends_with('\n')), "whole lines only");
        let lines: Vec<&str> = writes.iter().flat_map(|w| w.lines()).collect();
        assert_eq!(lines.len(), 3 * N);
        for name in ["a", "b", "c"] {
            let mine: Vec<usize> =
                lines.iter().filter_map(|l| l.strip_prefix(name)?.parse().ok()).collect();
            assert_eq!(mine, (0..N).collect::<Vec<_>>(), "{name}");
        }
        assert!(r.batch.is_empty());
        assert!(!r.batch.busy.load(Ordering::Acquire));
    }

    /// A lone call that read the flag before another thread gathered a
    /// line (it waited for the writer's lock meanwhile) writes the gathered
    /// line first, with its own, in one write; the near miss, nothing
    /// gathered meanwhile, writes its line alone.
    #[test]
    fn a_lone_call_rechecks_under_the_writers_lock() {
        for gathered in [false, true] {
            let r = rig(BATCH_CAP, false);
            let held = r.writer.try_lock().expect("free");
            let mut lone = Box::pin(r.send("a", false));
            assert!(poll(lone.as_mut()).is_pending(), "{gathered}");
            let mut ticket = gathered.then(|| match r.batch.join(&r.link, b"b\n".to_vec(), true) {
                Join::Queued(ticket) => ticket,
                Join::Alone(_) => panic!("a call with company is gathered"),
            });
            drop(held);
            assert!(matches!(poll(lone.as_mut()), Poll::Ready(Ok(()))), "{gathered}");
            let expected = if gathered { "b\na\n" } else { "a\n" };
            assert_eq!(r.writes(), vec![expected.to_owned()], "{gathered}");
            if let Some(ticket) = &mut ticket {
                assert!(matches!(ticket.outcome(), Some(Ok(()))));
            }
            assert!(r.batch.is_empty());
            assert!(!r.batch.busy.load(Ordering::Acquire));
        }
    }

    /// A sender dropped before the write takes its line back out, whether
    /// it followed or led (then another takes the lead).
    #[test]
    fn a_dropped_senders_line_is_never_written() {
        // Which of three senders is dropped after the first polls.
        for dropped in 0..3 {
            let r = rig(BATCH_CAP, false);
            let mut sends: Vec<_> =
                (0..3).map(|i| Some(Box::pin(r.send(&format!("{{\"id\":{i}}}"), true)))).collect();
            let counts: Vec<Arc<Count>> = (0..3).map(|_| Arc::default()).collect();
            for (s, c) in sends.iter_mut().zip(&counts) {
                assert!(poll_counted(s.as_mut().unwrap().as_mut(), c).is_pending());
            }
            sends[dropped] = None;
            // The leader leaving wakes the others (one of them writes);
            // a follower leaving wakes no one.
            let expected = if dropped == 0 { 1 } else { 0 };
            // (The leader, 0, woke itself to yield.)
            for (i, c) in counts.iter().enumerate().skip(1).filter(|(i, _)| *i != dropped) {
                assert_eq!(woken(c), expected, "{dropped} {i}");
            }
            for s in sends.iter_mut().flatten() {
                assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))), "{dropped}");
            }
            let expected: String =
                (0..3).filter(|i| *i != dropped).map(|i| format!("{{\"id\":{i}}}\n")).collect();
            assert_eq!(r.writes(), vec![expected], "{dropped}");
            assert!(r.batch.is_empty());
        }
        // All dropped: nothing is written, nothing is left.
        let r = rig(BATCH_CAP, false);
        {
            let mut a = Box::pin(r.send("{\"id\":1}", true));
            let mut b = Box::pin(r.send("{\"id\":2}", true));
            assert!(poll(a.as_mut()).is_pending());
            assert!(poll(b.as_mut()).is_pending());
        }
        assert!(r.batch.is_empty());
        let mut flush = std::pin::pin!(flush(&r.batch, &r.link, &r.writer, &|| {}));
        assert!(matches!(poll(flush.as_mut()), Poll::Ready(Ok(()))));
        assert!(r.writes().is_empty());
    }

    /// A failed write's error reaches every sender of its batch, each with
    /// the error's kind (the waiting ones woken for it), and leaves no
    /// record behind; a write that succeeds wakes no one (the answers do).
    #[test]
    fn a_failed_write_reaches_every_sender_of_its_batch() {
        for (n, fail) in [(1, true), (2, true), (5, true), (2, false), (5, false)] {
            let r = rig(BATCH_CAP, fail);
            let mut sends: Vec<_> =
                (0..n).map(|i| Box::pin(r.send(&format!("{{\"id\":{i}}}"), true))).collect();
            let counts: Vec<Arc<Count>> = (0..n).map(|_| Arc::default()).collect();
            for (s, c) in sends.iter_mut().zip(&counts) {
                assert!(poll_counted(s.as_mut(), c).is_pending());
            }
            // The leader writes.
            let leader = poll(sends[0].as_mut());
            assert!(leader.is_ready(), "{n}");
            let followers: Vec<usize> = counts[1..].iter().map(|c| woken(c)).collect();
            let expected = if fail { 1 } else { 0 };
            assert!(followers.iter().all(|w| *w == expected), "{n} {fail}: {followers:?}");
            if !fail {
                for s in &mut sends[1..] {
                    assert!(matches!(poll(s.as_mut()), Poll::Ready(Ok(()))));
                }
                assert!(lock(&r.batch.state).waiting.is_empty());
                continue;
            }
            if let Poll::Ready(Err(e)) = leader {
                assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{n}");
            } else {
                panic!("{n}: the leader's write failed");
            }
            for s in &mut sends[1..] {
                match poll(s.as_mut()) {
                    Poll::Ready(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{n}"),
                    other => panic!("{n}: {other:?}"),
                }
            }
            assert!(lock(&r.batch.state).failures.is_empty(), "{n}");
            assert!(lock(&r.batch.state).waiting.is_empty(), "{n}");
        }
        // A sender that left before hearing of it leaves no record either.
        let r = rig(BATCH_CAP, true);
        let mut a = Box::pin(r.send("{\"id\":1}", true));
        let mut b = Box::pin(r.send("{\"id\":2}", true));
        assert!(poll(a.as_mut()).is_pending());
        assert!(poll(b.as_mut()).is_pending());
        assert!(matches!(poll(a.as_mut()), Poll::Ready(Err(_))));
        assert_eq!(lock(&r.batch.state).failures.len(), 1);
        drop(b);
        assert!(lock(&r.batch.state).failures.is_empty());
    }

    /// A line that brings the batch to its cap is written at once, with
    /// the lines before it; below the cap it waits.
    #[test]
    fn the_cap_forces_a_write() {
        // The first line is 11 bytes with its newline; the second 12.
        for (cap, at_once) in [(23, true), (22, true), (24, false), (BATCH_CAP, false)] {
            let r = rig(cap, false);
            let mut first = Box::pin(r.send("{\"id\":123}", true));
            assert!(poll(first.as_mut()).is_pending());
            let mut second = Box::pin(r.send("{\"id\":4567}", true));
            let polled = poll(second.as_mut());
            assert_eq!(polled.is_ready(), at_once, "{cap}");
            if at_once {
                assert_eq!(r.writes(), vec!["{\"id\":123}\n{\"id\":4567}\n".to_owned()]);
            } else {
                assert!(r.writes().is_empty(), "{cap}");
            }
            assert!(matches!(poll(first.as_mut()), Poll::Ready(Ok(()))), "{cap}");
            if !at_once {
                assert!(matches!(poll(second.as_mut()), Poll::Ready(Ok(()))), "{cap}");
            }
            assert_eq!(r.writes().len(), 1, "{cap}");
        }
    }
}
