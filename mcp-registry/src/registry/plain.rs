//! A plain call: one that every check of [`Registry::call_tool_text`]
//! allows now, decided with no I/O and no wait, so a host may forward it
//! on the connection with no future of its own
//! ([`mcp_peer::Client::forward_tool_call`]).

use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_proto::client::RequestOptions;
use mcp_proto::types::Tool;
use serde_json::value::RawValue;
use tokio::task::AbortHandle;

use super::Registry;
use super::shared::Shared;
use super::slot::{Slot, lock};
use super::tool_call::fit_options;
use crate::config::ServerConfig;
use crate::error::{Error, TransportError};
use crate::transport::ServerClient;
use crate::trust::approval::Tier;

/// A plain call's route: a call of a server's tool that every check
/// allowed (see [`Registry::plain_route`]), kept with what was decided on,
/// so that the next call of the tool is a [`call`](PlainRoute::call) that
/// compares rather than decides again. It keeps neither the server's slot
/// nor the registry alive (a reload waits for the calls of a server it
/// retires, not for its routes), nor the connection.
pub struct PlainRoute {
    /// The server's tool list the route was found in, the tool at
    /// `index`.
    tools: Arc<[Tool]>,
    index: usize,
    slot: Weak<Slot>,
    shared: Weak<Shared>,
    /// The connection's generation.
    generation: u64,
    /// The slot's count of configuration changes, of health changes, and
    /// the pins' epoch, each read before what it guards.
    config_changes: u64,
    health_changes: u64,
    pins: u64,
    /// The supervisor's task, when supervision is on.
    supervisor: Option<AbortHandle>,
    /// The server's name.
    server: String,
}

impl std::fmt::Debug for PlainRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainRoute")
            .field("server", &self.server)
            .field("tool", &self.tool())
            .finish_non_exhaustive()
    }
}

/// A call on a [`PlainRoute`] that still holds, to
/// [`forward`](PlainCall::forward).
pub struct PlainCall<'r> {
    route: &'r PlainRoute,
    /// The connection the call goes out on: one that
    /// [`forwards_plainly`](mcp_peer::Client::forwards_plainly).
    client: ServerClient,
    slot: Arc<Slot>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PlainCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainCall")
            .field("server", &self.slot.name)
            .field("tool", &self.route.tool())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// The route of a call of `tool` on `server` when every check
    /// [`call_tool_text`](Self::call_tool_text) makes passes now, with no
    /// I/O and no wait: no audit log (whose line is written when a call
    /// ends); the server usable, connected (its connection not being
    /// dropped now) in the handshake era on a connection that
    /// [`forwards_plainly`](mcp_peer::Client::forwards_plainly), not
    /// backing off, its supervisor running when supervision is on; its
    /// tool list kept, the tool listed, visible to the model (or app-only
    /// tools allowed), not withheld by pinning; the call policy's tier
    /// `allow` (no approver to ask, no rule or list refusing it). `None`
    /// otherwise: the call then takes `call_tool_text`, which says why it
    /// fails, waits, connects or asks.
    ///
    /// The route holds for as long as none of what was checked changes:
    /// the server's configuration (a reload), its health, its supervisor,
    /// its connection, the connection's era and tool list (a list change
    /// the server announced, or a listing), the pins; and while the server
    /// is not retired. [`PlainRoute::call`] tells.
    pub fn plain_route(&self, server: &str, tool: &str) -> Option<PlainRoute> {
        let shared = &self.shared;
        if shared.options.trust.audit.is_some() {
            return None;
        }
        let slot = shared.slot(server).ok()?;
        // Each count is read before what it guards: a change meanwhile
        // makes the next call decide again.
        let config_changes = slot.config_changes();
        let health_changes = slot.health_changes();
        // Read in place (a reload replaces it whole): cloned only when the
        // tool's checks are noted.
        let config = slot.config.read().unwrap_or_else(|e| e.into_inner());
        let supervisor = match shared.options.supervision {
            Some(_) => Some(slot.running_supervisor()?),
            None => None,
        };
        if config.unusable.is_some() || slot.is_backing_off() || slot.is_retired() {
            return None;
        }
        let (generation, client) = slot.conn.published()?;
        // Not in the stateless era either: `forwarding_tools` says so too.
        let tools = client.forwarding_tools()?;
        let tool = tool.trim();
        let index = tools.iter().position(|t| t.name == tool)?;
        // The pins' epoch read before the checks, and the same after them:
        // checking a tool first seen pins it (a change of the pins), so a
        // second round decides under the pins as they are then.
        let mut settled = None;
        for _ in 0..2 {
            let pins = shared.pins.epoch();
            let known =
                lock(&slot.plain).as_ref().is_some_and(|a| a.holds(&config, &tools, pins, index));
            if !known {
                if !tool_allowed(shared, &config, &tools, index) {
                    return None;
                }
                Allowed::note(&slot, Arc::clone(&config), &tools, pins, index);
            }
            if shared.pins.epoch() == pins {
                settled = Some(pins);
                break;
            }
        }
        let pins = settled?;
        drop(config);
        Some(PlainRoute {
            tools,
            index,
            slot: Arc::downgrade(&slot),
            shared: Arc::downgrade(shared),
            generation,
            config_changes,
            health_changes,
            pins,
            supervisor,
            server: slot.name.clone(),
        })
    }
}

