//! Tool pinning: a defence against tool definitions that change after a
//! user approved them.
//!
//! The first time a server's tool is seen, a digest of its definition (a
//! [`ToolPin`]) is recorded in a [`PinStore`]. When the definition later
//! differs (on a new connection, or after the server announced
//! `notifications/tools/list_changed`), the server's [`PinPolicy`] decides:
//! warn, withhold the tool, or take the new definition. The host approves a
//! new definition with [`Registry::approve_pins`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_proto::hash::SeededMap;
use mcp_proto::types::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::ServerConfig;
use crate::digest::{canonical_json, sha256_hex};
use crate::error::Error;
use crate::registry::Registry;

/// What happens to a tool whose definition differs from its pin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PinPolicy {
    /// Log a warning (once per new definition) and list the tool as it is
    /// now; the pin stays until approved. The default.
    #[default]
    Warn,
    /// Withhold the tool: it is not listed, and calls to it fail with
    /// [`Error::ToolChanged`] naming the fields that changed, until the
    /// host approves the new definition.
    Block,
    /// Take the new definition silently (it becomes the pin).
    Allow,
}

impl PinPolicy {
    /// The policy's name in a configuration: `warn`, `block` or `allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinPolicy::Warn => "warn",
            PinPolicy::Block => "block",
            PinPolicy::Allow => "allow",
        }
    }
}

impl fmt::Display for PinPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PinPolicy {
    type Err = UnknownPinPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "warn" => Ok(PinPolicy::Warn),
            "block" => Ok(PinPolicy::Block),
            "allow" => Ok(PinPolicy::Allow),
            _ => Err(UnknownPinPolicy),
        }
    }
}

/// A pin policy name other than `warn`, `block` or `allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownPinPolicy;

impl fmt::Display for UnknownPinPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a pin policy is \"warn\", \"block\" or \"allow\"")
    }
}

impl std::error::Error for UnknownPinPolicy {}

/// A part of a tool's definition that a pin covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PinField {
    /// `name`.
    Name,
    /// `title`.
    Title,
    /// `description`.
    Description,
    /// `inputSchema`.
    InputSchema,
    /// `outputSchema`.
    OutputSchema,
    /// `annotations`.
    Annotations,
}

impl PinField {
    /// Every field, in the order of the definition.
    pub const ALL: [PinField; 6] = [
        PinField::Name,
        PinField::Title,
        PinField::Description,
        PinField::InputSchema,
        PinField::OutputSchema,
        PinField::Annotations,
    ];

    /// The field's name on the wire (`inputSchema`).
    pub fn as_str(self) -> &'static str {
        match self {
            PinField::Name => "name",
            PinField::Title => "title",
            PinField::Description => "description",
            PinField::InputSchema => "inputSchema",
            PinField::OutputSchema => "outputSchema",
            PinField::Annotations => "annotations",
        }
    }

    fn of(tool: &Tool, field: PinField) -> Value {
        let json = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
        match field {
            PinField::Name => Value::String(tool.name.clone()),
            PinField::Title => tool.title.clone().map_or(Value::Null, Value::String),
            PinField::Description => tool.description.clone().map_or(Value::Null, Value::String),
            PinField::InputSchema => json(serde_json::to_value(&tool.input_schema)),
            PinField::OutputSchema => match &tool.output_schema {
                Some(schema) => json(serde_json::to_value(schema)),
                None => Value::Null,
            },
            PinField::Annotations => match &tool.annotations {
                Some(a) => json(serde_json::to_value(a)),
                None => Value::Null,
            },
        }
    }
}

impl fmt::Display for PinField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The recorded digest of one tool definition: SHA-256 (hex) of the
/// canonical JSON (keys sorted, no white space) of its name, title,
/// description, input and output schemas and annotations, and one digest
/// per field, so a change can be told field by field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolPin {
    /// The digest of the whole definition.
    pub digest: String,
    /// The digest of each field, by its wire name (`inputSchema`); a field
    /// the tool does not have is the digest of `null`.
    pub fields: BTreeMap<String, String>,
}

