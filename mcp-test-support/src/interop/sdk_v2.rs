//! Interop in the stateless era (2026-07-28): the client against a server
//! written with the official TypeScript SDK v2 (`@modelcontextprotocol/server`,
//! `xtask/interop/ts-server.mjs`), a peer nobody in this project wrote the
//! protocol code of. The client probes with `server/discover` and must land
//! in the stateless era; the server's `input_required` results
//! (elicitation, sampling, roots) are fulfilled by the host's handlers
//! inside `call_tool`, `read_resource` and `get_prompt`. The same server
//! also serves the handshake era (the SDK's legacy leg): a client pinned to
//! it is answered there.
//!
//! [`sdk_v2_tests!`](crate::sdk_v2_tests) runs every test over a
//! [`Connect`] to the server (the script's `stdio` or `http` mode).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_peer::{Client, EraChoice, Handlers, TransportError as _};
use mcp_proto::ProtocolVersion;
use mcp_proto::client::{ClientError, ServerNotification, StaticRoots};
use mcp_proto::jsonrpc::error_code;
use mcp_proto::types::{
    ContentBlock, ElicitRequestParams, ElicitResult, ResourceContents, Root, SubscriptionFilter,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Connect, Over, form_messages, last_texts};
use crate::{Model, Seen, User, bounded, next_matching, text};

/// How long to wait for one notification.
const NOTIFICATION_LIMIT: Duration = Duration::from_secs(10);
/// The model the sampling handler claims to be, and what it answers.
const MODEL: &str = "interop-model-7";
const REPLY: &str = "Forty-two, said the interop model.";
/// What the user types into every form, by field.
const NAME: &str = "Ada Lovelace";
const PASSWORD: &str = "open sesame";
const SIGNATURE: &str = "A. L.";

/// The name the clients give the server.
pub const SERVER_NAME: &str = "ts-sdk-v2";

/// A client of `server` with these handlers, in this era, the era opened.
async fn start<S: Connect>(server: &S, handlers: Handlers, era: EraChoice) -> Client<S::Transport> {
    let c = server.connect(|o| configure(o, handlers, era)).await;
    c.initialize().await.expect("the era is settled");
    c
}

fn configure(options: &mut mcp_peer::ClientOptions, handlers: Handlers, era: EraChoice) {
    options.request_timeout = Duration::from_secs(20);
    options.handlers = handlers;
    options.era = era;
}

/// A user who fills in whichever field a form asks for, and opens no URL.
fn fill_in(params: &ElicitRequestParams) -> ElicitResult {
    match params {
        ElicitRequestParams::Form(f) => {
            let fields = &f.requested_schema.properties;
            if fields.contains_key("name") {
                ElicitResult::accept([("name", NAME)])
            } else if fields.contains_key("password") {
                ElicitResult::accept([("password", PASSWORD)])
            } else if fields.contains_key("signature") {
                ElicitResult::accept([("signature", SIGNATURE)])
            } else {
                ElicitResult::decline()
            }
        }
        ElicitRequestParams::Url(_) => ElicitResult::decline(),
    }
}

/// Handlers for every kind of input request (a user who fills in forms, a
/// model that always gives [`REPLY`], two roots), and what they were asked.
fn host() -> (Handlers, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let user = User { seen: seen.clone(), answer: Box::new(fill_in), url_mode: false };
    let model = Model { seen: seen.clone(), model: MODEL.into(), reply: REPLY.into() };
    let roots = StaticRoots(vec![
        Root::new("file:///projects/interop-a").with_name("A"),
        Root::new("file:///projects/interop-b"),
    ]);
    let handlers = Handlers {
        elicitation: Some(Arc::new(user)),
        sampling: Some(Arc::new(model)),
        roots: Some(Arc::new(roots)),
    };
    (handlers, seen)
}

