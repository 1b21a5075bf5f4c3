//! `cargo xtask conformance`: the official MCP conformance suite against our
//! client.
//!
//! Installs the pinned `@modelcontextprotocol/conformance` and the Node.js 22
//! it needs (both from npm, `xtask/conformance/`) into `.tools/conformance/`,
//! builds the conformance client binary (package `mcp-conformance`, built on
//! the public API only), runs every scenario in [`SCENARIOS`] with
//! `exec <binary>` as the client command, and reads each `checks.json`: a
//! scenario passes only when every expected check id is there as `SUCCESS`
//! and no check is `FAILURE` or `WARNING`. A client that crashes early can
//! still produce no failed check, which is why the expected ids matter.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::steps::{Step, cargo, root, run};

/// Each client scenario this project must pass, with the check ids that must
/// come out `SUCCESS`.
pub(crate) const SCENARIOS: &[(&str, &[&str])] = &[
    ("initialize", &["mcp-client-initialization"]),
    ("tools_call", &["tool-add-numbers"]),
    ("sse-retry", &["client-sse-graceful-reconnect", "client-sse-retry-timing"]),
    (
        "elicitation-sep1034-client-defaults",
        &[
            "client-elicitation-sep1034-string-default",
            "client-elicitation-sep1034-integer-default",
            "client-elicitation-sep1034-number-default",
            "client-elicitation-sep1034-enum-default",
            "client-elicitation-sep1034-boolean-default",
        ],
    ), // Every `auth/*` client scenario of `conformance list --client`: the
    // SUCCESS ids each emits for a well-behaved client (its own checks and
    // those of the suite's authorization and MCP server helpers). In
    // `auth/resource-mismatch` and `auth/scope-retry-limit` the client is
    // meant to fail: `resource-mismatch-rejected` (no authorization request
    // made) and `scope-retry-limit` (at most 3 step-ups) prove the refusal.
    (
        "auth/metadata-default",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/metadata-var1",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/metadata-var2",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/metadata-var3",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/basic-cimd",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "cimd-client-id-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/scope-from-www-authenticate",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-from-www-authenticate",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/scope-from-scopes-supported",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-from-scopes-supported",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/scope-omitted-when-undefined",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-omitted-when-undefined",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/scope-step-up",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-step-up-initial",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "scope-step-up-escalation",
        ],
    ),
    (
        "auth/scope-retry-limit",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "scope-retry-limit",
        ],
    ),
    (
        "auth/token-endpoint-auth-basic",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
        ],
    ),
    (
        "auth/token-endpoint-auth-post",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
        ],
    ),
    (
        "auth/token-endpoint-auth-none",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
        ],
    ),
    (
        "auth/pre-registration",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "pre-registration-auth",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/2025-03-26-oauth-metadata-backcompat",
        &[
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/2025-03-26-oauth-endpoint-fallback",
        &["client-registration", "authorization-request", "token-request", "valid-bearer-token"],
    ),
    ("auth/resource-mismatch", &["prm-pathbased-requested", "resource-mismatch-rejected"]),
    (
        "auth/offline-access-scope",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "sep-2207-client-metadata-grant-types",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2207-offline-access-requested",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/offline-access-not-supported",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2207-offline-access-not-requested",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/client-credentials-jwt",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "token-request",
            "client-credentials-jwt-verified",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/client-credentials-basic",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "token-request",
            "client-credentials-basic-auth",
            "valid-bearer-token",
        ],
    ),
    (
        "auth/cross-app-access-complete-flow",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "complete-flow-token-exchange",
            "token-request",
            "complete-flow-jwt-bearer",
            "valid-bearer-token",
        ],
    ),
];

fn install_dir() -> PathBuf {
    root().join(".tools").join("conformance")
}

fn bin_dir() -> PathBuf {
    install_dir().join("node_modules").join(".bin")
}

