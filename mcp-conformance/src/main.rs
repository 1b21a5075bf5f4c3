//! The client the official MCP conformance suite drives.
//!
//! `mcp-conformance-client <server-url>`, with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`, the protocol revision it runs at in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and its data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON). Each scenario gets what a real host
//! would do against such a server, through the public API of `mcp-http`
//! only; the suite's fake server judges the wire traffic. Logs go to stderr
//! (set `RUST_LOG`), never to stdout.
//!
//! At 2026-07-28 the client speaks the stateless era; at an older revision
//! it opens a session with `initialize`, offering that revision. The host
//! answers every server request (roots, sampling, elicitation), whether it
//! comes as a legacy request or as an `input_required` round.
//!
//! `auth/*` scenarios configure OAuth from the context (see
//! [`oauth_options`]) and then list the tools and call `test-tool`, as a
//! host would.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use mcp_http::mcp_auth::{
    AssertionSource, ClientRegistration, ClientSecret, IdentityProvider, JwtAlgorithm, OAuthConfig,
    PrivateKeyJwt, TokenEndpointAuthMethod,
};
use mcp_http::mcp_peer::EraChoice;
use mcp_http::{HttpClient, HttpOptions, OAuthOptions};
use mcp_proto::client::{
    BoxFuture, ElicitationHandler, Handlers, RequestOptions, RootsHandler, SamplingHandler,
};
use mcp_proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsResult, Root, Tool,
};
use mcp_proto::{ErrorObject, ProtocolVersion};
use serde_json::{Map, Value, json};

/// Accepts every form elicitation with the schema's defaults filled in, as a
/// host does when the user submits the form unchanged.
struct AcceptDefaults;

impl ElicitationHandler for AcceptDefaults {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move {
            let defaults = match &params {
                ElicitRequestParams::Form(form) => form.requested_schema.defaults(),
                _ => return Ok(ElicitResult::new(ElicitAction::Decline)),
            };
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = serde_json::from_value(Value::Object(defaults)).map_err(|e| {
                ErrorObject::new(mcp_proto::error_code::INTERNAL_ERROR, e.to_string())
            })?;
            Ok(result)
        })
    }
}

/// One root: the directory the client runs in.
struct WorkingDirectory;

impl RootsHandler for WorkingDirectory {
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        Box::pin(async {
            Ok(ListRootsResult::new(vec![
                Root::new("file:///conformance").with_name("conformance"),
            ]))
        })
    }
}

/// A model that always says the same thing.
struct CannedModel;

impl SamplingHandler for CannedModel {
    fn create_message(
        &self,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async { Ok(CreateMessageResult::text(CLIENT_NAME, "conformance sample")) })
    }
}

/// The Client ID Metadata Document URL the suite's CIMD scenario expects.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
const CLIENT_NAME: &str = "mcp-conformance-client";

/// One string member of the context, or an error naming it (never its value).
fn member<'a>(context: &'a Value, name: &str) -> anyhow::Result<&'a str> {
    context
        .get(name)
        .and_then(Value::as_str)
        .with_context(|| format!("MCP_CONFORMANCE_CONTEXT has no string {name:?}"))
}

/// OAuth for an `auth/*` scenario, as `mcp-auth`'s README maps the
/// scenario's context: pre-registered credentials, client credentials
/// (secret or `private_key_jwt`), cross-app access, workload identity, the
/// CIMD URL; the rest
/// only need the headless handler (the suite's authorization server approves
/// at once).
fn oauth_options(scenario: &str, context: &Value) -> anyhow::Result<OAuthOptions> {
    let basic = |context: &Value| -> anyhow::Result<ClientRegistration> {
        Ok(ClientRegistration::confidential(
            member(context, "client_id")?,
            member(context, "client_secret")?,
            TokenEndpointAuthMethod::ClientSecretBasic,
        ))
    };
    let config = OAuthConfig::new(String::new(), CLIENT_NAME);
    let config = match scenario {
        "auth/pre-registration" => config.with_pre_registered(basic(context)?),
        "auth/client-credentials-basic" => config.with_client_credentials(basic(context)?),
        "auth/client-credentials-jwt" => {
            let alg = match context.get("signing_algorithm").and_then(Value::as_str) {
                None => JwtAlgorithm::Es256,
                Some(name) => JwtAlgorithm::from_name(name)
                    .with_context(|| format!("unsupported signing algorithm {name:?}"))?,
            };
            let key = PrivateKeyJwt::from_pem(member(context, "private_key_pem")?, alg)
                .context("the private key")?;
            config
                .with_client_credentials(ClientRegistration::private_key_jwt(member(
                    context,
                    "client_id",
                )?))
                .with_signing_key(key)
        }
        "auth/enterprise-managed-authorization" => {
            let idp = IdentityProvider::new(
                member(context, "idp_token_endpoint")?,
                member(context, "idp_id_token")?,
                member(context, "idp_client_id")?,
            );
            config.with_cross_app_access(basic(context)?, idp)
        }
        // The platform's token is the scenario's valid workload JWT; its
        // other JWTs (wrong audience, expired) are for clients that test
        // their own refusals.
        "auth/wif-jwt-bearer" => config.with_workload_identity(
            ClientRegistration::public(member(context, "client_id")?),
            AssertionSource::Value(ClientSecret::new(member(context, "valid_jwt")?)),
        ),
        "auth/basic-cimd" => config.with_client_metadata_url(CIMD_URL)?,
        _ => config,
    };
    Ok(OAuthOptions::from_config(config).headless())
}

