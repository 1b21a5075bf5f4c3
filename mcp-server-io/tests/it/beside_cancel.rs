//! Requests run beside the driver (`Session::run_requests_beside`) with
//! the input read on a thread of its own (`stdio::serve_direct_threaded`,
//! over an OS pipe): handed over and cancelled from that thread
//! (`notifications/cancelled`) or aborted from another (`abort_all`)
//! while the runner runs in the driver's task, on both runtimes. Every
//! cancelled request's future is dropped (what sends a forwarded call's
//! cancellation on), started or not.

use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_server_io::stdio::{self, Input};
use mcp_server_io::{
    Context, Handler, Params, Reply, ServeEra, ServerInfo, Session, SessionOptions,
};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::sync::Notify;

/// How long every cancelled request's future has to be dropped in.
const LIMIT: Duration = Duration::from_secs(5);

/// Requests that never end: `hang` waits on a `Notify` never notified
/// (its waker kept, as an upstream call's channel keeps it), `still`
/// never wakes at all. Each counts its first poll and its drop.
struct Hanging {
    info: ServerInfo,
    never: Arc<Notify>,
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

/// Counts its drop: the request's upstream call in the bridge.
struct Upstream(Arc<AtomicUsize>);

impl Drop for Upstream {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Handler for Hanging {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, _: Context<Self>, method: &str, _: Params) -> Reply {
        let keeps_waker = match method {
            "hang" => true,
            "still" => false,
            _ => return Reply::Now(Err(ErrorObject::method_not_found(method))),
        };
        let upstream = Upstream(self.dropped.clone());
        let (started, never) = (self.started.clone(), self.never.clone());
        Reply::Later(Box::pin(async move {
            let _upstream = upstream;
            started.fetch_add(1, Ordering::SeqCst);
            if keeps_waker {
                never.notified().await;
            } else {
                std::future::pending::<()>().await;
            }
            Ok(json!({}))
        }))
    }
}

/// How the requests are stopped.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// `notifications/cancelled` right after each request, on the input.
    CancelAtOnce,
    /// `notifications/cancelled` for each, once every request is written.
    CancelAfter,
    /// `Session::abort_all` from the test's thread, once every request
    /// is written.
    AbortAll,
}

/// A message as a line of the input.
fn line(message: &Value) -> Vec<u8> {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// The lines that open a handshake-era session.
fn handshake() -> Vec<u8> {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let mut script = line(&initialize);
    script.extend(line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
    script
}

/// A session of [`Hanging`] requests served as `mcpc serve` serves its
/// host in front of stdio servers.
struct Served {
    session: Session<Hanging>,
    /// How many requests started, and how many were dropped.
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
    /// The input's other end.
    client: std::io::PipeWriter,
    driver: tokio::task::JoinHandle<std::io::Result<stdio::Ended>>,
}

/// [`Served`] on `runtime`: the input read on a thread of its own, the
/// requests run beside the driver, all aborted once the driver ends;
/// `output` is given the count of requests started.
fn serve<W>(
    runtime: &tokio::runtime::Runtime,
    output: impl FnOnce(&Arc<AtomicUsize>) -> W,
) -> Served
where
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let handler = Hanging {
        info: ServerInfo::new("hanging", "1.0"),
        never: Arc::default(),
        started: Arc::default(),
        dropped: Arc::default(),
    };
    let (started, dropped) = (handler.started.clone(), handler.dropped.clone());
    let output = output(&started);
    let (session, queue) = Session::new(handler, SessionOptions::new(ServeEra::Legacy));
    let (input, client) = std::io::pipe().unwrap();
    let (feed, runner) = (session.clone(), session.clone());
    let driver = runtime.spawn(async move {
        let on_input = move |input: Input<'_>| {
            if let Input::Line(line) = input {
                feed.handle_json(line);
            }
        };
        let serving = stdio::serve_direct_threaded(input, output, 1 << 20, queue, on_input);
        let ended = runner.run_requests_beside(serving).await;
        runner.abort_all();
        ended
    });
    Served { session, started, dropped, client, driver }
}

