//! The commands of the first hour: servers, tools, call, ping, login and
//! logout; the dispatch of every command; what they share (choosing the
//! server, connecting under `--connect-timeout`, server log messages).

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_auth::loopback::LoopbackHandler;
use mcp_host_registry::{
    OAuthHandler, PinPolicy, PinStatus, Registry, Revocation, ServerConfig, ToolIndex,
    TransportConfig,
};
use mcp_proto::client::{RequestOptions, ServerNotification};
use mcp_proto::types::{CallToolResult, JsonObject, LoggingLevel, Tool};
use serde_json::{Value, json};

use crate::cli::{CallArgs, Cli, Command, Global, Output, PinsCommand, ProgressMode};
use crate::failure::{EXIT_TOOL_ERROR, Failure, Kind, unknown_server};
use crate::methods;
use crate::output::{
    add_protocol, emit, emit_json, log_text, note, offer_url, one_line, plural, protocol_suffix,
    show_progress, stderr_color, summary, table,
};
use crate::progress::Progress;

/// What every command gets.
pub(crate) struct Ctx<'a> {
    pub(crate) g: &'a Global,
    pub(crate) registry: &'a Registry,
    /// Whether tool pins outlive this run (see `setup::Setup::pins_kept`).
    pub(crate) pins_kept: bool,
}

impl Ctx<'_> {
    pub(crate) fn output(&self) -> Output {
        self.g.output
    }

    /// A registry error as a failure.
    pub(crate) fn fail(&self, e: mcp_host_registry::Error) -> Failure {
        Failure::registry(self.registry, e)
    }

    /// The named server, or the only one.
    pub(crate) fn pick(&self, name: Option<&str>) -> Result<String, Failure> {
        let names: Vec<&str> = self.registry.list().map(|s| s.name.as_str()).collect();
        match name {
            Some(name) if names.contains(&name) => Ok(name.to_owned()),
            Some(name) => Err(self.unknown(name)),
            None => match names.as_slice() {
                [only] => Ok((*only).to_owned()),
                [] => Err(Failure::new(Kind::Config, "no servers are configured")),
                _ => Err(Failure::usage(format!("name a SERVER: {}", names.join(", ")))),
            },
        }
    }

    /// No server has this name.
    pub(crate) fn unknown(&self, name: &str) -> Failure {
        Failure::new(Kind::NotFound, unknown_server(self.registry, name)).with_server(name)
    }

    /// `[SERVER] REST...`: the server when the first word names one, else
    /// the only server. `rest` is how many words follow the server at
    /// most: more words than that means the first must be a server.
    pub(crate) fn split<'w>(
        &self,
        words: &'w [String],
        rest: usize,
    ) -> Result<(String, &'w [String]), Failure> {
        match words {
            [first, tail @ ..] if self.registry.get(first).is_some() && !tail.is_empty() => {
                Ok((first.clone(), tail))
            }
            [first, ..] if words.len() > rest => Err(self.unknown(first)),
            _ => Ok((self.pick(None)?, words)),
        }
    }

    /// Connects to the server (spawn or connect, and the handshake) within
    /// `--connect-timeout`, and starts showing its log messages when
    /// `--log-level` asks for them. Gives the time it took.
    pub(crate) async fn connect(&self, server: &str) -> Result<Duration, Failure> {
        let start = Instant::now();
        let limit = Duration::from_secs_f64(self.g.connect_timeout);
        match tokio::time::timeout(limit, self.registry.initialize(server)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(self.fail(e)),
            Err(_) => {
                return Err(Failure::new(
                    Kind::Timeout,
                    format!(
                        "MCP server {server:?} did not connect within {}s (--connect-timeout)",
                        self.g.connect_timeout
                    ),
                )
                .with_server(server));
            }
        }
        let took = start.elapsed();
        if let Some(level) = self.g.log_level {
            self.show_logs(server, LoggingLevel::from(level.as_str())).await?;
        }
        Ok(took)
    }

    /// Asks the server for log messages at `level` and up (the handshake
    /// era's `logging/setLevel`; in the stateless era each request carries
    /// the level) and prints those that come on stderr.
    async fn show_logs(&self, server: &str, level: LoggingLevel) -> Result<(), Failure> {
        let name = server.to_owned();
        let output = self.output();
        let mut notifications = self
            .registry
            .with_client(server, |c| async move {
                let legacy = !c.protocol_version().is_some_and(|v| v.is_modern());
                let logs = c.server_capabilities().is_some_and(|caps| caps.logging.is_some());
                if legacy && logs {
                    c.set_log_level(level).await?;
                }
                Ok(c.notifications())
            })
            .await
            .map_err(|e| self.fail(e))?;
        tokio::spawn(async move {
            while let Some(n) = notifications.recv().await {
                if let ServerNotification::LogMessage(m) = n {
                    let line = match output {
                        Output::Json => json!({"server": name, "log": m}).to_string(),
                        Output::Text => format!("{name}: {}", one_line(&log_text(&m))),
                    };
                    note(&line);
                }
            }
        });
        Ok(())
    }

    /// Options of a request: `--timeout`, restarted by each progress
    /// notification up to `--max-time` in all; the stateless era's log level.
    pub(crate) fn request_options(&self) -> RequestOptions {
        let mut options = RequestOptions {
            timeout: self.g.timeout.map(Duration::from_secs_f64),
            reset_timeout_on_progress: true,
            max_total_timeout: Some(Duration::from_secs_f64(self.g.max_time)),
            ..Default::default()
        };
        if let Some(level) = self.g.log_level {
            let mut meta = serde_json::Map::new();
            meta.insert("io.modelcontextprotocol/logLevel".into(), json!(level.as_str()));
            options.meta = Some(meta);
        }
        options
    }
}

