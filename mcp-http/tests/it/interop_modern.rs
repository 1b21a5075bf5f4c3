//! Interop in the stateless era (2026-07-28) over Streamable HTTP: the HTTP
//! client against a server written with the official TypeScript SDK v2
//! (`@modelcontextprotocol/server`, `xtask/interop/ts-server.mjs` in its
//! `http` mode: the SDK's `createMcpHandler` on `/mcp`), on a loopback port
//! the server picks. The client probes with `server/discover` and must land
//! in the stateless era: no session, no GET stream, every request its own
//! POST; the server's `input_required` results (elicitation, sampling,
//! roots) are fulfilled by the host's handlers inside `call_tool`,
//! `read_resource` and `get_prompt`. The SDK serves the handshake era on
//! the same endpoint statelessly (its legacy leg): a client pinned to it is
//! answered there.
//!
//! `cargo xtask interop` installs the pinned SDK and runs this file with
//! `MCP_TS_SERVER_JS` set to the script's installed copy.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_http::{Error, HttpClient, HttpOptions};
use mcp_peer::EraChoice;
use mcp_proto::ProtocolVersion;
use mcp_proto::client::{
    BoxFuture, ClientError, ElicitationHandler, Handlers, SamplingHandler, ServerNotification,
    StaticRoots,
};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::render_tool_result;
use mcp_proto::types::SubscriptionFilter;
use mcp_proto::types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ResourceContents, Root, SamplingMessageContentBlock,
    StopReason,
};
use serde_json::{Value, json};

/// How long the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(15);
/// How long one test may take in all.
const TEST_LIMIT: Duration = Duration::from_secs(60);
/// The model the sampling handler claims to be, and what it answers.
const MODEL: &str = "interop-model-7";
const REPLY: &str = "Forty-two, said the interop model.";
/// What the user types into every form, by field.
const NAME: &str = "Ada Lovelace";
const PASSWORD: &str = "open sesame";
const SIGNATURE: &str = "A. L.";

/// The node process; killed when dropped (a failing test too).
struct TsServer {
    child: Child,
    url: String,
}

impl Drop for TsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TsServer {
    /// Starts `node $MCP_TS_SERVER_JS http` on a port of its choosing and
    /// waits for the line that says where it listens.
    fn start() -> TsServer {
        let js = std::env::var("MCP_TS_SERVER_JS").expect(
            "MCP_TS_SERVER_JS must point at the installed ts-server.mjs: run `cargo xtask interop`",
        );
        let mut child = Command::new("node")
            .arg(js)
            .arg("http")
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep reading so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let mut server = TsServer { child, url: String::new() };
        match rx.recv_timeout(STARTUP) {
            Ok(line) => {
                let url = line
                    .strip_prefix("listening on ")
                    .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"));
                server.url = url.to_owned();
            }
            Err(_) => {
                let status = server.child.try_wait();
                panic!("the server did not listen within {STARTUP:?} ({status:?})");
            }
        }
        server
    }
}

fn options(handlers: Handlers, era: EraChoice) -> HttpOptions {
    let mut options = HttpOptions::new("ts-sdk-v2");
    options.request_timeout = Duration::from_secs(20);
    options.handlers = handlers;
    options.era = era;
    options
}

/// A client of `server`, its era settled.
async fn connect(server: &TsServer, handlers: Handlers, era: EraChoice) -> HttpClient {
    let c = HttpClient::connect(&server.url, options(handlers, era)).expect("a valid endpoint");
    c.initialize().await.expect("the era is settled");
    c
}

/// A server and a client of it.
async fn start(handlers: Handlers, era: EraChoice) -> (TsServer, HttpClient) {
    let server = TsServer::start();
    let c = connect(&server, handlers, era).await;
    (server, c)
}

/// Runs a test body under [`TEST_LIMIT`], so no await can hang the suite.
async fn bounded(body: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_LIMIT, body)
        .await
        .unwrap_or_else(|_| panic!("the test did not finish within {TEST_LIMIT:?}"));
}

fn text(result: &CallToolResult) -> String {
    render_tool_result(result).text
}

/// What the host's handlers were asked.
#[derive(Default)]
struct Seen {
    /// The text of each sampling request's last message.
    sampling: Mutex<Vec<String>>,
    /// The message of each elicitation.
    elicitation: Mutex<Vec<String>>,
}