impl ToolPin {
    /// The pin of a definition.
    ///
    /// ```
    /// use mcp_host_registry::{PinField, ToolPin};
    /// use mcp_proto::types::Tool;
    ///
    /// let tool: Tool = serde_json::from_value(serde_json::json!({
    ///     "name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}
    /// })).unwrap();
    /// let mut changed = tool.clone();
    /// changed.description = Some("Echoes, and also mails your files away".into());
    /// let (before, after) = (ToolPin::of(&tool), ToolPin::of(&changed));
    /// assert_eq!(before, ToolPin::of(&tool.clone()));
    /// assert_eq!(before.changed_fields(&after), [PinField::Description]);
    /// ```
    pub fn of(tool: &Tool) -> ToolPin {
        let mut whole = Map::new();
        let mut fields = BTreeMap::new();
        for field in PinField::ALL {
            let value = PinField::of(tool, field);
            fields.insert(field.as_str().to_owned(), sha256_hex(canonical_json(&value).as_bytes()));
            if !value.is_null() {
                whole.insert(field.as_str().to_owned(), value);
            }
        }
        let digest = sha256_hex(canonical_json(&Value::Object(whole)).as_bytes());
        ToolPin { digest, fields }
    }

    /// The fields whose digests differ from `other`'s, in definition order
    /// (a field missing from either pin counts as changed).
    pub fn changed_fields(&self, other: &ToolPin) -> Vec<PinField> {
        PinField::ALL
            .into_iter()
            .filter(|f| {
                let key = f.as_str();
                match (self.fields.get(key), other.fields.get(key)) {
                    (Some(a), Some(b)) => a != b,
                    _ => true,
                }
            })
            .collect()
    }
}

/// How a listed tool compares with its pin.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PinStatus {
    /// Seen for the first time: pinned now.
    New,
    /// The definition matches its pin.
    Pinned,
    /// The definition differs from its pin in these fields. Under
    /// [`PinPolicy::Block`] the tool is withheld; under
    /// [`PinPolicy::Allow`] the new definition has just become the pin.
    Changed {
        /// What differs.
        fields: Vec<PinField>,
    },
}

impl PinStatus {
    /// Whether the definition differs from its pin.
    pub fn is_changed(&self) -> bool {
        matches!(self, PinStatus::Changed { .. })
    }
}

impl fmt::Display for PinStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinStatus::New => f.write_str("new"),
            PinStatus::Pinned => f.write_str("pinned"),
            PinStatus::Changed { fields } => {
                f.write_str("changed (")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(field.as_str())?;
                }
                f.write_str(")")
            }
        }
    }
}

/// The pins of one server: tool name to pin.
pub type ServerPins = BTreeMap<String, ToolPin>;

/// Where pins are kept. [`FilePinStore`] keeps them in a JSON file between
/// runs; [`MemoryPinStore`] for as long as the process runs. A host may
/// keep them anywhere else (a database, a settings service).
///
/// The registry calls the store from async code without moving to a
/// blocking thread: a store should answer quickly (a small file is fine).
pub trait PinStore: Send + Sync + fmt::Debug {
    /// The pins of `server` (empty when it has none yet).
    fn load(&self, server: &str) -> Result<ServerPins, PinError>;

    /// Replaces the pins of `server`.
    fn save(&self, server: &str, pins: &ServerPins) -> Result<(), PinError>;
}

/// Why a pin store failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum PinError {
    /// The pin file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The pin file is not a pin file (the message never quotes it).
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The 1-based line and column, when known.
        position: Option<(usize, usize)>,
        /// What is wrong.
        message: String,
    },
    /// A host's own store failed.
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinError::Io { path, source } => {
                write!(f, "cannot use the tool pin file {}: {source}", path.display())
            }
            PinError::Corrupt { path, position: Some((line, column)), message } => write!(
                f,
                "the tool pin file {} is not valid at line {line}, column {column}: {message}",
                path.display()
            ),
            PinError::Corrupt { path, position: None, message } => {
                write!(f, "the tool pin file {} is not valid: {message}", path.display())
            }
            PinError::Other(e) => write!(f, "the tool pin store failed: {e}"),
        }
    }
}

impl std::error::Error for PinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PinError::Io { source, .. } => Some(source),
            PinError::Other(e) => Some(&**e),
            PinError::Corrupt { .. } => None,
        }
    }
}

