//! The installed suite: its install (under a lock, one run per checkout at
//! a time), `PATH` with its Node.js, its scenario lists checked against a
//! table, and one scenario run against our client.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::conformance::scenarios::{REVISIONS, Scenario};
use crate::steps::{root, run};

fn install_dir() -> PathBuf {
    root().join(".tools").join("conformance")
}

pub(crate) fn bin_dir() -> PathBuf {
    install_dir().join("node_modules").join(".bin")
}

/// The lock a conformance run holds from its install to its end (the
/// process's end): two runs in one checkout would otherwise `npm ci` into
/// the same folder and overwrite each other's results.
static RUN_LOCK: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();

/// Takes the checkout's conformance lock (`.tools/conformance.lock`),
/// waiting for a run that holds it; released when this process ends.
fn lock_run() -> Result<(), String> {
    if RUN_LOCK.get().is_some() {
        return Ok(());
    }
    let path = root().join(".tools").join("conformance.lock");
    std::fs::create_dir_all(path.parent().unwrap_or(&path))
        .map_err(|e| format!("creating {}: {e}", path.display()))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock() {
        println!("another conformance run holds {}; waiting for it", path.display());
    }
    file.lock().map_err(|e| format!("locking {}: {e}", path.display()))?;
    let _ = RUN_LOCK.set(file);
    Ok(())
}

/// Installs the suite and Node.js 22 unless the installed lock matches.
pub(crate) fn install() -> Result<(), String> {
    lock_run()?;
    let src = root().join("xtask").join("conformance");
    let dst = install_dir();
    std::fs::create_dir_all(&dst).map_err(|e| format!("creating {}: {e}", dst.display()))?;
    let pinned = std::fs::read(src.join("package-lock.json"))
        .map_err(|e| format!("reading the pinned lock: {e}"))?;
    let installed = std::fs::read(dst.join("package-lock.json")).ok();
    if installed.as_deref() == Some(pinned.as_slice()) && bin_dir().join("conformance").exists() {
        println!("conformance suite already installed in {}", dst.display());
    } else {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(src.join(file), dst.join(file))
                .map_err(|e| format!("copying {file}: {e}"))?;
        }
        let mut npm = Command::new("npm");
        npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&dst);
        run(npm)?;
    }
    let mut node = Command::new(bin_dir().join("node"));
    node.arg("--version");
    let out = node.output().map_err(|e| format!("running the installed node: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !version.starts_with("v22.") {
        return Err(format!("the installed node is {version:?}, expected v22.x"));
    }
    Ok(())
}

/// `PATH` with the installed Node.js first.
pub(crate) fn suite_path() -> Result<std::ffi::OsString, String> {
    std::env::join_paths(
        std::iter::once(bin_dir())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .map_err(|e| format!("building PATH: {e}"))
}

/// Checks a scenario `table` against what the suite lists for one `side`
/// (`client` or `server`) in every revision (`parse` reads the listing);
/// the error names every scenario missing from either.
pub(crate) fn check_table(
    side: &str,
    parse: fn(&str) -> Vec<String>,
    table: &[Scenario],
    what: &str,
) -> Result<(), String> {
    let mut problems = Vec::new();
    for revision in REVISIONS {
        problems.extend(list_mismatch(revision, &listed(side, revision, parse)?, table));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("the {what} table is out of date:\n  {}", problems.join("\n  ")))
    }
}

/// The scenarios of one `side` (`client` or `server`) the suite lists for
/// `revision`, as `parse` reads its listing; none is an error.
fn listed(
    side: &str,
    revision: &str,
    parse: fn(&str) -> Vec<String>,
) -> Result<Vec<String>, String> {
    let mut cmd = Command::new(bin_dir().join("conformance"));
    cmd.args(["list", &format!("--{side}"), "--requirements", revision]).env("PATH", suite_path()?);
    let out = cmd.output().map_err(|e| format!("running conformance list: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "conformance list --{side} --requirements {revision} exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let names = parse(&String::from_utf8_lossy(&out.stdout));
    if names.is_empty() {
        return Err(format!("conformance list --requirements {revision} lists no {side} scenario"));
    }
    Ok(names)
}

/// The client scenarios of a `conformance list --client --requirements`
/// listing: the scored ones (under `Client scenarios`) and the ones run but
/// never scored (extension, added-after-release, ...) tagged `[client]`.
pub(crate) fn parse_requirements(text: &str) -> Vec<String> {
    #[derive(PartialEq)]
    enum Section {
        Other,
        Client,
        Unscored,
    }
    let mut section = Section::Other;
    let mut names = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("Client scenarios") {
            section = Section::Client;
        } else if trimmed.starts_with("Server scenarios") {
            section = Section::Other;
        } else if trimmed.starts_with("Run and reported") {
            section = Section::Unscored;
        } else if let Some(item) = trimmed.strip_prefix("- ") {
            let name = match section {
                Section::Client => Some(item.split_whitespace().next().unwrap_or(item)),
                Section::Unscored => item.strip_suffix("[client]").map(str::trim),
                Section::Other => None,
            };
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                names.push(name.to_owned());
            }
        } else if !trimmed.is_empty() && !line.starts_with(' ') {
            // A new top-level heading ends the previous section.
            section = Section::Other;
        }
    }
    names
}

