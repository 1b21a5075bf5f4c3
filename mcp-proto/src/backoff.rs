//! How long to wait before trying again, and when to stop: the one backoff
//! of the workspace (an event stream reopened, a subscription listened to
//! again, a supervised server reconnected).
//!
//! [`Backoff::wait`] is a pure function of the attempt's number, the wait a
//! server asked for (an SSE `retry` field) and a random draw: exponential
//! growth from [`initial`](Backoff::initial) by
//! [`multiplier`](Backoff::multiplier), capped at [`max`](Backoff::max),
//! with "full jitter" (the wait is drawn between nothing and that ceiling,
//! so clients that failed together do not come back together). A server's
//! `retry` is honoured as the shortest wait, but never below
//! [`retry_floor`](Backoff::retry_floor): a `retry: 0` cannot make a storm.
//!
//! [`Retries`] counts: the failures in a row (reset by whatever the caller
//! calls progress) against a limit, and gives the next wait or `None` when
//! the limit is reached. The randomness is the caller's: a
//! [`JitterSource`] (a closure will do), by default [`SystemJitter`], drawn
//! from the standard library's randomly keyed hasher.
//!
//! ```
//! use std::time::Duration;
//! use mcp_proto::backoff::{Backoff, Retries};
//!
//! let backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(10));
//! // Attempt 3 of a draw at the top of the range: 200 ms doubled twice.
//! assert_eq!(backoff.wait(3, None, 0.0), Duration::from_millis(800));
//!
//! // At most two failures in a row, the draws given by the caller.
//! let mut retries = Retries::with_jitter(backoff, Some(2), || 0.5);
//! assert_eq!(retries.next(None), Some(Duration::from_millis(100)));
//! assert_eq!(retries.next(None), Some(Duration::from_millis(200)));
//! assert_eq!(retries.next(None), None);
//! retries.succeeded();
//! assert_eq!(retries.next(None), Some(Duration::from_millis(100)));
//! assert_eq!(retries.attempts(), 3);
//! ```

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Exponential backoff with full jitter and a cap, honouring a server's
/// `retry`.
///
/// Without a server value, the wait before attempt `n` (from 1) has the
/// ceiling `initial * multiplier^(n-1)`, at most `max`, and is that ceiling
/// less a random share of up to [`jitter`](Self::jitter) of it (with the
/// default `jitter` of 1, anywhere from nothing to the ceiling). With a
/// server's `retry` `r` (raised to `retry_floor`, lowered to `max`): the
/// first two attempts wait exactly `r`, as the server asked; from the
/// third on the ceiling is `r * multiplier^(n-2)`, at most `max`, and the
/// wait is drawn between `r` and it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Backoff {
    /// The ceiling of the first wait (200 ms).
    pub initial: Duration,
    /// The longest wait (30 s).
    pub max: Duration,
    /// The growth factor between attempts (2.0; values below 1, and NaN,
    /// count as 1).
    pub multiplier: f64,
    /// The share of each wait that is random, from 0 (none: always the
    /// ceiling) to 1 (full jitter; the default). Jitter only shortens a
    /// wait.
    pub jitter: f64,
    /// The shortest wait a server's `retry` can ask for (100 ms).
    pub retry_floor: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(Duration::from_millis(200), Duration::from_secs(30))
    }
}

impl Backoff {
    /// A backoff from `initial` to `max`, doubling, with full jitter and a
    /// 100 ms floor under a server's `retry`.
    pub const fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            multiplier: 2.0,
            jitter: 1.0,
            retry_floor: Duration::from_millis(100),
        }
    }

    /// The wait before attempt `attempt` (from 1; 0 counts as 1), given
    /// the server's `retry` if it set one, for a random draw `unit` in
    /// `[0, 1)` (out of range draws are clamped): 0 gives the ceiling, a
    /// draw near 1 the shortest wait. Never longer than
    /// [`max`](Self::max).
    pub fn wait(&self, attempt: u32, server_retry: Option<Duration>, unit: f64) -> Duration {
        let max = nanos(self.max);
        let multiplier = if self.multiplier >= 1.0 { self.multiplier } else { 1.0 };
        let grow = |from: f64, steps: u32| -> f64 {
            if from == 0.0 {
                return 0.0;
            }
            // `powi` of a large exponent is infinite, which `min` caps.
            (from * multiplier.powi(steps.min(1024) as i32)).min(max)
        };
        let (floor, ceiling) = match server_retry {
            None => (0.0, grow(nanos(self.initial), attempt.saturating_sub(1))),
            Some(retry) => {
                let asked = nanos(retry.max(self.retry_floor)).min(max);
                (asked, grow(asked, attempt.saturating_sub(2)).max(asked))
            }
        };
        let share = fraction(self.jitter) * fraction(unit);
        let wait = ceiling - (ceiling - floor) * share;
        Duration::from_nanos(wait.round().clamp(0.0, max) as u64)
    }

    /// The wait before attempt `attempt` (from 1), with no server value and
    /// a fresh draw from [`SystemJitter`].
    pub fn delay(&self, attempt: u32) -> Duration {
        self.wait(attempt, None, SystemJitter.unit())
    }
}

