//! The crate's tests, one binary: MCP Apps metadata, the client core driven with a virtual
//! clock (and the decision tables of `client::decide`), the JSON-RPC
//! envelope, method rules, tool-result rendering, server notifications,
//! the typed helpers and the wire types' round trips.

#[path = "it/apps.rs"]
mod apps;
#[path = "it/client_core.rs"]
mod client_core;
#[path = "it/jsonrpc.rs"]
mod jsonrpc;
#[path = "it/methods.rs"]
mod methods;
#[path = "it/render.rs"]
mod render;
#[path = "it/server_notification.rs"]
mod server_notification;
#[path = "it/typed.rs"]
mod typed;
#[path = "it/types.rs"]
mod types;
#[path = "it/usual_opening.rs"]
mod usual_opening;