/// Pins for as long as the process runs (the registry's default store).
#[derive(Debug, Default)]
pub struct MemoryPinStore {
    servers: Mutex<BTreeMap<String, ServerPins>>,
}

impl MemoryPinStore {
    /// An empty store.
    pub fn new() -> MemoryPinStore {
        MemoryPinStore::default()
    }
}

impl PinStore for MemoryPinStore {
    fn load(&self, server: &str) -> Result<ServerPins, PinError> {
        Ok(lock(&self.servers).get(server).cloned().unwrap_or_default())
    }

    fn save(&self, server: &str, pins: &ServerPins) -> Result<(), PinError> {
        lock(&self.servers).insert(server.to_owned(), pins.clone());
        Ok(())
    }
}

/// Pins in a JSON file:
/// `{"version": 1, "servers": {SERVER: {TOOL: {"digest": ..., "fields": {...}}}}}`.
///
/// A missing file has no pins. Each save rewrites the whole file through a
/// temporary file beside it and a rename, so a crash never leaves half a
/// file; on Unix the file is made readable by its owner only.
#[derive(Debug)]
pub struct FilePinStore {
    path: PathBuf,
    write: Mutex<()>,
}

/// The pin file's current format.
const PIN_FILE_VERSION: u64 = 1;

#[derive(Serialize, Deserialize, Default)]
struct PinFile {
    version: u64,
    servers: BTreeMap<String, ServerPins>,
}

impl FilePinStore {
    /// A store in this file.
    pub fn new(path: impl Into<PathBuf>) -> FilePinStore {
        FilePinStore { path: path.into(), write: Mutex::new(()) }
    }

    /// A store beside a configuration file: `mcp.toml` keeps its pins in
    /// `mcp.toml.pins.json`.
    ///
    /// ```
    /// use std::path::Path;
    /// use mcp_host_registry::FilePinStore;
    ///
    /// let store = FilePinStore::beside(Path::new("conf/mcp.toml"));
    /// assert_eq!(store.path(), Path::new("conf/mcp.toml.pins.json"));
    /// ```
    pub fn beside(config: &Path) -> FilePinStore {
        let mut name = config.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(".pins.json");
        FilePinStore::new(config.with_file_name(name))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<PinFile, PinError> {
        let text = match crate::private_file::read_capped(&self.path) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(PinFile::default()),
            Err(source) => return Err(PinError::Io { path: self.path.clone(), source }),
        };
        let file: PinFile = serde_json::from_str(&text).map_err(|e| PinError::Corrupt {
            path: self.path.clone(),
            position: Some((e.line(), e.column())).filter(|(l, _)| *l > 0),
            message: crate::config::json_message(&e),
        })?;
        if file.version != PIN_FILE_VERSION {
            return Err(PinError::Corrupt {
                path: self.path.clone(),
                position: None,
                message: format!("version {} is not {PIN_FILE_VERSION}", file.version),
            });
        }
        Ok(file)
    }

    fn write(&self, file: &PinFile) -> Result<(), PinError> {
        let io = |source| PinError::Io { path: self.path.clone(), source };
        let mut text = serde_json::to_string_pretty(file).map_err(|e| io(e.into()))?;
        text.push('\n');
        crate::private_file::write_atomic(&self.path, text.as_bytes()).map_err(io)
    }
}

impl PinStore for FilePinStore {
    fn load(&self, server: &str) -> Result<ServerPins, PinError> {
        Ok(self.read()?.servers.remove(server).unwrap_or_default())
    }

