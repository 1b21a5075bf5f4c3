//! `mcpc`'s tests, one binary: the built binary end to end (against its
//! embedded demo, the testkit over stdio and HTTP, configuration files),
//! `mcpc login` through the real loopback listener, (feature
//! `interop-tests`, run by `cargo xtask interop`) against servers nobody
//! here wrote, (feature `idp-tests`, run by `cargo xtask idp`) against
//! a real OpenID provider, and (feature `keychain-tests`, run by `cargo
//! xtask keychain`) with tokens in gnome-keyring.

#[path = "it/approval.rs"]
mod approval;
#[path = "it/cli.rs"]
mod cli;
#[path = "it/hosts.rs"]
mod hosts;
#[cfg(feature = "idp-tests")]
#[path = "it/idp.rs"]
mod idp;
#[cfg(feature = "interop-tests")]
#[path = "it/interop.rs"]
mod interop;
#[path = "it/keychain.rs"]
mod keychain;
#[path = "it/login.rs"]
mod login;
#[path = "it/model.rs"]
mod model;
#[path = "it/path_cache.rs"]
mod path_cache;
#[path = "it/run.rs"]
mod run;
#[path = "it/serve_aggregate.rs"]
mod serve_aggregate;
#[path = "it/serve_asks.rs"]
mod serve_asks;
#[path = "it/serve_faults.rs"]
mod serve_faults;
#[path = "it/serve_forward.rs"]
mod serve_forward;
#[path = "it/serve_http.rs"]
mod serve_http;
#[path = "it/serve_login.rs"]
mod serve_login;
#[path = "it/serve_notify.rs"]
mod serve_notify;
#[path = "it/serve_plain.rs"]
mod serve_plain;
#[path = "it/serve_search.rs"]
mod serve_search;
#[path = "it/serve_support.rs"]
mod serve_support;
#[path = "it/serve_tasks.rs"]
mod serve_tasks;
#[path = "it/tasks.rs"]
mod tasks;
#[cfg(target_os = "linux")]
#[path = "it/terminal.rs"]
mod terminal;
#[path = "it/trust.rs"]
mod trust;
