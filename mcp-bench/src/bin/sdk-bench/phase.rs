//! One phase (a transport, an era, a server): its server started, ours
//! and each SDK's script run in turn over the rounds, their medians.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use mcp_bench::era::Era;
use mcp_bench::proc::{HttpServer, beside, cpu_time, pin, unpin};
use mcp_bench::report::{median_f64, quantile_us};
use mcp_bench::wire::Replies;

use crate::era_label;
use crate::flags::{Config, ServerKind, Transport, counts};
use crate::ours::{connect_ours, run_ours};

/// The contenders, in the order of every table.
pub(crate) const NAMES: [&str; 3] = ["ours", "TypeScript SDK", "Python SDK"];

/// One contender's medians over the rounds of a phase.
#[derive(Default)]
pub(crate) struct Medians {
    pub(crate) name: &'static str,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) rate: f64,
    pub(crate) cpu: f64,
    /// The runtime a script reported (`Node.js 22.x`, `Python 3.x`).
    pub(crate) runtime: String,
}

/// One run of one contender.
#[derive(Clone, Copy, Default)]
pub(crate) struct Run {
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) rate: f64,
    pub(crate) cpu: f64,
}

/// One transport, era and server.
pub(crate) struct Phase<'a> {
    pub(crate) config: &'a Config,
    pub(crate) transport: Transport,
    pub(crate) era: Era,
    pub(crate) server: ServerKind,
    pub(crate) replies: &'a Replies,
}

/// A stdio server command, or an HTTP server already listening.
pub(crate) enum Target {
    Stdio(PathBuf, Vec<String>),
    Http(HttpServer),
}

impl Phase<'_> {
    /// The server of this phase: for stdio the command each client spawns,
    /// for HTTP a server started now (under the affinity of the phase).
    fn target(&self) -> Result<Target, String> {
        let r = self.replies;
        match (self.transport, self.server) {
            (Transport::Stdio, ServerKind::Testkit) => {
                let mut args = vec!["stdio".to_owned()];
                args.extend(self.era.testkit_args().iter().map(|a| (*a).to_owned()));
                Ok(Target::Stdio(self.config.testkit.clone(), args))
            }
            (Transport::Stdio, ServerKind::Answerer) => {
                let discover = r.discover.clone().unwrap_or_else(|| "-".to_owned());
                let args = vec![
                    "raw-answer".to_owned(),
                    r.call.clone(),
                    r.init.clone(),
                    discover,
                    r.list.clone(),
                ];
                Ok(Target::Stdio(beside("stdio-bench")?, args))
            }
            (Transport::Http, ServerKind::Testkit) => {
                let mut args = vec!["--reply", "json"];
                args.extend(self.era.testkit_args());
                Ok(Target::Http(HttpServer::start(&self.config.testkit, &args)?))
            }
            (Transport::Http, ServerKind::Answerer) => {
                let mut command = Command::new(beside("http-bench")?);
                command.args(["answer", "json"]).args([
                    if self.era == Era::Legacy { r.init.as_str() } else { "-" },
                    r.discover.as_deref().unwrap_or("-"),
                    r.list.as_str(),
                    r.call.as_str(),
                ]);
                Ok(Target::Http(HttpServer::spawn(command)?))
            }
        }
    }

    /// Every contender's medians with `depth` calls in flight (1: pinned,
    /// sequential; more: unpinned).
    pub(crate) fn measure(&self, depth: usize) -> Result<[Medians; 3], String> {
        pin(depth == 1)?;
        let result = self.measure_with(depth);
        unpin()?;
        result
    }

    fn measure_with(&self, depth: usize) -> Result<[Medians; 3], String> {
        let ((seq, seq_warm), (thr, thr_warm), rounds) = counts(self.config.quick, self.transport);
        let (calls, warm) = if depth == 1 { (seq, seq_warm) } else { (thr, thr_warm) };
        let target = self.target()?;
        let rt = mcp_bench::runtime();
        let ours = rt.block_on(connect_ours(&target, self.era))?;
        rt.block_on(run_ours(&ours, warm, depth, None));
        let mut runs: [Vec<Run>; 3] = Default::default();
        let mut runtimes = [String::new(), String::new(), String::new()];
        for round in 0..rounds {
            eprintln!(
                "sdk-bench: {} {} {}, {} in flight, round {}/{rounds}",
                self.transport.label(),
                era_label(self.era),
                self.server.label(),
                depth,
                round + 1
            );
            let mut lat = Vec::with_capacity(if depth == 1 { calls } else { 0 });
            let cpu0 = cpu_time();
            let start = Instant::now();
            let done = rt.block_on(run_ours(&ours, calls, depth, (depth == 1).then_some(&mut lat)));
            let wall = start.elapsed();
            let cpu = cpu_time().saturating_sub(cpu0);
            runs[0].push(Run {
                p50: quantile_us(&mut lat, 0.5),
                p99: quantile_us(&mut lat, 0.99),
                rate: done as f64 / wall.as_secs_f64().max(1e-9),
                cpu: cpu.as_secs_f64() * 1e6 / done.max(1) as f64,
            });
            for which in 1..3 {
                let (run, runtime) = self.script(which, &target, calls, warm, depth)?;
                runs[which].push(run);
                runtimes[which] = runtime;
            }
        }
        rt.block_on(async {
            ours.close().await;
        });
        drop(target);
        let med = |v: &[Run], f: fn(&Run) -> f64| median_f64(&v.iter().map(f).collect::<Vec<_>>());
        let mut out: [Medians; 3] = Default::default();
        for (which, o) in out.iter_mut().enumerate() {
            *o = Medians {
                name: NAMES[which],
                p50: med(&runs[which], |r| r.p50),
                p99: med(&runs[which], |r| r.p99),
                rate: med(&runs[which], |r| r.rate),
                cpu: med(&runs[which], |r| r.cpu),
                runtime: std::mem::take(&mut runtimes[which]),
            };
        }
        Ok(out)
    }
}