/// How [`SCENARIOS`](crate::conformance::scenarios::SCENARIOS) differs from what the suite lists for `revision`:
/// scenarios it lists that the table lacks, and table entries it no longer
/// lists. Empty when they agree.
pub(crate) fn list_mismatch(revision: &str, listed: &[String], table: &[Scenario]) -> Vec<String> {
    let mut problems = Vec::new();
    for name in listed {
        if !table.iter().any(|s| s.revision == revision && s.name == name) {
            problems.push(format!(
                "the suite lists scenario {name} for {revision}, which the xtask does not run"
            ));
        }
    }
    for s in table.iter().filter(|s| s.revision == revision) {
        if !listed.iter().any(|n| n == s.name) {
            problems.push(format!(
                "the xtask runs {} at {revision}, which the suite no longer lists",
                s.name
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for s in table.iter().filter(|s| s.revision == revision) {
        if !seen.insert(s.name) {
            problems.push(format!("{} is in the table twice at {revision}", s.name));
        }
    }
    problems
}

/// Empties (or makes) `out` for one scenario's run; its `runner.log`,
/// twice, for the runner's stdout and stderr.
pub(crate) fn fresh_run_dir(out: &Path) -> Result<(std::fs::File, std::fs::File), String> {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let log = std::fs::File::create(out.join("runner.log"))
        .map_err(|e| format!("creating the runner log: {e}"))?;
    let log_err = log.try_clone().map_err(|e| format!("the runner log: {e}"))?;
    Ok((log, log_err))
}

/// Runs one scenario at its revision and returns its `checks.json`.
pub(crate) fn run_scenario(client: &Path, s: &Scenario) -> Result<String, String> {
    let out =
        root().join("target").join("conformance").join(s.revision).join(s.name.replace('/', "_"));
    let (log, log_err) = fresh_run_dir(&out)?;
    let mut cmd = Command::new(bin_dir().join("conformance"));
    cmd.args(["client", "--command"])
        .arg(format!("exec {}", client.display()))
        .args(["--scenario", s.name, "--spec-version", s.revision, "--force"])
        .args(["--timeout", "30000", "-o"])
        .arg(&out)
        .env("PATH", suite_path()?)
        .stdout(log)
        .stderr(log_err)
        .current_dir(&out);
    // The runner's own verdict is in runner.log; ours comes from checks.json.
    let status = cmd.status().map_err(|e| format!("starting the conformance runner: {e}"))?;
    let checks_file = find_file(&out, "checks.json").ok_or_else(|| {
        format!(
            "the runner wrote no checks.json (runner exit {status}; see {})",
            out.join("runner.log").display()
        )
    })?;
    std::fs::read_to_string(&checks_file)
        .map_err(|e| format!("reading {}: {e}", checks_file.display()))
}

pub(crate) fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::scenarios::{R25, R26, gap, pass};

    const LISTING: &str = "\
Required for 2026-07-28 (69 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - tools-list

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default

Run and reported, but never scored:
  extension (3):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  added-after-release (1):
    - json-schema-2020-12-preservation [client]
  pending (1):
    - json-schema-2020-12 [server]
";

    #[test]
    fn requirement_listing() {
        assert_eq!(
            parse_requirements(LISTING),
            [
                "tools_call",
                "auth/metadata-default",
                "auth/dpop",
                "json-schema-2020-12-preservation"
            ]
        );
        assert!(parse_requirements("nothing here\n").is_empty());
    }

    #[test]
    fn table_against_listing() {
        let listed = parse_requirements(LISTING);
        let table = [
            pass("tools_call", R26, &[]),
            pass("auth/metadata-default", R26, &[]),
            gap("auth/dpop", R26, &[], "later"),
            pass("json-schema-2020-12-preservation", R26, &[]),
            pass("tools_call", R25, &[]),
        ];
        assert!(list_mismatch(R26, &listed, &table).is_empty());
        // A scenario the suite adds, one it drops, one listed twice.
        let p = list_mismatch(R26, &listed, &table[1..]);
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("tools_call"), "{p:?}");
        let stale = [&table[..], &[pass("gone", R26, &[])]].concat();
        assert!(list_mismatch(R26, &listed, &stale)[0].contains("no longer lists"));
        let twice = [&table[..], &[pass("tools_call", R26, &[])]].concat();
        assert!(list_mismatch(R26, &listed, &twice)[0].contains("twice"));
    }
}
