//! A session's outgoing queue, drained by whichever task is there to do
//! it: a POST waiting for its reply, else the session's routing task.
//!
//! The reply to a POST used to travel from the session's queue to the
//! routing task, and from there to the POST's connection task: two task
//! wake-ups per request. Here a waiting POST takes the queue over (it
//! becomes its *owner*): the queue's wake-up goes to that POST's task,
//! which routes what is queued itself, its own reply included, and answers
//! in the same poll. With no POST waiting, the routing task drains the
//! queue as before.
//!
//! Invariants: items are routed in queue order (always under the queue's
//! lock); the queue's registered wake-up always reaches a task that drains
//! it (the owner, else the routing task: an owner that stops waiting hands
//! the queue back and drains what came meanwhile); an [`Outgoing::Exit`] is
//! left to the routing task, which awaits the exit hook.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;

use super::service::{HttpSession, Shared};
use crate::Handler;
use crate::outgoing::{Outgoing, OutgoingQueue};

/// A session's outgoing queue and who drains it.
pub(super) struct Pump {
    inner: Mutex<Inner>,
    /// The wake-up registered on the queue: it wakes the owner, else the
    /// routing task.
    waker: Arc<Target>,
    next_waiter: AtomicU64,
}

struct Inner {
    queue: OutgoingQueue,
    /// An exit taken from the queue, for the routing task.
    exit: Option<i32>,
    /// The queue has ended (the session is gone).
    closed: bool,
}

/// Whom the queue's wake-up goes to.
struct Target {
    slot: Mutex<Slot>,
    /// The queue woke since it was last drained to empty: until it does,
    /// it holds nothing and this wake-up is still registered on it, so a
    /// drain need not look (true at first: nothing is registered yet).
    woken: AtomicBool,
}

#[derive(Default)]
struct Slot {
    /// The waiting POST that drains the queue, by its waiter number.
    owner: Option<(u64, Waker)>,
    /// The routing task.
    router: Option<Waker>,
}

impl Wake for Target {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        let waker = {
            let slot = lock(&self.slot);
            slot.owner.as_ref().map(|(_, w)| w.clone()).or_else(|| slot.router.clone())
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Target {
    fn wake_router(&self) {
        let router = lock(&self.slot).router.clone();
        if let Some(router) = router {
            router.wake();
        }
    }
}

/// What the routing task is to do next.
pub(super) enum Next {
    /// Run the exit hook, then end the session.
    Exit(i32),
    /// The queue has ended.
    Closed,
}

impl Pump {
    pub(super) fn new(queue: OutgoingQueue) -> Self {
        Pump {
            inner: Mutex::new(Inner { queue, exit: None, closed: false }),
            waker: Arc::new(Target { slot: Mutex::default(), woken: AtomicBool::new(true) }),
            next_waiter: AtomicU64::new(1),
        }
    }

    /// The routing task's turn: drains the queue; ready with what the task
    /// must do itself (an exit, or nothing more to route).
    pub(super) fn poll_route<H: Handler>(
        &self,
        cx: &mut Context<'_>,
        shared: &Shared<H>,
        session: &HttpSession<H>,
    ) -> Poll<Next> {
        {
            let mut slot = lock(&self.waker.slot);
            if !slot.router.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                slot.router = Some(cx.waker().clone());
            }
        }
        let mut inner = self.lock();
        self.drain(&mut inner, shared, session);
        if let Some(code) = inner.exit.take() {
            return Poll::Ready(Next::Exit(code));
        }
        if inner.closed { Poll::Ready(Next::Closed) } else { Poll::Pending }
    }

