//! Input rounds of the stateless era (2026-07-28): through the handlers,
//! the state echoed; and the bounds on what a server may ask of the host:
//! the number of input requests (counted before any is decoded or handed
//! to a handler), the size of the answers built, and the rounds a task may
//! take.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_peer::memory::{self, MemoryError, MemoryTransport};
use mcp_peer::{Client, ClientOptions};
use mcp_proto::client::{BoxFuture, ClientError, ElicitationHandler, SamplingHandler};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};
use mcp_testkit::ServeEra;
use serde_json::{Value, json};

use crate::common::{Ada, Pair, Seen, modern_config, pair_with, received_log, text};

/// A model that always says "hello".
struct Hello;

impl SamplingHandler for Hello {
    fn create_message(
        &self,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async { Ok(CreateMessageResult::text("test-model", "hello")) })
    }
}

#[tokio::test(start_paused = true)]
async fn input_required_rounds_go_through_the_handlers_and_echo_the_state() {
    let mut o = ClientOptions::new("testkit");
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let done = client.call_tool("ask_twice", ()).await.unwrap();
    assert_eq!(text(&done), "Ada: hello");
    let once = client.call_tool("retry_once", ()).await.unwrap();
    assert!(text(&once).starts_with("retried with retry_once:"), "{}", text(&once));
    let log = received_log(&client).await;
    let calls: Vec<&Value> = log.iter().filter(|r| r["method"] == "tools/call").collect();
    // ask_twice: three attempts with new ids; the state of each answer is
    // echoed exactly on the next, and never sent when there was none.
    assert!(calls[0].get("requestState").is_none(), "{}", calls[0]);
    assert!(calls[0].get("inputResponses").is_none(), "{}", calls[0]);
    assert_eq!(calls[1]["requestState"], "ask_twice:1");
    assert_eq!(calls[1]["inputResponses"]["name"]["content"]["name"], "Ada");
    assert_eq!(calls[2]["requestState"], "ask_twice:2:Ada");
    assert!(calls[2]["inputResponses"].get("name").is_none(), "{}", calls[2]);
    assert_eq!(calls[2]["inputResponses"]["greeting"]["content"]["text"], "hello");
    let ids: std::collections::HashSet<String> =
        calls.iter().map(|r| r["id"].to_string()).collect();
    assert_eq!(ids.len(), calls.len(), "every attempt has its own id");
    // retry_once: only a state, no input requests: echoed, no inputResponses.
    assert!(calls[4]["requestState"].as_str().unwrap().starts_with("retry_once:"));
    assert!(calls[4].get("inputResponses").is_none(), "{}", calls[4]);
}

#[tokio::test(start_paused = true)]
async fn input_rounds_are_bounded_and_missing_capabilities_are_typed() {
    let mut o = ClientOptions::new("testkit");
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    o.max_input_rounds = 1;
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let err = client.call_tool("ask_twice", ()).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::TooManyInputRounds { rounds: 1, .. })),
        "{err:?}"
    );
    // No roots handler: roots are not declared, and the server says so.
    let err = client.call_tool("ask", json!({"what": "roots"})).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::MissingClientCapability { required, .. }) => {
            assert!(required.unwrap().get("roots").is_some());
        }
        other => panic!("{other:?}"),
    }
}

/// An elicitation handler that counts its calls and answers with a name
/// of `size` bytes.
struct Counting(Arc<AtomicUsize>, usize);

impl ElicitationHandler for Counting {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let name = "x".repeat(self.1);
        Box::pin(async move { Ok(ElicitResult::accept([("name", name)])) })
    }
}

/// A stateless-era server in memory answering every request but
/// `server/discover` with `answer(method, n)`, `n` counting the requests
/// of that method; the client counts its elicitations in the returned
/// counter.
fn asking_server(
    mut options: ClientOptions,
    answer_size: usize,
    answer: impl Fn(&str, usize) -> String + Send + 'static,
) -> (Client<MemoryTransport>, Seen, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    options.handlers.elicitation = Some(Arc::new(Counting(asked.clone(), answer_size)));
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut counts = std::collections::HashMap::<String, usize>::new();
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(json!({"method": m["method"], "id": m["id"]}));
            let Some(id) = m.get("id").cloned() else { continue };
            let method = m["method"].as_str().unwrap_or_default().to_owned();
            let result = if method == "server/discover" {
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}})
                .to_string()
            } else {
                let n = counts.entry(method.clone()).or_default();
                *n += 1;
                answer(&method, *n)
            };
            let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            end.send(reply.as_bytes());
        }
    });
    (client, seen, asked)
}

