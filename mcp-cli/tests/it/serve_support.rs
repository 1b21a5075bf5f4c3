//! What the `mcpc serve` tests share: a host (the stdio client, spawning the
//! built `mcpc serve`) in either era, the host's answers to elicitation and
//! sampling, the testkit as an upstream server, and bounded waits.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client_stdio::{ServerCommand, StdioClient, StdioOptions};
use mcp_peer::EraChoice;
use mcp_proto::ErrorObject;
use mcp_proto::client::{
    BoxFuture, ElicitationHandler, RequestOptions, SamplingHandler, ServerNotification,
};
use mcp_proto::types::{
    CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, JsonObject,
};
use serde_json::{Value, json};

use crate::run::Sandbox;

pub(crate) fn testkit() -> String {
    mcp_testkit::binary_path().to_string_lossy().into_owned()
}

/// The host's side of an elicitation: the user accepts with a name.
pub(crate) struct Ada;

impl ElicitationHandler for Ada {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::accept([("name", "Ada")])) })
    }
}

/// The host's side of an elicitation: the user declines.
pub(crate) struct Declines;

impl ElicitationHandler for Declines {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::new(mcp_proto::types::ElicitAction::Decline)) })
    }
}

/// The host's side of sampling: a model that says hello.
pub(crate) struct Hello;

impl SamplingHandler for Hello {
    fn create_message(
        &self,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async {
            Ok(serde_json::from_value(json!({
                "role": "assistant", "model": "test",
                "content": {"type": "text", "text": "Hello"},
            }))
            .unwrap())
        })
    }
}

/// A host's options: speaking `era`, declaring nothing.
pub(crate) fn host_options(era: EraChoice) -> StdioOptions {
    let mut o = StdioOptions::new("bridge");
    o.discover_path = false;
    o.era = era;
    o.request_timeout = Duration::from_secs(30);
    o
}

/// A host speaking `era` to `mcpc serve ARGS` in the sandbox; it declares
/// elicitation when `elicitation` is given.
pub(crate) async fn host(
    s: &Sandbox,
    args: &[&str],
    era: EraChoice,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
) -> StdioClient {
    let mut o = host_options(era);
    o.handlers.elicitation = elicitation;
    host_with(s, args, o).await
}

/// A host with these options to `mcpc serve ARGS` in the sandbox.
pub(crate) async fn host_with(s: &Sandbox, args: &[&str], o: StdioOptions) -> StdioClient {
    let mut command = ServerCommand::new(env!("CARGO_BIN_EXE_mcpc")).arg("serve");
    command.args.extend(args.iter().map(|a| (*a).to_owned()));
    command.cwd = Some(s.dir.clone());
    for (k, v) in s.env() {
        command.env.insert(k.to_owned(), v.to_string_lossy().into_owned());
    }
    mcp_client_stdio::spawn(command, o).await.expect("mcpc serve starts")
}

pub(crate) fn args(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

pub(crate) async fn call(c: &StdioClient, tool: &str, a: Value) -> CallToolResult {
    c.call_tool_with(tool, args(a), RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// Options that count a call's progress notifications.
pub(crate) fn counting_progress() -> (Arc<Mutex<usize>>, RequestOptions) {
    let seen = Arc::new(Mutex::new(0));
    let options = RequestOptions {
        on_progress: Some({
            let seen = seen.clone();
            Arc::new(move |_| *seen.lock().unwrap() += 1)
        }),
        ..Default::default()
    };
    (seen, options)
}

pub(crate) fn server_spec(extra: &str) -> String {
    format!("{} stdio {extra}", testkit())
}

/// A configuration of the testkit twice, as `a` and `b`, with an approval
/// table and an audit log (`conf/audit.jsonl`).
pub(crate) fn two_servers(s: &Sandbox, approval: &str) {
    let tk = testkit();
    s.write(
        "conf/mcp.toml",
        &format!(
            "[mcp_client]\n[mcp_client.approval]\n{approval}\n\
             [mcp_client.audit]\npath = \"audit.jsonl\"\n\
             [[mcp_client.servers]]\nname = \"a\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n\
             [[mcp_client.servers]]\nname = \"b\"\ncommand = \"{tk}\"\nargs = [\"stdio\"]\n"
        ),
    );
}

/// The next notification `pick` takes, within 10 s.
pub(crate) async fn next_matching<T>(
    mut next: impl AsyncFnMut() -> Option<ServerNotification>,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> T {
    let wait = async {
        while let Some(n) = next().await {
            if let Some(found) = pick(&n) {
                return found;
            }
        }
        panic!("the notifications ended")
    };
    tokio::time::timeout(Duration::from_secs(10), wait).await.expect("the notification came")
}

pub(crate) fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcpc serve did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A log message's data: a pick for [`next_matching`].
pub(crate) fn log_data(n: &ServerNotification) -> Option<Value> {
    match n {
        ServerNotification::LogMessage(m) => Some(m.data.clone()),
        _ => None,
    }
}

/// The URI of an updated resource: a pick for [`next_matching`].
pub(crate) fn updated_uri(n: &ServerNotification) -> Option<String> {
    match n {
        ServerNotification::ResourceUpdated(p) => Some(p.uri.clone()),
        _ => None,
    }
}

/// A change of the tool list: a pick for [`next_matching`].
pub(crate) fn tools_changed(n: &ServerNotification) -> Option<()> {
    matches!(n, ServerNotification::ToolListChanged).then_some(())
}

/// Calls the testkit's `annotated` tool through the bridge with arguments
/// no `Value` holds as written (integers past 64 bits, decimals past a
/// double's precision, a number no double holds, trailing zeros, escapes
/// and non-ASCII text), and checks that they reached it byte for byte (it
/// answers its arguments' text as it came).
pub(crate) async fn assert_arguments_arrive_as_written<T: mcp_peer::Transport>(
    c: &mcp_peer::Client<T>,
    era: EraChoice,
) {
    let written = r#"{"n":123456789012345678901234567890,"neg":-98765432109876543210987654321,"d":0.100000000000000000000000000001,"z":2.50,"e":1e400,"s":"tab\t \"q\" \\ \u00e9 \/ é ✓ 😀 \u2028","nested":{"x":[1.0,{"y":18446744073709551616}]}}"#;
    let arguments = serde_json::value::RawValue::from_string(written.to_owned()).unwrap();
    let result = c
        .call_tool_json("annotated", &*arguments, RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{era:?}: {e}"));
    let result: CallToolResult = serde_json::from_str(result.get()).unwrap();
    assert_eq!(mcp_test_support::text_blocks(&result), written, "{era:?}");
}
