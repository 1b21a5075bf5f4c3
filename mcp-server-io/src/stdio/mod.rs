//! The stdio driver: newline-delimited JSON-RPC on a reader and a writer
//! (a process's stdin and stdout), with a cap on line length.
//!
//! It only moves bytes: each input line goes to the caller's core, and the
//! core's [`Outgoing`](crate::Outgoing) queue is written by one writer,
//! one compact JSON message per line ([`serve_direct`] also lets a
//! forwarded call's reply be written by the task that has it, under the
//! same lock and order). [`stdin`] and [`stdout`] give this process's own
//! pipes to it without a thread hop per read and write when they are pipes
//! or Unix sockets.
//!
//! Which one: [`serve`] (or [`serve_with_backlog`]) for a server that
//! answers its lines itself; [`serve_direct`] when some replies come
//! from another task (a forwarded call's); [`serve_direct_threaded`]
//! when most lines are forwarded at once to where they go (a bridge in
//! front of stdio servers): it reads on a thread of its own that blocks
//! in `read`, so such a line costs the runtime nothing.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::Notify;

use crate::backlog::{DEFAULT_MAX_BACKLOG, reading_paused};
use crate::outgoing::{Backlog, OutgoingQueue};

mod gate;
mod out;
mod pipes;
mod thread;
use out::Out;
pub use pipes::{HostInput, HostOutput, stdin, stdin_blocking, stdout};

/// What the stdio driver hands the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Input<'a> {
    /// One non-blank line, without its line ending.
    Line(&'a [u8]),
    /// A line longer than the cap was discarded (the core usually answers
    /// a parse error with a `null` id).
    Oversized {
        /// The cap it went over.
        max_line_bytes: usize,
    },
}

/// How [`serve`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// The input closed; everything queued by then was written.
    InputClosed,
    /// The core queued [`Outgoing::Exit`](crate::Outgoing::Exit) with this code; everything queued
    /// before it was written and flushed. Ending the process is the
    /// caller's decision.
    Exit(i32),
    /// The core's queue closed (the core is gone).
    CoreGone,
}

/// Serves one session on `input` and `output` until the input closes or
/// the core asks to exit.
///
/// Reading and writing run side by side, so a client that is slow to read
/// does not stop the server reading, up to a point: while
/// [`DEFAULT_MAX_BACKLOG`] messages or more wait in the queue unwritten, no
/// further line is read until the writer brings them under it
/// ([`serve_with_backlog`] sets another cap; [`backlog`](crate::backlog)).
/// Each non-blank input line (a `\r` before
/// the `\n` dropped) goes to `on_input`; a line longer than
/// `max_line_bytes` is skipped up to its newline and reported as
/// [`Input::Oversized`]. When the input closes, what is already queued is
/// written; calls still running are abandoned.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use mcp_server_io::stdio::{Ended, Input, serve};
/// use mcp_server_io::{Outgoing, outgoing};
///
/// let (tx, queue) = outgoing::queue();
/// let mut output = Vec::new();
/// let ended = serve(&b"hello\n"[..], &mut output, 1024, queue, |input| {
///     if let Input::Line(line) = input {
///         let _ = tx.send(Outgoing::RawLine(line.to_vec()));
///     }
/// })
/// .await?;
/// assert_eq!((ended, &output[..]), (Ended::InputClosed, &b"hello\n"[..]));
/// # Ok(())
/// # }
/// ```
pub async fn serve<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    queue: OutgoingQueue,
    on_input: impl FnMut(Input<'_>),
) -> io::Result<Ended>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    serve_with_backlog(input, output, max_line_bytes, DEFAULT_MAX_BACKLOG, queue, on_input).await
}

/// [`serve`], reading no further line while `max_backlog` messages or more
/// (a cap of 0 is taken as 1) wait in `queue` unwritten
/// ([`reading_paused`]): a client that writes and never reads then blocks
/// on its own pipe instead of growing the server's queue without bound.
/// Reading resumes by itself once the writer brings the queue under the
/// cap; nothing is dropped.
pub async fn serve_with_backlog<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    max_backlog: usize,
    queue: OutgoingQueue,
    on_input: impl FnMut(Input<'_>),
) -> io::Result<Ended>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let read = |pause, gate| read_here(input, max_line_bytes, pause, gate, on_input);
    drive(output, max_backlog, false, queue, |_, _| {}, read).await
}

