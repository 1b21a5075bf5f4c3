//! The client the official MCP conformance suite drives.
//!
//! `mcp-conformance-client <server-url>`, with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`. Each scenario gets what a real host would do
//! against such a server, through the public API of `mcp-http` only; the
//! suite's fake server judges the wire traffic. Logs go to stderr (set
//! `RUST_LOG`), never to stdout.
//!
//! `auth/*` scenarios configure OAuth from `MCP_CONFORMANCE_CONTEXT` (JSON,
//! see [`oauth_options`]) and then list the tools and call `test-tool`, as a
//! host would.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use mcp_http::mcp_auth::{
    ClientRegistration, IdentityProvider, JwtAlgorithm, OAuthConfig, PrivateKeyJwt,
    TokenEndpointAuthMethod,
};
use mcp_http::{HttpClient, HttpOptions, OAuthOptions};
use mcp_proto::ErrorObject;
use mcp_proto::client::{BoxFuture, ElicitationHandler, Handlers, RequestOptions};
use mcp_proto::types::{ElicitAction, ElicitRequestParams, ElicitResult, Implementation};
use serde_json::{Value, json};

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
/// (secret or `private_key_jwt`), cross-app access, the CIMD URL; the rest
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
        "auth/cross-app-access-complete-flow" => {
            let idp = IdentityProvider::new(
                member(context, "idp_token_endpoint")?,
                member(context, "idp_id_token")?,
                member(context, "idp_client_id")?,
            );
            config.with_cross_app_access(basic(context)?, idp)
        }
        "auth/basic-cimd" => config.with_client_metadata_url(CIMD_URL)?,
        _ => config,
    };
    Ok(OAuthOptions::from_config(config).headless())
}

fn options(scenario: &str) -> anyhow::Result<HttpOptions> {
    let mut options = HttpOptions::new(scenario);
    options.client_info = Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
    options.request_timeout = Duration::from_secs(10);
    options.handlers =
        Handlers { elicitation: Some(Arc::new(AcceptDefaults)), ..Default::default() };
    if scenario.starts_with("auth/") {
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            Err(_) => Value::Null,
        };
        options.oauth = Some(oauth_options(scenario, &context)?);
    }
    Ok(options)
}

async fn run(scenario: &str, url: &str) -> anyhow::Result<()> {
    let client = HttpClient::connect(url, options(scenario)?)?;
    client.initialize().await.context("initialize")?;
    let tools = client.list_tools().await.context("tools/list")?;
    match scenario {
        "initialize" => {}
        auth if auth.starts_with("auth/") => {
            if tools.iter().any(|t| t.name == "test-tool") {
                client
                    .call_tool_with("test-tool", serde_json::json!({}), RequestOptions::default())
                    .await
                    .context("tools/call test-tool")?;
            }
        }
        "tools_call" => {
            let tool = tools
                .iter()
                .find(|t| t.name == "add_numbers")
                .context("the server lists no add_numbers")?;
            let result = client
                .call_tool_with(
                    &tool.name,
                    json!({"a": 5, "b": 3}).as_object().cloned(),
                    RequestOptions::default(),
                )
                .await
                .context("tools/call add_numbers")?;
            if result.is_error == Some(true) {
                bail!("add_numbers failed: {}", mcp_proto::render_tool_result(&result).text);
            }
        }
        "sse-retry" => {
            client
                .call_tool_with("test_reconnection", (), RequestOptions::default())
                .await
                .context("tools/call")?;
        }
        "elicitation-sep1034-client-defaults" => {
            // This server sends its elicitation request unrelated to the
            // call, so it can only arrive on the standalone GET stream.
            if !client.open_event_stream().await.context("GET stream")? {
                bail!("the server offers no GET stream, so its elicitation cannot arrive");
            }
            client
                .call_tool_with("test_client_elicitation_defaults", (), RequestOptions::default())
                .await
                .context("tools/call")?;
        }
        other => {
            // Unknown scenarios get the basic flow: every tool without arguments.
            eprintln!("mcp-conformance-client: no specific flow for scenario {other:?}");
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
