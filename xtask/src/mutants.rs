//! `cargo xtask mutants [--list] [--jobs N] [FILE...]`: mutation testing
//! (cargo-mutants) of the files where a wrong line is a security or
//! protocol bug: the parsers, `mcp-auth`, the sans-IO core and version
//! handling of `mcp-proto`, its decisions (`client::decide`), backoff and
//! display filter, the stdio framing, `mcp-peer`'s throttle and
//! `mcp-http`'s wire rules.
//! Each file is mutated against its own crate's tests; a file passes at
//! [`THRESHOLD`] caught (a mutant that times out counts as caught, one that
//! does not build is not counted). The remaining misses are listed so that
//! each can be explained (as an equivalent mutant, in RELIABILITY.md) or
//! killed by a new test.
//!
//! Not part of `cargo xtask ci`: a full run takes hours on two cores. The
//! pinned cargo-mutants is installed into `.tools/` on first use; the
//! output of each crate's run stays in `target/mutants/<crate>/`, and the
//! table in `target/mutants/summary.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::steps;

/// The cargo-mutants release the command is written against.
const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// The share of viable mutants each file must catch.
const THRESHOLD: f64 = 0.95;

/// The files mutation testing covers, with their package.
const FILES: &[(&str, &str)] = &[
    ("mcp-sse", "mcp-sse/src/sse/decoder.rs"),
    ("mcp-sse", "mcp-sse/src/sse/interpreter.rs"),
    ("mcp-sse", "mcp-sse/src/sse/lines.rs"),
    ("mcp-sse", "mcp-sse/src/sse/text.rs"),
    ("mcp-sse", "mcp-sse/src/sse/item.rs"),
    ("mcp-sse", "mcp-sse/src/sse/error.rs"),
    ("mcp-sse", "mcp-sse/src/www_authenticate.rs"),
    ("mcp-sse", "mcp-sse/src/codec.rs"),
    ("mcp-proto", "mcp-proto/src/jsonrpc.rs"),
    ("mcp-proto", "mcp-proto/src/jsonrpc/message.rs"),
    ("mcp-proto", "mcp-proto/src/version.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/mod.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/config.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/options.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/event.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/opening.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/requests.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/incoming.rs"),
    ("mcp-proto", "mcp-proto/src/client/core/encode.rs"),
    ("mcp-proto", "mcp-proto/src/client/headers.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/mod.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/era.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/handshake.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/stateless.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/open.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/probe.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/recovery.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/input.rs"),
    ("mcp-proto", "mcp-proto/src/client/decide/result.rs"),
    ("mcp-proto", "mcp-proto/src/backoff.rs"),
    ("mcp-proto", "mcp-proto/src/display.rs"),
    ("mcp-client-stdio", "mcp-stdio/src/codec.rs"),
    ("mcp-peer", "mcp-peer/src/throttle.rs"),
    ("mcp-http", "mcp-http/src/wire.rs"),
    ("mcp-auth", "mcp-auth/src/pkce.rs"),
    ("mcp-auth", "mcp-auth/src/url.rs"),
    ("mcp-auth", "mcp-auth/src/scope.rs"),
    ("mcp-auth", "mcp-auth/src/discovery.rs"),
    ("mcp-auth", "mcp-auth/src/registration.rs"),
    ("mcp-auth", "mcp-auth/src/token.rs"),
    ("mcp-auth", "mcp-auth/src/jwt.rs"),
    ("mcp-auth", "mcp-auth/src/dpop.rs"),
    ("mcp-auth", "mcp-auth/src/workload.rs"),
    ("mcp-auth", "mcp-auth/src/xaa.rs"),
    ("mcp-auth", "mcp-auth/src/store.rs"),
    ("mcp-auth", "mcp-auth/src/client/mod.rs"),
    ("mcp-auth", "mcp-auth/src/client/config.rs"),
    ("mcp-auth", "mcp-auth/src/client/tokens.rs"),
    ("mcp-auth", "mcp-auth/src/client/grants.rs"),
    ("mcp-auth", "mcp-auth/src/client/dpop.rs"),
    ("mcp-auth", "mcp-auth/src/client/revoke.rs"),
];