/// [`serve`], also letting a reply sent with
/// [`OutgoingSender::send_now`](crate::outgoing::OutgoingSender::send_now)
/// (a forwarded call's, [`Session::reply_forwarded`](crate::Session::reply_forwarded))
/// be written by the task that sends it, with no hop to the driver's
/// writer, when nothing waits to be written before it.
///
/// Messages stay whole lines in the order they were sent: a reply written
/// at once goes after everything sent before it (it is queued instead
/// while anything waits, in the queue or in a line the client's pipe has
/// not taken yet), and never inside another line. A line the pipe takes
/// only in part is finished by the driver's task. Once the driver has
/// ended, nothing more is written.
pub async fn serve_direct<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    queue: OutgoingQueue,
    on_input: impl FnMut(Input<'_>),
) -> io::Result<Ended>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let read = |pause, gate| read_here(input, max_line_bytes, pause, gate, on_input);
    drive(output, DEFAULT_MAX_BACKLOG, false, queue, share_output, read).await
}

/// [`serve_direct`], the input read on a thread of its own (named
/// `mcp-stdio-in`) that blocks in `read`, `on_input` run there, with the
/// runtime this is polled on entered (what it starts, spawns or sends
/// works as from the runtime's own tasks).
///
/// For this process's own stdin (`std::io::stdin()`, left blocking; not
/// [`stdin`], which makes the shared descriptor nonblocking) when what a
/// line asks for is mostly done from the line itself: a forwarded call
/// written at once where it goes ([`Session::forward`](crate::Session::forward))
/// and its answer written back by the task that reads it. Each line then
/// costs the thread a `read`, and the runtime nothing: no readiness
/// event, no turn of the driver's task. What a line queues instead (a
/// reply made at once, a request run later) wakes the driver's task from
/// that thread, which costs more than [`serve_direct`] reading in the
/// task itself, where the writer is polled right after the line: use
/// that one when lines are mostly answered here, or go through the
/// runtime anyway. Lines are handed over one at a time as read, each
/// forwarded call written on by itself: with many calls in flight at
/// once this costs more per call than [`serve_direct`].
///
/// The same lines, cap on their length, backlog pause (the thread waits
/// while [`DEFAULT_MAX_BACKLOG`] messages wait unwritten) and endings as
/// [`serve`]; `on_input` should not block (it delays the next line, and
/// ending the driver waits for the line it is handling). Once this
/// future ends or is dropped, the thread hands `on_input` nothing more;
/// it stays blocked in `read` until the next line or the end of the input
/// (for this process's stdin, the end of the process) and then ends.
/// Fails at once when polled outside a Tokio runtime, or when no thread
/// can be started. Under
/// [`Session::run_requests_beside`](crate::Session::run_requests_beside)
/// the requests answered later are handed over to its runner from the
/// thread, and run in the driver's task.
pub async fn serve_direct_threaded<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    queue: OutgoingQueue,
    on_input: impl FnMut(Input<'_>) + Send + 'static,
) -> io::Result<Ended>
where
    R: io::Read + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_threaded(input, output, max_line_bytes, DEFAULT_MAX_BACKLOG, queue, on_input).await
}

/// [`serve_direct_threaded`] with a cap on the backlog.
async fn serve_threaded<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    max_backlog: usize,
    queue: OutgoingQueue,
    on_input: impl FnMut(Input<'_>) + Send + 'static,
) -> io::Result<Ended>
where
    R: io::Read + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let read = |pause, _gate| thread::read(runtime, input, max_line_bytes, pause, on_input);
    drive(output, max_backlog, true, queue, share_output, read).await
}

/// Lets a reply sent now be written by its sender ([`serve_direct`]).
fn share_output<W: AsyncWrite + Unpin + Send + 'static>(queue: &OutgoingQueue, out: &Arc<Out<W>>) {
    queue.write_now_to(out.clone());
}

