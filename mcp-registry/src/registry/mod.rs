//! The registry's public face: the declared servers, their lazy
//! connections, the tool policy in front of them.

mod calls;
mod conn;
mod plain;
pub use plain::{PlainCall, PlainRoute};
mod shared;
mod sized;
mod slot;
mod subscriptions;
mod tool_call;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::StreamExt;
#[cfg(feature = "http")]
use mcp_http::{HttpTransport, OAuthHandler};
use mcp_proto::types::{Implementation, InitializeResult, Tool};
use mcp_proto::{Era, ProtocolVersion};

pub(crate) use self::calls::round_trip;
use self::conn::Cached;
#[cfg(feature = "http")]
pub(crate) use self::shared::CLOSE_TIMEOUT;
#[cfg(feature = "http")]
use self::shared::CONNECT_GRACE;
use self::shared::HEALTH_EVENTS;
pub(crate) use self::shared::Shared;
use self::shared::close_bounded;
pub(crate) use self::slot::Slot;
use self::slot::{Declared, lock};
use self::subscriptions::{is_modern, keep_listen, listen_filter};
#[cfg(feature = "http")]
use crate::config::AuthConfig;
#[cfg(feature = "http")]
use crate::config::TransportConfig;
use crate::config::{ClientIdentity, Config, ServerConfig};
#[cfg(feature = "http")]
use crate::connector::Revocation;
use crate::connector::{Connector, DefaultConnector};
use crate::error::{Error, TransportError};
use crate::pins::{MemoryPinStore, PinBook, PinPolicy, PinStore};
use crate::relay::{NOTIFICATION_EVENTS, NotificationEvent};
use crate::sizing::{ResultLimits, SpillDir};
use crate::supervisor::{Health, HealthEvent, Supervision};
use crate::transport::ServerClient;
#[cfg(feature = "http")]
use crate::transport::{AuthorizationInfo, authorization_info};
use crate::trust::gate::CallGate;
use crate::trust::managed::Blocked;
use tokio::sync::{broadcast, watch};

/// How a [`Registry`] runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct RegistryOptions {
    /// How many servers [`Registry::initialize_all`] and
    /// [`Registry::list_all_tools`] talk to at once (64: a start is mostly
    /// waiting for a process or the network, so a host's whole set starts
    /// together).
    pub max_concurrency: usize,
    /// Builds each server's transport ([`DefaultConnector`] by default).
    pub connector: Arc<dyn Connector>,
    /// The host's login command, shown in [`Error::LoginRequired`]; `{server}`
    /// is replaced with the server's name (e.g. `"mcpc login {server}"`).
    pub login_command: Option<String>,
    /// Where tool pins are kept ([`MemoryPinStore`] by default: for as
    /// long as the registry's process runs). A host that loads its
    /// configuration from a file keeps them beside it
    /// ([`FilePinStore::beside`](crate::FilePinStore::beside)).
    pub pin_store: Arc<dyn PinStore>,
    /// What a changed tool definition does when the server's entry sets no
    /// `pin_policy` ([`PinPolicy::Warn`] by default).
    pub pin_policy: PinPolicy,
    /// Keeps servers connected: restarts, reconnects with backoff,
    /// keepalive pings, resource subscriptions made again ([`Supervision`]).
    /// `None` (the default): no background task ever runs; a lost
    /// connection is made again on the server's next use.
    pub supervision: Option<Supervision>,
    /// How long [`Registry::reload`] lets calls in flight on a removed or
    /// replaced server finish before it closes that server's connection
    /// (which fails what still runs) (10 s).
    pub drain_timeout: Duration,
    /// Call approval and the administrator's policy
    /// ([`TrustOptions`](crate::TrustOptions)): every call allowed by
    /// default, as before.
    pub trust: crate::TrustOptions,
    /// Whether tools meant only for a server's MCP App view (`_meta.ui`
    /// `visibility` without `"model"`) are listed and may be called
    /// (`false`, the default: the lists are the model's, and the MCP Apps
    /// extension says such tools stay out of them). A host that shows
    /// every tool to a person (`mcpc`) sets it.
    pub app_only_tools: bool,
    /// How large a tool result may be when it goes to a model
    /// ([`Registry::call_tool_sized`]); a server's `max_result_chars` and
    /// `max_result_bytes` take the place of these (50,000 characters and
    /// 1 MiB by default).
    pub result_limits: ResultLimits,
    /// Where the whole of a result that was cut is kept (none by default:
    /// the notice then says it was not kept).
    pub spill: Option<SpillDir>,
    /// Whether a 2026-07-28 server is asked for its list changes (`false`
    /// by default). In that era a server announces a change of its tools,
    /// prompts or resources only on a `subscriptions/listen` stream that
    /// asked for it; with this set, every connection keeps one such stream
    /// open (with the resources subscribed through the registry, if any),
    /// and the changes reach [`Registry::notifications`]. A host that
    /// passes changes on (a bridge) or keeps a long-lived tool list sets
    /// it; it costs one open stream per stateless-era server. Handshake-era
    /// servers send their changes unasked either way.
    pub listen_list_changes: bool,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            max_concurrency: 64,
            connector: Arc::new(DefaultConnector::default()),
            login_command: None,
            pin_store: Arc::new(MemoryPinStore::new()),
            pin_policy: PinPolicy::default(),
            supervision: None,
            drain_timeout: Duration::from_secs(10),
            trust: crate::TrustOptions::default(),
            app_only_tools: false,
            result_limits: ResultLimits::default(),
            spill: None,
            listen_list_changes: false,
        }
    }
}

