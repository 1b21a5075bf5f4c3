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

/// The repository root (the folder above `xtask/`). `cargo run` sets
/// `CARGO_MANIFEST_DIR` for the process; the compile-time value is the
/// fallback when the binary is run directly.
pub(crate) fn root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `cargo` as the caller invoked it (respects `$CARGO`).
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Builds binary `bin` of package `package` (debug profile) and returns
/// its path in the target directory (`$CARGO_TARGET_DIR`, else `target/`).
pub(crate) fn build_bin(package: &str, bin: &str) -> Result<PathBuf, String> {
    let mut cmd = cargo();
    cmd.args(["build", "--locked", "-p", package, "--bin", bin]);
    run(cmd)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let path = target.join("debug").join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() { Ok(path) } else { Err(format!("{bin} is not at {}", path.display())) }
}

/// Runs a command to completion with inherited output; an error names it.
pub(crate) fn run(mut cmd: Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{shown} exited with {status}")) }
}

/// Installs the pinned npm packages of `src` (its `package.json` and
/// `package-lock.json`) into `dst` with `npm ci`, unless `dst` already holds
/// that very lock and `installed` says the packages are there.
pub(crate) fn npm_ci_pinned(
    src: &Path,
    dst: &Path,
    installed: impl Fn() -> bool,
) -> Result<(), String> {
    std::fs::create_dir_all(dst).map_err(|e| format!("creating {}: {e}", dst.display()))?;
    let pinned = std::fs::read(src.join("package-lock.json"))
        .map_err(|e| format!("reading the pinned lock: {e}"))?;
    let current = std::fs::read(dst.join("package-lock.json")).ok();
    if current.as_deref() == Some(pinned.as_slice()) && installed() {
        println!("pinned npm packages already installed in {}", dst.display());
        return Ok(());
    }
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(src.join(file), dst.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(dst);
    run(npm)?;
    if installed() {
        Ok(())
    } else {
        Err(format!("npm ci did not install everything in {}", dst.display()))
    }
}

/// `cargo test -p <krate> --features <feature> --test tests -- <module>::...`:
/// modules of a crate's test binary that a feature compiles in, with `env`
/// set (where the peers they run against are).
pub(crate) fn module_tests(
    krate: &str,
    feature: &str,
    modules: &[&str],
    env: &[(&str, PathBuf)],
) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["test", "--locked", "-p", krate, "--features", feature, "--test", "tests"]);
    cmd.arg("--").args(modules.iter().map(|m| format!("{m}::")));
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_os_str())));
    run(cmd)
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
    let mut steps = vec![fmt(), clippy(), test(), features()];
    steps.extend(crate::fuzz::fuzz_smoke_steps());
    steps.extend(crate::bench::bench_smoke_steps());
    steps.extend(crate::bench::soak_smoke_steps());
    steps.extend(crate::interop::steps());
    steps.extend(crate::idp::steps());
    steps.extend(crate::keychain::steps());
    steps.extend(crate::conformance::steps());
    steps.extend([doc(), crate::publish::dry_run()]);
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

/// The optional features the default build leaves out, with the crates
/// that have them: `outputSchema` validation, the blocking clients, the
/// OpenTelemetry trace context and HTTP/2 (`mcp-http`'s TLS tests then
/// check that ALPN picks it).
const OPTIONAL_FEATURES: &str = "mcp-proto/schema,mcp-peer/blocking,mcp-peer/schema,mcp-peer/otel,mcp-client-stdio/blocking,mcp-http/blocking,mcp-http/http2";
const OPTIONAL_FEATURE_CRATES: [&str; 8] =
    ["-p", "mcp-proto", "-p", "mcp-peer", "-p", "mcp-client-stdio", "-p", "mcp-http"];

/// The default features a downstream user may leave out: each crate is
/// linted with only these on (`--no-default-features`), and its tests run
/// when the last field says so. (Not the testkit's: its tests would build
/// a `target/debug/mcp-testkit` without the `http` subcommand, which other
/// crates' tests and the benchmarks spawn.)
const FEATURE_SUBSETS: [(&str, &str, bool); 5] = [
    // A stdio-only host: no hyper, no rustls, no mcp-auth.
    ("mcp-host-registry", "stdio", true),
    ("mcp-host-registry", "http", true),
    ("mcp-host-registry", "", true),
    // mcpc's embedded demo: the testkit without its HTTP server.
    ("mcp-testkit", "", false),
    // A stdio server: the server half without hyper and rustls.
    ("mcp-server-io", "", true),
];

/// Lints and tests the crates with their optional features on (their own
/// tests and examples need them), then with their default features cut
/// down to each subset of [`FEATURE_SUBSETS`].
pub(crate) fn features() -> Step {
    Step::new("optional features", || {
        let mut cmd = cargo();
        cmd.arg("clippy").args(OPTIONAL_FEATURE_CRATES);
        cmd.args(["--all-targets", "--locked", "--features", OPTIONAL_FEATURES]);
        cmd.args(["--", "-D", "warnings"]);
        run(cmd)?;
        run(test_command(&OPTIONAL_FEATURE_CRATES, &["--features", OPTIONAL_FEATURES]))?;
        for (krate, features, tests) in FEATURE_SUBSETS {
            let selection = ["-p", krate, "--no-default-features", "--features", features];
            let mut cmd = cargo();
            cmd.arg("clippy").args(selection);
            cmd.args(["--all-targets", "--locked", "--", "-D", "warnings"]);
            run(cmd)?;
            if tests {
                run(test_command(&selection, &[]))?;
            }
        }
        Ok(())
    })
}

/// `cargo nextest run` (or `cargo test`) of a selection of crates and
/// features.
fn test_command(selection: &[&str], features: &[&str]) -> Command {
    let mut cmd = cargo();
    if have("cargo-nextest", &["nextest", "--version"]) {
        cmd.args(["nextest", "run"]);
    } else {
        cmd.arg("test");
    }
    cmd.args(selection).args(features);
    cmd.args(["--locked", "--no-fail-fast"]);
    cmd
}

pub(crate) fn doc() -> Step {
    Step::new("doc", || {
        let mut cmd = cargo();
        cmd.args(["doc", "--workspace", "--no-deps", "--locked"]);
        cmd.env("RUSTDOCFLAGS", "-D warnings");
        run(cmd)
    })
}