/// The most bytes the writer takes from the queue before writing them.
const BATCH: usize = 8 * 1024;

/// Serves one session: the writer here, `read` the reader (its future
/// ready when the input ended, with what is kept until the driver ends),
/// `share` given the queue and the output before anything is read;
/// `across` when the reader runs on another thread.
async fn drive<W, F, K>(
    output: W,
    max_backlog: usize,
    across: bool,
    queue: OutgoingQueue,
    share: impl FnOnce(&OutgoingQueue, &Arc<Out<W>>),
    read: impl FnOnce(Arc<Pause>, Arc<gate::Gate>) -> F,
) -> io::Result<Ended>
where
    W: AsyncWrite + Unpin,
    F: Future<Output = io::Result<K>>,
{
    // The writer owns the queue, the reader reads its count. Read in this
    // task, the reader and the writer never run at once, and the writer
    // is polled after the reader, so what a line queued is written in the
    // same turn, without the queue waking the task ([`gate`]).
    let gate = Arc::new(gate::Gate::default());
    let gate_waker = Waker::from(gate.clone());
    let out = Arc::new(Out::new(output, queue.backlog(), gate_waker.clone()));
    share(&queue, &out);
    // However this ends (returned or dropped), nothing is written after.
    let _closed = CloseOnDrop(&out);
    let pause = Arc::new(Pause::new(queue.backlog(), max_backlog, across));
    let eof = AtomicBool::new(false);
    let mut writer =
        Writer { out: &out, queue, pause: &pause, gate: &gate, gate_waker, eof: &eof, end: None };
    let reading = read(pause.clone(), gate.clone());
    let reading = async {
        let _kept = reading.await?;
        // Stay pending: the writer, polled next in this same turn, finishes
        // the session.
        eof.store(true, Ordering::Relaxed);
        std::future::pending::<io::Result<Ended>>().await
    };
    tokio::select! {
        biased;
        read = reading => read,
        written = std::future::poll_fn(|cx| writer.poll(cx)) => written,
    }
}

