//! The stdio driver's input read on a thread of its own
//! ([`serve_direct_threaded`](super::serve_direct_threaded)).
//!
//! The thread blocks in `read` and runs the core on each line itself,
//! with the runtime entered: a line costs the runtime nothing unless what
//! the core does with it does (queues a reply, starts a task). The
//! driver's task only writes, and learns of the end of the input from
//! the thread.
//!
//! - The gate ([`gate`](super::gate)) holds nothing back here: the core
//!   does not run in the driver's task, so what a line queues wakes the
//!   writer as an item sent from any other thread does.
//! - The thread waits while the queue is at its cap, as the reader in the
//!   task does, and the writer wakes it once under the cap.
//! - Once the driver's reader is dropped (the driver ended or was
//!   dropped), the thread hands the core nothing more: that drop waits
//!   for a line being handled, and the thread looks at `stop` before the
//!   next one. It can only notice after its `read` returns, so it stays
//!   blocked until the next line or the end of the input.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::backlog::reading_paused;

use super::{Input, Line, LineReader, Pause, deliver};

/// How many bytes the thread reads at most at a time.
const READ_BUFFER: usize = 8 * 1024;

/// What the driver and the thread share.
#[derive(Debug, Default)]
struct Feed {
    /// Set when the driver's reader is dropped: nothing more is handed to
    /// the core.
    stop: AtomicBool,
    /// Held while the core runs on a line, and by the reader's drop once
    /// `stop` is set (so no line is being handled after it).
    delivering: Mutex<()>,
}

/// Sets `stop` and wakes the thread if paused, when the driver's reader
/// is dropped.
struct StopOnDrop {
    feed: Arc<Feed>,
    pause: Arc<Pause>,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.feed.stop.store(true, Ordering::Release);
        drop(self.feed.delivering.lock().unwrap_or_else(PoisonError::into_inner));
        self.pause.wake_parked();
    }
}

