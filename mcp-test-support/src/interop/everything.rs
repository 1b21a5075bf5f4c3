//! Interop in the handshake era: the client against
//! `@modelcontextprotocol/server-everything` from npm, a server nobody in
//! this project wrote. Every request the server answers is driven through
//! the typed API of `mcp_peer::Client`, and every request the server makes
//! (roots, sampling, elicitation) is answered by the host's handlers.
//!
//! [`everything_tests!`](crate::everything_tests) runs every test over a
//! [`Connect`] to the server: its `stdio` mode, and over HTTP its
//! `streamableHttp` and `sse` (2024-11-05) modes, where the server's
//! requests made inside a tool call (sampling, elicitation) and progress
//! come on that call's reply stream, and its unrelated messages
//! (`roots/list`, log messages, resource updates, task status) on the
//! standalone GET stream or the one SSE stream.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_peer::{CallError, Client, Handlers, RequestOptions};
use mcp_proto::client::{ServerNotification, StaticRoots};
use mcp_proto::jsonrpc::error_code;
use mcp_proto::types::{
    CallToolResult, ClientCapabilities, CompleteArgument, CompleteContext, CompleteRequestParams,
    ContentBlock, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, LoggingLevel,
    PromptReference, Reference, ResourceContents, ResourceTemplateReference, Role, Root,
    RootsCapability, SamplingMessageContentBlock, TaskStatus, TaskSupport,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Connect, base64_decode, log_text, resource_updated, rpc_error};
use crate::{Model, MovingRoots, Seen, User, bounded_by, next_matching, text};

/// How long one test may take in all.
const TEST_LIMIT: Duration = Duration::from_secs(90);
/// How long to wait for one notification. The server's timers tick every
/// 5 s and send once at once, so this is generous.
const NOTIFICATION_LIMIT: Duration = Duration::from_secs(20);
/// The model the sampling handler claims to be, and what it answers.
const MODEL: &str = "interop-model-7";
const REPLY: &str = "Forty-two, said the interop model.";
/// A URL the user declines to open, and one the user opens.
const DECLINED_URL: &str = "https://example.com/interop-consent";
const OPENED_URL: &str = "https://example.com/interop-opened";

/// The name the clients give the server.
pub const SERVER_NAME: &str = "everything";
/// An environment variable the [`Connect`] gives the server (and only it):
/// `get-env` must show it.
pub const MARKER: (&str, &str) = ("MCP_INTEROP_MARKER", "interop-env-ok");

/// A client of `server` with these handlers and extra capabilities, the
/// handshake done.
async fn start_with<S: Connect>(
    server: &S,
    handlers: Handlers,
    capabilities: ClientCapabilities,
) -> Client<S::Transport> {
    let c = server
        .connect(|o| {
            o.request_timeout = Duration::from_secs(20);
            o.handlers = handlers;
            o.capabilities = capabilities;
        })
        .await;
    c.initialize().await.expect("the handshake");
    server.opened(&c).await;
    c
}

/// A plain client (no handlers), with the server's unrelated messages
/// flowing.
async fn start<S: Connect>(server: &S) -> Client<S::Transport> {
    let c = start_with(server, Handlers::default(), ClientCapabilities::default()).await;
    server.server_stream(&c).await;
    c
}

/// A user who fills in forms, opens [`OPENED_URL`] and declines to open
/// any other.
fn user(seen: &Arc<Seen>) -> User {
    let answer = |params: &ElicitRequestParams| match params {
        // simulate-research-query's clarification.
        ElicitRequestParams::Form(f)
            if f.requested_schema.properties.contains_key("interpretation") =>
        {
            ElicitResult::accept([("interpretation", "snake")])
        }
        ElicitRequestParams::Form(_) => ElicitResult::accept([
            ("name", ElicitValue::from("Ada Lovelace")),
            ("check", ElicitValue::from(true)),
            ("email", ElicitValue::from("ada@example.com")),
            ("integer", ElicitValue::from(7)),
            ("untitledMultipleSelectEnum", ElicitValue::from(vec!["Piano".to_owned()])),
        ]),
        ElicitRequestParams::Url(u) if u.url == OPENED_URL => {
            ElicitResult::new(ElicitAction::Accept)
        }
        ElicitRequestParams::Url(_) => ElicitResult::decline(),
    };
    User { seen: seen.clone(), answer: Box::new(answer), url_mode: true }
}

/// A model that always gives [`REPLY`].
fn model(seen: &Arc<Seen>) -> Model {
    Model { seen: seen.clone(), model: MODEL.into(), reply: REPLY.into() }
}

fn completion(reference: Reference, name: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams {
        reference,
        argument: CompleteArgument { name: name.into(), value: value.into(), ..Default::default() },
        context: None,
        meta: None,
        extra: Default::default(),
    }
}

