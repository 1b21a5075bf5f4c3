//! `mcpc` end to end: the built binary, its output and exit codes, against
//! the embedded demo server, the testkit over stdio and HTTP, and
//! configuration files. This file holds what they share; the tests are in
//! `cli/`, one file per subject.

#[path = "cli/basics.rs"]
mod basics;
#[path = "cli/config.rs"]
mod config;
#[path = "cli/credentials.rs"]
mod credentials;
#[path = "cli/host.rs"]
mod host;
#[path = "cli/hostile.rs"]
mod hostile;
#[path = "cli/servers.rs"]
mod servers;
#[cfg(unix)]
#[path = "cli/signals.rs"]
mod signals;

fn testkit() -> String {
    mcp_testkit::binary_path().to_string_lossy().into_owned()
}
