//! The configuration a user writes: `Config::from_toml_str` (an
//! `[mcp_client]` table) and `Config::from_json_str` (`mcpServers`,
//! `servers` or the `mcp_client` shape), strict or not, never panic; a
//! loaded set has unique server names; errors and warnings print.
//!
//! The first byte chooses the reader (and strictness); the rest is the text.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use mcp_host_registry::{Config, LoadOptions};

fn options(strict: bool) -> LoadOptions {
    LoadOptions {
        strict,
        // `${env:NAME}` resolves for names starting with a capital letter.
        env: Arc::new(|name: &str| {
            name.starts_with(|c: char| c.is_ascii_uppercase()).then(|| format!("value of {name}"))
        }),
        ..LoadOptions::default()
    }
}

fn check(loaded: Result<mcp_host_registry::Loaded, mcp_host_registry::ConfigError>) {
    match loaded {
        Ok(loaded) => {
            let servers = &loaded.config.servers;
            for (i, s) in servers.iter().enumerate() {
                assert!(servers[..i].iter().all(|t| t.name != s.name), "{:?} twice", s.name);
                let _ = format!("{s:?}");
            }
            for w in &loaded.warnings {
                let _ = w.to_string();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&mode, rest)) = bytes.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let strict = mode & 1 == 1;
    if mode & 2 == 0 {
        check(Config::from_toml_str(&text, &options(strict)));
    } else {
        check(Config::from_json_str(&text, &options(strict)));
    }
});
