//! Requests run beside the driver (`Session::run_requests_beside`) checked
//! against requests run as a task each, on the same scripts: what goes out
//! and when, cancellation, server-to-client requests, many in flight, ends
//! out of order, and the driver ending with requests still running.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use mcp_server_io::{
    Context, Handler, Outgoing, Params, Reply, ServeEra, ServerInfo, Session, SessionOptions,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// Requests that end at once, at their first poll, or when their gate
/// opens; counts the futures dropped before they ended.
struct Gated {
    info: ServerInfo,
    gates: Mutex<HashMap<String, Arc<Notify>>>,
    dropped_unfinished: Arc<AtomicUsize>,
}

impl Gated {
    fn gate(&self, name: &str) -> Arc<Notify> {
        self.gates.lock().unwrap().entry(name.to_owned()).or_default().clone()
    }
}

/// Counts its drop unless `done` was set.
struct Unfinished(Arc<AtomicUsize>, bool);

impl Unfinished {
    fn finish(&mut self) {
        self.1 = true;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Handler for Gated {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        let params = match params.into_value() {
            Ok(params) => params.unwrap_or_default(),
            Err(e) => return Reply::Now(Err(e)),
        };
        let name = params["gate"].as_str().unwrap_or_default().to_owned();
        let gate = self.gate(&name);
        let mut guard = Unfinished(self.dropped_unfinished.clone(), false);
        if !matches!(method, "gate" | "raw_gate" | "ask") {
            guard.finish();
        }
        match method {
            "now" => Reply::Now(Ok(json!({ "now": params }))),
            // Ends at its first poll.
            "soon" => Reply::Later(Box::pin(async move { Ok(json!({ "soon": params })) })),
            // Progress, then the gate, then a log message and the result.
            "gate" => Reply::Later(Box::pin(async move {
                if let Some(token) = params.pointer("/_meta/progressToken") {
                    cx.progress(token, 1.0, None);
                }
                gate.notified().await;
                cx.notify("notifications/message", Some(json!({ "level": "info", "data": name })));
                guard.finish();
                Ok(json!({ "gate": name }))
            })),
            "raw_gate" => Reply::LaterRaw(Box::pin(async move {
                gate.notified().await;
                guard.finish();
                RawValue::from_string(format!(r#"{{"raw":"{name}"}}"#))
                    .map_err(|e| ErrorObject::new(-1, e.to_string()))
            })),
            "ask" => Reply::Later(Box::pin(async move {
                let answer = cx.request("roots/list", None).await;
                guard.finish();
                answer.map_err(|timeout| ErrorObject::new(-1, timeout.to_string()))?
            })),
            _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
        }
    }
}

/// A driver fed messages through a channel, writing what the session
/// queues to a list; the requests beside it or as tasks.
struct Rig {
    session: Session<Gated>,
    input: Option<mpsc::UnboundedSender<Message>>,
    out: Arc<Mutex<Vec<Value>>>,
    driver: tokio::task::JoinHandle<()>,
}

fn rig(era: ServeEra, beside: bool) -> Rig {
    let handler = Gated {
        info: ServerInfo::new("gated", "1.0"),
        gates: Mutex::default(),
        dropped_unfinished: Arc::default(),
    };
    let mut options = SessionOptions::new(era);
    options.request_timeout = Duration::from_secs(2);
    let (session, mut queue) = Session::new(handler, options);
    let (input, mut messages) = mpsc::unbounded_channel::<Message>();
    let out = Arc::new(Mutex::new(Vec::new()));
    let (feed, written) = (session.clone(), out.clone());
    let driving = async move {
        loop {
            tokio::select! {
                biased;
                item = queue.recv() => {
                    let Some(item) = item else { break };
                    let mut line = Vec::new();
                    assert!(item.encode_into(&mut line).unwrap(), "{item:?}");
                    let related = match &item {
                        Outgoing::Message { related, .. } => related.clone(),
                        Outgoing::RawReply { id, .. } => Some(id.clone()),
                        _ => None,
                    };
                    let message: Value = serde_json::from_slice(&line).unwrap();
                    written.lock().unwrap().push(json!({ "message": message, "related": related }));
                }
                message = messages.recv() => match message {
                    Some(message) => feed.handle(message),
                    None => break,
                },
            }
        }
    };
    let runner = session.clone();
    let driver = tokio::spawn(async move {
        if beside {
            runner.run_requests_beside(driving).await;
        } else {
            driving.await;
        }
        // As a product driver does when its input closes.
        runner.abort_all();
    });
    Rig { session, input: Some(input), out, driver }
}

#[derive(Debug, Clone)]
enum Step {
    Send(Message),
    Open(&'static str),
    /// Everything runs until nothing can (the paused clock moves 1 ms).
    Settle,
    /// As `Settle`, the clock moving this many seconds.
    Wait(u64),
    /// The driver's input closes and it ends.
    Close,
}

fn call(id: i64, method: &str, params: Value) -> Step {
    Step::Send(Message::Request(Request::new(id, method, Some(params))))
}

fn cancel(id: i64) -> Step {
    let params = json!({ "requestId": id });
    Step::Send(Message::Notification(Notification::new("notifications/cancelled", Some(params))))
}

fn initialize() -> Vec<Step> {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                        "clientInfo": {"name": "t", "version": "0"}});
    vec![call(1, "initialize", params), Step::Settle]
}

/// What a script made the session send, one list per `Settle`, and how
/// many request futures were dropped before they ended.
async fn run(era: ServeEra, beside: bool, script: &[Step]) -> (Vec<Vec<Value>>, usize) {
    let mut rig = rig(era, beside);
    let mut seen = Vec::new();
    for step in script {
        match step {
            Step::Send(message) => rig.input.as_ref().unwrap().send(message.clone()).unwrap(),
            Step::Open(gate) => rig.session.handler().gate(gate).notify_one(),
            Step::Settle | Step::Wait(_) => {
                let wait = match step {
                    Step::Wait(seconds) => Duration::from_secs(*seconds),
                    _ => Duration::from_millis(1),
                };
                tokio::time::sleep(wait).await;
                seen.push(std::mem::take(&mut *rig.out.lock().unwrap()));
            }
            Step::Close => {
                rig.input = None;
                (&mut rig.driver).await.unwrap();
            }
        }
    }
    (seen, rig.session.handler().dropped_unfinished.load(Ordering::SeqCst))
}

fn ids(seen: &[Value]) -> Vec<Value> {
    seen.iter()
        .filter(|m| m["message"].get("method").is_none())
        .map(|m| m["message"]["id"].clone())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn requests_beside_the_driver_send_what_tasks_send() {
    let mut ask_answer = initialize();
    ask_answer.extend([
        call(2, "ask", json!({})),
        Step::Settle,
        Step::Send(Message::Response(Response::new(
            RequestId::String("srv-1".into()),
            json!({ "roots": [] }),
        ))),
        Step::Settle,
        // Unanswered: times out after 2 s.
        call(3, "ask", json!({})),
        Step::Settle,
        Step::Wait(3),
    ]);
    let mut out_of_order = initialize();
    for (id, gate) in [(2, "a"), (3, "b"), (4, "c")] {
        out_of_order.push(call(id, "gate", json!({ "gate": gate })));
    }
    out_of_order.push(call(5, "raw_gate", json!({ "gate": "d" })));
    out_of_order.push(Step::Settle);
    for gate in ["c", "d", "a", "b"] {
        out_of_order.extend([Step::Open(gate), Step::Settle]);
    }
    let mut cancelled = initialize();
    cancelled.extend([
        call(2, "gate", json!({ "gate": "x", "_meta": { "progressToken": "p" } })),
        call(3, "gate", json!({ "gate": "y" })),
        Step::Settle,
        // A second request with a running one's id is refused.
        call(2, "soon", json!({})),
        cancel(2),
        Step::Settle,
        Step::Open("x"),
        Step::Open("y"),
        Step::Settle,
        // The id is free again.
        call(2, "soon", json!({})),
        Step::Settle,
    ]);
    let mut many = initialize();
    for id in 0..64 {
        many.push(call(100 + id, "gate", json!({ "gate": format!("g{id}") })));
    }
    many.push(Step::Settle);
    for id in (0..64).rev() {
        let gate: &'static str = Box::leak(format!("g{id}").into_boxed_str());
        many.push(Step::Open(gate));
    }
    many.push(Step::Settle);
    let mut closed = initialize();
    closed.extend([
        call(2, "gate", json!({ "gate": "z" })),
        call(3, "soon", json!({})),
        Step::Settle,
        Step::Close,
        Step::Open("z"),
        Step::Settle,
    ]);
    let stateless = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let modern = vec![
        call(1, "raw_gate", json!({ "gate": "m", "_meta": stateless })),
        call(2, "soon", json!({ "_meta": stateless })),
        Step::Settle,
        Step::Open("m"),
        Step::Settle,
    ];

    // (name, era, script, replies' ids per settle, futures dropped unfinished)
    type Case = (&'static str, ServeEra, Vec<Step>, Vec<Vec<Value>>, usize);
    let cases: Vec<Case> = vec![
        (
            "served at once and at the first poll",
            ServeEra::Both,
            [
                initialize(),
                vec![call(2, "now", json!({})), call(3, "soon", json!({})), Step::Settle],
            ]
            .concat(),
            vec![vec![json!(1)], vec![json!(2), json!(3)]],
            0,
        ),
        (
            "a request that asks the client",
            ServeEra::Legacy,
            ask_answer,
            vec![vec![json!(1)], vec![], vec![json!(2)], vec![], vec![json!(3)]],
            0,
        ),
        (
            "ends out of order",
            ServeEra::Legacy,
            out_of_order,
            vec![
                vec![json!(1)],
                vec![],
                vec![json!(4)],
                vec![json!(5)],
                vec![json!(2)],
                vec![json!(3)],
            ],
            0,
        ),
        (
            "cancelled mid-way",
            ServeEra::Legacy,
            cancelled,
            vec![vec![json!(1)], vec![], vec![json!(2)], vec![json!(3)], vec![json!(2)]],
            1,
        ),
        (
            "many in flight",
            ServeEra::Legacy,
            many,
            vec![vec![json!(1)], vec![], (0..64).rev().map(|id| json!(100 + id)).collect()],
            0,
        ),
        (
            "the driver ends",
            ServeEra::Legacy,
            closed,
            vec![vec![json!(1)], vec![json!(3)], vec![]],
            1,
        ),
        ("stateless era", ServeEra::Modern, modern, vec![vec![json!(2)], vec![json!(1)]], 0),
    ];
    for (name, era, script, replies, dropped) in cases {
        let (as_tasks, dropped_as_tasks) = run(era, false, &script).await;
        let (beside, dropped_beside) = run(era, true, &script).await;
        assert_eq!(beside, as_tasks, "{name}");
        assert_eq!((dropped_beside, dropped_as_tasks), (dropped, dropped), "{name}");
        let got: Vec<Vec<Value>> = beside.iter().map(|settled| ids(settled)).collect();
        assert_eq!(got, replies, "{name}: {beside:#?}");
    }
}

#[tokio::test(start_paused = true)]
async fn what_a_request_sends_comes_before_its_reply_and_errors_match() {
    let mut script = initialize();
    script.extend([
        call(2, "gate", json!({ "gate": "a", "_meta": { "progressToken": 7 } })),
        Step::Settle,
        Step::Open("a"),
        Step::Settle,
        call(3, "gate", json!({ "gate": "b" })),
        call(3, "gate", json!({ "gate": "b" })),
        call(4, "nope", json!({})),
        Step::Settle,
    ]);
    let (seen, _) = run(ServeEra::Legacy, true, &script).await;
    let methods: Vec<Value> =
        seen[1..].iter().flatten().map(|m| m["message"]["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("notifications/progress"),
            json!("notifications/message"),
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
    let last = &seen[3];
    assert_eq!(last[0]["message"]["error"]["code"], -32600, "{last:?}");
    assert_eq!(last[1]["message"]["error"]["code"], -32601, "{last:?}");
    // Everything a request sends is related to it.
    assert!(seen[1..3].iter().flatten().all(|m| m["related"] == 2), "{seen:?}");
}

#[tokio::test(start_paused = true)]
async fn requests_beside_the_driver_start_no_task() {
    for beside in [false, true] {
        let tasks = || tokio::runtime::Handle::current().metrics().num_alive_tasks();
        let rig = rig(ServeEra::Legacy, beside);
        let input = rig.input.clone().unwrap();
        input
            .send(Message::Request(Request::new(
                1,
                "initialize",
                Some(json!({
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}})),
            )))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        let before = tasks();
        for id in 0..16 {
            input
                .send(Message::Request(Request::new(id + 2, "gate", Some(json!({ "gate": "g" })))))
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        let running = tasks() - before;
        assert_eq!(running, if beside { 0 } else { 16 }, "beside: {beside}");
        for _ in 0..16 {
            rig.session.handler().gate("g").notify_one();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(ids(&rig.out.lock().unwrap()).len(), 17, "beside: {beside}");
        assert_eq!(tasks(), before, "beside: {beside}");
    }
}
