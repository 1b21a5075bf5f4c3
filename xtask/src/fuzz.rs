//! `cargo xtask fuzz <target>|all [seconds]`: runs cargo-fuzz targets of
//! `fuzz/` (libFuzzer, AddressSanitizer) for that long;
//! `cargo xtask fuzz --minutes N [target...]`: a campaign, every target (or
//! those named) N CPU-minutes each, one after the other, ending with a
//! table of the figures (CPU and wall seconds, executions, corpus size,
//! crashes); and the short smoke runs that `cargo xtask ci` includes.
//!
//! The machine has only the stable toolchain, and cargo-fuzz needs nightly
//! compiler flags (`-Zsanitizer`, and libfuzzer-sys's `-Cpasses=sancov-module`
//! set-up): `RUSTC_BOOTSTRAP=1` lets the stable compiler accept them. The
//! pinned cargo-fuzz is installed into `.tools/` (git-ignored) on first use.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::steps::{self, Step};

/// The cargo-fuzz release the commands are written against.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// The fuzz targets (binaries of `fuzz/Cargo.toml`), with the name of their
/// smoke step in `cargo xtask ci` (`None`: not in the smoke, see below).
const TARGETS: &[(&str, Option<&str>)] = &[
    ("sse_decoder", Some("fuzz-smoke sse_decoder")),
    ("www_authenticate", Some("fuzz-smoke www_authenticate")),
    ("jsonrpc", Some("fuzz-smoke jsonrpc")),
    ("wire_types", Some("fuzz-smoke wire_types")),
    ("param_headers", Some("fuzz-smoke param_headers")),
    ("config_loader", Some("fuzz-smoke config_loader")),
    ("server_spec", Some("fuzz-smoke server_spec")),
    ("oauth_documents", Some("fuzz-smoke oauth_documents")),
    ("oauth_urls", Some("fuzz-smoke oauth_urls")),
    ("stdio_lines", Some("fuzz-smoke stdio_lines")),
    ("terminal_text", Some("fuzz-smoke terminal_text")),
    ("openable_url", Some("fuzz-smoke openable_url")),
];

/// How long each target runs in `cargo xtask ci` (twelve targets: about a
/// minute in all, besides the build).
const SMOKE_SECONDS: u64 = 5;

/// How long `cargo xtask fuzz <target>` runs without a duration.
const DEFAULT_SECONDS: u64 = 60;

const USAGE: &str = "usage: cargo xtask fuzz <target>|all [seconds]\n       cargo xtask fuzz --minutes N [target...]";

/// `cargo xtask fuzz <target>|all [seconds]` or `cargo xtask fuzz --minutes
/// N [target...]` (`args` are the words after `fuzz`).
pub(crate) fn fuzz_command(args: &[String]) -> Result<(), String> {
    if args.first().is_some_and(|a| a == "--minutes") {
        return campaign_command(&args[1..]);
    }
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
    check_target(target)?;
    run_target(target, seconds)
}

fn check_target(target: &str) -> Result<(), String> {
    if TARGETS.iter().any(|(name, _)| *name == target) {
        Ok(())
    } else {
        Err(format!("unknown fuzz target {target:?}; targets: {}", target_names()))
    }
}

/// A few seconds of each target, for `cargo xtask ci`.
pub(crate) fn fuzz_smoke_steps() -> Vec<Step> {
    TARGETS
        .iter()
        .filter_map(|&(target, step)| {
            Some(Step::new(step?, move || run_target(target, SMOKE_SECONDS)))
        })
        .collect()
}

/// What one target's run of a campaign gave.
struct Figures {
    target: &'static str,
    /// The fuzzer's CPU time (user and system).
    cpu_seconds: u64,
    /// Wall time, as libFuzzer reports it, over all runs.
    seconds: u64,
    /// How many libFuzzer runs it took to reach the CPU time.
    runs: u32,
    executions: u64,
    corpus_files: usize,
    corpus_bytes: u64,
    crashes: usize,
}

