//! The client's decisions, on data: what the session layer asks before it
//! acts, answered with no I/O, no clock and no runtime (in the manner of
//! quinn-proto's connection: the driver supplies what happened, the
//! decision says what to do, the driver does it).
//!
//! - [`open`]: which era to open a connection in first ([`EraChoice`],
//!   the memory of handshake-era servers), and whether a remembered
//!   handshake that failed is probed again.
//! - [`probe`]: the era probe (`server/discover`) as a state machine:
//!   each answer or failure in, the next step out ([`ProbeStep`]).
//! - [`recovery`]: what to do after a failed attempt at a request
//!   ([`Action`]): send again, discover again, a new session, give up.
//! - [`input`]: the bounds of `input_required` rounds (rounds, input
//!   requests per round, the size of the answers built) and the
//!   parameters of the retry.
//! - [`result`]: what a result's kind asks for (deliver, perhaps cache;
//!   another input round; follow a task) and the task-polling interval.
//! - [`era`]: what differs between the protocol eras, behind one
//!   interface ([`EraRules`]), one module per era ([`handshake`],
//!   [`stateless`]): a next revision is a new module and one arm in
//!   [`rules`].
//!
//! The transport-level facts a decision needs (whether the server refused
//! the request, whether its answer's stream broke, whether the session
//! expired, the protocol error a transport error carries) come in as a
//! plain [`Failure`] the driver fills in, so no decision sees a transport
//! type.

pub mod era;
pub mod handshake;
pub mod input;
pub mod open;
pub mod probe;
pub mod recovery;
pub mod result;
pub mod stateless;

pub use era::{EraRules, rules};
pub use input::{AnswerBudget, InputLimits, InputRounds};
pub use open::{EraChoice, OpenStep};
pub use probe::{ProbeState, ProbeStep};
pub use recovery::{Action, Attempt, GiveUp};
pub use result::ResultStep;

use crate::client::ClientError;

/// How one attempt at a request failed, as the driver saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failure<'a> {
    /// The protocol error the failure carries: the core's outcome, or the
    /// JSON-RPC error a transport error wraps (an HTTP error body's), if
    /// any.
    pub error: Option<&'a ClientError>,
    /// Where the failure came from.
    pub origin: Origin,
}

/// Where a [`Failure`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The core's outcome: the server answered with an error, the request
    /// timed out or was cancelled, the connection closed under it.
    Core,
    /// The transport failed to carry the request, saying what it knows.
    Transport(TransportFacts),
}

/// What a transport says of a request it failed to carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportFacts {
    /// The server was reached and refused the request without an answer
    /// the client understands (Streamable HTTP: 400, 404, 405).
    pub refusal: bool,
    /// The stream that was to carry the answer broke before it came.
    pub stream_lost: bool,
    /// The server no longer knows the session (Streamable HTTP: 404 to a
    /// request that carried `Mcp-Session-Id`).
    pub session_expired: bool,
}

impl<'a> Failure<'a> {
    /// The core's outcome `error`.
    pub fn core(error: &'a ClientError) -> Failure<'a> {
        Failure { error: Some(error), origin: Origin::Core }
    }

    /// A transport's failure, with the protocol error it carries.
    pub fn transport(error: Option<&'a ClientError>, facts: TransportFacts) -> Failure<'a> {
        Failure { error, origin: Origin::Transport(facts) }
    }

    /// What the transport said, when the failure is the transport's.
    pub fn transport_facts(&self) -> Option<TransportFacts> {
        match self.origin {
            Origin::Transport(facts) => Some(facts),
            Origin::Core => None,
        }
    }

    /// Whether it carries an error only a stateless-era server sends
    /// (`-32020`, `-32021`, `-32022`).
    pub fn is_modern_error(&self) -> bool {
        self.error.is_some_and(ClientError::is_modern_error)
    }
}
