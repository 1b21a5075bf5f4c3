//! Loads a configuration file (the `[mcp_client]` TOML, or `mcpServers`
//! JSON) and lists its servers, without connecting to any; warnings go to
//! stderr.
//!
//! `cargo run -p mcp-host-registry --example servers -- path/to/mcp.toml`
//! (add `--strict` after the path to make warnings errors). Builds with any
//! feature set: the servers whose transport is compiled out are marked.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use mcp_host_registry::{Config, LoadOptions, TransportConfig};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: servers <mcp.toml | mcp.json> [--strict]");
        return ExitCode::from(2);
    };
    let options =
        LoadOptions { strict: args.next().is_some_and(|a| a == "--strict"), ..Default::default() };
    let loaded = match Config::load(path.as_ref(), &options) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    if !loaded.config.enabled {
        println!("(the configuration is disabled)");
    }
    for server in &loaded.config.servers {
        // `Debug` of a transport shows no secret: environment and header
        // names only, the endpoint as scheme and host.
        let (kind, compiled_in, how) = match &server.transport {
            TransportConfig::Stdio(c) => {
                ("stdio", cfg!(feature = "stdio"), format!("{} {}", c.command, c.args.join(" ")))
            }
            other => ("http", cfg!(feature = "http"), format!("{other:?}")),
        };
        let missing = if compiled_in { "" } else { " (transport not compiled in)" };
        println!("{:<16} {kind:<5} {how}{missing}", server.name);
        if let Some(description) = &server.description {
            println!("{:<16} {description}", "");
        }
    }
    ExitCode::SUCCESS
}
