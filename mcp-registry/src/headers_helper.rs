//! The `headers_helper` command as `mcp-http`'s [`HeaderSource`]: run
//! with no input, bounded in time and output, its output parsed
//! ([`parse_output`]) and never shown: a failure is a [`HelperError`]
//! naming the server and what went wrong, not what it printed.

use std::fmt;
use std::process::Stdio;
use std::time::Duration;

use mcp_http::{HeaderFuture, HeaderSource, SourcedHeaders};
use serde_json::Value;
use tokio::io::AsyncReadExt as _;

use crate::config::HeadersHelper;

/// Why a server's headers helper gave no headers. Never holds its output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HelperError {
    /// It could not be started (not found, not executable).
    Start {
        /// The server's name.
        server: String,
        /// The operating system's reason.
        reason: String,
    },
    /// It ran longer than its timeout and was killed.
    TimedOut {
        /// The server's name.
        server: String,
        /// The timeout.
        after: Duration,
    },
    /// It exited unsuccessfully.
    Failed {
        /// The server's name.
        server: String,
        /// Its exit code (`None`: ended by a signal).
        code: Option<i32>,
    },
    /// It printed more than the bound.
    TooLarge {
        /// The server's name.
        server: String,
        /// The bound, in bytes.
        limit: usize,
    },
    /// Its output is neither a JSON object of headers nor `Name: value`
    /// lines, or names an invalid header.
    Unreadable {
        /// The server's name.
        server: String,
        /// What is wrong, never the output itself.
        reason: &'static str,
    },
}

impl fmt::Display for HelperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HelperError::Start { server, reason } => {
                write!(f, "server {server:?}: the headers helper could not start: {reason}")
            }
            HelperError::TimedOut { server, after } => write!(
                f,
                "server {server:?}: the headers helper took longer than {}s and was stopped",
                after.as_secs_f64()
            ),
            HelperError::Failed { server, code: Some(code) } => {
                write!(f, "server {server:?}: the headers helper exited with code {code}")
            }
            HelperError::Failed { server, code: None } => {
                write!(f, "server {server:?}: the headers helper was ended by a signal")
            }
            HelperError::TooLarge { server, limit } => {
                write!(f, "server {server:?}: the headers helper printed more than {limit} bytes")
            }
            HelperError::Unreadable { server, reason } => write!(
                f,
                "server {server:?}: the headers helper's output is unusable ({reason}; not shown)"
            ),
        }
    }
}

impl std::error::Error for HelperError {}

/// A server's `headers_helper`, ready to run.
#[derive(Debug, Clone)]
pub(crate) struct CommandHeaders {
    pub(crate) server: String,
    pub(crate) helper: HeadersHelper,
}

impl HeaderSource for CommandHeaders {
    fn headers(&self) -> HeaderFuture<'_> {
        Box::pin(async move { self.run().await.map_err(Into::into) })
    }
}

impl CommandHeaders {
    async fn run(&self) -> Result<SourcedHeaders, HelperError> {
        let server = || self.server.clone();
        let mut child = tokio::process::Command::new(&self.helper.command)
            .args(&self.helper.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HelperError::Start { server: server(), reason: e.kind().to_string() })?;
        let limit = self.helper.max_output;
        let mut stdout = child.stdout.take().ok_or_else(|| HelperError::Start {
            server: server(),
            reason: "no output pipe".into(),
        })?;
        let work = async {
            let mut out = Vec::new();
            (&mut stdout)
                .take(limit as u64 + 1)
                .read_to_end(&mut out)
                .await
                .map_err(|e| HelperError::Start { server: server(), reason: e.to_string() })?;
            if out.len() > limit {
                // It may still be writing: stopped now, not waited for.
                let _ = child.start_kill();
                return Err(HelperError::TooLarge { server: server(), limit });
            }
            let status = child
                .wait()
                .await
                .map_err(|e| HelperError::Start { server: server(), reason: e.to_string() })?;
            if !status.success() {
                return Err(HelperError::Failed { server: server(), code: status.code() });
            }
            Ok(out)
        };
        let out = tokio::time::timeout(self.helper.timeout, work).await.map_err(|_| {
            HelperError::TimedOut { server: server(), after: self.helper.timeout }
        })??;
        let made = parse_output(&out)
            .map_err(|reason| HelperError::Unreadable { server: server(), reason })?;
        tracing::debug!(server = %self.server, count = made.headers.len(), "headers helper ran");
        Ok(made)
    }
}

