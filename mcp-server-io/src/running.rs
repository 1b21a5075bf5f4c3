//! Where the requests a handler answers later run: a task each (the
//! default), or in the driver's own task, beside it
//! ([`Session::run_requests_beside`](crate::Session::run_requests_beside)).
//!
//! Beside the driver a request costs no task of its own: it is first
//! polled right after the driver handed it over, in the same wake-up, and
//! its reply is written by the driver in the wake-up that ends it, where a
//! task of its own would be started, woken, and then wake the driver's
//! writer. A request or the driver woken while the runner is polling (by
//! the driver, another request or another thread) is polled before the
//! runner returns, with no wake-up of the task; or, when the runner stops
//! after [`ROUNDS`] rounds to let the runtime's other tasks run, in the
//! task's next wake-up, which it asks for. Requests may be handed over
//! from any thread; those handed over before the driver was woken are
//! polled before it, so a request read on the input's thread starts
//! before the answer to a later line is written.
//!
//! A request's waker and abort flag ([`JobState`], an `Arc`) are reused
//! by a later request once its job is done and nothing else holds them
//! (no handle to stop it, no waker kept by what it waited on): a stale
//! abort or wake-up then has nothing to reach, and a state still held
//! somewhere is left to its holders, detached from its slot, and a new one
//! made. A wake-up names its job's slot and the slot's generation (counted
//! up at each job it takes), so one that comes late for a job done never
//! polls the next job in that slot.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Forwarded by the handler with no future of its own
    /// ([`Session::forward`](crate::Session::forward)), the session's
    /// `n`th: stopped by its hook (none until the forwarding is done).
    Forwarded { n: u64, hook: Option<CancelHook> },
}

/// What stops a request forwarded with
/// [`Session::forward`](crate::Session::forward) (its cancellation sent on
/// to where it was forwarded): run once, when the request is cancelled,
/// with no lock of the session held (it may end the request at once, and
/// [`Session::reply_forwarded`](crate::Session::reply_forwarded) then
/// finds it cancelled).
pub struct CancelHook(pub Box<dyn FnOnce() + Send>);

impl std::fmt::Debug for CancelHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelHook")
    }
}

impl Running {
    /// Stops the request: its future is dropped at the next chance, never
    /// answered.
    pub(crate) fn abort(&self) {
        match self {
            Running::Task(task) => task.abort(),
            Running::Beside(state) => {
                // The flag, then the job's place (in `wake_by_ref`); the
                // runner stores the place, then reads the flag before it
                // polls. All SeqCst: one of the two sees the other's
                // store. With release and acquire both could miss it (a
                // store still on its way while the other loads): the
                // abort finding no place to wake, the runner no flag, and
                // the job polled, left pending, never dropped. Before the
                // runner takes the job, the flag alone stops it (it is
                // read at the job's first poll).
                state.aborted.store(true, Ordering::SeqCst);
                state.wake_by_ref();
            }
            Running::Forwarded { .. } => {}
        }
    }

