//! `cargo xtask idp`: OAuth against a real OpenID provider.
//!
//! Installs the pinned `oidc-provider`, `oauth2-mock-server` and Node.js 22
//! of `xtask/idp/` into `.tools/idp/` (git-ignored) with `npm ci`, copies
//! their scripts (`xtask/idp/provider.mjs`, `mock.mjs`) beside them (their
//! imports resolve from there),
//! then runs the `idp::` and `idp_quirks::` tests of each crate that has them (compiled with
//! the `idp-tests` feature) with `MCP_IDP_NODE` and `MCP_IDP_JS` set. Each
//! test starts its own provider on a free loopback port.

use std::path::PathBuf;
use std::process::Command;

use crate::steps::{Step, module_tests, npm_ci_pinned, root};

/// Where the provider is installed.
fn install_dir() -> PathBuf {
    root().join(".tools").join("idp")
}

/// The installed Node.js 22.
fn node() -> PathBuf {
    install_dir().join("node_modules").join(".bin").join("node")
}

/// The installed provider script.
fn provider_js() -> PathBuf {
    install_dir().join("provider.mjs")
}

/// The installed `oauth2-mock-server` script.
fn mock_js() -> PathBuf {
    install_dir().join("mock.mjs")
}

fn installed() -> bool {
    node().exists()
        && install_dir().join("node_modules/oidc-provider/package.json").is_file()
        && install_dir().join("node_modules/oauth2-mock-server/package.json").is_file()
}

/// Installs the provider and Node.js unless the installed lock matches the
/// pinned one, copies the script (always: it may change without the lock),
/// and checks the Node.js version.
fn install() -> Result<(), String> {
    let src = root().join("xtask").join("idp");
    npm_ci_pinned(&src, &install_dir(), installed)?;
    for (script, to) in [("provider.mjs", provider_js()), ("mock.mjs", mock_js())] {
        std::fs::copy(src.join(script), to).map_err(|e| format!("copying {script}: {e}"))?;
    }
    let out = Command::new(node())
        .arg("--version")
        .output()
        .map_err(|e| format!("running the installed node: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !version.starts_with("v22.") {
        return Err(format!("the installed node is {version:?}, expected v22.x"));
    }
    Ok(())
}

/// The `idp::` and `idp_quirks::` tests of a crate, with the provider in
/// the environment.
fn idp_test(krate: &str) -> Result<(), String> {
    module_tests(
        krate,
        "idp-tests",
        &["idp", "idp_quirks"],
        &[("MCP_IDP_NODE", node()), ("MCP_IDP_JS", provider_js()), ("MCP_IDP_MOCK_JS", mock_js())],
    )
}

/// The steps: install, then each crate's tests against the provider.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("idp: install the pinned OpenID provider", install),
        Step::new("idp: mcp-http vs oidc-provider (login, refresh, DPoP, revoke, quirks)", || {
            idp_test("mcp-http")
        }),
        Step::new("idp: mcpc login/logout vs oidc-provider (configured quirks)", || {
            idp_test("mcpc")
        }),
    ]
}
