//! The cap on the events waiting unsent on one SSE connection
//! (`HttpOptions::max_unsent_events`): clients that open a stream and do
//! not read it, on sockets with a small receive buffer, while the handler
//! sends many large events. A POST's reply stream and the standalone GET
//! stream end at the cap, and a resumption with `Last-Event-ID` gets every
//! event after it (the reply included), or, from an event the log no
//! longer holds, a comment naming what it lost; a stateless-era stream is
//! cut and its request cancelled. A reading client is not held up, and the
//! toolkit's own client gets every progress notification and its answer.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_peer::{EraChoice, RequestOptions};
use mcp_server_io::http::{HttpOptions, HttpServer, ReplyMode, serve};
use mcp_server_io::{Context, Handler, Params, Reply, ServeEra, ServerInfo};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};

use crate::http::{POST, request_text};

/// Every wait is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The cap the tests serve with.
const CAP: usize = 8;

/// The padding of each event: large, so the socket buffers hold few.
const EVENT_BYTES: usize = 4096;

/// What the tests see of the handler: the floods finished and those
/// dropped (cancelled) before they finished.
#[derive(Default)]
struct Counts {
    done: AtomicUsize,
    cancelled: AtomicUsize,
}

/// `flood` sends `count` progress notifications of [`EVENT_BYTES`] (its
/// request's, pausing a millisecond after each with `pause`), then answers
/// `done`; `broadcast` sends `count` log messages related to no request
/// (the GET stream's) and answers at once.
struct Flood {
    info: ServerInfo,
    counts: Arc<Counts>,
}

