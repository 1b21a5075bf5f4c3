//! # mcp-host-registry
//!
//! The Model Context Protocol servers a host declares, behind one face.
//!
//! - **Configuration** ([`Config`]): the `[mcp_client]` TOML shape hosts
//!   already write, and the `mcpServers` JSON of Claude Desktop, Cursor and
//!   VS Code, read by one validator, the format told from the content.
//!   Secrets come from the environment (`token_env = "NAME"`), and
//!   `${NAME}`, `${env:NAME}` and `${NAME:-default}` are expanded in every
//!   string value of a server entry. A missing variable makes only its own
//!   server unusable ([`ServerConfig::unusable`], [`Error::ServerUnusable`]
//!   naming the key and the variable). Problems that do not stop loading
//!   (unknown keys, skipped entries, replaced duplicates, an empty or
//!   misplaced server list, an unusable server) come back as a list of
//!   [`Warning`]s; in strict mode they are errors. From a file, errors and
//!   warnings name it and the line.
//! - **Consent for project configurations** ([`Review`]): a
//!   configuration found in or above the working directory
//!   ([`find_project_config`]) is handed out only once the user approved
//!   it as it is now, by path and [`consent_digest`] (what it runs), kept
//!   in a [`ConsentStore`] ([`FileConsentStore`], atomic and owner-only);
//!   the user's own and explicitly named files ([`ConfigOrigin`]) are
//!   trusted. Nothing of an unapproved file is spawned or contacted.
//! - **Tool policy** ([`ToolPolicy`]): allow and deny lists, deny wins,
//!   exact and case-sensitive; applied before anything is spawned or sent.
//! - **Call approval** ([`CallPolicy`], [`RegistryOptions::trust`]):
//!   `allow`, `ask` or `deny` per call by glob [`Pattern`]s over
//!   `server__tool`, in one evaluation with the tool policy; `ask` goes to
//!   the host's [`Approver`] within the call's timeout, answers remembered
//!   for the session or kept ([`ApprovalStore`]); annotations used only
//!   for servers the configuration trusts.
//! - **Managed policy** ([`ManagedPolicy`]): an administrator's file that
//!   blocks servers by name, command or URL ([`Registry::blocked`]) and
//!   pins tiers the user's configuration cannot widen.
//! - **Audit log** ([`AuditLog`], opt-in): a JSON line per tool call
//!   (argument digest, redacted arguments, duration, outcome, decision),
//!   rotated by size, never holding a configured secret.
//! - **One transport face** ([`Transport`], object-safe as
//!   [`DynTransport`]): implemented for `mcp-stdio`'s `StdioTransport` and
//!   `mcp-http`'s `HttpTransport`, open to a host's own through a
//!   [`Connector`].
//! - **The registry** ([`Registry`]): lazy, cached connections (a server
//!   that failed is retried on its next use), `list_all_tools` and
//!   `initialize_all` across servers concurrently with a bound, per-server
//!   failures reported beside the others' results; each server's
//!   [`ServerStatus`] (connected or not, the protocol version spoken and
//!   its era: the handshake era or the stateless 2026-07-28 one, which the
//!   client finds by probing).
//! - **Tool pinning** ([`PinStore`], [`PinPolicy`], [`PinStatus`]): a
//!   digest of each tool definition is recorded the first time it is seen
//!   ([`FilePinStore`] beside the configuration, [`MemoryPinStore`] by
//!   default); a definition that later differs is warned about, withheld
//!   ([`Error::ToolChanged`], naming the changed fields) or re-pinned, by
//!   policy, until the host approves it (`Registry::approve_pins`).
//! - **Flat tool names** ([`ToolNames`]): unique `server__tool` names of
//!   `[A-Za-z0-9_-]`, at most 64 characters, stable, with the way back.
//! - **Tool search** ([`ToolIndex`], `Registry::search_tools`): BM25 over
//!   tools' names, titles and descriptions.
//! - **Results sized for a model** ([`sizing`], `Registry::call_tool_sized`):
//!   [`ResultLimits`] per server (`max_result_chars`, `max_result_bytes`)
//!   and a default; text cut at a character boundary, binary blocks
//!   described, the whole result kept in a bounded [`SpillDir`] under the
//!   user's cache directory and named in a notice; a server's
//!   `_meta["anthropic/maxResultSizeChars"]` honoured up to a host maximum.
//!   A host that passes results on (a bridge) takes them as the JSON text
//!   the server sent (`Registry::call_tool_json`), through the same checks.
//! - **Schemas shaped for a provider** ([`shape`]): a tool's input schema
//!   for strict function calling, for a provider without `$ref`, `null`
//!   choices or formats, or unchanged; references inlined within bounds
//!   (a cycle or an exploding schema is a typed error); the model's
//!   arguments mapped back.
//! - **Supervision** (opt-in: [`RegistryOptions::supervision`]): each
//!   server's [`Health`] (read, watched, or as a stream of
//!   [`HealthEvent`]s), a stdio server restarted and an HTTP server
//!   reconnected with a capped, jittered [`Backoff`], [`Keepalive`] pings
//!   that mark a silent server degraded, resource subscriptions made again
//!   on every new connection (in both eras), calls that wait or fail fast
//!   meanwhile ([`WhileDown`]). Without it the only background tasks are
//!   each connection's notification relay, which ends with it.
//! - **Notifications** (`Registry::notifications`): every server's
//!   notifications on one stream of [`NotificationEvent`]s, across
//!   restarts and reconnects.
//! - **Reload** ([`Registry::reload`]): a changed configuration applied in
//!   place; unchanged servers keep their connections; removed and replaced
//!   ones finish their calls in flight (within a bound) and close; a
//!   [`ReloadReport`] says what changed.
//! - **Command-line specs** ([`parse_server_spec`]): `https://...` or a
//!   command line, as `mcpc --server` takes them.
//! - **The hosts' JSON**: comments and trailing commas; VS Code's `inputs`
//!   behind `${input:ID}`, from an environment variable
//!   ([`LoadOptions::input_env_prefix`]) or the host's callback
//!   ([`LoadOptions::inputs`], given an [`InputRequest`]), else
//!   [`ConfigError::MissingInput`] naming the variable to set; a password
//!   input's value is a secret; `${workspaceFolder}`,
//!   `${workspaceFolderBasename}`, `${userHome}`.
//! - **MCP Registry `server.json`** ([`ImportedServer`]): a package (npm,
//!   PyPI, OCI, NuGet) or remote turned into a [`ServerConfig`] whose
//!   user-supplied values are `${NAME}` references, and its TOML entry:
//!
//! ```
//! use mcp_host_registry::{ImportedServer, ServerJsonChoice};
//!
//! let text = r#"{"name": "io.github.example/weather", "packages": [{
//!     "registryType": "pypi", "identifier": "weather-mcp-server", "version": "0.5.0",
//!     "environmentVariables": [{"name": "WEATHER_API_KEY", "isRequired": true}]}]}"#;
//! let imported = ImportedServer::from_str(text, ServerJsonChoice::First, None).unwrap();
//! assert!(imported.to_toml().contains(r#"args = ["weather-mcp-server==0.5.0"]"#));
//! assert_eq!(imported.variables[0].name, "WEATHER_API_KEY");
//! ```
//!
//! ```text
//!   mcp.toml / mcpServers JSON ──▶ Config ──▶ Registry ──▶ Connector ──▶ dyn DynTransport
//!                                   (validated,   (policy, lazy,          ├─ StdioTransport
//!                                    warnings)     cached, fan-out)       └─ HttpTransport
//! ```
//!
//! ## Optional features
//!
//! Both on by default; a host that needs one transport turns the other off
//! (`default-features = false, features = ["stdio"]` builds no hyper, no
//! rustls, no `mcp-auth`).
//!
//! - **`stdio`**: servers with a `command`, spawned through `mcp-stdio`.
//! - **`http`**: servers with an `endpoint`, through `mcp-http` (Streamable
//!   HTTP, static credentials, OAuth with `mcp-auth`, re-exported as
//!   `mcp_auth`), and with it `AuthorizationInfo`,
//!   `Registry::discover_authorization`, `Registry::login`,
//!   `Connector::login`, `default_token_dir`, `OAuthHandler`,
//!   `DefaultConnector::{oauth_handler, token_store}`,
//!   `TransportError::Http` and `Error::Login`.
//! - **`http2`** (off): HTTP/2 for remote servers (`mcp-http`'s `http2`;
//!   implies `http`).
//!
//! The configuration is read the same whatever the features: both kinds of
//! entry load, and connecting to one whose transport is compiled out is
//! [`Error::TransportUnavailable`] (a host's own [`Connector`] may still
//! serve it).
//!
//! ## What this crate does not do
//!
//! It speaks no protocol itself (the transports and `mcp-proto` do), never
//! writes to stdout, writes no file but those a host chooses (the pin file,
//! [`FilePinStore`], the consent and answer files, [`FileConsentStore`]
//! and [`FileApprovalStore`], the audit log, [`AuditLog`], the spill
//! directory, [`SpillDir`]), runs no background task unless supervision is
//! asked for, and never puts a secret in an error, a log or a `Debug`
//! output ([`Secret`]: values from `*_env` keys, `env`, `headers` and
//! `auth`; a variable expanded into `command`, `args` or `cwd` is part of
//! a command line, not a secret, so secrets go to spawned servers through
//! `env`).
//!
//! ## OAuth servers
//!
//! With the `http` feature, `auth = { kind = "oauth", ... }` servers
//! connect through `mcp-http`'s OAuth (`mcp-auth`, re-exported as
//! `mcp_auth`): [`DefaultConnector`]
//! maps `client_id` and the secret (`client_secret_basic`) to a
//! pre-registered client, `client_metadata_url` to the Client ID Metadata
//! Document URL, `redirect_uri` to the headless handler's redirect URI, and
//! `scopes` to the scopes asked for when the server's challenge names none
//! (instead of everything its metadata lists), and the provider quirks
//! (`resource`, `metadata_url`, `authorization_params`, `scopes_override`)
//! to `mcp_auth::ProviderQuirks`; `redirect_uri` or `redirect_port` is the
//! loopback URI a login listens on
//! ([`OAuthConfig::loopback_redirect_uri`]). Tokens are kept in a
//! `mcp_auth::FileTokenStore` (`default_token_dir`, `0600`) unless the host
//! sets `DefaultConnector::token_store`. During normal calls nobody is
//! asked to authorize (`DefaultConnector::oauth_handler` is
//! `OAuthHandler::None` by default): stored tokens are used and refreshed,
//! and a server that needs a new login fails with [`Error::LoginRequired`],
//! naming the host's [`RegistryOptions::login_command`]. The host runs the
//! login explicitly with `Registry::login` and a handler (a browser and
//! `mcp-auth`'s loopback listener, or `OAuthHandler::Headless` in tests).
//!
//! ## Example
//!
//! ```no_run
//! use mcp_host_registry::{Config, LoadOptions, Registry, RegistryOptions};
//!
//! # async fn run() -> Result<(), mcp_host_registry::Error> {
//! let toml = r#"
//! [mcp_client]
//! [[mcp_client.servers]]
//! name = "everything"
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-everything"]
//! disallowed_tools = ["trigger-long-running-operation"]
//! "#;
//! let loaded = Config::from_toml_str(toml, &LoadOptions::default())?;
//! for warning in &loaded.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let registry = Registry::new(loaded.config, RegistryOptions::default());
//! let tools = registry.list_tools("everything").await?;
//! println!("{} tools", tools.len());
//! let args = serde_json::json!({"message": "hi"});
//! let result = registry.call_tool("everything", "echo", args.as_object().cloned()).await?;
//! println!("{}", mcp_proto::render_tool_result(&result).text);
//! registry.close_all().await;
//! # Ok(()) }
//! ```
//!
//! `examples/servers.rs` loads a configuration file and lists its servers:
//! `cargo run -p mcp-host-registry --example servers -- mcp.toml`.

