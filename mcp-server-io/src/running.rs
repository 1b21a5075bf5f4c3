//! Where the requests a handler answers later run: a task each (the
//! default), or in the driver's own task, beside it
//! ([`Session::run_requests_beside`](crate::Session::run_requests_beside)).
//!
//! Beside the driver a request costs no task of its own: it is first
//! polled right after the driver handed it over, in the same wake-up, and
//! its reply is written by the driver in the wake-up that ends it, where a
//! task of its own would be started, woken, and then wake the driver's
//! writer. A request woken while the runner is polling (by the driver, or
//! by another request) is polled before the runner returns, with no
//! wake-up of the task.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

/// A request's work from its handler's future to its reply.
pub(crate) type Job = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// How a running request is stopped.
#[derive(Debug)]
pub(crate) enum Running {
    /// A task of its own.
    Task(tokio::task::AbortHandle),
    /// Beside the driver.
    Beside(Arc<JobState>),
}

impl Running {
    /// Stops the request: its future is dropped at the next chance, never
    /// answered.
    pub(crate) fn abort(&self) {
        match self {
            Running::Task(task) => task.abort(),
            Running::Beside(state) => {
                state.aborted.store(true, Ordering::Release);
                state.wake_by_ref();
            }
        }
    }
}

/// How many rounds of the driver and the requests one wake-up runs at
/// most before it gives the runtime's other tasks their turn.
const ROUNDS: usize = 8;

/// The hand-over from the session to the runner beside the driver.
#[derive(Default)]
pub(crate) struct Beside {
    shared: Arc<Shared>,
}

#[derive(Default)]
pub(crate) struct Shared {
    handover: Mutex<Handover>,
}

#[derive(Default)]
struct Handover {
    /// Whether a runner is attached.
    attached: bool,
    /// Whether the runner is inside its poll: what is handed over or woken
    /// meanwhile is picked up before it returns, with no wake-up.
    busy: bool,
    /// Jobs handed over since the runner last looked.
    new: Vec<(Job, Arc<JobState>)>,
    /// The slots of the jobs woken since the runner last looked.
    woken: Vec<usize>,
    /// Whether the driver was woken while the runner was busy.
    driver_woken: bool,
    /// The runner's task.
    waker: Option<Waker>,
}

impl Handover {
    /// Wakes the runner's task unless the runner is busy (it then looks
    /// again before it returns).
    fn wake_runner(&self) {
        if let (false, Some(waker)) = (self.busy, &self.waker) {
            waker.wake_by_ref();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Handover> {
        // No code path panics while holding the lock.
        self.handover.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One job's waker and abort flag.
#[derive(Debug)]
pub(crate) struct JobState {
    /// The job's slot in its runner (`NO_SLOT` until the runner takes it).
    slot: AtomicUsize,
    aborted: AtomicBool,
    shared: Arc<Shared>,
}

/// The slot of a job not yet taken by the runner.
const NO_SLOT: usize = usize::MAX;

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

/// The driver's waker: the driver is polled only when woken (a wake-up
/// for a request alone leaves it be), and while the runner is busy its
/// wake-up (a reply queued for its writer, most often) is only noted: the
/// runner polls the driver again before it returns, rather than have the
/// task woken to poll everything once more.
impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut handover = self.lock();
        handover.driver_woken = true;
        handover.wake_runner();
    }
}

impl Wake for JobState {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let slot = self.slot.load(Ordering::Acquire);
        let mut handover = self.shared.lock();
        if slot != NO_SLOT {
            handover.woken.push(slot);
        }
        handover.wake_runner();
    }
}

impl Beside {
    /// Hands a request's job to the runner, returning how to stop it;
    /// `Err(job)` when no runner is attached.
    pub(crate) fn hand_over(&self, job: Job) -> Result<Running, Job> {
        let mut handover = self.shared.lock();
        if !handover.attached {
            return Err(job);
        }
        // The slot is given when the runner takes the job.
        let state = Arc::new(JobState {
            slot: AtomicUsize::new(NO_SLOT),
            aborted: AtomicBool::new(false),
            shared: self.shared.clone(),
        });
        handover.new.push((job, state.clone()));
        handover.wake_runner();
        Ok(Running::Beside(state))
    }

