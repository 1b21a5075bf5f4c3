//! The login-shell probe: ask the user's shell, started as an interactive
//! login shell, for the PATH its startup files build.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use crate::cache::{CacheKey, ProbeCache};

/// How long [`login_shell_path`] lets the login shell run before killing it.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The shell probed when `$SHELL` is unset or empty.
pub const FALLBACK_SHELL: &str = "/bin/sh";

/// Set (to `1`) in the probe shell's environment only, so a user's startup
/// files can skip slow or interactive work during the probe
/// (`[ -n "$MCP_SPAWN_ENV_PROBE" ] && return`).
pub const PROBE_ENV_VAR: &str = "MCP_SPAWN_ENV_PROBE";

/// Printed right before the PATH. No banner, prompt or greeting contains it.
const START_MARKER: &str = "__MCP_SPAWN_ENV_PATH_BEGIN_5e1c0a7d__";
/// Printed right after the PATH.
const END_MARKER: &str = "__MCP_SPAWN_ENV_PATH_END_5e1c0a7d__";

/// How much of the shell's standard output is kept: a PATH is a few KiB;
/// a banner that floods more than this is cut (and the probe then fails).
const MAX_OUTPUT: u64 = 1024 * 1024;

/// How often the wait loop checks whether the shell has exited.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How long to keep reading after the shell has exited, for output still in
/// the pipe while a background process it started holds the pipe open.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// The command the shell runs: print the PATH between the markers. The
/// markers are separate single-quoted arguments, so no shell (sh, bash, zsh,
/// fish) reads them as part of a variable name; fish joins a quoted `$PATH`
/// with `:` as the others do.
#[must_use]
pub fn probe_command() -> String {
    format!("printf '%s%s%s' '{START_MARKER}' \"$PATH\" '{END_MARKER}'")
}

/// The shell to probe: the value of `$SHELL` (passed in), or
/// [`FALLBACK_SHELL`] when it is unset or empty.
#[must_use]
pub fn login_shell(shell_var: Option<&OsStr>) -> PathBuf {
    match shell_var {
        Some(shell) if !shell.is_empty() => PathBuf::from(shell),
        _ => PathBuf::from(FALLBACK_SHELL),
    }
}

/// Finds the last occurrence of `needle` in `haystack`.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).rposition(|window| window == needle)
}

/// The bytes between the last `start` marker and the first `end` marker
/// after it, with surrounding CR and LF removed; `None` when there is no
/// such pair or nothing between them.
///
/// The last start marker is taken because anything a startup file echoes
/// (a shell in verbose mode prints the command it is about to run) comes
/// before the command's own output.
#[must_use]
pub fn extract_marked<'a>(output: &'a [u8], start: &[u8], end: &[u8]) -> Option<&'a [u8]> {
    let value_start = rfind(output, start)? + start.len();
    let rest = &output[value_start..];
    let value_len = rest.windows(end.len()).position(|window| window == end)?;
    let value = trim_line_breaks(&rest[..value_len]);
    (!value.is_empty()).then_some(value)
}

fn trim_line_breaks(mut bytes: &[u8]) -> &[u8] {
    while let [b'\r' | b'\n', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b'\r' | b'\n'] = bytes {
        bytes = rest;
    }
    bytes
}

/// The PATH in the standard output of the probe, `None` when it is not
/// there. Noise before and after it (banners, greetings, prompts) is
/// ignored.
#[must_use]
pub fn parse_probe_output(stdout: &[u8]) -> Option<OsString> {
    extract_marked(stdout, START_MARKER.as_bytes(), END_MARKER.as_bytes()).map(bytes_to_os_string)
}

fn bytes_to_os_string(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(bytes).to_owned()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(bytes).into_owned().into()
    }
}

