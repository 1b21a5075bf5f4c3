//! Consent before a project's configuration runs anything.
//!
//! A configuration found in or above the working directory came with the
//! project (a cloned repository), not from the user: its servers are not
//! spawned or contacted until the user approves that file as it is now.
//! An approval is the file's path and a digest of what it runs
//! ([`consent_digest`]); any change to what it runs asks again.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::json;

use crate::config::{Config, LoadOptions, Loaded, TransportConfig};
use crate::digest::{canonical_json, sha256_hex};
use crate::private_file;
use crate::trust::TrustError;
use crate::trust::records::RecordFile;

/// The names of project configurations, in the order they are looked for
/// in each folder: this toolkit's TOML, then the `mcpServers`/`servers`
/// JSON other hosts keep in a project (Claude Code, Cursor, VS Code).
pub const PROJECT_CONFIG_NAMES: &[&str] =
    &["mcp.toml", ".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json"];

/// Where a configuration came from, which decides whether it needs
/// consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigOrigin {
    /// Found in or above the working directory: untrusted until approved.
    Project,
    /// The user's own configuration directory: trusted.
    User,
    /// Named by the user (a command-line option, an environment variable):
    /// trusted.
    Explicit,
}

impl ConfigOrigin {
    /// Whether a configuration of this origin needs the user's approval.
    pub fn needs_consent(self) -> bool {
        self == ConfigOrigin::Project
    }
}

