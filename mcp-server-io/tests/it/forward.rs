//! Requests forwarded with no future of their own (`Session::forward`,
//! `Session::reply_forwarded`, `CancelHook`), on data: a handler that
//! forwards `fwd…` to an upstream held in memory, whose calls the test
//! answers or watches being cancelled. The same rules as a request answered
//! later: one answer, none once cancelled, `-32600` for a reused id,
//! `SERVER_BUSY` over the cap, nothing answered after `abort_all`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_proto::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use mcp_server_io::inflight::SERVER_BUSY;
use mcp_server_io::{
    CancelHook, Context, Handler, Outgoing, OutgoingQueue, Params, Reply, RequestKey, ServeEra,
    ServerInfo, Session, SessionOptions,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::session::{drain, only};

type Sink = Box<dyn FnOnce(Result<Box<RawValue>, ErrorObject>) + Send>;

/// The calls forwarded and not ended, by the upstream's number; the ones
/// cancelled, in order.
#[derive(Default)]
struct Upstream {
    next: AtomicU64,
    open: Mutex<BTreeMap<u64, Sink>>,
    cancelled: Mutex<Vec<u64>>,
    /// How many hooks ran.
    hooks_run: AtomicU64,
}

impl Upstream {
    /// Starts a call whose outcome answers `key` (as the bridge's sink
    /// does), and gives the hook that cancels it.
    fn start(self: &Arc<Self>, session: &Session<Fwd>, key: &RequestKey) -> (u64, CancelHook) {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let (session, key) = (session.clone(), key.clone());
        let sink: Sink = Box::new(move |result| {
            match result {
                Ok(text) => session.reply_forwarded(key, Ok(&text)),
                Err(error) => session.reply_forwarded(key, Err(error)),
            };
        });
        self.open.lock().unwrap().insert(n, sink);
        let up = self.clone();
        let hook = move || {
            up.hooks_run.fetch_add(1, Ordering::SeqCst);
            up.cancel(n);
        };
        (n, CancelHook(Box::new(hook)))
    }

    fn hooks_run(&self) -> u64 {
        self.hooks_run.load(Ordering::SeqCst)
    }

    /// Ends call `n` with `result`; whether it was open.
    fn end(&self, n: u64, result: Result<Box<RawValue>, ErrorObject>) -> bool {
        let sink = self.open.lock().unwrap().remove(&n);
        sink.map(|sink| sink(result)).is_some()
    }

    /// As a client cancels a call: its sink is told at once, on the
    /// cancelling thread (the session must hold no lock then).
    fn cancel(&self, n: u64) {
        if self.end(n, Err(ErrorObject::new(-1, "cancelled"))) {
            self.cancelled.lock().unwrap().push(n);
        }
    }

    fn started(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }

    fn cancelled(&self) -> Vec<u64> {
        self.cancelled.lock().unwrap().clone()
    }
}

struct Fwd {
    info: ServerInfo,
    up: Arc<Upstream>,
}

impl Handler for Fwd {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, _: Params) -> Reply {
        let (session, key, _) = cx.into_parts();
        let up = &self.up;
        match method {
            // Forwarded; answered by the test.
            "fwd" => session.forward(&key, || Ok(up.start(&session, &key).1)),
            // Cannot be forwarded: the error is the answer.
            "fwd_fail" => session.forward(&key, || Err(ErrorObject::new(-7, "no upstream"))),
            // Answered while it is being forwarded.
            "fwd_now" => session.forward(&key, || {
                let (n, hook) = up.start(&session, &key);
                up.end(n, Ok(result("now")));
                Ok(hook)
            }),
            // Answered while it is being forwarded, then its id taken by
            // a new request before the forwarding is done.
            "fwd_now_reused" => session.forward(&key, || {
                let (n, hook) = up.start(&session, &key);
                up.end(n, Ok(result("now")));
                let RequestId::Number(id) = key.id else { unreachable!() };
                call(&session, id, "fwd");
                Ok(hook)
            }),
            // Cancelled by the client while it is being forwarded.
            "fwd_cancelled" => session.forward(&key, || {
                let hook = up.start(&session, &key).1;
                session.cancel(key.origin, key.id.clone());
                Ok(hook)
            }),
            "wait" => return Reply::Later(Box::pin(std::future::pending())),
            _ => return Reply::Now(Err(ErrorObject::method_not_found(method))),
        };
        Reply::Silent
    }
}

fn session(cap: usize) -> (Session<Fwd>, OutgoingQueue) {
    let handler = Fwd { info: ServerInfo::new("fwd", "1"), up: Arc::default() };
    let options = SessionOptions::new(ServeEra::Legacy).with_max_in_flight(cap);
    let (session, mut queue) = Session::new(handler, options);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "0"}});
    session.handle(Message::Request(Request::new(0, "initialize", Some(init))));
    only(&mut queue);
    (session, queue)
}

fn call(session: &Session<Fwd>, id: i64, method: &str) {
    session.handle(Message::Request(Request::new(id, method, Some(json!({})))));
}

