//! The queue's wake-up for the stdio driver's writer, held back while the
//! reader hands a line to the core.
//!
//! The reader and the writer share one task. Without this, the reply a
//! core queues while the reader hands it a line wakes that same task (the
//! writer registered it on the queue when the queue was last empty): the
//! runtime then turns once more for nothing, looking for I/O events
//! without waiting (a system call) and polling both halves again, once a
//! call. The writer is polled right after the reader in the same turn
//! (`biased`), so what the reader's line queued is written without that
//! wake-up; only items queued from elsewhere (a handler's own task,
//! another thread) need it, and theirs go through.
//!
//! With the input read on a thread of its own
//! ([`serve_direct_threaded`](super::serve_direct_threaded)) nothing is
//! held back: the core runs on that thread, never in the writer's task,
//! so every item it queues wakes the writer as any other thread's does.
//! The gate then only spares the writer a look at a queue not woken since
//! it was found empty.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Wake, Waker};

/// What the writer registers on the queue instead of the task's waker.
#[derive(Debug, Default)]
pub(super) struct Gate {
    /// The task's waker, as the writer was last polled with.
    task: Mutex<Option<Waker>>,
    /// Set while the reader runs the core on one line.
    reading: AtomicBool,
    /// Set when the writer finds the queue empty (its wake-up is then
    /// registered on it), cleared by that wake-up: while set, nothing has
    /// been sent since, and the queue holds nothing.
    idle: AtomicBool,
}

impl Gate {
    /// Records the waker the writer is polled with (kept when it wakes
    /// the same task).
    pub(super) fn follow(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
            *task = Some(waker.clone());
        }
    }

    /// Whether the queue may hold something (it woke since it was last
    /// found empty, or was never looked at): the writer polls it only
    /// then. Marks it empty first, so a wake-up during the poll that
    /// follows is kept; [`took`](Self::took) undoes that when the poll
    /// found an item (more may follow, with no wake-up).
    pub(super) fn take_woken(&self) -> bool {
        // SeqCst: a send whose wake-up came before this is seen by the
        // writer's look at the queue that follows.
        !self.idle.swap(true, Ordering::SeqCst)
    }

    /// The writer's poll of the queue found an item.
    pub(super) fn took(&self) {
        self.idle.store(false, Ordering::SeqCst);
    }

    /// Runs `f` (the core on one line) with wake-ups held back: the
    /// writer is polled after the reader in the same turn and takes what
    /// `f` queued without one.
    pub(super) fn reading<R>(&self, f: impl FnOnce() -> R) -> R {
        // SeqCst: a sender on another thread that still sees `true` after
        // the reader is done has its wake-up's effect seen by the writer's
        // next look at the queue (the queue registers the writer's waker
        // and looks again, synchronised with the sender's wake-up).
        self.reading.store(true, Ordering::SeqCst);
        let out = f();
        self.reading.store(false, Ordering::SeqCst);
        out
    }
}

impl Wake for Gate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.idle.store(false, Ordering::SeqCst);
        if self.reading.load(Ordering::SeqCst) {
            return;
        }
        let task = self.task.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(task) = task {
            task.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_looked_at_until_found_empty_and_again_once_woken() {
        let gate = Arc::new(Gate::default());
        let waker = Waker::from(gate.clone());
        // Never looked at: look.
        assert!(gate.take_woken());
        // Found empty, not woken since: nothing to look at.
        assert!(!gate.take_woken());
        // A send's wake-up, even while the reader runs (the task is not
        // woken then, the look is still due).
        gate.reading(|| waker.wake_by_ref());
        assert!(gate.take_woken());
        // An item found: more may follow with no wake-up.
        gate.took();
        assert!(gate.take_woken());
        assert!(!gate.take_woken());
    }
}