    /// Awaits `reply` (a POST's own channel), draining the queue meanwhile
    /// as its owner, so that the reply needs no other task to reach it.
    ///
    /// When a drain that brought the reply also routed messages elsewhere
    /// (progress sent before the reply, for the GET stream), the reply
    /// waits one turn of the scheduler, so the tasks that write those go
    /// first, as they would if the routing task had woken them.
    pub(super) async fn wait<H: Handler, F: Future>(
        &self,
        shared: &Shared<H>,
        session: &HttpSession<H>,
        reply: F,
    ) -> F::Output {
        let id = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        let _release = Release { pump: self, id, shared, session };
        let mut reply = pin!(reply);
        let mut ready = None;
        std::future::poll_fn(|cx| {
            if let Some(out) = ready.take() {
                return Poll::Ready(out);
            }
            if let Poll::Ready(out) = reply.as_mut().poll(cx) {
                return Poll::Ready(out);
            }
            if !self.claim(id, cx.waker()) {
                return Poll::Pending;
            }
            let routed = {
                let mut inner = self.lock();
                self.drain(&mut inner, shared, session)
            };
            if routed == 0 {
                return Poll::Pending;
            }
            match reply.as_mut().poll(cx) {
                Poll::Ready(out) if routed > 1 => {
                    ready = Some(out);
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                polled => polled,
            }
        })
        .await
    }

    /// Runs `hand` (which gives the core a message) as the queue's owner,
    /// then routes what it queued, here and now: a request the handler
    /// answers at once has its reply routed (onto a POST's SSE stream, say)
    /// before the POST's response goes out, with no wake-up of the routing
    /// task. How many messages were routed. When another POST owns the
    /// queue, the queue is drained all the same (under its lock, in
    /// order); its owner keeps it.
    pub(super) fn route_now<H: Handler>(
        &self,
        shared: &Shared<H>,
        session: &HttpSession<H>,
        hand: impl FnOnce(),
    ) -> usize {
        let id = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        // A wake-up of the queue meanwhile goes nowhere: this drains next.
        self.claim(id, Waker::noop());
        // Hands the queue back (even if `hand` panics), draining what came
        // after the drain below.
        let release = Release { pump: self, id, shared, session };
        hand();
        let routed = {
            let mut inner = self.lock();
            self.drain(&mut inner, shared, session)
        };
        drop(release);
        routed
    }

    /// Ends the queue with the session: what it holds and what the core
    /// sends from now on is dropped (the streams are gone), as with the
    /// routing task that used to own it.
    pub(super) fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.queue.close();
        while inner.queue.try_recv().is_ok() {}
    }

    /// Makes waiter `id` the owner unless another one is; whether it is.
    fn claim(&self, id: u64, waker: &Waker) -> bool {
        let mut slot = lock(&self.waker.slot);
        match &mut slot.owner {
            Some((owner, known)) if *owner == id => {
                if !known.will_wake(waker) {
                    *known = waker.clone();
                }
                true
            }
            Some(_) => false,
            None => {
                slot.owner = Some((id, waker.clone()));
                true
            }
        }
    }

    /// Waiter `id` stops waiting: if it owned the queue, the routing task
    /// gets it back, and what came since the last drain (whose wake-up
    /// went to this waiter, which no longer drains) is routed now.
    fn release<H: Handler>(&self, id: u64, shared: &Shared<H>, session: &HttpSession<H>) {
        {
            let mut slot = lock(&self.waker.slot);
            match &slot.owner {
                Some((owner, _)) if *owner == id => slot.owner = None,
                _ => return,
            }
        }
        // A wake-up after this point goes to the routing task.
        if self.waker.woken.load(Ordering::SeqCst) {
            let mut inner = self.lock();
            self.drain(&mut inner, shared, session);
        }
    }

    /// Routes what is queued, in order, until the queue is empty (its
    /// wake-up registered), ended, or holds an exit (left for the routing
    /// task, which is woken). How many messages were routed.
    fn drain<H: Handler>(
        &self,
        inner: &mut Inner,
        shared: &Shared<H>,
        session: &HttpSession<H>,
    ) -> usize {
        if inner.exit.is_some() || inner.closed || !self.waker.woken.swap(false, Ordering::SeqCst) {
            return 0;
        }
        let waker = Waker::from(self.waker.clone());
        let mut cx = Context::from_waker(&waker);
        let mut routed = 0;
        loop {
            match inner.queue.poll_recv(&mut cx) {
                Poll::Ready(Some(item)) => match item {
                    Outgoing::Message { message, related, origin, .. } => {
                        session.dispatch(shared, &message, related, origin);
                        routed += 1;
                    }
                    Outgoing::RawReply { id, result, origin, .. } => {
                        let json = match shared.hooks.encode_raw_reply(&id, &result) {
                            Some(bytes) => bytes,
                            None => {
                                let mut json = Vec::with_capacity(result.get().len() + 48);
                                Outgoing::raw_reply_bytes(&id, &result, &mut json);
                                Bytes::from(json)
                            }
                        };
                        session.routes.dispatch(json, true, Some(id), origin);
                        routed += 1;
                    }
                    Outgoing::Exit(code) => {
                        inner.exit = Some(code);
                        self.waker.wake_router();
                        return routed;
                    }
                    // Raw lines are a stdio fault; HTTP has no place for them.
                    _ => {}
                },
                Poll::Ready(None) => {
                    inner.closed = true;
                    self.waker.wake_router();
                    return routed;
                }
                Poll::Pending => return routed,
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }
}

/// Hands the queue back when a waiting POST is done or dropped.
struct Release<'a, H: Handler> {
    pump: &'a Pump,
    id: u64,
    shared: &'a Shared<H>,
    session: &'a HttpSession<H>,
}

impl<H: Handler> Drop for Release<'_, H> {
    fn drop(&mut self) {
        self.pump.release(self.id, self.shared, self.session);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