/// `count` elicitation requests keyed `{prefix}{i}`, as JSON members.
fn input_requests(prefix: &str, count: usize) -> String {
    let one = r#"{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}"#;
    let members: Vec<String> = (0..count).map(|i| format!(r#""{prefix}{i}":{one}"#)).collect();
    format!("{{{}}}", members.join(","))
}

fn methods_seen(seen: &Seen) -> Vec<String> {
    seen.lock().unwrap().iter().map(|m| m["method"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_input_requests_is_refused_before_any_handler_runs() {
    // One answer of about 16 MB holding 440,000 input requests.
    let flood = format!(
        r#"{{"resultType":"input_required","inputRequests":{},"requestState":"s"}}"#,
        input_requests("k", 440_000)
    );
    assert!(flood.len() > 16_000_000);
    let (client, seen, asked) =
        asking_server(ClientOptions::new("flood"), 3, move |_, _| flood.clone());
    let err = client.call_tool("ask", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::TooManyInputRequests {
                count: 440_000,
                max: 64,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert_eq!(methods_seen(&seen), ["server/discover", "tools/call"]);
}

#[tokio::test(start_paused = true)]
async fn the_answers_of_an_input_round_are_bounded_in_size() {
    let mut o = ClientOptions::new("big answers");
    o.max_input_answer_bytes = 1000;
    let ten =
        format!(r#"{{"resultType":"input_required","inputRequests":{}}}"#, input_requests("k", 10));
    let (client, seen, asked) = asking_server(o, 400, move |_, n| match n {
        1 => ten.clone(),
        _ => r#"{"resultType":"complete","content":[]}"#.to_owned(),
    });
    let err = client.call_tool("ask", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::InputAnswersTooLarge { max_bytes: 1000, .. })
        ),
        "{err:?}"
    );
    // Each answer is over 400 bytes: the third one went over, and no
    // handler was asked after it; the request was not sent again.
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    assert_eq!(methods_seen(&seen), ["server/discover", "tools/call"]);
}

/// A task that asks for new input at every poll (`inputs` requests each
/// time), as a `tasks/get` answer.
fn asking_task(n: usize, inputs: usize) -> String {
    format!(
        r#"{{"resultType":"complete","taskId":"t-1","status":"input_required","createdAt":"2026-12-01T00:00:00Z","lastUpdatedAt":"2026-12-01T00:00:00Z","pollIntervalMs":100,"inputRequests":{}}}"#,
        input_requests(&format!("r{n}-"), inputs)
    )
}

fn task_options(rounds: usize) -> ClientOptions {
    let mut o =
        ClientOptions::new("tasks").with_extension(mcp_proto::types::TASKS_EXTENSION, json!({}));
    o.max_input_rounds = rounds;
    o
}

#[tokio::test(start_paused = true)]
async fn a_task_that_keeps_asking_for_input_is_bounded_by_the_round_limit() {
    let (client, seen, asked) = asking_server(task_options(3), 3, |method, n| match method {
        "tools/call" => {
            asking_task(0, 1).replacen(r#""resultType":"complete""#, r#""resultType":"task""#, 1)
        }
        "tasks/get" => asking_task(n, 1),
        _ => r#"{"resultType":"complete"}"#.to_owned(),
    });
    let started = tokio::time::Instant::now();
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::TooManyInputRounds { rounds: 3, .. })),
        "{err:?}"
    );
    // Three rounds answered, then refused: long before the task's own
    // limit (ten minutes).
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The task abandoned is cancelled.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let methods = methods_seen(&seen);
    assert_eq!(methods.iter().filter(|m| *m == "tasks/update").count(), 3, "{methods:?}");
    assert_eq!(methods.last().map(String::as_str), Some("tasks/cancel"), "{methods:?}");
}

#[tokio::test(start_paused = true)]
async fn a_task_status_with_too_many_input_requests_is_refused_and_the_task_cancelled() {
    let (client, seen, asked) = asking_server(task_options(8), 3, |method, n| match method {
        "tools/call" => {
            asking_task(0, 1).replacen(r#""resultType":"complete""#, r#""resultType":"task""#, 1)
        }
        "tasks/get" => asking_task(n, 65),
        _ => r#"{"resultType":"complete"}"#.to_owned(),
    });
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Protocol(ClientError::TooManyInputRequests { count: 65, max: 64, .. })
        ),
        "{err:?}"
    );
    // Only the first status's one request was answered.
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(methods_seen(&seen).last().map(String::as_str), Some("tasks/cancel"));
}
