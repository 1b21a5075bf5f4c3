//! Resolves a command the way `mcp-stdio` does before it spawns a server:
//! the PATH a spawned server gets (the login shell's, this process's, the
//! tool directories that exist), then the file the command names, or the
//! message that tells the user what to install.
//!
//! `cargo run -p mcp-spawn-env --example resolve -- npx` (default: `sh`).
//! Prints the number of PATH entries, never the PATH itself.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use mcp_spawn_env::{Platform, resolve_command, spawn_path, split_path_list};

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_else(|| "sh".to_owned());
    // No PATH configured for this server: the discovered one.
    let path = spawn_path(None);
    let entries = split_path_list(&path, Platform::CURRENT);
    println!("the spawn PATH has {} entries", entries.len());
    let cwd = std::env::current_dir().unwrap_or_default();
    match resolve_command(&command, &cwd, &path, "this example") {
        Ok(program) => {
            println!("{command} -> {}", program.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{error}");
            ExitCode::FAILURE
        }
    }
}
