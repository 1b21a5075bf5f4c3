//! Notifications from the server: routing, the tool cache, delivery to
//! the host's handlers, their text forms and log messages.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_proto::client::{
    ClientError, Event, Handlers, ListKind, RequestOptions, ServerEvent, StaticRoots,
};
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcp_proto::types::Tool;
use serde_json::{Value, json};

use super::{Core, config, events, init_reply, msg, ready, transmitted};

#[test]
fn notifications_are_routed() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let n = |method: &str, params: Value| {
        Message::Notification(Notification::new(method, Some(params)))
    };
    core.handle_message(
        n("notifications/message", json!({"level":"warning","logger":"db","data":"disk low"})),
        t0,
    );
    core.handle_message(n("notifications/prompts/list_changed", json!({})), t0);
    core.handle_message(n("notifications/resources/list_changed", json!({})), t0);
    core.handle_message(n("notifications/resources/updated", json!({"uri":"file:///a"})), t0);
    let evs = events(&mut core);
    assert!(matches!(&evs[0], Event::Log(p) if p.data == json!("disk low")));
    assert!(matches!(evs[1], Event::ListChanged(ListKind::Prompts)));
    assert!(matches!(evs[2], Event::ListChanged(ListKind::Resources)));
    assert!(
        matches!(&evs[3], Event::Notification(n) if n.method == "notifications/resources/updated")
    );
}

#[test]
fn tool_cache_is_invalidated_by_list_changed_even_mid_listing() {
    let t0 = Instant::now();
    let mut core = ready(t0);
    let tool = |name: &str| -> Tool {
        serde_json::from_value(json!({"name":name,"inputSchema":{"type":"object"}})).unwrap()
    };
    let g = core.tools_generation();
    core.store_tools(g, vec![tool("a")]);
    assert_eq!(core.cached_tools().unwrap().len(), 1);
    core.handle_message(
        Message::Notification(Notification::new("notifications/tools/list_changed", None)),
        t0,
    );
    assert!(core.cached_tools().is_none());
    // A list fetched across a change is returned but not cached.
    let g = core.tools_generation();
    core.handle_message(
        Message::Notification(Notification::new("notifications/tools/list_changed", None)),
        t0,
    );
    let got = core.store_tools(g, vec![tool("b")]);
    assert_eq!(got[0].name, "b");
    assert!(core.cached_tools().is_none());
    // A list fetched after the changes is cached.
    let g = core.tools_generation();
    assert_ne!(g, 0);
    core.store_tools(g, vec![tool("c")]);
    assert_eq!(core.cached_tools().unwrap()[0].name, "c");
    // A reset forgets the cache and outdates a listing in flight.
    core.reset();
    assert!(core.cached_tools().is_none());
    assert_ne!(core.tools_generation(), g);
    core.store_tools(g, vec![tool("d")]);
    assert!(core.cached_tools().is_none());
}

#[test]
fn deliver_routes_each_event_and_leaves_only_driver_work() {
    use mcp_proto::client::{DriverWork, ServerEvent};
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.capabilities =
        Handlers { roots: Some(Arc::new(StaticRoots(vec![]))), ..Default::default() }
            .capabilities();
    let mut core = Core::new(cfg);
    let req = core.initialize("init", t0).unwrap();
    core.handle_message(init_reply(&req.id, "2025-11-25"), t0);
    let _ = transmitted(&mut core);

    let heard = Arc::new(Mutex::new(Vec::new()));
    let heard2 = heard.clone();
    let on_event: mcp_proto::client::EventCallback =
        Arc::new(move |e: &ServerEvent| heard2.lock().unwrap().push(e.clone()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let progress2 = progress.clone();
    let opts = RequestOptions {
        on_progress: Some(Arc::new(move |p| progress2.lock().unwrap().push(p.progress))),
        ..Default::default()
    };
    let call =
        core.start_request("tools/call", Some(json!({"name":"slow"})), &opts, "call", t0).unwrap();
    let token = serde_json::to_value(&call.id).unwrap();
    core.handle_message(msg(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":7}})), t0);
    core.handle_message(
        msg(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})),
        t0,
    );
    core.handle_message(Message::Request(Request::new("r1", "roots/list", None)), t0);
    core.handle_message(
        msg(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}),
        ),
        t0,
    );
    core.handle_message(
        Message::Response(Response::new(call.id.clone(), json!({"content":[]}))),
        t0,
    );

    let mut replies = Vec::new();
    let mut work = Vec::new();
    for event in events(&mut core) {
        if let Some(w) = event
            .deliver(Some(&on_event), |waiter, outcome| replies.push((waiter, outcome.is_ok())))
        {
            work.push(w);
        }
    }
    assert_eq!(*progress.lock().unwrap(), vec![7.0]);
    assert_eq!(*heard.lock().unwrap(), vec![ServerEvent::ListChanged(ListKind::Tools)]);
    assert_eq!(replies, vec![("init", true), ("call", true)]);
    assert_eq!(work.len(), 2);
    assert!(matches!(&work[0], DriverWork::AnswerServerRequest(r) if r.method == "roots/list"));
    assert_eq!(work[1], DriverWork::StopServerRequest(RequestId::from("r1")));
}

