//! `sdk-bench`'s flags (where the testkit, Node.js, Python and the two
//! scripts are) and what a phase measures: the transports, the servers,
//! the counts.

use std::path::PathBuf;

use mcp_bench::args::{has, value_of};
use mcp_bench::proc::testkit_path;

use crate::DEPTH;

/// Where everything is.
pub(crate) struct Config {
    pub(crate) quick: bool,
    pub(crate) testkit: PathBuf,
    pub(crate) node: PathBuf,
    pub(crate) ts_script: PathBuf,
    pub(crate) python: PathBuf,
    pub(crate) py_script: PathBuf,
}

impl Config {
    /// The flags among `args`.
    pub(crate) fn from_args(args: &[String]) -> Result<Config, String> {
        Ok(Config {
            quick: has(args, "--quick"),
            testkit: testkit_path(args),
            node: arg(args, "--node")?,
            ts_script: arg(args, "--ts-script")?,
            python: arg(args, "--python")?,
            py_script: arg(args, "--py-script")?,
        })
    }
}

fn arg(args: &[String], name: &str) -> Result<PathBuf, String> {
    value_of(args, name).map(PathBuf::from).ok_or_else(|| format!("{name} is required\n{USAGE}"))
}

const USAGE: &str = "usage: sdk-bench [--quick] [--server PATH] --node NODE --ts-script FILE --python PYTHON --py-script FILE";

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "Streamable HTTP",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerKind {
    Answerer,
    Testkit,
}

impl ServerKind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            ServerKind::Answerer => "fixed-reply answerer",
            ServerKind::Testkit => "mcp-testkit",
        }
    }
}

/// Calls per run, warm-up calls, rounds: sequential, then in flight.
pub(crate) fn counts(quick: bool, transport: Transport) -> ((usize, usize), (usize, usize), usize) {
    match (quick, transport) {
        (true, _) => ((20, 5), (DEPTH, DEPTH), 1),
        (false, Transport::Stdio) => ((2_000, 200), (4_096, 256), 3),
        (false, Transport::Http) => ((500, 100), (1_024, 128), 3),
    }
}