/// A model that always gives [`REPLY`].
struct Model(Arc<Seen>);

impl SamplingHandler for Model {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        let asked = params
            .messages
            .last()
            .and_then(|m| match m.content.blocks().first() {
                Some(SamplingMessageContentBlock::Text(t)) => Some(t.text.clone()),
                _ => None,
            })
            .unwrap_or_default();
        self.0.sampling.lock().unwrap().push(asked);
        Box::pin(async {
            Ok(CreateMessageResult::text(MODEL, REPLY).with_stop_reason(StopReason::EndTurn))
        })
    }
}

/// A user who fills in whichever field a form asks for.
struct User(Arc<Seen>);

impl ElicitationHandler for User {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        let result = match &params {
            ElicitRequestParams::Form(f) => {
                self.0.elicitation.lock().unwrap().push(f.message.clone());
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
        };
        Box::pin(async move { Ok(result) })
    }
}

fn roots() -> StaticRoots {
    StaticRoots(vec![
        Root::new("file:///projects/interop-a").with_name("A"),
        Root::new("file:///projects/interop-b"),
    ])
}

/// Handlers for every kind of input request, and what they were asked.
fn host() -> (Handlers, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let handlers = Handlers {
        elicitation: Some(Arc::new(User(seen.clone()))),
        sampling: Some(Arc::new(Model(seen.clone()))),
        roots: Some(Arc::new(roots())),
    };
    (handlers, seen)
}