/// The text forms a host logs, and the host-facing part of each event.
#[test]
fn debug_forms_and_server_events() {
    let options = RequestOptions {
        timeout: Some(Duration::from_secs(3)),
        on_progress: Some(Arc::new(|_| {})),
        ..Default::default()
    };
    let text = format!("{options:?}");
    assert!(text.starts_with("RequestOptions {") && text.contains("<callback>"), "{text}");
    assert!(text.contains("timeout: Some(3s)"), "{text}");
    let core = ready(Instant::now());
    let text = format!("{core:?}");
    assert!(text.starts_with("ClientCore {") && text.contains("phase: Ready"), "{text}");

    let log: mcp_proto::types::LoggingMessageNotificationParams =
        serde_json::from_value(json!({"level": "error", "data": "boom"})).unwrap();
    let note = Notification::new("notifications/resources/updated", Some(json!({"uri": "x"})));
    let cases: Vec<(Event<&str>, Option<ServerEvent>)> = vec![
        (Event::ListChanged(ListKind::Tools), Some(ServerEvent::ListChanged(ListKind::Tools))),
        (Event::Log(log.clone()), Some(ServerEvent::Log(log))),
        (Event::Notification(note.clone()), Some(ServerEvent::Notification(note))),
        (
            Event::Reply {
                id: 1.into(),
                waiter: "w",
                outcome: Err(ClientError::Closed { method: "m".into() }),
            },
            None,
        ),
    ];
    for (event, expected) in cases {
        let text = format!("{event:?}");
        assert!(!text.is_empty() && text.chars().next().unwrap().is_uppercase(), "{text}");
        assert_eq!(event.server_event(), expected, "{text}");
    }
    let reply = Event::<&str>::Reply {
        id: 9.into(),
        waiter: "w",
        outcome: Err(ClientError::Closed { method: "m".into() }),
    };
    assert!(format!("{reply:?}").starts_with("Reply { id: Number(9)"), "{reply:?}");
}

/// A server's log message goes to `tracing` at the matching level.
#[test]
fn server_log_messages_reach_tracing_at_their_level() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tracing::{Level, Metadata, span};

    /// Records the level of every event under the `mcp::server` target.
    struct Levels(Mutex<Vec<Level>>, AtomicU64);
    impl tracing::Subscriber for Levels {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(self.1.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            if event.metadata().target() == "mcp::server" {
                self.0.lock().unwrap().push(*event.metadata().level());
            }
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }

    let levels = Arc::new(Levels(Mutex::new(Vec::new()), AtomicU64::new(0)));
    let t0 = Instant::now();
    let mut core = ready(t0);
    tracing::subscriber::with_default(levels.clone(), || {
        for level in ["debug", "info", "notice", "warning", "error", "critical", "emergency"] {
            core.handle_message(
                msg(json!({"jsonrpc":"2.0","method":"notifications/message",
                    "params":{"level":level,"logger":"db","data":"x"}})),
                t0,
            );
        }
    });
    let got = levels.0.lock().unwrap().clone();
    use Level as L;
    assert_eq!(got, [L::DEBUG, L::INFO, L::INFO, L::WARN, L::ERROR, L::ERROR, L::ERROR]);
    assert_eq!(events(&mut core).len(), 7);
}