/// The reader in the driver's task: ready when the input ended.
async fn read_here<R: AsyncRead + Unpin>(
    input: R,
    max_line_bytes: usize,
    pause: Arc<Pause>,
    gate: Arc<gate::Gate>,
    mut on_input: impl FnMut(Input<'_>),
) -> io::Result<()> {
    let mut lines = LineReader::new(BufReader::new(input), max_line_bytes);
    loop {
        if reading_paused(pause.backlog.len(), pause.max) {
            pause.wait_under_cap().await;
        }
        match lines.next().await? {
            Line::Eof => return Ok(()),
            found => gate.reading(|| deliver(found, lines.line(), max_line_bytes, &mut on_input)),
        }
    }
}

/// Hands what [`LineReader`] found (not the end) to the core: a line
/// unless blank, or an oversized one's report.
fn deliver(found: Line, line: &[u8], max_line_bytes: usize, on_input: &mut impl FnMut(Input<'_>)) {
    match found {
        Line::Complete if !line.iter().all(u8::is_ascii_whitespace) => {
            on_input(Input::Line(line));
        }
        Line::TooLong => on_input(Input::Oversized { max_line_bytes }),
        Line::Complete | Line::Eof => {}
    }
}

/// Closes the output when the driver ends.
struct CloseOnDrop<'a, W>(&'a Out<W>);

impl<W> Drop for CloseOnDrop<'_, W> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The reader's pause while the queue is at its cap.
#[derive(Debug)]
struct Pause {
    /// How many items wait in the writer's queue.
    backlog: Backlog,
    max: usize,
    /// Whether the reader runs on a thread of its own (it then waits on
    /// `parked`, else on `drained`).
    across: bool,
    /// Set while the reader waits (or is about to).
    paused: AtomicBool,
    drained: Notify,
    /// Held by a reader on its own thread from its look at the count to
    /// its wait, so a wake-up cannot come between them.
    parked: Mutex<()>,
    wake: Condvar,
}

impl Pause {
    fn new(backlog: Backlog, max: usize, across: bool) -> Self {
        let (paused, drained) = (AtomicBool::new(false), Notify::new());
        Pause {
            backlog,
            max,
            across,
            paused,
            drained,
            parked: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Returns once fewer than the cap wait unwritten.
    async fn wait_under_cap(&self) {
        while reading_paused(self.backlog.len(), self.max) {
            self.paused.store(true, Ordering::Relaxed);
            // A wake-up given before this wait is kept by the `Notify`.
            self.drained.notified().await;
        }
    }

    /// [`wait_under_cap`](Self::wait_under_cap) for a reader on a thread
    /// of its own (`across`), blocking it; also returns once `stop` is
    /// set (then followed by [`wake_parked`](Self::wake_parked)).
    fn wait_under_cap_blocking(&self, stop: &AtomicBool) {
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        while !stop.load(Ordering::Acquire) {
            self.paused.store(true, Ordering::Relaxed);
            // Against the fence in `took_one`: either this look sees the
            // writer's last take, or the writer sees `paused` and wakes
            // this wait (taking `parked` first: after the wait began).
            fence(Ordering::SeqCst);
            if !reading_paused(self.backlog.len(), self.max) {
                break;
            }
            parked = self.wake.wait(parked).unwrap_or_else(PoisonError::into_inner);
        }
        self.paused.store(false, Ordering::Relaxed);
    }

    /// Wakes a reader waiting on its own thread (the queue under the cap,
    /// or its `stop` set).
    fn wake_parked(&self) {
        drop(self.parked.lock().unwrap_or_else(PoisonError::into_inner));
        self.wake.notify_one();
    }

    /// After the writer took an item: wakes a paused reader once the queue
    /// is under the cap.
    fn took_one(&self) {
        if self.across {
            // See `wait_under_cap_blocking`.
            fence(Ordering::SeqCst);
        }
        if self.paused.load(Ordering::Relaxed) && !reading_paused(self.backlog.len(), self.max) {
            self.paused.store(false, Ordering::Relaxed);
            if self.across {
                self.wake_parked();
            } else {
                self.drained.notify_one();
            }
        }
    }
}

#[derive(Debug)]
struct Writer<'a, W> {
    out: &'a Out<W>,
    queue: OutgoingQueue,
    pause: &'a Pause,
    gate: &'a gate::Gate,
    /// The gate as a waker, registered on the queue.
    gate_waker: Waker,
    /// Set by the reader when the input has closed (the writer is polled
    /// after it in the same turn).
    eof: &'a AtomicBool,
    /// How the session ends, once decided: returned when what came before
    /// it is written.
    end: Option<Ended>,
}

impl<W: AsyncWrite + Unpin> Writer<'_, W> {
    /// Writes queued items, in batches of about [`BATCH`] bytes each
    /// flushed, until the queue ends, an exit, or the input has closed and
    /// the queue is empty; ready then, with everything before the end
    /// written and flushed.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Ended>> {
        self.gate.follow(cx.waker());
        let mut out = self.out.lock();
        loop {
            // Taken under the output's lock: a reply written from elsewhere
            // finds the item in the buffer and waits behind it.
            let mut waiting = false;
            while self.end.is_none() && out.len() < BATCH {
                // Not woken since it was last found empty: it still is.
                let polled = if self.gate.take_woken() {
                    self.queue.poll_recv(&mut Context::from_waker(&self.gate_waker))
                } else {
                    Poll::Pending
                };
                match polled {
                    Poll::Ready(Some(item)) => {
                        self.gate.took();
                        self.pause.took_one();
                        if let Some(code) = out.push(&item)? {
                            self.end = Some(Ended::Exit(code));
                        }
                    }
                    Poll::Ready(None) => self.end = Some(Ended::CoreGone),
                    Poll::Pending => {
                        if self.eof.load(Ordering::Relaxed) {
                            self.end = Some(Ended::InputClosed);
                        }
                        waiting = true;
                        break;
                    }
                }
            }
            ready!(out.poll_drain(cx))?;
            if let Some(end) = self.end {
                return Poll::Ready(Ok(end));
            }
            if waiting {
                return Poll::Pending;
            }
        }
    }
}