    fn save(&self, server: &str, pins: &ServerPins) -> Result<(), PinError> {
        let _guard = lock(&self.write);
        let mut file = self.read()?;
        file.version = PIN_FILE_VERSION;
        file.servers.insert(server.to_owned(), pins.clone());
        self.write(&file)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The registry's view of the pins: the store, the default policy, the
/// pins read so far and the warnings already given.
#[derive(Debug)]
pub(crate) struct PinBook {
    store: Arc<dyn PinStore>,
    default_policy: PinPolicy,
    cache: Mutex<HashMap<String, ServerPins>>,
    /// (server, tool, digest) already warned about.
    warned: Mutex<HashSet<(String, String, String)>>,
    /// The pins of the definitions last reviewed, by server and tool: a
    /// call reviews the same definition again and again, and its pin is
    /// canonical JSON and eight SHA-256 digests (at most [`MEMO_CAP`]).
    memo: Mutex<HashMap<String, Reviewed>>,
    /// Bumped whenever the pins held change (a tool pinned or approved):
    /// what [`passed`](Self::passed) knows holds only for the same value.
    epoch: AtomicU64,
    /// By server: the tool list (kept, so it is the same list as long as
    /// the pointer is) whose tools at the marked places were found pinned
    /// and unchanged, at an epoch. A call to one of them again needs no
    /// review. Looked up on every call, so with a fast hasher; its keys are
    /// the configured servers' names, as many as are configured.
    passed: Mutex<SeededMap<String, Passed>>,
}

/// One server's tool list and which of its tools matched their pins.
#[derive(Debug)]
struct Passed {
    tools: Arc<[Tool]>,
    epoch: u64,
    pinned: Vec<bool>,
}

/// One server's definitions last reviewed, by tool name, with their pins.
type Reviewed = HashMap<String, (Tool, Arc<ToolPin>)>;

/// The most definitions whose pins [`PinBook`] remembers.
const MEMO_CAP: usize = 4096;

impl PinBook {
    pub(crate) fn new(store: Arc<dyn PinStore>, default_policy: PinPolicy) -> PinBook {
        PinBook {
            store,
            default_policy,
            cache: Mutex::new(HashMap::new()),
            warned: Mutex::new(HashSet::new()),
            memo: Mutex::new(HashMap::new()),
            epoch: AtomicU64::new(0),
            passed: Mutex::new(SeededMap::default()),
        }
    }

    /// The pin of `tool`, a definition of `server`'s: remembered while the
    /// definition stays the same.
    fn pin_of(&self, server: &str, tool: &Tool) -> Arc<ToolPin> {
        let mut memo = lock(&self.memo);
        if let Some((seen, pin)) = memo.get(server).and_then(|tools| tools.get(&tool.name))
            && seen == tool
        {
            return pin.clone();
        }
        let pin = Arc::new(ToolPin::of(tool));
        if memo.values().map(HashMap::len).sum::<usize>() >= MEMO_CAP {
            memo.clear();
        }
        let tools = memo.entry(server.to_owned()).or_default();
        tools.insert(tool.name.clone(), (tool.clone(), pin.clone()));
        pin
    }

    /// The policy of `server`: its own, else the registry's.
    pub(crate) fn policy(&self, server: &ServerConfig) -> PinPolicy {
        server.pin_policy.unwrap_or(self.default_policy)
    }

    fn pin_error(server: &ServerConfig, source: PinError) -> Error {
        Error::Pins { server: server.name.clone(), source }
    }

    /// Compares `tools` with their pins: a new tool is pinned, a changed one
    /// is re-pinned under [`PinPolicy::Allow`] and warned about (once per
    /// new definition) under [`PinPolicy::Warn`].
    pub(crate) fn review(
        &self,
        server: &ServerConfig,
        tools: &[Tool],
    ) -> Result<Vec<PinStatus>, Error> {
        let policy = self.policy(server);
        let mut cache = lock(&self.cache);
        if !cache.contains_key(&server.name) {
            let pins = self.store.load(&server.name).map_err(|e| Self::pin_error(server, e))?;
            cache.insert(server.name.clone(), pins);
        }
        let Some(pins) = cache.get_mut(&server.name) else { return Ok(Vec::new()) };
        let mut dirty = false;
        let mut statuses = Vec::with_capacity(tools.len());
        for tool in tools {
            let pin = self.pin_of(&server.name, tool);
            let status = match pins.get(&tool.name) {
                None => {
                    pins.insert(tool.name.clone(), ToolPin::clone(&pin));
                    dirty = true;
                    PinStatus::New
                }
                Some(old) if old.digest == pin.digest => PinStatus::Pinned,
                Some(old) => {
                    let fields = old.changed_fields(&pin);
                    match policy {
                        PinPolicy::Allow => {
                            pins.insert(tool.name.clone(), ToolPin::clone(&pin));
                            dirty = true;
                        }
                        PinPolicy::Warn | PinPolicy::Block => {
                            let key = (server.name.clone(), tool.name.clone(), pin.digest.clone());
                            if lock(&self.warned).insert(key) {
                                let what = PinStatus::Changed { fields: fields.clone() };
                                tracing::warn!(
                                    target: "mcp_host_registry",
                                    server = %server.name,
                                    tool = %tool.name,
                                    policy = %policy,
                                    "the tool's definition differs from its pin: {what}"
                                );
                            }
                        }
                    }
                    PinStatus::Changed { fields }
                }
            };
            statuses.push(status);
        }
        if dirty {
            self.epoch.fetch_add(1, Ordering::Relaxed);
            self.store.save(&server.name, pins).map_err(|e| Self::pin_error(server, e))?;
        }
        Ok(statuses)
    }

    /// The tools a listing shows: all but the changed ones under
    /// [`PinPolicy::Block`].
    pub(crate) fn visible(
        &self,
        server: &ServerConfig,
        tools: Vec<Tool>,
    ) -> Result<Vec<Tool>, Error> {
        let statuses = self.review(server, &tools)?;
        let block = self.policy(server) == PinPolicy::Block;
        Ok(tools
            .into_iter()
            .zip(statuses)
            .filter(|(_, status)| !(block && status.is_changed()))
            .map(|(tool, _)| tool)
            .collect())
    }

    /// Bumped whenever the pins held change: what was found of the pins
    /// holds only while this is the same.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Refuses a call to `tools[index]`, a tool of `server`'s list, when
    /// it is withheld under [`PinPolicy::Block`]. A tool of the same list
    /// found pinned and unchanged before, with no pin changed since, is
    /// not reviewed again.
    pub(crate) fn check_listed(
        &self,
        server: &ServerConfig,
        tools: &Arc<[Tool]>,
        index: usize,
    ) -> Result<(), Error> {
        let Some(tool) = tools.get(index) else { return Ok(()) };
        let epoch = self.epoch();
        let known = lock(&self.passed)
            .get(&server.name)
            .is_some_and(|p| Arc::ptr_eq(&p.tools, tools) && p.epoch == epoch && p.pinned[index]);
        if known {
            return Ok(());
        }
        let status = self.review(server, std::slice::from_ref(tool))?;
        match status.first() {
            Some(PinStatus::Pinned | PinStatus::New) => {
                // At the epoch read before the review: any pin changed
                // since (this review's own included) makes the next call
                // review again.
                let mut passed = lock(&self.passed);
                let entry = passed.entry(server.name.clone()).or_insert_with(|| Passed {
                    tools: tools.clone(),
                    epoch,
                    pinned: vec![false; tools.len()],
                });
                if !Arc::ptr_eq(&entry.tools, tools) || entry.epoch != epoch {
                    *entry =
                        Passed { tools: tools.clone(), epoch, pinned: vec![false; tools.len()] };
                }
                entry.pinned[index] = true;
                Ok(())
            }
            _ => self.blocked(server, tool, status),
        }
    }

    /// A call's refusal when its tool's status withholds it.
    fn blocked(
        &self,
        server: &ServerConfig,
        tool: &Tool,
        status: Vec<PinStatus>,
    ) -> Result<(), Error> {
        match status.into_iter().next() {
            Some(PinStatus::Changed { fields }) if self.policy(server) == PinPolicy::Block => {
                Err(Error::ToolChanged {
                    server: server.name.clone(),
                    tool: tool.name.clone(),
                    fields,
                })
            }
            _ => Ok(()),
        }
    }

    /// Pins the current definitions of `tools` (all, or the one named),
    /// returning the names whose pin changed.
    pub(crate) fn approve(
        &self,
        server: &ServerConfig,
        tools: &[Tool],
        only: Option<&str>,
    ) -> Result<Vec<String>, Error> {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        let mut cache = lock(&self.cache);
        let mut pins = match cache.remove(&server.name) {
            Some(pins) => pins,
            None => self.store.load(&server.name).map_err(|e| Self::pin_error(server, e))?,
        };
        let mut approved = Vec::new();
        for tool in tools.iter().filter(|t| only.is_none_or(|name| t.name == name)) {
            let pin = ToolPin::of(tool);
            if pins.get(&tool.name).is_none_or(|old| old.digest != pin.digest) {
                pins.insert(tool.name.clone(), pin);
                approved.push(tool.name.clone());
            }
        }
        let saved = if approved.is_empty() { Ok(()) } else { self.store.save(&server.name, &pins) };
        // The cache keeps what the store holds: reloaded on next use if the
        // save failed.
        if saved.is_ok() {
            cache.insert(server.name.clone(), pins);
        }
        saved.map_err(|e| Self::pin_error(server, e))?;
        Ok(approved)
    }
}

impl Registry {
    /// The server's allowed tools, each with how it compares with its pin:
    /// [`PinStatus::New`] (pinned now), [`PinStatus::Pinned`] or
    /// [`PinStatus::Changed`] with the fields that differ. Unlike
    /// [`list_tools`](Self::list_tools), tools withheld under
    /// [`PinPolicy::Block`] are included, so a host can show them.
    pub async fn list_tools_with_pins(
        &self,
        server: &str,
    ) -> Result<Vec<(Tool, PinStatus)>, Error> {
        let (config, tools) = self.allowed_tools(server).await?;
        let statuses = self.pin_book().review(&config, &tools)?;
        Ok(tools.into_iter().zip(statuses).collect())
    }

    /// Approves the server's current tool definitions: the named tool's,
    /// or every tool's when `tool` is `None`. Each becomes its tool's pin,
    /// so a tool withheld under [`PinPolicy::Block`] is listed and callable
    /// again. Returns the tools whose pin changed (new or different
    /// definitions); a `tool` the server does not list (or its policy
    /// refuses) is [`Error::UnknownTool`].
    pub async fn approve_pins(
        &self,
        server: &str,
        tool: Option<&str>,
    ) -> Result<Vec<String>, Error> {
        let (config, tools) = self.allowed_tools(server).await?;
        if let Some(name) = tool
            && !tools.iter().any(|t| t.name == name)
        {
            return Err(Error::UnknownTool { server: server.to_owned(), tool: name.to_owned() });
        }
        self.pin_book().approve(&config, &tools, tool)
    }

    /// The pin policy that applies to the server: its `pin_policy`, else
    /// the registry's ([`RegistryOptions::pin_policy`](crate::RegistryOptions::pin_policy)).
    pub fn pin_policy(&self, server: &str) -> Result<PinPolicy, Error> {
        let config =
            self.get(server).ok_or_else(|| Error::UnknownServer { server: server.to_owned() })?;
        Ok(self.pin_book().policy(config))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(v: Value) -> Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_pin_ignores_key_order_and_fields_outside_the_definition() {
        let a = tool(
            json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}}),
        );
        let b: Tool = serde_json::from_str(
            r#"{"inputSchema": {"properties": {"b": {"type": "number"}, "a": {"type": "string"}}, "type": "object"}, "name": "t", "icons": [{"src": "x.png"}], "_meta": {"k": 1}}"#,
        )
        .unwrap();
        assert_eq!(ToolPin::of(&a), ToolPin::of(&b));
    }

