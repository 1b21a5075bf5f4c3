//! Statistics and Markdown formatting shared by the benchmark binaries.

use std::time::Duration;

/// The median of some durations (the mean of the middle two for an even
/// count); zero for none.
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

/// `count` things in `time`, per second.
pub fn per_second(count: f64, time: Duration) -> f64 {
    count / time.as_secs_f64().max(1e-12)
}

/// The `q`-quantile (0..=1) of some durations, nearest rank; zero for none.
pub fn quantile(times: &mut [Duration], q: f64) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    times.sort_unstable();
    let rank = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len());
    times[rank - 1]
}

/// [`quantile`] in microseconds, as the latency columns show it.
pub fn quantile_us(times: &mut [Duration], q: f64) -> f64 {
    quantile(times, q).as_secs_f64() * 1e6
}

/// The median of some numbers (the mean of the middle two for an even
/// count); zero for none.
pub fn median_f64(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The `CPUs` column of a phase run pinned to one CPU, or not.
pub fn cpus(pinned: bool) -> &'static str {
    if pinned { "pinned (1 CPU)" } else { "unpinned" }
}

/// Microseconds with one decimal.
pub fn us(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

/// Microseconds (a float) with one decimal.
pub fn us_f64(micros: f64) -> String {
    format!("{micros:.1}")
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// A rate such as `45.6k`.
pub fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.2}M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.1}k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

/// `a / b` as `1.52x`, or `–` when `b` is zero.
pub fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 && a.is_finite() { format!("{:.2}x", a / b) } else { "–".to_owned() }
}

/// Bytes as KiB with one decimal.
pub fn kib(bytes: f64) -> String {
    format!("{:.1} KiB", bytes / 1024.0)
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut t: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        assert_eq!(quantile(&mut t, 0.5), Duration::from_micros(50));
        assert_eq!(quantile(&mut t, 0.99), Duration::from_micros(99));
        assert_eq!(quantile(&mut [], 0.5), Duration::ZERO);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(3), ms(1), ms(2)]), ms(2));
        assert_eq!(median(&[ms(4), ms(1), ms(2), ms(3)]), Duration::from_micros(2500));
        assert_eq!(median(&[]), Duration::ZERO);
        assert_eq!(quantile_us(&mut [ms(1)], 0.5), 1000.0);
    }

    #[test]
    fn ratios_and_rates() {
        assert_eq!(ratio(3.0, 2.0), "1.50x");
        assert_eq!(ratio(3.0, 0.0), "–");
        assert_eq!(rate(45_600.0), "45.6k");
        assert_eq!(rate(1_500_000.0), "1.50M");
        assert_eq!(median_f64(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    }
}
