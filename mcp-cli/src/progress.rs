//! A progress bar (and a spinner for slow calls) on stderr, hand-written.

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_proto::types::ProgressNotificationParams;

/// How long a call runs before the spinner appears.
const SPINNER_AFTER: Duration = Duration::from_millis(800);
/// How often the spinner turns.
const TICK: Duration = Duration::from_millis(120);
/// The bar's width in cells.
const BAR_WIDTH: usize = 24;
const FRAMES: [char; 4] = ['|', '/', '-', '\\'];

/// The latest progress of one call.
#[derive(Debug, Default, Clone, PartialEq)]
struct State {
    progress: Option<f64>,
    total: Option<f64>,
    message: Option<String>,
    frame: usize,
    drawn: bool,
    done: bool,
}

/// Draws one call's progress on stderr until [`Progress::finish`].
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    label: String,
    color: bool,
    start: Instant,
    state: Arc<Mutex<State>>,
}

impl Progress {
    /// Starts the spinner task (it draws nothing for the first moments).
    pub(crate) fn start(label: String, color: bool) -> Progress {
        let progress = Progress {
            label,
            color,
            start: Instant::now(),
            state: Arc::new(Mutex::new(State::default())),
        };
        let ticker = progress.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SPINNER_AFTER).await;
            loop {
                {
                    let mut state = ticker.lock();
                    if state.done {
                        break;
                    }
                    state.frame = state.frame.wrapping_add(1);
                    ticker.draw(&mut state);
                }
                tokio::time::sleep(TICK).await;
            }
        });
        progress
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a progress notification.
    pub(crate) fn update(&self, params: &ProgressNotificationParams) {
        let mut state = self.lock();
        if state.done {
            return;
        }
        state.progress = Some(params.progress);
        state.total = params.total;
        if params.message.is_some() {
            state.message = params.message.clone();
        }
        self.draw(&mut state);
    }

    fn draw(&self, state: &mut State) {
        let line = render(&self.label, state, self.start.elapsed(), self.color);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        state.drawn = true;
    }

    /// Stops drawing and clears the line.
    pub(crate) fn finish(&self) {
        let mut state = self.lock();
        state.done = true;
        if state.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// One line of progress: a bar when the total is known, else a spinner
/// and the count.
fn render(label: &str, state: &State, elapsed: Duration, color: bool) -> String {
    let secs = format!("{:.1}s", elapsed.as_secs_f64());
    let message = state.message.as_deref().map(|m| format!(" {m}")).unwrap_or_default();
    let frame = FRAMES[state.frame % FRAMES.len()];
    match (state.progress, state.total) {
        (Some(progress), Some(total)) if total > 0.0 => {
            let fraction = (progress / total).clamp(0.0, 1.0);
            let filled = (fraction * BAR_WIDTH as f64).round() as usize;
            let bar = "#".repeat(filled);
            let rest = "-".repeat(BAR_WIDTH - filled);
            let bar =
                if color { format!("\x1b[36m{bar}\x1b[0m{rest}") } else { format!("{bar}{rest}") };
            format!(
                "{label} [{bar}] {:>3}% {}/{} {secs}{message}",
                (fraction * 100.0).round() as u32,
                number(progress),
                number(total)
            )
        }
        (Some(progress), _) => format!("{frame} {label} {} {secs}{message}", number(progress)),
        (None, _) => format!("{frame} {label} {secs}{message}"),
    }
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n:.1}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(progress: Option<f64>, total: Option<f64>, message: Option<&str>) -> State {
        State { progress, total, message: message.map(str::to_owned), ..Default::default() }
    }

    #[test]
    fn lines() {
        let t = Duration::from_millis(1500);
        let cases = [
            (
                state(Some(1.0), Some(4.0), Some("step 1 of 4")),
                false,
                "echo [######------------------]  25% 1/4 1.5s step 1 of 4",
            ),
            (
                state(Some(4.0), Some(4.0), None),
                false,
                "echo [########################] 100% 4/4 1.5s",
            ),
            (
                state(Some(9.0), Some(4.0), None),
                false,
                "echo [########################] 100% 9/4 1.5s",
            ),
            (
                state(Some(1.0), Some(4.0), None),
                true,
                "echo [\x1b[36m######\x1b[0m------------------]  25% 1/4 1.5s",
            ),
            (state(Some(2.5), None, Some("working")), false, "| echo 2.5 1.5s working"),
            (state(None, None, None), false, "| echo 1.5s"),
            (state(Some(3.0), Some(0.0), None), false, "| echo 3 1.5s"),
        ];
        for (s, color, expected) in cases {
            assert_eq!(render("echo", &s, t, color), expected);
        }
    }
}
