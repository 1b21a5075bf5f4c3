//! Forwarded calls (`Client::forward_tool_call`) against `call_tool_json`
//! for the same server behaviour: what the sink gets is what the call
//! gives (the result's text, or the same error), for an answer, a tool
//! error, an error answer, a result that is not an object, the deadline,
//! a cancellation, a lost connection, a closed client and a failed write;
//! and the request's text is the same.

use std::sync::Arc;
use std::time::Duration;

use mcp_peer::memory::{self, MemoryTransport};
use mcp_peer::{Client, RequestOptions};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::common::{Pair, Seen, options, pair};

/// An outcome as the host would see it: the result's text, or the
/// error's `Debug`.
type Heard = Result<String, String>;

/// The options the bridge forwards with: a timeout restarted by
/// progress, under a total.
fn bridge_options(timeout: Duration) -> RequestOptions {
    RequestOptions {
        timeout: Some(timeout),
        reset_timeout_on_progress: true,
        max_total_timeout: Some(timeout * 4),
        ..RequestOptions::default()
    }
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).unwrap()
}

/// Starts a forwarded call; the receiver gets its outcome.
fn forward(
    client: &Client<MemoryTransport>,
    name: &str,
    arguments: Option<&RawValue>,
    options: &RequestOptions,
) -> (mcp_proto::jsonrpc::RequestId, oneshot::Receiver<Heard>) {
    assert!(client.forwards_plainly());
    let (tx, rx) = oneshot::channel();
    let sink = move |outcome: Result<&RawValue, memory::MemoryError>| {
        let _ = tx.send(outcome.map(|r| r.get().to_owned()).map_err(|e| format!("{e:?}")));
    };
    let id = client.forward_tool_call(name, arguments, options, sink).unwrap();
    (id, rx)
}

async fn forwarded(
    client: &Client<MemoryTransport>,
    name: &str,
    arguments: Option<&RawValue>,
    options: &RequestOptions,
) -> Heard {
    forward(client, name, arguments, options).1.await.unwrap()
}

async fn called(
    client: &Client<MemoryTransport>,
    name: &str,
    arguments: Option<&RawValue>,
    options: &RequestOptions,
) -> Heard {
    let outcome = client.call_tool_json(name, arguments, options.clone()).await;
    outcome.map(|r| r.get().to_owned()).map_err(|e| format!("{e:?}"))
}