/// The handshake (its reply comes after a notification), the server's
/// info, capabilities and instructions; tools listed whole, by page and
/// fresh, no tool that needs an undeclared capability; text and image
/// results.
pub async fn handshake_tools_echo_and_sum<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        // server-everything sends notifications/tools/list_changed before its
        // initialize reply: the handshake must not take it as the reply.
        let info = c.server_info().unwrap();
        assert!(info.name.contains("everything"), "{info:?}");
        let caps = c.server_capabilities().unwrap();
        assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.logging.is_some());
        assert_eq!(caps.resources.as_ref().and_then(|r| r.subscribe), Some(true));
        assert!(c.instructions().is_some_and(|i| !i.is_empty()));

        let tools = c.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in [
            "echo",
            "get-sum",
            "trigger-long-running-operation",
            "get-tiny-image",
            "get-structured-content",
            "get-env",
            "get-resource-links",
        ] {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }
        // No handler, no capability, no tool that needs one.
        for absent in ["get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"]
        {
            assert!(!names.contains(&absent), "{absent} listed without its capability");
        }
        // Paging by hand reaches the same list.
        let page = c.list_tools_page(None).await.unwrap();
        assert_eq!(page.next_cursor, None);
        assert_eq!(page.tools.len(), tools.len());
        assert_eq!(c.list_tools_fresh().await.unwrap().len(), tools.len());

        let echo = c.call_tool("echo", json!({"message": "hello, everything"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: hello, everything");

        let sum = c.call_tool("get-sum", json!({"a": 19, "b": 23})).await.unwrap();
        assert_eq!(text(&sum), "The sum of 19 and 23 is 42.");

        let image = c.call_tool("get-tiny-image", ()).await.unwrap();
        match image.content.as_slice() {
            [ContentBlock::Text(_), ContentBlock::Image(img), ContentBlock::Text(_)] => {
                assert_eq!(img.mime_type, "image/png");
                assert_eq!(&base64_decode(&img.data)[1..4], b"PNG");
            }
            other => panic!("{other:?}"),
        }

        c.ping().await.unwrap();
        c.close().await.unwrap();
    })
    .await;
}

/// Structured content typed and as exact values, typed results from a
/// text block, tool errors, annotations, resource links and references.
pub async fn typed_and_structured_tool_results<S: Connect>(server: &S) {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Weather {
        temperature: f64,
        conditions: String,
        humidity: f64,
    }
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let tools = c.list_tools().await.unwrap();
        let weather_tool = tools.iter().find(|t| t.name == "get-structured-content").unwrap();
        assert!(weather_tool.output_schema.is_some(), "{weather_tool:?}");

        // From structuredContent.
        let chicago: Weather =
            c.call_tool_as("get-structured-content", json!({"location": "Chicago"})).await.unwrap();
        assert_eq!(
            chicago,
            Weather {
                temperature: 36.0,
                conditions: "Light rain / drizzle".into(),
                humidity: 82.0
            }
        );
        let los_angeles: BTreeMap<String, Value> = c
            .call_tool_as("get-structured-content", json!({"location": "Los Angeles"}))
            .await
            .unwrap();
        let expected = json!({"temperature": 73, "conditions": "Sunny / Clear", "humidity": 48});
        assert_eq!(json!(los_angeles), expected);
        // From the JSON text of the single text block (get-env has no
        // structured content): the server got the variable we gave it.
        let env: BTreeMap<String, String> = c.call_tool_as("get-env", ()).await.unwrap();
        assert_eq!(env.get(MARKER.0).map(String::as_str), Some(MARKER.1), "{env:?}");
        // A tool error is an error of call_tool_as, and a result of call_tool.
        let err = c
            .call_tool_as::<Weather>("get-structured-content", json!({"location": "Atlantis"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("reported an error"), "{err}");
        let failed =
            c.call_tool("get-structured-content", json!({"location": "Atlantis"})).await.unwrap();
        assert_eq!(failed.is_error, Some(true), "{failed:?}");

        let annotated = c
            .call_tool(
                "get-annotated-message",
                json!({"messageType": "error", "includeImage": true}),
            )
            .await
            .unwrap();
        match annotated.content.as_slice() {
            [ContentBlock::Text(t), ContentBlock::Image(i)] => {
                assert_eq!(t.text, "Error: Operation failed");
                let a = t.annotations.as_ref().unwrap();
                assert_eq!(a.priority, Some(1.0));
                assert_eq!(a.audience.as_deref(), Some(&[Role::User, Role::Assistant][..]));
                assert_eq!(i.annotations.as_ref().unwrap().priority, Some(0.5));
            }
            other => panic!("{other:?}"),
        }

        let links = c.call_tool("get-resource-links", json!({"count": 4})).await.unwrap();
        let uris: Vec<&str> = links
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ResourceLink(l) => Some(l.uri.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            uris,
            [
                "demo://resource/dynamic/blob/1",
                "demo://resource/dynamic/text/2",
                "demo://resource/dynamic/blob/3",
                "demo://resource/dynamic/text/4"
            ]
        );

        let reference = c
            .call_tool("get-resource-reference", json!({"resourceType": "Text", "resourceId": 5}))
            .await
            .unwrap();
        match reference.content.as_slice() {
            [ContentBlock::Text(_), ContentBlock::Resource(r), ContentBlock::Text(_)] => {
                match &r.resource {
                    ResourceContents::Text(t) => {
                        assert_eq!(t.uri, "demo://resource/dynamic/text/5");
                        assert!(t.text.starts_with("Resource 5: This is a plaintext resource"));
                    }
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        }
        c.close().await.unwrap();
    })
    .await;
}

/// Progress of a long-running tool reaches the call's callback, one per
/// step, and the notification stream.
pub async fn long_running_tool_reports_progress<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let mut notifications = c.notifications();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |p| seen2.lock().unwrap().push(p.progress))),
            ..Default::default()
        };
        let result = c
            .call_tool_with(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 4}),
                options,
            )
            .await
            .unwrap();
        assert_eq!(
            text(&result),
            "Long running operation completed. Duration: 1 seconds, Steps: 4."
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen, [1.0, 2.0, 3.0, 4.0], "one progress notification per step");
        // The notification stream hears the same progress.
        let (last, _) =
            next_matching(&mut notifications, "progress 4/4", NOTIFICATION_LIMIT, |n| match n {
                ServerNotification::Progress(p) if p.progress == 4.0 => Some(p.total),
                _ => None,
            })
            .await;
        assert_eq!(last, Some(4.0));
        c.close().await.unwrap();
    })
    .await;
}