/// Runs the command.
pub(crate) async fn execute(
    cli: &Cli,
    registry: &Registry,
    pins_kept: bool,
) -> Result<u8, Failure> {
    let ctx = Ctx { g: &cli.global, registry, pins_kept };
    match &cli.command {
        Command::Servers { connect } => servers(&ctx, *connect).await,
        Command::Tools { server, search: Some(query), limit } => {
            search_tools(&ctx, server.as_deref(), query, *limit).await
        }
        Command::Tools { server, search: None, .. } => tools(&ctx, server.as_deref()).await,
        Command::Pins(PinsCommand::Approve { server, tool }) => {
            approve_pins(&ctx, server, tool.as_deref()).await
        }
        Command::Call(args) => call(&ctx, args).await,
        Command::Ping { server } => ping(&ctx, server.as_deref()).await,
        Command::Info { server } => methods::info(&ctx, server.as_deref()).await,
        Command::Resources(c) => methods::resources(&ctx, c).await,
        Command::Prompts(c) => methods::prompts(&ctx, c).await,
        Command::Complete(c) => methods::complete(&ctx, c).await,
        Command::Tasks(c) => methods::tasks(&ctx, c).await,
        Command::Listen { server, resources } => {
            methods::listen(&ctx, server.as_deref(), resources).await
        }
        Command::Login { server, headless } => login(&ctx, server, *headless).await,
        Command::Logout { server } => logout(&ctx, server.as_deref()).await,
        Command::Completions { .. } | Command::DemoServer => Ok(0),
    }
}

async fn ping(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    let connected = ctx.connect(&server).await?;
    let start = Instant::now();
    ctx.registry.ping(&server).await.map_err(|e| ctx.fail(e))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let connect_ms = connected.as_secs_f64() * 1000.0;
    let status = ctx.registry.status(&server).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Text => emit(&format!(
            "{server}: pong in {ms:.1} ms, connected in {connect_ms:.1} ms{}",
            protocol_suffix(&status)
        )),
        Output::Json => {
            let mut v = json!({"server": server, "ok": true, "ms": ms, "connect_ms": connect_ms});
            add_protocol(&mut v, &status);
            emit_json(&v);
        }
    }
    Ok(0)
}

