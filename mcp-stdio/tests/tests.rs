//! The stdio client's tests, one binary: against the project's testkit
//! (process handling, faults, both eras), the transport over any reader and
//! writer, the blocking client (feature
//! `blocking`), and (feature `interop-tests`, run by `cargo xtask interop`)
//! against servers nobody here wrote.

#[cfg(feature = "blocking")]
#[path = "it/blocking.rs"]
mod blocking;
#[path = "it/client.rs"]
mod client;
#[cfg(feature = "interop-tests")]
#[path = "it/interop.rs"]
mod interop;
#[cfg(feature = "interop-tests")]
#[path = "it/interop_modern.rs"]
mod interop_modern;
#[path = "it/stream.rs"]
mod stream;