/// A call running on its own is cancelled once it runs; the session goes
/// on.
pub async fn a_spawned_call_is_cancelled_and_the_session_goes_on<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let mut notifications = c.notifications();
        let options = RequestOptions { on_progress: Some(Arc::new(|_| {})), ..Default::default() };
        let handle = c.spawn_call_tool(
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 60}),
            options,
        );
        // It runs: its first progress arrives.
        next_matching(&mut notifications, "progress", NOTIFICATION_LIMIT, |n| {
            matches!(n, ServerNotification::Progress(_)).then_some(())
        })
        .await;
        assert!(!handle.is_finished());
        handle.cancel();
        assert!(matches!(handle.await, Err(CallError::Cancelled)));
        let echo = c.call_tool("echo", json!({"message": "still here"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: still here");
        c.close().await.unwrap();
    })
    .await;
}

/// Resources whole and by page, templates, static, template-made text and
/// blob reads, a read error, and a resource a tool registers (the list
/// changes).
pub async fn resources_pages_templates_and_reads<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let all = c.list_resources().await.unwrap();
        // Page by page to the end gives the same list.
        let mut paged = Vec::new();
        let mut cursor = None;
        for _ in 0..100 {
            let page = c.list_resources_page(cursor.take()).await.unwrap();
            paged.extend(page.resources);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert!(cursor.is_none(), "more than 100 pages");
        assert_eq!(paged, all);
        let uris: Vec<&str> = all.iter().map(|r| r.uri.as_str()).collect();
        let instructions_uri = "demo://resource/static/document/instructions.md";
        assert!(uris.contains(&instructions_uri), "{uris:?}");
        assert!(all.iter().all(|r| r.uri.starts_with("demo://resource/static/document/")));

        // A static text resource: the instructions the handshake gave.
        let read = c.read_resource(instructions_uri).await.unwrap();
        match read.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.mime_type.as_deref(), Some("text/markdown"));
                assert_eq!(Some(&t.text), c.instructions().as_ref());
            }
            other => panic!("{other:?}"),
        }

        let templates = c.list_resource_templates().await.unwrap();
        let mut template_uris: Vec<&str> =
            templates.iter().map(|t| t.uri_template.as_str()).collect();
        template_uris.sort();
        assert_eq!(
            template_uris,
            [
                "demo://resource/dynamic/blob/{resourceId}",
                "demo://resource/dynamic/text/{resourceId}"
            ]
        );
        let page = c.list_resource_templates_page(None).await.unwrap();
        assert_eq!(page.resource_templates, templates);

        // Template-made text and blob resources.
        let read = c.read_resource("demo://resource/dynamic/text/3").await.unwrap();
        match read.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.uri, "demo://resource/dynamic/text/3");
                assert!(t.text.starts_with("Resource 3: This is a plaintext resource"), "{t:?}");
            }
            other => panic!("{other:?}"),
        }
        let read = c.read_resource("demo://resource/dynamic/blob/8").await.unwrap();
        match read.contents.as_slice() {
            [ResourceContents::Blob(b)] => {
                let decoded = String::from_utf8(base64_decode(&b.blob)).unwrap();
                assert!(decoded.starts_with("Resource 8: This is a base64 blob"), "{decoded}");
            }
            other => panic!("{other:?}"),
        }
        let err = rpc_error(c.read_resource("demo://resource/dynamic/text/0").await.unwrap_err());
        assert!(err.message.contains("demo://resource/dynamic/text/0"), "{err:?}");

        // A tool that registers a session resource: the list changes.
        let mut notifications = c.notifications();
        let made = c
            .call_tool(
                "gzip-file-as-resource",
                json!({"name": "hello.txt.gz", "data": "data:text/plain,hello%20interop"}),
            )
            .await
            .unwrap();
        let uri = "demo://resource/session/hello.txt.gz";
        match made.content.as_slice() {
            [ContentBlock::ResourceLink(l)] => {
                assert_eq!(l.uri, uri);
                assert_eq!(l.mime_type.as_deref(), Some("application/gzip"));
            }
            other => panic!("{other:?}"),
        }
        next_matching(&mut notifications, "resources/list_changed", NOTIFICATION_LIMIT, |n| {
            matches!(n, ServerNotification::ResourceListChanged).then_some(())
        })
        .await;
        assert!(c.list_resources().await.unwrap().iter().any(|r| r.uri == uri));
        match c.read_resource(uri).await.unwrap().contents.as_slice() {
            [ResourceContents::Blob(b)] => {
                assert_eq!(b.mime_type.as_deref(), Some("application/gzip"));
                assert_eq!(&base64_decode(&b.blob)[..2], [0x1f, 0x8b], "gzip magic");
            }
            other => panic!("{other:?}"),
        }
        c.close().await.unwrap();
    })
    .await;
}

