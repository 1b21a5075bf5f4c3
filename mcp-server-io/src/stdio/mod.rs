//! The stdio driver: newline-delimited JSON-RPC on a reader and a writer
//! (a process's stdin and stdout), with a cap on line length.
//!
//! It only moves bytes: each input line goes to the caller's core, and the
//! core's [`Outgoing`] queue is written by one writer, one compact JSON
//! message per line. [`stdin`] and [`stdout`] give this process's own
//! pipes to it without a thread hop per read and write when they are pipes
//! or Unix sockets.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Waker};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, oneshot};

use crate::backlog::{DEFAULT_MAX_BACKLOG, reading_paused};
use crate::outgoing::{Backlog, Outgoing, OutgoingQueue};

mod gate;
mod pipes;
pub use pipes::{HostInput, HostOutput, stdin, stdout};

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
    /// The core queued [`Outgoing::Exit`] with this code; everything queued
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
    mut on_input: impl FnMut(Input<'_>),
) -> io::Result<Ended>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // The reader and the writer run in this one task, never at once; the
    // writer owns the queue, the reader reads its count. The writer is
    // polled after the reader, so what a line queued is written in the
    // same turn, without the queue waking the task ([`gate`]).
    let gate = Arc::new(gate::Gate::default());
    let pause = Pause {
        backlog: queue.backlog(),
        max: max_backlog,
        paused: AtomicBool::new(false),
        drained: Notify::new(),
    };
    let mut writer = Writer {
        out: tokio::io::BufWriter::new(output),
        queue,
        pause: &pause,
        scratch: Vec::new(),
        gate: &gate,
        gate_waker: Waker::from(gate.clone()),
    };
    let (eof_tx, eof_rx) = oneshot::channel::<()>();
    let reading = async {
        let mut lines = LineReader::new(BufReader::new(input), max_line_bytes);
        loop {
            if reading_paused(pause.backlog.len(), pause.max) {
                pause.wait_under_cap().await;
            }
            match lines.next().await? {
                Line::Complete => {
                    let line = lines.line();
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        gate.reading(|| on_input(Input::Line(line)));
                    }
                }
                Line::TooLong => gate.reading(|| on_input(Input::Oversized { max_line_bytes })),
                Line::Eof => break,
            }
        }
        let _ = eof_tx.send(());
        // Stay pending: the writer finishes the session.
        std::future::pending::<io::Result<Ended>>().await
    };
    tokio::select! {
        biased;
        read = reading => read,
        written = writer.run(eof_rx) => written,
    }
}

/// The reader's pause while the queue is at its cap.
#[derive(Debug)]
struct Pause {
    /// How many items wait in the writer's queue.
    backlog: Backlog,
    max: usize,
    /// Set while the reader waits for `drained`.
    paused: AtomicBool,
    drained: Notify,
}

impl Pause {
    /// Returns once fewer than the cap wait unwritten.
    async fn wait_under_cap(&self) {
        while reading_paused(self.backlog.len(), self.max) {
            self.paused.store(true, Ordering::Relaxed);
            // A wake-up given before this wait is kept by the `Notify`.
            self.drained.notified().await;
        }
    }

    /// After the writer took an item: wakes a paused reader once the queue
    /// is under the cap.
    fn took_one(&self) {
        if self.paused.load(Ordering::Relaxed) && !reading_paused(self.backlog.len(), self.max) {
            self.paused.store(false, Ordering::Relaxed);
            self.drained.notify_one();
        }
    }
}

#[derive(Debug)]
struct Writer<'a, W> {
    out: tokio::io::BufWriter<W>,
    queue: OutgoingQueue,
    pause: &'a Pause,
    scratch: Vec<u8>,
    gate: &'a gate::Gate,
    /// The gate as a waker, registered on the queue.
    gate_waker: Waker,
}

impl<W: AsyncWrite + Unpin> Writer<'_, W> {
    /// Writes queued items until `eof` fires, then writes what is left in
    /// the queue and returns.
    async fn run(&mut self, mut eof: oneshot::Receiver<()>) -> io::Result<Ended> {
        loop {
            tokio::select! {
                biased;
                item = std::future::poll_fn(|cx| {
                    self.gate.follow(cx.waker());
                    self.queue.poll_recv(&mut Context::from_waker(&self.gate_waker))
                }) => match item {
                    Some(item) => {
                        if let Some(code) = self.write(item).await? {
                            return Ok(Ended::Exit(code));
                        }
                    }
                    None => {
                        self.out.flush().await?;
                        return Ok(Ended::CoreGone);
                    }
                },
                _ = &mut eof => break,
            }
            // Write whatever else is ready before paying for a flush.
            while let Ok(item) = self.queue.try_recv() {
                if let Some(code) = self.write(item).await? {
                    return Ok(Ended::Exit(code));
                }
            }
            self.out.flush().await?;
        }
        while let Ok(item) = self.queue.try_recv() {
            if let Some(code) = self.write(item).await? {
                return Ok(Ended::Exit(code));
            }
        }
        self.out.flush().await?;
        Ok(Ended::InputClosed)
    }

    /// Writes one item; `Some(code)` (after a flush) for an exit.
    async fn write(&mut self, item: Outgoing) -> io::Result<Option<i32>> {
        self.pause.took_one();
        match item {
            Outgoing::Message { .. } | Outgoing::RawReply { .. } => {
                self.scratch.clear();
                item.encode_into(&mut self.scratch).map_err(io::Error::other)?;
                self.scratch.push(b'\n');
                self.out.write_all(&self.scratch).await?;
            }
            Outgoing::RawLine(line) => {
                self.out.write_all(&line).await?;
                self.out.write_all(b"\n").await?;
            }
            Outgoing::Exit(code) => {
                self.out.flush().await?;
                return Ok(Some(code));
            }
        }
        Ok(None)
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
/// reading goes on. A last line without a newline still counts.
#[derive(Debug)]
pub struct LineReader<R> {
    input: R,
    line: Vec<u8>,
    max: usize,
    too_long: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader of lines of at most `max` bytes (line ending excluded).
    pub fn new(input: R, max: usize) -> Self {
        LineReader { input, line: Vec::new(), max, too_long: false }
    }

    /// The line [`LineReader::next`] last found complete.
    pub fn line(&self) -> &[u8] {
        self.line.strip_suffix(b"\r").unwrap_or(&self.line)
    }

    /// Reads up to the end of the next line.
    pub async fn next(&mut self) -> io::Result<Line> {
        self.line.clear();
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(if self.too_long {
                    self.too_long = false;
                    Line::TooLong
                } else if self.line.is_empty() {
                    Line::Eof
                } else {
                    Line::Complete
                });
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
            self.input.consume(used);
            if newline.is_some() {
                if self.too_long {
                    self.too_long = false;
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Complete);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::jsonrpc::{Message, Notification};

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
