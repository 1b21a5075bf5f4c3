//! The three contenders of a `seq` or `throughput` phase: ours, rmcp and
//! the raw pipe, each with its own server, measured in turn.

use std::time::{Duration, Instant};

use mcp_bench::theirs::{self, Rmcp};
use mcp_bench::{ours, runtime};
use mcp_client_stdio::StdioClient;
use tokio::runtime::Runtime;

use crate::clients::{spawn_ours, spawn_rmcp};
use crate::raw::{Pipe, raw_pipe, request_line};
use crate::server::ServerSpec;

/// The contenders, in the order of every table.
pub(crate) const NAMES: [&str; 3] = ["mcp-stdio (ours)", "rmcp", "raw pipe"];

/// The three contenders of one phase, each with its own server.
pub(crate) struct Contenders {
    rt: Runtime,
    ours: StdioClient,
    rmcp: Rmcp,
    raw: Pipe,
    /// The raw pipe's request line.
    request: String,
}

impl Contenders {
    pub(crate) fn start(server: &ServerSpec) -> Result<Contenders, String> {
        let rt = runtime();
        let ours = rt.block_on(spawn_ours(server))?;
        let rmcp = rt.block_on(spawn_rmcp(server))?;
        let raw = raw_pipe(server)?;
        Ok(Contenders { rt, ours, rmcp, raw, request: request_line(server.era) })
    }

    /// `n` sequential calls of contender `which`, each timed into `lat`.
    pub(crate) fn sequential(
        &mut self,
        which: usize,
        n: usize,
        lat: &mut Vec<Duration>,
    ) -> Result<(), String> {
        match which {
            0 => self.rt.block_on(ours::timed_echoes(&self.ours, n, lat)),
            1 => self.rt.block_on(theirs::timed_echoes(self.rmcp.peer(), n, lat)),
            _ => {
                let request = &self.request;
                for _ in 0..n {
                    let start = Instant::now();
                    self.raw.send(request)?;
                    self.raw.receive()?;
                    lat.push(start.elapsed());
                }
            }
        }
        Ok(())
    }

    /// `n` calls with `depth` in flight; the time they took.
    pub(crate) fn in_flight(
        &mut self,
        which: usize,
        n: usize,
        depth: usize,
    ) -> Result<Duration, String> {
        let start = Instant::now();
        let per_worker = n / depth;
        match which {
            0 => self.rt.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for _ in 0..depth {
                    set.spawn(ours::echoes(self.ours.clone(), per_worker));
                }
                while let Some(done) = set.join_next().await {
                    done.expect("an ours worker panicked");
                }
            }),
            1 => self.rt.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for _ in 0..depth {
                    set.spawn(theirs::echoes(self.rmcp.peer().clone(), per_worker));
                }
                while let Some(done) = set.join_next().await {
                    done.expect("an rmcp worker panicked");
                }
            }),
            _ => {
                // Pipelined: keep `depth` lines outstanding.
                let request = self.request.clone();
                let total = per_worker * depth;
                let mut sent = 0;
                while sent < depth.min(total) {
                    self.raw.send(&request)?;
                    sent += 1;
                }
                for _ in 0..total {
                    self.raw.receive()?;
                    if sent < total {
                        self.raw.send(&request)?;
                        sent += 1;
                    }
                }
            }
        }
        Ok(start.elapsed())
    }

    pub(crate) fn close(self) {
        let Contenders { rt, ours, rmcp, raw, .. } = self;
        rt.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), ours.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp.cancel()).await;
        });
        drop(raw);
    }
}