/// Resource updates come for each subscription, and stop for one
/// unsubscribed.
pub async fn subscriptions_bring_updates_until_unsubscribed<S: Connect>(server: &S) {
    let kept = "demo://resource/dynamic/text/1";
    let dropped = "demo://resource/static/document/features.md";
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        c.subscribe_resource(dropped).await.unwrap();
        c.subscribe_resource(kept).await.unwrap();

        // The server sends an update for each subscription at once, then
        // every 5 s.
        let mut notifications = c.notifications();
        let on = c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
        assert!(text(&on).starts_with("Started"), "{on:?}");
        let mut updated = Vec::new();
        while updated.len() < 2 {
            let (uri, _) = next_matching(
                &mut notifications,
                "resources/updated",
                NOTIFICATION_LIMIT,
                resource_updated,
            )
            .await;
            if !updated.contains(&uri) {
                updated.push(uri);
            }
        }
        updated.sort();
        assert_eq!(updated, [kept, dropped]);

        let off = c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
        assert!(text(&off).starts_with("Stopped"), "{off:?}");
        c.unsubscribe_resource(dropped).await.unwrap();

        // Turned on again: one update at once, for the subscription left.
        // The dropped one came first in each round (subscribed first), so
        // had the unsubscription not worked it would come before this.
        let mut notifications = c.notifications();
        c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
        let (uri, skipped) = next_matching(
            &mut notifications,
            "resources/updated",
            NOTIFICATION_LIMIT,
            resource_updated,
        )
        .await;
        assert_eq!(uri, kept);
        assert!(skipped.iter().all(|n| resource_updated(n).is_none()), "{skipped:?}");
        c.call_tool("toggle-subscriber-updates", ()).await.unwrap();
        c.unsubscribe_resource(kept).await.unwrap();
        c.close().await.unwrap();
    })
    .await;
}

