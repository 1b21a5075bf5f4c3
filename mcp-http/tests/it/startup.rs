//! Start-up in the handshake era: the standalone GET stream opens in the
//! background after `notifications/initialized` (the handshake does not
//! wait for its answer), or, with `HttpOptions::wait_for_event_stream`,
//! before `initialize` returns, so a server's first message has somewhere
//! to go and the first request follows the GET. Whatever the GET meets (a
//! stream, 405, an error status, no answer, the client closed or dropped
//! meanwhile) ends cleanly. Against a small server here that orders what
//! it sees.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::{EventStreamState, HttpOptions};
use mcp_proto::client::{ListKind, ServerEvent};
use mcp_test_support::bounded_by;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// Every test is bounded by this.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server saw, in order: `GET`, or the JSON-RPC method of a POST.
type Log = Arc<Mutex<Vec<String>>>;

/// An event-stream body that stays open while its sender lives.
struct Events(mpsc::UnboundedReceiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// Sends once when dropped.
struct Ended(mpsc::UnboundedSender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[derive(Default)]
struct Server {
    log: Log,
    /// Answer the GET with this status and no stream (405: the server has
    /// none).
    refuse: Option<StatusCode>,
    /// Told when a GET arrives.
    arrived: Option<mpsc::UnboundedSender<()>>,
    /// Hold the GET's answer until notified.
    release: Option<Arc<Notify>>,
    /// Never answer the GET; told when its handler ends (the client gave
    /// the request up and its connection closed).
    hang: Option<mpsc::UnboundedSender<()>>,
    /// The open standalone streams' senders (kept so they stay open).
    streams: Mutex<Vec<mpsc::UnboundedSender<Bytes>>>,
}

/// A handshake-era server that sends a `notifications/tools/list_changed`
/// on the standalone stream as soon as it opens (or answers the GET with
/// `refuse`).
async fn server(refuse: Option<StatusCode>) -> (SocketAddr, Arc<Server>) {
    serve(Server { refuse, ..Server::default() }).await
}

async fn serve(state: Server) -> (SocketAddr, Arc<Server>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(state);
    let shared = state.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let shared = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(shared.clone(), req));
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (addr, state)
}

fn full(status: StatusCode, body: Value) -> Response<BoxBody<Bytes, Infallible>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", "application/json".parse().unwrap());
    r.headers_mut().insert("mcp-session-id", "s-1".parse().unwrap());
    r
}

fn empty(status: StatusCode) -> Response<BoxBody<Bytes, Infallible>> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = status;
    r
}

async fn answer(
    server: Arc<Server>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    if req.method() == Method::GET {
        let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok());
        let version = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        let seen =
            format!("GET session={} version={}", session.unwrap_or("-"), version.unwrap_or("-"));
        server.log.lock().unwrap().push(seen);
        if let Some(arrived) = &server.arrived {
            let _ = arrived.send(());
        }
        if let Some(status) = server.refuse {
            return Ok(empty(status));
        }
        if let Some(release) = &server.release {
            release.notified().await;
        }
        if let Some(ended) = &server.hang {
            let _told = Ended(ended.clone());
            std::future::pending::<()>().await;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let first = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let _ = tx.send(Bytes::from(format!("event: message\ndata: {first}\n\n")));
        server.streams.lock().unwrap().push(tx);
        let mut r = Response::new(Events(rx).boxed());
        r.headers_mut().insert("content-type", "text/event-stream".parse().unwrap());
        return Ok(r);
    }
    if req.method() == Method::DELETE {
        return Ok(empty(StatusCode::OK));
    }
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("?").to_owned();
    server.log.lock().unwrap().push(method.clone());
    match method.as_str() {
        "initialize" => Ok(full(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "startup", "version": "1"},
            }}),
        )),
        _ if message.get("id").is_none() => Ok(empty(StatusCode::ACCEPTED)),
        _ => Ok(full(StatusCode::OK, json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}))),
    }
}

fn options() -> HttpOptions {
    let mut o = HttpOptions::new("startup");
    o.request_timeout = Duration::from_secs(10);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o
}

fn connect(addr: SocketAddr, options: HttpOptions) -> mcp_http::HttpClient {
    mcp_http::connect(&format!("http://{addr}/mcp"), options).unwrap()
}