fn cancel(session: &Session<Fwd>, id: i64) {
    let params = json!({ "requestId": id });
    session
        .handle(Message::Notification(Notification::new("notifications/cancelled", Some(params))));
}

fn result(text: &str) -> Box<RawValue> {
    RawValue::from_string(format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#)).unwrap()
}

/// The one item queued: a raw reply's id and text.
fn raw_reply(queue: &mut OutgoingQueue) -> (RequestId, String) {
    let item = queue.try_recv().expect("a reply");
    assert!(queue.try_recv().is_err(), "one reply only");
    let Outgoing::RawReply { id, result, origin, .. } = item else { panic!("{item:?}") };
    assert_eq!(origin, 0);
    (id, result.get().to_owned())
}

#[tokio::test]
async fn a_forwarded_request_is_answered_once_with_its_text_or_its_error() {
    let (session, mut queue) = session(8);
    let up = session.handler().up.clone();
    call(&session, 1, "fwd");
    assert_eq!((up.started(), session.in_flight()), (1, 1));
    assert!(drain(&mut queue).is_empty());
    assert!(up.end(1, Ok(result("hi"))));
    assert_eq!(raw_reply(&mut queue), (RequestId::Number(1), result("hi").get().to_owned()));
    assert_eq!(session.in_flight(), 0);
    // An answer for a request already answered is not sent.
    assert!(
        !session.reply_forwarded(
            RequestKey { origin: 0, id: RequestId::Number(1) },
            Ok(&result("again"))
        )
    );
    assert!(drain(&mut queue).is_empty());

    // An error object is the error reply.
    call(&session, 2, "fwd");
    up.end(2, Err(ErrorObject::new(-32602, "Unknown tool: x")));
    let error = only(&mut queue);
    assert_eq!(
        (error["id"].clone(), error["error"].clone()),
        (json!(2), json!({"code": -32602, "message": "Unknown tool: x"}))
    );

    // A start that fails answers its error and frees its place.
    call(&session, 3, "fwd_fail");
    let error = only(&mut queue);
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(3), json!(-7)));
    // Answered while it was forwarded: once, and its hook is dropped, not
    // run (the call is over).
    call(&session, 4, "fwd_now");
    assert_eq!(raw_reply(&mut queue).0, RequestId::Number(4));
    assert_eq!((session.in_flight(), up.cancelled(), up.hooks_run()), (0, vec![], 0));
}

/// A forwarded request answered while it was being forwarded, whose id a
/// new request took before the forwarding was done: its hook is dropped,
/// and the new request keeps its own place and its own hook.
#[tokio::test]
async fn a_forwarding_done_late_never_takes_the_place_of_a_new_request_of_its_id() {
    let (session, mut queue) = session(8);
    let up = session.handler().up.clone();
    call(&session, 5, "fwd_now_reused");
    assert_eq!(raw_reply(&mut queue), (RequestId::Number(5), result("now").get().to_owned()));
    // The new request (upstream call 2) runs, its hook its own.
    assert_eq!((up.started(), session.in_flight(), up.hooks_run()), (2, 1, 0));
    cancel(&session, 5);
    assert_eq!((up.cancelled(), up.hooks_run(), session.in_flight()), (vec![2], 1, 0));
    assert!(drain(&mut queue).is_empty());
}

#[tokio::test]
async fn a_cancelled_forwarded_request_is_cancelled_upstream_and_never_answered() {
    let (session, mut queue) = session(8);
    let up = session.handler().up.clone();
    // Cancelled after it was forwarded: its hook runs (and the upstream
    // telling its sink at once finds no lock held), nothing is answered.
    call(&session, 1, "fwd");
    cancel(&session, 1);
    assert_eq!((up.cancelled(), session.in_flight()), (vec![1], 0));
    assert!(drain(&mut queue).is_empty());
    // An answer coming after the cancellation is dropped.
    call(&session, 2, "fwd");
    session.cancel(0, RequestId::Number(2));
    assert!(!up.end(2, Ok(result("late"))));
    assert!(drain(&mut queue).is_empty());

    // Cancelled before its hook was given: the hook runs once it is.
    call(&session, 3, "fwd_cancelled");
    assert_eq!((up.cancelled(), session.in_flight()), (vec![1, 2, 3], 0));
    assert_eq!(up.hooks_run(), 3);
    assert!(drain(&mut queue).is_empty());

    // The id is free again.
    call(&session, 1, "fwd");
    up.end(4, Ok(result("again")));
    assert_eq!(raw_reply(&mut queue).0, RequestId::Number(1));
}

