//! A server given on a command line (`mcpc --server SPEC -H 'Name: value'`):
//! `parse_server_spec` never panics; a URL is kept verbatim (trimmed) with
//! one header per name (ignoring case); anything else is a command whose
//! program is the first word, and takes no headers.
//!
//! The input's first line is the spec, the other lines are `-H` values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_host_registry::{TransportConfig, parse_server_spec};

fn check_spec(text: &str) {
    let mut lines = text.split('\n');
    let spec = lines.next().unwrap_or_default();
    let headers: Vec<&str> = lines.collect();
    match parse_server_spec("server", spec, &headers) {
        Ok(server) => match &server.transport {
            TransportConfig::Http { endpoint, headers: parsed, .. } => {
                assert_eq!(endpoint, spec.trim());
                for (i, (name, _)) in parsed.iter().enumerate() {
                    assert!(!parsed[..i].iter().any(|(n, _)| n.eq_ignore_ascii_case(name)));
                }
            }
            TransportConfig::Stdio(command) => {
                assert!(headers.is_empty());
                assert_eq!(Some(command.command.as_str()), spec.split_whitespace().next());
            }
            _ => {}
        },
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|bytes: &[u8]| check_spec(&String::from_utf8_lossy(bytes)));
