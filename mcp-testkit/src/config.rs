//! What a server is told at start: [`Config`], and the command line that
//! builds one ([`parse_args`]).
//!
//! The parser is written by hand (the toolkit keeps its dependencies few): it
//! accepts `--name value` and `--name=value`, rejects unknown options and
//! missing or malformed values with an [`ArgError`] that names the option.

use std::fmt;
use std::time::Duration;

/// How a server behaves: everything the `stdio` subcommand's options set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Items per page of `tools/list` (and of `resources/list`,
    /// `resources/templates/list`, `prompts/list`, `tasks/list`); `None`
    /// lists everything in one page.
    pub page_size: Option<usize>,
    /// Send `notifications/tools/list_changed` before the `initialize`
    /// reply, as some real servers do.
    pub send_list_changed_before_init: bool,
    /// A line written to stderr when the stdio driver starts.
    pub stderr_banner: Option<String>,
    /// How long the server waits after it starts before it serves (reads
    /// stdin, or listens): a server that loads before it serves, as one
    /// started by `npx`, `uvx` or `docker run` waits on the network or a
    /// daemon first (`--start-delay-ms`).
    pub start_delay: Duration,
    /// Exit (code 0) once this many client requests have been answered.
    pub exit_after: Option<u64>,
    /// Answer `initialize` with this `protocolVersion`, whatever the client
    /// offered (for negotiation-failure tests).
    pub version_override: Option<String>,
    /// The longest input line the stdio driver accepts, newline excluded;
    /// a longer line is discarded and answered with a parse error.
    pub max_line_bytes: usize,
    /// How long the `ask` tool waits for the client's answer.
    pub ask_timeout: Duration,
    /// The most requests a session runs at once (`--max-in-flight`; over
    /// HTTP, the stateless era's shared session's cap too); one more is
    /// answered at once with the server half's busy error. `None`: the
    /// server half's defaults.
    pub max_in_flight: Option<usize>,
    /// Which protocol eras the server speaks (`--era`): the handshake
    /// revisions (the default), the stateless 2026-07-28 revision, or both.
    pub era: ServeEra,
    /// Never answer `server/discover` in the legacy era, as some legacy
    /// servers do with methods they do not know, so a client's era probe
    /// must time out (`--silent-discover`). Over HTTP the POST gets no
    /// response at all.
    pub silent_discover: bool,
    /// The `ttlMs` of stateless-era results that carry caching hints
    /// (`server/discover`, the lists, `resources/read`) (`--ttl-ms`;
    /// default 0, immediately stale).
    pub ttl_ms: u64,
    /// The `instructions` of the `initialize` result and of
    /// `server/discover` (`--instructions`, `--no-instructions`); `None`
    /// sends none.
    pub instructions: Option<String>,
    /// Tools whose `description` is replaced (`--tool-description
    /// NAME=TEXT`, repeatable): a definition that changes between runs, for
    /// tool-pinning tests.
    pub tool_descriptions: Vec<(String, String)>,
    /// Also serve the official conformance suite's fixture tools
    /// (`test_simple_text`, `test_tool_with_progress`, ...), which its
    /// server scenarios call (`--conformance-fixtures`).
    pub conformance_fixtures: bool,
}

impl Config {
    /// The default longest input line: 16 MiB.
    pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
    /// The default wait for an answer to a server-to-client request: 10 s.
    pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default `instructions`.
    pub const DEFAULT_INSTRUCTIONS: &'static str = "A scriptable test server: its tools exercise \
        MCP clients (echo, slow, hang, fail, crash, ask, ...). Not for production use.";
}

/// Which protocol eras a server speaks (the server half's [`ServeEra`],
/// re-exported).
pub use mcp_server_io::ServeEra;

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: None,
            send_list_changed_before_init: false,
            stderr_banner: None,
            start_delay: Duration::ZERO,
            exit_after: None,
            version_override: None,
            max_line_bytes: Config::DEFAULT_MAX_LINE_BYTES,
            ask_timeout: Config::DEFAULT_ASK_TIMEOUT,
            max_in_flight: None,
            era: ServeEra::Legacy,
            silent_discover: false,
            ttl_ms: 0,
            instructions: Some(Config::DEFAULT_INSTRUCTIONS.to_owned()),
            tool_descriptions: Vec::new(),
            conformance_fixtures: false,
        }
    }
}

