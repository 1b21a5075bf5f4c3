//! The bounds of `input_required` rounds (2026-07-28), and the retry they
//! lead to.
//!
//! A server may answer `tools/call`, `prompts/get` or `resources/read`
//! with `input_required`: input requests for the host's handlers, and an
//! opaque `requestState`. The client answers them and sends the request
//! again ([`retry_params`]). What a hostile server could make of that is
//! bounded three ways ([`InputLimits`]), each checked before the work it
//! bounds:
//! - the rounds one request may take (a task's input requests count the
//!   same way, one round per status that asks for new input);
//! - the input requests in one round, counted in the answer's text
//!   ([`count_input_requests`]) before any of them is decoded or handed
//!   to a handler;
//! - the size of the answers built for one round ([`AnswerBudget`]),
//!   checked as each handler's answer comes, before the next is asked.

use std::io;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::client::{CallerRound, ClientError};
use crate::methods;
use crate::types::InputRequiredResult;
use crate::version::Era;

/// The default for [`InputLimits::max_rounds`].
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 8;
/// The default for [`InputLimits::max_requests`].
pub const DEFAULT_MAX_INPUT_REQUESTS: usize = 64;
/// The default for [`InputLimits::max_answer_bytes`]: 4 MiB.
pub const DEFAULT_MAX_INPUT_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// How much input one request may ask of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// The most `input_required` rounds one request (or task) may take.
    pub max_rounds: usize,
    /// The most input requests one round may hold.
    pub max_requests: usize,
    /// The most bytes (as JSON text) the answers of one round may take.
    pub max_answer_bytes: usize,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            max_requests: DEFAULT_MAX_INPUT_REQUESTS,
            max_answer_bytes: DEFAULT_MAX_INPUT_ANSWER_BYTES,
        }
    }
}

/// The input rounds of one request (or one task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRounds {
    limits: InputLimits,
    rounds: usize,
}

impl InputRounds {
    /// No round yet.
    pub fn new(limits: InputLimits) -> Self {
        InputRounds { limits, rounds: 0 }
    }

    /// How many rounds were started.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// An `input_required` answer (`raw`, its JSON text) to `method`:
    /// starts a round and gives the decoded answer, or the error the
    /// request fails with. In this order: a method that may not ask for
    /// input, one round too many, too many input requests (counted without
    /// decoding them), an answer of the wrong shape, one with neither
    /// input requests nor `requestState`.
    pub fn handle_input_required(
        &mut self,
        method: &str,
        raw: &str,
    ) -> Result<InputRequiredResult, ClientError> {
        if !methods::may_require_input(method) {
            return Err(invalid(method, "input_required is not an answer this method may give"));
        }
        self.start_round(method, raw)?;
        let asked: InputRequiredResult =
            serde_json::from_str(raw).map_err(|e| invalid(method, &e.to_string()))?;
        if asked.input_requests.is_none() && asked.request_state.is_none() {
            return Err(invalid(
                method,
                "input_required with neither inputRequests nor requestState",
            ));
        }
        Ok(asked)
    }

    /// A task's status (`raw`, the JSON text of a `tasks/get` result or of
    /// the handle) before it is decoded: refused when it holds more input
    /// requests than one round may. Call [`task_round`](Self::task_round)
    /// once it is known to ask for new input.
    pub fn check_task_status(&self, method: &str, raw: &str) -> Result<(), ClientError> {
        let count = count_input_requests(raw).map_err(|e| invalid(method, &e.to_string()))?;
        self.check_count(method, count)
    }

    /// A task's status asks for new input: starts a round.
    pub fn task_round(&mut self, method: &str) -> Result<(), ClientError> {
        self.rounds += 1;
        self.check_rounds(method)
    }

    /// What the answers of the current round may take.
    pub fn answer_budget(&self, method: &str) -> AnswerBudget {
        AnswerBudget { method: method.into(), max: self.limits.max_answer_bytes, used: 0 }
    }

