//! The HTTP client's tests, one binary: against the project's testkit and
//! small servers written here on loopback (sessions, resumption, faults,
//! both eras), OAuth and DPoP, secrets kept out of logs and errors, TLS and
//! proxies, Unix domain sockets, the blocking client (feature `blocking`), and (feature
//! `interop-tests`, run by `cargo xtask interop`) against servers nobody
//! here wrote, and (feature `idp-tests`, run by `cargo xtask idp`) against
//! a real OpenID provider.

#[cfg(feature = "blocking")]
#[path = "it/blocking.rs"]
mod blocking;
#[path = "it/client_bodies.rs"]
mod client_bodies;
#[path = "it/client_cancel.rs"]
mod client_cancel;
#[path = "it/client_errors.rs"]
mod client_errors;
#[path = "it/client_headers.rs"]
mod client_headers;
#[path = "it/client_legacy.rs"]
mod client_legacy;
#[path = "it/client_pool.rs"]
mod client_pool;
#[cfg(feature = "proxy")]
#[path = "it/client_proxy.rs"]
mod client_proxy;
#[path = "it/client_redirects.rs"]
mod client_redirects;
#[path = "it/client_sessions.rs"]
mod client_sessions;
#[path = "it/client_stateless.rs"]
mod client_stateless;
#[path = "it/client_streamable.rs"]
mod client_streamable;
#[path = "it/client_streams.rs"]
mod client_streams;
#[path = "it/client_support.rs"]
mod client_support;
#[path = "it/dpop.rs"]
mod dpop;
#[cfg(feature = "idp-tests")]
#[path = "it/idp.rs"]
mod idp;
#[cfg(feature = "idp-tests")]
#[path = "it/idp_quirks.rs"]
mod idp_quirks;
#[cfg(feature = "interop-tests")]
#[path = "it/interop.rs"]
mod interop;
#[cfg(feature = "interop-tests")]
#[path = "it/interop_modern.rs"]
mod interop_modern;
#[path = "it/oauth.rs"]
mod oauth;
#[path = "it/secrets.rs"]
mod secrets;
#[path = "it/startup.rs"]
mod startup;
#[path = "it/tls.rs"]
mod tls;
#[cfg(unix)]
#[path = "it/unix.rs"]
mod unix;
