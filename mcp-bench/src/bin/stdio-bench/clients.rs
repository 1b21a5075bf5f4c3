//! The two clients of `stdio-bench`, spawned as every mode spawns them:
//! ours (`mcp-client-stdio`) and rmcp's child-process client.

use mcp_bench::ours;
use mcp_bench::theirs::{self, Rmcp};
use mcp_client_stdio::StdioClient;
use mcp_client_stdio::mcp_peer::EraChoice;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

use crate::server::ServerSpec;

pub(crate) async fn spawn_ours(server: &ServerSpec) -> Result<StdioClient, String> {
    spawn_ours_with(server, None).await
}

/// Ours, pinned to the server's era unless `choice` says otherwise.
pub(crate) async fn spawn_ours_with(
    server: &ServerSpec,
    choice: Option<EraChoice>,
) -> Result<StdioClient, String> {
    ours::spawn_program(&server.program, &server.args, choice.unwrap_or(server.era.choice())).await
}

pub(crate) async fn spawn_rmcp(server: &ServerSpec) -> Result<Rmcp, String> {
    let command = tokio::process::Command::new(&server.program).configure(|c| {
        c.args(&server.args);
    });
    let transport = TokioChildProcess::new(command).map_err(|e| format!("rmcp: spawn: {e}"))?;
    theirs::serve(transport, server.era, "rmcp").await
}