/// How the HTTP driver behaves: everything the `http` subcommand's options
/// set. The fault switches are off by default, so `HttpConfig::default()` is
/// a well-behaved Streamable HTTP server with sessions, JSON replies, a GET
/// stream and DELETE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// The server core's configuration (tools, pagination, versions, ...).
    /// `max_line_bytes` caps POST bodies; a larger one gets 413.
    pub server: Config,
    /// The port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// How a POSTed request is answered (`--reply`).
    pub reply: ReplyMode,
    /// Start each SSE reply with a priming event: an id and empty data
    /// (`--priming`).
    pub priming: bool,
    /// A `retry:` field, in milliseconds, in the priming event
    /// (`--retry-ms`).
    pub retry_ms: Option<u64>,
    /// Close each SSE reply right after its priming event, ending the body
    /// cleanly; the client must resume with GET and `Last-Event-ID`
    /// (`--close-after-priming`; implies `priming`).
    pub close_after_priming: bool,
    /// Cut each SSE reply connection after this many events (the priming
    /// event counts), without ending the chunked body properly
    /// (`--close-after-events`). Applies to resumed connections too.
    pub close_after_events: Option<usize>,
    /// The most events waiting unsent on one SSE connection
    /// (`--max-unsent-events`; `None`: the server half's default, 256).
    pub max_unsent_events: Option<usize>,
    /// Answer every request but `initialize` with an SSE stream holding one
    /// event that carries only a fresh id and `retry: 0` (no data), then
    /// end it; every GET (the standalone stream, a resumption with any
    /// `Last-Event-ID`) gets the same. The request never reaches the
    /// server core, so its reply never comes: a client that counts such
    /// events as progress reconnects until its timeout (`--id-only-events`).
    pub id_only_events: bool,
    /// Answer 404 to a session once it has seen this many POSTs
    /// (`--expire-session-after`).
    pub expire_session_after: Option<u64>,
    /// Issue `Mcp-Session-Id` on initialize and require it afterwards;
    /// `false` shares one server core between all clients (`--no-sessions`).
    pub sessions: bool,
    /// Serve the standalone GET stream; `false` answers 405 to a GET without
    /// `Last-Event-ID` (`--no-get`).
    pub get_stream: bool,
    /// Honour DELETE; `false` answers 405 (`--no-delete`).
    pub delete: bool,
    /// Require `Authorization: Bearer <token>` (`--require-auth`).
    pub require_auth: Option<String>,
    /// Require an access token that an authorization server signed, checked
    /// against its published keys (in-process only: the binary has no
    /// option for it). Independent of [`require_auth`](Self::require_auth).
    pub jwt_auth: Option<JwtAuth>,
    /// The exact `WWW-Authenticate` value of the 401 (`--challenge`).
    pub challenge: Option<String>,
    /// Answer a valid token with 403 `insufficient_scope` (`--forbid-scope`).
    pub forbid_scope: bool,
    /// Sleep this long before sending each response's headers
    /// (`--slow-headers-ms`).
    pub slow_headers: Option<Duration>,
    /// Pad every reply to a request to this many bytes of JSON, with a
    /// `_meta.padding` string in the result (`data.padding` in an error)
    /// (`--oversized-body`).
    pub oversized_body: Option<usize>,
    /// Redirect POSTs to `/mcp` (`--redirect`, `--redirect-cross-origin`).
    pub redirect: Redirect,
    /// Answer every POST with this status and a short text body (`--status`).
    pub status: Option<u16>,
    /// Serve the 2024-11-05 HTTP+SSE transport instead (`--legacy`).
    pub legacy: bool,
    /// The `endpoint` event's data in legacy mode, instead of
    /// `/message?sessionId=<id>` (`--legacy-endpoint`).
    pub legacy_endpoint: Option<String>,
    /// What `crash` and `--exit-after` do: `true` ends the process (the
    /// binary), `false` ends only that session, dropping its connections (the
    /// default, so an in-process server cannot end a test run).
    pub exit_process: bool,
    /// Worker threads of the runtime the `mcp-testkit http` binary serves
    /// on (`--threads`; 1, the default, is a current-thread runtime).
    /// `serve_http` runs on the caller's runtime and
    /// does not read it.
    pub threads: usize,
    /// Host names accepted in `Host` besides the loopback ones
    /// (`localhost`, `127.0.0.1`, `[::1]`), which are always: the DNS
    /// rebinding guard answers 403 to any other (`--allow-host`,
    /// repeatable; e.g. the name a proxy in a test resolves).
    pub allowed_hosts: Vec<String>,
    /// Serve HTTPS with this certificate instead of plain HTTP, and
    /// HTTP/2 too when it says so (in-process only: the binary has no
    /// option for it). `HttpServerHandle::url` then starts with `https://`.
    pub tls: Option<TlsConfig>,
}

