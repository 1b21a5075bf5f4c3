//! The session core fed messages and read through its queue: the handshake
//! era, cancellation, server-to-client requests, the stateless era.

use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use mcp_server_io::stateless::Change;
use mcp_server_io::{
    Context, Handler, Outgoing, OutgoingQueue, Params, Reply, ServeEra, ServerInfo, Session,
    SessionOptions,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A handler with three methods: `echo` (now), `wait` (never, until
/// cancelled), `ask` (asks the client `roots/list`, answers its answer).
struct Demo {
    info: ServerInfo,
    /// The levels `logging/setLevel` set, as the hook heard them.
    levels: std::sync::Mutex<Vec<usize>>,
}

impl Handler for Demo {
    fn capabilities(&self, _: Option<&str>) -> Value {
        json!({ "tools": {}, "logging": {} })
    }

    fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply {
        match method {
            "echo" => Reply::Now(params.into_value().map(|p| p.unwrap_or(Value::Null))),
            // The parameters' text, as the result passed on unchanged.
            "params" => {
                let text = params.into_text();
                Reply::LaterRaw(Box::pin(async move {
                    text.ok_or_else(|| ErrorObject::new(-1, "no params"))
                }))
            }
            "wait" => Reply::Later(Box::pin(std::future::pending())),
            "ask" => Reply::Later(Box::pin(async move {
                match cx.request("roots/list", None).await {
                    Ok(answer) => answer,
                    Err(timeout) => Err(ErrorObject::new(-1, timeout.to_string())),
                }
            })),
            // The JSON text of `text`, as a result passed on unchanged.
            "raw" => {
                #[derive(serde::Deserialize)]
                struct Text {
                    text: Option<String>,
                }
                let text = match params.decode::<Text>() {
                    Ok(text) => text.and_then(|t| t.text),
                    Err(e) => return Reply::Now(Err(e)),
                };
                Reply::LaterRaw(Box::pin(async move {
                    tokio::task::yield_now().await;
                    RawValue::from_string(text.unwrap_or_default())
                        .map_err(|e| ErrorObject::new(-1, e.to_string()))
                }))
            }
            "raw_wait" => Reply::LaterRaw(Box::pin(std::future::pending())),
            // A JSON text result sent before the handler returns.
            "raw_now" => {
                let result = RawValue::from_string(PLAIN.to_owned())
                    .map_err(|e| ErrorObject::new(-1, e.to_string()));
                let (session, key, meta) = cx.into_parts();
                match meta {
                    Some(_) => session.reply_raw_stateless(key, result),
                    None => session.reply_raw(key, result),
                }
                Reply::Silent
            }
            "later" => {
                tokio::spawn(async move {
                    tokio::task::yield_now().await;
                    cx.reply(Ok(json!({ "late": true })));
                });
                Reply::Silent
            }
            _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
        }
    }

    fn exit_after_reply(&self, answered: u64) -> Option<i32> {
        (answered == 100).then_some(9)
    }

    fn log_level_set(&self, _: &Session<Self>, level: usize) {
        self.levels.lock().unwrap().push(level);
    }
}

fn session(era: ServeEra) -> (Session<Demo>, OutgoingQueue) {
    let mut info = ServerInfo::new("demo", "1.0");
    info.instructions = Some("be kind".into());
    let mut options = SessionOptions::new(era);
    options.request_timeout = Duration::from_secs(2);
    Session::new(Demo { info, levels: Default::default() }, options)
}

fn request(id: i64, method: &str, params: Value) -> Message {
    Message::Request(Request::new(id, method, Some(params)))
}

fn initialize(id: i64, version: &str) -> Message {
    request(
        id,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {"roots": {}},
               "clientInfo": {"name": "t", "version": "0"}}),
    )
}

fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// Everything queued so far: (message, related id, origin).
pub(crate) fn drain(queue: &mut OutgoingQueue) -> Vec<(Value, Option<RequestId>, u64)> {
    let mut out = Vec::new();
    while let Ok(item) = queue.try_recv() {
        match item {
            Outgoing::Message { message, related, origin, .. } => {
                out.push((serde_json::to_value(&message).unwrap(), related, origin));
            }
            other => out.push((json!({ "item": format!("{other:?}") }), None, 0)),
        }
    }
    out
}

pub(crate) fn only(queue: &mut OutgoingQueue) -> Value {
    let all = drain(queue);
    assert_eq!(all.len(), 1, "{all:?}");
    all.into_iter().next().unwrap().0
}