impl RegistryOptions {
    /// Options with this connector.
    pub fn with_connector(connector: impl Connector + 'static) -> Self {
        RegistryOptions { connector: Arc::new(connector), ..Default::default() }
    }

    /// These options with supervision on.
    pub fn with_supervision(mut self, supervision: Supervision) -> Self {
        self.supervision = Some(supervision);
        self
    }
}

impl fmt::Debug for RegistryOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryOptions")
            .field("max_concurrency", &self.max_concurrency)
            .field("connector", &self.connector)
            .field("login_command", &self.login_command)
            .field("pin_store", &self.pin_store)
            .field("pin_policy", &self.pin_policy)
            .field("supervision", &self.supervision)
            .field("drain_timeout", &self.drain_timeout)
            .field("trust", &self.trust)
            .field("app_only_tools", &self.app_only_tools)
            .field("result_limits", &self.result_limits)
            .field("spill", &self.spill)
            .field("listen_list_changes", &self.listen_list_changes)
            .finish()
    }
}

/// One server's outcome in a fan-out ([`Registry::list_all_tools`],
/// [`Registry::initialize_all`]).
#[derive(Debug)]
pub struct ServerResult<T> {
    /// The server's name.
    pub server: String,
    /// What it gave.
    pub result: Result<T, Error>,
}

/// What is known of one server's connection ([`Registry::status`],
/// [`Registry::statuses`]): whether one is open and, once the era is
/// settled, the protocol version it speaks and that version's era (the
/// handshake era, 2024-11-05 to 2025-11-25, or the stateless one,
/// 2026-07-28) and the server's `serverInfo`; its [`Health`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's name.
    pub server: String,
    /// Whether a connection is open (cached).
    pub connected: bool,
    /// The protocol version spoken (`None` until connected).
    pub protocol_version: Option<ProtocolVersion>,
    /// The era of [`protocol_version`](Self::protocol_version):
    /// [`Era::Legacy`] (`initialize`, a session) or [`Era::Modern`]
    /// (stateless, `server/discover`).
    pub era: Option<Era>,
    /// The server's `serverInfo` (name and version), once connected.
    pub server_info: Option<Implementation>,
    /// The server's health.
    pub health: Health,
    /// Which connection is open: a number the registry gives each
    /// connection it makes (a restart or a reconnect gives a new one; a
    /// reload keeps an unchanged server's).
    pub connection: Option<u64>,
}