/// How long the token exchanges of a login may take beyond the user's
/// part (`--timeout`).
const LOGIN_GRACE: Duration = Duration::from_secs(60);
/// How long `mcpc login` waits for the user by default.
const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// `mcpc login SERVER`: the loopback handler (or the hidden headless one),
/// the tokens into the file store.
async fn login(ctx: &Ctx<'_>, server: &str, headless: bool) -> Result<u8, Failure> {
    let server = ctx.pick(Some(server))?;
    if !ctx.registry.get(&server).is_some_and(ServerConfig::uses_oauth) {
        return Err(Failure::usage(format!(
            "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log in to"
        ))
        .with_server(&server));
    }
    let wait = ctx.g.timeout.map_or(DEFAULT_LOGIN_TIMEOUT, Duration::from_secs_f64);
    let handler = if headless {
        OAuthHandler::Headless(None)
    } else {
        let handler = LoopbackHandler::bind(wait)
            .await
            .map_err(|e| Failure::new(Kind::Auth, e).with_server(&server))?
            .on_url(|url| {
                note("Open this URL to log in:");
                offer_url(url, true);
            });
        OAuthHandler::Custom(Arc::new(handler))
    };
    ctx.registry
        .login(&server, Some(handler), wait + LOGIN_GRACE)
        .await
        .map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Text => emit(&format!("logged in to {server}")),
        Output::Json => emit_json(&json!({"server": server, "logged_in": true})),
    }
    Ok(0)
}

/// How long a logout (discovery and revocation) may take.
const LOGOUT_TIMEOUT: Duration = Duration::from_secs(60);

/// `mcpc logout SERVER`: revocation where offered, then the tokens deleted
/// from the store (also when the revocation failed: that is a warning).
async fn logout(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    if !ctx.registry.get(&server).is_some_and(ServerConfig::uses_oauth) {
        return Err(Failure::usage(format!(
            "server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log out of"
        ))
        .with_server(&server));
    }
    let revocation = ctx.registry.logout(&server, LOGOUT_TIMEOUT).await.map_err(|e| ctx.fail(e))?;
    let revoked = match &revocation {
        Revocation::Revoked => Some(true),
        Revocation::NotOffered => None,
        Revocation::Failed(e) => {
            note(&format!("mcpc: warning: {server}: the tokens could not be revoked: {e}"));
            Some(false)
        }
        _ => None,
    };
    match ctx.output() {
        Output::Text => emit(&match revoked {
            Some(true) => format!("logged out of {server} (tokens revoked and deleted)"),
            Some(false) => format!("logged out of {server} (tokens deleted; not revoked)"),
            None => format!("logged out of {server} (tokens deleted)"),
        }),
        Output::Json => {
            emit_json(&json!({"server": server, "logged_out": true, "revoked": revoked}))
        }
    }
    Ok(0)
}

