//! Tool calls whose results are sized for a model
//! ([`crate::sizing`]): the server's limits, its `_meta` requests, the
//! spill directory.

use mcp_proto::client::RequestOptions;
use mcp_proto::types::JsonObject;

use super::Registry;
use crate::error::Error;
use crate::sizing::{ResultLimits, SizedResult, size_result};

impl Registry {
    /// The result limits of a server: its `max_result_chars` and
    /// `max_result_bytes` where set, else
    /// [`RegistryOptions::result_limits`](crate::RegistryOptions::result_limits).
    pub fn result_limits(&self, server: &str) -> Result<ResultLimits, Error> {
        let config = self.slot(server)?.config();
        let mut limits = self.shared.options.result_limits;
        if let Some(n) = config.max_result_chars {
            limits.max_chars = n;
        }
        if let Some(n) = config.max_result_bytes {
            limits.max_binary_bytes = n;
        }
        Ok(limits)
    }

    /// Calls a tool as [`call_tool_with`](Self::call_tool_with) does, then
    /// sizes its result for a model under the server's
    /// [`result_limits`](Self::result_limits): a result within them comes
    /// back unchanged; a larger one is cut, its whole kept in
    /// [`RegistryOptions::spill`](crate::RegistryOptions::spill) when set,
    /// and the cut result ends with a notice saying what was left out and
    /// where the whole went (see [`crate::sizing`]). The tool's
    /// `_meta["anthropic/maxResultSizeChars"]` (or the result's) raises the
    /// text limit up to [`ResultLimits::max_requested_chars`].
    pub async fn call_tool_sized(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<SizedResult, Error> {
        let limits = self.result_limits(server)?;
        let result = self.call_tool_with(server, tool, arguments, options).await?;
        let tool = tool.trim().to_owned();
        // The definition was listed (and cached) by the call itself.
        let definition = match self.list_tools(server).await {
            Ok(tools) => tools.into_iter().find(|t| t.name == tool),
            Err(_) => None,
        };
        let spill = self.shared.options.spill.clone();
        let name = server.to_owned();
        // Writing a spill file is blocking I/O.
        let sized = tokio::task::spawn_blocking(move || {
            size_result(&name, &tool, definition.as_ref(), result, &limits, spill.as_ref())
        })
        .await;
        match sized {
            Ok(sized) => Ok(sized),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Only a runtime shutting down cancels a blocking task.
            Err(_) => Err(Error::Closed { server: server.to_owned() }),
        }
    }
}
