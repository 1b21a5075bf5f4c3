//! `cargo xtask conformance`: the official MCP conformance suite against our
//! client, at both protocol revisions it defines requirements for.
//!
//! Installs the pinned `@modelcontextprotocol/conformance` and the Node.js 22
//! it needs (both from npm, `xtask/conformance/`) into `.tools/conformance/`,
//! checks [`SCENARIOS`] against the suite's own
//! lists (`conformance list --client --requirements <revision>` for each of
//! [`REVISIONS`](scenarios::REVISIONS): scored, extension and
//! added-after-release scenarios alike), builds the conformance client
//! binary (package `mcp-conformance`, built on the public API only), runs
//! every scenario at its revision with `exec <binary>` as the client
//! command, one at a time, and reads each `checks.json`: a scenario passes
//! only when every expected check is there as `SUCCESS` and no check is
//! `FAILURE` or `WARNING`. The runner itself fails a scenario only on a
//! `FAILURE`, so a client that crashes early or a scenario whose checks are
//! all `SKIPPED` would pass it while testing nothing: the expected ids are
//! what make the run mean something.
//!
//! A known gap (a feature another issue owns) is run and reported as
//! `KNOWN GAP (not passing)` without failing the step; one that starts
//! passing fails it, so that the list stays honest. Each run's output is in
//! `target/conformance/<revision>/<scenario>/`.
//!
//! One file a job: the scenario table (`conformance/scenarios.rs`); the
//! installed suite, its lists and runs (`conformance/suite.rs`); the
//! verdict on a run and the tally (`conformance/verdict.rs`); here, the
//! steps.

pub(crate) mod scenarios;
pub(crate) mod suite;
pub(crate) mod verdict;

use std::path::PathBuf;
use std::time::Instant;

use crate::conformance::scenarios::SCENARIOS;
use crate::conformance::suite::{check_table, install, parse_requirements, run_scenario};
use crate::conformance::verdict::{Judgement, Tally, judge};
use crate::steps::Step;

/// Builds the conformance client and returns its path.
fn build_client() -> Result<PathBuf, String> {
    let bin = crate::steps::build_bin("mcp-conformance", "mcp-conformance-client")?;
    if bin.to_string_lossy().contains(char::is_whitespace) {
        // The runner splits the command on spaces.
        return Err(format!(
            "the client path {} has white space, which the runner cannot take",
            bin.display()
        ));
    }
    Ok(bin)
}

/// Runs every scenario in [`SCENARIOS`], one at a time, after checking the
/// table against the suite's requirement lists.
fn run_all() -> Result<(), String> {
    check_table("client", parse_requirements, SCENARIOS, "scenario")?;
    let client = build_client()?;
    let start = Instant::now();
    let mut tally = Tally::default();
    for s in SCENARIOS {
        let t = Instant::now();
        let judgement = judge(s, run_scenario(&client, s));
        let took = t.elapsed().as_secs_f64();
        let label = format!("{} @ {}", s.name, s.revision);
        let line = match &judgement {
            Judgement::Passed => format!("conformance PASS {label} ({took:.1}s)"),
            Judgement::Failed(why) => format!("conformance FAIL {label} ({took:.1}s): {why}"),
            Judgement::KnownGap(reason, why) => {
                format!("KNOWN GAP (not passing): {label}: {reason} [{why}]")
            }
            Judgement::GapPasses => format!(
                "conformance FAIL {label} ({took:.1}s): listed as a known gap but passes now; \
                 take it off the list"
            ),
        };
        println!("{line}");
        tally.count(label, &judgement);
    }
    tally.finish("conformance", &format!("{} runs", SCENARIOS.len()), start)
}

/// The conformance steps: install, then every client scenario, then every
/// server scenario against the testkit, and through the bridge.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("conformance: install suite and Node.js 22", install),
        Step::new("conformance: client scenarios", run_all),
        crate::conformance_server::step(),
        crate::conformance_server::bridge_step(),
    ]
}