/// Headers and how long they are good for, from a helper's output: a JSON
/// object of names to string values, or `{"headers": {...}, "expires_in":
/// SECONDS}`, or `Name: value` lines (blank lines skipped). At least one
/// header; names and values as HTTP allows (no CR or LF).
pub(crate) fn parse_output(out: &[u8]) -> Result<SourcedHeaders, &'static str> {
    let text = std::str::from_utf8(out).map_err(|_| "not UTF-8")?.trim();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut valid_for = None;
    if text.starts_with('{') {
        let value: Value = serde_json::from_str(text).map_err(|_| "not valid JSON")?;
        let (table, expires) = match value.get("headers") {
            Some(Value::Object(table)) => (table.clone(), value.get("expires_in")),
            Some(_) => return Err("`headers` is not an object"),
            None => (value.as_object().cloned().unwrap_or_default(), None),
        };
        if let Some(expires) = expires {
            let secs = expires.as_u64().ok_or("`expires_in` is not a whole number")?;
            valid_for = Some(Duration::from_secs(secs));
        }
        for (name, value) in table {
            let value = value.as_str().ok_or("a header value is not a string")?;
            pairs.push((name, value.to_owned()));
        }
    } else {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (name, value) = line.split_once(':').ok_or("a line is not `Name: value`")?;
            pairs.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    if pairs.is_empty() {
        return Err("no headers");
    }
    let mut headers = Vec::with_capacity(pairs.len());
    for (name, value) in pairs {
        let name =
            http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| "an invalid header name")?;
        let value = http::HeaderValue::from_str(&value).map_err(|_| "an invalid header value")?;
        headers.push((name, value));
    }
    Ok(SourcedHeaders::new(headers, valid_for))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(out: &str) -> Result<(Vec<String>, Option<u64>), &'static str> {
        parse_output(out.as_bytes()).map(|SourcedHeaders { headers: h, valid_for: ttl, .. }| {
            (
                h.iter().map(|(n, v)| format!("{n}={}", v.to_str().unwrap())).collect(),
                ttl.map(|d| d.as_secs()),
            )
        })
    }

    #[test]
    fn output_forms() {
        type Parsed<'a> = Result<(Vec<&'a str>, Option<u64>), &'a str>;
        let cases: [(&str, Parsed<'_>); 11] = [
            (r#"{"Authorization": "Bearer t1"}"#, Ok((vec!["authorization=Bearer t1"], None))),
            (
                r#"{"headers": {"X-Token": "t2", "X-Org": "o"}, "expires_in": 300}"#,
                Ok((vec!["x-org=o", "x-token=t2"], Some(300))),
            ),
            (
                "Authorization: Bearer t3\n\nX-Org: o\n",
                Ok((vec!["authorization=Bearer t3", "x-org=o"], None)),
            ),
            ("", Err("no headers")),
            ("{}", Err("no headers")),
            ("just a token", Err("a line is not `Name: value`")),
            (r#"{"A": 1}"#, Err("a header value is not a string")),
            (
                r#"{"headers": {"A": "b"}, "expires_in": "soon"}"#,
                Err("`expires_in` is not a whole number"),
            ),
            ("{not json", Err("not valid JSON")),
            ("Bad Name: v", Err("an invalid header name")),
            ("A: b\u{7f}c", Err("an invalid header value")),
        ];
        for (out, expected) in cases {
            let expected =
                expected.map(|(v, t)| (v.into_iter().map(str::to_owned).collect::<Vec<_>>(), t));
            let mut got = names(out);
            if let Ok((list, _)) = &mut got {
                list.sort();
            }
            assert_eq!(got, expected, "{out:?}");
        }
        assert_eq!(parse_output(b"\xff\xfe").unwrap_err(), "not UTF-8");
    }
}
