//! The steps `cargo xtask` runs, and the runner that times them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One named check.
pub(crate) struct Step {
    pub(crate) name: &'static str,
    pub(crate) run: Box<dyn Fn() -> Result<(), String>>,
}

impl Step {
    pub(crate) fn new(name: &'static str, run: impl Fn() -> Result<(), String> + 'static) -> Self {
        Step { name, run: Box::new(run) }
    }
}

pub(crate) enum Outcome {
    Passed,
    Failed,
}

/// Runs the steps in order, printing each one's name and duration; stops at
/// the first failure.
pub(crate) fn run_all(steps: &[Step]) -> Outcome {
    let start = Instant::now();
    for step in steps {
        println!("==> {}", step.name);
        let t = Instant::now();
        let result = (step.run)();
        let took = t.elapsed().as_secs_f64();
        match result {
            Ok(()) => println!("<== {} ok ({took:.1}s)", step.name),
            Err(why) => {
                println!("<== {} FAILED ({took:.1}s): {why}", step.name);
                println!(
                    "xtask: failed at step {:?} after {:.1}s",
                    step.name,
                    start.elapsed().as_secs_f64()
                );
                return Outcome::Failed;
            }
        }
    }
    println!("xtask: all {} steps passed in {:.1}s", steps.len(), start.elapsed().as_secs_f64());
    Outcome::Passed
}

/// The repository root (the folder above `xtask/`).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `cargo` as the caller invoked it (respects `$CARGO`).
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Runs a command to completion with inherited output; an error names it.
pub(crate) fn run(mut cmd: Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{shown} exited with {status}")) }
}

/// Whether a program answers `--version` (used to pick optional tools).
pub(crate) fn have(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Everything `cargo xtask ci` runs, in order.
pub(crate) fn ci() -> Vec<Step> {
    let mut steps = vec![fmt(), clippy(), test()];
    steps.extend(crate::fuzz::fuzz_smoke_steps());
    steps.extend(crate::interop::steps());
    steps.extend([doc(), package()]);
    steps
}

pub(crate) fn fmt() -> Step {
    Step::new("fmt", || {
        let mut cmd = cargo();
        cmd.args(["fmt", "--all", "--", "--check"]);
        run(cmd)
    })
}

pub(crate) fn clippy() -> Step {
    Step::new("clippy", || {
        let mut cmd = cargo();
        cmd.args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]);
        run(cmd)
    })
}

pub(crate) fn test() -> Step {
    Step::new("test", || {
        if have("cargo-nextest", &["nextest", "--version"]) {
            let mut cmd = cargo();
            cmd.args(["nextest", "run", "--workspace", "--locked", "--no-fail-fast"]);
            run(cmd)?;
            // nextest does not run doc tests.
            let mut cmd = cargo();
            cmd.args(["test", "--workspace", "--locked", "--doc"]);
            run(cmd)
        } else {
            let mut cmd = cargo();
            cmd.args(["test", "--workspace", "--locked", "--no-fail-fast"]);
            run(cmd)
        }
    })
}

pub(crate) fn doc() -> Step {
    Step::new("doc", || {
        let mut cmd = cargo();
        cmd.args(["doc", "--workspace", "--no-deps", "--locked"]);
        cmd.env("RUSTDOCFLAGS", "-D warnings");
        run(cmd)
    })
}

pub(crate) fn package() -> Step {
    Step::new("package", || {
        // Packages (and verifies, by building each from its own tarball) every
        // crate that can be published; `publish = false` crates are skipped.
        let mut cmd = cargo();
        cmd.args(["package", "--workspace", "--locked", "--allow-dirty", "--exclude", "xtask"]);
        run(cmd)
    })
}