/// Prompts whole and by page, with and without arguments, with an
/// embedded resource; an unknown prompt; completion of prompt arguments
/// (with and without context) and of a template variable.
pub async fn prompts_and_completion<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let prompts = c.list_prompts().await.unwrap();
        let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]);
        let page = c.list_prompts_page(None).await.unwrap();
        assert_eq!(page.next_cursor, None);
        assert_eq!(page.prompts, prompts);
        let args_prompt = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
        let required: Vec<(&str, Option<bool>)> = args_prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(required, [("city", Some(true)), ("state", Some(false))]);

        let simple = c.get_prompt("simple-prompt", None).await.unwrap();
        match simple.messages.as_slice() {
            [m] => {
                assert_eq!(m.role, Role::User);
                assert!(
                    matches!(&m.content, ContentBlock::Text(t) if t.text == "This is a simple prompt without arguments.")
                );
            }
            other => panic!("{other:?}"),
        }
        let arguments = BTreeMap::from([
            ("city".to_owned(), "Paris".to_owned()),
            ("state".to_owned(), "Texas".to_owned()),
        ]);
        let weather = c.get_prompt("args-prompt", Some(arguments)).await.unwrap();
        assert!(
            matches!(&weather.messages[0].content, ContentBlock::Text(t) if t.text == "What's weather in Paris, Texas?"),
            "{weather:?}"
        );
        let arguments = BTreeMap::from([
            ("department".to_owned(), "Sales".to_owned()),
            ("name".to_owned(), "Eve".to_owned()),
        ]);
        let promoted = c.get_prompt("completable-prompt", Some(arguments)).await.unwrap();
        assert!(
            matches!(&promoted.messages[..], [m] if matches!(&m.content,
                ContentBlock::Text(t) if t.text == "Please promote Eve to the head of the Sales team.")),
            "{promoted:?}"
        );
        let arguments = BTreeMap::from([
            ("resourceType".to_owned(), "Blob".to_owned()),
            ("resourceId".to_owned(), "6".to_owned()),
        ]);
        let embedded = c.get_prompt("resource-prompt", Some(arguments)).await.unwrap();
        match &embedded.messages[..] {
            [_, m] => match &m.content {
                ContentBlock::Resource(r) => {
                    assert_eq!(r.resource.uri(), "demo://resource/dynamic/blob/6");
                    assert!(matches!(r.resource, ResourceContents::Blob(_)));
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let err = rpc_error(c.get_prompt("no-such-prompt", None).await.unwrap_err());
        assert_eq!(err.code, error_code::INVALID_PARAMS, "{err:?}");

        // Completion of a prompt argument, with and without context.
        let prompt = |name: &str| {
            Reference::Prompt(PromptReference { name: name.into(), ..Default::default() })
        };
        let departments =
            c.complete(&completion(prompt("completable-prompt"), "department", "S")).await.unwrap();
        assert_eq!(departments.completion.values, ["Sales", "Support"]);
        let departments =
            c.complete(&completion(prompt("completable-prompt"), "department", "M")).await.unwrap();
        assert_eq!(departments.completion.values, ["Marketing"]);
        for (department, people) in
            [("Engineering", ["Alice", "Bob", "Charlie"]), ("Support", ["John", "Kim", "Lee"])]
        {
            let mut params = completion(prompt("completable-prompt"), "name", "");
            params.context = Some(CompleteContext {
                arguments: Some(BTreeMap::from([("department".into(), department.into())])),
                ..Default::default()
            });
            assert_eq!(c.complete(&params).await.unwrap().completion.values, people);
        }
        let kinds = c.complete(&completion(prompt("resource-prompt"), "resourceType", "B")).await;
        assert_eq!(kinds.unwrap().completion.values, ["Blob"]);

        // Completion of a resource template variable.
        for kind in ["text", "blob"] {
            let template = Reference::Resource(ResourceTemplateReference {
                uri: format!("demo://resource/dynamic/{kind}/{{resourceId}}"),
                ..Default::default()
            });
            let ids = c.complete(&completion(template.clone(), "resourceId", "12")).await.unwrap();
            assert_eq!(ids.completion.values, ["12"]);
            let none = c.complete(&completion(template, "resourceId", "twelve")).await.unwrap();
            assert!(none.completion.values.is_empty(), "{none:?}");
        }
        c.close().await.unwrap();
    })
    .await;
}

/// The log level decides what the server logs: the info log that
/// acknowledges a subscription is dropped above info and sent at info;
/// simulated logging at debug.
pub async fn log_level_decides_what_the_server_logs<S: Connect>(server: &S) {
    let quiet = "demo://resource/dynamic/text/101";
    let loud = "demo://resource/dynamic/text/102";
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let mut notifications = c.notifications();
        // The server acknowledges a subscription with an info log: not at
        // emergency, but at info; both logs would travel the same stream,
        // in order.
        c.set_log_level(LoggingLevel::Emergency).await.unwrap();
        c.subscribe_resource(quiet).await.unwrap();
        c.set_log_level(LoggingLevel::Info).await.unwrap();
        c.subscribe_resource(loud).await.unwrap();
        let ((level, data), skipped) =
            next_matching(&mut notifications, "a log message", NOTIFICATION_LIMIT, log_text).await;
        assert_eq!(level, LoggingLevel::Info);
        assert!(data.contains(loud), "the first log is for {data:?}, not for {loud}");
        assert!(skipped.iter().all(|n| log_text(n).is_none()), "{skipped:?}");

        // Simulated logging: a random level at once, then every 5 s.
        c.set_log_level(LoggingLevel::Debug).await.unwrap();
        let on = c.call_tool("toggle-simulated-logging", ()).await.unwrap();
        assert!(text(&on).starts_with("Started"), "{on:?}");
        let ((level, data), _) =
            next_matching(&mut notifications, "a simulated log", NOTIFICATION_LIMIT, |n| {
                log_text(n).filter(|(_, d)| d.contains("message"))
            })
            .await;
        assert!(data.to_lowercase().starts_with(level.as_str()), "{level} {data}");
        let off = c.call_tool("toggle-simulated-logging", ()).await.unwrap();
        assert!(text(&off).starts_with("Stopped"), "{off:?}");
        c.close().await.unwrap();
    })
    .await;
}

