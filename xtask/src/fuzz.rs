//! `cargo xtask fuzz <target> [seconds]`: runs one cargo-fuzz target of
//! `fuzz/` (libFuzzer, AddressSanitizer) for that long, and the short smoke
//! runs that `cargo xtask ci` includes.
//!
//! The machine has only the stable toolchain, and cargo-fuzz needs nightly
//! compiler flags (`-Zsanitizer`, and libfuzzer-sys's `-Cpasses=sancov-module`
//! set-up): `RUSTC_BOOTSTRAP=1` lets the stable compiler accept them. The
//! pinned cargo-fuzz is installed into `.tools/` (git-ignored) on first use.

use std::path::PathBuf;
use std::process::Command;

use crate::steps::{self, Step};

/// The cargo-fuzz release the commands are written against.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// The fuzz targets (binaries of `fuzz/Cargo.toml`), with the name of their
/// smoke step in `cargo xtask ci`.
const TARGETS: &[(&str, &str)] = &[
    ("sse_decoder", "fuzz-smoke sse_decoder"),
    ("www_authenticate", "fuzz-smoke www_authenticate"),
];

/// How long each target runs in `cargo xtask ci`.
const SMOKE_SECONDS: u64 = 5;

/// How long `cargo xtask fuzz <target>` runs without a duration.
const DEFAULT_SECONDS: u64 = 60;

const USAGE: &str = "usage: cargo xtask fuzz <target>|all [seconds]";

/// `cargo xtask fuzz <target>|all [seconds]` (`args` are the words after
/// `fuzz`).
pub(crate) fn fuzz_command(args: &[String]) -> Result<(), String> {
    let Some(target) = args.first() else {
        return Err(format!("{USAGE}\ntargets: {}", target_names()));
    };
    let seconds = match args.get(1) {
        Some(s) => {
            s.parse::<u64>().map_err(|_| format!("not a number of seconds: {s:?}\n{USAGE}"))?
        }
        None => DEFAULT_SECONDS,
    };
    if args.len() > 2 {
        return Err(USAGE.to_owned());
    }
    if target == "all" {
        return TARGETS.iter().try_for_each(|(name, _)| run_target(name, seconds));
    }
    if !TARGETS.iter().any(|(name, _)| name == target) {
        return Err(format!("unknown fuzz target {target:?}; targets: {}", target_names()));
    }
    run_target(target, seconds)
}

/// A few seconds of each target, for `cargo xtask ci`.
pub(crate) fn fuzz_smoke_steps() -> Vec<Step> {
    TARGETS
        .iter()
        .map(|&(target, step)| Step::new(step, move || run_target(target, SMOKE_SECONDS)))
        .collect()
}

fn target_names() -> String {
    TARGETS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// The pinned cargo-fuzz, installed into `.tools/` if it is not there yet.
fn cargo_fuzz() -> Result<PathBuf, String> {
    let tools = steps::root().join(".tools");
    let bin = tools.join("bin").join("cargo-fuzz");
    let installed = Command::new(&bin)
        .arg("--version")
        .output()
        .map(|out| {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).trim_end().ends_with(CARGO_FUZZ_VERSION)
        })
        .unwrap_or(false);
    if !installed {
        let mut cmd = steps::cargo();
        cmd.args(["install", "--locked", "--quiet", "--root"]).arg(&tools).args([
            "--version",
            CARGO_FUZZ_VERSION,
            "cargo-fuzz",
        ]);
        steps::run(cmd)?;
    }
    Ok(bin)
}

fn run_target(target: &str, seconds: u64) -> Result<(), String> {
    let bin = cargo_fuzz()?;
    let root = steps::root();
    // The corpus grows in fuzz/corpus (git-ignored); fuzz/seeds holds the
    // committed starting inputs, read but never written.
    let corpus = root.join("fuzz").join("corpus").join(target);
    std::fs::create_dir_all(&corpus)
        .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
    let seeds = root.join("fuzz").join("seeds").join(target);
    let mut cmd = Command::new(bin);
    cmd.current_dir(&root)
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["run", "--fuzz-dir", "fuzz", target])
        .arg(&corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    cmd.args(["--", &format!("-max_total_time={seconds}"), "-print_final_stats=1"]);
    steps::run(cmd)
}
