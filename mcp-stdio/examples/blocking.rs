//! The blocking client from a plain `fn main`, no async runtime in sight:
//! `cargo run -p mcp-client-stdio --features blocking --example blocking -- <command> [args...]`
//! (by default, the testkit server if it was built: `mcp-testkit stdio`).
#![allow(clippy::print_stdout)]

use mcp_client_stdio::{ServerCommand, StdioOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let command = match args.next() {
        Some(program) => ServerCommand::new(program).args(args),
        None => ServerCommand::new("mcp-testkit").arg("stdio"),
    };
    let client = mcp_client_stdio::blocking::spawn(command, StdioOptions::new("example"))?;
    let init = client.initialize()?;
    println!("{} {}", init.server_info.name, init.server_info.version);
    for tool in client.list_tools()?.iter() {
        println!("- {}", tool.name);
    }
    client.close()?;
    Ok(())
}
