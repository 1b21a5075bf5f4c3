//! `stdio-bench throughput`: 1, 16 and 64 calls in flight, unpinned.

use mcp_bench::proc::unpin;
use mcp_bench::report::{median_f64, rate, ratio};

use crate::contenders::Contenders;
use crate::era_note;
use crate::flags::Config;
use crate::server::servers;

pub(crate) fn throughput(config: &Config) -> Result<String, String> {
    unpin()?;
    let (calls, rounds) = if config.quick { (256, 1) } else { (16_384, 5) };
    let depths = [1usize, 16, 64];
    let mut table = String::from(
        "| server | in flight | mcp-stdio (ours) calls/s | rmcp calls/s | raw pipe calls/s | ours / rmcp | ours / raw |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for server in servers(config)? {
        let mut c = Contenders::start(&server)?;
        for which in 0..3 {
            for &depth in &depths {
                c.in_flight(which, 1024.min(calls), depth)?;
            }
        }
        // rates[depth][contender], one per round
        let mut rates = vec![vec![Vec::new(); 3]; depths.len()];
        for round in 0..rounds {
            eprintln!("stdio-bench: throughput, {}, round {}/{rounds}", server.label, round + 1);
            for (d, &depth) in depths.iter().enumerate() {
                for (which, per_client) in rates[d].iter_mut().enumerate() {
                    let time = c.in_flight(which, calls, depth)?;
                    per_client.push((calls / depth * depth) as f64 / time.as_secs_f64());
                }
            }
        }
        c.close();
        for (d, depth) in depths.iter().enumerate() {
            let m: Vec<f64> = rates[d].iter().map(|r| median_f64(r)).collect();
            table.push_str(&format!(
                "| {} | {depth} | {} | {} | {} | {} | {} |\n",
                server.label,
                rate(m[0]),
                rate(m[1]),
                rate(m[2]),
                ratio(m[0], m[1]),
                ratio(m[0], m[2]),
            ));
        }
    }
    table.push_str(&format!(
        "\n{calls} calls per client per depth per round, unpinned; medians of {rounds} alternating rounds. \
         Clients: `depth` Tokio tasks on one current-thread runtime, each calling in a loop; raw: `depth` request lines kept outstanding on the pipe (pipelined). {}\n",
        era_note(config.era)
    ));
    Ok(table)
}