/// A duration in nanoseconds, as a float (exact below 2^53 ns, about 104
/// days; longer ones are rounded, which no wait notices).
fn nanos(d: Duration) -> f64 {
    d.as_nanos() as f64
}

/// `x` in `[0, 1]`; NaN is 0.
fn fraction(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

/// Where the random draws of a backoff come from: each call gives a number
/// in `[0, 1)`. A closure `FnMut() -> f64` is one; so is [`SystemJitter`],
/// the default.
pub trait JitterSource {
    /// The next draw, in `[0, 1)`.
    fn unit(&mut self) -> f64;
}

impl<F: FnMut() -> f64> JitterSource for F {
    fn unit(&mut self) -> f64 {
        self()
    }
}

/// Draws from the standard library's randomly keyed hasher (each
/// `RandomState` has new keys, seeded from the operating system): enough
/// to spread clients apart, with no random-number crate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemJitter;

impl JitterSource for SystemJitter {
    fn unit(&mut self) -> f64 {
        let mut hasher = std::hash::RandomState::new().build_hasher();
        hasher.write_u64(0x9e37_79b9_7f4a_7c15);
        // The top 53 bits: every value exactly representable, below 1.
        (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A bounded retry loop's accounting: failures in a row against a limit,
/// the waits between them, and the attempts made in all.
///
/// The caller calls [`next`](Self::next) after each failure (an attempt
/// that brought nothing) and waits what it gives, or gives up on `None`;
/// and [`succeeded`](Self::succeeded) when an attempt brought what counts
/// as progress, which starts the count again.
#[derive(Clone)]
pub struct Retries<J = SystemJitter> {
    backoff: Backoff,
    limit: Option<u32>,
    failures: u32,
    attempts: u32,
    jitter: J,
}

impl<J> fmt::Debug for Retries<J> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retries")
            .field("backoff", &self.backoff)
            .field("limit", &self.limit)
            .field("failures", &self.failures)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl Retries<SystemJitter> {
    /// At most `limit` attempts in a row that fail (`None`: no limit),
    /// waiting `backoff` between them, drawing from [`SystemJitter`].
    pub fn new(backoff: Backoff, limit: Option<u32>) -> Self {
        Retries::with_jitter(backoff, limit, SystemJitter)
    }
}

impl<J: JitterSource> Retries<J> {
    /// [`new`](Retries::new) with the caller's source of draws.
    pub fn with_jitter(backoff: Backoff, limit: Option<u32>, jitter: J) -> Self {
        Retries { backoff, limit, failures: 0, attempts: 0, jitter }
    }

    /// Another failure: the wait before the next attempt (the server's
    /// `retry` honoured when given), or `None` when `limit` attempts in a
    /// row have failed already: give up.
    pub fn next(&mut self, server_retry: Option<Duration>) -> Option<Duration> {
        if self.limit.is_some_and(|limit| self.failures >= limit) {
            return None;
        }
        self.failures += 1;
        self.attempts = self.attempts.saturating_add(1);
        Some(self.backoff.wait(self.failures, server_retry, self.jitter.unit()))
    }

    /// An attempt brought progress: the failures in a row start from
    /// nothing again (the attempts made in all do not).
    pub fn succeeded(&mut self) {
        self.failures = 0;
    }

    /// The failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The attempts [`next`](Self::next) allowed, in all.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The backoff the waits come from.
    pub fn backoff(&self) -> &Backoff {
        &self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The HTTP reconnect loop's backoff: 200 ms doubling to 10 s.
    const HTTP: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(10));

    #[test]
    fn waits_on_a_table_of_cases() {
        let no_jitter = Backoff { jitter: 0.0, ..HTTP };
        let half = Backoff {
            initial: ms(100),
            max: ms(1000),
            multiplier: 2.0,
            jitter: 0.5,
            retry_floor: ms(100),
        };
        // (backoff, attempt, server retry, draw, expected)
        let cases = [
            // Exponential from `initial`, a draw of 0 is the ceiling.
            (HTTP, 1, None, 0.0, ms(200)),
            (HTTP, 2, None, 0.0, ms(400)),
            (HTTP, 3, None, 0.0, ms(800)),
            (HTTP, 6, None, 0.0, ms(6400)),
            // Capped, however many attempts.
            (HTTP, 7, None, 0.0, ms(10_000)),
            (HTTP, 40, None, 0.0, ms(10_000)),
            (HTTP, u32::MAX, None, 0.0, ms(10_000)),
            // Attempt 0 is the first.
            (HTTP, 0, None, 0.0, ms(200)),
            // Full jitter: the draw takes its share of the ceiling off.
            (HTTP, 1, None, 0.5, ms(100)),
            (HTTP, 3, None, 0.75, ms(200)),
            (HTTP, 40, None, 0.5, ms(5000)),
            // Out of range draws are clamped.
            (HTTP, 1, None, -3.0, ms(200)),
            (HTTP, 1, None, 1.0, ms(0)),
            (HTTP, 1, None, 7.0, ms(0)),
            (HTTP, 1, None, f64::NAN, ms(200)),
            // No jitter: always the ceiling.
            (no_jitter, 3, None, 0.9, ms(800)),
            // A jitter share of one half: at most half taken off.
            (half, 1, None, 0.5, ms(75)),
            (half, 4, None, 0.0, ms(800)),
            (half, 5, None, 0.0, ms(1000)),
            (half, 5, None, 0.75, ms(625)),
            // The server's retry, as asked, for the first two attempts.
            (HTTP, 1, Some(ms(1500)), 0.9, ms(1500)),
            (HTTP, 2, Some(ms(1500)), 0.9, ms(1500)),
            // Then doubling from it, drawn between it and the ceiling.
            (HTTP, 3, Some(ms(1500)), 0.0, ms(3000)),
            (HTTP, 3, Some(ms(1500)), 0.5, ms(2250)),
            (HTTP, 4, Some(ms(1500)), 0.0, ms(6000)),
            (HTTP, 5, Some(ms(1500)), 0.0, ms(10_000)),
            (HTTP, 5, Some(ms(1500)), 1.0, ms(1500)),
            // A retry above the cap is the cap.
            (HTTP, 1, Some(ms(10_000_000)), 0.0, ms(10_000)),
            (HTTP, 9, Some(ms(10_000_000)), 0.5, ms(10_000)),
            // `retry: 0` gets the floor: no storm.
            (HTTP, 1, Some(ms(0)), 0.0, ms(100)),
            (HTTP, 2, Some(ms(0)), 0.5, ms(100)),
            (HTTP, 3, Some(ms(0)), 0.0, ms(200)),
            (HTTP, 3, Some(ms(0)), 1.0, ms(100)),
            (HTTP, 4, Some(ms(0)), 0.0, ms(400)),
            (HTTP, 4, Some(ms(0)), 0.5, ms(250)),
            (HTTP, 20, Some(ms(0)), 0.0, ms(10_000)),
            // A cap below the floor wins.
            (Backoff::new(ms(20), ms(40)), 1, Some(ms(0)), 0.0, ms(40)),
        ];
        for (backoff, attempt, retry, unit, expected) in cases {
            let got = backoff.wait(attempt, retry, unit);
            assert_eq!(got, expected, "{backoff:?} attempt {attempt} retry {retry:?} draw {unit}");
        }
    }

    #[test]
    fn every_wait_stays_between_its_floor_and_its_ceiling() {
        for attempt in 1..=40 {
            for unit in [0.0, 1e-9, 0.25, 0.5, 0.999, 0.999_999_999] {
                let ceiling = ms(200).saturating_mul(1 << (attempt - 1).min(20)).min(HTTP.max);
                let d = HTTP.wait(attempt, None, unit);
                assert!(d <= ceiling, "{attempt} {unit}: {d:?}");
                let d = HTTP.wait(attempt, Some(ms(0)), unit);
                let ceiling = if attempt <= 2 {
                    ms(100)
                } else {
                    ms(100).saturating_mul(1 << (attempt - 2).min(20)).min(HTTP.max)
                };
                assert!(d >= ms(100) && d <= ceiling, "{attempt} {unit}: {d:?}");
            }
        }
        // The draw decides: different draws, different waits.
        assert_ne!(HTTP.wait(8, Some(ms(0)), 0.1), HTTP.wait(8, Some(ms(0)), 0.6));
        assert_ne!(HTTP.wait(4, None, 0.1), HTTP.wait(4, None, 0.6));
    }

    #[test]
    fn odd_settings_stay_bounded() {
        // A multiplier below 1 (or NaN) does not shrink; a jitter share
        // above 1 is 1.
        let b = Backoff { multiplier: 0.1, jitter: 7.0, ..Backoff::default() };
        assert_eq!(b.wait(3, None, 0.0), b.initial);
        assert_eq!(b.wait(3, None, 0.5), b.initial / 2);
        let b = Backoff { multiplier: f64::NAN, jitter: f64::NAN, ..Backoff::default() };
        assert_eq!(b.wait(5, None, 0.5), b.initial);
        let b = Backoff { multiplier: f64::INFINITY, ..Backoff::default() };
        assert_eq!(b.wait(2, None, 0.0), b.max);
        // An initial wait above the cap is the cap.
        let b = Backoff { initial: Duration::from_secs(100), ..Backoff::default() };
        assert_eq!(b.wait(1, None, 0.0), b.max);
        // Nothing to wait.
        let b = Backoff::new(Duration::ZERO, Duration::ZERO);
        assert_eq!(b.wait(u32::MAX, Some(ms(5000)), 0.0), Duration::ZERO);
        // Huge settings do not overflow.
        let b = Backoff::new(Duration::MAX, Duration::MAX);
        assert!(b.wait(u32::MAX, None, 0.0) > Duration::from_secs(1 << 30));
    }

    #[test]
    fn the_defaults() {
        let b = Backoff::default();
        assert_eq!((b.initial, b.max, b.retry_floor), (ms(200), Duration::from_secs(30), ms(100)));
        assert_eq!((b.multiplier, b.jitter), (2.0, 1.0));
        for attempt in 1..100 {
            assert!(b.delay(attempt) <= b.max, "{attempt}");
        }
        // Without jitter the draw does not matter: the delay is the ceiling.
        let b = Backoff { jitter: 0.0, ..HTTP };
        let delays: Vec<Duration> = [0, 1, 2, 3, 7, 50].map(|n| b.delay(n)).into();
        assert_eq!(delays, [ms(200), ms(200), ms(400), ms(800), ms(10_000), ms(10_000)]);
    }

    #[test]
    fn system_draws_are_in_range_and_vary() {
        let draws: Vec<f64> = (0..64).map(|_| SystemJitter.unit()).collect();
        assert!(draws.iter().all(|u| (0.0..1.0).contains(u)), "{draws:?}");
        assert!(draws.windows(2).any(|w| w[0] != w[1]), "{draws:?}");
    }

    #[test]
    fn retries_count_failures_in_a_row_against_the_limit() {
        // The draws come from the caller: a sequence here.
        let mut draws = [0.0, 0.5, 0.0, 0.5, 0.0].into_iter().cycle();
        let mut r = Retries::with_jitter(HTTP, Some(3), move || draws.next().unwrap_or(0.0));
        assert_eq!(r.next(None), Some(ms(200)));
        assert_eq!(r.next(None), Some(ms(200)));
        assert_eq!(r.next(None), Some(ms(800)));
        assert_eq!((r.failures(), r.attempts()), (3, 3));
        // The limit: no fourth attempt in a row, however often asked.
        assert_eq!(r.next(None), None);
        assert_eq!(r.next(Some(ms(0))), None);
        assert_eq!((r.failures(), r.attempts()), (3, 3));
        // Progress starts the count again; the total goes on.
        r.succeeded();
        assert_eq!(r.failures(), 0);
        assert_eq!(r.next(Some(ms(0))), Some(ms(100)));
        assert_eq!(r.attempts(), 4);
        assert_eq!(r.backoff(), &HTTP);
    }

    #[test]
    fn retries_without_a_limit_go_on_at_the_cap_and_a_zero_limit_never_tries() {
        let mut r = Retries::with_jitter(HTTP, None, || 0.0);
        let waits: Vec<Duration> = (0..100).map_while(|_| r.next(None)).collect();
        assert_eq!(waits.len(), 100);
        assert_eq!(waits[..3], [ms(200), ms(400), ms(800)]);
        assert_eq!(waits[99], HTTP.max);
        let mut r = Retries::new(HTTP, Some(0));
        assert_eq!(r.next(None), None);
        assert_eq!(r.attempts(), 0);
        assert!(format!("{r:?}").contains("limit: Some(0)"));
    }
}