#[tokio::test]
async fn the_handshake_era_answers_what_every_server_answers() {
    let (session, mut queue) = session(ServeEra::Legacy);
    session.handle(request(1, "echo", json!({})));
    assert_eq!(only(&mut queue)["error"]["code"], -32600);
    session.handle(request(2, "ping", json!({})));
    assert_eq!(only(&mut queue)["result"], json!({}));
    session.handle(initialize(3, "2025-06-18"));
    let answer = only(&mut queue);
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(answer["result"]["serverInfo"]["name"], "demo");
    assert_eq!(answer["result"]["instructions"], "be kind");
    assert_eq!(session.negotiated_version().as_deref(), Some("2025-06-18"));
    // What the client declared, for a handler that asks it things.
    assert_eq!(session.client_capabilities(), Some(json!({"roots": {}})));
    session.handle(initialize(4, "2025-06-18"));
    assert_eq!(only(&mut queue)["error"]["code"], -32600);
    session.handle(Message::Notification(Notification::new("notifications/initialized", None)));
    assert!(session.client_initialized());
    session.handle(request(5, "logging/setLevel", json!({"level": "error"})));
    assert_eq!(only(&mut queue)["result"], json!({}));
    assert!(session.log_level_enabled(4) && !session.log_level_enabled(3));
    session.handle(request(6, "logging/setLevel", json!({"level": "loud"})));
    assert_eq!(only(&mut queue)["error"]["code"], -32602);
    // The handler heard the level that was set, not the refused one.
    assert_eq!(*session.handler().levels.lock().unwrap(), [4]);
    session.handle(request(7, "echo", json!({"a": 1})));
    let (echoed, related, _) = drain(&mut queue).remove(0);
    assert_eq!((echoed["result"].clone(), related), (json!({"a": 1}), Some(7.into())));
    session.handle(request(8, "nope", json!({})));
    assert_eq!(only(&mut queue)["error"]["code"], -32601);
    // Stateless-only methods are unknown to a handshake-era server.
    session.handle(request(9, "server/discover", json!({})));
    assert_eq!(only(&mut queue)["error"]["code"], -32601);
}

#[tokio::test]
async fn frames_that_are_not_messages_get_parse_and_invalid_request_errors() {
    let (session, mut queue) = session(ServeEra::Legacy);
    session.handle_json(b"not json");
    let error = only(&mut queue);
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (Value::Null, json!(-32700)));
    session.handle_json(br#"{"jsonrpc":"2.0","id":7,"params":{}}"#);
    let error = only(&mut queue);
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(7), json!(-32600)));
    session.reject_oversized(10);
    assert_eq!(only(&mut queue)["error"]["code"], -32700);
    session.handle_json(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":1}]"#);
    let codes: Vec<Value> = drain(&mut queue).into_iter().map(|(m, ..)| m["id"].clone()).collect();
    assert_eq!(codes, [json!(1), Value::Null]);
}

#[tokio::test(start_paused = true)]
async fn cancelled_requests_are_aborted_and_never_answered() {
    let (session, mut queue) = session(ServeEra::Legacy);
    session.handle(initialize(1, "2025-11-25"));
    drain(&mut queue);
    session.handle(request(2, "wait", json!({})));
    session.handle(request(2, "wait", json!({})));
    // A second request with the id of a running one is refused.
    assert_eq!(only(&mut queue)["error"]["code"], -32600);
    let cancel = json!({"requestId": 2, "reason": "enough"});
    session
        .handle(Message::Notification(Notification::new("notifications/cancelled", Some(cancel))));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(drain(&mut queue).is_empty());
    // The id is free again.
    session.handle(request(2, "echo", json!({})));
    assert_eq!(only(&mut queue)["id"], 2);
}

#[tokio::test(start_paused = true)]
async fn server_requests_are_related_answered_and_timed_out() {
    let (session, mut queue) = session(ServeEra::Legacy);
    session.handle(initialize(1, "2025-11-25"));
    drain(&mut queue);
    session.handle(request(2, "ask", json!({})));
    tokio::task::yield_now().await;
    let (asked, related, _) = drain(&mut queue).remove(0);
    assert_eq!(
        (asked["method"].clone(), asked["id"].clone()),
        (json!("roots/list"), json!("srv-1"))
    );
    assert_eq!(related, Some(2.into()));
    let answer = Response::new(RequestId::String("srv-1".into()), json!({"roots": []}));
    session.handle(Message::Response(answer));
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(only(&mut queue)["result"], json!({"roots": []}));
    // An answer to nothing is dropped; an unanswered request times out.
    session.handle(Message::Response(Response::new(RequestId::Number(99), json!({}))));
    session.handle(request(3, "ask", json!({})));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let all = drain(&mut queue);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1].0["error"]["message"], "the client did not answer within 2000 ms");
}