const USAGE: &str = "usage: cargo xtask mutants [--list] [--jobs N] [FILE...]\n\
    FILE: a path from the repository root (default: every covered file)";

/// `cargo xtask mutants ...` (`args` are the words after `mutants`).
pub(crate) fn mutants_command(args: &[String]) -> Result<(), String> {
    let mut list = false;
    let mut jobs = 1u32;
    let mut named = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--list" => list = true,
            "--jobs" => {
                let n = args.next().ok_or(USAGE)?;
                jobs = n.parse().map_err(|_| format!("not a number of jobs: {n:?}\n{USAGE}"))?;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            file => named.push(file.to_owned()),
        }
    }
    let files = selected(&named)?;
    let tool = crate::tools::installed("cargo-mutants", CARGO_MUTANTS_VERSION, "cargo-mutants")?;
    let mut by_package: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (package, file) in &files {
        by_package.entry(package).or_default().push(file);
    }
    if list {
        return list_mutants(&tool, &by_package);
    }
    let out_root = steps::root().join("target").join("mutants");
    let mut scores = Vec::new();
    for (package, files) in &by_package {
        let out = out_root.join(package);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut cmd = mutants(&tool, package, files);
        cmd.arg("--jobs").arg(jobs.max(1).to_string()).arg("--output").arg(&out);
        // cargo-mutants exits non-zero when a mutant is missed: the table
        // below is the verdict, so only a run that produced no outcome
        // fails here.
        let status = cmd.status().map_err(|e| format!("could not start cargo-mutants: {e}"))?;
        let outcomes = Outcomes::read(&out.join("mutants.out"))
            .map_err(|e| format!("cargo-mutants ({status}) left no outcome for {package}: {e}"))?;
        for file in files {
            scores.push(outcomes.score(file));
        }
    }
    report(&scores, &out_root)
}

/// The covered files to run: all, or those named (each must be covered).
fn selected(named: &[String]) -> Result<Vec<(&'static str, &'static str)>, String> {
    if named.is_empty() {
        return Ok(FILES.to_vec());
    }
    named
        .iter()
        .map(|name| {
            let name = name.trim_start_matches("./");
            FILES.iter().copied().find(|(_, file)| *file == name).ok_or_else(|| {
                let known: Vec<&str> = FILES.iter().map(|(_, f)| *f).collect();
                format!("{name:?} is not a covered file; covered: {}", known.join(", "))
            })
        })
        .collect()
}

/// cargo-mutants over `files` of `package`, against that package's tests.
fn mutants(tool: &Path, package: &str, files: &[&str]) -> Command {
    let mut cmd = Command::new(tool);
    cmd.current_dir(steps::root());
    cmd.args(["mutants", "--package", package, "--test-workspace", "false", "--no-shuffle"]);
    for file in files {
        cmd.args(["--file", file]);
    }
    cmd
}