/// The client's view of the standalone stream now.
fn state_now(client: &mcp_http::HttpClient) -> EventStreamState {
    client.transport().watch_event_stream().borrow().clone()
}

/// The client's view of the standalone stream, once it is `want`.
async fn state_becomes(
    client: &mcp_http::HttpClient,
    want: impl Fn(&EventStreamState) -> bool,
) -> EventStreamState {
    let mut state = client.transport().watch_event_stream();
    // Bounded: a stream whose state never comes fails the test, not hangs it.
    let reached = tokio::time::timeout(TEST_TIMEOUT, state.wait_for(|s| want(s)));
    reached.await.expect("the stream's state in time").unwrap().clone()
}

fn gets(server: &Server) -> usize {
    server.log.lock().unwrap().iter().filter(|m| m.starts_with("GET")).count()
}

#[tokio::test]
async fn the_stream_opens_in_the_background_and_delivers_the_first_notification() {
    bounded_by(TEST_TIMEOUT, async {
        let release = Arc::new(Notify::new());
        let (addr, server) =
            serve(Server { release: Some(release.clone()), ..Server::default() }).await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut o = options();
        o.on_event = Some(Arc::new(move |e: &ServerEvent| {
            let _ = tx.send(e.clone());
        }));
        let client = connect(addr, o);
        // The server holds the GET's answer: the handshake returns all the
        // same, the stream not open yet.
        client.initialize().await.unwrap();
        assert_eq!(state_now(&client), EventStreamState::NotOpen);

        release.notify_one();
        state_becomes(&client, |s| *s == EventStreamState::Open).await;
        let event = rx.recv().await;
        assert_eq!(event, Some(ServerEvent::ListChanged(ListKind::Tools)));
        let log = server.log.lock().unwrap().clone();
        let want =
            ["initialize", "notifications/initialized", "GET session=s-1 version=2025-11-25"];
        assert_eq!(log, want, "{log:?}");

        client.ping().await.unwrap();
        assert_eq!(gets(&server), 1);
        client.close().await.unwrap();
        let reason = "the client was closed".to_owned();
        assert_eq!(state_now(&client), EventStreamState::Ended { reason });
    })
    .await;
}

#[tokio::test]
async fn waiting_for_the_stream_has_it_open_before_initialize_returns() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server) = server(None).await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut o = options();
        o.wait_for_event_stream = true;
        o.on_event = Some(Arc::new(move |e: &ServerEvent| {
            let _ = tx.send(e.clone());
        }));
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        // Open before `initialize` returned, in the new session, with the
        // negotiated version.
        assert_eq!(state_now(&client), EventStreamState::Open);
        let log = server.log.lock().unwrap().clone();
        let want =
            ["initialize", "notifications/initialized", "GET session=s-1 version=2025-11-25"];
        assert_eq!(log, want, "{log:?}");

        // What the server sent the moment the stream opened arrives.
        let event = rx.recv().await;
        assert_eq!(event, Some(ServerEvent::ListChanged(ListKind::Tools)));

        // The first request goes out after the stream was open.
        client.ping().await.unwrap();
        let log = server.log.lock().unwrap().clone();
        assert_eq!(log.last().map(String::as_str), Some("ping"), "{log:?}");
        assert_eq!(gets(&server), 1, "{log:?}");
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_405_to_the_get_is_remembered() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server) = server(Some(StatusCode::METHOD_NOT_ALLOWED)).await;
        let client = connect(addr, options());
        client.initialize().await.unwrap();
        state_becomes(&client, |s| *s == EventStreamState::NotOffered).await;
        client.ping().await.unwrap();
        // Asked once: the answer is final for the session.
        assert!(!client.transport().open_event_stream().await.unwrap());
        assert_eq!(gets(&server), 1);
        let log = server.log.lock().unwrap().clone();
        assert_eq!(log.last().map(String::as_str), Some("ping"), "{log:?}");
        client.close().await.unwrap();
        // Closing does not turn "none offered" into "ended".
        assert_eq!(state_now(&client), EventStreamState::NotOffered);
    })
    .await;
}