/// The scenario's data, `MCP_CONFORMANCE_CONTEXT` (`null` when unset).
fn context() -> anyhow::Result<Value> {
    match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}")),
        Err(_) => Ok(Value::Null),
    }
}

/// The revision the scenario runs at, `MCP_CONFORMANCE_PROTOCOL_VERSION`
/// (the runner's default, 2025-11-25, when unset).
fn revision() -> anyhow::Result<ProtocolVersion> {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(text) => {
            text.parse().map_err(|e| anyhow::anyhow!("MCP_CONFORMANCE_PROTOCOL_VERSION: {e}"))
        }
        Err(_) => Ok(ProtocolVersion::LATEST_LEGACY),
    }
}

fn options(
    scenario: &str,
    revision: ProtocolVersion,
    context: &Value,
) -> anyhow::Result<HttpOptions> {
    let mut options = HttpOptions::new(scenario);
    options.client_info = Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
    options.request_timeout = Duration::from_secs(10);
    options.handlers = Handlers {
        elicitation: Some(Arc::new(AcceptDefaults)),
        sampling: Some(Arc::new(CannedModel)),
        roots: Some(Arc::new(WorkingDirectory)),
    };
    // The revision the suite asks for, pinned with its era: the suite's
    // servers speak that revision's wire only.
    options.era = if revision.is_modern() { EraChoice::Modern } else { EraChoice::Legacy };
    options.protocol_version = revision;
    options.supported_versions = vec![revision];
    if scenario.starts_with("auth/") {
        options.oauth = Some(oauth_options(scenario, context)?);
    }
    Ok(options)
}

/// Arguments for a call to `tool` made without data from the scenario: a
/// plain value of each required property's type.
fn sample_arguments(tool: &Tool) -> Map<String, Value> {
    let schema = &tool.input_schema;
    let mut arguments = Map::new();
    for name in schema.required.iter().flatten() {
        let property = schema.properties.as_ref().and_then(|p| p.get(name));
        let value = match property.and_then(|p| p.get("type")).and_then(Value::as_str) {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("conformance"),
        };
        arguments.insert(name.clone(), value);
    }
    arguments
}

/// Calls `name` and fails on a tool error.
async fn call(
    client: &HttpClient,
    name: &str,
    arguments: Map<String, Value>,
) -> anyhow::Result<()> {
    let result = client
        .call_tool_with(name, arguments, RequestOptions::default())
        .await
        .with_context(|| format!("tools/call {name}"))?;
    if result.is_error == Some(true) {
        bail!("{name} failed: {}", mcp_proto::render_tool_result(&result).text);
    }
    Ok(())
}

/// The tool named `name` among `tools`.
fn find<'a>(tools: &'a [Tool], name: &str) -> anyhow::Result<&'a Tool> {
    tools.iter().find(|t| t.name == name).with_context(|| format!("the server lists no {name}"))
}