/// `cargo xtask fuzz --minutes N [target...]`: each target in turn for N
/// CPU-minutes (a crash ends that target's runs, and the campaign goes on
/// to the next); the figures as a Markdown table; an error if anything crashed.
fn campaign_command(args: &[String]) -> Result<(), String> {
    let Some(minutes) = args.first() else { return Err(USAGE.to_owned()) };
    let minutes: u64 = minutes
        .parse()
        .ok()
        .filter(|m| *m > 0)
        .ok_or_else(|| format!("not a number of minutes: {minutes:?}\n{USAGE}"))?;
    let names = &args[1..];
    names.iter().try_for_each(|name| check_target(name))?;
    let mut figures = Vec::new();
    for &(target, _) in TARGETS {
        if names.is_empty() || names.iter().any(|n| n == target) {
            figures.push(campaign_run(target, minutes * 60)?);
        }
    }
    println!(
        "\n| Target | CPU seconds | Wall seconds | Runs | Executions | Corpus (files, bytes) | Crashes |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for f in &figures {
        println!(
            "| `{}` | {} | {} | {} | {} | {}, {} | {} |",
            f.target,
            f.cpu_seconds,
            f.seconds,
            f.runs,
            f.executions,
            f.corpus_files,
            f.corpus_bytes,
            f.crashes
        );
    }
    let crashed: Vec<&str> = figures.iter().filter(|f| f.crashes > 0).map(|f| f.target).collect();
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!("crashes in {} (inputs under fuzz/artifacts/)", crashed.join(", ")))
    }
}

/// One target of a campaign, until the fuzzer has used `seconds` of CPU
/// time: built first (so compiling is not counted), then run for the CPU
/// time still owed as wall time, again (on the corpus grown so far) while
/// a busy machine gave it less, at most [`MAX_RUNS`] times. The CPU time
/// is the kernel's account of the waited-for children (the fuzzer through
/// cargo-fuzz). libFuzzer's output is shown as it comes and read for its
/// final figures.
fn campaign_run(target: &'static str, seconds: u64) -> Result<Figures, String> {
    let corpus = corpus_dir(target)?;
    let mut build = cargo_fuzz_command()?;
    build.args(["build", "--fuzz-dir", "fuzz", target]);
    steps::run(build)?;
    let mut figures = Figures {
        target,
        cpu_seconds: 0,
        seconds: 0,
        runs: 0,
        executions: 0,
        corpus_files: 0,
        corpus_bytes: 0,
        crashes: 0,
    };
    let start = children_cpu_seconds();
    while figures.runs < MAX_RUNS && figures.crashes == 0 {
        let used = children_cpu_seconds() - start;
        if used >= seconds as f64 {
            break;
        }
        let owed = (seconds as f64 - used).ceil().max(1.0) as u64;
        fuzz_once(target, owed, &corpus, &mut figures)?;
        figures.runs += 1;
    }
    figures.cpu_seconds = (children_cpu_seconds() - start).round() as u64;
    (figures.corpus_files, figures.corpus_bytes) = dir_size(&corpus);
    Ok(figures)
}

/// How many runs one target's campaign makes at most to reach its CPU
/// time.
const MAX_RUNS: u32 = 20;

/// User and system CPU seconds of this process's children that ended and
/// were waited for (and of their own waited-for children).
fn children_cpu_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| seconds(u.user_time()) + seconds(u.system_time()))
        .unwrap_or(0.0)
}