    fn start_round(&mut self, method: &str, raw: &str) -> Result<(), ClientError> {
        self.rounds += 1;
        self.check_rounds(method)?;
        self.check_task_status(method, raw)
    }

    fn check_rounds(&self, method: &str) -> Result<(), ClientError> {
        if self.rounds > self.limits.max_rounds {
            return Err(ClientError::TooManyInputRounds {
                method: method.into(),
                rounds: self.limits.max_rounds,
            });
        }
        Ok(())
    }

    fn check_count(&self, method: &str, count: usize) -> Result<(), ClientError> {
        if count > self.limits.max_requests {
            return Err(ClientError::TooManyInputRequests {
                method: method.into(),
                count,
                max: self.limits.max_requests,
            });
        }
        Ok(())
    }
}

/// The room left for the answers of one input round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerBudget {
    method: String,
    max: usize,
    used: usize,
}

impl AnswerBudget {
    /// Counts one handler's answer (as compact JSON text, measured without
    /// writing it anywhere); the error when the round's answers are now
    /// over the limit.
    pub fn add(&mut self, answer: &Value) -> Result<(), ClientError> {
        let mut counter = Counter(0);
        // Writing to a counter cannot fail but for a value serde cannot
        // encode, which a `Value` never is.
        let _ = serde_json::to_writer(&mut counter, answer);
        self.used = self.used.saturating_add(counter.0);
        if self.used > self.max {
            return Err(ClientError::InputAnswersTooLarge {
                method: self.method.clone(),
                max_bytes: self.max,
            });
        }
        Ok(())
    }

    /// The bytes counted so far.
    pub fn used(&self) -> usize {
        self.used
    }
}

struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How many input requests an answer's JSON text holds (its
/// `inputRequests` members), read without decoding any of them.
pub fn count_input_requests(raw: &str) -> Result<usize, serde_json::Error> {
    struct Count(usize);

    impl<'de> Deserialize<'de> for Count {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct Members;
            impl<'de> Visitor<'de> for Members {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object of input requests")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
                    let mut n = 0usize;
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                        n += 1;
                    }
                    Ok(Count(n))
                }
            }
            d.deserialize_map(Members)
        }
    }

    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "inputRequests", default)]
        input_requests: Option<Count>,
    }

    let peek: Peek = serde_json::from_str(raw)?;
    Ok(peek.input_requests.map_or(0, |c| c.0))
}

/// The parameters of the retry after an input round: the original ones
/// (`None` for none), without what an earlier round added, with
/// `inputResponses` when the server asked for input and the exact
/// `requestState` when it sent one. Parameters that are not an object are
/// an error.
pub fn retry_params(
    method: &str,
    params: Option<Value>,
    responses: Option<Map<String, Value>>,
    request_state: Option<String>,
) -> Result<Value, ClientError> {
    let mut obj = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(other) => {
            return Err(ClientError::InvalidParams {
                method: method.into(),
                reason: format!("parameters must be an object, not {other}"),
            });
        }
    };
    // Nothing of an earlier round is carried over: each retry holds only
    // what the latest answer asked for.
    obj.remove("inputResponses");
    obj.remove("requestState");
    if let Some(responses) = responses {
        obj.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = request_state {
        obj.insert("requestState".into(), Value::String(state));
    }
    // The protocol's own `_meta` members are added again on sending.
    Ok(Value::Object(obj))
}

/// Whether a request whose caller takes its input rounds ([`CallerRound`])
/// carries that round's members: in the stateless era, when the round
/// holds answers or a state (the parameters then built as [`retry_params`]
/// builds a retry's); the handshake era has no such rounds and sends
/// neither member. A request that carries none goes with its parameters
/// as they are (as the caller's text, not decoded).
pub fn sends_caller_round(era: Era, round: &CallerRound) -> bool {
    era == Era::Modern && round.carries_input()
}

fn invalid(method: &str, reason: &str) -> ClientError {
    ClientError::InvalidResult { method: method.into(), reason: reason.into() }
}
