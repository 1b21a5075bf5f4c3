//! The reader's short poll before it parks ([`StdioOptions::reply_spin`]).
//!
//! When client and server sit on different CPUs, each waits for the other
//! by parking its thread, and waking a parked thread on an idle CPU is
//! slow where an idle CPU halts at once (a VM without guest halt polling:
//! tens of µs per wake-up, two per round trip). A reader that keeps
//! polling for a few tens of µs after it handed over a message is awake
//! when the answer to the next request comes, so only the server's
//! wake-up is paid. Polling yields the thread between tries, so a server
//! on the same CPU runs.
//!
//! It polls only while the client waits for an answer (asked after the
//! caller's turn): a reader with nothing awaited parks at once.
//!
//! It is adaptive, so it costs nothing where it does not help: an answer
//! that is already there at the first look after the caller had its turn,
//! or right after the first yield of the thread (client and server share
//! a CPU, or messages come in bursts), or two in a row that do not come
//! within the budget (a server that works for a while)
//! turns it off for the next [`BACK_OFF`] messages; an answer caught while
//! polling keeps it on.
//!
//! It does not poll at all where this thread may run on one CPU only (a
//! process pinned to one CPU, whose children the server and any bridge
//! in between inherit the pinning from; a one-CPU machine): whatever
//! answers runs only when this thread gives the CPU up, so parking hands
//! it over at once, where polling would yield it one round at a time (a
//! `sched_yield` each) and, through a bridge whose answer needs more than
//! one yield, would stay on.
//!
//! [`StdioOptions::reply_spin`]: crate::StdioOptions::reply_spin

use std::future::poll_fn;
use std::io;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};

use crate::codec::Frame;

/// How many messages the reader parks as usual after polling did not pay.
pub(crate) const BACK_OFF: u32 = 64;

/// The poll's budget on a thread that may run on `cpus` CPUs (`None`:
/// not known): none on one CPU, where nothing else runs while it polls.
pub(crate) fn budget_on(budget: Duration, cpus: Option<usize>) -> Duration {
    match cpus {
        Some(1) => Duration::ZERO,
        _ => budget,
    }
}

/// How one poll before parking ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A message was there before polling was needed, or right after the
    /// first yield of the thread (the server runs on this CPU): polling
    /// saves no wake-up.
    AlreadyThere,
    /// A message came while polling: parking would have paid a wake-up.
    Caught,
    /// The budget ran out: the reader parks.
    Expired,
}

/// Whether the reader polls before it parks, learned from how the last
/// polls ended.
#[derive(Debug)]
pub(crate) struct Spin {
    budget: Duration,
    /// Messages still read without polling.
    skip: u32,
    /// Whether the last poll ran out of budget.
    expired: bool,
    /// Whether the CPUs this thread may run on were read ([`budget_on`]).
    cpus_read: bool,
}

impl Spin {
    pub(crate) fn new(budget: Duration) -> Spin {
        Spin { budget, skip: 0, expired: false, cpus_read: false }
    }

