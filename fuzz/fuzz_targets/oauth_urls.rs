//! `mcp-auth`'s URL handling, on URLs a server or a user gives: redaction,
//! origin comparison, resource matching, the well-known metadata URLs,
//! query and callback parameters, the metadata-document URL check, scopes
//! and the PKCE challenge never panic and keep their promises: a redacted
//! URL is `<redacted>` or `scheme://authority` without user information;
//! `same_origin` is symmetric between URLs with an authority (a relative
//! reference as the second argument is compared as if it were
//! `https://` with an empty host: `same_origin(":", "/")` is true, the
//! other way round false); a matching resource has the server's origin;
//! no well-known URL made from a URL leads to another origin; a callback's
//! parameters are the first of each name; scopes split, join and split
//! again alike; a challenge is 43 characters of URL-safe base64.
//!
//! The input is two lines: a URL (or host, query, scope) and another.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_auth::url::{
    authorization_server_metadata_urls, is_loopback_host, protected_resource_metadata_urls,
    query_params, redact, resource_matches, same_origin,
};
use mcp_auth::{CallbackParams, check_metadata_url, s256_challenge, scope};

fn check_redact(url: &str) {
    let r = redact(url);
    if r != "<redacted>" {
        assert!(r.starts_with("http://") || r.starts_with("https://"), "{r:?}");
        assert!(!r.contains('@'), "{r:?}");
        let authority = r.split_once("://").map_or("", |(_, a)| a);
        assert!(!authority.is_empty() && !authority.contains('/'), "{r:?}");
    }
}

fn check_well_known(url: &str) {
    // A well-known URL that does not parse cannot be fetched (the fetch
    // fails with an error): what must hold is that none reaches another
    // origin. Some do not parse today: an authority with an empty host
    // (`http://:1/mcp`) passes the URL check and gives host-less URLs, and
    // a host the `http` crate reads leniently without a path (`http://m[`)
    // no longer parses with one.
    let same_origin_if_valid = |u: &str| {
        if u.parse::<http::Uri>().is_ok() {
            assert!(same_origin(u, url), "{u} / {url}");
        }
    };
    if let Ok(urls) = protected_resource_metadata_urls(url) {
        assert!((1..=2).contains(&urls.len()));
        for u in &urls {
            assert!(u.contains("/.well-known/oauth-protected-resource"), "{u}");
            same_origin_if_valid(u);
        }
    }
    if let Ok(urls) = authorization_server_metadata_urls(url) {
        assert!((2..=3).contains(&urls.len()));
        for u in &urls {
            assert!(u.contains("/.well-known/"), "{u}");
            same_origin_if_valid(u);
        }
    }
}

fn check_callback(url: &str) {
    let params = query_params(url);
    let callback = CallbackParams::from_url(url);
    let first = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert_eq!(callback.code, first("code"));
    assert_eq!(callback.state, first("state"));
    assert_eq!(callback.iss, first("iss"));
    assert_eq!(callback.error, first("error"));
    assert_eq!(callback.error_description, first("error_description"));
}

fn check_scopes(text: &str) {
    let scopes = scope::split(text);
    assert!(scopes.iter().all(|s| !s.is_empty() && !s.contains(' ')));
    match scope::join(&scopes) {
        Some(joined) => assert_eq!(scope::split(&joined), scopes),
        None => assert!(scopes.is_empty()),
    }
    assert!(scope::covers(&scopes, &scopes));
}

fuzz_target!(|bytes: &[u8]| {
    let text = String::from_utf8_lossy(bytes);
    let (a, b) = text.split_once('\n').unwrap_or((&text, "https://example.com/mcp"));
    for url in [a, b] {
        check_redact(url);
        check_well_known(url);
        check_callback(url);
        check_scopes(url);
        let _ = is_loopback_host(url);
        if let Err(e) = check_metadata_url(url) {
            let _ = e.to_string();
        }
    }
    let absolute = |u: &str| u.parse::<http::Uri>().is_ok_and(|u| u.authority().is_some());
    if absolute(a) && absolute(b) {
        assert_eq!(same_origin(a, b), same_origin(b, a));
    }
    if resource_matches(a, b) {
        assert!(same_origin(a, b), "{a} matches {b} of another origin");
    }
    if let Ok(uri) = a.parse::<http::Uri>()
        && let Some(host) = uri.host()
    {
        let _ = is_loopback_host(host);
    }
    let challenge = s256_challenge(a);
    assert_eq!(challenge.len(), 43);
    assert!(challenge.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
});