/// What [`LineReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Line {
    /// A line, available from [`LineReader::line`] until the next call.
    Complete,
    /// A line over the limit, discarded.
    TooLong,
    /// The input ended.
    Eof,
}

/// Splits input at `\n` (dropping a `\r` before it), with a cap on line
/// length: an over-long line is skipped up to its newline and reported, and
/// reading goes on. A last line without a newline still counts. Reads
/// from a Tokio reader ([`next`](Self::next)) or from one that blocks
/// ([`next_blocking`](Self::next_blocking)).
#[derive(Debug)]
pub struct LineReader<R> {
    input: R,
    split: Split,
}

/// The line being put together.
#[derive(Debug)]
struct Split {
    line: Vec<u8>,
    max: usize,
    too_long: bool,
}

impl Split {
    /// Takes bytes from the start of `available` (empty: the input
    /// ended): how many it used, and what it found when it got to the end
    /// of a line or of the input.
    fn take(&mut self, available: &[u8]) -> (usize, Option<Line>) {
        if available.is_empty() {
            let found = if self.too_long {
                self.too_long = false;
                Line::TooLong
            } else if self.line.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            };
            return (0, Some(found));
        }
        let newline = memchr::memchr(b'\n', available);
        let chunk = &available[..newline.unwrap_or(available.len())];
        if !self.too_long {
            if self.line.len() + chunk.len() > self.max {
                self.too_long = true;
                self.line.clear();
            } else {
                self.line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(newline.is_some());
        if newline.is_none() {
            return (used, None);
        }
        if self.too_long {
            self.too_long = false;
            return (used, Some(Line::TooLong));
        }
        (used, Some(Line::Complete))
    }
}

impl<R> LineReader<R> {
    /// A reader of lines of at most `max` bytes (line ending excluded).
    pub fn new(input: R, max: usize) -> Self {
        LineReader { input, split: Split { line: Vec::new(), max, too_long: false } }
    }

    /// The line [`LineReader::next`] last found complete.
    pub fn line(&self) -> &[u8] {
        self.split.line.strip_suffix(b"\r").unwrap_or(&self.split.line)
    }
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Reads up to the end of the next line.
    pub async fn next(&mut self) -> io::Result<Line> {
        self.split.line.clear();
        loop {
            let available = self.input.fill_buf().await?;
            let (used, found) = self.split.take(available);
            self.input.consume(used);
            if let Some(found) = found {
                return Ok(found);
            }
        }
    }
}

impl<R: io::BufRead> LineReader<R> {
    /// [`next`](Self::next), from a reader that blocks: on a thread of
    /// its own, not in a task.
    pub fn next_blocking(&mut self) -> io::Result<Line> {
        self.split.line.clear();
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let (used, found) = self.split.take(available);
            self.input.consume(used);
            if let Some(found) = found {
                return Ok(found);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outgoing::Outgoing;
    use mcp_proto::jsonrpc::{Message, Notification};
    use std::pin::Pin;

    async fn split(input: &[u8], max: usize, buffer: usize) -> Vec<Result<String, Line>> {
        let mut reader = LineReader::new(BufReader::with_capacity(buffer, input), max);
        let mut out = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                Line::Complete => out.push(Ok(String::from_utf8_lossy(reader.line()).into_owned())),
                Line::Eof => return out,
                other => out.push(Err(other)),
            }
        }
    }

