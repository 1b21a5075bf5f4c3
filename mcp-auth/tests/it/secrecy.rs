//! Secrets: no token, refresh token, client secret, code or verifier in
//! a log line, an error or the `Debug` output, and the bearer sent to no
//! other origin.

use std::sync::{Arc, Mutex};

use mcp_auth::{ClientRegistration, TokenEndpointAuthMethod};

use crate::common::{AS, Net, client, config, first_401, prm_challenge, refreshing_as, rotating};

#[tokio::test]
async fn secrets_never_reach_logs_errors_or_other_origins() {
    let buf = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::new(Mutex::new(vec!["rt-2".to_owned()]))));
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "cid",
        "very-secret-client-secret",
        TokenEndpointAuthMethod::ClientSecretPost,
    ));
    let c = client(&net, cfg);
    let mut req = first_401(&c, Some(&prm_challenge())).await.unwrap();
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_or(());
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.err();

    let logs = buf.text();
    assert!(logs.contains("obtained token"), "logging is on: {logs}");
    let l = log.lock().unwrap();
    let verifier = l.token[0].1["code_verifier"].clone();
    for secret in [
        "test-token-r",
        "rt-1",
        "rt-2",
        "very-secret-client-secret",
        "test-auth-code",
        verifier.as_str(),
    ] {
        assert!(!logs.contains(secret), "{secret} in logs");
        assert!(!format!("{c:?}").contains(secret), "{secret} in Debug");
        if let Some(e) = &err {
            assert!(!e.to_string().contains(secret));
        }
    }
    // The bearer token is only ever to be sent to the MCP server's origin.
    assert!(c.applies_to("http://localhost:8000/mcp"));
    assert!(c.applies_to("HTTP://LOCALHOST:8000/other"));
    assert!(!c.applies_to(AS));
    assert!(!c.applies_to("https://localhost:8000/mcp"));
    // ... and no request this crate made carried it.
    for s in net.seen() {
        let body = String::from_utf8_lossy(&s.body);
        assert!(!s.authorization.as_deref().unwrap_or("").starts_with("Bearer"), "{}", s.url);
        assert!(!body.contains("test-token-r"));
        assert!(!s.url.contains("test-token-r"));
    }
    assert!(format!("{:?}", req).contains("Sensitive"));
}
