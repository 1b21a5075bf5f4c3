//! The four contenders of a `seq` or `throughput` phase on one server:
//! ours, rmcp default, rmcp pooled and raw hyper, each measured in turn.

use std::process::Command;
use std::time::{Duration, Instant};

use mcp_bench::proc::HttpServer;
use mcp_bench::theirs::{self, Rmcp};
use mcp_bench::{ours, runtime};
use mcp_http::HttpClient;
use rmcp::RoleClient;
use tokio::runtime::Runtime;

use crate::answer::Replies;
use crate::clients::{connect_ours, connect_rmcp_default, connect_rmcp_pooled, pooled_reqwest};
use crate::flags::{Config, Server};
use crate::raw::{Raw, RawCaller};

/// The contenders, in the order of every table.
pub(crate) const NAMES: [&str; 4] = ["mcp-http (ours)", "rmcp default", "rmcp pooled", "raw hyper"];

/// The four contenders of one phase, on one server.
pub(crate) struct Contenders {
    rt: Runtime,
    pub(crate) server: HttpServer,
    ours: HttpClient,
    rmcp_default: Rmcp,
    rmcp_pooled: Rmcp,
    raw: Raw,
}

impl Contenders {
    /// Starts the server of the phase and connects the four to it.
    pub(crate) fn start(
        config: &Config,
        server: Server,
        reply: &str,
        threads: usize,
        replies: &Replies,
    ) -> Result<Contenders, String> {
        let era = config.era;
        let server = match server {
            Server::Testkit => {
                let threads = threads.to_string();
                let mut args = vec!["--reply", reply, "--threads", &threads];
                args.extend(era.testkit_args());
                HttpServer::start(&config.testkit, &args)?
            }
            Server::Answerer => {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let mut command = Command::new(exe);
                command.args([
                    "answer",
                    reply,
                    &replies.init,
                    &replies.discover,
                    &replies.list,
                    &replies.call,
                ]);
                HttpServer::spawn(command)?
            }
        };
        let rt = runtime();
        let url = server.url.clone();
        let (ours, rmcp_default, rmcp_pooled, raw) = rt.block_on(async {
            Ok::<_, String>((
                connect_ours(&url, era).await?,
                connect_rmcp_default(&url, era).await?,
                connect_rmcp_pooled(&url, pooled_reqwest(), era).await?,
                Raw::connect(&url, era).await?,
            ))
        })?;
        Ok(Contenders { rt, server, ours, rmcp_default, rmcp_pooled, raw })
    }

    fn rmcp(&self, which: usize) -> &Rmcp {
        if which == 1 { &self.rmcp_default } else { &self.rmcp_pooled }
    }

    /// `n` sequential calls of contender `which`, each timed into `lat`.
    pub(crate) fn sequential(&mut self, which: usize, n: usize, lat: &mut Vec<Duration>) {
        match which {
            0 => self.rt.block_on(ours::timed_echoes(&self.ours, n, lat)),
            1 | 2 => self.rt.block_on(theirs::timed_echoes(self.rmcp(which).peer(), n, lat)),
            _ => {
                let mut caller = self.raw.caller(0);
                self.rt.block_on(async {
                    for _ in 0..n {
                        let start = Instant::now();
                        caller.call().await;
                        lat.push(start.elapsed());
                    }
                });
                self.raw.give_back(caller);
            }
        }
    }

    /// `n` calls of contender `which` with `depth` in flight; the time
    /// they took.
    pub(crate) fn in_flight(
        &mut self,
        which: usize,
        n: usize,
        depth: usize,
    ) -> Result<Duration, String> {
        let per_worker = n / depth;
        if which == 3 {
            self.rt.block_on(self.raw.ensure_connections(depth))?;
        }
        enum Worker {
            Ours(HttpClient),
            Rmcp(rmcp::Peer<RoleClient>),
            Raw(RawCaller),
        }
        let workers: Vec<Worker> = (0..depth)
            .map(|w| match which {
                0 => Worker::Ours(self.ours.clone()),
                1 | 2 => Worker::Rmcp(self.rmcp(which).peer().clone()),
                _ => Worker::Raw(self.raw.caller(w)),
            })
            .collect();
        let start = Instant::now();
        let returned = self.rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for worker in workers {
                set.spawn(async move {
                    match worker {
                        Worker::Ours(client) => {
                            for _ in 0..per_worker {
                                ours::echo_or_panic(&client).await;
                            }
                            None
                        }
                        Worker::Rmcp(peer) => {
                            for _ in 0..per_worker {
                                theirs::echo_or_panic(&peer).await;
                            }
                            None
                        }
                        Worker::Raw(mut caller) => {
                            for _ in 0..per_worker {
                                caller.call().await;
                            }
                            Some(caller)
                        }
                    }
                });
            }
            let mut back = Vec::new();
            while let Some(done) = set.join_next().await {
                back.extend(done.expect("a worker panicked"));
            }
            back
        });
        let time = start.elapsed();
        for caller in returned {
            self.raw.give_back(caller);
        }
        Ok(time)
    }

    /// Closes every client, then stops the server.
    pub(crate) fn close(self) {
        let Contenders { rt, server: _server, ours, rmcp_default, rmcp_pooled, raw } = self;
        rt.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), ours.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp_default.cancel()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), rmcp_pooled.cancel()).await;
            drop(raw);
        });
        drop(rt);
    }
}
