//! One SSE stream: its numbered, bounded event log, and the connection (if
//! any) currently receiving it.
//!
//! A stream outlives its connections: a POST's reply stream or the session's
//! GET stream keeps its events, so a client that lost the connection can
//! resume with GET and `Last-Event-ID: <stream>-<n>` and receive the events
//! after `n`, then whatever comes next.
//!
//! A connection whose client does not read is ended at its cap of events
//! waiting unsent ([`ResponseBody::events`](super::body::ResponseBody::events)):
//! the event that did not fit, and every one after it, stay in the log, so
//! the client gets them when it resumes. A resumption from an event the log
//! no longer holds gets what it holds, after a comment naming the events
//! it lost.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;

use super::body::{EventSender, Refused};

/// The most events a stream keeps for resumption; older ones are forgotten.
pub const LOG_CAP: usize = 1024;
/// How long a cut waits for the events before it to be written.
const CUT_DELAY: Duration = Duration::from_millis(50);

/// One SSE stream of a session.
#[derive(Debug)]
pub struct EventStream {
    name: String,
    /// Legacy (2024-11-05) streams have no event ids.
    legacy: bool,
    state: Mutex<StreamState>,
}

#[derive(Debug, Default)]
struct StreamState {
    /// The number of the next event.
    next: u64,
    /// Recent events, by number, oldest first.
    log: VecDeque<(u64, Bytes)>,
    /// Events numbered below this have reached some connection.
    delivered: u64,
    /// The connection receiving new events.
    subscriber: Option<Subscriber>,
    /// The reply was sent: no more events come, and a connection ends once
    /// it has everything.
    finished: bool,
}

#[derive(Debug)]
struct Subscriber {
    tx: EventSender,
    /// Events this connection may still receive before it is cut.
    budget: Option<usize>,
}

impl EventStream {
    /// An empty stream. Event ids are `<name>-<n>`, so `name` must be
    /// unique in the server and hold no `-` at its end; a `legacy`
    /// (2024-11-05) stream has no event ids.
    pub fn new(name: String, legacy: bool) -> Self {
        EventStream { name, legacy, state: Mutex::new(StreamState::default()) }
    }

    /// The name its event ids start with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Appends a JSON-RPC message event (`event: message`).
    pub fn push_message(&self, json: &[u8]) {
        let json = String::from_utf8_lossy(json);
        self.push(json.len() + 24, |event| {
            event.extend_from_slice(b"event: message\ndata: ");
            event.extend_from_slice(json.as_bytes());
            event.extend_from_slice(b"\n\n");
        });
    }

    /// Appends a priming event: an id, an optional `retry`, empty data.
    pub fn push_priming(&self, retry_ms: Option<u64>) {
        self.push(32, |event| {
            if let Some(ms) = retry_ms {
                event.extend_from_slice(b"retry: ");
                push_decimal(event, ms);
                event.push(b'\n');
            }
            event.extend_from_slice(b"data:\n\n");
        });
    }

    /// Appends the legacy transport's `endpoint` event.
    pub fn push_endpoint(&self, uri: &str) {
        let uri = uri.replace(['\r', '\n'], "");
        self.push(uri.len() + 24, |event| {
            event.extend_from_slice(b"event: endpoint\ndata: ");
            event.extend_from_slice(uri.as_bytes());
            event.extend_from_slice(b"\n\n");
        });
    }

    /// Appends an event: its `id: <name>-<n>` line (none on a legacy
    /// stream), then what `build` writes (`more` bytes or so).
    fn push(&self, more: usize, build: impl FnOnce(&mut Vec<u8>)) {
        let mut state = self.state();
        let n = state.next;
        state.next += 1;
        let mut event = Vec::with_capacity(self.name.len() + 26 + more);
        if !self.legacy {
            event.extend_from_slice(b"id: ");
            event.extend_from_slice(self.name.as_bytes());
            event.push(b'-');
            push_decimal(&mut event, n);
            event.push(b'\n');
        }
        build(&mut event);
        let bytes = Bytes::from(event);
        state.log.push_back((n, bytes.clone()));
        if state.log.len() > LOG_CAP {
            state.log.pop_front();
        }
        deliver(&mut state, n, bytes, false);
    }

    /// Marks the stream complete (its reply is in the log) and ends the
    /// current connection's body cleanly.
    pub fn finish(&self) {
        let mut state = self.state();
        state.finished = true;
        state.subscriber = None;
    }

    /// Ends the current connection's body cleanly; the stream stays
    /// resumable.
    pub fn disconnect(&self) {
        self.state().subscriber = None;
    }

    /// Cuts the current connection (no clean end of the body): a hook for
    /// test servers that drop streams on purpose.
    pub fn abort(&self) {
        if let Some(subscriber) = self.state().subscriber.take() {
            cut_later(subscriber.tx);
        }
    }

