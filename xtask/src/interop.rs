//! `cargo xtask interop`: the transports against servers nobody here wrote.
//!
//! Installs the pinned npm packages of `xtask/interop/` into
//! `.tools/interop/` (git-ignored) with `npm ci`, copies the servers written
//! here with the official SDKs (`xtask/interop/*.mjs`) beside them (their
//! imports resolve from there), then runs each crate's interop tests (the
//! modules of its one test binary, `tests`, compiled with the
//! `interop-tests` feature) with the servers' entry points in the
//! environment: `interop::` against `server-everything` (the handshake era),
//! `interop_modern::` against the SDK v2 server (the stateless era,
//! 2026-07-28, and its handshake-era leg); `mcpc` also against MCP Apps
//! servers (`server-map`, and `xtask/interop/apps-server.mjs` written with
//! `@modelcontextprotocol/ext-apps`); and `interop_shape::` (the
//! registry's schema shaping) against the tool schemas of the everything,
//! filesystem and memory servers. Last, hosts nobody here wrote (the
//! TypeScript SDK v2 and Python SDK clients) through `mcpc serve`
//! (`interop_hosts.rs`).

use std::path::PathBuf;

use crate::steps::{Step, module_tests, npm_ci_pinned, root};

/// Where the pinned peers are installed.
fn install_dir() -> PathBuf {
    root().join(".tools").join("interop")
}

/// The entry point of `@modelcontextprotocol/server-everything`.
pub(crate) fn everything_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The entry point of `@modelcontextprotocol/server-filesystem`.
fn filesystem_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// The entry point of `@modelcontextprotocol/server-memory`.
fn memory_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

/// The entry point of `@modelcontextprotocol/server` (the TypeScript SDK v2).
fn ts_sdk_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server/dist/index.mjs")
}

/// The installed copy of the server written with the TypeScript SDK v2.
pub(crate) fn ts_server_js() -> PathBuf {
    install_dir().join("ts-server.mjs")
}

/// The installed copy of the host written with the TypeScript SDK v2
/// client (`interop_hosts.rs` runs it).
pub(crate) fn ts_host_js() -> PathBuf {
    install_dir().join("ts-host.mjs")
}

/// The entry point of `@modelcontextprotocol/client` (the TypeScript SDK v2
/// client).
fn ts_client_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/client/dist/index.mjs")
}

/// The entry point of `@modelcontextprotocol/server-map` (an official MCP
/// Apps example server).
fn map_server_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/server-map/dist/index.js")
}

/// The entry point of `@modelcontextprotocol/ext-apps`' server helpers.
fn ext_apps_js() -> PathBuf {
    install_dir().join("node_modules/@modelcontextprotocol/ext-apps/dist/src/server/index.js")
}

/// The installed copy of the server written with the MCP Apps SDK.
fn apps_server_js() -> PathBuf {
    install_dir().join("apps-server.mjs")
}

/// The scripts of `xtask/interop/` copied beside the installed packages
/// (`ts-common.mjs`: what the scripts driving the TypeScript SDK client
/// share, this host's and `sdk-bench`'s).
const SCRIPTS: [&str; 4] = ["ts-server.mjs", "apps-server.mjs", "ts-host.mjs", "ts-common.mjs"];

/// The entry points of every pinned package.
fn entry_points() -> [PathBuf; 7] {
    [
        everything_js(),
        ts_sdk_js(),
        ts_client_js(),
        map_server_js(),
        ext_apps_js(),
        filesystem_js(),
        memory_js(),
    ]
}

/// Whether every pinned peer is installed.
fn installed() -> bool {
    entry_points().iter().all(|p| p.is_file())
}

/// Installs the peers unless the installed lock file matches the pinned one,
/// and copies the server scripts beside them (always: they may change
/// without the lock changing).
pub(crate) fn install() -> Result<(), String> {
    install_packages()?;
    for script in SCRIPTS {
        let src = root().join("xtask").join("interop").join(script);
        std::fs::copy(&src, install_dir().join(script))
            .map_err(|e| format!("copying {script}: {e}"))?;
    }
    Ok(())
}

fn install_packages() -> Result<(), String> {
    let src = root().join("xtask").join("interop");
    npm_ci_pinned(&src, &install_dir(), installed)
}

/// The tests of one interop module of the crate's test binary, with the
/// servers' entry points in the environment.
fn interop_test(krate: &str, module: &str) -> Result<(), String> {
    let env = [
        ("MCP_EVERYTHING_JS", everything_js()),
        ("MCP_TS_SERVER_JS", ts_server_js()),
        ("MCP_APPS_SERVER_JS", apps_server_js()),
        ("MCP_MAP_SERVER_JS", map_server_js()),
        ("MCP_FILESYSTEM_JS", filesystem_js()),
        ("MCP_MEMORY_JS", memory_js()),
    ];
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
            "interop: mcp-cli (mcpc --server) vs server-everything, the TypeScript SDK v2 server and MCP Apps servers",
            || interop_test("mcpc", "interop"),
        ),
        Step::new(
            "interop: mcp-registry schema shaping vs the everything, filesystem and memory servers",
            || interop_test("mcp-host-registry", "interop_shape"),
        ),
        Step::new("interop: mcp-stdio vs the TypeScript SDK v2 server (2026-07-28)", || {
            interop_test("mcp-client-stdio", "interop_modern")
        }),
        Step::new("interop: mcp-http vs the TypeScript SDK v2 server (2026-07-28)", || {
            interop_test("mcp-http", "interop_modern")
        }),
        crate::interop_hosts::step(),
    ]
}