#[tokio::test]
async fn a_silent_reply_is_sent_later_through_the_context() {
    let (session, mut queue) = session(ServeEra::Modern);
    session.handle(request(1, "later", json!({"_meta": stateless_meta()})));
    assert!(drain(&mut queue).is_empty());
    tokio::time::sleep(Duration::from_millis(10)).await;
    let late = only(&mut queue);
    assert_eq!(late["result"]["late"], true);
    assert_eq!(late["result"]["resultType"], "complete");
}

#[tokio::test]
async fn the_stateless_era_checks_meta_discovers_and_decorates() {
    let (session, mut queue) = session(ServeEra::Modern);
    session.handle(initialize(1, "2025-11-25"));
    let refused = only(&mut queue);
    assert_eq!(refused["error"]["code"], -32022);
    assert_eq!(refused["error"]["data"]["supported"], json!(["2026-07-28"]));
    session.handle(request(2, "echo", json!({})));
    assert_eq!(only(&mut queue)["error"]["code"], -32602);
    let mut old = stateless_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    session.handle(request(3, "echo", json!({"_meta": old})));
    assert_eq!(only(&mut queue)["error"]["code"], -32022);
    session.handle(request(4, "server/discover", json!({"_meta": stateless_meta()})));
    let found = only(&mut queue)["result"].clone();
    assert_eq!(found["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(found["capabilities"], json!({"tools": {}, "logging": {}}));
    assert_eq!(found["resultType"], "complete");
    assert_eq!(found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "demo");
    session.handle(request(5, "echo", json!({"_meta": stateless_meta(), "x": 1})));
    let echoed = only(&mut queue)["result"].clone();
    assert_eq!((echoed["x"].clone(), echoed["resultType"].clone()), (json!(1), json!("complete")));
    // No `ping` or `logging/setLevel` in this era: the handler's -32601.
    session.handle(request(6, "ping", json!({"_meta": stateless_meta()})));
    assert_eq!(only(&mut queue)["error"]["code"], -32601);
}

#[tokio::test]
async fn listens_are_acknowledged_fed_and_closed() {
    let (session, mut queue) = session(ServeEra::Both);
    let listen = |id: i64, tools: bool| {
        request(
            id,
            "subscriptions/listen",
            json!({"_meta": stateless_meta(),
                   "notifications": {"toolsListChanged": tools, "resourceSubscriptions": ["r://1"]}}),
        )
    };
    session.handle_from(1, listen(1, true));
    session.handle_from(2, listen(1, false));
    let acks = drain(&mut queue);
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[0].0["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        acks[0].0["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["r://1"]})
    );
    assert_eq!((acks[0].1.clone(), acks[0].2, acks[1].2), (Some(1.into()), 1, 2));
    assert_eq!(session.broadcast(&Change::Tools), 1);
    assert_eq!(session.broadcast(&Change::Updated("r://1".into())), 2);
    let changes = drain(&mut queue);
    assert_eq!(changes[0].0["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    // Closing the stream of origin 2 ends its listen; the other ends with a result.
    session.cancel(2, 1.into());
    assert_eq!(session.close_subscriptions(), 1);
    let closed = only(&mut queue);
    assert_eq!(closed["result"]["resultType"], "complete");
    // A handshake-era session beside it is untouched by all this.
    session.handle(initialize(9, "2025-11-25"));
    assert_eq!(only(&mut queue)["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn the_exit_hook_follows_the_reply_it_names() {
    let (session, mut queue) = session(ServeEra::Legacy);
    for id in 0..100 {
        session.handle(request(id, "ping", json!({})));
    }
    let all = drain(&mut queue);
    assert_eq!(all.len(), 101);
    assert_eq!(all[100].0["item"], "Exit(9)");
}

/// A result text with escapes, non-ASCII text, a number no float holds,
/// `_meta`, nesting and the line breaks of pretty-printing.
const UNUSUAL: &str = "{\"content\": [{\"type\":\"text\",\"text\":\"q\\\" \\\\ \\u00e9 \u{e9} \\ud83d\\ude00\"}],\r\n  \"structuredContent\":{\"n\":123456789012345678901234567890,\"d\":[[{}]]},\n  \"_meta\":{\"k/x\":null}}";

#[tokio::test]
async fn a_raw_result_goes_out_as_it_is_on_one_line_and_only_while_wanted() {
    let (session, mut queue) = session(ServeEra::Legacy);
    session.handle(initialize(1, "2025-11-25"));
    only(&mut queue);
    session.handle(request(2, "raw", json!({ "text": UNUSUAL })));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let item = queue.try_recv().unwrap();
    let Outgoing::RawReply { ref id, ref result, origin, .. } = item else { panic!("{item:?}") };
    assert_eq!((id, result.get(), origin), (&RequestId::Number(2), UNUSUAL, 0));
    // On the wire: the text as it came, its line breaks made spaces.
    let mut line = Vec::new();
    Outgoing::raw_reply_bytes(id, result, &mut line);
    let line = String::from_utf8(line).unwrap();
    let one_line = UNUSUAL.replace(['\r', '\n'], " ");
    assert_eq!(line, format!(r#"{{"jsonrpc":"2.0","id":2,"result":{one_line}}}"#));
    let parsed: Value = serde_json::from_str(&line).unwrap();
    let unusual: Value = serde_json::from_str(UNUSUAL).unwrap();
    assert_eq!(parsed["result"], unusual);
    // A cancelled raw call is never answered; an error is an error reply.
    session.handle(request(3, "raw_wait", json!({})));
    let cancel = json!({ "requestId": 3 });
    session
        .handle(Message::Notification(Notification::new("notifications/cancelled", Some(cancel))));
    session.handle(request(4, "raw", json!({ "text": "not json" })));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answer = only(&mut queue);
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(4), json!(-1)));
}

#[tokio::test]
async fn a_raw_result_in_the_stateless_era_gets_its_result_type_and_server_info() {
    let (session, mut queue) = session(ServeEra::Modern);
    session.handle(request(1, "raw", json!({ "_meta": stateless_meta(), "text": UNUSUAL })));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let result = only(&mut queue)["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "demo");
    assert_eq!(result["_meta"].get("k/x"), Some(&Value::Null), "{result}");
    let unusual: Value = serde_json::from_str(UNUSUAL).unwrap();
    assert_eq!(result["structuredContent"], unusual["structuredContent"]);
}

/// A result's text with no member the stateless era adds to.
const PLAIN: &str = r#"{"content":[{"type":"text","text":"\u00e9 é"}],"n":1.10}"#;

#[tokio::test]
async fn a_raw_result_sent_at_once_gets_the_stateless_era_members_only_in_that_era() {
    let (session, mut queue) = session(ServeEra::Both);
    session.handle(request(1, "raw_now", json!({ "_meta": stateless_meta() })));
    let item = queue.try_recv().unwrap();
    let Outgoing::RawReply { ref result, .. } = item else { panic!("{item:?}") };
    // Added to the text: its own members come first, as written.
    assert!(
        result.get().starts_with(r#"{"content":[{"type":"text","text":"\u00e9 é"}],"n":1.10,"#),
        "{result}"
    );
    let result: Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "demo");
    session.handle(initialize(2, "2025-11-25"));
    only(&mut queue);
    session.handle(request(3, "raw_now", json!({})));
    let item = queue.try_recv().unwrap();
    let Outgoing::RawReply { ref id, ref result, .. } = item else { panic!("{item:?}") };
    assert_eq!((id, result.get()), (&RequestId::Number(3), PLAIN));
}

/// Parameters the client wrote reach the handler as that text, whatever a
/// `Value` would have made of them; the session reads only the `_meta` it
/// needs from them.
#[tokio::test]
async fn parameters_reach_the_handler_as_the_client_wrote_them() {
    let params = r#"{"arguments":{"n":123456789012345678901234567890,"d":0.10000000000000000000000001,"e":1e400,"s":"\u00e9\n\"é\\"},"_meta":{"progressToken":"t"}}"#;
    let (session, mut queue) = session(ServeEra::Both);
    session.handle(initialize(1, "2025-11-25"));
    only(&mut queue);
    for line in [
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"params","params":{params}}}"#),
        format!(r#"{{"id":2, "method":"params", "jsonrpc":"2.0", "params":{params}}}"#),
    ] {
        session.handle_json(line.as_bytes());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let item = queue.try_recv().unwrap();
        let Outgoing::RawReply { ref result, .. } = item else { panic!("{item:?}") };
        assert_eq!(result.get(), params);
    }
    // A handler that wants a value gets -32602 for what no value holds.
    session.handle_json(
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"echo","params":{params}}}"#).as_bytes(),
    );
    assert_eq!(only(&mut queue)["error"]["code"], -32602);
    // The stateless era's `_meta` read from the text, as from a value.
    let meta = stateless_meta();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"params","params":{{"x":18446744073709551616,"_meta":{meta}}}}}"#
    );
    session.handle_json(line.as_bytes());
    tokio::time::sleep(Duration::from_millis(20)).await;
    let result = only(&mut queue)["result"].clone();
    assert_eq!(result["resultType"], "complete");
    let line = r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    session.handle_json(line.as_bytes());
    assert_eq!(only(&mut queue)["error"]["code"], -32022);
}