/// The certificate and key the HTTP driver serves HTTPS with (rustls, the
/// `ring` provider, TLS 1.2 and 1.3), for tests that make their own CA.
///
/// ALPN offers `http/1.1`, and `h2` first after
/// [`with_http2`](Self::with_http2): a client that picks it is served
/// HTTP/2 (each `RequestRecord::version` says which a request came over).
/// A certificate or key rustls does not accept makes `serve_http` fail
/// with [`std::io::ErrorKind::InvalidInput`]; a client that does not
/// complete the handshake (it refused the certificate) is dropped without a
/// word. Cloning is cheap (the material is shared); `Debug` never shows the
/// key.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsConfig {
    inner: std::sync::Arc<TlsMaterial>,
}

#[derive(Clone, PartialEq, Eq)]
struct TlsMaterial {
    cert_chain: Vec<Vec<u8>>,
    private_key: Vec<u8>,
    http2: bool,
}

impl TlsConfig {
    /// A certificate chain in DER (the server's own certificate first, then
    /// any intermediates) and its private key in DER (PKCS#8, PKCS#1 or
    /// SEC1); HTTP/1.1 only.
    pub fn new(cert_chain: Vec<Vec<u8>>, private_key: Vec<u8>) -> Self {
        let inner = TlsMaterial { cert_chain, private_key, http2: false };
        TlsConfig { inner: std::sync::Arc::new(inner) }
    }

    /// Offers HTTP/2 (`h2`) by ALPN too.
    pub fn with_http2(mut self) -> Self {
        std::sync::Arc::make_mut(&mut self.inner).http2 = true;
        self
    }

    /// The certificate chain, in DER.
    pub fn cert_chain(&self) -> &[Vec<u8>] {
        &self.inner.cert_chain
    }

    /// The private key, in DER.
    pub fn private_key(&self) -> &[u8] {
        &self.inner.private_key
    }

    /// Whether HTTP/2 is offered.
    pub fn http2(&self) -> bool {
        self.inner.http2
    }
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("cert_chain", &format_args!("[{} certificate(s)]", self.cert_chain().len()))
            .field("private_key", &"<redacted>")
            .field("http2", &self.http2())
            .finish()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            server: Config::default(),
            port: 0,
            reply: ReplyMode::Json,
            priming: false,
            retry_ms: None,
            close_after_priming: false,
            close_after_events: None,
            max_unsent_events: None,
            id_only_events: false,
            expire_session_after: None,
            sessions: true,
            get_stream: true,
            delete: true,
            require_auth: None,
            jwt_auth: None,
            challenge: None,
            forbid_scope: false,
            allowed_hosts: Vec::new(),
            slow_headers: None,
            oversized_body: None,
            redirect: Redirect::None,
            status: None,
            legacy: false,
            legacy_endpoint: None,
            exit_process: false,
            threads: 1,
            tls: None,
        }
    }
}

/// The resource server's side of OAuth against a real authorization
/// server: every request to the MCP endpoint needs a JWT access token
/// (`Authorization: Bearer`, or `DPoP` with a proof when the token is
/// bound to a key) signed with RS256 or ES256 by a key of `jwks_uri`, with
/// this `iss`, this `aud` among its audiences and an `exp` still ahead.
/// The protected resource metadata names `issuer` as the authorization
/// server. The keys are fetched (plain `http://` only) when first needed
/// and again when a token names a key not yet seen, by each server for
/// itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtAuth {
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// Where its JSON Web Key Set is served.
    pub jwks_uri: String,
    /// The audience a token must name; `None`: the MCP endpoint's URL
    /// (`<base>/mcp`, the resource indicator a client sends).
    pub audience: Option<String>,
    /// Serve the protected resource metadata and name it in the 401's
    /// challenge; `false`: neither (a server whose client must be told
    /// where the authorization server's metadata is).
    pub publish_metadata: bool,
}