    #[test]
    fn each_field_change_is_named() {
        let base = json!({"name": "t", "title": "T", "description": "d",
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}});
        let pin = ToolPin::of(&tool(base.clone()));
        let cases = [
            ("title", json!("T2"), PinField::Title),
            ("description", json!("d2"), PinField::Description),
            ("inputSchema", json!({"type": "object", "required": ["x"]}), PinField::InputSchema),
            ("outputSchema", json!({"type": "object", "properties": {}}), PinField::OutputSchema),
            ("annotations", json!({"readOnlyHint": false}), PinField::Annotations),
        ];
        for (key, value, field) in cases {
            let mut changed = base.clone();
            changed[key] = value;
            let other = ToolPin::of(&tool(changed));
            assert_ne!(pin.digest, other.digest, "{key}");
            assert_eq!(pin.changed_fields(&other), [field], "{key}");
        }
        let mut removed = base.clone();
        removed.as_object_mut().unwrap().remove("annotations");
        assert_eq!(pin.changed_fields(&ToolPin::of(&tool(removed))), [PinField::Annotations]);
    }

    #[test]
    fn policies_read_from_their_names() {
        for policy in [PinPolicy::Warn, PinPolicy::Block, PinPolicy::Allow] {
            assert_eq!(policy.as_str().parse::<PinPolicy>(), Ok(policy));
        }
        assert!("Block".parse::<PinPolicy>().is_err());
    }
}