#[derive(Debug, Deserialize, PartialEq)]
struct Sum {
    sum: f64,
    expression: String,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Era {
    era: String,
}

/// The probe lands in the stateless era (no state kept by the transport);
/// discovery's server info, capabilities and instructions; tools listed
/// with an output schema, called raw and typed; input validation is a tool
/// error.
pub async fn the_probe_lands_in_the_stateless_era_and_tools_answer<S: Connect>(server: &S) {
    bounded(async {
        let c = start(server, Handlers::default(), EraChoice::Auto).await;
        assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        assert!(c.protocol_version().unwrap().is_modern());
        server.assert_stateless(&c).await;
        let info = c.server_info().expect("serverInfo from server/discover");
        assert_eq!(info.name, "ts-sdk-v2-interop");
        let caps = c.server_capabilities().unwrap();
        assert!(caps.tools.is_some() && caps.resources.is_some() && caps.prompts.is_some());
        assert_eq!(
            c.instructions().as_deref(),
            Some("An interop peer written with the TypeScript SDK v2.")
        );

        let tools = c.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in
            ["echo", "add", "greet", "ask-model", "list-roots", "interview", "era", "touch-tools"]
        {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }
        let add = tools.iter().find(|t| t.name == "add").unwrap();
        let schema =
            serde_json::to_value(add.output_schema.as_ref().expect("outputSchema")).unwrap();
        assert_eq!(schema["required"], json!(["sum", "expression"]), "{schema}");

        let echo = c.call_tool("echo", json!({"message": "hello, SDK v2"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: hello, SDK v2");

        // Structured output, raw and typed (to a struct, and to a value
        // that must be exactly the structured content).
        let raw = c.call_tool("add", json!({"a": 19, "b": 23})).await.unwrap();
        assert_eq!(raw.structured_content, Some(json!({"sum": 42, "expression": "19 + 23"})));
        assert_eq!(raw.is_error, None);
        let sum: Sum = c.call_tool_as("add", json!({"a": 0.5, "b": 2})).await.unwrap();
        assert_eq!(sum, Sum { sum: 2.5, expression: "0.5 + 2".into() });
        let sum: Value = c.call_tool_as("add", json!({"a": 0.5, "b": 2})).await.unwrap();
        assert_eq!(sum, json!({"sum": 2.5, "expression": "0.5 + 2"}));
        // The server's input validation is a tool error, not a protocol one.
        let bad = c.call_tool("add", json!({"a": "one", "b": 2})).await.unwrap();
        assert_eq!(bad.is_error, Some(true), "{bad:?}");

        let era: Era = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era.era, "modern");
        let era: Value = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era, json!({"era": "modern"}));
        c.close().await.unwrap();
    })
    .await;
}

/// Elicitation, sampling and roots asked for in `input_required` results
/// are fulfilled by the handlers, over two rounds when the server needs
/// them.
pub async fn input_required_rounds_are_fulfilled_by_the_handlers<S: Connect>(server: &S) {
    bounded(async {
        let (handlers, seen) = host();
        let c = start(server, handlers, EraChoice::Auto).await;
        assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2026_07_28));

        let greeting = c.call_tool("greet", ()).await.unwrap();
        assert_eq!(text(&greeting), format!("Hello, {NAME}!"));
        assert_eq!(form_messages(&seen.elicitation()), ["What is your name?"]);

        let answer =
            c.call_tool("ask-model", json!({"question": "Six times seven?"})).await.unwrap();
        assert_eq!(text(&answer), format!("{MODEL} says: {REPLY}"));
        assert_eq!(last_texts(&seen.sampling()), ["Six times seven?"]);

        let listed = c.call_tool("list-roots", ()).await.unwrap();
        assert_eq!(text(&listed), "file:///projects/interop-a\nfile:///projects/interop-b");

        // Two rounds, the second one carrying the server's requestState.
        let interview = c.call_tool("interview", ()).await.unwrap();
        assert_eq!(interview.is_error, None, "{interview:?}");
        assert_eq!(text(&interview), format!("{NAME}: {REPLY}"));
        assert_eq!(
            form_messages(&seen.elicitation()),
            ["What is your name?", "Whom shall we ask about?"]
        );
        assert_eq!(
            last_texts(&seen.sampling()),
            ["Six times seven?".to_owned(), format!("A fact about {NAME}?")]
        );
        c.close().await.unwrap();
    })
    .await;
}

