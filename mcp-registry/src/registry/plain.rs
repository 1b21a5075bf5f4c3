//! A plain call: one that every check of [`Registry::call_tool_text`]
//! allows now, decided with no I/O and no wait, so a host may forward it
//! on the connection with no future of its own
//! ([`mcp_peer::Client::forward_tool_call`]).

use std::sync::Arc;

use super::shared::Shared;
use super::slot::Slot;
use super::{Registry, calls, is_modern};
use crate::error::{Error, TransportError};
use crate::supervisor::Health;
use crate::transport::ServerClient;
use crate::trust::approval::Tier;

/// A call to a server's tool that every check allows now (see
/// [`Registry::plain_call`]): its connection, and what maps its errors.
pub struct PlainCall {
    /// The connection the call goes out on.
    pub client: ServerClient,
    /// The tool's name on the server.
    pub tool: String,
    slot: Arc<Slot>,
    shared: Arc<Shared>,
    generation: u64,
}

impl std::fmt::Debug for PlainCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainCall").field("server", &self.slot.name).finish_non_exhaustive()
    }
}

impl Registry {
    /// The connection a call of `tool` on `server` goes out on when every
    /// check [`call_tool_text`](Self::call_tool_text) makes passes now
    /// without I/O or a wait: the server usable and connected in the
    /// handshake era (not backing off), its tool list kept, the tool
    /// listed, visible to the model and not withheld by pinning, the call
    /// policy's tier `allow` (no approver to ask); no audit log (whose line
    /// is written when a call ends). `None` otherwise: the call then takes
    /// `call_tool_text`, which says why it fails, waits or asks.
    pub fn plain_call(&self, server: &str, tool: &str) -> Option<PlainCall> {
        let shared = &self.shared;
        if shared.options.trust.audit.is_some() {
            return None;
        }
        let slot = shared.slot(server).ok()?;
        let config = slot.config();
        if config.unusable.is_some() || matches!(slot.health(), Health::BackingOff { .. }) {
            return None;
        }
        let (generation, client) = {
            let cached = slot.conn.try_lock().ok()?;
            let (generation, client, _) = cached.as_ref()?;
            (*generation, client.clone())
        };
        if is_modern(&client) {
            return None;
        }
        let tool = tool.trim();
        let tools = calls::cached_tools(&client)?;
        let index = tools.iter().position(|t| t.name == tool)?;
        let definition = &tools[index];
        if !shared.options.app_only_tools && !definition.is_visible_to_model() {
            return None;
        }
        shared.pins.check_listed(&config, &tools, index).ok()?;
        let parts = shared.options.trust.parts();
        let decision =
            parts.policy.decide(&config, tool, definition.annotations.as_ref(), parts.managed);
        if decision.tier != Tier::Allow {
            return None;
        }
        Some(PlainCall { client, tool: tool.to_owned(), slot, shared: shared.clone(), generation })
    }
}

impl PlainCall {
    /// A failure of the call, as [`Registry::call_tool_text`] gives it; a
    /// lost connection is dropped as that call drops it (the supervisor, or
    /// the next call, connects again), in a task of its own.
    pub fn error(&self, source: TransportError) -> Error {
        if source.is_connection_lost() {
            let (slot, generation) = (self.slot.clone(), self.generation);
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { super::connection_lost(&slot, generation).await });
            }
        }
        self.shared.transport_error(&self.slot.name, source)
    }
}