/// `mcpc servers`: the configured servers; with `--connect`, each one
/// connected (concurrently, bounded) and shown with the protocol version
/// and era it speaks. A server that cannot be reached is reported on stderr
/// (and in the JSON) and makes the exit code 3; the others are still shown.
async fn servers(ctx: &Ctx<'_>, connect: bool) -> Result<u8, Failure> {
    let registry = ctx.registry;
    let mut errors = std::collections::HashMap::new();
    let mut code = 0;
    if connect {
        let limit = Duration::from_secs_f64(ctx.g.connect_timeout);
        let all = tokio::time::timeout(limit, registry.initialize_all()).await.map_err(|_| {
            Failure::new(
                Kind::Timeout,
                format!(
                    "the servers did not all connect within {}s (--connect-timeout)",
                    ctx.g.connect_timeout
                ),
            )
        })?;
        for r in all {
            if let Err(e) = r.result {
                let failure = ctx.fail(e);
                code = code.max(failure.code);
                crate::output::warn_line(&failure.message);
                errors.insert(r.server, failure);
            }
        }
    }
    let statuses = registry.statuses().await;
    match ctx.output() {
        Output::Json => {
            let list: Vec<Value> = registry
                .list()
                .zip(&statuses)
                .map(|(server, status)| {
                    let mut v = server_json(server);
                    v["connected"] = json!(status.connected);
                    add_protocol(&mut v, status);
                    if let Some(error) = errors.get(&server.name) {
                        v["error"] = json!(error.message);
                        v["error_kind"] = json!(error.kind.as_str());
                    }
                    v
                })
                .collect();
            emit_json(&Value::Array(list));
        }
        Output::Text => {
            let rows: Vec<Vec<String>> = registry
                .list()
                .zip(&statuses)
                .map(|(s, status)| {
                    let (kind, target) = target(s);
                    let protocol = match (status.protocol_version, status.era) {
                        (Some(version), Some(era)) => format!("{version} {era}"),
                        _ if errors.contains_key(&s.name) => "unreachable".to_owned(),
                        _ => String::new(),
                    };
                    let description = s.description.clone().unwrap_or_default();
                    let mut row = vec![s.name.clone(), kind.to_owned(), target];
                    if connect {
                        row.push(protocol);
                    }
                    row.push(description);
                    row
                })
                .collect();
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
    Ok(code)
}

/// The transport kind and what it points at: a command line, or an
/// endpoint without credentials or query.
fn target(server: &ServerConfig) -> (&'static str, String) {
    match &server.transport {
        TransportConfig::Stdio(c) => {
            let mut words = vec![c.command.clone()];
            words.extend(c.args.iter().cloned());
            ("stdio", shell_words::join(words))
        }
        TransportConfig::Http { endpoint, .. } => ("http", mcp_http::redact_endpoint(endpoint)),
        _ => ("other", String::new()),
    }
}

fn server_json(server: &ServerConfig) -> Value {
    let mut v = json!({
        "name": server.name,
        "description": server.description,
        "timeout_secs": server.timeout.as_secs(),
        "allowed_tools": server.policy.allowed(),
        "disallowed_tools": server.policy.denied(),
    });
    match &server.transport {
        TransportConfig::Stdio(c) => {
            v["transport"] = json!("stdio");
            v["command"] = json!(c.command);
            v["args"] = json!(c.args);
        }
        TransportConfig::Http { endpoint, .. } => {
            v["transport"] = json!("http");
            v["endpoint"] = json!(mcp_http::redact_endpoint(endpoint));
        }
        _ => v["transport"] = json!("other"),
    }
    v
}

async fn tools(ctx: &Ctx<'_>, server: Option<&str>) -> Result<u8, Failure> {
    let registry = ctx.registry;
    let names: Vec<String> = match server {
        Some(name) => vec![ctx.pick(Some(name))?],
        None => registry.list().map(|s| s.name.clone()).collect(),
    };
    if names.is_empty() {
        return Err(Failure::new(Kind::Config, "no servers are configured"));
    }
    let single = server.is_some() || names.len() == 1;
    // Every allowed tool with its pin (reviewed once, so a tool seen for
    // the first time shows as new), withheld ones included.
    let results: Vec<(String, Result<Vec<PinnedTool>, Failure>)> = if single {
        let name = names[0].clone();
        let result = match ctx.connect(&name).await {
            Ok(_) => registry.list_tools_with_pins(&name).await.map_err(|e| ctx.fail(e)),
            Err(f) => Err(f),
        };
        vec![(name, result)]
    } else {
        let limit = Duration::from_secs_f64(ctx.g.connect_timeout + ctx.g.timeout.unwrap_or(30.0));
        let all = futures_util::future::join_all(names.iter().map(|name| async move {
            let result = registry.list_tools_with_pins(name).await.map_err(|e| ctx.fail(e));
            (name.clone(), result)
        }));
        match tokio::time::timeout(limit, all).await {
            Ok(all) => all,
            Err(_) => {
                return Err(Failure::new(Kind::Timeout, "the servers did not all answer in time"));
            }
        }
    };
    let mut code = 0;
    let mut json_out = Vec::new();
    for (i, (name, result)) in results.into_iter().enumerate() {
        match result {
            Ok(pinned) => {
                let status = registry.status(&name).await.map_err(|e| ctx.fail(e))?;
                // Under the `block` policy a changed tool is withheld.
                let block =
                    registry.pin_policy(&name).map_err(|e| ctx.fail(e))? == PinPolicy::Block;
                let (withheld, shown): (Vec<&PinnedTool>, Vec<&PinnedTool>) =
                    pinned.iter().partition(|(_, pin)| block && pin.is_changed());
                let tools: Vec<&Tool> = shown.iter().map(|(t, _)| t).collect();
                let pin_of =
                    |tool: &str| pinned.iter().find(|(t, _)| t.name == tool).map(|(_, p)| p);
                match ctx.output() {
                    Output::Json => {
                        let mut v = json!({"server": name});
                        add_protocol(&mut v, &status);
                        let mut listed = Vec::with_capacity(tools.len());
                        for tool in &tools {
                            let mut t = json!(*tool);
                            if let Some(pin) = pin_of(&tool.name) {
                                t["pin"] = pin_json(pin);
                            }
                            listed.push(t);
                        }
                        v["tools"] = Value::Array(listed);
                        if !withheld.is_empty() {
                            v["withheld"] = withheld
                                .iter()
                                .map(|(t, p)| json!({"name": t.name, "pin": pin_json(p)}))
                                .collect();
                        }
                        json_out.push(v);
                    }
                    Output::Text => {
                        if i > 0 {
                            emit("");
                        }
                        emit(&format!(
                            "{name}: {} tool{}{}",
                            tools.len(),
                            plural(tools.len()),
                            protocol_suffix(&status)
                        ));
                        let mut rows: Vec<Vec<String>> = tools
                            .iter()
                            .map(|t| {
                                vec![
                                    format!("  {}", t.name),
                                    pin_of(&t.name)
                                        .map(|p| pin_mark(p, ctx.pins_kept))
                                        .unwrap_or_default(),
                                    summary(t.description.as_deref()),
                                ]
                            })
                            .collect();
                        rows.extend(withheld.iter().map(|(t, p)| {
                            vec![
                                format!("  {}", t.name),
                                format!("{}, withheld", pin_mark(p, ctx.pins_kept)),
                                format!("approve: mcpc pins approve {name} {}", t.name),
                            ]
                        }));
                        for line in table(&rows) {
                            emit(&line);
                        }
                    }
                }
            }
            Err(failure) if single => return Err(failure),
            Err(failure) => {
                code = code.max(failure.code);
                if ctx.output() == Output::Json {
                    json_out.push(json!({"server": name, "error": failure.message, "error_kind": failure.kind.as_str()}));
                }
                crate::output::warn_line(&failure.message);
            }
        }
    }
    if ctx.output() == Output::Json {
        emit_json(&Value::Array(json_out));
    }
    Ok(code)
}

/// A tool and how it compares with its pin.
type PinnedTool = (Tool, PinStatus);

/// A tool's pin as shown in the listing: nothing when it matches.
fn pin_mark(pin: &PinStatus, kept: bool) -> String {
    match pin {
        PinStatus::Pinned => String::new(),
        PinStatus::New if !kept => String::new(),
        other => format!("[{other}]"),
    }
}

/// A tool's pin in JSON: `"new"`, `"pinned"` or `{"changed": [fields]}`.
fn pin_json(pin: &PinStatus) -> Value {
    match pin {
        PinStatus::Changed { fields } => {
            json!({"changed": fields.iter().map(|f| f.as_str()).collect::<Vec<_>>()})
        }
        other => json!(other.to_string()),
    }
}

/// `tools --search QUERY`: the allowed tools (of one server, or all) that
/// best match, best first.
async fn search_tools(
    ctx: &Ctx<'_>,
    server: Option<&str>,
    query: &str,
    limit: usize,
) -> Result<u8, Failure> {
    let only = match server {
        Some(name) => Some(ctx.pick(Some(name))?),
        None => None,
    };
    let limit_time = Duration::from_secs_f64(ctx.g.connect_timeout + ctx.g.timeout.unwrap_or(30.0));
    let hits = match &only {
        // One server: its tools alone are indexed.
        Some(name) => {
            ctx.connect(name).await?;
            let tools = ctx.registry.list_tools(name).await.map_err(|e| ctx.fail(e))?;
            let mut index = ToolIndex::new();
            for tool in &tools {
                index.add(name, tool);
            }
            index.search(query, limit)
        }
        None => tokio::time::timeout(limit_time, ctx.registry.search_tools(query, limit))
            .await
            .map_err(|_| Failure::new(Kind::Timeout, "the servers did not all answer in time"))?,
    };
    match ctx.output() {
        Output::Json => {
            let list: Vec<Value> = hits
                .iter()
                .map(|h| json!({"server": h.server, "tool": h.tool, "score": h.score}))
                .collect();
            emit_json(&Value::Array(list));
        }
        Output::Text => {
            if hits.is_empty() {
                crate::output::warn_line(&format!("no tool matches {query:?}"));
            }
            let rows: Vec<Vec<String>> = hits
                .iter()
                .map(|h| vec![h.server.clone(), h.tool.clone(), format!("{:.2}", h.score)])
                .collect();
            for line in table(&rows) {
                emit(&line);
            }
        }
    }
    Ok(0)
}

/// `pins approve SERVER [TOOL]`.
async fn approve_pins(ctx: &Ctx<'_>, server: &str, tool: Option<&str>) -> Result<u8, Failure> {
    let server = ctx.pick(Some(server))?;
    ctx.connect(&server).await?;
    let approved = ctx.registry.approve_pins(&server, tool).await.map_err(|e| ctx.fail(e))?;
    match ctx.output() {
        Output::Json => emit_json(&json!({"server": server, "approved": approved})),
        Output::Text if approved.is_empty() => {
            emit(&format!("{server}: every definition already matches its pin"))
        }
        Output::Text => emit(&format!("{server}: pinned {}", approved.join(", "))),
    }
    Ok(0)
}

/// `key=value` words as a map (no coercion yet).
pub(crate) fn pairs(words: &[String]) -> Result<Vec<(String, String)>, Failure> {
    words
        .iter()
        .map(|pair| {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(Failure::usage(format!("expected key=value, got {pair:?}")));
            };
            let key = key.trim();
            if key.is_empty() {
                return Err(Failure::usage(format!("the argument {pair:?} has no key")));
            }
            Ok((key.to_owned(), value.to_owned()))
        })
        .collect()
}

async fn call(ctx: &Ctx<'_>, args: &CallArgs) -> Result<u8, Failure> {
    let registry = ctx.registry;
    // `call SERVER TOOL ...`, or `call TOOL ...` when there is one server;
    // a first word that is no server, followed by one that is no
    // key=value, is a server's name misspelt.
    let (server, tool, rest) = match args.words.as_slice() {
        [first, rest @ ..] if registry.get(first).is_some() => match rest {
            [tool, rest @ ..] => (first.clone(), tool.clone(), rest),
            [] => {
                return Err(Failure::usage(format!("call {first} needs a TOOL")).with_server(first));
            }
        },
        [first, second, ..] if !second.contains('=') => return Err(ctx.unknown(first)),
        [tool, rest @ ..] => (ctx.pick(None)?, tool.clone(), rest),
        [] => return Err(Failure::usage("call needs a TOOL")),
    };
    let mut arguments = match &args.json {
        None => JsonObject::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Failure::usage("--json must be a JSON object")),
            Err(e) => return Err(Failure::usage(format!("--json is not valid JSON: {e}"))),
        },
    };
    let raw_pairs = pairs(rest)?;
    let config = registry.get(&server).ok_or_else(|| ctx.unknown(&server))?;
    if !config.policy.is_allowed(&tool) {
        return Err(ctx.fail(mcp_host_registry::Error::ToolNotAllowed {
            server: server.clone(),
            tool: tool.clone(),
        }));
    }
    ctx.connect(&server).await?;
    if !raw_pairs.is_empty() {
        // The tool's schema says which values are strings.
        let tools = registry.list_tools(&server).await.map_err(|e| ctx.fail(e))?;
        let schema =
            tools.iter().find(|t| t.name == tool).and_then(|t| t.input_schema.properties.clone());
        for (key, value) in raw_pairs {
            let property = schema.as_ref().and_then(|p| p.get(&key));
            let value = coerce(&key, &value, property).map_err(Failure::usage)?;
            arguments.insert(key, value);
        }
    }
    if args.task {
        return methods::start_task(ctx, &server, &tool, arguments, args.detach).await;
    }
    let draw_progress = match ctx.g.progress {
        ProgressMode::Always => true,
        ProgressMode::Never => false,
        ProgressMode::Auto => std::io::stderr().is_terminal(),
    };
    let progress =
        draw_progress.then(|| Progress::start(format!("{server}/{tool}"), stderr_color()));
    let mut options = ctx.request_options();
    if let Some(p) = &progress {
        let p = p.clone();
        options.on_progress = Some(Arc::new(move |params| show_progress(&p, params)));
    }
    let result = registry.call_tool_with(&server, &tool, Some(arguments), options).await;
    if let Some(p) = &progress {
        p.finish();
    }
    let result = result.map_err(|e| ctx.fail(e))?;
    Ok(print_tool_result(ctx.output(), &result))
}

