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
#[path = "it/client.rs"]
mod client;
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
