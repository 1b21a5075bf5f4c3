//! `stdio-bench`'s flags: quick or full counts, the testkit, the era.

use std::path::PathBuf;

use mcp_bench::args::has;
use mcp_bench::era::Era;
use mcp_bench::proc::testkit_path;

/// What a run was asked for.
pub(crate) struct Config {
    pub(crate) quick: bool,
    pub(crate) testkit: PathBuf,
    pub(crate) era: Era,
}

impl Config {
    /// The flags among `args`.
    pub(crate) fn from_args(args: &[String]) -> Result<Config, String> {
        Ok(Config {
            quick: has(args, "--quick"),
            testkit: testkit_path(args),
            era: Era::from_args(args)?,
        })
    }
}