/// Installs the suite and Node.js 22 unless the installed lock matches.
fn install() -> Result<(), String> {
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

/// Builds the conformance client and returns its path.
fn build_client() -> Result<PathBuf, String> {
    let mut cmd = cargo();
    cmd.args(["build", "--locked", "-p", "mcp-conformance", "--bin", "mcp-conformance-client"]);
    run(cmd)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let bin = target
        .join("debug")
        .join(format!("mcp-conformance-client{}", std::env::consts::EXE_SUFFIX));
    if !bin.is_file() {
        return Err(format!("the client binary is not at {}", bin.display()));
    }
    if bin.to_string_lossy().contains(char::is_whitespace) {
        // The runner splits the command on spaces.
        return Err(format!(
            "the client path {} has white space, which the runner cannot take",
            bin.display()
        ));
    }
    Ok(bin)
}

/// Runs one scenario and checks its results.
fn run_scenario(client: &Path, scenario: &str, expected: &[&str]) -> Result<(), String> {
    let out = root().join("target").join("conformance").join(scenario.replace('/', "_"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let path = std::env::join_paths(
        std::iter::once(bin_dir())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .map_err(|e| format!("building PATH: {e}"))?;
    let mut cmd = Command::new(bin_dir().join("conformance"));
    cmd.args(["client", "--command"])
        .arg(format!("exec {}", client.display()))
        .args(["--scenario", scenario, "--timeout", "30000", "-o"])
        .arg(&out)
        .env("PATH", path)
        .current_dir(&out);
    // The runner's own verdict is printed; ours comes from checks.json.
    let status = cmd.status().map_err(|e| format!("starting the conformance runner: {e}"))?;
    let checks_file = find_file(&out, "checks.json").ok_or_else(|| {
        format!("{scenario}: the runner wrote no checks.json (runner exit {status})")
    })?;
    let text = std::fs::read_to_string(&checks_file)
        .map_err(|e| format!("reading {}: {e}", checks_file.display()))?;
    verdict(scenario, &text, expected)
}

/// Judges one scenario's `checks.json`.
pub(crate) fn verdict(scenario: &str, checks_json: &str, expected: &[&str]) -> Result<(), String> {
    let checks = parse_checks(checks_json)
        .ok_or_else(|| format!("{scenario}: checks.json is not a list of checks"))?;
    let mut problems = Vec::new();
    for (id, status) in &checks {
        if status == "FAILURE" || status == "WARNING" {
            problems.push(format!("{id} is {status}"));
        }
    }
    for id in expected {
        if !checks.iter().any(|(i, s)| i == id && s == "SUCCESS") {
            problems.push(format!("{id} is missing or not SUCCESS"));
        }
    }
    if problems.is_empty() {
        println!("conformance {scenario}: {} checks, all expected SUCCESS", checks.len());
        Ok(())
    } else {
        Err(format!("conformance {scenario}: {}", problems.join("; ")))
    }
}

/// `[(id, status)]` from a `checks.json` array.
fn parse_checks(text: &str) -> Option<Vec<(String, String)>> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value
        .as_array()?
        .iter()
        .map(|c| Some((c.get("id")?.as_str()?.to_owned(), c.get("status")?.as_str()?.to_owned())))
        .collect()
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
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

/// The conformance steps: install, build the client, every scenario.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("conformance: install suite and Node.js 22", install),
        Step::new("conformance: client scenarios", || {
            let client = build_client()?;
            let mut failures = Vec::new();
            for (scenario, expected) in SCENARIOS {
                if let Err(e) = run_scenario(&client, scenario, expected) {
                    failures.push(e);
                }
            }
            if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn verdicts() {
        let ok = r#"[{"id":"a","status":"SUCCESS","specReferences":[{"id":"x"}]},{"id":"b","status":"INFO"}]"#;
        assert!(verdict("s", ok, &["a"]).is_ok());
        assert!(verdict("s", ok, &["a", "c"]).unwrap_err().contains("c is missing"));
        let warn = r#"[{"id":"a","status":"SUCCESS"},{"id":"t","status":"WARNING"}]"#;
        assert!(verdict("s", warn, &["a"]).unwrap_err().contains("t is WARNING"));
        let fail = r#"[{"id":"a","status":"FAILURE"}]"#;
        assert!(verdict("s", fail, &["a"]).is_err());
        assert!(verdict("s", "{}", &[]).is_err());
    }
}