/// Prints a tool's result; the exit code: 1 when the tool reported an
/// error.
pub(crate) fn print_tool_result(output: Output, result: &CallToolResult) -> u8 {
    let rendered = mcp_proto::render_tool_result(result);
    match output {
        Output::Json => emit_json(&rendered.raw),
        Output::Text => {
            let pretty = rendered
                .structured_content
                .as_ref()
                .map(|v| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
            match (result.content.is_empty(), pretty) {
                // No blocks: the text is the structured content, compact.
                (true, Some(pretty)) => emit(&pretty),
                (false, Some(pretty)) => {
                    emit(&rendered.text);
                    emit("");
                    emit("structuredContent:");
                    emit(&pretty);
                }
                (_, None) => emit(&rendered.text),
            }
        }
    }
    if rendered.is_error { EXIT_TOOL_ERROR } else { 0 }
}

/// A `key=value` value as the tool's schema wants it: a string property
/// takes the text as is; a number, integer, boolean, array or object
/// property takes JSON; without a schema, JSON when it parses, else text.
fn coerce(key: &str, value: &str, property: Option<&Value>) -> Result<Value, String> {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"string") {
        return Ok(Value::String(value.to_owned()));
    }
    match serde_json::from_str::<Value>(value) {
        Ok(parsed) if types.is_empty() || types.iter().any(|t| json_type_matches(t, &parsed)) => {
            Ok(parsed)
        }
        _ if types.is_empty() => Ok(Value::String(value.to_owned())),
        _ => Err(format!("argument {key:?} must be {} (got {value:?})", types.join(" or "))),
    }
}

