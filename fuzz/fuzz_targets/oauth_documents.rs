//! What an authorization server or a protected resource sends: protected
//! resource metadata, authorization server metadata, token responses and
//! registration responses never panic the client. Metadata documents
//! encode and decode back to themselves; a document whose `resource`
//! parses as a URL without a query matches itself in
//! `check_protected_resource` when it names an authorization server; a
//! token set has a non-empty access token and never expires before the
//! time it was received.
//!
//! The first byte chooses the document; the rest is its body.
#![no_main]

use std::time::{Duration, SystemTime};

use libfuzzer_sys::fuzz_target;
use mcp_auth::discovery::check_protected_resource;
use mcp_auth::url::protected_resource_metadata_urls;
use mcp_auth::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, RefreshToken,
    parse_registration_response, parse_token_response, preferred_auth_method, supports_s256,
};

const SERVER: &str = "https://mcp.example.com/mcp";

fn resource_metadata(body: &[u8]) {
    let Ok(prm) = serde_json::from_slice::<ProtectedResourceMetadata>(body) else { return };
    let text = serde_json::to_vec(&prm).expect("metadata encodes");
    assert_eq!(
        serde_json::from_slice::<ProtectedResourceMetadata>(&text).ok().as_ref(),
        Some(&prm)
    );
    if let Err(e) = check_protected_resource(&prm, SERVER) {
        let _ = e.to_string();
    }
    let own = check_protected_resource(&prm, &prm.resource);
    // A resource that is a usable server URL identifies itself.
    if protected_resource_metadata_urls(&prm.resource).is_ok()
        && !prm.resource.contains('?')
        && !prm.authorization_servers.is_empty()
    {
        assert!(own.is_ok(), "{:?} does not match itself: {own:?}", prm.resource);
    }
}

fn server_metadata(body: &[u8]) {
    let Ok(asm) = serde_json::from_slice::<AuthorizationServerMetadata>(body) else { return };
    let text = serde_json::to_vec(&asm).expect("metadata encodes");
    assert_eq!(
        serde_json::from_slice::<AuthorizationServerMetadata>(&text).ok().as_ref(),
        Some(&asm)
    );
    let _ = asm.offers_offline_access();
    let _ = asm.allows_refresh_grant();
    let _ = supports_s256(asm.code_challenge_methods_supported.as_deref());
    let _ = preferred_auth_method(asm.token_endpoint_auth_methods_supported.as_deref());
}

fn token_response(body: &[u8], seed: u8) {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let requested = ["mcp:read".to_owned(), "offline_access".to_owned()];
    let previous = RefreshToken::new("previous");
    let previous = (seed & 2 == 2).then_some(&previous);
    match parse_token_response(body, now, &requested, previous) {
        Ok(tokens) => {
            assert!(!tokens.access_token.secret().is_empty());
            if let Some(at) = tokens.expires_at {
                assert!(at >= 1_700_000_000);
            }
            let _ = tokens.access_token.header_value();
            let _ = tokens.expires_within(now, Duration::from_secs(60));
            let _ = format!("{tokens:?}");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fn registration_response(body: &[u8], seed: u8) {
    let listed = ["client_secret_post".to_owned(), "none".to_owned()];
    let supported = (seed & 2 == 2).then_some(&listed[..]);
    match parse_registration_response(body, "https://auth.example.com/register", supported) {
        Ok(client) => {
            assert!(!client.client_id.is_empty());
            let _ = format!("{client:?}");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&which, body)) = bytes.split_first() else { return };
    match which % 4 {
        0 => resource_metadata(body),
        1 => server_metadata(body),
        2 => token_response(body, which),
        _ => registration_response(body, which),
    }
});
