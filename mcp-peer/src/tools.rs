//! The called tool's definition, for transports that derive a call's
//! headers from it (Streamable HTTP: `Mcp-Name`, `Mcp-Param-*`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::client::{RequestOptions, ops};
use mcp_proto::types::Tool;

use crate::client::Client;
use crate::request::Plain;
use crate::sync::lock;
use crate::transport::Transport;

/// How long a failed listing keeps [`Client::tool_list_with`] from listing
/// again.
const LISTING_RETRY_AFTER: Duration = Duration::from_secs(30);

impl<T: Transport> Client<T> {
    /// The cached tool list and the index of `name` in it, listing the
    /// tools first when the cache lacks it. `None` when the listing fails
    /// or the server does not list the tool (logged).
    pub(crate) async fn tool_list_with(&self, name: &str) -> Option<(Arc<[Tool]>, usize)> {
        let (cached, generation) = {
            let core = lock(&self.inner.core);
            (core.cached_tools(), core.tools_generation())
        };
        if let Some(tools) = &cached
            && let Some(i) = tools.iter().position(|t| t.name == name)
        {
            return Some((tools.clone(), i));
        }
        {
            // Listing again for every call to a tool the list lacks (or
            // while listing fails) would double each call's round trips.
            let mut misses = lock(&self.inner.tool_misses);
            let misses = misses.at(generation);
            let failed_lately = misses.failed_at.is_some_and(|t| t.elapsed() < LISTING_RETRY_AFTER);
            if failed_lately || (cached.is_some() && misses.names.contains(name)) {
                return None;
            }
        }
        match ops::list_tools_fresh(&Plain(self), RequestOptions::default()).await {
            Ok(tools) => match tools.iter().position(|t| t.name == name) {
                Some(i) => Some((tools, i)),
                None => {
                    tracing::debug!(server = %self.name(), tool = name, "the server does not list the tool");
                    lock(&self.inner.tool_misses).at(generation).names.insert(name.to_owned());
                    None
                }
            },
            Err(e) => {
                tracing::debug!(server = %self.name(), error = %e, "listing the tools failed");
                lock(&self.inner.tool_misses).at(generation).failed_at = Some(Instant::now());
                None
            }
        }
    }
}