    #[tokio::test]
    async fn lines_split_with_a_cap_whatever_the_buffer_size() {
        type Case<'a> = (&'a [u8], usize, &'a [Result<&'a str, Line>]);
        let cases: &[Case<'_>] = &[
            (b"a\nbb\r\n\nccc", 10, &[Ok("a"), Ok("bb"), Ok(""), Ok("ccc")]),
            (b"short\ntoo long line\nok\n", 5, &[Ok("short"), Err(Line::TooLong), Ok("ok")]),
            (b"12345\n123456", 5, &[Ok("12345"), Err(Line::TooLong)]),
            (b"", 5, &[]),
        ];
        for (input, max, expected) in cases {
            let expected: Vec<Result<String, Line>> =
                expected.iter().map(|r| r.map(str::to_owned)).collect();
            for buffer in [1, 2, 3, 7, 64] {
                assert_eq!(split(input, *max, buffer).await, expected, "{input:?} buffer {buffer}");
            }
        }
    }

    /// Counts its wake-ups.
    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn a_reply_to_a_line_is_written_in_the_same_turn_and_others_wake_the_writer() {
        use std::future::Future;
        use tokio::io::AsyncWriteExt as _;
        let (mut client, server_side) = tokio::io::duplex(1024);
        let (tx, queue) = crate::outgoing::queue();
        let from_elsewhere = tx.clone();
        let mut output = Vec::new();
        let serving = serve(server_side, &mut output, 1024, queue, |input| {
            if let Input::Line(line) = input {
                let _ = tx.send(Outgoing::RawLine(line.to_vec()));
            }
        });
        let mut serving = Box::pin(serving);
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let woken = || count.0.load(Ordering::SeqCst);
        // Nothing to read or write: both halves wait.
        assert!(serving.as_mut().poll(&mut cx).is_pending());
        for (turn, line) in ["one", "two", "three"].into_iter().enumerate() {
            client.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            // The input woke the task; the queued reply did not.
            assert_eq!(woken(), 2 * turn + 1, "{line}");
            assert!(serving.as_mut().poll(&mut cx).is_pending());
            assert_eq!(woken(), 2 * turn + 1, "{line}: the line's own reply woke the task");
            // Queued from elsewhere, between turns: that wakes it.
            from_elsewhere.send(Outgoing::RawLine(format!("{line}+").into_bytes())).unwrap();
            assert_eq!(
                woken(),
                2 * turn + 2,
                "{line}: an item from elsewhere did not wake the writer"
            );
            assert!(serving.as_mut().poll(&mut cx).is_pending());
        }
        drop(client);
        drop(from_elsewhere);
        assert!(serving.as_mut().poll(&mut cx).is_ready());
        drop(serving);
        assert_eq!(output, b"one\none+\ntwo\ntwo+\nthree\nthree+\n");
    }

    /// What the pipe holds now, read without waiting.
    fn read_now(pipe: &mut tokio::io::DuplexStream) -> String {
        use tokio::io::{AsyncRead as _, ReadBuf};
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            let mut read = ReadBuf::new(&mut buf);
            match Pin::new(&mut *pipe).poll_read(&mut cx, &mut read) {
                Poll::Ready(Ok(())) if !read.filled().is_empty() => {
                    got.extend_from_slice(read.filled())
                }
                _ => return String::from_utf8(got).unwrap(),
            }
        }
    }

    fn reply(id: i64, text: &str) -> Outgoing {
        let result = serde_json::value::RawValue::from_string(format!(r#"{{"t":"{text}"}}"#));
        Outgoing::raw_reply(id.into(), result.unwrap(), 0)
    }

    fn reply_line(id: i64, text: &str) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"t\":\"{text}\"}}}}\n")
    }

    /// A direct stdio driver over in-memory pipes, not yet polled, and what
    /// a test drives it with.
    struct Direct<F> {
        /// The client's end of the driver's input.
        client: tokio::io::DuplexStream,
        /// The host's end of the driver's output.
        host: tokio::io::DuplexStream,
        tx: crate::outgoing::OutgoingSender,
        serving: Pin<Box<F>>,
        /// Wake-ups of the waker the driver is polled with.
        count: Arc<Count>,
    }

    /// [`Direct`], its output taking `room` bytes at a time.
    fn direct(room: usize) -> Direct<impl std::future::Future<Output = io::Result<Ended>>> {
        let (client, server_in) = tokio::io::duplex(1024);
        let (server_out, host) = tokio::io::duplex(room);
        let (tx, queue) = crate::outgoing::queue();
        let serving = Box::pin(serve_direct(server_in, server_out, 1024, queue, |_| {}));
        Direct { client, host, tx, serving, count: Arc::new(Count::default()) }
    }

    #[tokio::test]
    async fn a_reply_sent_now_is_written_by_its_sender_only_when_nothing_waits_before_it() {
        use std::future::Future;
        // Room for one short line at a time.
        let Direct { client: _client, mut host, tx, mut serving, count } = direct(64);
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let woken = || count.0.load(Ordering::SeqCst);
        // Sent before the driver runs: queued (it has not offered its
        // output yet), written when it does.
        tx.send_now(reply(1, "queued")).unwrap();
        assert_eq!(read_now(&mut host), "");
        assert!(serving.as_mut().poll(&mut cx).is_pending());
        assert_eq!(read_now(&mut host), reply_line(1, "queued"));

        // Nothing waits: written by the sender, the driver not woken.
        let before = woken();
        tx.send_now(reply(2, "now")).unwrap();
        assert_eq!((read_now(&mut host), woken()), (reply_line(2, "now"), before));

        // A notification queued and not yet written: the reply waits
        // behind it.
        let note = Message::Notification(Notification::new("n", None));
        tx.send(Outgoing::message(note, None, 0)).unwrap();
        tx.send_now(reply(3, "after")).unwrap();
        assert_eq!(read_now(&mut host), "");
        let mut both = String::new();
        while !both.ends_with(&reply_line(3, "after")) {
            assert!(serving.as_mut().poll(&mut cx).is_pending());
            both += &read_now(&mut host);
        }
        let note_line = "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n".to_owned();
        assert_eq!(both, note_line + &reply_line(3, "after"));

        // A line the pipe takes in part: the rest is the driver's to
        // write, and every reply meanwhile waits behind it, whole.
        let long = "x".repeat(100);
        tx.send_now(reply(4, &long)).unwrap();
        tx.send_now(reply(5, "next")).unwrap();
        let first = read_now(&mut host);
        assert_eq!(first.len(), 64, "{first}");
        // The pipe, read, wakes the driver, which writes the rest.
        assert!(woken() > before);
        let mut all = first;
        while !all.ends_with(&reply_line(5, "next")) {
            assert!(serving.as_mut().poll(&mut cx).is_pending());
            all += &read_now(&mut host);
        }
        assert_eq!(all, reply_line(4, &long) + &reply_line(5, "next"));

        // Ended (here by an exit): nothing more is written.
        tx.send(Outgoing::Exit(3)).unwrap();
        assert!(matches!(serving.as_mut().poll(&mut cx), Poll::Ready(Ok(Ended::Exit(3)))));
        // Given back: no driver is left to deliver it.
        assert!(tx.send_now(reply(6, "late")).is_err());
        assert_eq!(read_now(&mut host), "");
        drop(serving);
        let mut rest = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut host, &mut rest).await.unwrap();
        assert!(rest.is_empty(), "{rest:?}");
    }

    /// A reply whose result is borrowed goes out as the same reply owned
    /// would: written by its sender when nothing waits before it, else
    /// queued (a copy) behind what waits, and given back once the driver
    /// has ended.
    #[tokio::test]
    async fn a_borrowed_reply_sent_now_is_written_or_queued_as_an_owned_one() {
        use std::future::Future;

        use mcp_proto::jsonrpc::RequestId;
        let Direct { client: _client, mut host, tx, mut serving, count } = direct(1024);
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let text = |t: &str| serde_json::value::RawValue::from_string(format!(r#"{{"t":"{t}"}}"#));
        // Before the driver offered its output: queued.
        tx.send_raw_reply_now(RequestId::Number(1), &text("queued").unwrap(), 0).unwrap();
        assert_eq!(read_now(&mut host), "");
        assert!(serving.as_mut().poll(&mut cx).is_pending());
        assert_eq!(read_now(&mut host), reply_line(1, "queued"));
        // Nothing waits: written by the sender, the driver not woken.
        let before = count.0.load(Ordering::SeqCst);
        tx.send_raw_reply_now(RequestId::Number(2), &text("now").unwrap(), 0).unwrap();
        assert_eq!(read_now(&mut host), reply_line(2, "now"));
        assert_eq!(count.0.load(Ordering::SeqCst), before);
        // Behind a queued item: queued after it.
        tx.send(Outgoing::RawLine(b"first".to_vec())).unwrap();
        tx.send_raw_reply_now(RequestId::Number(3), &text("after").unwrap(), 0).unwrap();
        assert_eq!(read_now(&mut host), "");
        let mut both = String::new();
        while !both.ends_with(&reply_line(3, "after")) {
            assert!(serving.as_mut().poll(&mut cx).is_pending());
            both += &read_now(&mut host);
        }
        assert_eq!(both, "first\n".to_owned() + &reply_line(3, "after"));
        tx.send(Outgoing::Exit(0)).unwrap();
        assert!(matches!(serving.as_mut().poll(&mut cx), Poll::Ready(Ok(Ended::Exit(0)))));
        let late =
            tx.send_raw_reply_now(RequestId::Number(4), &text("late").unwrap(), 0).unwrap_err();
        assert_eq!(late.0, reply(4, "late"));
        assert_eq!(read_now(&mut host), "");
    }

    #[test]
    fn items_queued_from_other_threads_while_lines_are_read_are_all_written() {
        // Other threads send while the reader runs the core on lines (its
        // wake-ups held back then): none is left unwritten.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        const LINES: usize = 2000;
        const PER_THREAD: usize = 2000;
        let (tx, queue) = crate::outgoing::queue();
        let senders: Vec<_> = (0..2)
            .map(|t| {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    for i in 0..PER_THREAD {
                        tx.send(Outgoing::RawLine(format!("t{t} {i}").into_bytes())).unwrap();
                        // Spread over the reading and past its end.
                        if i % 16 == 0 {
                            std::thread::sleep(std::time::Duration::from_micros(20));
                        }
                    }
                })
            })
            .collect();
        let written = runtime.block_on(async {
            let (mut client, server_side) = tokio::io::duplex(64);
            let (mut out_w, mut out_r) = tokio::io::duplex(4096);
            let feed = async move {
                use tokio::io::AsyncWriteExt as _;
                for i in 0..LINES {
                    client.write_all(format!("l {i}\n").as_bytes()).await.unwrap();
                }
                // Kept open until every item is read back.
                client
            };
            let serving = serve(server_side, &mut out_w, 1024, queue, |input| {
                if let Input::Line(line) = input {
                    let _ = tx.send(Outgoing::RawLine(line.to_vec()));
                }
            });
            let read_back = async {
                use tokio::io::AsyncBufReadExt as _;
                let mut lines = BufReader::new(&mut out_r).lines();
                let mut n = 0;
                while n < LINES + 2 * PER_THREAD {
                    lines.next_line().await.unwrap().unwrap();
                    n += 1;
                }
                n
            };
            let bounded = tokio::time::timeout(std::time::Duration::from_secs(30), async {
                tokio::select! {
                    _ = serving => panic!("the driver ended"),
                    (n, _client) = async { tokio::join!(read_back, feed) } => n,
                }
            });
            bounded.await.expect("every item written within 30 s")
        });
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(written, LINES + 2 * PER_THREAD);
    }

    #[tokio::test]
    async fn inputs_reach_the_core_and_an_exit_stops_after_what_came_before() {
        let (tx, queue) = crate::outgoing::queue();
        let mut output = Vec::new();
        let mut seen = Vec::new();
        let input = b"one\n\n  \ntoo long a line\ntwo\n";
        let ended = serve(&input[..], &mut output, 8, queue, |input| {
            seen.push(match input {
                Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
                Input::Oversized { max_line_bytes } => format!("over {max_line_bytes}"),
            });
            if seen.len() == 3 {
                let note = Message::Notification(Notification::new("n", None));
                let _ = tx.send(Outgoing::message(note, None, 0));
                let _ = tx.send(Outgoing::Exit(7));
                let _ = tx.send(Outgoing::RawLine(b"never".to_vec()));
            }
        })
        .await
        .unwrap();
        assert_eq!(seen, ["one", "over 8", "two"]);
        assert_eq!(ended, Ended::Exit(7));
        assert_eq!(output, b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    }
}