/// Resources and prompts, read and got with and without an input round.
pub async fn resources_and_prompts_with_and_without_input_rounds<S: Connect>(server: &S) {
    bounded(async {
        let (handlers, seen) = host();
        let c = start(server, handlers, EraChoice::Auto).await;

        let resources = c.list_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["interop://readme", "interop://secret"]);

        let readme = c.read_resource("interop://readme").await.unwrap();
        match readme.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.uri, "interop://readme");
                assert_eq!(t.text, "Served by the TypeScript SDK v2.");
                assert_eq!(t.mime_type.as_deref(), Some("text/plain"));
            }
            other => panic!("{other:?}"),
        }
        let secret = c.read_resource("interop://secret").await.unwrap();
        match secret.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.text, format!("The secret, for {PASSWORD}."));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(form_messages(&seen.elicitation()), ["Password?"]);

        let prompts = c.list_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["review", "signed"]);
        let review = prompts.iter().find(|p| p.name == "review").unwrap();
        let args = review.arguments.as_deref().unwrap_or_default();
        assert!(args.iter().any(|a| a.name == "topic" && a.required == Some(true)), "{args:?}");

        let topic = BTreeMap::from([("topic".to_owned(), "the Analytical Engine".to_owned())]);
        let got = c.get_prompt("review", Some(topic)).await.unwrap();
        assert_eq!(got.description.as_deref(), Some("A review of the Analytical Engine"));
        match got.messages.as_slice() {
            [m] => match &m.content {
                ContentBlock::Text(t) => {
                    assert_eq!(t.text, "Please review the Analytical Engine.");
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let signed = c.get_prompt("signed", None).await.unwrap();
        match signed.messages.as_slice() {
            [m] => match &m.content {
                ContentBlock::Text(t) => assert_eq!(t.text, format!("Signed by {SIGNATURE}.")),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        assert_eq!(form_messages(&seen.elicitation()), ["Password?", "Sign here"]);
        c.close().await.unwrap();
    })
    .await;
}

/// Without a handler the server refuses to ask (-32021) and the connection
/// goes on; more rounds than allowed fail the request.
pub async fn an_undeclared_capability_and_too_many_rounds_are_typed_errors<S: Connect>(server: &S) {
    bounded(async {
        // No handlers: the request's _meta declares no elicitation, and the
        // server refuses to ask for one (-32021).
        let c = start(server, Handlers::default(), EraChoice::Auto).await;
        let err = c.call_tool("greet", ()).await.unwrap_err();
        match err.protocol_error() {
            Some(ClientError::MissingClientCapability { error, .. }) => {
                assert_eq!(error.code, error_code::MISSING_CLIENT_CAPABILITY);
            }
            _ => panic!("expected -32021, got {err:?}"),
        }
        // The connection goes on.
        let echo = c.call_tool("echo", json!({"message": "still here"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: still here");
        c.close().await.unwrap();

        // One round allowed; the interview takes two.
        let (handlers, seen) = host();
        let c = server
            .connect(|o| {
                configure(o, handlers, EraChoice::Auto);
                o.max_input_rounds = 1;
            })
            .await;
        let err = c.call_tool("interview", ()).await.unwrap_err();
        match err.protocol_error() {
            Some(ClientError::TooManyInputRounds { rounds, .. }) => assert_eq!(*rounds, 1),
            _ => panic!("expected too many rounds, got {err:?}"),
        }
        assert_eq!(seen.elicitation().len(), 1);
        c.close().await.unwrap();
    })
    .await;
}

/// `subscriptions/listen` hears the tool list change; dropping the
/// subscription ends it and the connection goes on.
pub async fn a_listen_stream_hears_the_tool_list_change<S: Connect>(server: &S) {
    bounded(async {
        let c = start(server, Handlers::default(), EraChoice::Auto).await;
        let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
        let mut subscription = c.listen(filter).await.unwrap();
        assert_eq!(subscription.granted().tools_list_changed, Some(true));
        assert!(subscription.refused().is_empty());
        let touched = c.call_tool("touch-tools", ()).await.unwrap();
        assert_eq!(text(&touched), "announced");
        let heard = tokio::time::timeout(NOTIFICATION_LIMIT, subscription.recv()).await;
        assert_eq!(heard.expect("in time"), Some(ServerNotification::ToolListChanged));
        // Dropping the subscription ends it; the connection goes on.
        drop(subscription);
        let echo = c.call_tool("echo", json!({"message": "after"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: after");
        c.close().await.unwrap();
    })
    .await;
}

/// A client pinned to the handshake era is answered there. Over stdio the
/// SDK turns a handler's `input_required` result into real server-to-client
/// requests and sends unsolicited list changes; over HTTP its legacy leg is
/// stateless (each POST served by a fresh instance that never saw
/// `initialize`), so it answers such a tool with a tool error and the
/// handlers are never asked.
pub async fn pinned_to_the_handshake_era_the_same_server_answers_there<S: Connect>(server: &S) {
    bounded(async {
        let (handlers, seen) = host();
        let c = start(server, handlers, EraChoice::Legacy).await;
        let version = c.protocol_version().unwrap();
        assert!(!version.is_modern(), "{version:?}");
        assert_eq!(version, ProtocolVersion::LATEST_LEGACY);
        assert_eq!(c.server_info().unwrap().name, "ts-sdk-v2-interop");
        let era: Era = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era.era, "legacy");
        let era: Value = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era, json!({"era": "legacy"}));

        match server.over() {
            Over::Stdio => {
                let greeting = c.call_tool("greet", ()).await.unwrap();
                assert_eq!(text(&greeting), format!("Hello, {NAME}!"));
                let interview = c.call_tool("interview", ()).await.unwrap();
                assert_eq!(text(&interview), format!("{NAME}: {REPLY}"));
                assert_eq!(
                    form_messages(&seen.elicitation()),
                    ["What is your name?", "Whom shall we ask about?"]
                );
                assert_eq!(last_texts(&seen.sampling()), [format!("A fact about {NAME}?")]);

                // Unsolicited list changes, as the handshake era has them.
                let mut notifications = c.notifications();
                c.call_tool("touch-tools", ()).await.unwrap();
                next_matching(&mut notifications, "tools/list_changed", NOTIFICATION_LIMIT, |n| {
                    matches!(n, ServerNotification::ToolListChanged).then_some(())
                })
                .await;
            }
            Over::StreamableHttp | Over::HttpSse => {
                // No session id, GET is 405.
                server.assert_stateless(&c).await;
                let greeting = c.call_tool("greet", ()).await.unwrap();
                assert_eq!(greeting.is_error, Some(true), "{greeting:?}");
                assert!(
                    text(&greeting).contains(
                        "per-request legacy serving cannot receive server-to-client requests"
                    ),
                    "{}",
                    text(&greeting)
                );
                assert!(seen.elicitation().is_empty());
                assert!(seen.sampling().is_empty());
            }
        }

        c.ping().await.unwrap();
        match c.call_tool("echo", json!({"message": "legacy"})).await.unwrap().content.as_slice() {
            [ContentBlock::Text(t)] => assert_eq!(t.text, "Echo: legacy"),
            other => panic!("{other:?}"),
        }
        c.close().await.unwrap();
    })
    .await;
}

/// One `#[tokio::test]` per test of [`sdk_v2`](crate::interop::sdk_v2),
/// each over the [`Connect`](crate::interop::Connect) that `$server`
/// makes (evaluated once per test).
#[macro_export]
macro_rules! sdk_v2_tests {
    ($server:expr) => {
        $crate::sdk_v2_tests!(@each $server;
            the_probe_lands_in_the_stateless_era_and_tools_answer,
            input_required_rounds_are_fulfilled_by_the_handlers,
            resources_and_prompts_with_and_without_input_rounds,
            an_undeclared_capability_and_too_many_rounds_are_typed_errors,
            a_listen_stream_hears_the_tool_list_change,
            pinned_to_the_handshake_era_the_same_server_answers_there,
        );
    };
    (@each $server:expr; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                let server = $server;
                $crate::interop::sdk_v2::$test(&server).await
            }
        )*
    };
}