impl ServerStatus {
    /// The status of `slot` with the connection `cached`, if any.
    fn of(slot: &Slot, cached: &Cached) -> ServerStatus {
        let conn = cached.as_ref().map(|(_, c, _)| c);
        let protocol_version = conn.and_then(|c| c.protocol_version());
        ServerStatus {
            server: slot.name.clone(),
            connected: conn.is_some(),
            protocol_version,
            era: protocol_version.map(ProtocolVersion::era),
            server_info: conn.and_then(|c| c.server_info()),
            health: slot.health(),
            connection: cached.as_ref().map(|(g, _, _)| *g),
        }
    }
}

/// What [`Registry::reload`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadReport {
    /// Servers that are new, in the new configuration's order.
    pub added: Vec<String>,
    /// Servers that are gone, in the old order.
    pub removed: Vec<String>,
    /// Servers whose configuration differs (by value, secrets included), in
    /// the new order. Those that differ only in the tool policy or the
    /// description keep their connection; the others are connected anew.
    pub changed: Vec<String>,
    /// Whether the client identity changed (every server is then connected
    /// anew, and counted as changed).
    pub identity_changed: bool,
}

impl ReloadReport {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && !self.identity_changed
    }
}

/// The servers a host declared, behind one face.
///
/// Connections are made lazily (first use of a server: spawn or connect,
/// then the handshake) and cached; a server whose connection failed or was
/// lost is connected again on its next use (or, supervised, in the
/// background: [`RegistryOptions::supervision`]). The tool policy is
/// applied before anything is spawned or sent. [`reload`](Self::reload)
/// applies a changed configuration in place.
///
/// ```no_run
/// use mcp_host_registry::{Config, LoadOptions, Registry, RegistryOptions};
///
/// # async fn run() -> Result<(), mcp_host_registry::Error> {
/// let loaded = Config::load("mcp.toml".as_ref(), &LoadOptions::default())?;
/// let registry = Registry::new(loaded.config, RegistryOptions::default());
/// for entry in registry.list_all_tools().await {
///     match entry.result {
///         Ok(tools) => println!("{}: {} tools", entry.server, tools.len()),
///         Err(e) => eprintln!("{}: {e}", entry.server),
///     }
/// }
/// let args = serde_json::json!({"message": "hi"});
/// let result = registry.call_tool("files", "echo", args.as_object().cloned()).await?;
/// println!("{}", mcp_proto::render_tool_result(&result).text);
/// registry.close_all().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Registry {
    shared: Arc<Shared>,
}

/// How long [`Registry::close_all`] waits for a server whose connection is
/// being made elsewhere before it goes on without it (that connect, when it
/// ends, closes what it made).
pub(crate) const CLOSE_LOCK_WAIT: Duration = Duration::from_secs(2);

impl Drop for Registry {
    fn drop(&mut self) {
        // Supervisors hold the registry weakly; stopped here they let go of
        // the connections at once.
        for slot in self.shared.snapshot().iter() {
            slot.stop_supervisor();
        }
    }
}

