//! Small helpers every module of the session layer shares.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The current time on tokio's clock (so a paused clock in tests pauses the
/// deadlines too), as the core takes it.
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Locks a std mutex, recovering from poisoning (a panicking callback must
/// not wedge the client).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
