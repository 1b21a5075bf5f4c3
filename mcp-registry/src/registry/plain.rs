//! A plain call: one that every check of [`Registry::call_tool_text`]
//! allows now, decided with no I/O and no wait, so a host may forward it
//! on the connection with no future of its own
//! ([`mcp_peer::Client::forward_tool_call`]).

use std::sync::Arc;
use std::time::Duration;

use mcp_proto::client::RequestOptions;
use mcp_proto::types::Tool;
use serde_json::value::RawValue;

use super::shared::Shared;
use super::slot::{Slot, lock};
use super::tool_call::fit_options;
use super::{Registry, calls};
use crate::config::ServerConfig;
use crate::error::{Error, TransportError};
use crate::supervisor::Health;
use crate::transport::ServerClient;
use crate::trust::approval::Tier;

/// A call of a server's tool that every check allows now (see
/// [`Registry::plain_call`]), to [`forward`](PlainCall::forward).
pub struct PlainCall {
    /// The connection the call goes out on: one that
    /// [`forwards_plainly`](mcp_peer::Client::forwards_plainly).
    client: ServerClient,
    /// The server's tool list, the tool at `index`.
    tools: Arc<[Tool]>,
    index: usize,
    slot: Arc<Slot>,
    shared: Arc<Shared>,
    generation: u64,
}

impl std::fmt::Debug for PlainCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainCall")
            .field("server", &self.slot.name)
            .field("tool", &self.tool())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// The call of `tool` on `server` when every check
    /// [`call_tool_text`](Self::call_tool_text) makes passes now, with no
    /// I/O and no wait: no audit log (whose line is written when a call
    /// ends); the server usable, connected (its connection not being
    /// changed now) in the handshake era on a connection that
    /// [`forwards_plainly`](mcp_peer::Client::forwards_plainly), not
    /// backing off, its supervisor running when supervision is on; its
    /// tool list kept, the tool listed, visible to the model (or app-only
    /// tools allowed), not withheld by pinning; the call policy's tier
    /// `allow` (no approver to ask, no rule or list refusing it). `None`
    /// otherwise: the call then takes `call_tool_text`, which says why it
    /// fails, waits, connects or asks.
    pub fn plain_call(&self, server: &str, tool: &str) -> Option<PlainCall> {
        let shared = &self.shared;
        if shared.options.trust.audit.is_some() {
            return None;
        }
        let slot = shared.slot(server).ok()?;
        // Read in place (a reload replaces it whole): cloned only when the
        // tool's checks are noted.
        let config = slot.config.read().unwrap_or_else(|e| e.into_inner());
        if config.unusable.is_some()
            || matches!(slot.health(), Health::BackingOff { .. })
            || (shared.options.supervision.is_some() && !slot.is_supervised())
        {
            return None;
        }
        let (generation, client) = {
            let cached = slot.conn.try_lock().ok()?;
            let (generation, client, _) = cached.as_ref()?;
            (*generation, client.clone())
        };
        // Not in the stateless era either: `forwards_plainly` says so too.
        if !client.forwards_plainly() {
            return None;
        }
        let tool = tool.trim();
        let tools = calls::cached_tools(&client)?;
        let index = tools.iter().position(|t| t.name == tool)?;
        // Read before the checks: a pin changed meanwhile makes the next
        // call check again.
        let pins = shared.pins.epoch();
        let known =
            lock(&slot.plain).as_ref().is_some_and(|a| a.holds(&config, &tools, pins, index));
        if !known {
            if !tool_allowed(shared, &config, &tools, index) {
                return None;
            }
            Allowed::note(&slot, Arc::clone(&config), &tools, pins, index);
        }
        drop(config);
        Some(PlainCall { client, tools, index, slot, shared: shared.clone(), generation })
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

impl PlainCall {
    /// The tool's name on the server (the name asked for, trimmed).
    pub fn tool(&self) -> &str {
        &self.tools[self.index].name
    }

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
        let PlainCall { client, tools, index, slot, shared, generation } = self;
        let failure = Failure { slot, shared, generation };
        let ended = {
            let failure = failure.clone();
            move |outcome: Result<&RawValue, TransportError>| {
                end(outcome.map_err(|e| failure.error(e)))
            }
        };
        match client.forward_tool_call(&tools[index].name, arguments, &options, ended) {
            Ok(id) => Ok(move || client.cancel_forwarded(&id)),
            Err(e) => Err(failure.error(e)),
        }
    }
}

/// What maps a plain call's failure.
#[derive(Clone)]
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
