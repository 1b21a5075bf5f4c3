//! `cargo publish --dry-run` of every publishable crate: each one packaged
//! and built from its own tarball, as crates.io would receive it.

use std::path::{Path, PathBuf};

use crate::steps::{Step, cargo, root, run};

/// The `package` step: one `cargo publish --dry-run` over all the crates
/// that can be published (those without `publish = false`, read from
/// `cargo metadata`). Cargo orders them by their dependencies and resolves
/// each one's unpublished workspace dependencies from a local registry of
/// the crates packaged before it, so nothing is uploaded and the only
/// network access is the crates.io index the build already uses.
/// Verification is on: each crate is compiled from its packaged sources.
pub(crate) fn dry_run() -> Step {
    Step::new("publish --dry-run", || {
        let crates = publishable()?;
        if crates.is_empty() {
            return Err("no publishable crate in the workspace".into());
        }
        println!("publishable crates: {}", crates.join(", "));
        // Its own target dir: the verification builds never touch (or race
        // with) the artifacts of ordinary builds.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("target"))
            .join("package-verify");
        clear_stale_package_state(&target, &crates)?;
        let mut cmd = cargo();
        cmd.env("CARGO_TARGET_DIR", &target);
        cmd.args(["publish", "--dry-run", "--locked", "--allow-dirty"]);
        for name in &crates {
            cmd.args(["--package", name]);
        }
        run(cmd)
    })
}

/// The workspace packages that may go to crates.io (`cargo metadata` gives
/// `publish` as `null` for "anywhere", else the list of registries allowed:
/// `[]` for `publish = false`).
fn publishable() -> Result<Vec<String>, String> {
    let mut cmd = cargo();
    cmd.args(["metadata", "--no-deps", "--format-version", "1", "--locked"]);
    let output = cmd.output().map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed something other than JSON: {e}"))?;
    Ok(publishable_in(&metadata))
}

/// The names of the packages of `metadata` that may be published to crates.io.
fn publishable_in(metadata: &serde_json::Value) -> Vec<String> {
    let Some(packages) = metadata.get("packages").and_then(serde_json::Value::as_array) else {
        return Vec::new();
    };
    packages
        .iter()
        .filter(|p| match p.get("publish") {
            None | Some(serde_json::Value::Null) => true,
            Some(serde_json::Value::Array(registries)) => {
                registries.iter().any(|r| r.as_str() == Some("crates-io"))
            }
            Some(_) => false,
        })
        .filter_map(|p| p.get("name").and_then(serde_json::Value::as_str).map(str::to_owned))
        .collect()
}

/// Verification resolves the workspace crates from a local registry under
/// `<target>/package`, and Cargo treats registry crates as immutable: an
/// earlier run's unpacked sources (in `$CARGO_HOME/registry/src/-<hash>/`)
/// or compiled artifacts of the same name and version would be reused for
/// today's changed crate. Clears all three for the crates being published
/// only.
fn clear_stale_package_state(target: &Path, crates: &[String]) -> Result<(), String> {
    let ours = |name: &str| crates.iter().any(|c| name.starts_with(&format!("{c}-")));
    let tmp_registry = target.join("package");
    if tmp_registry.exists() {
        std::fs::remove_dir_all(&tmp_registry)
            .map_err(|e| format!("clearing {}: {e}", tmp_registry.display()))?;
    }
    // Our crates' fingerprints: only they rebuild.
    for profile in ["debug", "release"] {
        remove_entries(&target.join(profile).join(".fingerprint"), ours)?;
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(home) = home else { return Ok(()) };
    for kind in ["src", "cache"] {
        let Ok(registries) = std::fs::read_dir(home.join("registry").join(kind)) else { continue };
        for registry in registries.flatten() {
            // Local registries have no index name: their folders start with
            // '-'. crates.io's are never touched.
            if registry.file_name().to_string_lossy().starts_with('-') {
                remove_entries(&registry.path(), ours)?;
            }
        }
    }
    Ok(())
}

/// Removes the entries of `dir` whose names match (a missing `dir` is fine).
fn remove_entries(dir: &Path, matches: impl Fn(&str) -> bool) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for entry in entries.flatten() {
        if matches(&entry.file_name().to_string_lossy()) {
            let path = entry.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| format!("clearing {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::publishable_in;

    #[test]
    fn only_crates_that_may_go_to_crates_io() {
        let metadata = serde_json::json!({"packages": [
            {"name": "mcp-proto", "publish": null},
            {"name": "mcpc"},
            {"name": "xtask", "publish": []},
            {"name": "internal", "publish": ["company-registry"]},
            {"name": "both", "publish": ["company-registry", "crates-io"]},
        ]});
        assert_eq!(publishable_in(&metadata), ["mcp-proto", "mcpc", "both"]);
    }
}
