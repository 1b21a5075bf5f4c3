//! Developer tools installed from crates.io into `.tools/` (git-ignored) on
//! first use, each at the release the commands are written against.

use std::path::PathBuf;
use std::process::Command;

use crate::steps;

/// The path of `bin`, a binary of `krate` at `version`, installed into
/// `.tools/bin` when it is missing or another release answers
/// `--version` there.
pub(crate) fn installed(krate: &str, version: &str, bin: &str) -> Result<PathBuf, String> {
    let tools = steps::root().join(".tools");
    let path = tools.join("bin").join(bin);
    let current = Command::new(&path)
        .arg("--version")
        .output()
        .map(|out| {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).trim_end().ends_with(version)
        })
        .unwrap_or(false);
    if !current {
        let mut cmd = steps::cargo();
        cmd.args(["install", "--locked", "--quiet", "--root"]).arg(&tools).args([
            "--version",
            version,
            krate,
        ]);
        steps::run(cmd)?;
    }
    Ok(path)
}
