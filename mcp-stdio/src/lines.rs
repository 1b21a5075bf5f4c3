//! Newline-delimited JSON-RPC over a byte stream, both ways: what the
//! stdio transport and the transport over any reader and writer
//! ([`StreamTransport`](crate::StreamTransport)) share.

use std::io;

use mcp_peer::{DropReport, Link};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::codec::Frame;

/// Whether the reader goes on after a frame.
pub(crate) enum Next {
    /// Read the next frame.
    Continue,
    /// The client is gone: stop reading.
    Stop,
}

/// What a reader knows when it hands a frame over.
pub(crate) struct Reader<'a> {
    /// The server's name, for logs.
    pub(crate) server: &'a str,
    /// The line limit, for the message about an over-long line.
    pub(crate) max_line: usize,
    /// Rate-limits the warning about lines that are not JSON-RPC.
    pub(crate) garbage: &'a DropReport,
    /// Counts a dropped line and gives the count so far.
    pub(crate) note_dropped: &'a (dyn Fn() -> u64 + Sync),
}

impl Reader<'_> {
    /// Hands one frame to the client: a message is fed to `link` (`None`:
    /// no client attached yet, the line is dropped); an over-long line or
    /// one that is not JSON-RPC is dropped and counted, and fails the call
    /// its head names, if any; blank lines are skipped.
    pub(crate) fn deliver(&self, frame: Frame, link: Option<&Link>) -> Next {
        let server = self.server;
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len, head } => {
                let dropped = (self.note_dropped)();
                let max = self.max_line;
                tracing::error!(server = %server, len, max, dropped, "dropped an over-long line from the server");
                if let Some(link) = link {
                    let reason = format!("it was {len} bytes, over the {max}-byte line limit");
                    link.fail_unreadable_text(&head, &reason);
                }
                return Next::Continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return Next::Continue;
        }
        // A transport is attached to its client as it is made; what a
        // server says before that (unprompted) has no one to hear it.
        let Some(link) = link else {
            tracing::debug!(server = %server, "dropping a message that came before the transport had a client");
            return Next::Continue;
        };
        if !link.is_alive() {
            return Next::Stop;
        }
        if let Err(e) = link.feed_slice(&line) {
            let dropped = (self.note_dropped)();
            // A server that floods its output with garbage gets one line
            // per second, with the count.
            if let Some(skipped) = self.garbage.dropped(1, tokio::time::Instant::now().into_std()) {
                tracing::warn!(server = %server, error = %e, skipped, dropped, "skipping lines that are not JSON-RPC messages");
            }
            link.fail_unreadable_text(&line, &format!("it is not a valid JSON-RPC message: {e}"));
        }
        Next::Continue
    }
}

/// Appends what the core queued to `out`, a line each.
pub(crate) fn take_queued(link: &Link, out: &mut Vec<u8>) {
    while let Some(m) = link.poll_transmit() {
        out.extend_from_slice(&m.to_vec());
        out.push(b'\n');
    }
}

/// Writes what the core queued, then `line` (which ends in a newline), in
/// one write: messages leave in the order the core made them. The caller
/// holds the writer's lock.
pub(crate) async fn write_queued<W: AsyncWrite + Unpin + ?Sized>(
    link: &Link,
    writer: &mut W,
    line: Option<&[u8]>,
) -> io::Result<()> {
    let mut queued = Vec::new();
    take_queued(link, &mut queued);
    let bytes: &[u8] = match (queued.is_empty(), line) {
        (true, None) => return Ok(()),
        (true, Some(line)) => line,
        (false, None) => &queued,
        (false, Some(line)) => {
            queued.extend_from_slice(line);
            &queued
        }
    };
    writer.write_all(bytes).await
}
