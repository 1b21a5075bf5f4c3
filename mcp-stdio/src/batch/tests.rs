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
                            let mut send = std::pin::pin!(r.send(&format!("{name}{i}"), others));
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

/// A writer that takes one byte a write.
struct OneByte(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for OneByte {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        lock(&self.0).extend_from_slice(&buf[..1]);
        Poll::Ready(Ok(1))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// `send_now` writes a lone line whole in one write, with no future, and
/// gives back unwritten any line `send` must take: another request
/// awaiting its answer, a line longer than a pipe takes whole, something
/// gathered before it, the writer busy or failing. A line taken only in
/// part ends the connection.
#[test]
fn a_lone_line_is_written_now_or_given_back_unwritten() {
    let line = |s: &str| format!("{s}\n").into_bytes();
    let now = |r: &Rig, l: &[u8], others: bool| {
        send_now(&r.batch, &r.link, &r.writer, l.to_vec(), others, &|| {})
    };
    let r = rig(BATCH_CAP, false);
    assert_eq!(now(&r, &line("{\"id\":1}"), false), Ok(()));
    assert_eq!(r.writes(), vec!["{\"id\":1}\n".to_owned()]);

    let long = line(&"x".repeat(WHOLE_WRITE));
    let failing = rig(BATCH_CAP, true);
    for (r, l, others) in [(&r, &line("{\"id\":2}"), true), (&r, &long, false)] {
        assert_eq!(now(r, l, others), Err(l.clone()));
    }
    assert_eq!(now(&failing, &line("{\"id\":3}"), false), Err(line("{\"id\":3}")));
    assert_eq!(r.writes().len(), 1);

    // A line gathered and not yet written: the lone one goes after it.
    let mut first = Box::pin(r.send("{\"id\":4}", true));
    assert!(poll(first.as_mut()).is_pending());
    assert_eq!(now(&r, &line("{\"id\":5}"), false), Err(line("{\"id\":5}")));
    assert!(matches!(poll(first.as_mut()), Poll::Ready(Ok(()))));
    // The writer held by another sender.
    let held = r.writer.try_lock().unwrap();
    assert_eq!(now(&r, &line("{\"id\":6}"), false), Err(line("{\"id\":6}")));
    drop(held);
    assert_eq!(r.writes(), vec!["{\"id\":1}\n".to_owned(), "{\"id\":4}\n".to_owned()]);

    let taken = Arc::new(Mutex::new(Vec::new()));
    let writer = tokio::sync::Mutex::new(Some(OneByte(taken.clone())));
    let abandoned = std::sync::atomic::AtomicBool::new(false);
    let abandon = || abandoned.store(true, Ordering::SeqCst);
    let (batch, link) = (Batch::new(BATCH_CAP), Link::detached());
    assert_eq!(send_now(&batch, &link, &writer, line("{}"), false, &abandon), Ok(()));
    assert!(abandoned.load(Ordering::SeqCst));
    assert_eq!(*lock(&taken), b"{");
}