impl JwtAuth {
    /// Tokens of `issuer`, its keys at `jwks_uri`, for the endpoint's URL.
    pub fn new(issuer: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        JwtAuth {
            issuer: issuer.into(),
            jwks_uri: jwks_uri.into(),
            audience: None,
            publish_metadata: true,
        }
    }

    /// Publishes no protected resource metadata.
    pub fn without_metadata(mut self) -> Self {
        self.publish_metadata = false;
        self
    }

    /// Requires this audience instead of the endpoint's URL.
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }
}

/// How the HTTP driver answers a POSTed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReplyMode {
    /// One `application/json` body holding the reply.
    #[default]
    Json,
    /// A `text/event-stream` body: the request's related messages, then the
    /// reply, then the end of the stream.
    Sse,
    /// A JSON body when the reply is the first message about the request,
    /// else an SSE stream (`--reply auto`).
    Auto,
}

/// Whether the HTTP driver redirects POSTs to `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Redirect {
    /// No redirect.
    #[default]
    None,
    /// 307 to `/mcp/`, which serves the same endpoint.
    SameOrigin,
    /// 307 to this URL (another origin, for credential-forwarding tests).
    CrossOrigin(String),
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "made once per process from the command line; boxing would only complicate matching"
)]
pub enum Command {
    /// `stdio [options]`: serve on stdin/stdout.
    Stdio(Config),
    /// `http [options]`: serve Streamable HTTP (or, with `--legacy`, the
    /// 2024-11-05 HTTP+SSE transport) on 127.0.0.1.
    Http(HttpConfig),
    /// `help`, `--help` or `-h`: print [`USAGE`].
    Help,
    /// `--version` or `-V`: print the crate version.
    Version,
}

/// The command-line help text.
pub const USAGE: &str = "\
mcp-testkit: a scriptable MCP server for testing MCP clients (not a production server)

Usage:
  mcp-testkit stdio [options]         serve MCP on stdin/stdout, one JSON message per line
  mcp-testkit http [options]          serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp
                                      (the first stdout line is `listening on <url>`)
  mcp-testkit --help | --version