/// The project configuration that applies in `start`: the first of
/// [`PROJECT_CONFIG_NAMES`] in `start`, else in its parents, going up to
/// the first folder that holds `.git` (the project's root) and never into
/// `home` (the user's home folder is searched only when it is `start`
/// itself). `None` when there is none.
pub fn find_project_config(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut dir = Some(start);
    let mut first = true;
    while let Some(here) = dir {
        if !first && home.is_some_and(|h| h == here) {
            return None;
        }
        for name in PROJECT_CONFIG_NAMES {
            let candidate = here.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
        if here.join(".git").exists() {
            return None;
        }
        first = false;
        dir = here.parent();
    }
    None
}

/// The digest of what a configuration runs: for each server its name, and
/// its command, arguments, working directory and environment variable
/// names, or its URL and header names (values of the environment and the
/// headers are often secrets and are left out). SHA-256 over canonical
/// JSON, 64 hex digits; the servers' order does not matter.
pub fn consent_digest(config: &Config) -> String {
    let mut servers = BTreeMap::new();
    for server in &config.servers {
        let target = match &server.transport {
            TransportConfig::Stdio(c) => json!({
                "command": c.command,
                "args": c.args,
                "cwd": c.cwd.as_ref().map(|d| d.to_string_lossy()),
                "env": c.env.keys().collect::<Vec<_>>(),
            }),
            TransportConfig::Http { endpoint, headers, network, .. } => json!({
                "url": endpoint,
                "headers": headers.iter().map(|(n, _)| n.to_ascii_lowercase()).collect::<Vec<_>>(),
                "ca_file": network.ca_file.as_ref().map(|f| f.to_string_lossy()),
            }),
        };
        servers.insert(server.name.clone(), target);
    }
    let value = json!({ "enabled": config.enabled, "servers": servers });
    sha256_hex(canonical_json(&value).as_bytes())
}

/// Where approvals are kept. Keys are configuration files' absolute
/// paths; values the digest approved.
pub trait ConsentStore: fmt::Debug + Send + Sync {
    /// The digest approved for `file`, if any.
    fn approved(&self, file: &Path) -> Result<Option<String>, TrustError>;
    /// Records `digest` as approved for `file` (replacing an older one).
    fn approve(&self, file: &Path, digest: &str) -> Result<(), TrustError>;
    /// Forgets the approval of `file`; whether there was one.
    fn revoke(&self, file: &Path) -> Result<bool, TrustError>;
}

/// Approvals for this process only.
#[derive(Debug, Default)]
pub struct MemoryConsentStore {
    approved: Mutex<BTreeMap<PathBuf, String>>,
}

impl MemoryConsentStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ConsentStore for MemoryConsentStore {
    fn approved(&self, file: &Path) -> Result<Option<String>, TrustError> {
        Ok(lock(&self.approved).get(file).cloned())
    }

    fn approve(&self, file: &Path, digest: &str) -> Result<(), TrustError> {
        lock(&self.approved).insert(file.to_owned(), digest.to_owned());
        Ok(())
    }

    fn revoke(&self, file: &Path) -> Result<bool, TrustError> {
        Ok(lock(&self.approved).remove(file).is_some())
    }
}

/// Approvals in one JSON file,
/// `{"version": 1, "approved": {PATH: DIGEST}}`, written whole and
/// atomically, readable by its owner only (on Unix). A file that cannot
/// be read or parsed is an error naming it, and nothing is approved or
/// written meanwhile.
#[derive(Debug)]
pub struct FileConsentStore {
    file: RecordFile,
}

/// The records' field in the file.
const APPROVED: &str = "approved";

impl FileConsentStore {
    /// A store in this file (created on the first approval).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileConsentStore { file: RecordFile::new(path.into()) }
    }

    /// The default file of `app`: `trusted-configs.json` in
    /// `$XDG_STATE_HOME/<app>` when that variable is set (on every
    /// platform, so tests and sandboxes can redirect it), else
    /// `%LOCALAPPDATA%\<app>` on Windows,
    /// `~/Library/Application Support/<app>` on macOS and
    /// `~/.local/state/<app>` elsewhere. `None` without a home directory.
    pub fn default_path(app: &str) -> Option<PathBuf> {
        let base = private_file::user_base_dir("XDG_STATE_HOME", "LOCALAPPDATA", ".local/state")?;
        Some(base.join(app).join("trusted-configs.json"))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl ConsentStore for FileConsentStore {
    fn approved(&self, file: &Path) -> Result<Option<String>, TrustError> {
        Ok(self.file.read::<PathBuf, String>(APPROVED)?.remove(file))
    }

    fn approve(&self, file: &Path, digest: &str) -> Result<(), TrustError> {
        self.file
            .update(APPROVED, |approved: &mut BTreeMap<PathBuf, String>| {
                approved.insert(file.to_owned(), digest.to_owned()).as_deref() != Some(digest)
            })
            .map(|_| ())
    }

    fn revoke(&self, file: &Path) -> Result<bool, TrustError> {
        self.file.update(APPROVED, |approved: &mut BTreeMap<PathBuf, String>| {
            approved.remove(file).is_some()
        })
    }
}

/// Whether a project configuration may run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Consent {
    /// Approved as it is now (or trusted by its origin).
    Approved,
    /// Never approved.
    Pending,
    /// Approved once, but what it runs changed since.
    Changed,
}

/// A configuration loaded but not yet allowed to run: what it declares,
/// its digest and whether it is approved. Only [`into_loaded`] (when
/// approved) and [`approve`] hand the configuration out, so a host cannot
/// build a [`Registry`](crate::Registry) from an unapproved project file
/// by accident.
///
/// [`into_loaded`]: Review::into_loaded
/// [`approve`]: Review::approve
#[derive(Debug)]
pub struct Review {
    file: PathBuf,
    digest: String,
    consent: Consent,
    loaded: Loaded,
}

impl Review {
    /// Loads `file` (nothing is spawned or contacted) and looks its digest
    /// up in `store` when its `origin` needs consent. The path is made
    /// absolute, so one approval holds from any working directory.
    pub fn load(
        file: &Path,
        origin: ConfigOrigin,
        options: &LoadOptions,
        store: &dyn ConsentStore,
    ) -> Result<Review, TrustError> {
        let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
        let loaded = Config::load(file, options).map_err(TrustError::Config)?;
        let mut digest = consent_digest(&loaded.config);
        // The call policy and the audit log the file sets are approved too.
        if let Some(tables) = crate::trust::settings::trust_tables(file)? {
            digest = sha256_hex(format!("{digest}{}", canonical_json(&tables)).as_bytes());
        }
        let consent = if !origin.needs_consent() {
            Consent::Approved
        } else {
            match store.approved(&absolute)? {
                Some(d) if d == digest => Consent::Approved,
                Some(_) => Consent::Changed,
                None => Consent::Pending,
            }
        };
        Ok(Review { file: absolute, digest, consent, loaded })
    }

    /// The configuration file (absolute).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The digest of what it runs ([`consent_digest`]), and of its
    /// `[mcp_client.approval]` and `[mcp_client.audit]` tables when it has
    /// them.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Whether it may run.
    pub fn consent(&self) -> &Consent {
        &self.consent
    }

    /// What it declares, to show the user before asking (read only).
    pub fn config(&self) -> &Config {
        &self.loaded.config
    }

    /// The configuration, when approved; otherwise
    /// [`TrustError::ConsentRequired`] naming the file.
    pub fn into_loaded(self) -> Result<Loaded, TrustError> {
        match self.consent {
            Consent::Approved => Ok(self.loaded),
            consent => Err(TrustError::ConsentRequired {
                file: self.file,
                changed: consent == Consent::Changed,
            }),
        }
    }

    /// Records the approval of this file as it is now, and hands the
    /// configuration out.
    pub fn approve(self, store: &dyn ConsentStore) -> Result<Loaded, TrustError> {
        if self.consent != Consent::Approved {
            store.approve(&self.file, &self.digest)?;
        }
        Ok(self.loaded)
    }

    /// The configuration for this run only, approved by the caller without
    /// recording it (a script's explicit `--trust`).
    pub fn trust_once(self) -> Loaded {
        self.loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use mcp_spawn_env::ServerCommand;

    fn config(servers: Vec<ServerConfig>) -> Config {
        Config { servers, ..Config::default() }
    }

    #[test]
    fn the_digest_follows_what_runs_and_nothing_else() {
        let base = || ServerCommand::new("node").arg("server.js");
        let d = |servers| consent_digest(&config(servers));
        let one = d(vec![ServerConfig::stdio("a", base())]);
        assert_eq!(one.len(), 64);
        // Same servers, other order, other description and timeout: same.
        let two = d(vec![
            ServerConfig::http("b", "https://x.example/mcp"),
            ServerConfig::stdio("a", base()),
        ]);
        let two_swapped = d(vec![
            ServerConfig::stdio("a", base()).with_description("x"),
            ServerConfig::http("b", "https://x.example/mcp"),
        ]);
        assert_eq!(two, two_swapped);
        let changed = [
            d(vec![ServerConfig::stdio("a", base().arg("--evil"))]),
            d(vec![ServerConfig::stdio("a", ServerCommand::new("sh").arg("server.js"))]),
            d(vec![ServerConfig::stdio("a", base().env("LD_PRELOAD", "x"))]),
            d(vec![ServerConfig::stdio("renamed", base())]),
            d(vec![ServerConfig::stdio("a", base().cwd("/elsewhere"))]),
        ];
        for other in &changed {
            assert_ne!(&one, other);
        }
        // An environment value is not part of it (it may be a secret).
        assert_eq!(
            d(vec![ServerConfig::stdio("a", base().env("K", "1"))]),
            d(vec![ServerConfig::stdio("a", base().env("K", "2"))])
        );
        assert_ne!(two, d(vec![ServerConfig::http("b", "https://y.example/mcp")]));
    }

    #[test]
    fn project_configs_are_found_up_to_the_project_root_and_never_in_home() {
        let root = std::env::temp_dir().join(format!("mcp-registry-find-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let repo = home.join("repo");
        let deep = repo.join("a").join("b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(home.join("mcp.toml"), "").unwrap();
        // Nothing in the repository: the home's file is not the project's.
        assert_eq!(find_project_config(&deep, Some(&home)), None);
        // ...unless the home is where the search starts.
        assert_eq!(find_project_config(&home, Some(&home)), Some(home.join("mcp.toml")));
        std::fs::create_dir_all(repo.join(".vscode")).unwrap();
        std::fs::write(repo.join(".vscode/mcp.json"), "{}").unwrap();
        assert_eq!(find_project_config(&deep, Some(&home)), Some(repo.join(".vscode/mcp.json")));
        std::fs::write(repo.join(".mcp.json"), "{}").unwrap();
        assert_eq!(find_project_config(&deep, Some(&home)), Some(repo.join(".mcp.json")));
        std::fs::write(repo.join("a/mcp.toml"), "").unwrap();
        assert_eq!(find_project_config(&deep, Some(&home)), Some(repo.join("a/mcp.toml")));
        // The `.git` folder stops the walk: no repository, the home stops it.
        std::fs::remove_dir_all(repo.join(".git")).unwrap();
        std::fs::remove_file(repo.join("a/mcp.toml")).unwrap();
        std::fs::remove_file(repo.join(".mcp.json")).unwrap();
        std::fs::remove_file(repo.join(".vscode/mcp.json")).unwrap();
        assert_eq!(find_project_config(&deep, Some(&home)), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn memory_store_round_trip() {
        let store = MemoryConsentStore::new();
        let file = Path::new("/p/mcp.toml");
        assert_eq!(store.approved(file).unwrap(), None);
        store.approve(file, "d1").unwrap();
        assert_eq!(store.approved(file).unwrap().as_deref(), Some("d1"));
        assert!(store.revoke(file).unwrap());
        assert!(!store.revoke(file).unwrap());
    }
}