    /// Attaches a runner; `None` when one already is.
    pub(crate) fn attach(&self) -> Option<Attached> {
        let mut handover = self.shared.lock();
        if handover.attached {
            return None;
        }
        handover.attached = true;
        // The driver's first poll.
        handover.driver_woken = true;
        Some(Attached {
            driver_waker: Waker::from(self.shared.clone()),
            shared: self.shared.clone(),
            slots: Vec::new(),
            free: Vec::new(),
            new: Vec::new(),
            woken: Vec::new(),
        })
    }
}

/// A job in its slot.
struct Slot {
    job: Job,
    state: Arc<JobState>,
    waker: Waker,
}

/// An attached runner: the requests it runs, dropped with it (and the
/// runner detached).
pub(crate) struct Attached {
    shared: Arc<Shared>,
    /// What the driver is polled with ([`Shared`]'s `Wake`).
    driver_waker: Waker,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// The hand-over's lists, swapped in and out to keep their room.
    new: Vec<(Job, Arc<JobState>)>,
    woken: Vec<usize>,
}

impl Attached {
    /// Polls the driver when it was woken (it may hand requests over and
    /// write what ended), then the requests handed over or woken, and so
    /// on while either has something to do (a request that ends queues its
    /// reply, which wakes the driver's writer).
    pub(crate) fn poll<F: Future>(
        &mut self,
        cx: &mut Context<'_>,
        mut driver: Pin<&mut F>,
    ) -> Poll<F::Output> {
        let mut poll_driver = {
            let mut handover = self.shared.lock();
            handover.busy = true;
            if !handover.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                handover.waker = Some(cx.waker().clone());
            }
            std::mem::take(&mut handover.driver_woken)
        };
        for _ in 0..ROUNDS {
            if poll_driver {
                let mut driver_cx = Context::from_waker(&self.driver_waker);
                if let Poll::Ready(out) = driver.as_mut().poll(&mut driver_cx) {
                    self.shared.lock().busy = false;
                    return Poll::Ready(out);
                }
            }
            {
                let mut handover = self.shared.lock();
                poll_driver = std::mem::take(&mut handover.driver_woken);
                if handover.new.is_empty() && handover.woken.is_empty() && !poll_driver {
                    handover.busy = false;
                    return Poll::Pending;
                }
                std::mem::swap(&mut handover.new, &mut self.new);
                std::mem::swap(&mut handover.woken, &mut self.woken);
            }
            for (job, state) in self.new.drain(..) {
                let slot = self.free.pop().unwrap_or(self.slots.len());
                state.slot.store(slot, Ordering::Release);
                let waker = Waker::from(state.clone());
                let taken = Some(Slot { job, state, waker });
                match self.slots.get_mut(slot) {
                    Some(free) => *free = taken,
                    None => self.slots.push(taken),
                }
                self.woken.push(slot);
            }
            // A reply queued wakes the driver's writer: noted as
            // `driver_woken`, seen in the next round.
            for i in 0..self.woken.len() {
                let slot = self.woken[i];
                self.poll_slot(slot);
            }
            self.woken.clear();
        }
        // Still busy: the rest after the runtime's other tasks.
        self.shared.lock().busy = false;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Attached {
    /// Polls the job in `slot` (a stale wake finds it empty, or another
    /// job there, which then has a spurious poll), dropped when aborted or
    /// done.
    fn poll_slot(&mut self, slot: usize) {
        let Some(Some(taken)) = self.slots.get_mut(slot) else { return };
        let done = taken.state.aborted.load(Ordering::Acquire)
            || taken.job.as_mut().poll(&mut Context::from_waker(&taken.waker)).is_ready();
        if done {
            // Dropped here, outside every lock.
            self.slots[slot] = None;
            self.free.push(slot);
        }
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let new = {
            let mut handover = self.shared.lock();
            handover.attached = false;
            handover.busy = false;
            handover.waker = None;
            handover.woken.clear();
            std::mem::take(&mut handover.new)
        };
        // Dropped outside the lock: a request's drop may send or wake.
        drop(new);
    }
}