Options of both:
  --page-size N                     items per tools/list (resources/list, prompts/list, ...) page
                                    (default: all in one page)
  --send-list-changed-before-init   send notifications/tools/list_changed before the initialize reply
  --stderr-banner TEXT              write TEXT to stderr at start
  --exit-after N                    exit (code 0) after answering N requests
  --start-delay-ms N                wait N ms after starting before serving (a server that loads first)
  --version-override V              answer initialize with protocolVersion V
  --max-line-bytes N                longest accepted input line / POST body (default: 16 MiB)
  --ask-timeout-ms N                how long the `ask` tool waits for the client (default: 10000)
  --max-in-flight N                 most requests a session runs at once, more are refused with
                                    -32010 (default: 256; over HTTP the stateless era's: 1024)
  --era legacy|modern|both          protocol eras served: the initialize handshake (2024-11-05 ..
                                    2025-11-25, the default), stateless 2026-07-28, or both
  --silent-discover                 legacy era: never answer server/discover (probe timeouts)
  --ttl-ms N                        ttlMs of cacheable stateless results (default: 0)
  --instructions TEXT               the instructions of initialize and server/discover
  --no-instructions                 send no instructions
  --conformance-fixtures            also serve the conformance suite's fixture tools (test_*)
  --tool-description NAME=TEXT      replace a tool's description (repeatable)

Options of `http`:
  --port N                          port on 127.0.0.1 (default 0: any free port)
  --threads N                       worker threads serving (default 1: one current-thread runtime)
  --reply json|sse|auto             how requests are answered (default: json)
  --priming                         SSE replies start with a priming event (an id, empty data)
  --retry-ms N                      a `retry: N` field in the priming event
  --close-after-priming             close SSE replies after the priming event (resume with GET)
  --close-after-events N            cut each SSE reply connection after N events
  --max-unsent-events N             most events waiting unsent on one SSE connection; at the cap
                                    a stream's connection ends (resumable) or is cut (default: 256)
  --id-only-events                  answer requests (not initialize) and GETs with one event
                                    carrying only a fresh id and `retry: 0`, then end it
  --expire-session-after N          answer 404 to a session after N POSTs in it
  --no-sessions                     no Mcp-Session-Id; one server core shared by all
  --no-get                          405 on GET without Last-Event-ID
  --no-delete                       405 on DELETE
  --require-auth TOKEN              401 unless `Authorization: Bearer TOKEN`
  --challenge VALUE                 the exact WWW-Authenticate value of that 401
  --forbid-scope                    403 insufficient_scope even with the right token
  --allow-host NAME                 accept this Host besides the loopback names (repeatable)
  --slow-headers-ms N               sleep N ms before sending each response's headers
  --oversized-body BYTES            pad each reply to a request to BYTES bytes
  --redirect                        307 from POST /mcp to /mcp/
  --redirect-cross-origin URL       307 from POST /mcp to URL
  --status CODE                     answer every POST with CODE and a short text body
  --legacy                          the 2024-11-05 HTTP+SSE transport instead
  --legacy-endpoint URL             the `endpoint` event's data in legacy mode

Tools: echo, add, slow, hang, fail, crash, big, noisy, ask, change, cancelled_log,
spawn_child, env, log, annotated, touch (and `extra`, toggled by `change`); stateless era
only: ask_twice, retry_once, received_log, close_subscriptions.
Also: resources (test://static/...), prompts (simple, greet), completion/complete,
and tasks (task-augmented tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel).
";

/// A command line that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgError {
    /// No subcommand was given.
    MissingCommand,
    /// The subcommand is not one this program has.
    UnknownCommand(String),
    /// The option is not one the subcommand takes.
    UnknownOption(String),
    /// The option needs a value and none followed.
    MissingValue(&'static str),
    /// The option's value is not what it should be.
    InvalidValue {
        /// The option.
        option: &'static str,
        /// The value given.
        value: String,
        /// What was expected instead.
        expected: &'static str,
    },
    /// A flag that takes no value was given one (`--flag=value`).
    UnexpectedValue(&'static str),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::MissingCommand => f.write_str("no command given (try `stdio` or `http`)"),
            ArgError::UnknownCommand(c) => {
                write!(f, "unknown command {c:?} (try `stdio` or `http`)")
            }
            ArgError::UnknownOption(o) => write!(f, "unknown option {o:?}"),
            ArgError::MissingValue(o) => write!(f, "option {o} needs a value"),
            ArgError::InvalidValue { option, value, expected } => {
                write!(f, "option {option}: {value:?} is not {expected}")
            }
            ArgError::UnexpectedValue(o) => write!(f, "option {o} takes no value"),
        }
    }
}

impl std::error::Error for ArgError {}

/// Parses the arguments that follow the program name.
///
/// ```
/// use mcp_testkit::config::{parse_args, Command, ReplyMode};
///
/// let Ok(Command::Stdio(config)) = parse_args(["stdio", "--page-size", "3"]) else {
///     panic!("expected the stdio command")
/// };
/// assert_eq!(config.page_size, Some(3));
///
/// let Ok(Command::Http(http)) = parse_args(["http", "--reply", "sse", "--page-size=2"]) else {
///     panic!("expected the http command")
/// };
/// assert_eq!(http.reply, ReplyMode::Sse);
/// assert_eq!(http.server.page_size, Some(2));
/// ```
pub fn parse_args<I, S>(args: I) -> Result<Command, ArgError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args = args.into_iter().map(Into::into);
    let command = args.next().ok_or(ArgError::MissingCommand)?;
    let http = match command.as_str() {
        "stdio" => false,
        "http" => true,
        "help" | "--help" | "-h" => return Ok(Command::Help),
        "--version" | "-V" => return Ok(Command::Version),
        _ => return Err(ArgError::UnknownCommand(command)),
    };

    let mut config = HttpConfig::default();
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(Command::Help);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        // Each option is resolved to its static name so errors can carry it.
        let &(option, kind, _) = OPTIONS
            .iter()
            .find(|(o, _, http_only)| *o == name && (http || !http_only))
            .ok_or_else(|| ArgError::UnknownOption(arg.clone()))?;
        if kind == Kind::Flag {
            if inline.is_some() {
                return Err(ArgError::UnexpectedValue(option));
            }
            match option {
                "--send-list-changed-before-init" => {
                    config.server.send_list_changed_before_init = true;
                }
                "--priming" => config.priming = true,
                "--close-after-priming" => config.close_after_priming = true,
                "--id-only-events" => config.id_only_events = true,
                "--no-sessions" => config.sessions = false,
                "--no-get" => config.get_stream = false,
                "--no-delete" => config.delete = false,
                "--forbid-scope" => config.forbid_scope = true,
                "--redirect" => config.redirect = Redirect::SameOrigin,
                "--legacy" => config.legacy = true,
                "--silent-discover" => config.server.silent_discover = true,
                "--no-instructions" => config.server.instructions = None,
                "--conformance-fixtures" => config.server.conformance_fixtures = true,
                _ => return Err(ArgError::UnknownOption(arg)),
            }
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => args.next().ok_or(ArgError::MissingValue(option))?,
        };
        let server = &mut config.server;
        match option {
            "--page-size" => server.page_size = Some(positive(option, &value)?),
            "--stderr-banner" => server.stderr_banner = Some(value),
            "--exit-after" => server.exit_after = Some(positive(option, &value)? as u64),
            "--start-delay-ms" => server.start_delay = millis(option, &value)?,
            "--version-override" => server.version_override = Some(value),
            "--max-line-bytes" => server.max_line_bytes = positive(option, &value)?,
            "--ask-timeout-ms" => server.ask_timeout = millis(option, &value)?,
            "--max-in-flight" => server.max_in_flight = Some(positive(option, &value)?),
            "--era" => {
                server.era = value.parse().map_err(|()| ArgError::InvalidValue {
                    option,
                    value: value.clone(),
                    expected: "`legacy`, `modern` or `both`",
                })?;
            }
            "--ttl-ms" => {
                server.ttl_ms = value.parse().map_err(|_| ArgError::InvalidValue {
                    option,
                    value: value.clone(),
                    expected: "a non-negative integer",
                })?;
            }
            "--instructions" => server.instructions = Some(value),
            "--tool-description" => match value.split_once('=') {
                Some((name, text)) if !name.is_empty() => {
                    server.tool_descriptions.push((name.to_owned(), text.to_owned()))
                }
                _ => {
                    return Err(ArgError::InvalidValue {
                        option,
                        value: value.clone(),
                        expected: "of the form NAME=TEXT",
                    });
                }
            },
            "--port" => {
                config.port = value.parse().map_err(|_| ArgError::InvalidValue {
                    option,
                    value: value.clone(),
                    expected: "a port number (0 to 65535)",
                })?;
            }
            "--threads" => config.threads = positive(option, &value)?,
            "--reply" => {
                config.reply = match value.as_str() {
                    "json" => ReplyMode::Json,
                    "sse" => ReplyMode::Sse,
                    "auto" => ReplyMode::Auto,
                    _ => {
                        return Err(ArgError::InvalidValue {
                            option,
                            value,
                            expected: "`json`, `sse` or `auto`",
                        });
                    }
                };
            }
            "--retry-ms" => config.retry_ms = Some(positive(option, &value)? as u64),
            "--close-after-events" => config.close_after_events = Some(positive(option, &value)?),
            "--max-unsent-events" => config.max_unsent_events = Some(positive(option, &value)?),
            "--expire-session-after" => {
                config.expire_session_after = Some(positive(option, &value)? as u64);
            }
            "--require-auth" => config.require_auth = Some(value),
            "--challenge" => config.challenge = Some(value),
            "--allow-host" => config.allowed_hosts.push(value),
            "--slow-headers-ms" => config.slow_headers = Some(millis(option, &value)?),
            "--oversized-body" => config.oversized_body = Some(positive(option, &value)?),
            "--redirect-cross-origin" => config.redirect = Redirect::CrossOrigin(value),
            "--status" => {
                config.status = match value.parse::<u16>() {
                    Ok(code @ 100..=599) => Some(code),
                    _ => {
                        return Err(ArgError::InvalidValue {
                            option,
                            value,
                            expected: "an HTTP status code (100 to 599)",
                        });
                    }
                };
            }
            "--legacy-endpoint" => config.legacy_endpoint = Some(value),
            _ => return Err(ArgError::UnknownOption(arg)),
        }
    }
    Ok(if http { Command::Http(config) } else { Command::Stdio(config.server) })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
}

