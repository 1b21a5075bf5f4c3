//! The commands, one file each (or one per group of subcommands), and the
//! dispatch. A command file uses what every command shares (`ctx`) and
//! prints through `output`; it never uses another command's file.

mod call;
mod complete;
mod info;
mod listen;
pub(crate) mod login;
mod ping;
mod prompts;
mod resources;
mod schemas;
mod servers;
mod tasks;
mod tools;

use crate::cli::{Command, PinsCommand};
use crate::ctx::Ctx;
use crate::failure::Failure;

/// Runs the command; the exit code, or the failure to report.
pub(crate) async fn execute(ctx: &Ctx<'_>, command: &Command) -> Result<u8, Failure> {
    match command {
        Command::Servers { connect } => servers::servers(ctx, *connect).await,
        Command::Tools { server, schema_for: Some(target), .. } => {
            schemas::schemas(ctx, server.as_deref(), target.target()).await
        }
        Command::Tools { server, search: Some(query), limit, .. } => {
            tools::search(ctx, server.as_deref(), query, *limit).await
        }
        Command::Tools { server, search: None, .. } => tools::tools(ctx, server.as_deref()).await,
        Command::Pins(PinsCommand::Approve { server, tool }) => {
            tools::approve_pins(ctx, server, tool.as_deref()).await
        }
        Command::Call(args) => {
            let call = call::prepare(ctx, args).await?;
            if args.task {
                tasks::start(ctx, &call.server, &call.tool, call.arguments, args.detach).await
            } else {
                call::call(ctx, call).await
            }
        }
        Command::Ping { server } => ping::ping(ctx, server.as_deref()).await,
        Command::Info { server } => info::info(ctx, server.as_deref()).await,
        Command::Resources(c) => resources::resources(ctx, c).await,
        Command::Prompts(c) => prompts::prompts(ctx, c).await,
        Command::Complete(c) => complete::complete(ctx, c).await,
        Command::Tasks(c) => tasks::tasks(ctx, c).await,
        Command::Listen { server, resources } => {
            listen::listen(ctx, server.as_deref(), resources).await
        }
        Command::Login { server, headless, .. } => login::login(ctx, server, *headless).await,
        Command::Logout { server, .. } => login::logout(ctx, server.as_deref()).await,
        Command::Accounts { action: Some(crate::cli::AccountsCommand::Migrate { to }), .. } => {
            login::migrate(ctx, *to)
        }
        Command::Accounts { server, action: None } => login::accounts(ctx, server.as_deref()),
        // Handled before the registry is built (`serve` beside the commands).
        Command::Completions { .. }
        | Command::DemoServer
        | Command::Trust { .. }
        | Command::Add { .. }
        | Command::Serve { .. } => Ok(0),
    }
}