/// One libFuzzer run of `seconds`, its figures added to `figures`.
fn fuzz_once(
    target: &str,
    seconds: u64,
    corpus: &Path,
    figures: &mut Figures,
) -> Result<(), String> {
    let mut cmd = built_fuzzer(target, seconds, corpus)?;
    let shown = format!("{cmd:?}");
    let mut child =
        cmd.stderr(Stdio::piped()).spawn().map_err(|e| format!("could not start {shown}: {e}"))?;
    let stderr = child.stderr.take().expect("stderr is piped");
    for line in BufReader::new(stderr).lines() {
        let line = line.map_err(|e| format!("reading the output of {shown}: {e}"))?;
        let _ = writeln!(std::io::stderr(), "{line}");
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            figures.executions += n.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("Done ") {
            // `Done 123 runs in 60 second(s)`
            figures.seconds +=
                rest.split_whitespace().nth(3).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        } else if line.contains("Test unit written to ") && !line.contains("/slow-unit-") {
            // A slow unit is only reported (on a busy machine a unit can
            // wait long for a CPU): crashes, leaks, timeouts and
            // out-of-memory inputs count.
            figures.crashes += 1;
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for {shown}: {e}"))?;
    if !status.success() && figures.crashes == 0 {
        return Err(format!("{shown} exited with {status}"));
    }
    Ok(())
}

/// How many files a directory holds, and their bytes.
fn dir_size(dir: &Path) -> (usize, u64) {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .fold((0, 0), |(n, bytes), m| (n + 1, bytes + m.len()))
        })
        .unwrap_or((0, 0))
}

fn target_names() -> String {
    TARGETS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// The pinned cargo-fuzz, installed into `.tools/` if it is not there yet.
fn cargo_fuzz() -> Result<PathBuf, String> {
    crate::tools::installed("cargo-fuzz", CARGO_FUZZ_VERSION, "cargo-fuzz")
}

fn run_target(target: &str, seconds: u64) -> Result<(), String> {
    let corpus = corpus_dir(target)?;
    steps::run(fuzz_run(target, seconds, &corpus)?)
}

/// The corpus grows in fuzz/corpus (git-ignored); fuzz/seeds holds the
/// committed starting inputs, read but never written.
fn corpus_dir(target: &str) -> Result<PathBuf, String> {
    let corpus = steps::root().join("fuzz").join("corpus").join(target);
    std::fs::create_dir_all(&corpus)
        .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
    Ok(corpus)
}

/// The fuzzer `cargo fuzz build` made for `target`, run directly (so that
/// nothing is compiled while its CPU time is counted), as `cargo fuzz run`
/// would run it: for `seconds` on `corpus` and the target's seeds, crashes
/// written under `fuzz/artifacts/<target>/`.
fn built_fuzzer(target: &str, seconds: u64, corpus: &Path) -> Result<Command, String> {
    let root = steps::root();
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("could not run rustc -vV: {e}"))?;
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or("rustc -vV named no host")?;
    let binary = root.join("fuzz/target").join(host).join("release").join(target);
    if !binary.is_file() {
        return Err(format!("{} was not built", binary.display()));
    }
    let artifacts = root.join("fuzz/artifacts").join(target);
    std::fs::create_dir_all(&artifacts)
        .map_err(|e| format!("cannot create {}: {e}", artifacts.display()))?;
    let seeds = root.join("fuzz").join("seeds").join(target);
    let mut cmd = Command::new(binary);
    cmd.current_dir(&root)
        .env("ASAN_OPTIONS", "detect_odr_violation=0")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(format!("-max_total_time={seconds}"))
        .arg("-print_final_stats=1")
        .arg(corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    Ok(cmd)
}

/// cargo-fuzz, in the workspace, with the stable compiler's nightly flags
/// allowed (its subcommand and arguments to follow).
fn cargo_fuzz_command() -> Result<Command, String> {
    let mut cmd = Command::new(cargo_fuzz()?);
    cmd.current_dir(steps::root()).env("RUSTC_BOOTSTRAP", "1");
    Ok(cmd)
}

/// The cargo-fuzz command that runs `target` for `seconds` on `corpus` and
/// the target's seeds.
fn fuzz_run(target: &str, seconds: u64, corpus: &Path) -> Result<Command, String> {
    let seeds = steps::root().join("fuzz").join("seeds").join(target);
    let mut cmd = cargo_fuzz_command()?;
    cmd.args(["run", "--fuzz-dir", "fuzz", target]).arg(corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    cmd.args(["--", &format!("-max_total_time={seconds}"), "-print_final_stats=1"]);
    Ok(cmd)
}
