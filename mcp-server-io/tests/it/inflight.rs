//! The cap on the requests a session runs at once: a session flooded with
//! more requests than its cap, against a handler that holds every call
//! until released, over stdio (requests as tasks and beside the driver, in
//! both eras) and over HTTP (a handshake-era session, and the stateless
//! era's POSTs, which share one session).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_server_io::inflight::SERVER_BUSY;
use mcp_server_io::stdio::{self, Input};
use mcp_server_io::{
    Context, Handler, Params, Reply, ServeEra, ServerInfo, Session, SessionOptions,
};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::watch;

/// Every wait is bounded by this.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The cap the tests serve with.
const CAP: usize = 3;

/// What the tests see of the handler: the calls started (their futures
/// polled), and the switch that releases them.
struct Gate {
    info: ServerInfo,
    started: AtomicUsize,
    open: watch::Sender<bool>,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            info: ServerInfo::new("gate", "1"),
            started: AtomicUsize::new(0),
            open: watch::Sender::new(false),
        })
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    /// Waits (bounded) until `n` calls have started.
    async fn wait_started(&self, n: usize) {
        let wait = async {
            while self.started() < n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        tokio::time::timeout(TIMEOUT, wait).await.expect("the calls start in time");
    }

    fn release(&self) {
        self.open.send_replace(true);
    }
}

/// `tools/call` is held until the gate opens; `tools/list` is answered at
/// once.
struct Gated(Arc<Gate>);

impl Handler for Gated {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.0.info
    }

    fn request(&self, _: Context<Self>, method: &str, _: Params) -> Reply {
        match method {
            "tools/list" => Reply::Now(Ok(json!({ "tools": [] }))),
            "tools/call" => {
                let gate = self.0.clone();
                let mut open = self.0.open.subscribe();
                Reply::Later(Box::pin(async move {
                    gate.started.fetch_add(1, Ordering::SeqCst);
                    let _ = open.wait_for(|open| *open).await;
                    Ok(json!({ "content": [] }))
                }))
            }
            _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
        }
    }
}

fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A request of `era`'s shape (the stateless era's with its `_meta`).
fn request(era: ServeEra, id: i64, method: &str) -> Value {
    let mut params = json!({ "name": "hold", "arguments": {} });
    if era == ServeEra::Modern {
        params["_meta"] = stateless_meta();
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn cancelled(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } })
}

/// The test's end of a stdio pair.
struct Pipe {
    session: Session<Gated>,
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Pipe {
    /// A session capped at [`CAP`] served by `stdio::serve` over a pipe,
    /// its requests beside the driver when `beside`.
    fn serve(gate: &Arc<Gate>, era: ServeEra, beside: bool) -> Pipe {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (server_in, server_out) = tokio::io::split(theirs);
        let options = SessionOptions::new(era).with_max_in_flight(CAP);
        let (session, queue) = Session::new(Gated(gate.clone()), options);
        let runner = session.clone();
        let ours_session = session.clone();
        tokio::spawn(async move {
            let serving = stdio::serve(server_in, server_out, 1 << 20, queue, |input| {
                if let Input::Line(line) = input {
                    session.handle_json(line);
                }
            });
            let _ = if beside { runner.run_requests_beside(serving).await } else { serving.await };
        });
        let (read, write) = tokio::io::split(ours);
        Pipe { session: ours_session, write, lines: BufReader::new(read).lines() }
    }

    /// Writes messages, one line each, in one write (a flood).
    async fn send(&mut self, messages: &[Value]) {
        let mut text = String::new();
        for message in messages {
            text.push_str(&message.to_string());
            text.push('\n');
        }
        self.write.write_all(text.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(TIMEOUT, self.lines.next_line()).await.expect("in time");
        serde_json::from_str(&line.unwrap().expect("a line")).unwrap()
    }
}

/// Checks a busy error for request `id`.
fn assert_busy(reply: &Value, id: i64) {
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["error"]["code"], SERVER_BUSY, "{reply}");
    assert_eq!(reply["error"]["data"]["maxInFlight"], CAP, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("retry"), "{reply}");
}

async fn flood_over_stdio(era: ServeEra, beside: bool) {
    let gate = Gate::new();
    let mut pipe = Pipe::serve(&gate, era, beside);
    if era == ServeEra::Legacy {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1"}}});
        pipe.send(&[init]).await;
        assert_eq!(pipe.next().await["id"], 0);
        pipe.send(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]).await;
    }
    // Five calls at once under a cap of three: the last two are refused at
    // once, and never start.
    let calls: Vec<Value> = (1..=5).map(|id| request(era, id, "tools/call")).collect();
    pipe.send(&calls).await;
    assert_busy(&pipe.next().await, 4);
    assert_busy(&pipe.next().await, 5);
    gate.wait_started(CAP).await;
    // A request answered at once holds no place, so is answered at the cap
    // too, as is the handshake era's `ping` (the session's own).
    pipe.send(&[request(era, 6, "tools/list")]).await;
    let listed = pipe.next().await;
    assert_eq!((listed["id"].clone(), listed["result"]["tools"].clone()), (json!(6), json!([])));
    if era == ServeEra::Legacy {
        pipe.send(&[json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})]).await;
        assert_eq!(pipe.next().await, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    }
    assert_eq!((gate.started(), pipe.session.in_flight()), (CAP, CAP));
    // The reader kept reading: a cancellation gets through and frees a
    // place at once, which the next call takes; the one after is refused.
    pipe.send(&[cancelled(2), request(era, 8, "tools/call"), request(era, 9, "tools/call")]).await;
    assert_busy(&pipe.next().await, 9);
    gate.wait_started(CAP + 1).await;
    // Released, every accepted request is answered; the cancelled one never.
    gate.release();
    let mut answered = BTreeSet::new();
    for _ in 0..3 {
        let reply = pipe.next().await;
        assert!(reply.get("result").is_some(), "{reply}");
        answered.insert(reply["id"].as_i64().unwrap());
    }
    assert_eq!(answered, BTreeSet::from([1, 3, 8]));
    assert_eq!(pipe.session.in_flight(), 0);
    // And the places are free again: as many calls as the cap all run.
    let calls: Vec<Value> =
        (10..10 + CAP as i64).map(|id| request(era, id, "tools/call")).collect();
    pipe.send(&calls).await;
    for _ in 0..CAP {
        let reply = pipe.next().await;
        assert!(reply.get("result").is_some(), "{reply}");
    }
    assert_eq!(gate.started(), 2 * CAP + 1);
}