    /// Stops the request as [`abort`](Self::abort) does; a forwarded one
    /// by its hook (so with no lock of the session held).
    pub(crate) fn stop(self) {
        match self {
            Running::Forwarded { hook: Some(CancelHook(hook)), .. } => hook(),
            running => running.abort(),
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
    /// The states of jobs done that nothing else holds, for the next
    /// jobs (as many as ever ran at once, at most).
    spare: Vec<Arc<JobState>>,
    /// The places of the jobs woken since the runner last looked.
    woken: Vec<u64>,
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

    /// Gives the runner the requests handed over and woken since it last
    /// looked (its lists, empty, take their place: their room is kept);
    /// gives whether the driver was woken.
    fn take(&mut self, new: &mut Vec<(Job, Arc<JobState>)>, woken: &mut Vec<u64>) -> bool {
        std::mem::swap(&mut self.new, new);
        std::mem::swap(&mut self.woken, woken);
        std::mem::take(&mut self.driver_woken)
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
    /// The job's place in its runner: its slot and the slot's generation
    /// ([`place`]); `NO_PLACE` until the runner takes it and once it is
    /// done.
    place: AtomicU64,
    aborted: AtomicBool,
    shared: Arc<Shared>,
}

/// The place of a job not in a slot.
const NO_PLACE: u64 = u64::MAX;

/// A job's place: its slot and the generation of the slot's job.
fn place(slot: usize, generation: u32) -> u64 {
    ((slot as u64) << 32) | u64::from(generation)
}

/// The slot and generation of a place.
fn slot_of(place: u64) -> (usize, u32) {
    ((place >> 32) as usize, place as u32)
}

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
        // SeqCst: see `Running::abort`.
        let place = self.place.load(Ordering::SeqCst);
        let mut handover = self.shared.lock();
        if place != NO_PLACE {
            handover.woken.push(place);
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
        // The slot is given when the runner takes the job. A spare state
        // is held by nothing else: fresh as a new one.
        let state = handover.spare.pop().unwrap_or_else(|| {
            Arc::new(JobState {
                place: AtomicU64::new(NO_PLACE),
                aborted: AtomicBool::new(false),
                shared: self.shared.clone(),
            })
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
            spare: Vec::new(),
        })
    }
}

/// A job in its slot.
struct Taken {
    job: Job,
    state: Arc<JobState>,
    waker: Waker,
}

/// A slot: its job, if any, and how many jobs it has taken (wrapping).
#[derive(Default)]
struct Slot {
    generation: u32,
    taken: Option<Taken>,
}

/// An attached runner: the requests it runs, dropped with it (and the
/// runner detached).
pub(crate) struct Attached {
    shared: Arc<Shared>,
    /// What the driver is polled with ([`Shared`]'s `Wake`).
    driver_waker: Waker,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// The hand-over's lists, swapped in and out to keep their room.
    new: Vec<(Job, Arc<JobState>)>,
    woken: Vec<u64>,
    /// States freed since the hand-over was last locked.
    spare: Vec<Arc<JobState>>,
}

impl Attached {
    /// Polls the requests handed over or woken, then the driver when it
    /// was woken (it may hand requests over and write what ended), and so
    /// on while either has something to do (a request that ends queues its
    /// reply, which wakes the driver's writer).
    ///
    /// The requests first: each round takes, under one lock, the requests
    /// handed over or woken and the driver's wake-up, and polls them in
    /// that order. A request handed over before the driver was woken
    /// (from another thread: the input's, which then queues the answer to
    /// a later line) is so first polled before the driver writes what woke
    /// it, as a task of its own queued before the driver's would be on a
    /// current-thread runtime. Polled after it, a request was seen to
    /// start only once the host had the answer to a later line, and had
    /// cancelled it meanwhile: dropped before it started, it had called
    /// no one, and the server it calls was told of no cancellation.
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
            handover.take(&mut self.new, &mut self.woken)
        };
        for round in 1..=ROUNDS {
            self.poll_jobs();
            if poll_driver {
                let mut driver_cx = Context::from_waker(&self.driver_waker);
                if let Poll::Ready(out) = driver.as_mut().poll(&mut driver_cx) {
                    self.shared.lock().busy = false;
                    return Poll::Ready(out);
                }
            }
            let mut handover = self.shared.lock();
            handover.spare.append(&mut self.spare);
            let idle =
                handover.new.is_empty() && handover.woken.is_empty() && !handover.driver_woken;
            if idle || round == ROUNDS {
                // Nothing more, or still busy after the last round: what
                // is left (requests handed over or woken, the driver's
                // wake-up) stays in the hand-over, taken by the next poll,
                // after the runtime's other tasks (the task is woken
                // below). Nothing is taken for a round that does not come.
                handover.busy = false;
                if idle {
                    return Poll::Pending;
                }
                break;
            }
            poll_driver = handover.take(&mut self.new, &mut self.woken);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Gives the requests taken a slot each, then polls them and those
    /// woken. A request that ends queues its reply, which wakes the
    /// driver's writer: noted as `driver_woken`, seen after this.
    fn poll_jobs(&mut self) {
        for (job, state) in self.new.drain(..) {
            let slot = self.free.pop().unwrap_or(self.slots.len());
            if slot == self.slots.len() {
                self.slots.push(Slot::default());
            }
            let free = &mut self.slots[slot];
            free.generation = free.generation.wrapping_add(1);
            let place = place(slot, free.generation);
            // SeqCst with the abort's flag: see `Running::abort`.
            state.place.store(place, Ordering::SeqCst);
            let waker = Waker::from(state.clone());
            free.taken = Some(Taken { job, state, waker });
            self.woken.push(place);
        }
        for i in 0..self.woken.len() {
            let place = self.woken[i];
            self.poll_slot(place);
        }
        self.woken.clear();
    }
}

impl Attached {
    /// Polls the job at `place` (a stale wake-up finds its slot empty, or
    /// another job there, of another generation, and polls nothing),
    /// dropped when aborted or done.
    fn poll_slot(&mut self, place: u64) {
        let (slot, generation) = slot_of(place);
        let Some(Slot { generation: now, taken: Some(taken) }) = self.slots.get_mut(slot) else {
            return;
        };
        if *now != generation {
            return;
        }
        let done = taken.state.aborted.load(Ordering::SeqCst)
            || taken.job.as_mut().poll(&mut Context::from_waker(&taken.waker)).is_ready();
        if done {
            // Dropped here, outside every lock.
            let Some(Taken { job, state, waker }) = self.slots[slot].taken.take() else { return };
            drop((job, waker));
            self.free.push(slot);
            if let Some(spare) = reusable(state) {
                self.spare.push(spare);
            }
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
            // The spare states hold the hand-over's `Shared`: not kept in it.
            (std::mem::take(&mut handover.new), std::mem::take(&mut handover.spare))
        };
        // Dropped outside the lock: a request's drop may send or wake.
        drop(new);
    }
}

/// A done job's state made fresh for another job, when nothing else holds
/// it (its `Running` handle dropped, no waker of it kept anywhere): no
/// stale abort or wake-up can then reach the job that reuses it. `None`
/// otherwise: the state is left to its holders, in no slot (their
/// wake-ups reach no job).
fn reusable(mut state: Arc<JobState>) -> Option<Arc<JobState>> {
    let Some(fresh) = Arc::get_mut(&mut state) else {
        state.place.store(NO_PLACE, Ordering::Release);
        return None;
    };
    *fresh.place.get_mut() = NO_PLACE;
    *fresh.aborted.get_mut() = false;
    Some(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// A job that counts its polls, ends once `done` is set, and notes its
    /// drop; the waker it was last polled with is kept in `waker` when
    /// `keep_waker` (as a channel it waits on would).
    struct Probe {
        polls: AtomicU32,
        done: AtomicBool,
        dropped: AtomicBool,
        keep_waker: bool,
        waker: Mutex<Option<Waker>>,
    }

    impl Probe {
        fn new(done: bool, keep_waker: bool) -> Arc<Probe> {
            Arc::new(Probe {
                polls: AtomicU32::new(0),
                done: AtomicBool::new(done),
                dropped: AtomicBool::new(false),
                keep_waker,
                waker: Mutex::new(None),
            })
        }

        fn job(self: &Arc<Self>) -> Job {
            struct Guard(Arc<Probe>);
            impl Drop for Guard {
                fn drop(&mut self) {
                    self.0.dropped.store(true, Ordering::SeqCst);
                }
            }
            let guard = Guard(self.clone());
            Box::pin(std::future::poll_fn(move |cx| {
                let probe = &guard.0;
                probe.polls.fetch_add(1, Ordering::SeqCst);
                if probe.keep_waker {
                    *probe.waker.lock().unwrap() = Some(cx.waker().clone());
                }
                if probe.done.load(Ordering::SeqCst) { Poll::Ready(()) } else { Poll::Pending }
            }))
        }

        fn polls(&self) -> u32 {
            self.polls.load(Ordering::SeqCst)
        }
    }

    /// Runs the runner once, beside a driver that never ends.
    fn run(attached: &mut Attached) {
        let mut driver = std::pin::pin!(std::future::pending::<()>());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(attached.poll(&mut cx, driver.as_mut()).is_pending());
    }

    fn state_of(running: &Running) -> Arc<JobState> {
        match running {
            Running::Beside(state) => state.clone(),
            Running::Task(_) | Running::Forwarded { .. } => panic!("handed to a runner"),
        }
    }

    fn hand_over(beside: &Beside, probe: &Arc<Probe>) -> Running {
        beside.hand_over(probe.job()).unwrap_or_else(|_| panic!("a runner is attached"))
    }

    /// The plain case: a done job whose handle was dropped (as the session
    /// drops it before the job ends) gives its state to the next job, and
    /// that job is stopped by its own handle as with a new state.
    #[test]
    fn a_done_jobs_state_is_reused_and_aborts_the_next_job() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        let first = Probe::new(true, false);
        let running = hand_over(&beside, &first);
        let reused = Arc::as_ptr(&state_of(&running));
        drop(running);
        run(&mut attached);
        assert_eq!(first.polls(), 1);
        assert!(first.dropped.load(Ordering::SeqCst));

        let second = Probe::new(false, false);
        let running = hand_over(&beside, &second);
        assert_eq!(Arc::as_ptr(&state_of(&running)), reused);
        run(&mut attached);
        assert_eq!(second.polls(), 1);
        running.abort();
        run(&mut attached);
        assert_eq!(second.polls(), 1, "an aborted job is dropped, not polled");
        assert!(second.dropped.load(Ordering::SeqCst));
    }

    /// A handle kept past its job's end: the state is not reused, and that
    /// handle's abort does not reach the job now in the same slot.
    #[test]
    fn abort_of_a_done_job_leaves_the_next_job_in_its_slot() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        let first = Probe::new(true, false);
        let stale = hand_over(&beside, &first);
        run(&mut attached);
        assert!(first.dropped.load(Ordering::SeqCst));

        let second = Probe::new(false, false);
        let running = hand_over(&beside, &second);
        assert!(!Arc::ptr_eq(&state_of(&stale), &state_of(&running)));
        run(&mut attached);
        assert_eq!(attached.slots.len(), 1, "the slot is reused");
        stale.abort();
        run(&mut attached);
        assert!(!second.dropped.load(Ordering::SeqCst), "the next job is not aborted");
        assert_eq!(second.polls(), 1, "nor woken");
        second.done.store(true, Ordering::SeqCst);
        running.abort();
        drop(running);
        run(&mut attached);
        assert!(second.dropped.load(Ordering::SeqCst));
    }

    /// A waker kept past its job's end: the state is not reused, and its
    /// wake-up does not poll the job now in the same slot.
    #[test]
    fn a_stale_wake_does_not_poll_the_next_job_in_its_slot() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        let first = Probe::new(true, true);
        let running = hand_over(&beside, &first);
        let first_state = Arc::as_ptr(&state_of(&running));
        drop(running);
        run(&mut attached);
        let stale = first.waker.lock().unwrap().take().unwrap();

        let second = Probe::new(false, false);
        let running = hand_over(&beside, &second);
        assert_ne!(Arc::as_ptr(&state_of(&running)), first_state);
        run(&mut attached);
        assert_eq!(second.polls(), 1);
        assert_eq!(attached.slots.len(), 1, "the slot is reused");
        stale.wake();
        run(&mut attached);
        assert_eq!(second.polls(), 1, "a stale wake-up polls nothing");

        // The job's own waker still does.
        second.done.store(true, Ordering::SeqCst);
        state_of(&running).wake_by_ref();
        run(&mut attached);
        assert_eq!(second.polls(), 2);
        assert!(second.dropped.load(Ordering::SeqCst));
    }