    /// Makes `tx` the stream's connection (ending any previous one): it
    /// first gets the logged events numbered after `after` (with `None`, the
    /// events no connection has received yet), then new ones. When the
    /// log no longer holds the events right after `after`, the replay starts
    /// with a comment (`: events <name>-<a> to <name>-<b> are no longer
    /// kept`), and a warning is logged. A finished stream ends the body
    /// after the replay. `budget` cuts the connection after that many
    /// events.
    pub fn attach(&self, tx: EventSender, after: Option<u64>, budget: Option<usize>) {
        let mut state = self.state();
        let first = match after {
            Some(n) => n.saturating_add(1),
            None => state.delivered,
        };
        let kept = state.log.front().map_or(state.next, |(n, _)| *n);
        if after.is_some() && first < kept {
            tracing::warn!(
                stream = %self.name,
                lost = kept - first,
                "a resumption asked for events no longer kept (a stream keeps {LOG_CAP})"
            );
            // The body is new: nothing waits in it yet.
            let _ = tx.send(self.lost_comment(first, kept - 1));
        }
        state.subscriber = Some(Subscriber { tx, budget });
        let replay: Vec<(u64, Bytes)> =
            state.log.iter().filter(|(n, _)| *n >= first).cloned().collect();
        for (n, bytes) in replay {
            deliver(&mut state, n, bytes, true);
        }
        if state.finished {
            state.subscriber = None;
        }
    }

    /// `: events <name>-<from> to <name>-<to> are no longer kept`, an SSE
    /// comment.
    fn lost_comment(&self, from: u64, to: u64) -> Bytes {
        let mut comment = Vec::with_capacity(self.name.len() * 2 + 64);
        comment.extend_from_slice(b": events ");
        for (i, n) in [from, to].into_iter().enumerate() {
            if i == 1 {
                comment.extend_from_slice(b" to ");
            }
            comment.extend_from_slice(self.name.as_bytes());
            comment.push(b'-');
            push_decimal(&mut comment, n);
        }
        comment.extend_from_slice(b" are no longer kept\n\n");
        Bytes::from(comment)
    }

    fn state(&self) -> MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sends one event to the connection, if any, spending its budget. A
/// connection gone, or at its cap of events waiting unsent, is let go: its
/// body ends (cleanly, after what waits in it) and the event stays in the
/// log for a resume. A `replay` of the log is not refused for the cap: it
/// holds only what the log holds (at most [`LOG_CAP`] events), and the
/// events after it are refused until the client has taken it.
fn deliver(state: &mut StreamState, n: u64, bytes: Bytes, replay: bool) {
    let Some(subscriber) = &mut state.subscriber else { return };
    let sent = if replay { subscriber.tx.send_past_cap(bytes) } else { subscriber.tx.send(bytes) };
    if let Err(refused) = sent {
        if refused == Refused::Full {
            tracing::debug!(
                event = n,
                unsent = subscriber.tx.unsent(),
                "an event stream's client does not read: its connection ends, the stream stays resumable"
            );
        }
        state.subscriber = None;
        return;
    }
    state.delivered = state.delivered.max(n + 1);
    if let Some(budget) = &mut subscriber.budget {
        *budget = budget.saturating_sub(1);
        if *budget == 0
            && let Some(subscriber) = state.subscriber.take()
        {
            cut_later(subscriber.tx);
        }
    }
}

/// Cuts a connection a moment from now: hyper drops data it has buffered
/// but not written when a body fails, so the events sent before the cut
/// need that moment to reach the socket.
fn cut_later(tx: EventSender) {
    tokio::spawn(async move {
        tokio::time::sleep(CUT_DELAY).await;
        tx.cut();
    });
}

/// Writes `n` in decimal (as `{n}` formats it, without the formatter).
fn push_decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Splits an event id `<stream>-<n>` into its stream name and number.
pub fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (name, n) = id.trim().rsplit_once('-')?;
    Some((name, n.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::ResponseBody;
    use http_body_util::BodyExt;

    async fn drain(body: ResponseBody) -> (String, bool) {
        let mut body = body;
        let mut text = String::new();
        loop {
            match body.frame().await {
                Some(Ok(frame)) => {
                    text.push_str(&String::from_utf8_lossy(&frame.into_data().unwrap()));
                }
                Some(Err(_)) => return (text, true),
                None => return (text, false),
            }
        }
    }

    #[test]
    fn decimals_are_written_as_the_formatter_writes_them() {
        let mut table = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65_535, 1 << 32];
        table.extend([10u64.pow(19) - 1, 10u64.pow(19), u64::MAX - 1, u64::MAX]);
        for n in table.into_iter().chain((0..64).map(|k| 1u64 << k)) {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes(), "{n}");
        }
    }