/// Every option: its name, whether it takes a value, whether only `http`
/// takes it.
const OPTIONS: &[(&str, Kind, bool)] = &[
    ("--page-size", Kind::Value, false),
    ("--send-list-changed-before-init", Kind::Flag, false),
    ("--stderr-banner", Kind::Value, false),
    ("--exit-after", Kind::Value, false),
    ("--start-delay-ms", Kind::Value, false),
    ("--version-override", Kind::Value, false),
    ("--max-line-bytes", Kind::Value, false),
    ("--ask-timeout-ms", Kind::Value, false),
    ("--max-in-flight", Kind::Value, false),
    ("--era", Kind::Value, false),
    ("--silent-discover", Kind::Flag, false),
    ("--ttl-ms", Kind::Value, false),
    ("--instructions", Kind::Value, false),
    ("--no-instructions", Kind::Flag, false),
    ("--conformance-fixtures", Kind::Flag, false),
    ("--tool-description", Kind::Value, false),
    ("--port", Kind::Value, true),
    ("--threads", Kind::Value, true),
    ("--reply", Kind::Value, true),
    ("--priming", Kind::Flag, true),
    ("--retry-ms", Kind::Value, true),
    ("--close-after-priming", Kind::Flag, true),
    ("--close-after-events", Kind::Value, true),
    ("--max-unsent-events", Kind::Value, true),
    ("--id-only-events", Kind::Flag, true),
    ("--expire-session-after", Kind::Value, true),
    ("--no-sessions", Kind::Flag, true),
    ("--no-get", Kind::Flag, true),
    ("--no-delete", Kind::Flag, true),
    ("--require-auth", Kind::Value, true),
    ("--challenge", Kind::Value, true),
    ("--forbid-scope", Kind::Flag, true),
    ("--allow-host", Kind::Value, true),
    ("--slow-headers-ms", Kind::Value, true),
    ("--oversized-body", Kind::Value, true),
    ("--redirect", Kind::Flag, true),
    ("--redirect-cross-origin", Kind::Value, true),
    ("--status", Kind::Value, true),
    ("--legacy", Kind::Flag, true),
    ("--legacy-endpoint", Kind::Value, true),
];