/// One round: `requests` requests handed over from the input's thread,
/// then stopped by `stop`; whether every future was dropped in time, with
/// how many started and were dropped.
fn round(runtime: &tokio::runtime::Runtime, requests: usize, stop: Stop) -> (bool, usize, usize) {
    let mut host = None;
    let Served { session, started, dropped, mut client, driver } = serve(runtime, |_| {
        let (output, read) = tokio::io::duplex(64 * 1024);
        host = Some(read);
        output
    });
    let mut host = host.unwrap();
    // What the driver writes is read and let go.
    let drain = runtime.spawn(async move {
        let mut sink = vec![0; 16 * 1024];
        while host.read(&mut sink).await.is_ok_and(|n| n > 0) {}
    });
    // The host: writes the requests and their cancellations, or aborts
    // them all from its own thread.
    let host_session = session.clone();
    let host = std::thread::spawn(move || {
        client.write_all(&handshake()).unwrap();
        let cancel = |id: usize| {
            line(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id}}))
        };
        for id in 1..=requests {
            let method = if id % 2 == 0 { "hang" } else { "still" };
            let mut lines = line(&json!({"jsonrpc": "2.0", "id": id, "method": method}));
            if let Stop::CancelAtOnce = stop {
                lines.extend(cancel(id));
            }
            client.write_all(&lines).unwrap();
        }
        match stop {
            Stop::CancelAtOnce => {}
            Stop::CancelAfter => {
                for id in 1..=requests {
                    client.write_all(&cancel(id)).unwrap();
                }
            }
            Stop::AbortAll => {
                // Every request handed over (and some started, some not),
                // waited for at most `LIMIT`.
                let deadline = std::time::Instant::now() + LIMIT;
                while host_session.in_flight() < requests {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "{} of {requests} requests in flight after {LIMIT:?}",
                        host_session.in_flight()
                    );
                    std::thread::yield_now();
                }
                host_session.abort_all();
            }
        }
        // Kept open: the input's end would end the driver, and with it
        // every request.
        client
    });
    // The runtime runs (a current-thread one only in `block_on`) until
    // every future is dropped or the time is up.
    let all = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + LIMIT;
        while dropped.load(Ordering::SeqCst) < requests {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        true
    });
    let client = host.join().unwrap();
    let seen = (started.load(Ordering::SeqCst), dropped.load(Ordering::SeqCst));
    drop(client);
    runtime.block_on(async {
        assert!(driver.await.unwrap().is_ok());
        drain.await.unwrap();
    });
    (all, seen.0, seen.1)
}

/// Rounds of requests handed over from the input's thread, each
/// cancelled at once (mostly before its first poll), all cancelled after
/// (mostly started), or all aborted from another thread, on both
/// runtimes: every future is dropped within [`LIMIT`].
#[test]
fn requests_cancelled_from_the_input_thread_are_dropped() {
    const ROUNDS: usize = 300;
    const REQUESTS: usize = 8;
    let runtimes = [
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap(),
    ];
    for (kind, runtime) in runtimes.iter().enumerate() {
        for stop in [Stop::CancelAtOnce, Stop::CancelAfter, Stop::AbortAll] {
            for n in 0..ROUNDS {
                let (all, started, dropped) = round(runtime, REQUESTS, stop);
                assert!(
                    all,
                    "runtime {kind}, {stop:?}, round {n}: {dropped} of {REQUESTS} dropped \
                     ({started} started)"
                );
            }
        }
    }
}

/// The output: what is written, each write with how many requests had
/// started when it was made.
struct Recorder {
    started: Arc<AtomicUsize>,
    writes: Arc<Mutex<Vec<(String, usize)>>>,
}

impl tokio::io::AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let started = self.started.load(Ordering::SeqCst);
        self.writes.lock().unwrap().push((String::from_utf8_lossy(buf).into_owned(), started));
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Requests handed over from the input's thread, then a line answered at
/// once, all before the runner's task runs: the requests start before
/// that answer is written, as they do as tasks of their own on a
/// current-thread runtime (queued before the driver's task is woken). A
/// host that has that answer may cancel them and expect the server they
/// call to be told: a request dropped before it started called no one.
#[test]
fn requests_handed_over_before_an_answer_start_before_it_is_written() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let writes = Arc::new(Mutex::new(Vec::new()));
    let Served { session, started, mut client, driver, .. } =
        serve(&runtime, |started| Recorder { started: started.clone(), writes: writes.clone() });
    let written = |id: i64| {
        let needle = format!(r#""id":{id}"#);
        writes.lock().unwrap().iter().find(|(text, _)| text.contains(&needle)).map(|w| w.1)
    };
    client.write_all(&handshake()).unwrap();
    runtime.block_on(async {
        while written(0).is_none() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    // The runtime is idle (outside `block_on`): the input's thread hands
    // over 1 and 2, queues the answer to 3 (an unknown method), hands
    // over 4.
    let mut script = Vec::new();
    for (id, method) in [(1, "hang"), (2, "still"), (3, "nosuch"), (4, "hang")] {
        script.extend(line(&json!({"jsonrpc": "2.0", "id": id, "method": method})));
    }
    client.write_all(&script).unwrap();
    while session.in_flight() < 3 {
        std::thread::yield_now();
    }
    assert_eq!(started.load(Ordering::SeqCst), 0, "nothing ran outside the runtime");
    runtime.block_on(async {
        while written(3).is_none() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    assert_eq!(written(3), Some(3), "requests started when the answer to 3 was written");
    drop(client);
    assert!(runtime.block_on(driver).unwrap().is_ok());
}
