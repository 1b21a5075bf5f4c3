//! The pure parts of the OAuth flow, with no network: the URLs a client
//! tries for an MCP server's protected resource metadata and for its
//! authorization server's metadata, in the spec's order, whether a
//! metadata `resource` identifies the server, and a PKCE pair.
//!
//! `cargo run -p mcp-auth --example discovery_urls -- https://example.com/mcp https://auth.example.com/tenant1`
//! (both arguments optional).
#![allow(clippy::print_stdout)]

use mcp_auth::{Pkce, url};

fn main() -> Result<(), mcp_auth::Error> {
    let mut args = std::env::args().skip(1);
    let server = args.next().unwrap_or_else(|| "https://example.com/mcp".to_owned());
    let issuer = args.next().unwrap_or_else(|| "https://auth.example.com/tenant1".to_owned());

    println!("protected resource metadata of {}, tried in order:", url::redact(&server));
    for u in url::protected_resource_metadata_urls(&server)? {
        println!("  {u}");
    }
    println!("authorization server metadata of {issuer}, tried in order:");
    for u in url::authorization_server_metadata_urls(&issuer)? {
        println!("  {u}");
    }
    let origin = url::redact(&server);
    println!(
        "a metadata `resource` of {origin} identifies the server: {}",
        url::resource_matches(&origin, &server)
    );

    // RFC 7636 appendix B: the known answer, then a fresh pair. The
    // verifier is a secret of the flow; `Debug` shows the challenge only.
    let known = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".to_owned());
    assert_eq!(known.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    let pkce = Pkce::generate()?;
    println!(
        "PKCE {}: a {}-character verifier, challenge {}",
        pkce.method(),
        pkce.verifier().len(),
        pkce.challenge()
    );
    Ok(())
}
