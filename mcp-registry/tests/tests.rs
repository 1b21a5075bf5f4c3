//! The registry's tests: configuration and policy as data, then the
//! registry against several testkit servers at once.

#[path = "it/approval.rs"]
mod approval;
#[path = "it/audit.rs"]
mod audit;
#[path = "it/call_meta.rs"]
mod call_meta;
#[cfg(all(feature = "stdio", feature = "http"))]
#[path = "it/common.rs"]
mod common;
#[path = "it/config.rs"]
mod config;
#[path = "it/consent.rs"]
mod consent;
#[path = "it/features.rs"]
mod features;
#[cfg(all(feature = "http", unix))]
#[path = "it/headers_helper.rs"]
mod headers_helper;
#[path = "it/hosts.rs"]
mod hosts;
#[cfg(all(feature = "interop-tests", feature = "stdio"))]
#[path = "it/interop_shape.rs"]
mod interop_shape;
#[path = "it/names.rs"]
mod names;
#[cfg(feature = "http")]
#[path = "it/oauth.rs"]
mod oauth;
#[path = "it/pins.rs"]
mod pins;
#[path = "it/policy.rs"]
mod policy;
#[cfg(all(feature = "stdio", feature = "http"))]
#[path = "it/registry.rs"]
mod registry;
#[cfg(all(feature = "stdio", feature = "http"))]
#[path = "it/reload.rs"]
mod reload;
#[path = "it/scripted.rs"]
mod scripted;
#[path = "it/search.rs"]
mod search;
#[path = "it/server_json.rs"]
mod server_json;
#[path = "it/shape.rs"]
mod shape;
#[path = "it/sizing.rs"]
mod sizing;
#[path = "it/spec.rs"]
mod spec;
#[cfg(all(feature = "stdio", feature = "http"))]
#[path = "it/supervision.rs"]
mod supervision;
#[path = "it/unusable.rs"]
mod unusable;