async fn run(scenario: &str, url: &str) -> anyhow::Result<()> {
    let revision = revision()?;
    let context = context()?;
    let client = mcp_http::connect(url, options(scenario, revision, &context)?)?;
    client.initialize().await.context("initialize")?;
    // The stateless era at 2026-07-28, the handshake at older revisions.
    if client.protocol_version() != Some(revision) {
        bail!("the client speaks {:?}, the scenario runs at {revision}", client.protocol_version());
    }
    match scenario {
        "initialize" => {}
        auth if auth.starts_with("auth/") => {
            let tools = client.list_tools().await.context("tools/list")?;
            if tools.iter().any(|t| t.name == "test-tool") {
                call(&client, "test-tool", Map::new()).await?;
            }
        }
        "tools_call" => {
            let tools = client.list_tools().await.context("tools/list")?;
            let tool = find(&tools, "add_numbers")?;
            let arguments = json!({"a": 5, "b": 3}).as_object().cloned().unwrap_or_default();
            call(&client, &tool.name, arguments).await?;
        }
        "sse-retry" => {
            // This server hands the call's answer, held back when it ends
            // the call's stream, to whichever GET comes next. The
            // standalone stream opens in the background after the
            // handshake; it is waited for here so that it is open before
            // the call, and the answer comes on the resumption (a GET with
            // `Last-Event-ID` after `retry`) that the scenario checks.
            client.transport().open_event_stream().await.context("GET stream")?;
            client
                .call_tool_with("test_reconnection", (), RequestOptions::default())
                .await
                .context("tools/call")?;
        }
        "elicitation-sep1034-client-defaults" => {
            // This server sends its elicitation request unrelated to the
            // call, so it can only arrive on the standalone GET stream.
            if !client.transport().open_event_stream().await.context("GET stream")? {
                bail!("the server offers no GET stream, so its elicitation cannot arrive");
            }
            client
                .call_tool_with("test_client_elicitation_defaults", (), RequestOptions::default())
                .await
                .context("tools/call")?;
        }
        "json-schema-2020-12-preservation" => {
            // Hands the focal tool's input schema back as the client holds it.
            let tools = client.list_tools().await.context("tools/list")?;
            let focal = find(&tools, "json_schema_2020_12_tool")?;
            let schema = serde_json::to_value(&focal.input_schema)?;
            let mut arguments = Map::new();
            arguments.insert("schema".to_owned(), schema);
            call(&client, "json_schema_echo", arguments).await?;
        }
        "sep-2322-client-request-state" => {
            // Each tool answers input_required first; the host's handlers
            // answer the rounds inside the call. The unrelated tool, called
            // between two such calls, must carry nothing of theirs.
            let tools = client.list_tools().await.context("tools/list")?;
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call(&client, &find(&tools, name)?.name, Map::new()).await?;
            }
        }
        "http-standard-headers" => {
            // Every kind of request that carries Mcp-Method and Mcp-Name.
            let tools = client.list_tools().await.context("tools/list")?;
            for tool in tools.iter() {
                call(&client, &tool.name, sample_arguments(tool)).await?;
            }
            for resource in client.list_resources().await.context("resources/list")? {
                client
                    .read_resource(&resource.uri)
                    .await
                    .with_context(|| format!("resources/read {}", resource.uri))?;
            }
            for prompt in client.list_prompts().await.context("prompts/list")? {
                client
                    .get_prompt(&prompt.name, None)
                    .await
                    .with_context(|| format!("prompts/get {}", prompt.name))?;
            }
        }
        "http-custom-headers" => {
            // The calls (and their argument values) come from the context;
            // the headers come from the listed tools' x-mcp-header.
            client.list_tools().await.context("tools/list")?;
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .context("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
            for c in calls {
                let name = member(c, "name")?;
                let arguments =
                    c.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
                call(&client, name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Every tool the client keeps is called; one whose x-mcp-header
            // annotations are invalid must not be among them.
            let tools = client.list_tools().await.context("tools/list")?;
            for tool in tools.iter() {
                call(&client, &tool.name, sample_arguments(tool)).await?;
            }
        }
        "request-metadata" | "json-schema-ref-no-deref" => {
            client.list_tools().await.context("tools/list")?;
        }
        other => {
            eprintln!(
                "mcp-conformance-client: no specific flow for scenario {other:?}; listing tools"
            );
            client.list_tools().await.context("tools/list")?;
        }
    }
    client.close().await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // The runner appends the server URL as the last argument.
    let Some(url) = std::env::args().skip(1).next_back() else {
        eprintln!(
            "usage: mcp-conformance-client <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        return std::process::ExitCode::from(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-conformance-client: {scenario}: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