mod config;
mod connector;
mod digest;
mod error;
#[cfg(feature = "http")]
mod headers_helper;
mod mapping;
mod names;
mod pins;
mod policy;
mod private_file;
mod registry;
mod relay;
mod search;
mod server_json;
pub mod shape;
pub mod sizing;
mod spec;
mod supervisor;
mod transport;
mod trust;

pub use config::{
    AuthConfig, ClientIdentity, Config, DEFAULT_TIMEOUT, EnvLookup, HeadersHelper, HttpNetwork,
    InputKind, InputLookup, InputRequest, LoadOptions, Loaded, OAuthAddressPolicy, OAuthConfig,
    OAuthDpop, OAuthResource, Secret, ServerConfig, TransportConfig, input_variable,
    parse_protocol,
};
pub use connector::{Connector, DefaultConnector};
#[cfg(feature = "http")]
pub use connector::{Revocation, TokenStoreConfig, default_token_dir};
pub use error::{
    ConfigError, Error, Location, MissingInput, MissingVariable, TransportError, Warning,
    WarningKind,
};
#[cfg(feature = "http")]
pub use headers_helper::HelperError;
#[cfg(feature = "http")]
pub use mcp_http::{OAuthHandler, mcp_auth};
pub use mcp_peer::{self, DynTransport, Transport};
/// The waits of supervision: the workspace's one backoff, from `mcp-proto`.
pub use mcp_proto::backoff::Backoff;
pub use mcp_spawn_env::ServerCommand;
pub use names::{DEFAULT_SEPARATOR, MAX_TOOL_NAME_LEN, NameError, ToolNames};
pub use pins::{
    FilePinStore, MemoryPinStore, PinError, PinField, PinPolicy, PinStatus, PinStore, ServerPins,
    ToolPin, UnknownPinPolicy,
};
pub use policy::ToolPolicy;
pub use registry::{
    PlainCall, PlainRoute, Registry, RegistryOptions, ReloadReport, ServerResult, ServerStatus,
};
pub use relay::NotificationEvent;
pub use search::{SearchHit, ToolIndex, tokenize};
pub use server_json::{
    ImportedServer, ImportedVariable, MAX_SERVER_JSON_BYTES, ServerJsonChoice, ServerJsonError,
};
pub use sizing::{
    CutReport, ResultLimits, SizedResult, SpillDir, SpillError, WholeResult, cut_result,
    size_result,
};
pub use spec::{SpecError, parse_server_spec};
pub use supervisor::{Health, HealthEvent, Keepalive, Supervision, WhileDown};
#[cfg(feature = "http")]
pub use transport::AuthorizationInfo;
pub use transport::{BoxTransport, ServerClient};
pub use trust::approval::{
    ApprovalAnswer, ApprovalRequest, ApprovalStore, Approver, CallPolicy, Decision,
    FileApprovalStore, MemoryApprovalStore, Reason, Remember, Tier, TierRules,
};
pub use trust::audit::{AuditConfig, AuditLog, MAX_LOGGED_ARGUMENTS, MAX_LOGGED_STRING};
pub use trust::consent::{
    ConfigOrigin, Consent, ConsentStore, FileConsentStore, MemoryConsentStore,
    PROJECT_CONFIG_NAMES, Review, consent_digest, find_project_config,
};
pub use trust::managed::{Blocked, ManagedPolicy};
pub use trust::pattern::{MAX_PATTERN_LEN, Pattern};
pub use trust::settings::TrustSettings;
pub use trust::{TrustError, TrustOptions};

/// The README's examples, compiled as doc tests (they use both transports).
#[cfg(all(doctest, feature = "stdio", feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