#[tokio::test]
async fn a_405_to_the_get_is_known_when_initialize_returns_if_waited_for() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, _server) = server(Some(StatusCode::METHOD_NOT_ALLOWED)).await;
        let mut o = options();
        o.wait_for_event_stream = true;
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        assert_eq!(state_now(&client), EventStreamState::NotOffered);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn an_error_status_to_the_get_ends_the_stream_and_the_session_goes_on() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server) = server(Some(StatusCode::INTERNAL_SERVER_ERROR)).await;
        let client = connect(addr, options());
        client.initialize().await.unwrap();
        // A watcher (`mcpc listen`) learns that no stream will come.
        let ended = state_becomes(&client, |s| matches!(s, EventStreamState::Ended { .. })).await;
        let EventStreamState::Ended { reason } = ended else { unreachable!() };
        assert!(reason.starts_with("it could not be opened"), "{reason}");
        assert!(reason.contains("500"), "{reason}");
        client.ping().await.unwrap();
        assert_eq!(gets(&server), 1);
        client.close().await.unwrap();
    })
    .await;
}

/// A server that never answers the GET: told when a GET arrives, and when
/// its handler ends.
async fn hanging()
-> (SocketAddr, Arc<Server>, mpsc::UnboundedReceiver<()>, mpsc::UnboundedReceiver<()>) {
    let (arrived, got) = mpsc::unbounded_channel();
    let (ended, gave_up) = mpsc::unbounded_channel();
    let (addr, server) =
        serve(Server { arrived: Some(arrived), hang: Some(ended), ..Server::default() }).await;
    (addr, server, got, gave_up)
}

#[tokio::test]
async fn a_get_never_answered_is_given_up_at_the_request_timeout() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server, mut got, mut gave_up) = hanging().await;
        let mut o = options();
        o.request_timeout = Duration::from_secs(2);
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        assert_eq!(got.recv().await, Some(()));
        client.ping().await.unwrap();
        // Given up at the request timeout: its connection closed, the
        // server's handler ended, and a watcher is told.
        assert_eq!(gave_up.recv().await, Some(()));
        let ended = state_becomes(&client, |s| matches!(s, EventStreamState::Ended { .. })).await;
        let EventStreamState::Ended { reason } = ended else { unreachable!() };
        assert!(reason.starts_with("it could not be opened"), "{reason}");
        assert_eq!(gets(&server), 1);
        client.ping().await.unwrap();
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn waiting_for_a_get_never_answered_does_not_hold_up_the_handshake_beyond_its_wait() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server, _got, mut gave_up) = hanging().await;
        let mut o = options();
        o.wait_for_event_stream = true;
        // Longer than the handshake's wait for the stream (one second).
        o.request_timeout = Duration::from_secs(2);
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        assert_ne!(state_now(&client), EventStreamState::Open);
        // The opening went on in its task, and gave the GET up at the
        // request timeout.
        assert_eq!(gave_up.recv().await, Some(()));
        assert_eq!(gets(&server), 1);
        assert_ne!(state_now(&client), EventStreamState::Open);
        client.ping().await.unwrap();
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn closing_while_the_get_is_out_gives_it_up() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server, mut got, mut gave_up) = hanging().await;
        // The request timeout would end it only after the test's bound.
        let mut o = options();
        o.request_timeout = Duration::from_secs(60);
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        assert_eq!(got.recv().await, Some(()));
        client.close().await.unwrap();
        let reason = "the client was closed".to_owned();
        assert_eq!(state_now(&client), EventStreamState::Ended { reason });
        assert_eq!(gave_up.recv().await, Some(()));
        assert_eq!(gets(&server), 1);
        // The session was deleted; nothing opens again.
        assert!(client.transport().open_event_stream().await.is_err());
        assert_eq!(gets(&server), 1);
    })
    .await;
}

#[tokio::test]
async fn dropping_the_client_while_the_get_is_out_gives_it_up() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, _server, mut got, mut gave_up) = hanging().await;
        let mut o = options();
        o.request_timeout = Duration::from_secs(60);
        let client = connect(addr, o);
        client.initialize().await.unwrap();
        assert_eq!(got.recv().await, Some(()));
        drop(client);
        assert_eq!(gave_up.recv().await, Some(()));
    })
    .await;
}
