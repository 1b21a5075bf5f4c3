//! The one timer of a client's request deadlines.
//!
//! A task sleeps until the core's next deadline
//! ([`ClientCore::poll_timeout`](mcp_proto::client::ClientCore::poll_timeout))
//! and expires what is due there, instead of each request registering a
//! timer of its own with the runtime and dropping it again when its answer
//! comes (the usual case, and most of the cost of a timer). A request whose
//! deadline is earlier than the one the task sleeps until wakes it; one
//! that is later (every request of a client with one timeout, made after
//! the others) costs a comparison. The task holds the client weakly and
//! ends with it.
//!
//! It runs on the runtime of the request that armed it last: a request
//! made on another runtime (or after the task's runtime shut down) starts
//! it again there.
//!
//! The opening requests (the era probe, `initialize`) do not start it:
//! each is waited for under a timer of its own
//! ([`wait_opening`](Inner::wait_opening)), once a connection, so a
//! session left idle after its handshake holds no deadline task and a
//! start-up spawns none.

use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use mcp_proto::jsonrpc::RequestId;
use tokio::runtime::{Handle, Id};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::inner::Inner;
use crate::sync::lock;
use crate::transport::Transport;

/// The deadline task's handle and what it sleeps until.
#[derive(Default)]
pub(crate) struct Timer {
    state: Mutex<State>,
    /// Wakes the task to look at the deadlines again.
    wake: Arc<Notify>,
}

#[derive(Default)]
struct State {
    /// The task, and the runtime it runs on.
    task: Option<(Id, AbortHandle)>,
    /// The deadline the task sleeps until; `None` while it waits to be
    /// woken.
    armed: Option<Instant>,
}

impl Timer {
    /// Stops the task (the client is gone).
    pub(crate) fn stop(&self) {
        if let Some((_, task)) = lock(&self.state).task.take() {
            task.abort();
        }
    }
}

impl<T: Transport> Inner<T> {
    /// Makes sure a deadline the core registered is kept: the task runs
    /// on this runtime, and sleeps until `deadline` at the latest.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime (as a timer of its own would).
    pub(crate) fn arm_deadline(&self, deadline: Instant) {
        let handle = Handle::current();
        let here = handle.id();
        let mut state = lock(&self.timer.state);
        let running =
            state.task.as_ref().is_some_and(|(id, task)| *id == here && !task.is_finished());
        if !running {
            if let Some((_, old)) = state.task.take() {
                old.abort();
            }
            let task = handle.spawn(run(self.me.clone(), self.timer.wake.clone()));
            state.task = Some((here, task.abort_handle()));
            state.armed = None;
        }
        if state.armed.is_none_or(|armed| deadline < armed) {
            state.armed = Some(deadline);
            self.timer.wake.notify_one();
        }
    }
}

impl<T: Transport> Inner<T> {
    /// Waits for `wait` (an opening request's answer), expiring what is
    /// due when `deadline` passes, and again at the request's deadline as
    /// the core then gives it (a deadline that moved), until the request
    /// is done.
    pub(crate) async fn wait_opening<R>(
        &self,
        id: &RequestId,
        deadline: Instant,
        wait: impl Future<Output = R>,
    ) -> R {
        // Boxed, alone: a request's future (which holds this one) grows by
        // a pointer, and the exchange is not copied into a box.
        let mut sleep =
            Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)));
        tokio::pin!(wait);
        let mut armed = true;
        loop {
            tokio::select! {
                biased;
                outcome = &mut wait => return outcome,
                () = &mut sleep, if armed => {
                    self.expire();
                    match lock(&self.core).deadline(id) {
                        Some(next) => sleep.as_mut().reset(tokio::time::Instant::from_std(next)),
                        None => armed = false,
                    }
                }
            }
        }
    }
}

/// The deadline task: sleeps until the core's next deadline, expires what
/// is due, and again; waits to be woken while no request waits.
async fn run<T: Transport>(me: Weak<Inner<T>>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(inner) = me.upgrade() else { return };
            // Under the timer's lock, so a request armed meanwhile either
            // is seen here or finds `armed` set and wakes the task.
            let mut state = lock(&inner.timer.state);
            let next = lock(&inner.core).poll_timeout();
            state.armed = next;
            next
        };
        let Some(deadline) = next else {
            wake.notified().await;
            continue;
        };
        tokio::select! {
            biased;
            () = wake.notified() => {}
            () = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {
                let Some(inner) = me.upgrade() else { return };
                inner.expire();
            }
        }
    }
}
