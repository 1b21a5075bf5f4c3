//! `cargo xtask bench sse [--quick]`: builds `mcp-bench`'s `sse-bench` in
//! release mode, runs it, and writes its table into the SSE section of
//! `BENCHMARKS.md` with the machine, the date and the versions compared.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::steps;

const USAGE: &str = "usage: cargo xtask bench sse [--quick]";

const SSE_START: &str = "<!-- sse-bench:start (written by `cargo xtask bench sse`) -->";
const SSE_END: &str = "<!-- sse-bench:end -->";

const TITLE: &str =
    "# Benchmarks\n\nMeasured by `cargo xtask bench <name>`, which rewrites its own section.\n";

/// `cargo xtask bench sse [--quick]` (`args` are the words after `bench`).
pub(crate) fn bench_command(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    match args.first().map(String::as_str) {
        Some("sse") if args.iter().skip(1).all(|a| a == "--quick") => sse(quick),
        _ => Err(USAGE.to_owned()),
    }
}

fn sse(quick: bool) -> Result<(), String> {
    let root = steps::root();
    let mut build = steps::cargo();
    build.args(["build", "--release", "--package", "mcp-bench", "--bin", "sse-bench"]);
    steps::run(build)?;
    let bin = target_dir(&root).join("release").join("sse-bench");
    let mut run = Command::new(&bin);
    run.current_dir(&root).stderr(Stdio::inherit());
    if quick {
        run.arg("--quick");
    }
    let out = run.output().map_err(|e| format!("could not start {}: {e}", bin.display()))?;
    if !out.status.success() {
        return Err(format!("{} exited with {}", bin.display(), out.status));
    }
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{table}");

    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let version = |name: &str| locked_version(&lock, name).unwrap_or_else(|| "?".to_owned());
    let section = format!(
        "{SSE_START}\n## SSE decoding (`cargo xtask bench sse{quick}`)\n\n\
         - Machine: {cpu}, {nproc} CPUs (`nproc`), shared with other work; figures vary run to run by up to about 20 %.\n\
         - Date: {date}; {rustc}.\n\
         - Compared: mcp-sse {ours}, sse-stream {sse_stream} (what rmcp uses), eventsource-stream {eventsource}; all fed the same in-memory chunks.\n\
         - Goals: (a) at least 3x sse-stream and 2x eventsource-stream; (b) at least 1 GB/s.\n\n\
         {table}\n{SSE_END}\n",
        quick = if quick { " --quick" } else { "" },
        cpu = cpu_model(),
        nproc = command_output("nproc", &[]),
        date = command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        rustc = command_output("rustc", &["--version"]),
        ours = version("mcp-sse"),
        sse_stream = version("sse-stream"),
        eventsource = version("eventsource-stream"),
    );
    let path = root.join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| TITLE.to_owned());
    let new = match (old.find(SSE_START), old.find(SSE_END)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{}{}", &old[..a], section, old[b + SSE_END.len()..].trim_start_matches('\n'))
        }
        _ => format!("{}\n{}", old.trim_end(), section),
    };
    std::fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("xtask: wrote the SSE section of {}", path.display());
    Ok(())
}

fn target_dir(root: &Path) -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(Into::into).unwrap_or_else(|| root.join("target"))
}

/// The version of `name` in a Cargo.lock.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let needle = format!("name = \"{name}\"\nversion = \"");
    let start = lock.find(&needle)? + needle.len();
    let len = lock[start..].find('"')?;
    Some(lock[start..start + len].to_owned())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".to_owned())
}