#[tokio::test]
async fn a_flood_over_stdio_runs_the_cap_and_refuses_the_rest_in_the_handshake_era() {
    flood_over_stdio(ServeEra::Legacy, false).await;
}

#[tokio::test]
async fn a_flood_over_stdio_counts_requests_beside_the_driver_alike() {
    flood_over_stdio(ServeEra::Legacy, true).await;
    flood_over_stdio(ServeEra::Modern, true).await;
}

#[tokio::test]
async fn a_flood_over_stdio_runs_the_cap_and_refuses_the_rest_in_the_stateless_era() {
    flood_over_stdio(ServeEra::Modern, false).await;
}

#[tokio::test]
async fn open_listens_take_places_and_give_them_back_when_they_end() {
    let gate = Gate::new();
    let mut pipe = Pipe::serve(&gate, ServeEra::Modern, false);
    let listen = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
               "params": {"_meta": stateless_meta(), "notifications": {"toolsListChanged": true}}})
    };
    pipe.send(&[listen(1), listen(2), request(ServeEra::Modern, 3, "tools/call")]).await;
    for _ in 0..2 {
        assert_eq!(pipe.next().await["method"], "notifications/subscriptions/acknowledged");
    }
    gate.wait_started(1).await;
    pipe.send(&[listen(4), request(ServeEra::Modern, 5, "tools/call")]).await;
    assert_busy(&pipe.next().await, 4);
    assert_busy(&pipe.next().await, 5);
    assert_eq!(pipe.session.in_flight(), CAP);
    pipe.send(&[cancelled(1), listen(6)]).await;
    assert_eq!(pipe.next().await["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(pipe.session.in_flight(), CAP);
}

/// The HTTP service (feature `http`).
#[cfg(feature = "http")]
mod over_http {
    use std::net::{Ipv4Addr, SocketAddr};

    use mcp_server_io::http::{HttpOptions, serve};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    async fn listener() -> TcpListener {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap()
    }

    /// Sends one POST to `/mcp` on `stream` (kept alive) and reads its
    /// response: status, head (lower case), JSON body. With `session`, in it;
    /// without, a stateless-era POST with that era's headers.
    async fn post(
        stream: &mut TcpStream,
        addr: SocketAddr,
        session: Option<&str>,
        body: &Value,
    ) -> (u16, String, Value) {
        let body_value = body;
        let body = body.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
            addr.port(),
            body.len()
        );
        match session {
            Some(session) => request.push_str(&format!("mcp-session-id: {session}\r\n")),
            // The stateless era: its headers, as the body says.
            None => {
                request.push_str("mcp-protocol-version: 2026-07-28\r\n");
                if let Some(method) = body_value.get("id").and(body_value["method"].as_str()) {
                    request.push_str(&format!("mcp-method: {method}\r\n"));
                }
                if let Some(name) = body_value.pointer("/params/name").and_then(Value::as_str) {
                    request.push_str(&format!("mcp-name: {name}\r\n"));
                }
            }
        }
        request.push_str("\r\n");
        request.push_str(&body);
        let exchange = async {
            stream.write_all(request.as_bytes()).await.unwrap();
            read_response(stream).await
        };
        tokio::time::timeout(TIMEOUT, exchange).await.expect("in time")
    }

    /// One response with a `content-length` (JSON replies) or none (202).
    async fn read_response(stream: &mut TcpStream) -> (u16, String, Value) {
        let mut bytes = Vec::new();
        let head_end = loop {
            if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed");
            bytes.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |n| n.trim().parse().unwrap());
        while bytes.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed");
            bytes.extend_from_slice(&chunk[..n]);
        }
        let body = &bytes[head_end..head_end + length];
        let status = head[9..12].parse().unwrap();
        (
            status,
            head,
            if body.is_empty() { Value::Null } else { serde_json::from_slice(body).unwrap() },
        )
    }

    /// Floods one HTTP server over HTTP: `CAP` calls held on connections of
    /// their own, the rest refused at once, a cancellation frees a place, and
    /// after release every accepted call is answered. `session` is the
    /// `Mcp-Session-Id` (handshake era), none in the stateless era.
    async fn flood_over_http(
        gate: &Arc<Gate>,
        addr: SocketAddr,
        era: ServeEra,
        session: Option<&str>,
    ) {
        // Each held call on a connection of its own: its response is the reply.
        let mut held = Vec::new();
        let mut cancelled_post = None;
        for id in 1..=CAP as i64 {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let body = request(era, id, "tools/call");
            let session = session.map(str::to_owned);
            let task = tokio::spawn(async move {
                let reply = post(&mut stream, addr, session.as_deref(), &body).await;
                (id, reply)
            });
            if id == 1 {
                cancelled_post = Some(task);
            } else {
                held.push(task);
            }
        }
        gate.wait_started(CAP).await;
        // Over the cap: the error at once, with the request's id, HTTP 200.
        let mut stream = TcpStream::connect(addr).await.unwrap();
        for id in [11, 12] {
            let (status, _, reply) =
                post(&mut stream, addr, session, &request(era, id, "tools/call")).await;
            assert_eq!(status, 200);
            assert_busy(&reply, id);
        }
        assert_eq!(gate.started(), CAP);
        // A cancellation frees a place: the next call runs.
        let (status, _, _) = post(&mut stream, addr, session, &cancelled(1)).await;
        assert_eq!(status, 202);
        let mut next = TcpStream::connect(addr).await.unwrap();
        let body = request(era, 13, "tools/call");
        let session_owned = session.map(str::to_owned);
        let taken = tokio::spawn(async move {
            let reply = post(&mut next, addr, session_owned.as_deref(), &body).await;
            (13, reply)
        });
        gate.wait_started(CAP + 1).await;
        let (_, _, refused) =
            post(&mut stream, addr, session, &request(era, 14, "tools/call")).await;
        assert_busy(&refused, 14);
        gate.release();
        held.push(taken);
        let mut answered = BTreeSet::new();
        for task in held {
            let (id, (status, _, reply)) =
                tokio::time::timeout(TIMEOUT, task).await.expect("in time").unwrap();
            assert_eq!((status, reply["id"].as_i64()), (200, Some(id)), "{reply}");
            assert!(reply.get("result").is_some(), "{reply}");
            answered.insert(id);
        }
        assert_eq!(answered, BTreeSet::from([2, 3, 13]));
        // The cancelled call is never answered: its POST is given up.
        let cancelled_post = cancelled_post.expect("the first call");
        assert!(!cancelled_post.is_finished());
        cancelled_post.abort();
    }

    #[tokio::test]
    async fn a_flood_over_an_http_session_runs_the_cap_and_refuses_the_rest() {
        let gate = Gate::new();
        let options = HttpOptions::new(ServeEra::Legacy).with_max_in_flight(CAP);
        let factory_gate = gate.clone();
        let server = serve(listener().await, options, move || Gated(factory_gate.clone()))
            .await
            .expect("the server starts");
        let addr = server.local_addr();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1"}}});
        let (status, head, _) = post(&mut stream, addr, None, &init).await;
        assert_eq!(status, 200);
        let id = head.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap().trim();
        let id = id.to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(&mut stream, addr, Some(&id), &initialized).await.0, 202);
        flood_over_http(&gate, addr, ServeEra::Legacy, Some(&id)).await;
        server.shutdown().await;
    }

    #[tokio::test]
    async fn stateless_posts_share_one_cap_across_clients() {
        let gate = Gate::new();
        // The per-session cap is left at its default: the stateless era's
        // shared session has a cap of its own.
        let options = HttpOptions::new(ServeEra::Modern).with_shared_max_in_flight(CAP);
        assert!(options.session.max_in_flight > CAP);
        let factory_gate = gate.clone();
        let server = serve(listener().await, options, move || Gated(factory_gate.clone()))
            .await
            .expect("the server starts");
        flood_over_http(&gate, server.local_addr(), ServeEra::Modern, None).await;
        server.shutdown().await;
    }
}
