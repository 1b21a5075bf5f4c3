//! The raw side of the benchmarks: the JSON-RPC texts a raw contender
//! sends (the same bytes a client sends, written by hand), the testkit's
//! own replies learned once, and the reply templates the fixed-reply
//! answerers (`stdio-bench raw-answer`, `http-bench answer`) replay with
//! each request's id spliced in, found by a byte search, no JSON parsing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::MESSAGE;
use crate::era::Era;

/// The handshake era's `notifications/initialized`.
pub const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/// How long the testkit may take to answer while its replies are learned.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// The handshake era's `initialize` (id 0) of a client named `raw` with no
/// capabilities.
pub fn initialize_request() -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"raw\",\"version\":\"0\"}}}}}}",
        Era::Legacy.revision()
    )
}

/// A request with no params of its own (`server/discover`, `tools/list`),
/// carrying the era's `_meta` ([`Era::raw_meta`]).
pub fn bare_request(id: u64, method: &str, era: Era) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{{{}}}}}",
        era.raw_meta().trim_start_matches(',')
    )
}

/// The stateless era's `server/discover` (id 0).
pub fn discover_request() -> String {
    bare_request(0, "server/discover", Era::Modern)
}

/// One echo call (`tools/call`, [`MESSAGE`]) with `meta`, the era's
/// [`Era::raw_meta`] member.
pub fn call_request(id: u64, meta: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"{MESSAGE}\"}}{meta}}}}}"
    )
}

/// Where the first `"id":` value of a message starts and ends.
pub fn id_span(message: &[u8]) -> Option<(usize, usize)> {
    const KEY: &[u8] = b"\"id\":";
    let start = message.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let len = message[start..].iter().position(|&b| b == b',' || b == b'}')?;
    Some((start, start + len))
}

/// What follows the first `"method":"` of a message (empty when it has
/// none): compare its start with `b"tools/list\""` and the like.
pub fn after_method(message: &[u8]) -> &[u8] {
    const METHOD: &[u8] = b"\"method\":\"";
    message
        .windows(METHOD.len())
        .position(|w| w == METHOD)
        .map_or(&[][..], |at| &message[at + METHOD.len()..])
}

/// A reply cut around its `"id":` value, so that any id can be put back
/// in without parsing JSON.
#[derive(Debug)]
pub struct Template {
    /// The reply up to the id's value.
    pub head: Vec<u8>,
    /// The reply after it, then the given end (a newline for stdio).
    pub tail: Vec<u8>,
}

impl Template {
    /// `reply` (its trailing white space left out) cut around its id, `end`
    /// put after it.
    pub fn new(reply: &str, end: &[u8]) -> Template {
        let reply = reply.trim_end().as_bytes();
        let (a, b) = id_span(reply).unwrap_or((reply.len(), reply.len()));
        let mut tail = reply[b..].to_vec();
        tail.extend_from_slice(end);
        Template { head: reply[..a].to_vec(), tail }
    }
}

/// The testkit's exact replies in one era, learned over stdio (its HTTP
/// service is the same session, so its JSON bodies are the same bytes): to
/// `initialize` (the handshake era; in the stateless era the testkit's
/// refusal of it, which no client sends), to `server/discover` (the
/// stateless era), to `tools/list` and to one echo call.
#[derive(Debug)]
pub struct Replies {
    /// The era they were learned in.
    pub era: Era,
    /// The answer to `initialize` (id 0).
    pub init: String,
    /// The answer to `server/discover` (id 0), stateless era only.
    pub discover: Option<String>,
    /// The answer to `tools/list` (id 2).
    pub list: String,
    /// The answer to one echo call (id 1).
    pub call: String,
}

impl Replies {
    /// Talks to `testkit stdio` of the era once over a raw pipe.
    pub fn learn(testkit: &Path, era: Era) -> Result<Replies, String> {
        let mut child = Command::new(testkit)
            .arg("stdio")
            .args(era.testkit_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", testkit.display()))?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        // Read on a thread, so a silent server cannot hang this one.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            for _ in 0..16 {
                let mut line = String::new();
                if reader.read_line(&mut line).map_or(true, |n| n == 0) || tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Sends one line; for a request (`id` given), its answer.
        let mut ask = |line: String, id: Option<u64>| -> Result<String, String> {
            stdin
                .write_all(format!("{line}\n").as_bytes())
                .map_err(|e| format!("testkit: write: {e}"))?;
            let Some(id) = id else { return Ok(String::new()) };
            loop {
                let line = rx
                    .recv_timeout(ANSWER_WAIT)
                    .map_err(|_| format!("the testkit did not answer within {ANSWER_WAIT:?}"))?;
                let parsed: serde_json::Value =
                    serde_json::from_str(&line).unwrap_or(serde_json::Value::Null);
                if parsed["id"] == id {
                    return Ok(line.trim_end().to_owned());
                }
            }
        };
        let result = (|| {
            let discover = match era {
                Era::Modern => Some(ask(discover_request(), Some(0))?),
                Era::Legacy => None,
            };
            let init = ask(initialize_request(), Some(0))?;
            if era == Era::Legacy {
                ask(INITIALIZED.to_owned(), None)?;
            }
            let list = ask(bare_request(2, "tools/list", era), Some(2))?;
            let call = ask(call_request(1, &era.raw_meta()), Some(1))?;
            let ok = call.contains(MESSAGE)
                && list.contains("\"tools\"")
                && match &discover {
                    None => init.contains("protocolVersion"),
                    Some(d) => {
                        d.contains("\"supportedVersions\"")
                            && call.contains("\"resultType\":\"complete\"")
                    }
                };
            if !ok {
                return Err(format!(
                    "unexpected testkit replies {init:.200?} / {discover:.200?} / {call:.200?}"
                ));
            }
            Ok(Replies { era, init, discover, list, call })
        })();
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_puts_any_id_back() {
        let reply = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n";
        let t = Template::new(reply, b"\n");
        let request = call_request(42, "");
        let (a, b) = id_span(request.as_bytes()).expect("an id");
        let mut out = t.head.clone();
        out.extend_from_slice(&request.as_bytes()[a..b]);
        out.extend_from_slice(&t.tail);
        assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\n");
        assert!(after_method(request.as_bytes()).starts_with(b"tools/call\""));
        assert_eq!(after_method(INITIALIZED.as_bytes()), b"notifications/initialized\"}");
        assert_eq!(after_method(b"{}"), b"");
    }

    #[test]
    fn the_raw_requests_are_json() {
        for text in [
            initialize_request(),
            discover_request(),
            bare_request(2, "tools/list", Era::Legacy),
            call_request(1, &Era::Modern.raw_meta()),
        ] {
            let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{text}");
        }
        let discover: serde_json::Value = serde_json::from_str(&discover_request()).expect("JSON");
        assert_eq!(discover["params"]["_meta"], Era::Modern.meta().expect("_meta"));
    }
}
