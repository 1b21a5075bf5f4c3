//! Everything `mcpc` writes for a person or a program: stdout lines (text
//! or JSON), notes, errors and questions on stderr, tables, the progress
//! bar's messages, and the URLs it opens.
//!
//! Text a server controls (names, descriptions, instructions, errors,
//! prompts, log messages, results) is untrusted: every text-mode line
//! goes through [`mcp_proto::display::terminal_safe`] here, at the sink,
//! so no path can write a control sequence to the terminal; fields that
//! belong on one line ([`one_line`], table cells) also show their line
//! breaks as `\n`. JSON output is written as serde_json encodes it.

use std::borrow::Cow;
use std::io::{IsTerminal as _, Write as _};

use mcp_host_registry::ServerStatus;
use mcp_proto::display::{Lines, openable_url, terminal_safe};
use mcp_proto::types::{
    CallToolResult, LoggingMessageNotificationParams, ProgressNotificationParams,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::Output;
use crate::failure::{EXIT_TOOL_ERROR, Failure};
use crate::progress::Progress;

/// Colours on stderr: when it is a terminal and `NO_COLOR` is unset or empty.
pub(crate) fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes text to stdout as lines, made safe for a terminal; a closed
/// pipe (`mcpc tools | head`) is not an error.
pub(crate) fn emit(text: &str) {
    write_stdout(&terminal_safe(text, Lines::Keep));
}

/// Writes a JSON value to stdout as one line.
pub(crate) fn emit_json(value: &Value) {
    write_stdout(&value.to_string());
}

/// `{"server": ..., key: value}` on stdout.
pub(crate) fn emit_keyed(server: &str, key: &str, value: Value) {
    emit_json(&json!({"server": server, key: value}));
}

fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Where `tracing` writes its diagnostics (`-v`, `RUST_LOG`): stderr, each
/// event made safe for a terminal (a stdio server's own stderr lines are
/// among them) and written above the progress bar.
pub(crate) fn diagnostics() -> Diagnostics {
    Diagnostics
}

/// The writer of [`diagnostics`]: `tracing` writes each event whole, in
/// one call.
#[derive(Debug)]
pub(crate) struct Diagnostics;

impl std::io::Write for Diagnostics {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let text = terminal_safe(&text, Lines::Keep);
        crate::progress::suspend(|| std::io::stderr().lock().write_all(text.as_bytes()))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A note on stderr (above a progress bar if one is drawn), made safe for
/// a terminal.
pub(crate) fn note(text: &str) {
    let text = terminal_safe(text, Lines::Keep);
    crate::progress::suspend(|| eprintln!("{text}"));
}

/// A question on stderr, left open for the answer on the same line, made
/// safe for a terminal; stderr is not held after it (notes may need it
/// while the answer is awaited). The caller takes the progress bar off the
/// screen first: the answer may be long in coming.
pub(crate) fn prompt(text: &str) {
    let text = terminal_safe(text, Lines::Keep);
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}");
    let _ = err.flush();
}

/// A progress notification on the progress bar: its message on one line,
/// made safe for a terminal.
pub(crate) fn show_progress(bar: &Progress, params: &ProgressNotificationParams) {
    let message = params.message.as_deref().map(one_line);
    bar.update(params.progress, params.total, message.as_deref());
}

/// Server text that belongs on one line: controls and line breaks shown
/// as escapes.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    terminal_safe(text, Lines::Escape)
}

/// A failure on stderr (and, with `--output json`, as JSON on stdout).
pub(crate) fn report(output: Output, failure: &Failure) {
    if output == Output::Json {
        emit_json(&failure.to_json());
    }
    warn_line(&failure.message);
}

/// `mcpc: error: ...` on stderr.
pub(crate) fn warn_line(message: &str) {
    let label = if stderr_color() { "\x1b[31merror\x1b[0m" } else { "error" };
    let message = terminal_safe(message, Lines::Keep);
    crate::progress::suspend(|| eprintln!("mcpc: {label}: {message}"));
}

/// Rows as aligned columns (two spaces apart; the last column unpadded),
/// each cell on one line and safe for a terminal.
pub(crate) fn table(rows: &[Vec<String>]) -> Vec<String> {
    let rows: Vec<Vec<Cow<'_, str>>> =
        rows.iter().map(|r| r.iter().map(|c| one_line(c)).collect()).collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:w$}  ", w = widths[i]));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// ` (2025-11-25, legacy era)`: the protocol a connected server speaks, for
/// the end of a line; empty when it is not known.
pub(crate) fn protocol_suffix(status: &ServerStatus) -> String {
    match (status.protocol_version, status.era) {
        (Some(version), Some(era)) => format!(" ({version}, {era} era)"),
        _ => String::new(),
    }
}