/// `--list`: how many mutants each file has, without building anything.
fn list_mutants(tool: &Path, by_package: &BTreeMap<&str, Vec<&str>>) -> Result<(), String> {
    let mut total = 0;
    for (package, files) in by_package {
        let mut cmd = mutants(tool, package, files);
        cmd.arg("--list");
        let output = cmd.output().map_err(|e| format!("could not start cargo-mutants: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "cargo-mutants --list failed for {package}: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        for file in files {
            let n = text.lines().filter(|l| names_file(l, file)).count();
            total += n;
            println!("{n:>6}  {file}");
        }
    }
    println!("{total:>6}  in all");
    Ok(())
}

/// Whether an outcome line (`path:line:col: description`) is about `file`.
fn names_file(line: &str, file: &str) -> bool {
    line.split_once(':')
        .is_some_and(|(path, _)| path == file || file.ends_with(&format!("/{path}")))
}

/// The outcome lists cargo-mutants writes (`caught.txt`, `missed.txt`,
/// `timeout.txt`, `unviable.txt`: one mutant a line).
struct Outcomes {
    caught: String,
    missed: String,
    timeout: String,
    unviable: String,
}

impl Outcomes {
    fn read(dir: &Path) -> Result<Outcomes, String> {
        let read = |name: &str| {
            let path: PathBuf = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        Ok(Outcomes {
            caught: read("caught.txt")?,
            missed: read("missed.txt")?,
            timeout: read("timeout.txt")?,
            unviable: read("unviable.txt")?,
        })
    }

    fn score(&self, file: &str) -> Score {
        let of = |text: &str| -> Vec<String> {
            text.lines().filter(|l| names_file(l, file)).map(str::to_owned).collect()
        };
        Score {
            file: file.to_owned(),
            caught: of(&self.caught).len(),
            timeout: of(&self.timeout).len(),
            unviable: of(&self.unviable).len(),
            missed: of(&self.missed),
        }
    }
}

/// One file's figures.
struct Score {
    file: String,
    caught: usize,
    timeout: usize,
    unviable: usize,
    missed: Vec<String>,
}

impl Score {
    fn viable(&self) -> usize {
        self.caught + self.timeout + self.missed.len()
    }

    /// The share caught (timeouts count as caught); 1 with no viable mutant.
    fn ratio(&self) -> f64 {
        match self.viable() {
            0 => 1.0,
            n => (self.caught + self.timeout) as f64 / n as f64,
        }
    }
}

/// Prints and writes the table; fails when a file is under the threshold.
fn report(scores: &[Score], out_root: &Path) -> Result<(), String> {
    let mut table = String::from(
        "| file | viable | caught | timeout | missed | unviable | caught % |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in scores {
        table.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {:.1} |\n",
            s.file,
            s.viable(),
            s.caught,
            s.timeout,
            s.missed.len(),
            s.unviable,
            100.0 * s.ratio()
        ));
    }
    let mut misses = String::new();
    for s in scores.iter().filter(|s| !s.missed.is_empty()) {
        misses.push_str(&format!("\n{}:\n", s.file));
        for m in &s.missed {
            misses.push_str(&format!("- {m}\n"));
        }
    }
    println!("{table}");
    if !misses.is_empty() {
        println!(
            "Missed mutants (each to be killed by a test or explained as equivalent):{misses}"
        );
    }
    std::fs::create_dir_all(out_root).map_err(|e| format!("{}: {e}", out_root.display()))?;
    let summary = out_root.join("summary.md");
    std::fs::write(&summary, format!("{table}\n{misses}"))
        .map_err(|e| format!("{}: {e}", summary.display()))?;
    let below: Vec<&str> =
        scores.iter().filter(|s| s.ratio() < THRESHOLD).map(|s| s.file.as_str()).collect();
    if below.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "under {:.0} % caught: {} (table in {})",
            100.0 * THRESHOLD,
            below.join(", "),
            summary.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_lines_are_attributed_to_their_file() {
        let line = "mcp-auth/src/pkce.rs:42:5: replace constant_time_eq -> bool with true";
        assert!(names_file(line, "mcp-auth/src/pkce.rs"));
        assert!(!names_file(line, "mcp-auth/src/url.rs"));
        // A path relative to the package (older releases) is matched too.
        assert!(names_file("src/pkce.rs:1:1: x", "mcp-auth/src/pkce.rs"));
        assert!(!names_file("src/pkce.rs:1:1: x", "mcp-auth/src/xpkce.rs"));
    }

    #[test]
    fn timeouts_count_as_caught_and_unviable_mutants_not_at_all() {
        let score = Score {
            file: "f".into(),
            caught: 17,
            timeout: 2,
            unviable: 9,
            missed: vec!["m".into()],
        };
        assert_eq!(score.viable(), 20);
        assert!((score.ratio() - 0.95).abs() < 1e-9);
        let none = Score { file: "f".into(), caught: 0, timeout: 0, unviable: 3, missed: vec![] };
        assert_eq!(none.ratio(), 1.0);
    }

    #[test]
    fn only_covered_files_are_accepted() {
        assert_eq!(
            selected(&["./mcp-http/src/wire.rs".into()]).unwrap(),
            vec![("mcp-http", "mcp-http/src/wire.rs")]
        );
        assert!(selected(&["mcp-http/src/conn.rs".into()]).is_err());
        assert_eq!(selected(&[]).unwrap().len(), FILES.len());
    }

    #[test]
    fn every_covered_file_exists() {
        for (_, file) in FILES {
            assert!(steps::root().join(file).is_file(), "{file} is listed but missing");
        }
    }
}
