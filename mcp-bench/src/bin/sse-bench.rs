//! `sse-bench`: `text/event-stream` decode throughput of `mcp-sse` against
//! `sse-stream` 0.2 (the decoder rmcp uses) and `eventsource-stream` 0.2, on
//! the same chunks in the same run. Prints a Markdown table on stdout and
//! progress on stderr.
//!
//! Usage: `sse-bench [--quick] [--profile | --profile-borrowed]`: `--quick`
//! runs fewer rounds, for a smoke run; `--profile` only decodes workload (a)
//! with `mcp-sse`'s owned API (`--profile-borrowed`: its borrowing
//! `decode_with`) a few times and prints nothing, for a profiler
//! (`valgrind --tool=callgrind`).
//!
//! `mcp-sse` has two rows: the owned items of `Decoder::decode` and the
//! borrowed items of `Decoder::decode_with`; the last column gives each
//! other decoder's time as a multiple of both.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::convert::Infallible;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::Stream;
use mcp_bench::alternating;
use mcp_bench::report::{median, per_second, rate};
use mcp_sse::sse::{Decoder, Item, ItemRef};

/// The size of the chunks every decoder is fed (a typical body frame).
const CHUNK: usize = 16 * 1024;

/// What each decoder must find: events, and total bytes of their data.
type Tally = (usize, usize);

struct Workload {
    name: &'static str,
    chunks: Vec<Bytes>,
    bytes: usize,
    events: usize,
}

fn workload(name: &'static str, stream: Vec<u8>, events: usize) -> Workload {
    let bytes = stream.len();
    let stream = Bytes::from(stream);
    let chunks = (0..bytes).step_by(CHUNK).map(|i| stream.slice(i..bytes.min(i + CHUNK))).collect();
    Workload { name, chunks, bytes, events }
}

/// (a) and (c): 100k small JSON-RPC notifications, as an MCP server streams
/// them (`id`, `event`, `data`), with the given line end.
fn small_events(eol: &str) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..100_000 {
        s.push_str(&format!(
            "id: {i}{eol}event: message{eol}data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"call-7\",\"progress\":{i},\"total\":100000}}}}{eol}{eol}"
        ));
    }
    s.into_bytes()
}

/// (b): one 10 MiB event of many `data` lines (a large tool result split
/// over lines of about 100 bytes).
fn one_big_event() -> Vec<u8> {
    let mut s = String::with_capacity(10 * 1024 * 1024 + 200);
    s.push_str("id: big\nevent: message\n");
    let mut i = 0u64;
    while s.len() < 10 * 1024 * 1024 {
        s.push_str(&format!(
            "data: {{\"type\":\"text\",\"line\":{i:08},\"text\":\"lorem ipsum dolor sit amet consectetur adipiscing\"}}\n"
        ));
        i += 1;
    }
    s.push('\n');
    s.into_bytes()
}

fn ours(chunks: &[Bytes]) -> Tally {
    let mut decoder = Decoder::new();
    let (mut events, mut data) = (0, 0);
    for chunk in chunks {
        for item in decoder.decode(chunk) {
            if let Item::Event(event) = item {
                events += 1;
                data += event.data.len();
            }
        }
    }
    (events, data)
}

fn ours_borrowed(chunks: &[Bytes]) -> Tally {
    let mut decoder = Decoder::new();
    let (mut events, mut data) = (0, 0);
    for chunk in chunks {
        decoder.decode_with(chunk, |item| {
            if let ItemRef::Event(event) = item {
                events += 1;
                data += event.data.len();
            }
        });
    }
    (events, data)
}

/// Polls a stream that never waits (its input is in memory) to the end.
fn drain<S: Stream>(stream: S, mut each: impl FnMut(S::Item)) {
    let mut stream = pin!(stream);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => each(item),
            Poll::Ready(None) => return,
            Poll::Pending => unreachable!("an in-memory stream is always ready"),
        }
    }
}