#[tokio::test]
async fn an_answer_a_tool_error_and_an_error_answer_are_the_calls() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let o = bridge_options(Duration::from_secs(30));
    let cases: [(&str, Option<Box<RawValue>>); 4] = [
        ("echo", Some(raw(r#"{"message":"héllo \"there\""}"#))),
        ("fail", Some(raw(r#"{"message":"no"}"#))),
        ("no_such_tool", None),
        ("echo", Some(raw("null"))),
    ];
    for (name, arguments) in &cases {
        let fast = forwarded(&client, name, arguments.as_deref(), &o).await;
        let general = called(&client, name, arguments.as_deref(), &o).await;
        assert_eq!(fast, general, "{name}");
    }
    let fast = forwarded(&client, "echo", Some(&raw(r#"{"message":"hi"}"#)), &o).await;
    assert!(fast.unwrap().contains(r#""text":"hi""#));
    let error = forwarded(&client, "no_such_tool", None, &o).await.unwrap_err();
    assert!(error.contains("-32602"), "{error}");
    // Arguments that are not an object are refused before anything is
    // sent, as the general path refuses them.
    let (tx, _rx) = oneshot::channel::<()>();
    let refused = client
        .forward_tool_call("echo", Some(&raw("[1]")), &o, move |_| drop(tx))
        .map(|_| ())
        .map_err(|e| format!("{e:?}"));
    assert_eq!(refused, called(&client, "echo", Some(&raw("[1]")), &o).await.map(|_| ()));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_both_alike_and_tells_the_server() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let o = bridge_options(Duration::from_secs(30));
    let fast = forwarded(&client, "hang", None, &o).await;
    let general = called(&client, "hang", None, &o).await;
    assert!(fast.as_ref().is_err_and(|e| e.contains("Timeout")), "{fast:?}");
    assert_eq!(fast, general);
    // Both cancelled with the server: ids 2 and 3, after initialize's 1.
    let log = called(&client, "cancelled_log", None, &o).await.unwrap();
    assert!(log.contains(r#""text":"[2,3]""#), "{log}");
}

#[tokio::test(start_paused = true)]
async fn a_lost_connection_ends_both_alike() {
    let Pair { client, restart, .. } = pair(options());
    client.initialize().await.unwrap();
    let o = bridge_options(Duration::from_secs(30));
    let (_, rx) = forward(&client, "hang", None, &o);
    tokio::task::yield_now().await;
    restart.now();
    let fast = rx.await.unwrap();
    let slow = client.clone();
    let general = tokio::spawn(async move {
        called(&slow, "hang", None, &bridge_options(Duration::from_secs(30))).await
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    restart.now();
    let general = general.await.unwrap();
    assert!(fast.as_ref().is_err_and(|e| e.contains("Closed")), "{fast:?}");
    assert_eq!(fast, general);
}

#[tokio::test(start_paused = true)]
async fn a_closed_client_ends_both_alike() {
    let o = bridge_options(Duration::from_secs(30));
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let (_, rx) = forward(&client, "hang", None, &o);
    tokio::task::yield_now().await;
    client.close().await.unwrap();
    let fast = rx.await.unwrap();

    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let slow = client.clone();
    let general = tokio::spawn(async move {
        called(&slow, "hang", None, &bridge_options(Duration::from_secs(30))).await
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    client.close().await.unwrap();
    let general = general.await.unwrap();
    assert!(fast.as_ref().is_err_and(|e| e.contains("Closed")), "{fast:?}");
    assert_eq!(fast, general);
}

/// The last clone of the client dropped with a forwarded call out: its
/// sink hears the client closed rather than never.
#[tokio::test]
async fn a_dropped_client_ends_a_forwarded_call() {
    let Pair { client, .. } = pair(options());
    client.initialize().await.unwrap();
    let (_, rx) = forward(&client, "hang", None, &bridge_options(Duration::from_secs(30)));
    drop(client);
    let outcome = rx.await.unwrap();
    assert!(outcome.as_ref().is_err_and(|e| e.contains("Closed")), "{outcome:?}");
}

/// Stops a scripted server: its end dropped (the client's writes then
/// fail), then the acknowledgement.
type Stop = oneshot::Sender<oneshot::Sender<()>>;

/// A scripted server in memory: answers `initialize`, records every
/// message, and answers each `tools/call` with `answer` (nothing when it
/// gives `None`).
fn scripted(
    answer: impl Fn(&Value) -> Option<String> + Send + 'static,
) -> (Client<MemoryTransport>, Seen, Stop) {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let sender = end.sender();
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let (stop, mut stopped) = oneshot::channel::<oneshot::Sender<()>>();
    tokio::spawn(async move {
        loop {
            let bytes = tokio::select! {
                Ok(ack) = &mut stopped => {
                    drop(end);
                    let _ = ack.send(());
                    return;
                }
                bytes = end.recv() => bytes,
            };
            let Some(bytes) = bytes else { return };
            let message: Value = serde_json::from_slice(&bytes).unwrap();
            record.lock().unwrap().push(message.clone());
            let id = &message["id"];
            let reply = match message["method"].as_str() {
                Some("initialize") => Some(
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "1"}}})
                    .to_string(),
                ),
                Some("tools/call") => answer(&message),
                _ => None,
            };
            if let Some(reply) = reply {
                sender.send(reply.as_bytes());
            }
        }
    });
    (client, seen, stop)
}

async fn stop(stop: Stop) {
    let (ack, acked) = oneshot::channel();
    stop.send(ack).unwrap();
    acked.await.unwrap();
}

#[tokio::test]
async fn a_result_that_is_not_an_object_is_refused_alike() {
    let (client, _seen, _stop) =
        scripted(|m| Some(json!({"jsonrpc": "2.0", "id": m["id"], "result": [1, 2]}).to_string()));
    client.initialize().await.unwrap();
    let o = bridge_options(Duration::from_secs(30));
    let fast = forwarded(&client, "t", None, &o).await;
    let general = called(&client, "t", None, &o).await;
    assert!(fast.as_ref().is_err_and(|e| e.contains("InvalidResult")), "{fast:?}");
    assert_eq!(fast, general);
}

/// The request's text (its progress token, its `_meta`) and a
/// cancellation's notice are what the general path sends.
#[tokio::test(start_paused = true)]
async fn the_request_and_a_cancellation_are_the_calls() {
    let (client, seen, _end) = scripted(|_| None);
    client.initialize().await.unwrap();
    let o = bridge_options(Duration::from_secs(30));
    let (id, rx) = forward(&client, "t", Some(&raw(r#"{"a":1}"#)), &o);
    tokio::time::sleep(Duration::from_millis(10)).await;
    client.cancel_forwarded(&id);
    // The sink is dropped uncalled: whoever cancels knows.
    assert!(rx.await.is_err());
    // A second cancellation, or one after the end, does nothing.
    client.cancel_forwarded(&id);
    let slow = client.clone();
    let general = tokio::spawn(async move {
        called(&slow, "t", Some(&raw(r#"{"a":1}"#)), &bridge_options(Duration::from_secs(30))).await
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    general.abort();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let seen = seen.lock().unwrap().clone();
    // initialize, initialized, then call and cancel twice over.
    let rest: Vec<Value> = seen[2..]
        .iter()
        .map(|m| {
            let mut m = m.clone();
            // The ids differ; the rest must not.
            for at in ["/id", "/params/_meta/progressToken", "/params/requestId"] {
                if let Some(v) = m.pointer_mut(at) {
                    *v = Value::Null;
                }
            }
            m
        })
        .collect();
    assert_eq!(rest.len(), 4, "{seen:?}");
    assert_eq!(rest[0], rest[2]);
    assert_eq!(rest[1], rest[3]);
    assert_eq!(rest[0]["method"], "tools/call");
    assert!(seen[2].pointer("/params/_meta/progressToken").is_some(), "{seen:?}");
    assert_eq!(rest[1]["method"], "notifications/cancelled");
    assert_eq!(seen[3]["params"]["requestId"], seen[2]["id"]);
}

#[tokio::test]
async fn a_failed_write_ends_both_alike() {
    let o = bridge_options(Duration::from_secs(30));
    let (client, _, end) = scripted(|_| None);
    client.initialize().await.unwrap();
    stop(end).await;
    let fast = forwarded(&client, "t", None, &o).await;

    let (client, _, end) = scripted(|_| None);
    client.initialize().await.unwrap();
    stop(end).await;
    let general = called(&client, "t", None, &o).await;
    assert_eq!(fast, Err("Closed".to_owned()));
    assert_eq!(fast, general);
}
