//! `http-bench`'s flags: what a run measures, on which servers, in which
//! era, and how many calls.

use std::path::PathBuf;

use mcp_bench::args::{has, value_of};
use mcp_bench::era::Era;
use mcp_bench::proc::testkit_path;

/// What a run was asked for.
pub(crate) struct Config {
    pub(crate) quick: bool,
    pub(crate) testkit: PathBuf,
    /// `--reply json|sse` limits the run to one reply mode.
    pub(crate) replies: Vec<&'static str>,
    /// `--server-threads N`: the throughput server's worker threads
    /// (`mcp-testkit http --threads N`; 1 by default).
    pub(crate) server_threads: usize,
    /// `--era legacy|modern`: the era of `seq`, `throughput` and `--profile`.
    pub(crate) era: Era,
    /// `--fast-sse`: the server answers SSE without the stall (a testkit
    /// with TCP_NODELAY), so SSE gets the full counts.
    pub(crate) fast_sse: bool,
    /// `--only answerer|testkit` limits `seq` and `throughput` to one server.
    pub(crate) servers: Vec<Server>,
    /// `--placement same|split`: where `--profile` puts the client and the
    /// server (left to the scheduler by default).
    pub(crate) placement: Placement,
}

/// Where a `--profile` run puts the client's thread and the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Left to the scheduler.
    Free,
    /// Both on CPU 0: every wake-up is a switch on one CPU.
    Same,
    /// The client on CPU 0, the server on CPU 1: every wake-up crosses
    /// CPUs, and the client's CPU runs whatever else there is while it
    /// waits.
    Split,
}

impl Placement {
    fn from_args(args: &[String]) -> Result<Placement, String> {
        match value_of(args, "--placement") {
            None => Ok(Placement::Free),
            Some("same") => Ok(Placement::Same),
            Some("split") => Ok(Placement::Split),
            Some(other) => Err(format!("--placement same|split, not {other}")),
        }
    }
}

/// The server of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    /// This binary's `answer` mode: the testkit's own reply bytes, only the
    /// id spliced in; what the clients alone cost.
    Answerer,
    /// `mcp-testkit http`: the real server, its JSON work in every call.
    Testkit,
}

impl Server {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Server::Answerer => "fixed-reply answerer",
            Server::Testkit => "mcp-testkit",
        }
    }
}

impl Config {
    /// The flags among `args`.
    pub(crate) fn from_args(args: &[String]) -> Result<Config, String> {
        let replies = match value_of(args, "--reply") {
            Some("json") => vec!["json"],
            Some("sse") => vec!["sse"],
            _ => vec!["json", "sse"],
        };
        let server_threads = value_of(args, "--server-threads")
            .and_then(|n| n.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(1);
        Ok(Config {
            quick: has(args, "--quick"),
            testkit: testkit_path(args),
            replies,
            server_threads,
            era: Era::from_args(args)?,
            fast_sse: has(args, "--fast-sse"),
            servers: match value_of(args, "--only") {
                Some("answerer") => vec![Server::Answerer],
                Some("testkit") => vec![Server::Testkit],
                _ => vec![Server::Answerer, Server::Testkit],
            },
            placement: Placement::from_args(args)?,
        })
    }

    /// Sequential: calls per round, rounds, warm-up calls, pinned phases.
    pub(crate) fn seq_counts(
        &self,
        reply: &str,
        server: Server,
    ) -> (usize, usize, usize, &'static [bool]) {
        // The answerer sets TCP_NODELAY: its SSE replies never stall.
        let reply = if server == Server::Answerer { "json" } else { reply };
        match (self.quick, reply) {
            // The smoke only checks that everything runs; SSE replies may
            // stall (see below), so it makes very few of them.
            (true, "sse") => (10, 1, 5, &[true, false]),
            (true, _) => (50, 1, 20, &[true, false]),
            // SSE replies of the stock testkit stall ~40 ms on some
            // connections (see BENCHMARKS.md): fewer calls, unpinned only.
            (false, "sse") if !self.fast_sse => (300, 3, 50, &[false]),
            _ => (3_000, 5, 500, &[true, false]),
        }
    }

    /// Throughput: calls per client per depth per round, rounds.
    pub(crate) fn thr_counts(&self, reply: &str, server: Server) -> (usize, usize) {
        let reply = if server == Server::Answerer { "json" } else { reply };
        match (self.quick, reply) {
            (true, "sse") => (64, 1),
            (true, _) => (128, 1),
            (false, "sse") if !self.fast_sse => (256, 3),
            _ => (4_096, 5),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Placement;

    #[test]
    fn placement_is_read_from_its_flag() {
        let table: [(&[&str], Result<Placement, ()>); 6] = [
            (&["--profile", "start", "10"], Ok(Placement::Free)),
            (&["--placement", "same", "--profile", "start"], Ok(Placement::Same)),
            (&["--profile", "start", "--placement", "split"], Ok(Placement::Split)),
            (&["--placement", "both"], Err(())),
            (&["--placement", "Split"], Err(())),
            (&["--placement"], Ok(Placement::Free)),
        ];
        for (args, want) in table {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            assert_eq!(Placement::from_args(&args).map_err(|_| ()), want, "{args:?}");
        }
    }
}