#[tokio::test]
async fn the_probe_lands_in_the_stateless_era_and_tools_answer() {
    bounded(async {
        let (_server, c) = start(Handlers::default(), EraChoice::Auto).await;
        assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        assert!(c.protocol_version().unwrap().is_modern());
        // Stateless: no session, no GET stream, the HTTP transport of today.
        assert!(!c.has_session());
        assert!(!c.is_legacy());
        assert!(!c.open_event_stream().await.unwrap());
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

        // Structured output, raw and typed.
        let raw = c.call_tool("add", json!({"a": 19, "b": 23})).await.unwrap();
        assert_eq!(raw.structured_content, Some(json!({"sum": 42, "expression": "19 + 23"})));
        assert_eq!(raw.is_error, None);
        let sum: Value = c.call_tool_as("add", json!({"a": 0.5, "b": 2})).await.unwrap();
        assert_eq!(sum, json!({"sum": 2.5, "expression": "0.5 + 2"}));
        // The server's input validation is a tool error, not a protocol one.
        let bad = c.call_tool("add", json!({"a": "one", "b": 2})).await.unwrap();
        assert_eq!(bad.is_error, Some(true), "{bad:?}");

        let era: Value = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era, json!({"era": "modern"}));
        c.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn input_required_rounds_are_fulfilled_by_the_handlers() {
    bounded(async {
        let (handlers, seen) = host();
        let (_server, c) = start(handlers, EraChoice::Auto).await;
        assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2026_07_28));

        let greeting = c.call_tool("greet", ()).await.unwrap();
        assert_eq!(text(&greeting), format!("Hello, {NAME}!"));
        assert_eq!(*seen.elicitation.lock().unwrap(), ["What is your name?"]);

        let answer =
            c.call_tool("ask-model", json!({"question": "Six times seven?"})).await.unwrap();
        assert_eq!(text(&answer), format!("{MODEL} says: {REPLY}"));
        assert_eq!(*seen.sampling.lock().unwrap(), ["Six times seven?"]);

        let listed = c.call_tool("list-roots", ()).await.unwrap();
        assert_eq!(text(&listed), "file:///projects/interop-a\nfile:///projects/interop-b");

        // Two rounds, the second one carrying the server's requestState.
        let interview = c.call_tool("interview", ()).await.unwrap();
        assert_eq!(interview.is_error, None, "{interview:?}");
        assert_eq!(text(&interview), format!("{NAME}: {REPLY}"));
        assert_eq!(
            *seen.elicitation.lock().unwrap(),
            ["What is your name?", "Whom shall we ask about?"]
        );
        assert_eq!(
            *seen.sampling.lock().unwrap(),
            ["Six times seven?".to_owned(), format!("A fact about {NAME}?")]
        );
        c.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn resources_and_prompts_with_and_without_input_rounds() {
    bounded(async {
        let (handlers, seen) = host();
        let (_server, c) = start(handlers, EraChoice::Auto).await;

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
        assert_eq!(*seen.elicitation.lock().unwrap(), ["Password?"]);

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
        assert_eq!(*seen.elicitation.lock().unwrap(), ["Password?", "Sign here"]);
        c.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn an_undeclared_capability_and_too_many_rounds_are_typed_errors() {
    bounded(async {
        // No handlers: the request's _meta declares no elicitation, and the
        // server refuses to ask for one (-32021).
        let (server, c) = start(Handlers::default(), EraChoice::Auto).await;
        let err = c.call_tool("greet", ()).await.unwrap_err();
        match &err {
            Error::Protocol {
                source: ClientError::MissingClientCapability { error, .. }, ..
            } => {
                assert_eq!(error.code, error_code::MISSING_CLIENT_CAPABILITY);
            }
            other => panic!("expected -32021, got {other:?}"),
        }
        // The connection goes on.
        let echo = c.call_tool("echo", json!({"message": "still here"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: still here");
        c.close().await.unwrap();

        // One round allowed; the interview takes two.
        let (handlers, seen) = host();
        let mut o = options(handlers, EraChoice::Auto);
        o.max_input_rounds = 1;
        let c = HttpClient::connect(&server.url, o).unwrap();
        let err = c.call_tool("interview", ()).await.unwrap_err();
        match &err {
            Error::Protocol { source: ClientError::TooManyInputRounds { rounds, .. }, .. } => {
                assert_eq!(*rounds, 1);
            }
            other => panic!("expected too many rounds, got {other:?}"),
        }
        assert_eq!(seen.elicitation.lock().unwrap().len(), 1);
        c.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_listen_stream_hears_the_tool_list_change() {
    bounded(async {
        let (_server, c) = start(Handlers::default(), EraChoice::Auto).await;
        let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
        let mut subscription = c.listen(filter).await.unwrap();
        assert_eq!(subscription.granted().tools_list_changed, Some(true));
        assert!(subscription.refused().is_empty());
        let touched = c.call_tool("touch-tools", ()).await.unwrap();
        assert_eq!(text(&touched), "announced");
        let heard = tokio::time::timeout(Duration::from_secs(10), subscription.recv()).await;
        assert_eq!(heard.expect("in time"), Some(ServerNotification::ToolListChanged));
        // Dropping the subscription ends it; the connection goes on.
        drop(subscription);
        let echo = c.call_tool("echo", json!({"message": "after"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: after");
        c.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn pinned_to_the_handshake_era_the_same_endpoint_answers_statelessly() {
    bounded(async {
        let (handlers, seen) = host();
        let (_server, c) = start(handlers, EraChoice::Legacy).await;
        let version = c.protocol_version().unwrap();
        assert!(!version.is_modern(), "{version:?}");
        assert_eq!(version, ProtocolVersion::LATEST_LEGACY);
        assert_eq!(c.server_info().unwrap().name, "ts-sdk-v2-interop");
        // The SDK's legacy leg is stateless: no session id, GET is 405.
        assert!(!c.has_session());
        assert!(!c.is_legacy());
        assert!(!c.open_event_stream().await.unwrap());
        let era: Value = c.call_tool_as("era", ()).await.unwrap();
        assert_eq!(era, json!({"era": "legacy"}));
        c.ping().await.unwrap();
        match c.call_tool("echo", json!({"message": "legacy"})).await.unwrap().content.as_slice() {
            [ContentBlock::Text(t)] => assert_eq!(t.text, "Echo: legacy"),
            other => panic!("{other:?}"),
        }
        // A handler's input_required result cannot become a server-to-client
        // request there (each POST is served by a fresh instance that never
        // saw initialize): the SDK answers with a tool error, and the host's
        // handlers are never asked.
        let greeting = c.call_tool("greet", ()).await.unwrap();
        assert_eq!(greeting.is_error, Some(true), "{greeting:?}");
        assert!(
            text(&greeting)
                .contains("per-request legacy serving cannot receive server-to-client requests"),
            "{}",
            text(&greeting)
        );
        assert!(seen.elicitation.lock().unwrap().is_empty());
        assert!(seen.sampling.lock().unwrap().is_empty());
        c.close().await.unwrap();
    })
    .await;
}