    /// Whether to poll for the next message (counts one skipped message
    /// when not).
    pub(crate) fn wanted(&mut self) -> bool {
        if self.budget.is_zero() {
            return false;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    /// Reads the CPUs this thread may run on (once: the first time the
    /// reader is about to yield the thread, so neither a client's start nor
    /// an answer already there pays for the read, some ten system calls)
    /// and turns polling off for good on one CPU ([`budget_on`]): whether
    /// it did.
    fn off_on_one_cpu(&mut self) -> bool {
        self.cpus_read = true;
        let cpus = std::thread::available_parallelism().ok().map(usize::from);
        self.budget = budget_on(self.budget, cpus);
        self.budget.is_zero()
    }

    /// Learns from how a poll ended: one budget run out is forgiven (a
    /// wake-up slower than usual), two in a row are not.
    pub(crate) fn learn(&mut self, outcome: Outcome) {
        let expired = outcome == Outcome::Expired;
        self.skip = match outcome {
            Outcome::Caught => 0,
            Outcome::Expired if !self.expired => 0,
            Outcome::AlreadyThere | Outcome::Expired => BACK_OFF,
        };
        self.expired = expired && self.skip == 0;
    }

    /// The next frame of `frames`: when polling is [`wanted`](Self::wanted),
    /// first gives the other tasks a turn (the caller that was just handed
    /// a message writes its next request), then looks again between
    /// `std::thread::yield_now` calls until the budget runs out; then waits
    /// as usual.
    ///
    /// `awaited` says whether the client waits for an answer: asked once,
    /// after the caller's turn; when it waits for none (the next message
    /// may be a long time coming: a host that is still thinking, a
    /// notification), the reader parks at once and learns nothing.
    pub(crate) async fn next<S>(
        &mut self,
        frames: &mut S,
        awaited: impl Fn() -> bool,
    ) -> Option<io::Result<Frame>>
    where
        S: Stream<Item = io::Result<Frame>> + Unpin,
    {
        if self.wanted() {
            let until = Instant::now() + self.budget;
            let mut looks = 0u32;
            loop {
                let ready = poll_fn(|cx| {
                    Poll::Ready(match frames.poll_next_unpin(cx) {
                        Poll::Ready(frame) => Some(frame),
                        Poll::Pending => None,
                    })
                })
                .await;
                if let Some(frame) = ready {
                    // Looks 0 and 1 come before and after the caller's turn;
                    // look 2 after one yield of the thread, which a server
                    // on this CPU answers in.
                    self.learn(if looks <= 2 { Outcome::AlreadyThere } else { Outcome::Caught });
                    return frame;
                }
                if looks == 1 && !awaited() {
                    break;
                }
                if looks >= 1 {
                    if !self.cpus_read && self.off_on_one_cpu() {
                        break;
                    }
                    if Instant::now() >= until {
                        self.learn(Outcome::Expired);
                        break;
                    }
                    // A server on this CPU gets it.
                    std::thread::yield_now();
                }
                looks += 1;
                // The runtime runs the other tasks and looks at its I/O
                // without waiting before this task's next turn.
                tokio::task::yield_now().await;
            }
        }
        frames.next().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream pending (and waking itself) for its first `n` polls, then
    /// giving one line.
    fn pending_then(
        mut n: u32,
        line: &'static [u8],
    ) -> impl Stream<Item = io::Result<Frame>> + Unpin {
        futures_util::stream::poll_fn(move |cx| {
            if n > 0 {
                n -= 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(Some(Ok(Frame::Line(line.to_vec().into()))))
            }
        })
    }

    #[test]
    fn one_cpu_alone_turns_the_poll_off() {
        let budget = Duration::from_micros(50);
        let table = [
            (budget, Some(1), Duration::ZERO),
            (budget, Some(2), budget),
            (budget, Some(64), budget),
            (budget, None, budget),
            (Duration::ZERO, Some(1), Duration::ZERO),
            (Duration::ZERO, Some(2), Duration::ZERO),
            (Duration::from_nanos(1), Some(1), Duration::ZERO),
        ];
        for (budget, cpus, expected) in table {
            assert_eq!(budget_on(budget, cpus), expected, "{budget:?} on {cpus:?} CPUs");
            let mut s = Spin::new(budget_on(budget, cpus));
            assert_eq!(s.wanted(), !expected.is_zero(), "{budget:?} on {cpus:?} CPUs");
        }
    }

    #[tokio::test]
    async fn the_cpus_are_read_once_when_the_reader_first_would_yield() {
        // An answer there at the first look: the CPUs are not read.
        let budget = Duration::from_micros(50);
        let mut frames = futures_util::stream::iter([Ok(Frame::Line(b"x".to_vec().into()))]);
        let mut s = Spin::new(budget);
        s.next(&mut frames, || true).await.expect("an item").expect("no error");
        assert!(!s.cpus_read);
        // Pending past the caller's turn: read before the first yield, and
        // the budget follows the CPUs this thread may use.
        let mut frames = pending_then(2, b"y");
        let mut s = Spin::new(budget);
        s.next(&mut frames, || true).await.expect("an item").expect("no error");
        assert!(s.cpus_read);
        let cpus = std::thread::available_parallelism().ok().map(usize::from);
        assert_eq!(s.budget, budget_on(budget, cpus));
    }

    #[test]
    fn a_zero_budget_never_polls() {
        let mut s = Spin::new(Duration::ZERO);
        for _ in 0..3 {
            assert!(!s.wanted());
        }
    }

    #[test]
    fn an_answer_caught_while_polling_keeps_it_on() {
        let mut s = Spin::new(Duration::from_micros(50));
        assert!(s.wanted());
        s.learn(Outcome::Caught);
        assert!(s.wanted());
    }

    #[test]
    fn one_expired_budget_is_forgiven() {
        let mut s = Spin::new(Duration::from_micros(50));
        s.learn(Outcome::Expired);
        assert!(s.wanted());
        s.learn(Outcome::Caught);
        s.learn(Outcome::Expired);
        assert!(s.wanted(), "not two in a row");
    }

    #[test]
    fn an_answer_already_there_or_two_expired_budgets_back_off() {
        for outcomes in [&[Outcome::AlreadyThere][..], &[Outcome::Expired, Outcome::Expired]] {
            let mut s = Spin::new(Duration::from_micros(50));
            for outcome in outcomes {
                s.learn(*outcome);
            }
            let outcome = outcomes[0];
            for _ in 0..BACK_OFF {
                assert!(!s.wanted(), "{outcome:?}");
            }
            assert!(s.wanted(), "polls again after {BACK_OFF} messages");
        }
    }

    #[tokio::test]
    async fn frames_pass_through_whether_polled_or_not() {
        let lines = || {
            futures_util::stream::iter(
                [b"a".as_slice(), b"b", b"c"].map(|l| Ok(Frame::Line(l.to_vec().into()))),
            )
        };
        for budget in [Duration::ZERO, Duration::from_micros(50)] {
            let mut s = Spin::new(budget);
            let mut frames = lines();
            let mut got = Vec::new();
            while let Some(frame) = s.next(&mut frames, || true).await {
                match frame.expect("no error") {
                    Frame::Line(l) => got.push(l.to_vec()),
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert_eq!(got, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        }
    }

    #[tokio::test]
    async fn a_stream_that_stays_pending_is_still_read_after_the_budget() {
        // The first item comes only once the stream has been polled a few
        // times: the reader polls, gives up, and still gets it by waiting.
        let mut frames = pending_then(3, b"x");
        let mut s = Spin::new(Duration::from_nanos(1));
        let frame = s.next(&mut frames, || true).await.expect("an item").expect("no error");
        assert!(matches!(frame, Frame::Line(l) if l.as_ref() == b"x"));
        assert!(s.wanted(), "one budget run out is forgiven");
    }

    #[tokio::test]
    async fn with_no_answer_awaited_the_reader_parks_at_once_and_learns_nothing() {
        // Pending for its first five polls: polled twice (before and after
        // the caller's turn), then the reader parks instead of polling, and
        // the item still comes by waiting.
        let polls = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let seen = polls.clone();
        let mut frames = futures_util::stream::poll_fn(move |cx| {
            seen.set(seen.get() + 1);
            if seen.get() <= 5 {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(Some(Ok(Frame::Line(b"x".to_vec().into()))))
            }
        });
        let asked = std::cell::Cell::new(0u32);
        let mut s = Spin::new(Duration::from_secs(5));
        let frame = s
            .next(&mut frames, || {
                asked.set(asked.get() + 1);
                false
            })
            .await
            .expect("an item")
            .expect("no error");
        assert!(matches!(frame, Frame::Line(l) if l.as_ref() == b"x"));
        assert_eq!(asked.get(), 1, "asked once, after the caller's turn");
        assert_eq!((s.skip, s.expired), (0, false), "nothing learnt");
        assert!(s.wanted(), "polls again for the next message");
    }
}