    #[tokio::test]
    async fn events_are_numbered_logged_and_replayed_after_an_id() {
        let stream = EventStream::new("s1".into(), false);
        let (tx, body) = ResponseBody::events(LOG_CAP);
        stream.attach(tx, None, Some(2));
        stream.push_priming(Some(50));
        stream.push_message(br#"{"a":1}"#);
        // The budget of two events cut the first connection.
        stream.push_message(br#"{"b":2}"#);
        stream.finish();
        let (first, cut) = drain(body).await;
        assert!(cut);
        assert_eq!(
            first,
            "id: s1-0\nretry: 50\ndata:\n\nid: s1-1\nevent: message\ndata: {\"a\":1}\n\n"
        );
        let (tx, body) = ResponseBody::events(LOG_CAP);
        stream.attach(tx, Some(1), None);
        let (rest, cut) = drain(body).await;
        assert!(!cut);
        assert_eq!(rest, "id: s1-2\nevent: message\ndata: {\"b\":2}\n\n");
        assert_eq!(parse_event_id("s1-2"), Some(("s1", 2)));
        // A legacy stream's events have no ids.
        let legacy = EventStream::new("l".into(), true);
        let (tx, body) = ResponseBody::events(LOG_CAP);
        legacy.attach(tx, None, None);
        legacy.push_endpoint("/m?s=1\r\n");
        legacy.push_message(b"{}");
        legacy.finish();
        let expected = "event: endpoint\ndata: /m?s=1\n\nevent: message\ndata: {}\n\n";
        assert_eq!(drain(body).await, (expected.to_owned(), false));
        assert_eq!(parse_event_id("s1"), None);
    }

    #[tokio::test]
    async fn a_fresh_connection_gets_only_undelivered_events_and_the_log_is_bounded() {
        let stream = EventStream::new("g".into(), false);
        for i in 0..LOG_CAP + 10 {
            stream.push_message(format!("{i}").as_bytes());
        }
        let (tx, body) = ResponseBody::events(LOG_CAP);
        stream.attach(tx, None, None);
        stream.finish();
        let (text, _) = drain(body).await;
        assert_eq!(text.matches("event: message").count(), LOG_CAP);
        assert!(text.starts_with("id: g-10\n"), "{}", &text[..40]);
        let (tx, body) = ResponseBody::events(LOG_CAP);
        stream.attach(tx, None, None);
        assert_eq!(drain(body).await.0, "");
    }

    #[tokio::test]
    async fn a_connection_at_its_cap_ends_and_the_rest_waits_in_the_log() {
        let stream = EventStream::new("c".into(), false);
        let (tx, body) = ResponseBody::events(2);
        stream.attach(tx, None, None);
        for i in 0..5 {
            stream.push_message(format!("{i}").as_bytes());
        }
        // Nothing was read: two events wait, the third ended the connection.
        let (text, cut) = drain(body).await;
        assert!(!cut, "a clean end");
        assert_eq!(text.matches("event: message").count(), 2);
        assert!(text.ends_with("id: c-1\nevent: message\ndata: 1\n\n"), "{text}");
        // A resumption gets the rest at once, past the cap (it is the log's).
        let (tx, body) = ResponseBody::events(2);
        stream.attach(tx, Some(1), None);
        stream.finish();
        let (text, _) = drain(body).await;
        let data: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
        assert_eq!(data, ["2", "3", "4"]);
        // A fresh connection gets what no connection took, from `c-2`.
        let stream = EventStream::new("d".into(), false);
        let (tx, body) = ResponseBody::events(1);
        stream.attach(tx, None, None);
        stream.push_message(b"0");
        stream.push_message(b"1");
        drop(body);
        let (tx, body) = ResponseBody::events(8);
        stream.attach(tx, None, None);
        stream.finish();
        assert!(drain(body).await.0.starts_with("id: d-1\n"));
    }

    #[tokio::test]
    async fn a_resumption_from_a_forgotten_event_is_told_what_it_lost() {
        let stream = EventStream::new("g".into(), false);
        for i in 0..LOG_CAP + 10 {
            stream.push_message(format!("{i}").as_bytes());
        }
        // The log starts at g-10: (after, the comment expected).
        // A fresh connection (first, so no event was delivered) is not a
        // resumption: no comment.
        let table = [
            (None, None),
            (Some(0), Some("g-1 to g-9")),
            (Some(3), Some("g-4 to g-9")),
            (Some(8), Some("g-9 to g-9")),
            (Some(9), None),
            (Some(10), None),
        ];
        for (after, lost) in table {
            let (tx, body) = ResponseBody::events(LOG_CAP);
            stream.attach(tx, after, None);
            stream.disconnect();
            let (text, _) = drain(body).await;
            let comment = text
                .strip_prefix(": events ")
                .and_then(|t| t.split_once(" are no longer kept\n\n"));
            assert_eq!(comment.map(|(lost, _)| lost), lost, "{after:?}");
            let rest = comment.map_or(text.as_str(), |(_, rest)| rest);
            let first = after.map_or(10, |n| (n + 1).max(10));
            assert!(rest.starts_with(&format!("id: g-{first}\n")), "{after:?}: {}", &rest[..20]);
            assert_eq!(rest.matches("event: message").count() as u64, LOG_CAP as u64 + 10 - first);
        }
    }
}