    /// Jobs at once each get a state of their own, spares and new ones
    /// alike; the spares kept by a detached runner's hand-over are let go
    /// (they hold the hand-over).
    #[test]
    fn jobs_at_once_get_distinct_states_and_spares_go_with_the_runner() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        for round in 0..3 {
            let probes: Vec<_> = (0..4).map(|_| Probe::new(false, false)).collect();
            let running: Vec<_> = probes.iter().map(|p| hand_over(&beside, p)).collect();
            let mut states: Vec<_> = running.iter().map(|r| Arc::as_ptr(&state_of(r))).collect();
            states.sort();
            states.dedup();
            assert_eq!(states.len(), 4, "round {round}");
            run(&mut attached);
            // Woken as their own wakers would, nothing held after.
            let wakers: Vec<_> = running.iter().map(|r| Waker::from(state_of(r))).collect();
            drop(running);
            for probe in &probes {
                probe.done.store(true, Ordering::SeqCst);
            }
            wakers.into_iter().for_each(Waker::wake);
            run(&mut attached);
            assert!(probes.iter().all(|p| p.dropped.load(Ordering::SeqCst)), "round {round}");
        }
        assert_eq!(beside.shared.lock().spare.len(), 4);
        drop(attached);
        assert!(beside.shared.lock().spare.is_empty());
        assert_eq!(Arc::strong_count(&beside.shared), 1);
    }

    /// A wake-up polls the job of its place only: the slot's job of the same
    /// generation; near misses (the slot's earlier or later generation,
    /// a slot past the end, no place) poll nothing.
    #[test]
    fn a_place_polls_only_its_own_generation() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        // Slot 0 has taken two jobs; the second runs.
        drop(hand_over(&beside, &Probe::new(true, false)));
        run(&mut attached);
        let probe = Probe::new(false, false);
        let _running = hand_over(&beside, &probe);
        run(&mut attached);
        assert_eq!((attached.slots.len(), attached.slots[0].generation), (1, 2));
        assert_eq!(probe.polls(), 1);
        let table = [
            (place(0, 2), true),
            (place(0, 1), false),
            (place(0, 3), false),
            (place(1, 2), false),
            (NO_PLACE, false),
        ];
        for (at, polls) in table {
            let before = probe.polls();
            attached.poll_slot(at);
            assert_eq!(probe.polls() - before, u32::from(polls), "place {at:#x}");
        }
        assert_eq!(slot_of(place(7, u32::MAX)), (7, u32::MAX));
    }

    /// The driver woken in the runner's last round (here by a job that
    /// keeps itself busy for every round): the round does not look again,
    /// and the wake-up stays for the task's next wake-up, which the runner
    /// asks for, where the driver is polled.
    #[test]
    fn a_driver_woken_in_the_last_round_is_polled_in_the_next_wake_up() {
        let beside = Beside::default();
        let mut attached = beside.attach().unwrap();
        let driver_polls = Arc::new(AtomicU32::new(0));
        let driver_waker = Arc::new(Mutex::new(None::<Waker>));
        let mut driver = {
            let (polls, waker) = (driver_polls.clone(), driver_waker.clone());
            Box::pin(std::future::poll_fn(move |cx| {
                polls.fetch_add(1, Ordering::SeqCst);
                *waker.lock().unwrap() = Some(cx.waker().clone());
                Poll::<()>::Pending
            }))
        };
        // Polled once a round (before the driver, polled in the first
        // only): wakes itself for the next one, and the driver in the
        // last.
        let job_polls = Arc::new(AtomicU32::new(0));
        let polls = job_polls.clone();
        let job: Job = Box::pin(std::future::poll_fn(move |cx| {
            let n = polls.fetch_add(1, Ordering::SeqCst) as usize + 1;
            if n == ROUNDS {
                driver_waker.lock().unwrap().as_ref().unwrap().wake_by_ref();
            }
            if n <= ROUNDS {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }));
        let _running = beside.hand_over(job).unwrap_or_else(|_| panic!("attached"));
        let woken = Arc::new(AtomicU32::new(0));
        struct Count(Arc<AtomicU32>);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let task = Waker::from(Arc::new(Count(woken.clone())));
        let mut cx = Context::from_waker(&task);
        assert!(attached.poll(&mut cx, driver.as_mut()).is_pending());
        assert_eq!(job_polls.load(Ordering::SeqCst) as usize, ROUNDS, "every round ran");
        assert_eq!(driver_polls.load(Ordering::SeqCst), 1);
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the task asked for its next wake-up");
        {
            let handover = beside.shared.lock();
            assert!(handover.driver_woken && handover.woken.len() == 1, "left for the next");
        }
        // The task's next wake-up.
        assert!(attached.poll(&mut cx, driver.as_mut()).is_pending());
        assert_eq!(driver_polls.load(Ordering::SeqCst), 2, "the driver's wake-up was kept");
        assert_eq!(job_polls.load(Ordering::SeqCst) as usize, ROUNDS + 1);
        assert_eq!(woken.load(Ordering::SeqCst), 1, "idle: no wake-up asked for");
    }

    /// Jobs handed over before the driver's wake-up are polled before the
    /// driver in the same round; a job the driver hands over, right after
    /// it in the same wake-up.
    #[test]
    fn jobs_handed_over_before_the_drivers_wake_up_are_polled_first() {
        let beside = Arc::new(Beside::default());
        let mut attached = beside.attach().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let handed = Arc::new(Mutex::new(Vec::<Job>::new()));
        let job = |name: &'static str| -> Job {
            let order = order.clone();
            Box::pin(std::future::poll_fn(move |_| {
                order.lock().unwrap().push(name);
                Poll::<()>::Pending
            }))
        };
        // The driver hands over what it is given when polled.
        let mut driver = {
            let (order, handed, beside) = (order.clone(), handed.clone(), beside.clone());
            Box::pin(std::future::poll_fn(move |_| {
                order.lock().unwrap().push("driver");
                for job in handed.lock().unwrap().drain(..) {
                    assert!(beside.hand_over(job).is_ok());
                }
                Poll::<()>::Pending
            }))
        };
        let mut cx = Context::from_waker(Waker::noop());
        // The driver's first poll; then idle.
        assert!(attached.poll(&mut cx, driver.as_mut()).is_pending());
        let _a = beside.hand_over(job("a")).unwrap_or_else(|_| panic!("attached"));
        handed.lock().unwrap().push(job("c"));
        Waker::from(beside.shared.clone()).wake();
        let _b = beside.hand_over(job("b")).unwrap_or_else(|_| panic!("attached"));
        assert!(attached.poll(&mut cx, driver.as_mut()).is_pending());
        assert_eq!(*order.lock().unwrap(), ["driver", "a", "b", "driver", "c"]);
    }

    /// Jobs handed over from another OS thread (as the stdio driver's
    /// input thread hands requests over), while the runner runs in a task
    /// of the runtime, on both runtimes: a third of them end at their
    /// first poll, a third are woken later from a third thread, and a
    /// third wait on the driver, which answers what its channel brings
    /// (as the stdio writer takes replies from its queue: the channel
    /// wakes it once, then not until it looks again). The last job to end
    /// tells the driver to end: every job ends, and the runner with it,
    /// round after round.
    #[test]
    fn jobs_handed_over_and_woken_from_other_threads_all_end() {
        use std::sync::mpsc;
        use std::time::Duration;
        use tokio::sync::{mpsc as channel, oneshot};

        const ROUNDS_OF_JOBS: usize = 1000;
        const JOBS: u32 = 32;
        let runtimes = [
            tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
        ];
        for (kind, runtime) in runtimes.iter().enumerate() {
            for round in 0..ROUNDS_OF_JOBS {
                let beside = Arc::new(Beside::default());
                let mut attached = beside.attach().unwrap();
                let ended = Arc::new(AtomicU32::new(0));
                // What the driver answers (`None`: the last job ended).
                let (to_driver, mut asks) =
                    channel::unbounded_channel::<Option<oneshot::Sender<()>>>();
                let driver = async move {
                    while let Some(Some(answer)) = asks.recv().await {
                        let _ = answer.send(());
                    }
                };
                let runner = runtime.spawn(async move {
                    let mut driver = std::pin::pin!(driver);
                    std::future::poll_fn(|cx| attached.poll(cx, driver.as_mut())).await;
                });
                // The thread that wakes the jobs of the second kind.
                let (to_waker, senders) = mpsc::channel::<oneshot::Sender<()>>();
                let waker = std::thread::spawn(move || {
                    for sender in senders {
                        let _ = sender.send(());
                    }
                });
                let handle = runtime.handle().clone();
                let (feed_beside, feed_ended) = (beside.clone(), ended.clone());
                let feed = std::thread::spawn(move || {
                    let _entered = handle.enter();
                    for i in 0..JOBS {
                        let (sender, woken) = oneshot::channel::<()>();
                        // The sender goes to the waking thread or, for the
                        // third kind, with the job to the driver.
                        let (sender, to_send) =
                            if i % 3 == 1 { (Some(sender), None) } else { (None, Some(sender)) };
                        let (ended, to_driver) = (feed_ended.clone(), to_driver.clone());
                        let job: Job = Box::pin(async move {
                            match i % 3 {
                                0 => {}
                                1 => {
                                    let _ = woken.await;
                                }
                                _ => {
                                    let _ = to_driver.send(to_send);
                                    let _ = woken.await;
                                }
                            }
                            if ended.fetch_add(1, Ordering::SeqCst) + 1 == JOBS {
                                let _ = to_driver.send(None);
                            }
                        });
                        assert!(feed_beside.hand_over(job).is_ok(), "a runner is attached");
                        if let Some(sender) = sender {
                            to_waker.send(sender).unwrap();
                        }
                    }
                });
                // The runner runs while the threads hand over and wake.
                let done = runtime
                    .block_on(async { tokio::time::timeout(Duration::from_secs(5), runner).await });
                feed.join().unwrap();
                waker.join().unwrap();
                assert!(
                    done.is_ok(),
                    "runtime {kind}, round {round}: {} of {JOBS} jobs ended",
                    ended.load(Ordering::SeqCst)
                );
            }
        }
    }
}
