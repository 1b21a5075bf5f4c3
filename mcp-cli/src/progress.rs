//! The progress of a call on stderr, drawn by indicatif: a bar when the
//! server gives a total, a spinner otherwise (it appears only for calls
//! slower than a moment). The bar only draws: the server's progress
//! message reaches it through `output::show_progress`, made safe there.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::io::Write as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// How long a call runs before the spinner appears.
const SPINNER_AFTER: Duration = Duration::from_millis(800);
/// How often the spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// The bar being drawn, if any, so that questions and notes on stderr go
/// above it ([`suspend`]).
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `f` with the progress bar (if any) taken off the screen.
pub(crate) fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let bar = ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bar {
        Some(bar) => bar.suspend(f),
        None => f(),
    }
}

/// Clears the progress bar of a call that was abandoned (interrupted).
pub(crate) fn clear() {
    if let Some(bar) = ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).take() {
        bar.finish_and_clear();
    }
}

/// Takes the progress bar (if any) off the screen until dropped: for a
/// question on the terminal, which may wait for the user a long time.
pub(crate) fn hide() -> Hidden {
    let bar = ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(bar) = &bar {
        bar.set_draw_target(ProgressDrawTarget::hidden());
        let _ = Stderr.clear_line();
    }
    Hidden(bar)
}

/// The bar hidden by [`hide`], drawn again when this is dropped.
#[derive(Debug)]
pub(crate) struct Hidden(Option<ProgressBar>);

impl Drop for Hidden {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.set_draw_target(target());
        }
    }
}

/// stderr, drawn at most 20 times a second; also when it is not a
/// terminal (`--progress always`), which indicatif's own stderr target
/// would hide.
fn target() -> ProgressDrawTarget {
    ProgressDrawTarget::term_like_with_hz(Box::new(Stderr), 20)
}

/// One call's progress, until [`Progress::finish`].
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    bar: ProgressBar,
    has_total: Arc<Mutex<bool>>,
    color: bool,
}

impl Progress {
    /// Starts drawing (on stderr; `color` off without styling escapes).
    pub(crate) fn start(label: String, color: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(None, target());
        bar.set_style(spinner_style(color));
        bar.set_prefix(label);
        *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        let progress = Progress { bar, has_total: Arc::default(), color };
        let ticking = progress.bar.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SPINNER_AFTER).await;
            if !ticking.is_finished() {
                ticking.enable_steady_tick(TICK);
            }
        });
        progress
    }

    /// Takes a progress notification: how far the call is, of what total
    /// (when the server gives one), and its message, which must already be
    /// safe for a terminal and on one line (`output::show_progress` makes
    /// it so).
    pub(crate) fn update(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let message = message.map(|m| format!(" {m}")).unwrap_or_default();
        match total.filter(|t| *t > 0.0) {
            Some(total) => {
                let mut has_total = self.has_total.lock().unwrap_or_else(|e| e.into_inner());
                if !*has_total {
                    *has_total = true;
                    self.bar.set_style(bar_style(self.color));
                }
                // indicatif counts in whole units: the server's numbers
                // are kept to a thousandth.
                self.bar.set_length((total * 1000.0) as u64);
                self.bar.set_position((progress.min(total) * 1000.0) as u64);
                self.bar.set_message(format!("{}/{}{message}", number(progress), number(total)));
            }
            None => {
                self.bar.set_message(format!("{}{message}", number(progress)));
                self.bar.tick();
            }
        }
    }

    /// Stops drawing and clears the line.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
        *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// stderr as indicatif's terminal: ANSI cursor moves and line clears.
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn put(&self, text: &str) -> std::io::Result<()> {
        std::io::stderr().lock().write_all(text.as_bytes())
    }
}

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100)
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n == 0 { Ok(()) } else { self.put(&format!("\x1b[{n}A")) }
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n == 0 { Ok(()) } else { self.put(&format!("\x1b[{n}B")) }
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n == 0 { Ok(()) } else { self.put(&format!("\x1b[{n}C")) }
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n == 0 { Ok(()) } else { self.put(&format!("\x1b[{n}D")) }
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.put(&format!("{s}\n"))
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.put(s)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.put("\r\x1b[2K")
    }

    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn spinner_style(color: bool) -> ProgressStyle {
    style("{spinner:.cyan} {prefix} {msg} {elapsed_precise}", color).tick_chars("|/-\\ ")
}

fn bar_style(color: bool) -> ProgressStyle {
    style("{prefix} [{bar:24.cyan}] {percent:>3}% {msg} {elapsed_precise}", color)
        .progress_chars("##-")
}

/// A template, its `.cyan` dropped without colour.
fn style(template: &str, color: bool) -> ProgressStyle {
    let template = if color { template.to_owned() } else { template.replace(".cyan", "") };
    ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n:.1}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(1e16), "10000000000000000.0");
    }
}