/// Counts a flood dropped before it finished.
struct Unfinished(Arc<Counts>, bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn padding(i: usize) -> String {
    format!("{i:06}:{}", "x".repeat(EVENT_BYTES))
}

impl Handler for Flood {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {}, "logging": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        let params = match params.into_value() {
            Ok(params) => params.unwrap_or_default(),
            Err(e) => return Reply::Now(Err(e)),
        };
        let count = params["arguments"]["count"].as_u64().unwrap_or(0) as usize;
        let pause = params["arguments"]["pause"].as_bool().unwrap_or(false);
        let token = params["_meta"]["progressToken"].clone();
        let token = if token.is_null() { json!("p") } else { token };
        let done = |t: &str| Ok(json!({ "content": [{ "type": "text", "text": t }] }));
        match (method, params["name"].as_str()) {
            ("tools/call", Some("flood")) => {
                let counts = self.counts.clone();
                Reply::Later(Box::pin(async move {
                    let mut unfinished = Unfinished(counts.clone(), false);
                    for i in 0..count {
                        cx.notify(
                            "notifications/progress",
                            Some(json!({
                                "progressToken": token, "progress": i, "message": padding(i)
                            })),
                        );
                        if pause {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    }
                    unfinished.1 = true;
                    counts.done.fetch_add(1, Ordering::SeqCst);
                    done("done")
                }))
            }
            ("tools/call", Some("broadcast")) => {
                for i in 0..count {
                    let params = json!({ "level": "info", "data": padding(i) });
                    cx.session().notify("notifications/message", Some(params), None);
                }
                self.counts.done.fetch_add(1, Ordering::SeqCst);
                Reply::Now(done("sent"))
            }
            _ => Reply::Now(Err(mcp_proto::jsonrpc::ErrorObject::method_not_found(method))),
        }
    }
}

async fn start(options: HttpOptions) -> (HttpServer<Flood>, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let made = counts.clone();
    let server = serve(listener, options, move || Flood {
        info: ServerInfo::new("flood", "1"),
        counts: made.clone(),
    })
    .await
    .expect("the server starts");
    (server, counts)
}

/// Waits (bounded) until `f` holds.
async fn until(what: &str, f: impl Fn() -> bool) {
    let wait = async {
        while !f() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(TIMEOUT, wait).await.unwrap_or_else(|_| panic!("in time: {what}"));
}

/// A connection whose receive buffer is small: a client that does not
/// read holds little in its socket, and the rest waits at the server.
async fn small_window(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Writes one HTTP/1.1 request to `/mcp` (the connection closed after the
/// response), with the `Accept` and `Content-Type` of a POST, without
/// reading anything.
async fn send(
    stream: &mut TcpStream,
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) {
    let headers: Vec<(&str, &str)> = POST.iter().chain(headers).copied().collect();
    let request = request_text(addr, method, &headers, body);
    stream.write_all(request.as_bytes()).await.unwrap();
}

/// How a response's chunked body ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Its last chunk came: the stream ended cleanly.
    Clean,
    /// The connection closed before it: the stream was cut.
    Cut,
}

/// A response read so far: head (lower case), the body's data, its end.
struct Read {
    head: String,
    body: String,
    end: Option<End>,
}

impl Read {
    /// The events of the body: (id, data), comments as (`:`, text).
    fn events(&self) -> Vec<(String, String)> {
        let mut events = Vec::new();
        for block in self.body.split("\n\n").filter(|b| !b.is_empty()) {
            let (mut id, mut data) = (String::new(), String::new());
            for line in block.lines() {
                if let Some(comment) = line.strip_prefix(": ") {
                    (id, data) = (":".to_owned(), comment.to_owned());
                } else if let Some(v) = line.strip_prefix("id: ") {
                    id = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = v.to_owned();
                }
            }
            events.push((id, data));
        }
        events
    }

    /// The JSON-RPC messages of the body's events.
    fn messages(&self) -> Vec<Value> {
        let events = self.events().into_iter().filter(|(id, d)| id != ":" && !d.is_empty());
        events.map(|(_, data)| serde_json::from_str(&data).unwrap()).collect()
    }

    /// The id of the last event with one.
    fn last_id(&self) -> String {
        let mut ids = self.events().into_iter().map(|(id, _)| id);
        ids.rfind(|id| !id.is_empty() && id != ":").expect("an event id")
    }
}

/// The data of a chunked body and whether its last chunk came.
fn dechunk(bytes: &[u8]) -> (Vec<u8>, bool) {
    let (mut data, mut at) = (Vec::new(), 0);
    loop {
        let Some(line) = bytes[at..].windows(2).position(|w| w == b"\r\n") else {
            return (data, false);
        };
        let size = std::str::from_utf8(&bytes[at..at + line]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        let start = at + line + 2;
        if size == 0 {
            return (data, true);
        }
        if bytes.len() < start + size + 2 {
            return (data, false);
        }
        data.extend_from_slice(&bytes[start..start + size]);
        at = start + size + 2;
    }
}

/// Reads a response until `enough` holds of it or it ends (by the end of
/// the connection), within [`TIMEOUT`].
async fn read(stream: &mut TcpStream, enough: impl Fn(&Read) -> bool) -> Read {
    let mut bytes = Vec::new();
    let reading = async {
        loop {
            let response = parse(&bytes, false);
            if response.as_ref().is_some_and(|r| r.end.is_some() || enough(r)) {
                return response.unwrap();
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return parse(&bytes, true).expect("a response head");
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(TIMEOUT, reading).await.expect("the response in time")
}

/// What `bytes` hold of a response, `closed` when the connection ended.
fn parse(bytes: &[u8], closed: bool) -> Option<Read> {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    let rest = &bytes[head_end..];
    let (body, end) = if head.contains("transfer-encoding: chunked") {
        let (data, last) = dechunk(rest);
        let end = if last { Some(End::Clean) } else { closed.then_some(End::Cut) };
        (data, end)
    } else {
        (rest.to_vec(), closed.then_some(End::Clean))
    };
    Some(Read { head, body: String::from_utf8(body).unwrap(), end })
}

/// One request on a connection of its own, read to its end.
async fn exchange(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Read {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    send(&mut stream, addr, method, headers, body).await;
    read(&mut stream, |_| false).await
}

/// A handshake-era session: its id.
async fn open_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bound", "version": "1"}}});
    let reply = exchange(addr, "POST", &[], Some(&init)).await;
    let id = reply.head.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap();
    let id = id.trim().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    exchange(addr, "POST", &[("mcp-session-id", &id)], Some(&initialized)).await;
    id
}

fn call(id: i64, name: &str, count: usize, pause: bool) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": { "count": count, "pause": pause },
        "_meta": { "progressToken": id } } })
}

/// The stateless era's request: its `_meta` and headers.
fn stateless_call(id: i64, count: usize) -> (Value, [(&'static str, &'static str); 3]) {
    let mut body = call(id, "flood", count, true);
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "flood"),
    ];
    (body, headers)
}

/// The progress numbers among `messages`, and whether the reply to `id`
/// came (last).
fn progress_and_reply(messages: &[Value], id: i64) -> (Vec<u64>, bool) {
    let mut progress = Vec::new();
    let mut replied = false;
    for message in messages {
        assert!(!replied, "nothing after the reply: {message}");
        if message["id"] == json!(id) {
            assert_eq!(message["result"]["content"][0]["text"], "done", "{message}");
            replied = true;
        } else {
            assert_eq!(message["method"], "notifications/progress", "{message}");
            let n = message["params"]["progress"].as_u64().unwrap();
            assert_eq!(message["params"]["message"], padding(n as usize));
            progress.push(n);
        }
    }
    (progress, replied)
}

/// Resumes `session`'s stream after `last` with GETs until the reply to
/// `id` came (a resumption can end at the cap too, while the flood is
/// still routed): each GET's response.
async fn resume_until_reply(addr: SocketAddr, session: &str, last: &str, id: i64) -> Vec<Read> {
    let mut reads: Vec<Read> = Vec::new();
    let mut last = last.to_owned();
    for _ in 0..20 {
        let rest =
            exchange(addr, "GET", &[("mcp-session-id", session), ("last-event-id", &last)], None)
                .await;
        assert_eq!(rest.end, Some(End::Clean));
        let replied = progress_and_reply(&rest.messages(), id).1;
        last = rest.last_id();
        reads.push(rest);
        if replied {
            return reads;
        }
    }
    panic!("no reply after 20 resumptions");
}

/// At most this many events reach a client that does not read: the cap,
/// and what hyper's write buffer and both sockets hold.
const NOT_READ_AT_MOST: usize = 200;

/// A reading client in another session, while the first one does not
/// read: every event of its flood, then its answer.
async fn a_reader_is_not_held_up(addr: SocketAddr, count: usize) {
    let session = open_session(addr).await;
    let reply = exchange(
        addr,
        "POST",
        &[("mcp-session-id", &session)],
        Some(&call(9, "flood", count, false)),
    )
    .await;
    assert_eq!(reply.end, Some(End::Clean));
    let (mut all, replied) = progress_and_reply(&reply.messages(), 9);
    // A reply stream may end at the cap too (the flood is sent faster than
    // any client reads): the resumptions get the rest.
    if !replied {
        for rest in resume_until_reply(addr, &session, &reply.last_id(), 9).await {
            all.extend(progress_and_reply(&rest.messages(), 9).0);
        }
    }
    assert_eq!(all, (0..count as u64).collect::<Vec<_>>(), "every event once, in order");
}

/// A server capped at [`CAP`] answering over SSE, a session, and a
/// `flood` of `count` events POSTed in it on a small-window connection
/// that does not read, sent whole by the handler.
async fn flood_unread(count: usize) -> (HttpServer<Flood>, String, TcpStream) {
    let mut options = HttpOptions::new(ServeEra::Legacy).with_max_unsent_events(CAP);
    options.reply = ReplyMode::Sse;
    let (server, counts) = start(options).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let mut idle = small_window(addr).await;
    let flood = call(1, "flood", count, false);
    send(&mut idle, addr, "POST", &[("mcp-session-id", &session)], Some(&flood)).await;
    until("the flood is sent", || counts.done.load(Ordering::SeqCst) == 1).await;
    (server, session, idle)
}

#[tokio::test]
async fn a_reply_stream_not_read_ends_at_the_cap_and_a_resumption_gets_the_rest() {
    // 600 events of 4 KiB: more than the sockets hold, fewer than the log.
    let count = 600;
    let (server, session, mut idle) = flood_unread(count).await;
    let addr = server.local_addr();
    // Another session's reader meanwhile.
    a_reader_is_not_held_up(addr, 100).await;
    // The client reads at last: its stream ended at the cap, without the
    // reply.
    let first = read(&mut idle, |_| false).await;
    assert_eq!(first.end, Some(End::Clean));
    let (seen, replied) = progress_and_reply(&first.messages(), 1);
    assert!(!replied, "the reply waits in the log");
    assert!(seen.len() <= NOT_READ_AT_MOST, "{} events reached the client", seen.len());
    // Its resumptions get every event after the last it saw, then the
    // reply.
    let last = first.last_id();
    let mut all = seen;
    for rest in resume_until_reply(addr, &session, &last, 1).await {
        all.extend(progress_and_reply(&rest.messages(), 1).0);
    }
    assert_eq!(all, (0..count as u64).collect::<Vec<_>>(), "every event once, in order");
    server.shutdown().await;
}

#[tokio::test]
async fn a_resumption_from_an_event_no_longer_kept_is_told_what_it_lost() {
    // More events than the log keeps (1024).
    let count = 1500;
    let (server, session, mut idle) = flood_unread(count).await;
    let addr = server.local_addr();
    let first = read(&mut idle, |_| false).await;
    let (seen, replied) = progress_and_reply(&first.messages(), 1);
    assert!(!replied && seen.len() <= NOT_READ_AT_MOST);
    let last = first.last_id();
    // The first resumption is told what it lost: the comment, then the
    // log's events (and the reply, on this one or a later one).
    let reads = resume_until_reply(addr, &session, &last, 1).await;
    let events = reads[0].events();
    let (name, n) = last.rsplit_once('-').unwrap();
    let n: u64 = n.parse().unwrap();
    let mut more = Vec::new();
    for (i, rest) in reads.iter().enumerate() {
        let kept = progress_and_reply(&rest.messages(), 1).0;
        if i > 0 {
            assert!(!rest.body.starts_with(':'), "only the first resumption lost events");
        }
        more.extend(kept);
    }
    let kept_from = more[0];
    assert!(kept_from > n + 1, "events were lost");
    let lost = format!("events {name}-{} to {name}-{} are no longer kept", n + 1, kept_from - 1);
    assert_eq!(events[0], (":".to_owned(), lost));
    assert_eq!(more, (kept_from..count as u64).collect::<Vec<_>>());
    server.shutdown().await;
}

#[tokio::test]
async fn the_get_stream_not_read_ends_at_the_cap_and_a_resumption_gets_the_rest() {
    let options = HttpOptions::new(ServeEra::Legacy).with_max_unsent_events(CAP);
    let (server, counts) = start(options).await;
    let addr = server.local_addr();
    let session = open_session(addr).await;
    let count = 600;
    let mut idle = small_window(addr).await;
    send(&mut idle, addr, "GET", &[("mcp-session-id", &session)], None).await;
    // The GET is attached before the messages come.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let broadcast = call(1, "broadcast", count, false);
    let answer = exchange(addr, "POST", &[("mcp-session-id", &session)], Some(&broadcast)).await;
    assert!(answer.body.contains("sent"), "{}", answer.body);
    assert_eq!(counts.done.load(Ordering::SeqCst), 1);
    a_reader_is_not_held_up(addr, 100).await;
    // The GET stream, which lives as long as the session, ended at the cap.
    let first = read(&mut idle, |_| false).await;
    assert_eq!(first.end, Some(End::Clean), "the GET stream ended");
    let data = |read: &Read| -> Vec<String> {
        read.messages().iter().map(|m| m["params"]["data"].as_str().unwrap().to_owned()).collect()
    };
    let seen = data(&first);
    assert!(seen.len() <= NOT_READ_AT_MOST, "{} events reached the client", seen.len());
    let last = first.last_id();
    let mut resumed = TcpStream::connect(addr).await.unwrap();
    let headers = [("mcp-session-id", session.as_str()), ("last-event-id", last.as_str())];
    send(&mut resumed, addr, "GET", &headers, None).await;
    let rest = read(&mut resumed, |r| seen.len() + r.messages().len() >= count).await;
    let all: Vec<String> = seen.into_iter().chain(data(&rest)).collect();
    assert_eq!(all, (0..count).map(padding).collect::<Vec<_>>(), "every event once, in order");
    server.shutdown().await;
}

#[tokio::test]
async fn a_stateless_stream_not_read_is_cut_and_its_request_cancelled() {
    let options = HttpOptions::new(ServeEra::Modern).with_max_unsent_events(CAP);
    let (server, counts) = start(options).await;
    let addr = server.local_addr();
    // Long enough (a millisecond after each event) to be running when cut.
    let count = 5000;
    let (body, headers) = stateless_call(1, count);
    let mut idle = small_window(addr).await;
    send(&mut idle, addr, "POST", &headers, Some(&body)).await;
    until("the request is cancelled", || counts.cancelled.load(Ordering::SeqCst) == 1).await;
    assert_eq!(counts.done.load(Ordering::SeqCst), 0);
    let shared = server.stateless_session().expect("the stateless session");
    until("its place is free", || shared.in_flight() == 0).await;
    // A reader meanwhile gets its whole stream.
    let (body, headers) = stateless_call(2, 100);
    let reply = exchange(addr, "POST", &headers, Some(&body)).await;
    assert_eq!(reply.end, Some(End::Clean));
    let (progress, replied) = progress_and_reply(&reply.messages(), 2);
    assert!(replied);
    assert_eq!(progress, (0..100).collect::<Vec<_>>());
    // The client reads at last: the events before the cut, then the cut.
    let first = read(&mut idle, |_| false).await;
    assert_eq!(first.end, Some(End::Cut), "a broken stream, not a clean end");
    let (seen, replied) = progress_and_reply(&first.messages(), 1);
    assert!(!replied);
    // What reached the client is what the sockets took while the handler
    // ran (they grow: hundreds of these events), not the whole flood.
    assert!(seen.len() < count, "{} events reached the client", seen.len());
    assert_eq!(seen, (0..seen.len() as u64).collect::<Vec<_>>());
    server.shutdown().await;
}

#[tokio::test]
async fn the_toolkit_client_gets_every_progress_and_its_answer_past_a_small_cap() {
    for (era, mode) in [(EraChoice::Legacy, ReplyMode::Sse), (EraChoice::Legacy, ReplyMode::Auto)] {
        // A cap of two: a burst of 300 events goes past it whoever reads.
        let mut options = HttpOptions::new(ServeEra::Both).with_max_unsent_events(2);
        options.reply = mode;
        let (server, _) = start(options).await;
        let mut client_options = mcp_http::HttpOptions::new("bound-test");
        client_options.request_timeout = TIMEOUT;
        client_options.client.era = era;
        let client = mcp_http::connect(server.url(), client_options).unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let progress = seen.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |p| {
                progress.lock().unwrap().push(p.progress as u64);
            })),
            ..RequestOptions::default()
        };
        let count = 300;
        let flood = client.call_tool_with("flood", json!({ "count": count }), options);
        let result = tokio::time::timeout(TIMEOUT, flood).await.expect("in time").unwrap();
        assert_eq!(mcp_proto::render_tool_result(&result).text, "done", "{mode:?}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen, (0..count).collect::<Vec<u64>>(), "{mode:?}");
        server.shutdown().await;
    }
}