/// A fixed roots list (no `listChanged`) reaches the server, named and
/// unnamed.
pub async fn static_roots_reach_the_server<S: Connect>(server: &S) {
    let roots = StaticRoots(vec![
        Root::new("file:///work/interop-a").with_name("Project A"),
        Root::new("file:///work/interop-b"),
    ]);
    let handlers = Handlers { roots: Some(Arc::new(roots)), ..Default::default() };
    bounded_by(TEST_LIMIT, async {
        let c = start_with(server, handlers, ClientCapabilities::default()).await;
        let listed = c.call_tool("get-roots-list", ()).await.unwrap();
        let shown = text(&listed);
        assert!(shown.contains("Current MCP Roots (2 total)"), "{shown}");
        assert!(shown.contains("1. Project A\n   URI: file:///work/interop-a"), "{shown}");
        assert!(shown.contains("2. Unnamed Root\n   URI: file:///work/interop-b"), "{shown}");
        c.close().await.unwrap();
    })
    .await;
}

/// The server asks for the roots on its own (after the handshake, over
/// HTTP on the stream that opened by itself: nothing here opens it), and
/// again when told they changed.
pub async fn changed_roots_are_fetched_again<S: Connect>(server: &S) {
    let roots = Arc::new(MovingRoots::default());
    roots.set(vec![Root::new("file:///before").with_name("Before")]);
    let handlers = Handlers { roots: Some(roots.clone()), ..Default::default() };
    let capabilities = ClientCapabilities {
        roots: Some(RootsCapability { list_changed: Some(true), ..Default::default() }),
        ..Default::default()
    };
    bounded_by(TEST_LIMIT, async {
        let c = start_with(server, handlers, capabilities).await;
        let shown = text(&c.call_tool("get-roots-list", ()).await.unwrap());
        assert!(shown.contains("1. Before\n   URI: file:///before"), "{shown}");

        let mut notifications = c.notifications();
        roots.set(vec![
            Root::new("file:///after/one").with_name("one"),
            Root::new("file:///after/two").with_name("two"),
        ]);
        c.notify_roots_changed().await.unwrap();
        // The server asks again, and says so in a log.
        next_matching(&mut notifications, "the roots-updated log", NOTIFICATION_LIMIT, |n| {
            log_text(n).filter(|(_, d)| d.contains("2 root(s) received"))
        })
        .await;
        let shown = text(&c.call_tool("get-roots-list", ()).await.unwrap());
        assert!(shown.contains("(2 total)") && shown.contains("file:///after/two"), "{shown}");
        assert!(!shown.contains("file:///before"), "{shown}");
        c.close().await.unwrap();
    })
    .await;
}

/// The model's answer to the server's sampling request inside a tool call
/// reaches the tool; the request is what the tool asked.
pub async fn sampling_answers_reach_the_tool<S: Connect>(server: &S) {
    let seen = Arc::new(Seen::default());
    let handlers = Handlers { sampling: Some(Arc::new(model(&seen))), ..Default::default() };
    bounded_by(TEST_LIMIT, async {
        let c = start_with(server, handlers, ClientCapabilities::default()).await;
        let result = c
            .call_tool(
                "trigger-sampling-request",
                json!({"prompt": "What is 6 x 7?", "maxTokens": 33}),
            )
            .await
            .unwrap();
        let shown = text(&result);
        assert!(shown.starts_with("LLM sampling result:"), "{shown}");
        assert!(shown.contains(MODEL) && shown.contains(REPLY), "{shown}");
        assert!(shown.contains("endTurn"), "{shown}");

        let asked = seen.sampling();
        let [params] = asked.as_slice() else { panic!("{asked:?}") };
        assert_eq!(params.max_tokens, 33);
        assert_eq!(params.system_prompt.as_deref(), Some("You are a helpful test server."));
        assert_eq!(params.temperature, Some(0.7));
        match params.messages[0].content.blocks() {
            [SamplingMessageContentBlock::Text(t)] => {
                assert_eq!(t.text, "Resource trigger-sampling-request context: What is 6 x 7?")
            }
            other => panic!("{other:?}"),
        }
        c.close().await.unwrap();
    })
    .await;
}

