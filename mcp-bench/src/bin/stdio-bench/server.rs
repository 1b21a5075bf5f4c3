//! The server a phase talks to: `mcp-testkit stdio`, or this binary's
//! fixed-reply answerer.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_bench::era::Era;
use mcp_bench::wire::Replies;

use crate::flags::Config;

/// The server a phase talks to: a program and its arguments.
#[derive(Clone)]
pub(crate) struct ServerSpec {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    /// What the tables call it.
    pub(crate) label: &'static str,
    /// The era it serves (and every client is pinned to).
    pub(crate) era: Era,
}

impl ServerSpec {
    pub(crate) fn testkit(testkit: &Path, era: Era) -> ServerSpec {
        let mut args = vec!["stdio".to_owned()];
        args.extend(era.testkit_args().iter().map(|a| (*a).to_owned()));
        ServerSpec { program: testkit.to_owned(), args, label: "mcp-testkit", era }
    }

    /// This binary's `raw-answer` mode, answering with the testkit's own
    /// reply lines.
    pub(crate) fn answerer(replies: &Replies) -> Result<ServerSpec, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut args = vec!["raw-answer".to_owned(), replies.call.clone(), replies.init.clone()];
        args.extend(replies.discover.clone());
        Ok(ServerSpec { program: exe, args, label: "fixed-reply answerer", era: replies.era })
    }

    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }
}

/// Both servers: the real one, and the fixed-reply answerer that shows
/// what the clients alone cost.
pub(crate) fn servers(config: &Config) -> Result<[ServerSpec; 2], String> {
    let replies = Replies::learn(&config.testkit, config.era)?;
    Ok([ServerSpec::answerer(&replies)?, ServerSpec::testkit(&config.testkit, config.era)])
}
