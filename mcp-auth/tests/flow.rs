//! The whole flow against a scripted in-memory network: a fake MCP server
//! (resource server) and a fake authorization server that behave like the
//! conformance suite's (`@modelcontextprotocol/conformance` 0.1.16,
//! `src/scenarios/client/auth/helpers`), one test per scenario's logic.
//! One binary; a module a job, the network and servers they share in
//! `it/common.rs`.

#[path = "it/callback.rs"]
mod callback;
#[path = "it/common.rs"]
mod common;
#[path = "it/discovery.rs"]
mod discovery;
#[path = "it/dpop.rs"]
mod dpop;
#[path = "it/grants.rs"]
mod grants;
#[path = "it/migration.rs"]
mod migration;
#[path = "it/registration.rs"]
mod registration;
#[path = "it/revocation.rs"]
mod revocation;
#[path = "it/scopes.rs"]
mod scopes;
#[path = "it/secrecy.rs"]
mod secrecy;
#[path = "it/tokens.rs"]
mod tokens;
