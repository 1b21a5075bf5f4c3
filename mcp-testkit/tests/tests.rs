//! The testkit's tests, one binary: the built server over stdio in raw
//! JSON lines, the core in-process, and (feature `http`) the HTTP driver
//! spoken to with a bare hyper client; in both eras.

#[path = "it/features.rs"]
mod features;
#[cfg(feature = "http")]
#[path = "it/http.rs"]
mod http;
#[cfg(feature = "http")]
#[path = "it/modern_http.rs"]
mod modern_http;
#[path = "it/modern_stdio.rs"]
mod modern_stdio;
#[path = "it/stdio.rs"]
mod stdio;