#[tokio::test]
async fn a_reused_id_and_one_over_the_cap_are_refused_without_forwarding() {
    let (session, mut queue) = session(2);
    let up = session.handler().up.clone();
    call(&session, 1, "fwd");
    // The id of a forwarded request, and of a request run as a task.
    call(&session, 1, "fwd");
    let error = only(&mut queue);
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(1), json!(-32600)));
    call(&session, 2, "wait");
    call(&session, 2, "fwd");
    let error = only(&mut queue);
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(2), json!(-32600)));
    // Two places taken: a third is busy, not forwarded.
    call(&session, 3, "fwd");
    let error = only(&mut queue);
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(3), json!(SERVER_BUSY))
    );
    assert_eq!((up.started(), session.in_flight()), (1, 2));
    // The forwarded one answered: its place is free.
    up.end(1, Ok(result("one")));
    assert_eq!(raw_reply(&mut queue).0, RequestId::Number(1));
    call(&session, 3, "fwd");
    assert_eq!((up.started(), session.in_flight()), (2, 2));
}

#[tokio::test]
async fn abort_all_cancels_every_forwarded_request_upstream() {
    let (session, mut queue) = session(8);
    let up = session.handler().up.clone();
    for id in 1..=3 {
        call(&session, id, "fwd");
    }
    call(&session, 4, "wait");
    session.abort_all();
    let mut cancelled = up.cancelled();
    cancelled.sort_unstable();
    assert_eq!((cancelled, session.in_flight()), (vec![1, 2, 3], 0));
    assert!(drain(&mut queue).is_empty());
}

#[tokio::test]
async fn forwarded_requests_outlive_the_runner_beside_the_driver() {
    let (session, mut queue) = session(8);
    let up = session.handler().up.clone();
    // A runner that ends at once: what ran beside it goes with it, a
    // forwarded request does not.
    session
        .run_requests_beside(async {
            call(&session, 1, "fwd");
            call(&session, 2, "wait");
        })
        .await;
    assert_eq!(session.in_flight(), 1);
    up.end(1, Ok(result("after")));
    assert_eq!(raw_reply(&mut queue).0, RequestId::Number(1));
}

/// What the pipe holds now, read without waiting (so without letting the
/// driver's task run).
fn read_now(pipe: &mut tokio::io::DuplexStream) -> String {
    use std::task::{Context, Poll, Waker};
    use tokio::io::{AsyncRead, ReadBuf};
    let mut cx = Context::from_waker(Waker::noop());
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let mut read = ReadBuf::new(&mut buf);
        match std::pin::Pin::new(&mut *pipe).poll_read(&mut cx, &mut read) {
            Poll::Ready(Ok(())) if !read.filled().is_empty() => {
                got.extend_from_slice(read.filled())
            }
            _ => return String::from_utf8(got).unwrap(),
        }
    }
}

#[tokio::test]
async fn over_stdio_a_forwarded_reply_is_written_by_its_sender_after_what_was_sent_before() {
    use mcp_server_io::stdio::{self, Input};
    use tokio::io::AsyncWriteExt;
    let (session, queue) = session(8);
    let up = session.handler().up.clone();
    let (mut host_in, server_in) = tokio::io::duplex(4096);
    let (server_out, mut host_out) = tokio::io::duplex(4096);
    let feed = session.clone();
    let driver = tokio::spawn(stdio::serve_direct(server_in, server_out, 1 << 20, queue, {
        move |input| {
            if let Input::Line(line) = input {
                feed.handle_json(line);
            }
        }
    }));
    let call = |id: i64| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"fwd\"}}\n");
    let reply = |id: i64, text: &str| {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{}}}\n", result(text).get())
    };
    // Lets the driver's task read what was written to it.
    let started = |n: u64| {
        let up = up.clone();
        async move {
            while up.started() < n {
                tokio::task::yield_now().await;
            }
        }
    };

    // Nothing waits: the answer is on the host's pipe as soon as its
    // sender has it, the driver's task not run in between.
    host_in.write_all(call(1).as_bytes()).await.unwrap();
    started(1).await;
    assert!(up.end(1, Ok(result("at once"))));
    assert_eq!(read_now(&mut host_out), reply(1, "at once"));
    assert_eq!(session.in_flight(), 0);

    // A message sent before the answer and not yet written (the driver's
    // task has not run): the answer follows it, both whole.
    host_in.write_all(call(2).as_bytes()).await.unwrap();
    started(2).await;
    let key = RequestKey { origin: 0, id: RequestId::Number(2) };
    session.notify("notifications/progress", Some(json!({"progress": 1})), Some(&key));
    assert!(up.end(2, Ok(result("second"))));
    assert_eq!(read_now(&mut host_out), "");
    let mut written = String::new();
    while !written.ends_with('\n') || written.lines().count() < 2 {
        tokio::task::yield_now().await;
        written += &read_now(&mut host_out);
    }
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;
    assert_eq!(written, format!("{progress}\n{}", reply(2, "second")));

    // A cancelled call's late answer is not written.
    host_in.write_all(call(3).as_bytes()).await.unwrap();
    started(3).await;
    session.cancel(0, RequestId::Number(3));
    assert!(!up.end(3, Ok(result("late"))));
    assert_eq!((read_now(&mut host_out), up.cancelled()), (String::new(), vec![3]));
    drop(host_in);
    assert_eq!(driver.await.unwrap().unwrap(), stdio::Ended::InputClosed);
}