fn input(chunks: &[Bytes]) -> impl Stream<Item = Result<Bytes, Infallible>> + '_ {
    futures_util::stream::iter(chunks.iter().cloned().map(Ok))
}

fn sse_stream(chunks: &[Bytes]) -> Tally {
    let (mut events, mut data) = (0, 0);
    drain(sse_stream::SseStream::from_bytes_stream(input(chunks)), |sse| {
        let sse = sse.expect("sse-stream error");
        if let Some(d) = sse.data {
            events += 1;
            data += d.len();
        }
    });
    (events, data)
}

fn eventsource_stream(chunks: &[Bytes]) -> Tally {
    let (mut events, mut data) = (0, 0);
    drain(input(chunks).eventsource(), |event| {
        let event = event.expect("eventsource-stream error");
        events += 1;
        data += event.data.len();
    });
    (events, data)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let borrowed = std::env::args().any(|a| a == "--profile-borrowed");
    if borrowed || std::env::args().any(|a| a == "--profile") {
        let w = workload("(a)", small_events("\n"), 100_000);
        let run = if borrowed { ours_borrowed } else { ours };
        for _ in 0..3 {
            assert_eq!(std::hint::black_box(run(&w.chunks)).0, w.events);
        }
        return;
    }
    let rounds = if quick { 3 } else { 9 };
    eprintln!("sse-bench: preparing inputs");
    let workloads = [
        workload("(a) 100k small JSON-RPC events, LF", small_events("\n"), 100_000),
        workload("(b) one 10 MiB event of many data lines", one_big_event(), 1),
        workload("(c) 100k small JSON-RPC events, CRLF", small_events("\r\n"), 100_000),
    ];

    println!(
        "| workload | decoder | median time | throughput | events/s | ours (owned / borrowed) is faster by |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for w in &workloads {
        eprintln!("sse-bench: {} ({} bytes, {} rounds)", w.name, w.bytes, rounds);
        let chunks = &w.chunks;
        let mut run_ours = || ours(chunks);
        let mut run_borrowed = || ours_borrowed(chunks);
        let mut run_sse_stream = || sse_stream(chunks);
        let mut run_eventsource = || eventsource_stream(chunks);
        let mut contenders: [(&str, &mut dyn FnMut() -> Tally); 4] = [
            ("mcp-sse", &mut run_ours),
            ("mcp-sse (borrowed)", &mut run_borrowed),
            ("sse-stream 0.2", &mut run_sse_stream),
            ("eventsource-stream 0.2", &mut run_eventsource),
        ];
        let names: Vec<&str> = contenders.iter().map(|(n, _)| *n).collect();
        // Every decoder must find every event and all of its data.
        let reference = ours(chunks);
        assert_eq!(reference.0, w.events, "mcp-sse found {} events", reference.0);
        for (name, run) in contenders.iter_mut() {
            assert_eq!(run(), reference, "{name} disagrees with mcp-sse");
        }
        let times = alternating(rounds, &mut contenders);
        let medians: Vec<Duration> = times.iter().map(|t| median(t)).collect();
        for (name, m) in names.iter().zip(&medians) {
            let mbps = per_second(w.bytes as f64, *m) / 1e6;
            let eps = per_second(w.events as f64, *m);
            let ratio = |ours: Duration| m.as_secs_f64() / ours.as_secs_f64();
            let ratio = if name.starts_with("mcp-sse") {
                "–".to_owned()
            } else {
                format!("{:.1}x / {:.1}x", ratio(medians[0]), ratio(medians[1]))
            };
            println!(
                "| {} | {name} | {:.2} ms | {mbps:.0} MB/s | {} | {ratio} |",
                w.name,
                m.as_secs_f64() * 1e3,
                rate(eps)
            );
        }
    }
    println!();
    println!(
        "Input fed in {} KiB chunks; medians of {rounds} alternating rounds after a warm-up; MB = 10^6 bytes.",
        CHUNK / 1024
    );
}
