//! The cap on a stdio session's unsent messages, as a decision on data:
//! how many wait in the [`Outgoing`](crate::Outgoing) queue, the cap, and
//! whether the driver reads another line.
//!
//! A client that sends requests and never reads its input fills the pipe;
//! the driver's writer then waits, and every reply made meanwhile (often a
//! busy error, answered at once) waits in the queue. While that queue
//! holds the cap or more, [`stdio::serve`](crate::stdio::serve) reads no
//! further line; it reads again as soon as the writer brings the queue
//! under the cap. Nothing is dropped: the client's requests wait in its
//! own pipe, its writes block, and everything goes on once it reads.
//! Only reading stops: requests already running go on and queue their
//! replies, and a paused reader never waits for anything but the client
//! reading, so a `notifications/cancelled` is read as soon as the client
//! reads what it was sent.
//!
//! ```
//! use mcp_server_io::backlog::{DEFAULT_MAX_BACKLOG, reading_paused};
//!
//! assert!(!reading_paused(DEFAULT_MAX_BACKLOG - 1, DEFAULT_MAX_BACKLOG));
//! assert!(reading_paused(DEFAULT_MAX_BACKLOG, DEFAULT_MAX_BACKLOG));
//! ```

/// The default cap on the messages a stdio session keeps queued and
/// unwritten before it stops reading.
///
/// Four times [`DEFAULT_MAX_IN_FLIGHT`](crate::inflight::DEFAULT_MAX_IN_FLIGHT),
/// so the replies of every request a session runs at once, and their
/// notifications, queue without ever pausing a client that reads; a client
/// that floods and never reads then holds at most this many replies in the
/// server (a busy error is about 200 bytes: some 200 KiB), besides what its
/// pipe and the writer's buffer hold.
pub const DEFAULT_MAX_BACKLOG: usize = 1024;

// Every request a session runs at once queues its reply without a pause.
const _: () = assert!(DEFAULT_MAX_BACKLOG >= 2 * crate::inflight::DEFAULT_MAX_IN_FLIGHT);

/// Whether the driver waits before reading another line while `queued`
/// messages wait to be written under a cap of `max` (a cap of 0 is taken
/// as 1): it reads while fewer than the cap wait, so a line answered with
/// one message leaves at most the cap queued.
pub fn reading_paused(queued: usize, max: usize) -> bool {
    queued >= max.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_pauses_at_the_cap_and_only_there() {
        // (queued, cap, paused)
        let table = [
            (0, 1, false),
            (1, 1, true),
            (0, 0, false),
            (1, 0, true),
            (0, DEFAULT_MAX_BACKLOG, false),
            (DEFAULT_MAX_BACKLOG - 1, DEFAULT_MAX_BACKLOG, false),
            (DEFAULT_MAX_BACKLOG, DEFAULT_MAX_BACKLOG, true),
            (DEFAULT_MAX_BACKLOG + 1, DEFAULT_MAX_BACKLOG, true),
            (usize::MAX - 1, usize::MAX, false),
            (usize::MAX, usize::MAX, true),
        ];
        for (queued, cap, paused) in table {
            assert_eq!(reading_paused(queued, cap), paused, "queued {queued}, cap {cap}");
        }
    }
}