/// The user's answers to the server's elicitations inside a tool call (a
/// form, a URL declined, a URL opened) reach the tool; a host that also
/// samples.
pub async fn elicitation_answers_reach_the_tool<S: Connect>(server: &S) {
    let seen = Arc::new(Seen::default());
    let handlers = Handlers {
        elicitation: Some(Arc::new(user(&seen))),
        sampling: Some(Arc::new(model(&seen))),
        ..Default::default()
    };
    bounded_by(TEST_LIMIT, async {
        let c = start_with(server, handlers, ClientCapabilities::default()).await;
        let result = c.call_tool("trigger-elicitation-request", ()).await.unwrap();
        let shown = text(&result);
        assert!(shown.contains("User provided the requested information!"), "{shown}");
        for line in [
            "- Name: Ada Lovelace",
            "- Agreed to terms: true",
            "- Email: ada@example.com",
            "- Favorite Integer: 7",
        ] {
            assert!(shown.contains(line), "{line:?} missing from {shown}");
        }
        assert!(shown.contains("Piano"), "{shown}");

        // URL mode (declared because the handler supports it): declined,
        // then opened.
        let declined =
            c.call_tool("trigger-url-elicitation", json!({"url": DECLINED_URL})).await.unwrap();
        let shown = text(&declined);
        assert!(shown.contains("User declined to open the URL"), "{shown}");
        let opened =
            c.call_tool("trigger-url-elicitation", json!({"url": OPENED_URL})).await.unwrap();
        let shown = text(&opened);
        assert!(shown.contains("User completed the URL elicitation flow"), "{shown}");
        assert!(shown.contains(OPENED_URL), "{shown}");

        match seen.elicitation().as_slice() {
            [
                ElicitRequestParams::Form(form),
                ElicitRequestParams::Url(declined),
                ElicitRequestParams::Url(opened),
            ] => {
                assert_eq!(
                    form.requested_schema.required.as_deref(),
                    Some(&["name".to_owned()][..])
                );
                assert!(form.requested_schema.properties.contains_key("email"));
                assert_eq!(declined.url, DECLINED_URL);
                assert_eq!(opened.url, OPENED_URL);
            }
            other => panic!("{other:?}"),
        }
        c.close().await.unwrap();
    })
    .await;
}

/// A tool that requires a task is refused as a plain call; as a task it is
/// polled, listed, asks its question through `tasks/result` (status
/// `input_required`), completes, has every status change notified in
/// order, and cannot be cancelled once complete.
pub async fn a_tool_call_as_a_task_asks_for_input_and_completes<S: Connect>(server: &S) {
    let seen = Arc::new(Seen::default());
    let handlers = Handlers { elicitation: Some(Arc::new(user(&seen))), ..Default::default() };
    bounded_by(TEST_LIMIT, async {
        let c = start_with(server, handlers, ClientCapabilities::default()).await;
        // Status changes come as unrelated messages.
        server.server_stream(&c).await;
        let caps = c.server_capabilities().unwrap().tasks.expect("tasks declared");
        assert!(caps.list.is_some() && caps.cancel.is_some());
        assert!(caps.requests.and_then(|r| r.tools).is_some());
        let tools = c.list_tools().await.unwrap();
        let research = tools.iter().find(|t| t.name == "simulate-research-query").unwrap();
        let support = research.execution.as_ref().and_then(|e| e.task_support.clone());
        assert_eq!(support, Some(TaskSupport::Required));
        let refused =
            c.call_tool("simulate-research-query", json!({"topic": "python"})).await.unwrap();
        assert_eq!(refused.is_error, Some(true));
        assert!(text(&refused).contains("requires task augmentation"), "{refused:?}");

        let mut notifications = c.notifications();
        let created = c
            .call_tool_as_task(
                "simulate-research-query",
                json!({"topic": "python", "ambiguous": true}),
                Some(Duration::from_secs(60)),
            )
            .await
            .unwrap();
        let id = created.task.task_id.clone();
        assert!(!created.task.status.is_terminal(), "{:?}", created.task);
        assert_eq!(created.task.poll_interval, Some(1000));
        let polled = c.get_task(&id).await.unwrap();
        assert_eq!(polled.task_id, id);
        assert!(c.list_tasks().await.unwrap().iter().any(|t| t.task_id == id));

        // The server's question (status input_required) comes through
        // tasks/result; the answer shapes the result.
        let result: CallToolResult = c
            .task_result(&id, RequestOptions::with_timeout(Duration::from_secs(30)))
            .await
            .unwrap();
        let report = text(&result);
        assert!(report.contains("# Research Report: python (snake)"), "{report}");
        assert_eq!(c.get_task(&id).await.unwrap().status, TaskStatus::Completed);
        match seen.elicitation().as_slice() {
            [ElicitRequestParams::Form(f)] => {
                assert!(f.requested_schema.properties.contains_key("interpretation"), "{f:?}")
            }
            other => panic!("{other:?}"),
        }

        // Every status change was notified, in order.
        let mut statuses = Vec::new();
        while statuses.last() != Some(&TaskStatus::Completed) {
            let (status, _) = next_matching(
                &mut notifications,
                "a task status",
                NOTIFICATION_LIMIT,
                |n| match n {
                    ServerNotification::TaskStatus(t) if t.task_id == id => Some(t.status.clone()),
                    _ => None,
                },
            )
            .await;
            statuses.push(status);
        }
        assert!(statuses.contains(&TaskStatus::InputRequired), "{statuses:?}");
        assert_eq!(statuses[0], TaskStatus::Working, "{statuses:?}");

        // A completed task cannot be cancelled.
        let err = rpc_error(c.cancel_task(&id).await.unwrap_err());
        assert!(err.message.contains("terminal status"), "{err:?}");
        c.close().await.unwrap();
    })
    .await;
}