impl PlainRoute {
    /// The tool's name on the server (the name asked for, trimmed).
    pub fn tool(&self) -> &str {
        &self.tools[self.index].name
    }

    /// A call on this route, when it still holds: nothing it was found on
    /// changed since (see [`Registry::plain_route`]). `None` otherwise:
    /// the caller finds the route again, or takes `call_tool_text`.
    pub fn call(&self) -> Option<PlainCall<'_>> {
        let slot = self.slot.upgrade()?;
        let unchanged = !slot.is_retired()
            && slot.config_changes() == self.config_changes
            && slot.health_changes() == self.health_changes
            && self.supervisor.as_ref().is_none_or(|task| !task.is_finished())
            && slot.conn.published_generation() == Some(self.generation);
        if !unchanged {
            return None;
        }
        let shared = self.shared.upgrade()?;
        if shared.pins.epoch() != self.pins {
            return None;
        }
        let (generation, client) = slot.conn.published()?;
        if generation != self.generation || !client.forwards_with(&self.tools) {
            return None;
        }
        Some(PlainCall { route: self, client, slot, shared })
    }
}

/// Whether `tools[index]` may be called plainly under `config`: visible
/// to the model (or app-only tools allowed), not withheld by pinning, the
/// call policy's tier `allow`.
fn tool_allowed(shared: &Shared, config: &ServerConfig, tools: &Arc<[Tool]>, index: usize) -> bool {
    let definition = &tools[index];
    if !shared.options.app_only_tools && !definition.is_visible_to_model() {
        return false;
    }
    if shared.pins.check_listed(config, tools, index).is_err() {
        return false;
    }
    let parts = shared.options.trust.parts();
    let decision = parts.policy.decide(
        config,
        &definition.name,
        definition.annotations.as_ref(),
        parts.managed,
    );
    decision.tier == Tier::Allow
}

/// The tools of one server's list that [`tool_allowed`] allowed, under
/// one configuration (whose tool policy the call policy reads; a reload
/// replaces it) and one epoch of the pins: what holds only while the
/// configuration, the list (a new connection or a list change gives a new
/// one) and the pins are the same. The registry's options, the rest of
/// what is checked, do not change.
#[derive(Debug)]
pub(crate) struct Allowed {
    config: Arc<ServerConfig>,
    tools: Arc<[Tool]>,
    pins: u64,
    allowed: Vec<bool>,
}