/// Why the login-shell probe gave no PATH.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProbeError {
    /// The shell could not be started, or waiting for it failed.
    #[non_exhaustive]
    Io {
        /// The shell that was run.
        shell: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The shell did not finish in time; it was killed.
    #[non_exhaustive]
    TimedOut {
        /// The shell that was run.
        shell: PathBuf,
        /// The time it was given.
        timeout: Duration,
    },
    /// The shell exited unsuccessfully.
    #[non_exhaustive]
    Failed {
        /// The shell that was run.
        shell: PathBuf,
        /// How it exited.
        status: ExitStatus,
    },
    /// The shell exited successfully but its output did not hold the PATH
    /// between the markers (a shell that does not understand `-ilc` or
    /// `printf`, or output cut at 1 MiB).
    #[non_exhaustive]
    NoPath {
        /// The shell that was run.
        shell: PathBuf,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Io { shell, source } => {
                write!(f, "could not run the login shell {}: {source}", shell.display())
            }
            ProbeError::TimedOut { shell, timeout } => write!(
                f,
                "the login shell {} did not finish within {} ms and was killed",
                shell.display(),
                timeout.as_millis()
            ),
            ProbeError::Failed { shell, status } => {
                write!(f, "the login shell {} failed ({status})", shell.display())
            }
            ProbeError::NoPath { shell } => {
                write!(f, "the login shell {} did not print its PATH", shell.display())
            }
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProbeError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Runs `shell -ilc '<print PATH between markers>'` and returns the PATH it
/// printed.
///
/// The shell gets a null standard input and standard error, the process's
/// environment plus [`PROBE_ENV_VAR`], and on Unix its own process group (so
/// an interactive shell cannot take the terminal's foreground from a host
/// that runs in one). If it has not exited after `timeout` it is killed and
/// [`ProbeError::TimedOut`] returned; the call never takes much longer than
/// `timeout`. A background process the shell leaves holding its output open
/// is not waited for.
///
/// This is the uncached probe; [`login_shell_path`] runs it once per process
/// with `$SHELL` and [`DEFAULT_PROBE_TIMEOUT`].
pub fn probe_login_shell(shell: &Path, timeout: Duration) -> Result<OsString, ProbeError> {
    let started = Instant::now();
    let deadline = started + timeout;
    let io_error = |source| ProbeError::Io { shell: shell.to_owned(), source };

    let mut command = Command::new(shell);
    command
        .arg("-ilc")
        .arg(probe_command())
        .env(PROBE_ENV_VAR, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn().map_err(io_error)?;

    // A thread reads the pipe, so the wait below is bounded even when the
    // shell floods its output or a grandchild keeps the pipe open.
    let (sender, chunks) = mpsc::channel::<Vec<u8>>();
    if let Some(stdout) = child.stdout.take() {
        let reader =
            std::thread::Builder::new().name("mcp-spawn-env-probe".into()).spawn(move || {
                let mut stdout = stdout.take(MAX_OUTPUT);
                let mut buf = [0u8; 8192];
                loop {
                    match stdout.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if sender.send(buf[..n].to_vec()).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        if let Err(source) = reader {
            kill(&mut child);
            return Err(io_error(source));
        }
    }

    let mut output = Vec::new();
    let mut eof = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(source) => {
                kill(&mut child);
                return Err(io_error(source));
            }
        }
        let now = Instant::now();
        if now >= deadline {
            kill(&mut child);
            tracing::debug!(shell = %shell.display(), ?timeout, "login shell probe timed out");
            return Err(ProbeError::TimedOut { shell: shell.to_owned(), timeout });
        }
        let step = POLL_INTERVAL.min(deadline - now);
        if eof {
            std::thread::sleep(step);
        } else {
            match chunks.recv_timeout(step) {
                Ok(chunk) => output.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => eof = true,
            }
        }
    };

    let drain_until = deadline.min(Instant::now() + DRAIN_GRACE);
    while !eof {
        let left = drain_until.saturating_duration_since(Instant::now());
        match chunks.recv_timeout(left) {
            Ok(chunk) => output.extend_from_slice(&chunk),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => eof = true,
        }
    }

    if !status.success() {
        tracing::debug!(shell = %shell.display(), %status, "login shell probe failed");
        return Err(ProbeError::Failed { shell: shell.to_owned(), status });
    }
    match parse_probe_output(&output) {
        Some(path) => {
            tracing::debug!(
                shell = %shell.display(),
                elapsed = ?started.elapsed(),
                entries = path.as_encoded_bytes().split(|&b| b == b':').count(),
                "login shell PATH probed"
            );
            Ok(path)
        }
        None => {
            tracing::debug!(shell = %shell.display(), bytes = output.len(), "login shell printed no PATH");
            Err(ProbeError::NoPath { shell: shell.to_owned() })
        }
    }
}

fn kill(child: &mut std::process::Child) {
    // Both fail only when the child is already gone, which is the goal.
    let _ = child.kill();
    let _ = child.wait();
}

/// The process's one login-shell PATH (`None` inside: the probe failed).
static LOGIN_PATH: OnceLock<Option<OsString>> = OnceLock::new();

/// The PATH the user's login shell builds, probed once per process and
/// cached; `None` when the probe failed (the reason is logged at debug
/// level) and always `None` on Windows, where GUI programs already get the
/// user's PATH.
///
/// The shell is `$SHELL` (or [`FALLBACK_SHELL`]), the timeout
/// [`DEFAULT_PROBE_TIMEOUT`]. Concurrent first calls wait for one probe.
/// Changes the user makes to their startup files afterwards are seen after
/// the host restarts. The same as [`login_shell_path_cached`] without a
/// cache file.
#[must_use]
pub fn login_shell_path() -> Option<&'static OsStr> {
    login_shell_path_cached(None)
}

/// [`login_shell_path`], with the result also kept between runs in `cache`
/// when one is given: a fresh entry for the same shell, environment and
/// startup files ([`CacheKey::current`]) is used without running the shell;
/// otherwise the shell is probed and a PATH it printed is stored (a failed
/// store is logged at debug level).
///
/// Once per process, like [`login_shell_path`]: the first call of either
/// decides, later calls return its result whatever cache they name.
#[must_use]
pub fn login_shell_path_cached(cache: Option<&ProbeCache>) -> Option<&'static OsStr> {
    LOGIN_PATH
        .get_or_init(|| {
            if cfg!(windows) {
                return None;
            }
            let shell = login_shell(std::env::var_os("SHELL").as_deref());
            let cached = cache.and_then(|cache| Some((cache, CacheKey::current(&shell)?)));
            if let Some((cache, key)) = &cached
                && let Some(path) = cache.load(key, SystemTime::now())
            {
                return Some(path);
            }
            let path = probe_login_shell(&shell, DEFAULT_PROBE_TIMEOUT)
                .inspect_err(|error| tracing::debug!(%error, "no login shell PATH"))
                .ok()?;
            if let Some((cache, key)) = &cached
                && let Err(error) = cache.store(key, &path, SystemTime::now())
            {
                tracing::debug!(file = %cache.file().display(), %error, "the login shell PATH was not cached");
            }
            Some(path)
        })
        .as_deref()
}

/// Whether this process already has its login-shell PATH (or knows the
/// probe failed): then [`login_shell_path`] and [`spawn_path`](crate::spawn_path)
/// return without running a shell or reading a cache file, and are cheap
/// enough for an async thread.
#[must_use]
pub fn login_shell_path_known() -> bool {
    LOGIN_PATH.get().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extract() {
        let cases: &[(&str, Option<&str>)] = &[
            ("S/usr/bin:/binE", Some("/usr/bin:/bin")),
            ("Welcome to fish!\nlast login: today\nS/a:/bE", Some("/a:/b")),
            ("banner\nS/a:/bEbye\nlogout\n", Some("/a:/b")),
            ("motd\r\nS/a:/bE\r\n", Some("/a:/b")),
            ("S\r\n/a:/b\r\nE", Some("/a:/b")),
            ("S  /a:/b E", Some("  /a:/b ")),
            // Several occurrences: the last start marker wins.
            ("printf S\"$PATH\"E\nS/real:/pathE", Some("/real:/path")),
            ("S/first E noise S/second E", Some("/second ")),
            ("S/a S/b E", Some("/b ")),
            // Missing or misplaced markers.
            ("S/a:/b", None),
            ("S/a E S/b", None),
            ("E/a:/bS", None),
            ("/a:/b", None),
            ("", None),
            ("SE", None),
            ("S\r\nE", None),
        ];
        for &(output, expected) in cases {
            let got = extract_marked(output.as_bytes(), b"S", b"E");
            assert_eq!(got, expected.map(str::as_bytes), "{output:?}");
        }
    }

    #[test]
    fn extract_multi_byte_markers() {
        let output = b"<<S>>noise<<S>>/x:/y<<E>>";
        assert_eq!(extract_marked(output, b"<<S>>", b"<<E>>"), Some(&b"/x:/y"[..]));
        assert_eq!(extract_marked(b"<<S", b"<<S>>", b"<<E>>"), None);
    }

    #[test]
    fn parse_real_markers() {
        let output =
            format!("Welcome!\n{START_MARKER}/home/me/.cargo/bin:/usr/bin{END_MARKER}\nlogout\n");
        assert_eq!(
            parse_probe_output(output.as_bytes()),
            Some(OsString::from("/home/me/.cargo/bin:/usr/bin"))
        );
        assert_eq!(parse_probe_output(b"no markers at all"), None);
    }

    #[test]
    fn command_prints_the_path_between_markers() {
        let command = probe_command();
        assert_eq!(command, format!("printf '%s%s%s' '{START_MARKER}' \"$PATH\" '{END_MARKER}'"));
        assert!(!START_MARKER.contains(END_MARKER) && !END_MARKER.contains(START_MARKER));
    }

    #[test]
    fn shell_choice() {
        let cases: &[(Option<&str>, &str)] =
            &[(Some("/bin/zsh"), "/bin/zsh"), (Some(""), "/bin/sh"), (None, "/bin/sh")];
        for &(var, expected) in cases {
            assert_eq!(login_shell(var.map(OsStr::new)), PathBuf::from(expected), "{var:?}");
        }
    }

    #[test]
    fn error_messages() {
        let shell = PathBuf::from("/bin/zsh");
        let cases: Vec<(ProbeError, &str)> = vec![
            (
                ProbeError::TimedOut { shell: shell.clone(), timeout: Duration::from_secs(3) },
                "the login shell /bin/zsh did not finish within 3000 ms and was killed",
            ),
            (
                ProbeError::NoPath { shell: shell.clone() },
                "the login shell /bin/zsh did not print its PATH",
            ),
            (
                ProbeError::Io {
                    shell,
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                },
                "could not run the login shell /bin/zsh: entity not found",
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_string(), expected);
        }
    }
}
