//! The cap on a stdio session's unsent messages: a client that floods
//! requests and never reads stops the driver reading, through a pipe of
//! small capacity, then reads everything, one reply per request, in order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_server_io::stdio::{self, Ended, Input};
use mcp_server_io::{ServeEra, ServerInfo, Session, SessionOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::stdio::Tools;

/// Every wait is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The cap the test serves with.
const MAX_BACKLOG: usize = 16;

/// The requests of the flood: many times the cap, and many times what the
/// pipe and the writer's buffer hold.
const REQUESTS: usize = 2_000;

/// The pipe's capacity each way.
const PIPE: usize = 4 * 1024;

/// What the driver's writer may hold besides the queue: its buffer (8 KiB)
/// and the pipe; a reply to `tools/list` is over 100 bytes.
const WRITTEN_AHEAD: usize = (8 * 1024 + PIPE) / 100 + 2;

fn flood() -> Vec<u8> {
    let mut text = String::new();
    let mut push = |message: Value| {
        text.push_str(&message.to_string());
        text.push('\n');
    };
    push(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"}}}));
    push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 1..=REQUESTS {
        push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        if id % 10 == 0 {
            // Cancelling an answered request: read, and ignored.
            push(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id}}));
        }
    }
    text.into_bytes()
}

#[tokio::test]
async fn a_client_that_never_reads_stops_the_reading_until_it_reads() {
    let (ours, theirs) = tokio::io::duplex(PIPE);
    let (server_in, server_out) = tokio::io::split(theirs);
    let (session, queue) =
        Session::new(Tools(ServerInfo::new("tools", "1")), SessionOptions::new(ServeEra::Legacy));
    let lines_read = Arc::new(AtomicUsize::new(0));
    let counted = lines_read.clone();
    let serving = tokio::spawn(async move {
        stdio::serve_with_backlog(server_in, server_out, 1 << 20, MAX_BACKLOG, queue, |input| {
            if let Input::Line(line) = input {
                counted.fetch_add(1, Ordering::Relaxed);
                session.handle_json(line);
            }
        })
        .await
    });
    let (read, mut write) = tokio::io::split(ours);
    let writing = tokio::spawn(async move {
        write.write_all(&flood()).await.unwrap();
        write
    });

    // Wait until the driver stops reading (bounded).
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = lines_read.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the reading never stopped");
        last = now;
    }
    assert!(!writing.is_finished(), "the client's writes should block");
    // Two lines (initialize and its notification) answered with one message,
    // then one reply per request, and one cancellation per ten requests.
    let requests_read = last - 2 - last / 11;
    assert!(
        requests_read <= MAX_BACKLOG + WRITTEN_AHEAD,
        "{last} lines read while the client read nothing: the backlog went over the cap"
    );

    // The client reads: everything is answered, once, in order.
    let mut lines = BufReader::new(read).lines();
    for id in 0..=REQUESTS {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line()).await.expect("in time");
        let reply: Value = serde_json::from_str(&line.unwrap().expect("a line")).unwrap();
        assert_eq!(reply["id"], id, "{reply}");
        assert!(reply.get("result").is_some(), "{reply}");
    }
    let mut write = tokio::time::timeout(TIMEOUT, writing).await.expect("in time").unwrap();
    write.shutdown().await.unwrap();
    let ended = tokio::time::timeout(TIMEOUT, serving).await.expect("in time").unwrap();
    assert_eq!(ended.unwrap(), Ended::InputClosed);
    let rest = tokio::time::timeout(TIMEOUT, lines.next_line()).await.expect("in time");
    assert_eq!(rest.unwrap(), None, "one reply per request, no more");
    assert_eq!(lines_read.load(Ordering::Relaxed), 2 + REQUESTS + REQUESTS / 10);
}
