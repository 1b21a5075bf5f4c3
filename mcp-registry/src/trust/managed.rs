//! The administrator's policy: which servers may run at all (by name,
//! command or URL pattern) and call tiers the user's configuration cannot
//! widen.
//!
//! ```toml
//! [servers]
//! allow_commands = ["npx", "uvx", "/opt/mcp/*"]
//! deny_names = ["scratch-*"]
//! allow_urls = ["https://*.corp.example/*"]
//!
//! [tools]
//! ask = ["github__*"]
//! deny = ["*__delete_*"]
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::{ServerConfig, TransportConfig};
use crate::private_file;
use crate::trust::TrustError;
use crate::trust::approval::{Tier, TierRules, string_list};
use crate::trust::pattern::Pattern;

/// A server the managed policy keeps from running, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Blocked {
    /// The server's name.
    pub server: String,
    /// Why: the rule that blocks it, or the allow list it is not on.
    pub reason: String,
}

/// Allow and deny patterns for one property of a server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Lists {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
}

impl Lists {
    fn read(table: &Map<String, Value>, what: &str) -> Result<Lists, String> {
        let patterns = |key: String| -> Result<Vec<Pattern>, String> {
            string_list(table, &key)?
                .iter()
                .map(|p| Pattern::new(p).ok_or_else(|| format!("`{key}`: {p:?} is not a pattern")))
                .collect()
        };
        Ok(Lists {
            allow: patterns(format!("allow_{what}"))?,
            deny: patterns(format!("deny_{what}"))?,
        })
    }

    /// Why `value` is kept out, if it is.
    fn refuses(&self, what: &str, value: &str) -> Option<String> {
        if let Some(p) = self.deny.iter().find(|p| p.matches(value)) {
            return Some(format!("its {what} matches the managed policy's deny_{what}s {p}"));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(value)) {
            return Some(format!("its {what} is not in the managed policy's allow_{what}s"));
        }
        None
    }
}

/// The administrator's policy ([`TrustOptions::managed`](crate::TrustOptions::managed)).
/// The empty policy (the default) allows everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedPolicy {
    names: Lists,
    commands: Lists,
    urls: Lists,
    /// Pinned tiers (`ask`, `deny`) over `server__tool`.
    pub(crate) tools: TierRules,
    source: Option<PathBuf>,
}

const TOP_KEYS: &[&str] = &["servers", "tools"];
const SERVER_KEYS: &[&str] =
    &["allow_names", "deny_names", "allow_commands", "deny_commands", "allow_urls", "deny_urls"];
const TOOL_KEYS: &[&str] = &["ask", "deny"];

impl ManagedPolicy {
    /// Reads the policy at `path`; a missing file is the empty policy. A
    /// file that cannot be read or parsed is an error naming it.
    pub fn load(path: &Path) -> Result<ManagedPolicy, TrustError> {
        let text = private_file::read_capped(path)
            .map_err(|source| TrustError::Io { path: path.to_owned(), source })?;
        let Some(text) = text else { return Ok(ManagedPolicy::default()) };
        let mut policy = ManagedPolicy::from_toml_str(&text)
            .map_err(|message| TrustError::Corrupt { path: path.to_owned(), message })?;
        policy.source = Some(path.to_owned());
        Ok(policy)
    }

    /// Parses a policy (TOML; see the module's documentation). The error
    /// says what is wrong without quoting the text.
    pub fn from_toml_str(text: &str) -> Result<ManagedPolicy, String> {
        let root: Value = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => format!("not TOML (at byte {})", span.start),
            None => "not TOML".to_owned(),
        })?;
        let root = root.as_object().ok_or("not a table")?;
        check_keys(root, TOP_KEYS, "")?;
        let empty = Map::new();
        let table = |key: &str| match root.get(key) {
            None => Ok(&empty),
            Some(Value::Object(t)) => Ok(t),
            Some(_) => Err(format!("`{key}` must be a table")),
        };
        let servers = table("servers")?;
        check_keys(servers, SERVER_KEYS, "servers.")?;
        let tools = table("tools")?;
        check_keys(tools, TOOL_KEYS, "tools.")?;
        let mut tiers = TierRules::default();
        for tier in [Tier::Ask, Tier::Deny] {
            for p in string_list(tools, tier.as_str()).map_err(|e| format!("tools.{e}"))? {
                if !tiers.add(&p, tier) {
                    return Err(format!("`tools.{tier}`: {p:?} is not a pattern"));
                }
            }
        }
        Ok(ManagedPolicy {
            names: Lists::read(servers, "names")?,
            commands: Lists::read(servers, "commands")?,
            urls: Lists::read(servers, "urls")?,
            tools: tiers,
            source: None,
        })
    }

    /// The tiers it pins (`ask`, `deny`) over `server__tool`.
    pub fn tiers(&self) -> &TierRules {
        &self.tools
    }

    /// The file it was read from.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Why `server` may not run, if it may not: its name, its command (the
    /// program as written, and its file name) or its URL.
    pub fn refuses(&self, server: &ServerConfig) -> Option<String> {
        if let Some(why) = self.names.refuses("name", &server.name) {
            return Some(why);
        }
        match &server.transport {
            TransportConfig::Stdio(c) => {
                let base = Path::new(&c.command)
                    .file_name()
                    .map_or(c.command.as_str(), |n| n.to_str().unwrap_or(&c.command));
                // Either form may match: a deny of either blocks; an
                // allow list must hold one of them.
                let forms = [c.command.as_str(), base];
                let lists = &self.commands;
                if let Some(p) = lists.deny.iter().find(|p| forms.iter().any(|f| p.matches(f))) {
                    return Some(format!(
                        "its command matches the managed policy's deny_commands {p}"
                    ));
                }
                let listed = lists.allow.iter().any(|p| forms.iter().any(|f| p.matches(f)));
                (!lists.allow.is_empty() && !listed)
                    .then(|| "its command is not in the managed policy's allow_commands".to_owned())
            }
            TransportConfig::Http { endpoint, .. } => self.urls.refuses("url", endpoint),
        }
    }

    /// The servers it lets run, and those it blocks with the reason.
    pub fn admit(&self, servers: Vec<ServerConfig>) -> (Vec<ServerConfig>, Vec<Blocked>) {
        let mut kept = Vec::with_capacity(servers.len());
        let mut blocked = Vec::new();
        for server in servers {
            match self.refuses(&server) {
                Some(reason) => blocked.push(Blocked { server: server.name, reason }),
                None => kept.push(server),
            }
        }
        (kept, blocked)
    }
}

fn check_keys(table: &Map<String, Value>, known: &[&str], prefix: &str) -> Result<(), String> {
    match table.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(format!("unknown key `{prefix}{key}`")),
        None => Ok(()),
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.server, self.reason)
    }
}
