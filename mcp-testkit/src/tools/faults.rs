//! The tools that misbehave on request: `crash`, `noisy` (garbage on
//! stdout, lines on stderr), `big` text and `spawn_child`.

use std::io::Write as _;
use std::process::Stdio;

use mcp_server_io::Outgoing;
use serde_json::Value;

use super::{Args, Call, MAX_BYTES, MAX_NOISY_LINES, text};
use crate::server::stderr_line;

pub(super) fn crash(call: &Call, args: &mut Args) -> Result<(), String> {
    let code = args.opt_integer("code", 255)?.unwrap_or(3);
    let message =
        args.opt_string("stderr")?.unwrap_or_else(|| "testkit: crashing on purpose".to_owned());
    stderr_line(&message);
    // `code` is at most 255, so it fits.
    call.server.send(Outgoing::Exit(i32::try_from(code).unwrap_or(255)));
    Ok(())
}

pub(super) fn noisy(call: &Call, args: &Args) -> Result<Value, String> {
    let lines = args.opt_integer("lines", MAX_NOISY_LINES)?.unwrap_or(3);
    let long_line = args.opt_integer("long_line_bytes", MAX_BYTES)?;
    let rounds = args.opt_integer("garbage_rounds", MAX_NOISY_LINES)?.unwrap_or(1);
    let mut garbage: Vec<Vec<u8>> = Vec::new();
    for _ in 0..rounds {
        garbage.extend([
            b"this line is not JSON at all".to_vec(),
            br#"{"hello":"this is JSON, but not JSON-RPC"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":"testkit-no-such-request","result":{}}"#.to_vec(),
        ]);
    }
    if let Some(n) = long_line {
        garbage.push(long_line_of(n as usize));
    }
    let written = garbage.len();
    for line in garbage {
        call.server.send(Outgoing::RawLine(line));
    }
    {
        let mut err = std::io::stderr().lock();
        for i in 1..=lines {
            let _ = writeln!(err, "testkit: noisy stderr line {i} of {lines}");
        }
        let _ = err.flush();
    }
    Ok(text(format!(
        "noisy: wrote {written} garbage lines to stdout (stdio only) and {lines} lines to stderr"
    )))
}

/// A line of exactly `n` bytes: a valid `notifications/message` padded to
/// length when `n` leaves room for one, else `n` bytes of `x`.
fn long_line_of(n: usize) -> Vec<u8> {
    const HEAD: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"mcp-testkit","data":""#;
    const TAIL: &str = r#""}}"#;
    let mut line = Vec::with_capacity(n);
    if n >= HEAD.len() + TAIL.len() {
        line.extend_from_slice(HEAD.as_bytes());
        line.resize(n - TAIL.len(), b'x');
        line.extend_from_slice(TAIL.as_bytes());
    } else {
        line.resize(n, b'x');
    }
    line
}

pub(super) fn spawn_child(args: &Args) -> Result<Value, String> {
    let inherit = match args.0.get("inherit_stdio") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("argument `inherit_stdio` must be a boolean".to_owned()),
    };
    let mut command = std::process::Command::new("sleep");
    command.arg("300");
    if !inherit {
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    }
    // The child stays in the server's process group (the default), so a
    // client that kills the group kills it too. Dropping the handle neither
    // waits for nor kills it.
    let child = command.spawn().map_err(|e| format!("could not start `sleep 300`: {e}"))?;
    Ok(text(child.id().to_string()))
}

/// `n` bytes of ASCII: the alphabet and digits, over and over.
pub(super) fn ascii_text(n: usize) -> String {
    const PATTERN: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
    let mut s = String::with_capacity(n);
    while s.len() < n {
        let take = PATTERN.len().min(n - s.len());
        s.push_str(&PATTERN[..take]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_exact() {
        for n in [0, 1, 35, 36, 37, 1000, 65_537] {
            assert_eq!(ascii_text(n).len(), n);
            assert_eq!(long_line_of(n).len(), n);
        }
        let line = long_line_of(500);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["method"], "notifications/message");
    }
}
