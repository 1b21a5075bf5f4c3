//! `cargo xtask interop`: the transports against servers nobody here wrote.
//!
//! Installs the pinned npm packages of `xtask/interop/` into
//! `.tools/interop/` (git-ignored) with `npm ci`, then runs each crate's
//! `interop` test target with the server's entry point in the environment.

use std::path::PathBuf;

use crate::steps::{Step, cargo, root, run};

/// Where the pinned peers are installed.
fn install_dir() -> PathBuf {
    root().join(".tools").join("interop")
}

/// The entry point of `@modelcontextprotocol/server-everything`.
fn everything_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// Installs the peers unless the installed lock file matches the pinned one.
fn install() -> Result<(), String> {
    let src = root().join("xtask").join("interop");
    let dst = install_dir();
    std::fs::create_dir_all(&dst).map_err(|e| format!("creating {}: {e}", dst.display()))?;
    let pinned = std::fs::read(src.join("package-lock.json"))
        .map_err(|e| format!("reading the pinned lock: {e}"))?;
    let installed = std::fs::read(dst.join("package-lock.json")).ok();
    if installed.as_deref() == Some(pinned.as_slice()) && everything_js().is_file() {
        println!("interop peers already installed in {}", dst.display());
        return Ok(());
    }
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(src.join(file), dst.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    let mut npm = std::process::Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&dst);
    run(npm)?;
    if !everything_js().is_file() {
        return Err(format!("npm ci did not install {}", everything_js().display()));
    }
    Ok(())
}

/// The interop steps: install, then each transport's interop tests.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("interop: install pinned peers", install),
        Step::new("interop: mcp-stdio vs server-everything", || {
            let mut cmd = cargo();
            cmd.args([
                "test",
                "--locked",
                "-p",
                "mcp-stdio",
                "--features",
                "interop-tests",
                "--test",
                "interop",
            ]);
            cmd.env("MCP_EVERYTHING_JS", everything_js());
            run(cmd)
        }),
        Step::new("interop: mcp-http vs server-everything (streamableHttp and sse)", || {
            let mut cmd = cargo();
            cmd.args([
                "test",
                "--locked",
                "-p",
                "mcp-http",
                "--features",
                "interop-tests",
                "--test",
                "interop",
            ]);
            cmd.env("MCP_EVERYTHING_JS", everything_js());
            run(cmd)
        }),
        Step::new("interop: mcp-cli (mcpc --server) vs server-everything", || {
            let mut cmd = cargo();
            cmd.args([
                "test",
                "--locked",
                "-p",
                "mcp-cli",
                "--features",
                "interop-tests",
                "--test",
                "interop",
            ]);
            cmd.env("MCP_EVERYTHING_JS", everything_js());
            run(cmd)
        }),
    ]
}