impl Allowed {
    /// Whether it was found under `config`, `tools` and the pins' epoch.
    fn under(&self, config: &Arc<ServerConfig>, tools: &Arc<[Tool]>, pins: u64) -> bool {
        Arc::ptr_eq(&self.config, config) && Arc::ptr_eq(&self.tools, tools) && self.pins == pins
    }

    /// Whether `tools[index]` was found allowed under them.
    fn holds(
        &self,
        config: &Arc<ServerConfig>,
        tools: &Arc<[Tool]>,
        pins: u64,
        index: usize,
    ) -> bool {
        self.under(config, tools, pins) && self.allowed[index]
    }

    /// Notes `tools[index]` allowed in `slot`, under what it was found.
    fn note(slot: &Slot, config: Arc<ServerConfig>, tools: &Arc<[Tool]>, pins: u64, index: usize) {
        let mut cached = lock(&slot.plain);
        if !cached.as_ref().is_some_and(|a| a.under(&config, tools, pins)) {
            let allowed = vec![false; tools.len()];
            *cached = Some(Allowed { config, tools: tools.clone(), pins, allowed });
        }
        if let Some(a) = cached.as_mut() {
            a.allowed[index] = true;
        }
    }
}

impl PlainCall<'_> {
    /// Sends the call (`arguments` as the caller's JSON text, an object,
    /// and `options` as [`call_tool_text`](Registry::call_tool_text) takes
    /// them) with no future: its outcome goes to `end`, once, on the task
    /// that ends it, as `call_tool_text` gives it (the result's text,
    /// borrowed from the answer as it was read, or the same error; a lost
    /// connection dropped first). Gives what cancels
    /// it (the server is told and `end` is dropped uncalled, unless the
    /// call ended), or the error `call_tool_text` gives when it cannot be
    /// sent.
    pub fn forward(
        self,
        arguments: Option<&RawValue>,
        mut options: RequestOptions,
        end: impl FnOnce(Result<&RawValue, Error>) + Send + 'static,
    ) -> Result<impl FnOnce() + Send + 'static, Error> {
        fit_options(&mut options, Duration::ZERO, false);
        let PlainCall { route, client, slot, shared } = self;
        let generation = route.generation;
        let failure = Failure { slot, shared, generation };
        let ended = move |outcome: Result<&RawValue, TransportError>| {
            end(outcome.map_err(|e| failure.error(e)))
        };
        match client.forward_tool_call(route.tool(), arguments, &options, ended) {
            Ok(id) => Ok(move || client.cancel_forwarded(&id)),
            // Rare: the failure's parts are found again rather than kept
            // for it on every call.
            Err(e) => match (route.slot.upgrade(), route.shared.upgrade()) {
                (Some(slot), Some(shared)) => Err(Failure { slot, shared, generation }.error(e)),
                // Retired and let go of (or the registry dropped) meanwhile.
                _ => Err(Error::Reloaded { server: route.server.clone() }),
            },
        }
    }
}

/// What maps a plain call's failure.
struct Failure {
    slot: Arc<Slot>,
    shared: Arc<Shared>,
    generation: u64,
}

impl Failure {
    /// A failure of the call, as [`Registry::call_tool_text`] gives it; a
    /// lost connection is dropped as that call drops it, before the error
    /// is given (the supervisor, or the next call, connects again), unless
    /// the connection is locked now: then from a task of its own.
    fn error(&self, source: TransportError) -> Error {
        if source.is_connection_lost() {
            match self.slot.try_drop_connection(self.generation) {
                Some(true) => super::connection_dropped(&self.slot),
                Some(false) => {}
                None => {
                    let (slot, generation) = (self.slot.clone(), self.generation);
                    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                        runtime
                            .spawn(async move { super::connection_lost(&slot, generation).await });
                    }
                }
            }
        }
        self.shared.transport_error(&self.slot.name, source)
    }
}
