//! A URL a server asks its user to visit (`mcp_proto::display::openable_url`):
//! never panics; what it lets through is what a browser may be handed
//! safely: visible ASCII, not starting with `-`, `https` or `http` to a
//! loopback host, no user name or password, the host as written in the URL
//! right after the scheme, and the URL itself unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_proto::display::{MAX_OPENABLE_URL, openable_url};

fn check_url(text: &str) {
    let Ok(url) = openable_url(text) else { return };
    assert_eq!(url.as_str(), text);
    assert!(text.len() <= MAX_OPENABLE_URL && !text.starts_with('-'));
    assert!(text.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let (scheme, rest) = text.split_once("://").expect("absolute");
    let host = url.host();
    assert!(!host.is_empty() && rest.starts_with(host), "{host:?} in {text:?}");
    let after = &rest[host.len()..];
    assert!(after.is_empty() || after.starts_with([':', '/', '?', '#']), "{text:?}");
    assert!(!rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())].contains('@'));
    if scheme.eq_ignore_ascii_case("http") {
        let bare = host.trim_end_matches('.');
        let v6 = bare.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
        let loopback = bare.eq_ignore_ascii_case("localhost")
            || bare.to_ascii_lowercase().ends_with(".localhost")
            || v6.is_some_and(|a| a.parse::<std::net::Ipv6Addr>().is_ok_and(|a| a.is_loopback()))
            || bare.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_loopback());
        assert!(loopback, "plain http to {host:?}");
    } else {
        assert!(scheme.eq_ignore_ascii_case("https"), "{text:?}");
    }
}

fuzz_target!(|bytes: &[u8]| check_url(&String::from_utf8_lossy(bytes)));