/// Twelve tasks over two pages of ten, listed whole the same; each
/// cancelled, and not again; unknown tasks are errors.
pub async fn tasks_are_listed_by_page_and_cancelled<S: Connect>(server: &S) {
    bounded_by(TEST_LIMIT, async {
        let c = start(server).await;
        let mut ids = Vec::new();
        for i in 0..12 {
            let topic = json!({"topic": format!("topic {i}")});
            let created =
                c.call_tool_as_task("simulate-research-query", topic, None).await.unwrap();
            ids.push(created.task.task_id);
        }
        // The server's pages hold 10 tasks.
        let first = c.list_tasks_page(None).await.unwrap();
        assert_eq!(first.tasks.len(), 10);
        let cursor = first.next_cursor.clone().expect("a second page");
        let second = c.list_tasks_page(Some(cursor)).await.unwrap();
        assert_eq!((second.tasks.len(), second.next_cursor.as_ref()), (2, None));
        let mut paged: Vec<String> =
            first.tasks.iter().chain(&second.tasks).map(|t| t.task_id.clone()).collect();
        let mut all: Vec<String> =
            c.list_tasks().await.unwrap().into_iter().map(|t| t.task_id).collect();
        paged.sort();
        all.sort();
        ids.sort();
        assert_eq!((&paged, &all), (&ids, &ids));

        for id in &ids {
            let cancelled = c.cancel_task(id).await.unwrap();
            assert_eq!((&cancelled.task_id, &cancelled.status), (id, &TaskStatus::Cancelled));
        }
        assert_eq!(c.get_task(&ids[0]).await.unwrap().status, TaskStatus::Cancelled);
        let err = rpc_error(c.cancel_task(&ids[0]).await.unwrap_err());
        assert!(err.message.contains("terminal status"), "{err:?}");

        let missing = "no-such-task";
        let err = rpc_error(c.get_task(missing).await.unwrap_err());
        assert_eq!(err.code, error_code::INVALID_PARAMS);
        assert!(err.message.contains("Task not found"), "{err:?}");
        let err =
            c.task_result::<CallToolResult>(missing, RequestOptions::default()).await.unwrap_err();
        assert!(rpc_error(err).message.contains(missing));
        c.close().await.unwrap();
    })
    .await;
}

/// One `#[tokio::test]` per test of [`everything`](crate::interop::everything),
/// each over the [`Connect`](crate::interop::Connect) that `$server`
/// makes (evaluated once per test).
#[macro_export]
macro_rules! everything_tests {
    ($server:expr) => {
        $crate::everything_tests!(@each $server;
            handshake_tools_echo_and_sum,
            typed_and_structured_tool_results,
            long_running_tool_reports_progress,
            a_spawned_call_is_cancelled_and_the_session_goes_on,
            resources_pages_templates_and_reads,
            subscriptions_bring_updates_until_unsubscribed,
            prompts_and_completion,
            log_level_decides_what_the_server_logs,
            static_roots_reach_the_server,
            changed_roots_are_fetched_again,
            sampling_answers_reach_the_tool,
            elicitation_answers_reach_the_tool,
            a_tool_call_as_a_task_asks_for_input_and_completes,
            tasks_are_listed_by_page_and_cancelled,
        );
    };
    (@each $server:expr; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                let server = $server;
                $crate::interop::everything::$test(&server).await
            }
        )*
    };
}
