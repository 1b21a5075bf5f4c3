//! Warnings about dropped messages, rate-limited: a server that floods
//! must not turn each dropped message into a log line of its own.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Counts what was dropped and says when to report it: the first drop at
/// once, then at most one summary per [`interval`](Self::interval) with
/// the count since the last report.
///
/// ```
/// use std::time::{Duration, Instant};
/// use mcp_peer::DropReport;
///
/// let report = DropReport::new(Duration::from_secs(1));
/// let t0 = Instant::now();
/// assert_eq!(report.dropped(1, t0), Some(1)); // the first: at once
/// assert_eq!(report.dropped(1, t0 + Duration::from_millis(10)), None);
/// assert_eq!(report.dropped(3, t0 + Duration::from_millis(20)), None);
/// assert_eq!(report.dropped(1, t0 + Duration::from_secs(1)), Some(5));
/// assert_eq!(report.take_pending(), None);
/// ```
#[derive(Debug)]
pub struct DropReport {
    interval: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Dropped since the last report.
    pending: u64,
    /// When the last report was made.
    reported_at: Option<Instant>,
}

impl DropReport {
    /// The interval `mcp-peer` and the transports use: one second.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

    /// A report of at most one line per `interval`.
    pub fn new(interval: Duration) -> DropReport {
        DropReport { interval, state: Mutex::new(State::default()) }
    }

    /// The interval between two reports.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Counts `n` dropped at `now`; gives the count to report when a report
    /// is due (the first drop, or the interval has passed since the last
    /// report), else `None`.
    pub fn dropped(&self, n: u64, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.pending = state.pending.saturating_add(n);
        let due =
            state.reported_at.is_none_or(|at| now.saturating_duration_since(at) >= self.interval);
        if !due || state.pending == 0 {
            return None;
        }
        state.reported_at = Some(now);
        Some(std::mem::take(&mut state.pending))
    }

    /// What was dropped and not reported yet (for a last report when the
    /// stream ends); `None` when nothing is.
    pub fn take_pending(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Some(std::mem::take(&mut state.pending)).filter(|n| *n > 0)
    }
}

impl Default for DropReport {
    fn default() -> DropReport {
        DropReport::new(DropReport::DEFAULT_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_report_per_interval_with_the_count() {
        let report = DropReport::new(Duration::from_millis(100));
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        // A flood of 10,000 drops over 1 s: 10 or 11 reports, every drop
        // counted once.
        let mut reports = Vec::new();
        for i in 0..10_000u64 {
            if let Some(n) = report.dropped(1, ms(i / 10)) {
                reports.push(n);
            }
        }
        reports.extend(report.take_pending());
        assert!((10..=12).contains(&reports.len()), "{reports:?}");
        assert_eq!(reports.iter().sum::<u64>(), 10_000);
        assert_eq!(reports[0], 1);
        assert_eq!(report.take_pending(), None);
        // A clock that goes backwards reports nothing early.
        let report = DropReport::new(Duration::from_millis(100));
        assert_eq!(report.dropped(2, ms(500)), Some(2));
        assert_eq!(report.dropped(1, ms(0)), None);
        assert_eq!(report.dropped(0, ms(700)), Some(1));
        assert_eq!(report.dropped(0, ms(900)), None);
        assert_eq!(report.interval(), Duration::from_millis(100));
        assert_eq!(DropReport::default().interval(), DropReport::DEFAULT_INTERVAL);
    }
}
