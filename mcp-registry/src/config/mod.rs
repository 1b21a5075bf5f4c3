//! The declared server set: types, and loading from TOML or `mcpServers`
//! JSON.
//!
//! Both formats are read into one JSON value tree first and then walked by
//! one validator, so every rule (names, targets, unknown keys, duplicates,
//! secrets from the environment) holds the same way for both.
//!
//! - `types`: the declared set's types ([`Config`], [`ServerConfig`], ...).
//! - `load`: [`LoadOptions`], the format told from the text, the lines
//!   errors point at.
//! - `table`: the TOML `[mcp_client]` table; `mcp_servers`: the hosts'
//!   `mcpServers` / `servers` JSON; `vscode`: VS Code's variables;
//!   `jsonc`: comments in JSON.
//! - `validate`: the validator's state and the rules every entry shares;
//!   `auth`: the `auth` table; `env`: `${VAR}` and `KEY_env` secrets.

mod auth;
mod env;
pub(crate) mod jsonc;
mod load;
mod mcp_servers;
mod table;
mod types;
mod validate;
mod vscode;

pub(crate) use load::json_message;
pub use load::{EnvLookup, LoadOptions, Loaded};
pub use types::{
    AuthConfig, ClientIdentity, Config, DEFAULT_TIMEOUT, HeadersHelper, HttpNetwork,
    OAuthAddressPolicy, OAuthConfig, OAuthDpop, OAuthResource, Secret, ServerConfig,
    TransportConfig,
};
pub use validate::parse_protocol;
pub use vscode::{InputKind, InputLookup, InputRequest, input_variable};
