//! `cargo xtask interop`: the transports against servers nobody here wrote.
//!
//! Installs the pinned npm packages of `xtask/interop/` into
//! `.tools/interop/` (git-ignored) with `npm ci`, copies the server written
//! with the TypeScript SDK v2 (`xtask/interop/ts-server.mjs`) beside them (its
//! imports resolve from there), then runs each crate's interop tests (the
//! modules of its one test binary, `tests`, compiled with the
//! `interop-tests` feature) with the servers' entry points in the
//! environment: `interop::` against `server-everything` (the handshake era),
//! `interop_modern::` against the SDK v2 server (the stateless era,
//! 2026-07-28, and its handshake-era leg).

use std::path::PathBuf;

use crate::steps::{Step, module_tests, npm_ci_pinned, root};

/// Where the pinned peers are installed.
fn install_dir() -> PathBuf {
    root().join(".tools").join("interop")
}

/// The entry point of `@modelcontextprotocol/server-everything`.
fn everything_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The entry point of `@modelcontextprotocol/server` (the TypeScript SDK v2).
fn ts_sdk_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server/dist/index.mjs")
}

/// The installed copy of the server written with the TypeScript SDK v2.
fn ts_server_js() -> PathBuf {
    install_dir().join("ts-server.mjs")
}

/// Whether every pinned peer is installed.
fn installed() -> bool {
    everything_js().is_file() && ts_sdk_js().is_file()
}

/// Installs the peers unless the installed lock file matches the pinned one,
/// and copies the SDK v2 server script beside them (always: it may change
/// without the lock changing).
fn install() -> Result<(), String> {
    install_packages()?;
    let src = root().join("xtask").join("interop").join("ts-server.mjs");
    std::fs::copy(&src, ts_server_js()).map_err(|e| format!("copying ts-server.mjs: {e}"))?;
    Ok(())
}

fn install_packages() -> Result<(), String> {
    let src = root().join("xtask").join("interop");
    npm_ci_pinned(&src, &install_dir(), installed)
}

/// The tests of one interop module of the crate's test binary, with the
/// servers' entry points in the environment.
fn interop_test(krate: &str, module: &str) -> Result<(), String> {
    let env = [("MCP_EVERYTHING_JS", everything_js()), ("MCP_TS_SERVER_JS", ts_server_js())];
    module_tests(krate, "interop-tests", &[module], &env)
}

/// The interop steps: install, then each transport's interop tests.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("interop: install pinned peers", install),
        Step::new("interop: mcp-stdio vs server-everything", || {
            interop_test("mcp-client-stdio", "interop")
        }),
        Step::new("interop: mcp-http vs server-everything (streamableHttp and sse)", || {
            interop_test("mcp-http", "interop")
        }),
        Step::new(
            "interop: mcp-cli (mcpc --server) vs server-everything and the TypeScript SDK v2 server",
            || interop_test("mcpc", "interop"),
        ),
        Step::new("interop: mcp-stdio vs the TypeScript SDK v2 server (2026-07-28)", || {
            interop_test("mcp-client-stdio", "interop_modern")
        }),
        Step::new("interop: mcp-http vs the TypeScript SDK v2 server (2026-07-28)", || {
            interop_test("mcp-http", "interop_modern")
        }),
    ]
}