/// Adds `protocol_version` and `era` (`"modern"`/`"legacy"`, or null when
/// not connected) to a JSON object.
pub(crate) fn add_protocol(v: &mut Value, status: &ServerStatus) {
    v["protocol_version"] = json!(status.protocol_version.map(|p| p.as_str()));
    v["era"] = json!(status.era.map(|e| e.to_string()));
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A server's log message as a person reads it, `[level] logger: data`
/// (not yet made safe for a terminal: the caller shows it on one line).
pub(crate) fn log_text(m: &LoggingMessageNotificationParams) -> String {
    let data = match &m.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let logger = m.logger.as_deref().map(|l| format!(" {l}:")).unwrap_or_default();
    format!("[{}]{logger} {data}", m.level)
}

/// The first line of a description, at most 100 characters.
pub(crate) fn summary(description: Option<&str>) -> String {
    let first = description.unwrap_or("").lines().next().unwrap_or("");
    let text = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 100 {
        let cut: String = text.chars().take(99).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// A listing: `server: N things` and a table of one row per item, or
/// `{"server": ..., key: [items]}`.
pub(crate) fn listing<T: Serialize>(
    output: Output,
    server: &str,
    (key, noun): (&str, &str),
    items: &[T],
    row: impl Fn(&T) -> Vec<String>,
) {
    match output {
        Output::Json => emit_keyed(server, key, json!(items)),
        Output::Text => {
            emit(&format!("{server}: {} {noun}{}", items.len(), plural(items.len())));
            let rows: Vec<Vec<String>> = items.iter().map(row).collect();
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
}

/// A listed item's name, then its title (when it is not the name) and the
/// first line of its description.
pub(crate) fn describe(name: &str, title: Option<&str>, description: Option<&str>) -> String {
    match about(name, title, description) {
        about if about.is_empty() => name.to_owned(),
        about => format!("{name}: {about}"),
    }
}

/// The title (when it is not the name) and first line of the description.
pub(crate) fn about(name: &str, title: Option<&str>, description: Option<&str>) -> String {
    let title = title.unwrap_or("");
    let description = summary(description);
    match (title.is_empty() || title == name, description.is_empty()) {
        (true, _) => description,
        (false, true) => title.to_owned(),
        (false, false) => format!("{title}: {description}"),
    }
}

/// Prints a tool's result (of a call, or of a task that ran one): its
/// content as text, its structured content as pretty JSON; the exit code:
/// 1 when the tool reported an error.
pub(crate) fn tool_result(output: Output, result: &CallToolResult) -> u8 {
    let rendered = mcp_proto::render_tool_result(result);
    match output {
        Output::Json => emit_json(&rendered.raw),
        Output::Text => {
            let pretty = rendered
                .structured_content
                .as_ref()
                .map(|v| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
            match (result.content.is_empty(), pretty) {
                // No blocks: the text is the structured content, compact.
                (true, Some(pretty)) => emit(&pretty),
                (false, Some(pretty)) => {
                    emit(&rendered.text);
                    emit("");
                    emit("structuredContent:");
                    emit(&pretty);
                }
                (_, None) => emit(&rendered.text),
            }
        }
    }
    if rendered.is_error { EXIT_TOOL_ERROR } else { 0 }
}

/// Shows a URL a server (or its authorization server) wants the user to
/// visit, and opens it in the browser when `open` says so and
/// [`openable_url`] allows it. The URL shown is the one opened, with its
/// host on a line of its own; one that may not be opened is shown safe for
/// the terminal with the reason. Gives whether the URL may be opened.
pub(crate) fn offer_url(url: &str, open: bool) -> bool {
    match openable_url(url) {
        Ok(checked) => {
            note(&format!("  {}\n  host: {}", checked.as_str(), checked.host()));
            if open {
                open_browser(checked.as_str());
            }
            true
        }
        Err(why) => {
            note(&format!(
                "  {}\nmcpc: this URL is not opened and not offered: {why}",
                one_line(url)
            ));
            false
        }
    }
}

/// Opens `url` in the browser if [`openable_url`] allows it (see
/// [`offer_url`]); does nothing otherwise.
pub(crate) fn open_checked(url: &str) {
    if let Ok(checked) = openable_url(url) {
        open_browser(checked.as_str());
    }
}

/// Opens a URL that [`openable_url`] allowed in the browser when that is
/// cheap: `open` on macOS, `xdg-open` on other Unix systems with a display,
/// spawned without a shell with the URL as its one argument (it cannot
/// start with `-`), its output discarded, any failure ignored (the URL is
/// printed anyway). Off with `MCPC_NO_BROWSER`, and on other platforms.
fn open_browser(url: &str) {
    if std::env::var_os("MCPC_NO_BROWSER").is_some_and(|v| !v.is_empty()) {
        return;
    }
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(unix)
        && (std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some())
    {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped in the background; nothing waits for it.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_cells_stay_on_one_line() {
        let rows = vec![
            vec!["a".to_owned(), "stdio".to_owned(), "x".to_owned()],
            vec!["long".to_owned(), "http".to_owned(), String::new()],
        ];
        assert_eq!(table(&rows), ["a     stdio  x", "long  http"]);
        let hostile = vec![vec!["t\u{1b}[2J".to_owned(), "a\nb".to_owned()]];
        assert_eq!(table(&hostile), [r"t\x1b[2J  a\nb"]);
    }

    #[test]
    fn summaries_take_the_first_line() {
        assert_eq!(summary(Some("first  line\nsecond")), "first line");
        assert_eq!(summary(None), "");
        let long = "x".repeat(150);
        assert_eq!(summary(Some(&long)).chars().count(), 100);
    }
}