fn positive(option: &'static str, value: &str) -> Result<usize, ArgError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ArgError::InvalidValue {
            option,
            value: value.to_owned(),
            expected: "a positive integer",
        }),
    }
}

fn millis(option: &'static str, value: &str) -> Result<Duration, ArgError> {
    Ok(Duration::from_millis(positive(option, value)? as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(args: &[&str]) -> Config {
        let mut all = vec!["stdio"];
        all.extend_from_slice(args);
        match parse_args(all) {
            Ok(Command::Stdio(c)) => c,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn options_are_parsed() {
        assert_eq!(stdio(&[]), Config::default());
        let c = stdio(&[
            "--page-size",
            "2",
            "--send-list-changed-before-init",
            "--stderr-banner",
            "hello there",
            "--exit-after=5",
            "--version-override",
            "1999-01-01",
            "--max-line-bytes=100",
            "--ask-timeout-ms",
            "250",
            "--start-delay-ms=40",
            "--max-in-flight",
            "3",
        ]);
        assert_eq!(c.page_size, Some(2));
        assert!(c.send_list_changed_before_init);
        assert_eq!(c.stderr_banner.as_deref(), Some("hello there"));
        assert_eq!(c.exit_after, Some(5));
        assert_eq!(c.version_override.as_deref(), Some("1999-01-01"));
        assert_eq!(c.max_line_bytes, 100);
        assert_eq!(c.ask_timeout, Duration::from_millis(250));
        assert_eq!(c.start_delay, Duration::from_millis(40));
        assert_eq!(c.max_in_flight, Some(3));
        let c = stdio(&["--era", "both", "--silent-discover", "--ttl-ms=0", "--no-instructions"]);
        assert_eq!(c.era, ServeEra::Both);
        assert!(c.silent_discover);
        assert_eq!(c.ttl_ms, 0);
        assert_eq!(c.instructions, None);
        let c = stdio(&["--era=modern", "--ttl-ms", "5000", "--instructions", "hi"]);
        assert_eq!(
            (c.era, c.ttl_ms, c.instructions.as_deref()),
            (ServeEra::Modern, 5000, Some("hi"))
        );
        assert!(matches!(
            parse_args(["stdio", "--era", "future"]),
            Err(ArgError::InvalidValue { option: "--era", .. })
        ));
        // A banner may itself contain `=`.
        assert_eq!(stdio(&["--stderr-banner=a=b"]).stderr_banner.as_deref(), Some("a=b"));
    }

    #[test]
    fn http_options_are_parsed_and_refused_by_stdio() {
        let Ok(Command::Http(c)) = parse_args([
            "http",
            "--port=8123",
            "--reply",
            "sse",
            "--close-after-events",
            "3",
            "--max-unsent-events=16",
            "--id-only-events",
            "--no-sessions",
            "--no-get",
            "--no-delete",
            "--require-auth",
            "tok",
            "--status",
            "502",
            "--redirect-cross-origin",
            "http://127.0.0.2:1/mcp",
            "--legacy",
            "--page-size",
            "2",
            "--threads",
            "2",
        ]) else {
            panic!("expected the http command")
        };
        assert_eq!(c.port, 8123);
        assert_eq!(c.threads, 2);
        assert_eq!(c.reply, ReplyMode::Sse);
        assert_eq!(c.close_after_events, Some(3));
        assert_eq!(
            (c.max_unsent_events, HttpConfig::default().max_unsent_events),
            (Some(16), None)
        );
        assert!(c.id_only_events);
        assert!(!HttpConfig::default().id_only_events);
        assert!(!c.sessions && !c.get_stream && !c.delete && c.legacy);
        assert_eq!(c.require_auth.as_deref(), Some("tok"));
        assert_eq!(c.status, Some(502));
        assert_eq!(c.redirect, Redirect::CrossOrigin("http://127.0.0.2:1/mcp".into()));
        assert_eq!(c.server.page_size, Some(2));
        assert_eq!(
            parse_args(["stdio", "--reply", "sse"]),
            Err(ArgError::UnknownOption("--reply".into()))
        );
        let Ok(Command::Http(auto)) = parse_args(["http", "--reply", "auto"]) else {
            panic!("expected the http command")
        };
        assert_eq!(auto.reply, ReplyMode::Auto);
        assert!(matches!(
            parse_args(["http", "--reply", "xml"]),
            Err(ArgError::InvalidValue { option: "--reply", .. })
        ));
        assert!(matches!(
            parse_args(["http", "--status", "42"]),
            Err(ArgError::InvalidValue { option: "--status", .. })
        ));
    }

    #[test]
    fn errors_name_the_problem() {
        let cases: &[(&[&str], ArgError)] = &[
            (&[], ArgError::MissingCommand),
            (&["serve"], ArgError::UnknownCommand("serve".into())),
            (&["stdio", "--pagesize", "2"], ArgError::UnknownOption("--pagesize".into())),
            (&["stdio", "--page-size"], ArgError::MissingValue("--page-size")),
            (
                &["stdio", "--page-size", "0"],
                ArgError::InvalidValue {
                    option: "--page-size",
                    value: "0".into(),
                    expected: "a positive integer",
                },
            ),
            (
                &["stdio", "--exit-after=x"],
                ArgError::InvalidValue {
                    option: "--exit-after",
                    value: "x".into(),
                    expected: "a positive integer",
                },
            ),
            (
                &["stdio", "--send-list-changed-before-init=yes"],
                ArgError::UnexpectedValue("--send-list-changed-before-init"),
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(parse_args(args.iter().copied()).as_ref(), Err(expected), "{args:?}");
        }
        assert_eq!(parse_args(["--help"]), Ok(Command::Help));
        assert_eq!(parse_args(["stdio", "-h"]), Ok(Command::Help));
        assert_eq!(parse_args(["-V"]), Ok(Command::Version));
    }
}