impl Registry {
    /// A registry of the configuration's servers (none when it is
    /// disabled). Nothing is spawned or connected yet, and no task runs.
    pub fn new(config: Config, options: RegistryOptions) -> Registry {
        let servers = if config.enabled { config.servers } else { Vec::new() };
        // What the administrator's policy blocks is never declared.
        let (servers, blocked) = options.trust.managed.admit(servers);
        let servers: Vec<Arc<ServerConfig>> = servers.into_iter().map(Arc::new).collect();
        let events = broadcast::channel(HEALTH_EVENTS).0;
        let slots: Arc<[Arc<Slot>]> =
            servers.iter().map(|s| Arc::new(Slot::new(s.clone(), events.clone()))).collect();
        let pins = PinBook::new(options.pin_store.clone(), options.pin_policy);
        let shared = Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            declared: Declared { identity: config.client_identity, servers, next: OnceLock::new() },
            slots: std::sync::RwLock::new(slots),
            options,
            generation: AtomicU64::new(0),
            closes: AtomicU64::new(0),
            events,
            notices: broadcast::channel(NOTIFICATION_EVENTS).0,
            reload: tokio::sync::Mutex::new(()),
            pins,
            gate: CallGate::default(),
            blocked: std::sync::Mutex::new(blocked),
        });
        Registry { shared }
    }

    /// The servers the managed policy
    /// ([`TrustOptions::managed`](crate::TrustOptions::managed)) kept out
    /// of the configuration (after the last [`reload`](Self::reload)), and
    /// why; they are not listed and never started.
    pub fn blocked(&self) -> Vec<Blocked> {
        lock(&self.shared.blocked).clone()
    }

    /// The servers, in declaration order (after the last
    /// [`reload`](Self::reload)).
    pub fn list(&self) -> impl ExactSizeIterator<Item = &ServerConfig> {
        self.shared.declared.latest().servers.iter().map(|s| &**s)
    }

    /// The server of this name.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.list().find(|s| s.name == name)
    }

    /// How the host introduces itself to servers.
    pub fn client_identity(&self) -> &ClientIdentity {
        &self.shared.declared.latest().identity
    }

    /// Whether a connection to this server is open (cached).
    pub async fn is_connected(&self, name: &str) -> bool {
        match self.slot(name) {
            Ok(slot) => slot.conn.lock().await.is_some(),
            Err(_) => false,
        }
    }

    /// The state of this server's connection (protocol version and era
    /// once connected, health). Connects nothing: a server not used yet is
    /// reported unconnected.
    pub async fn status(&self, name: &str) -> Result<ServerStatus, Error> {
        let slot = self.slot(name)?;
        let cached = slot.conn.lock().await;
        Ok(ServerStatus::of(&slot, &cached))
    }

    /// Whether the open connection to this server speaks the stateless
    /// era (2026-07-28 on), as [`status`](Self::status)'s `era` says:
    /// `None` when no connection is open, the name is unknown, or the
    /// connection is being opened or changed right now. Waits for nothing
    /// and connects nothing: for a host deciding, per call, whether
    /// something only that era reads is worth adding (a per-request log
    /// level), where `None` means "add it; the call sorts it out".
    pub fn speaks_stateless_era(&self, name: &str) -> Option<bool> {
        let slot = self.slot(name).ok()?;
        let cached = slot.conn.try_lock()?;
        cached.as_ref().map(|(_, conn, _)| is_modern(conn))
    }

    /// Every server's [`status`](Self::status), in declaration order.
    /// Connects nothing.
    pub async fn statuses(&self) -> Vec<ServerStatus> {
        let slots = self.shared.snapshot();
        let mut all = Vec::with_capacity(slots.len());
        for slot in slots.iter() {
            let cached = slot.conn.lock().await;
            all.push(ServerStatus::of(slot, &cached));
        }
        all
    }

    /// The server's [`Health`] now (no waiting, no I/O).
    pub fn health(&self, name: &str) -> Result<Health, Error> {
        Ok(self.slot(name)?.health())
    }

    /// The server's health as a [`watch::Receiver`]: its current value and
    /// each change (`changed()` ends with an error once a reload removed or
    /// replaced the server, whose last value is then [`Health::Removed`]).
    pub fn watch_health(&self, name: &str) -> Result<watch::Receiver<Health>, Error> {
        Ok(self.slot(name)?.health.subscribe())
    }

    /// Every server's health changes, from now on, as
    /// [`HealthEvent`]s (server, new health). A subscriber that falls more
    /// than 256 changes behind skips the oldest
    /// ([`broadcast::error::RecvError::Lagged`]).
    pub fn health_events(&self) -> broadcast::Receiver<HealthEvent> {
        self.shared.events.subscribe()
    }

    /// Every server's notifications from now on ([`NotificationEvent`]:
    /// the server's name and what it sent: progress, log messages,
    /// resource updates, list changes, ...), from every connection the
    /// registry makes, across restarts and reconnects: the one stream a
    /// host reads instead of each connection's
    /// [`notifications`](mcp_peer::Client::notifications). A subscriber
    /// that falls more than 256 behind skips the oldest
    /// ([`broadcast::error::RecvError::Lagged`]).
    pub fn notifications(&self) -> broadcast::Receiver<NotificationEvent> {
        self.shared.notices.subscribe()
    }

    /// Starts supervising every server now (each connects in the
    /// background, concurrently) rather than at its first use. Does
    /// nothing without [`RegistryOptions::supervision`].
    pub fn supervise_all(&self) {
        for slot in self.shared.snapshot().iter() {
            self.shared.ensure_supervisor(slot, false);
        }
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, Error> {
        self.shared.slot(name)
    }

    /// The cached connection, or a new one (spawned or connected, then
    /// initialized), bounded by the server's timeout plus a grace period.
    /// A supervised server that is backing off is waited for, or fails
    /// fast ([`Supervision::while_down`]).
    async fn connection(&self, slot: &Arc<Slot>) -> Result<(u64, ServerClient), Error> {
        self.shared.connection(slot, None).await.map(|(generation, conn, _)| (generation, conn))
    }

    /// Maps a transport error, dropping the cached connection when it is
    /// gone so the next use (or the supervisor) reconnects.
    async fn failed(&self, slot: &Slot, generation: u64, source: TransportError) -> Error {
        if source.is_connection_lost() {
            connection_lost(slot, generation).await;
        }
        self.shared.transport_error(&slot.name, source)
    }

    /// Runs an explicit OAuth login for an OAuth server: discovery,
    /// registration when needed, the user's authorization through
    /// `handler` (`None`: the connector's own; [`DefaultConnector`]'s is
    /// [`DefaultConnector::oauth_handler`]) and the token request; the
    /// tokens land in the connector's token store, where later connections
    /// find them. A stored valid or refreshable token is reused without
    /// asking the user. Bounded by `timeout`; an open connection to the
    /// server is closed first so the next use picks the new tokens up.
    /// Feature `http`.
    #[cfg(feature = "http")]
    pub async fn login(
        &self,
        server: &str,
        handler: Option<OAuthHandler>,
        timeout: Duration,
    ) -> Result<(), Error> {
        let config = self.slot(server)?.config();
        if !config.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let login = self.shared.options.connector.login(&config, self.client_identity(), handler);
        match tokio::time::timeout(timeout, login).await {
            Ok(result) => result,
            Err(_) => Err(Error::LoginTimeout { server: server.to_owned(), after: timeout }),
        }
    }

    /// Runs an OAuth logout for an OAuth server: revokes its tokens where
    /// the authorization server offers RFC 7009 revocation, then deletes
    /// them from the connector's token store (the client registration is
    /// kept). A handshake without an authorization handler finds the
    /// issuer the tokens are stored under, from the server's challenge (a
    /// server that cannot be reached: discovery from its well-known
    /// metadata). An open connection is closed first. Bounded by `timeout`.
    /// Feature `http`.
    #[cfg(feature = "http")]
    pub async fn logout(&self, server: &str, timeout: Duration) -> Result<Revocation, Error> {
        let config = self.slot(server)?.config();
        if !config.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let logout = self.shared.options.connector.logout(&config, self.client_identity());
        match tokio::time::timeout(timeout, logout).await {
            Ok(result) => result,
            Err(_) => Err(Error::LoginTimeout { server: server.to_owned(), after: timeout }),
        }
    }

    /// Connects to the server if needed and returns its `initialize` answer.
    pub async fn initialize(&self, server: &str) -> Result<Arc<InitializeResult>, Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match calls::initialize(&conn).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Every server's `initialize`, at most
    /// [`max_concurrency`](RegistryOptions::max_concurrency) at once, in
    /// declaration order; one server's failure does not affect the others.
    pub async fn initialize_all(&self) -> Vec<ServerResult<Arc<InitializeResult>>> {
        self.fan_out(|name| async move { self.initialize(&name).await }).await
    }

    /// The server's tools that its policy allows (and, unless
    /// [`RegistryOptions::app_only_tools`], that the model may see), less
    /// those withheld by tool pinning (a definition that changed since it was pinned, under
    /// [`PinPolicy::Block`]; see [`list_tools_with_pins`](Self::list_tools_with_pins)).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<Tool>, Error> {
        let (config, tools) = self.allowed_tools(server).await?;
        self.shared.pins.visible(&config, tools)
    }

    /// The server's tools that its policy allows, before pinning, with the
    /// configuration they were listed under.
    pub(crate) async fn allowed_tools(
        &self,
        server: &str,
    ) -> Result<(Arc<ServerConfig>, Vec<Tool>), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        let config = slot.config();
        match calls::list_tools(&conn).await {
            Ok(tools) => {
                let parts = self.shared.options.trust.parts();
                let apps = self.shared.options.app_only_tools;
                let allowed = tools
                    .iter()
                    .filter(|t| CallGate::visible(parts, &config, t))
                    .filter(|t| apps || t.is_visible_to_model())
                    .cloned()
                    .collect();
                Ok((config, allowed))
            }
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    pub(crate) fn pin_book(&self) -> &PinBook {
        &self.shared.pins
    }

    /// Every server's allowed tools, concurrently (bounded), in declaration
    /// order; a server that fails is reported beside the others' results.
    pub async fn list_all_tools(&self) -> Vec<ServerResult<Vec<Tool>>> {
        self.fan_out(|name| async move { self.list_tools(&name).await }).await
    }

    async fn fan_out<'a, T, F, Fut>(&'a self, op: F) -> Vec<ServerResult<T>>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>> + 'a,
    {
        let limit = self.shared.options.max_concurrency.max(1);
        let names: Vec<String> = self.shared.snapshot().iter().map(|s| s.name.clone()).collect();
        futures_util::stream::iter(names.into_iter().map(|name| {
            let fut = op(name.clone());
            async move { ServerResult { server: name, result: fut.await } }
        }))
        .buffered(limit)
        .collect()
        .await
    }

    /// Runs `op` on the server's client (connecting first if needed): the
    /// way to every method the registry has no shortcut for (resources,
    /// prompts, completion, tasks, subscriptions, `request` for anything
    /// else). A transport error becomes [`Error::Transport`] naming the
    /// server (or [`Error::LoginRequired`]), and a lost connection is
    /// dropped so the next use reconnects. The tool policy is not applied:
    /// `op` sees the server as it is.
    ///
    /// ```no_run
    /// # async fn demo(registry: &mcp_host_registry::Registry) -> Result<(), mcp_host_registry::Error> {
    /// let resources = registry.with_client("files", |c| async move { c.list_resources().await }).await?;
    /// # let _ = resources; Ok(()) }
    /// ```
    pub async fn with_client<T, F, Fut>(&self, server: &str, op: F) -> Result<T, Error>
    where
        F: FnOnce(ServerClient) -> Fut,
        Fut: std::future::Future<Output = Result<T, TransportError>>,
    {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match op(conn).await {
            Ok(value) => Ok(value),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Subscribes to updates of the resource `uri`, remembered: every
    /// later connection to the server (a restart, a reconnect, the next
    /// use after a loss) subscribes again before it is used. The updates
    /// (`notifications/resources/updated`) reach
    /// [`notifications`](Self::notifications) (and the connection's own
    /// [`notifications`](mcp_peer::Client::notifications) stream).
    ///
    /// In the handshake era this is `resources/subscribe`, and a refusal
    /// is the server's error. In the stateless era (2026-07-28) the
    /// registry keeps one `subscriptions/listen` stream per connection for
    /// the resources subscribed through it, opened again with each change
    /// of the set (the new stream is acknowledged before the old one is
    /// closed); a URI the acknowledgment leaves out is
    /// [`Error::SubscriptionRefused`]. A refused subscription is not
    /// remembered.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let _one_at_a_time = slot.subscribing.lock().await;
        let (generation, conn) = self.connection(&slot).await?;
        if !is_modern(&conn) {
            return match calls::subscribe(&conn, uri).await {
                Ok(()) => {
                    lock(&slot.subscriptions).insert(uri.to_owned());
                    Ok(())
                }
                Err(e) => Err(self.failed(&slot, generation, e).await),
            };
        }
        // Remembered first, so a connection made meanwhile listens to it.
        let added = lock(&slot.subscriptions).insert(uri.to_owned());
        let forget = || {
            if added {
                lock(&slot.subscriptions).remove(uri);
            }
        };
        let filter = listen_filter(&slot, self.shared.options.listen_list_changes);
        let subscription = match calls::listen(&conn, filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                forget();
                return Err(self.failed(&slot, generation, e).await);
            }
        };
        if subscription.refused().iter().any(|refused| refused == uri) {
            forget();
            return Err(Error::SubscriptionRefused {
                server: server.to_owned(),
                uri: uri.to_owned(),
            });
        }
        keep_listen(&slot, generation, Some(subscription)).await;
        Ok(())
    }

    /// Unsubscribes from the resource `uri`, and forgets it (it is not
    /// subscribed again on later connections, even when this fails): in
    /// the handshake era `resources/unsubscribe`; in the stateless era the
    /// connection's listen stream is opened again without it (closed when
    /// no resource is left, unless
    /// [`RegistryOptions::listen_list_changes`] keeps it for list changes).
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let _one_at_a_time = slot.subscribing.lock().await;
        lock(&slot.subscriptions).remove(uri);
        let (generation, conn) = self.connection(&slot).await?;
        if !is_modern(&conn) {
            return match calls::unsubscribe(&conn, uri).await {
                Ok(()) => Ok(()),
                Err(e) => Err(self.failed(&slot, generation, e).await),
            };
        }
        let list_changes = self.shared.options.listen_list_changes;
        if lock(&slot.subscriptions).is_empty() && !list_changes {
            keep_listen(&slot, generation, None).await;
            return Ok(());
        }
        match calls::listen(&conn, listen_filter(&slot, list_changes)).await {
            Ok(subscription) => {
                keep_listen(&slot, generation, Some(subscription)).await;
                Ok(())
            }
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// The resource URIs subscribed through [`subscribe_resource`](Self::subscribe_resource),
    /// in order.
    pub fn subscriptions(&self, server: &str) -> Result<Vec<String>, Error> {
        Ok(lock(&self.slot(server)?.subscriptions).iter().cloned().collect())
    }

    /// A round trip (connecting first if needed): `ping`, or for a server
    /// of the stateless era, which has no `ping`, `server/discover`.
    pub async fn ping(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match calls::round_trip(&conn).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Whether the server asks for authorization: `None` when it talks
    /// without (always for stdio servers). An open connection is asked as
    /// it is; otherwise a probe connection is made (for an OAuth server,
    /// without credentials) and closed again. Feature `http`.
    #[cfg(feature = "http")]
    pub async fn discover_authorization(
        &self,
        server: &str,
    ) -> Result<Option<AuthorizationInfo>, Error> {
        let slot = self.slot(server)?;
        let mut config = (*slot.config()).clone();
        if config.uses_oauth() {
            if let TransportConfig::Http { auth, .. } = &mut config.transport {
                *auth = AuthConfig::None;
            }
        } else if let Some((_, conn, _)) = &*slot.conn.lock().await {
            let conn = conn.clone();
            return discover_authorization(&conn)
                .await
                .map_err(|source| Error::Transport { server: server.to_owned(), source });
        }
        let limit = config.timeout + CONNECT_GRACE;
        let probe = async {
            let conn =
                self.shared.options.connector.connect(&config, self.client_identity()).await?;
            let found = discover_authorization(&conn)
                .await
                .map_err(|source| Error::Transport { server: server.to_owned(), source })?;
            let _ = calls::close(&conn).await;
            Ok::<_, Error>(found)
        };
        match tokio::time::timeout(limit, probe).await {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectTimeout { server: server.to_owned(), after: limit }),
        }
    }

    /// Closes one server's connection, if open, and stops its supervisor
    /// (it reconnects on next use).
    pub async fn close(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        slot.stop_supervisor();
        let taken = slot.conn.lock().await.take();
        if let Some((_, conn, _)) = taken {
            close_bounded(&slot.name, conn).await;
        }
        slot.set_health_if(|h| *h != Health::Removed, Health::Idle);
        Ok(())
    }

    /// Stops every supervisor and closes every open connection,
    /// concurrently, each within a bound.
    pub async fn close_all(&self) {
        self.shared.closes.fetch_add(1, Ordering::SeqCst);
        let slots = self.shared.snapshot();
        for slot in slots.iter() {
            slot.stop_supervisor();
        }
        let mut open = Vec::new();
        for slot in slots.iter() {
            // A connect in progress holds the slot; it is not waited for
            // long (its caller may have been abandoned): when it ends it
            // sees the close and closes what it made.
            match tokio::time::timeout(CLOSE_LOCK_WAIT, slot.conn.lock()).await {
                Ok(mut cached) => {
                    if let Some((_, conn, _)) = cached.take() {
                        open.push((slot.name.as_str(), conn));
                    }
                    slot.set_health(Health::Idle);
                }
                Err(_) => {
                    tracing::debug!(server = %slot.name, "not waiting for a connection being made")
                }
            }
        }
        futures_util::future::join_all(
            open.into_iter().map(|(name, conn)| close_bounded(name, conn)),
        )
        .await;
    }

    /// Applies a changed configuration: servers added, removed or changed
    /// (by [`ServerConfig`] equality, secrets compared by value), without
    /// touching the connections of the unchanged ones; returns what
    /// changed. One reload runs at a time.
    ///
    /// - An added server is connected on first use, or at once by a
    ///   [`supervise_all`](Self::supervise_all) after the reload.
    /// - A changed server whose configuration differs only in its tool
    ///   policy, pin policy or description keeps its connection; the new policy
    ///   applies to the next call. Any other change replaces it:
    ///   the new configuration is connected on next use (at once when the
    ///   old one was supervised).
    /// - A removed or replaced server's calls in flight may finish within
    ///   [`RegistryOptions::drain_timeout`]; then its connection is closed
    ///   (what still runs fails with [`Error::Transport`]), its supervisor
    ///   stopped, its health [`Health::Removed`]. A call that reached such
    ///   a server before it had a connection fails with [`Error::Reloaded`].
    ///   New calls go to the new configuration (a removed server is
    ///   [`Error::UnknownServer`]).
    ///
    /// A new client identity replaces every server. Returns once the
    /// removed and replaced connections are closed (bounded by the drain
    /// timeout plus the close bound).
    pub async fn reload(&self, config: Config) -> ReloadReport {
        self.shared.reload(config).await
    }
}