/// The driver's reader: starts the thread, then is ready when the input
/// ended, with the core (an error if reading failed or the core panicked
/// on the thread).
pub(super) async fn read<R, F>(
    runtime: Handle,
    input: R,
    max_line_bytes: usize,
    pause: Arc<Pause>,
    on_input: F,
) -> io::Result<F>
where
    R: io::Read + Send + 'static,
    F: FnMut(Input<'_>) + Send + 'static,
{
    let feed = Arc::new(Feed::default());
    let (done, ended) = oneshot::channel();
    let _stop = StopOnDrop { feed: feed.clone(), pause: pause.clone() };
    std::thread::Builder::new().name("mcp-stdio-in".into()).spawn(move || {
        let _entered = runtime.enter();
        let mut on_input = on_input;
        let read = read_lines(input, max_line_bytes, &pause, &feed, &mut on_input);
        // The core goes back with the end: it lives as long as the
        // driver, as when read in the driver's task (the queue it sends
        // on does not close before what is queued is written).
        let _ = done.send((read, on_input));
    })?;
    let (read, on_input) = match ended.await {
        Ok(ended) => ended,
        Err(_) => return Err(io::Error::other("the stdio input thread panicked")),
    };
    read?;
    Ok(on_input)
}

/// The thread's loop: ends at the end of the input, a read's error, or
/// `stop`.
fn read_lines<R: io::Read>(
    input: R,
    max_line_bytes: usize,
    pause: &Pause,
    feed: &Feed,
    on_input: &mut impl FnMut(Input<'_>),
) -> io::Result<()> {
    let input = io::BufReader::with_capacity(READ_BUFFER, input);
    let mut lines = LineReader::new(input, max_line_bytes);
    loop {
        if reading_paused(pause.backlog.len(), pause.max) {
            pause.wait_under_cap_blocking(&feed.stop);
            if feed.stop.load(Ordering::Acquire) {
                return Ok(());
            }
        }
        let found = lines.next_blocking()?;
        if found == Line::Eof {
            return Ok(());
        }
        let _delivering = feed.delivering.lock().unwrap_or_else(PoisonError::into_inner);
        if feed.stop.load(Ordering::Acquire) {
            return Ok(());
        }
        deliver(found, lines.line(), max_line_bytes, on_input);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::sync::mpsc;

    use tokio::io::{AsyncReadExt as _, DuplexStream};

    use super::super::{Ended, serve_threaded};
    use super::*;
    use crate::outgoing::{self, Outgoing};

    /// Sends on its channel when dropped: the core's closure, dropped when
    /// the thread ends.
    struct Dropped(mpsc::Sender<()>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    /// What a core saw: each input as text.
    fn text(input: Input<'_>) -> String {
        match input {
            Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
            Input::Oversized { max_line_bytes } => format!("over {max_line_bytes}"),
        }
    }

    /// A core that echoes each input, with its queue, what it saw and
    /// word of the thread being done with it.
    struct Echo<C> {
        queue: outgoing::OutgoingQueue,
        core: C,
        /// Each input as text.
        seen: mpsc::Receiver<String>,
        /// Sent when the core is dropped (the thread is done with it).
        ended: mpsc::Receiver<()>,
    }

    /// [`Echo`]: a line `exit` queues an exit instead.
    fn echo() -> Echo<impl FnMut(Input<'_>) + Send + 'static> {
        let (tx, queue) = outgoing::queue();
        let (seen_tx, seen) = mpsc::channel();
        let (ended_tx, ended) = mpsc::channel();
        let dropped = Dropped(ended_tx);
        let core = move |input: Input<'_>| {
            let _keep = &dropped;
            let text = text(input);
            if text == "exit" {
                let _ = tx.send(Outgoing::Exit(5));
            } else {
                let _ = tx.send(Outgoing::RawLine(text.clone().into_bytes()));
            }
            let _ = seen_tx.send(text);
        };
        Echo { queue, core, seen, ended }
    }

    async fn read_all(mut host: DuplexStream) -> String {
        let mut got = String::new();
        host.read_to_string(&mut got).await.unwrap();
        got
    }

    #[tokio::test]
    async fn lines_are_read_on_the_thread_and_what_they_queued_written_before_the_end() {
        let (input, mut client) = io::pipe().unwrap();
        // Room for a few bytes at a time: what the lines queue is still
        // being written when the input ends.
        let (output, host) = tokio::io::duplex(4);
        let Echo { queue, core, seen, ended } = echo();
        client.write_all(b"one\r\n\n  \r\n0123456789abc\ntwo\nthree").unwrap();
        drop(client);
        let serving = serve_threaded(input, output, 8, 1024, queue, core);
        let (served, written) = tokio::join!(serving, read_all(host));
        assert_eq!(served.unwrap(), Ended::InputClosed);
        assert_eq!(written, "one\nover 8\ntwo\nthree\n");
        ended.recv().unwrap();
        assert_eq!(seen.try_iter().collect::<Vec<_>>(), ["one", "over 8", "two", "three"]);
    }

    #[tokio::test]
    async fn the_thread_reads_no_line_while_the_queue_is_at_its_cap_and_resumes() {
        const LINES: usize = 50;
        const CAP: usize = 3;
        let (input, mut client) = io::pipe().unwrap();
        // Nothing is read from the output until every line is written to
        // the input: the queue fills up to the cap.
        let (output, host) = tokio::io::duplex(8);
        let (tx, queue) = outgoing::queue();
        let backlog = queue.backlog();
        let (ended_tx, ended) = mpsc::channel();
        let dropped = Dropped(ended_tx);
        // The count of unwritten items each time the core got a line.
        let queued = Arc::new(Mutex::new(Vec::new()));
        let seen = queued.clone();
        let core = move |input: Input<'_>| {
            let _keep = &dropped;
            seen.lock().unwrap().push(backlog.len());
            let _ = tx.send(Outgoing::RawLine(text(input).into_bytes()));
        };
        let feed = std::thread::spawn(move || {
            for i in 0..LINES {
                writeln!(client, "line {i}").unwrap();
            }
        });
        let serving = serve_threaded(input, output, 64, CAP, queue, core);
        let (served, written) = tokio::join!(serving, read_all(host));
        feed.join().unwrap();
        assert_eq!(served.unwrap(), Ended::InputClosed);
        let expected: String = (0..LINES).map(|i| format!("line {i}\n")).collect();
        assert_eq!(written, expected);
        ended.recv().unwrap();
        let queued = queued.lock().unwrap();
        assert_eq!(queued.len(), LINES);
        assert!(queued.iter().all(|&n| n < CAP), "a line read at the cap: {queued:?}");
    }

    #[tokio::test]
    async fn an_exit_ends_the_driver_and_the_thread_hands_over_nothing_after() {
        let (input, mut client) = io::pipe().unwrap();
        let (output, host) = tokio::io::duplex(1024);
        let Echo { queue, core, seen, ended } = echo();
        client.write_all(b"one\nexit\n").unwrap();
        let served = serve_threaded(input, output, 64, 1024, queue, core).await;
        assert_eq!(served.unwrap(), Ended::Exit(5));
        // The thread is blocked in `read`: its next line is not handed
        // over, and it ends.
        client.write_all(b"late\n").unwrap();
        ended.recv().unwrap();
        assert_eq!(seen.try_iter().collect::<Vec<_>>(), ["one", "exit"]);
        drop(client);
        assert_eq!(read_all(host).await, "one\n");
    }

    #[tokio::test]
    async fn the_driver_dropped_while_the_thread_is_blocked_hands_over_nothing_more() {
        use std::future::Future as _;
        let (input, mut client) = io::pipe().unwrap();
        let (output, host) = tokio::io::duplex(1024);
        let Echo { queue, core, seen, ended } = echo();
        let mut serving = Box::pin(serve_threaded(input, output, 64, 1024, queue, core));
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        // Started: the thread reads.
        assert!(serving.as_mut().poll(&mut cx).is_pending());
        client.write_all(b"one\n").unwrap();
        assert_eq!(seen.recv().unwrap(), "one");
        // Blocked in `read` again (or about to be) when the driver goes.
        drop(serving);
        client.write_all(b"two\n").unwrap();
        ended.recv().unwrap();
        assert!(seen.try_recv().is_err(), "a line handed over after the driver was dropped");
        drop(client);
        // Nothing written after the driver was dropped.
        assert!(read_all(host).await.is_empty());
    }

    #[test]
    fn outside_a_runtime_it_fails_at_once() {
        let (input, _client) = io::pipe().unwrap();
        let (output, _host) = tokio::io::duplex(64);
        let (_tx, queue) = outgoing::queue();
        let serving = serve_threaded(input, output, 64, 1024, queue, |_| {});
        let waker = std::task::Waker::noop();
        let polled = std::pin::pin!(serving).poll(&mut std::task::Context::from_waker(waker));
        assert!(matches!(polled, std::task::Poll::Ready(Err(_))));
    }
}