fn json_type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coercion_follows_the_schema() {
        let s = |t: Value| json!({ "type": t });
        let cases: Vec<(&str, Option<Value>, Result<Value, ()>)> = vec![
            ("hi", Some(s(json!("string"))), Ok(json!("hi"))),
            ("123", Some(s(json!("string"))), Ok(json!("123"))),
            ("2.5", Some(s(json!("number"))), Ok(json!(2.5))),
            ("7", Some(s(json!("integer"))), Ok(json!(7))),
            ("7.5", Some(s(json!("integer"))), Err(())),
            ("x", Some(s(json!("number"))), Err(())),
            ("true", Some(s(json!("boolean"))), Ok(json!(true))),
            ("[1,2]", Some(s(json!("array"))), Ok(json!([1, 2]))),
            ("{\"a\":1}", Some(s(json!("object"))), Ok(json!({"a": 1}))),
            ("5", Some(s(json!(["string", "null"]))), Ok(json!("5"))),
            ("5", None, Ok(json!(5))),
            ("hello", None, Ok(json!("hello"))),
            ("null", None, Ok(Value::Null)),
        ];
        for (input, property, expected) in cases {
            let got = coerce("k", input, property.as_ref()).map_err(|_| ());
            assert_eq!(got, expected, "{input} with {property:?}");
        }
    }
}