/// The least time a call that waited for its server keeps for the server
/// to answer.
const MIN_CALL_TIME: Duration = Duration::from_millis(1);

/// Whether the server asks for authorization: only an HTTP server can
/// (stdio servers take credentials from their environment); it is asked by
/// the handshake, whose 401 or 403 carries the challenge.
#[cfg(feature = "http")]
async fn discover_authorization(
    client: &ServerClient,
) -> Result<Option<AuthorizationInfo>, TransportError> {
    // Through the box: the box itself is a transport too.
    let transport: &dyn mcp_peer::DynTransport<TransportError> = &**client.transport();
    if !transport.as_any().is::<HttpTransport>() {
        return Ok(None);
    }
    match calls::initialize(client).await {
        Ok(_) => Ok(None),
        Err(TransportError::Http(e)) => match authorization_info(&e) {
            Some(info) => Ok(Some(info)),
            None => Err(TransportError::Http(e)),
        },
        Err(e) => Err(e),
    }
}

/// Drops a connection that was lost, so the next use (or the supervisor)
/// connects again.
pub(crate) async fn connection_lost(slot: &Slot, generation: u64) {
    if slot.drop_connection(generation).await {
        connection_dropped(slot);
    }
}

/// After a lost connection was dropped: the supervisor woken to connect
/// again, else the server idle until the next use.
pub(crate) fn connection_dropped(slot: &Slot) {
    tracing::debug!(server = %slot.name, "MCP connection lost; will reconnect");
    if slot.is_supervised() {
        slot.wake.notify_one();
    } else {
        slot.set_health(Health::Idle);
    }
}
