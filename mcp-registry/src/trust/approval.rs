//! Call approval: `allow`, `ask` or `deny` for each tool call, from the
//! server's exact lists, glob rules over `server__tool`, an
//! administrator's pinned tiers, the tool's annotations (only for servers
//! the configuration trusts) and the user's remembered answers; and the
//! host's [`Approver`] for `ask`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mcp_proto::client::BoxFuture;
use mcp_proto::types::{JsonObject, ToolAnnotations};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ServerConfig;
use crate::private_file;
use crate::trust::TrustError;
use crate::trust::pattern::Pattern;
use crate::trust::records::RecordFile;

/// What happens to a call. Ordered from the widest to the narrowest, so
/// the stricter of two tiers is their `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Called without asking.
    Allow,
    /// The host's [`Approver`] is asked first.
    Ask,
    /// Refused before anything is sent.
    Deny,
}

impl Tier {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Allow => "allow",
            Tier::Ask => "ask",
            Tier::Deny => "deny",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a call got its tier.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The server's `allowed_tools`/`disallowed_tools`.
    ServerLists,
    /// A rule of the configuration's `[mcp_client.approval]` (the pattern).
    Rule(String),
    /// A tier the administrator's managed policy pins (the pattern).
    Managed(String),
    /// The tool's annotations, on a server whose annotations are trusted.
    Annotation(&'static str),
    /// No rule matched: the configuration's default.
    Default,
    /// An answer the user gave before (this session or for good).
    Remembered,
    /// The host's approver answered now.
    Approver,
    /// `ask`, and no approver is set.
    NoApprover,
    /// `ask`, and the approver gave no answer within the call's timeout.
    ApproverTimedOut,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ServerLists => f.write_str("the server's allowed_tools/disallowed_tools"),
            Reason::Rule(p) => write!(f, "the approval rule {p:?}"),
            Reason::Managed(p) => write!(f, "the managed policy's rule {p:?}"),
            Reason::Annotation(what) => write!(f, "the tool's annotation {what}"),
            Reason::Default => f.write_str("the default tier"),
            Reason::Remembered => f.write_str("an earlier answer"),
            Reason::Approver => f.write_str("the user's answer"),
            Reason::NoApprover => f.write_str("no one to ask"),
            Reason::ApproverTimedOut => f.write_str("no answer within the call's timeout"),
        }
    }
}

/// A tier and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What happens.
    pub tier: Tier,
    /// Why.
    pub reason: Reason,
}

impl Decision {
    fn new(tier: Tier, reason: Reason) -> Decision {
        Decision { tier, reason }
    }
}

/// Glob patterns with a tier each, over `server__tool`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierRules {
    rules: Vec<(Pattern, Tier)>,
}

impl TierRules {
    /// Adds `pattern` with `tier`; `false` (and nothing added) when the
    /// pattern is blank or too long.
    pub fn add(&mut self, pattern: &str, tier: Tier) -> bool {
        match Pattern::new(pattern) {
            Some(p) => {
                self.rules.push((p, tier));
                true
            }
            None => false,
        }
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The strictest tier among the rules matching `server__tool`, with
    /// the first pattern of that tier; `None` when none matches.
    pub fn strictest(&self, server: &str, tool: &str) -> Option<(Tier, &Pattern)> {
        // Asked several times per call: no rules (the usual case) costs
        // nothing, not even the joined name.
        if self.rules.is_empty() {
            return None;
        }
        let name = format!("{server}__{tool}");
        let mut best: Option<(Tier, &Pattern)> = None;
        for (pattern, tier) in &self.rules {
            if best.is_none_or(|(b, _)| *tier > b) && pattern.matches(&name) {
                best = Some((*tier, pattern));
            }
        }
        best
    }

    /// Reads `allow`, `ask` and `deny` lists of patterns from a table;
    /// other keys are left to the caller.
    pub(crate) fn read(table: &serde_json::Map<String, Value>) -> Result<TierRules, String> {
        let mut rules = TierRules::default();
        for tier in [Tier::Allow, Tier::Ask, Tier::Deny] {
            for pattern in string_list(table, tier.as_str())? {
                if !rules.add(&pattern, tier) {
                    return Err(format!("`{tier}`: {pattern:?} is not a pattern"));
                }
            }
        }
        Ok(rules)
    }
}

/// A list of strings at `key` (absent: empty).
pub(crate) fn string_list(
    table: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Vec<String>, String> {
    match table.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| format!("`{key}` must hold strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an array of strings")),
    }
}

/// The user's call policy (`[mcp_client.approval]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallPolicy {
    /// The tier of a call no rule decides (`default`; `allow` unless set).
    pub default: Tier,
    /// `allow`, `ask` and `deny` patterns over `server__tool`; the
    /// strictest match wins.
    pub rules: TierRules,
    /// Servers (name patterns) whose tool annotations the policy may use
    /// (`trust_annotations`): with no rule matching, a `readOnlyHint` tool
    /// is allowed and a `destructiveHint` one asked about. Annotations of
    /// other servers are shown to the approver, never used.
    pub trust_annotations: Vec<Pattern>,
}

impl Default for CallPolicy {
    fn default() -> Self {
        CallPolicy {
            default: Tier::Allow,
            rules: TierRules::default(),
            trust_annotations: Vec::new(),
        }
    }
}

/// Keys of `[mcp_client.approval]`.
const POLICY_KEYS: &[&str] = &["default", "allow", "ask", "deny", "trust_annotations"];

impl CallPolicy {
    /// Reads `[mcp_client.approval]` (as a JSON value).
    pub(crate) fn read(value: &Value) -> Result<CallPolicy, String> {
        let table = value.as_object().ok_or("must be a table")?;
        if let Some(key) = table.keys().find(|k| !POLICY_KEYS.contains(&k.as_str())) {
            return Err(format!("unknown key `{key}`"));
        }
        let default = match table.get("default") {
            None => Tier::Allow,
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|_| "`default` is \"allow\", \"ask\" or \"deny\"".to_owned())?,
        };
        let mut trust_annotations = Vec::new();
        for p in string_list(table, "trust_annotations")? {
            trust_annotations.push(
                Pattern::new(&p)
                    .ok_or_else(|| format!("`trust_annotations`: {p:?} is not a pattern"))?,
            );
        }
        Ok(CallPolicy { default, rules: TierRules::read(table)?, trust_annotations })
    }

    /// Whether the policy may use `server`'s annotations.
    pub fn trusts_annotations_of(&self, server: &str) -> bool {
        self.trust_annotations.iter().any(|p| p.matches(server))
    }

    /// The decision that needs no I/O: the server's exact lists, the
    /// managed tiers, then the rules. `None` when only the tool's
    /// definition (annotations) or the default can decide.
    pub fn before_io(
        &self,
        server: &ServerConfig,
        tool: &str,
        managed: &TierRules,
    ) -> Option<Decision> {
        if !server.policy.is_allowed(tool) {
            return Some(Decision::new(Tier::Deny, Reason::ServerLists));
        }
        let pinned = managed.strictest(&server.name, tool);
        let ruled = self.rules.strictest(&server.name, tool);
        match (pinned, ruled) {
            (Some((m, p)), Some((u, _))) if m >= u => {
                Some(Decision::new(m, Reason::Managed(p.to_string())))
            }
            (_, Some((u, p))) => Some(Decision::new(u, Reason::Rule(p.to_string()))),
            (Some((Tier::Deny, p)), None) => {
                Some(Decision::new(Tier::Deny, Reason::Managed(p.to_string())))
            }
            _ => None,
        }
    }

    /// The whole decision: [`before_io`](Self::before_io), else the
    /// annotations of a trusted server, else the default; never wider than
    /// a tier the managed policy pins.
    pub fn decide(
        &self,
        server: &ServerConfig,
        tool: &str,
        annotations: Option<&ToolAnnotations>,
        managed: &TierRules,
    ) -> Decision {
        self.decide_after(self.before_io(server, tool, managed), server, tool, annotations, managed)
    }

    /// [`decide`](Self::decide) given what [`before_io`](Self::before_io)
    /// decided for the same server, tool and managed rules (evaluated once
    /// for a call that checks both).
    pub(crate) fn decide_after(
        &self,
        before: Option<Decision>,
        server: &ServerConfig,
        tool: &str,
        annotations: Option<&ToolAnnotations>,
        managed: &TierRules,
    ) -> Decision {
        let decision = before.unwrap_or_else(|| {
            let hints = annotations.filter(|_| self.trusts_annotations_of(&server.name));
            match hints {
                Some(a) if a.read_only_hint == Some(true) => {
                    Decision::new(Tier::Allow, Reason::Annotation("readOnlyHint"))
                }
                Some(a) if a.destructive_hint == Some(true) => Decision::new(
                    self.default.max(Tier::Ask),
                    Reason::Annotation("destructiveHint"),
                ),
                _ => Decision::new(self.default, Reason::Default),
            }
        });
        match managed.strictest(&server.name, tool) {
            Some((m, p)) if m > decision.tier => Decision::new(m, Reason::Managed(p.to_string())),
            _ => decision,
        }
    }
}

/// What an [`Approver`] is asked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The call's arguments (untrusted text may be in them).
    pub arguments: Option<JsonObject>,
    /// The tool's annotations as the server sent them: hints, which a
    /// server may get wrong or lie about.
    pub annotations: Option<ToolAnnotations>,
    /// Whether the configuration trusts this server's annotations.
    pub annotations_trusted: bool,
    /// Why the call is asked about.
    pub reason: Reason,
    /// Whether the answer may be remembered for good (not when an
    /// administrator's policy pins `ask`).
    pub may_remember: bool,
}

/// For how long an answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remember {
    /// This call only.
    Once,
    /// Every call of this tool until the registry is dropped.
    Session,
    /// Every call of this tool from now on (kept in the
    /// [`ApprovalStore`]).
    Always,
}

/// An approver's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalAnswer {
    /// Whether the call may go ahead.
    pub allow: bool,
    /// For how long the answer holds.
    pub remember: Remember,
}

/// The host's way of asking its user about a call the policy marks `ask`.
/// The registry waits for the answer at most the call's timeout (the
/// server's, unless the call sets one); no answer is a refusal.
pub trait Approver: fmt::Debug + Send + Sync {
    /// Asks about one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer>;
}

/// Where answers given for good are kept, keyed `server__tool`.
pub trait ApprovalStore: fmt::Debug + Send + Sync {
    /// The answer kept for this tool (`true`: allowed).
    fn get(&self, server: &str, tool: &str) -> Result<Option<bool>, TrustError>;
    /// Keeps an answer.
    fn set(&self, server: &str, tool: &str, allow: bool) -> Result<(), TrustError>;
}

/// Answers kept in memory (the default: for as long as the process runs).
#[derive(Debug, Default)]
pub struct MemoryApprovalStore {
    answers: Mutex<BTreeMap<String, bool>>,
}

impl MemoryApprovalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn key(server: &str, tool: &str) -> String {
    format!("{server}__{tool}")
}

impl ApprovalStore for MemoryApprovalStore {
    fn get(&self, server: &str, tool: &str) -> Result<Option<bool>, TrustError> {
        Ok(lock(&self.answers).get(&key(server, tool)).copied())
    }

    fn set(&self, server: &str, tool: &str, allow: bool) -> Result<(), TrustError> {
        lock(&self.answers).insert(key(server, tool), allow);
        Ok(())
    }
}

/// Answers in one JSON file, `{"version": 1, "answers": {"server__tool":
/// "allow" | "deny"}}`, written whole and atomically, readable by its
/// owner only (on Unix). A file that cannot be read or parsed is an error
/// naming it; nothing is written meanwhile.
#[derive(Debug)]
pub struct FileApprovalStore {
    file: RecordFile,
}

/// The records' field in the file.
const ANSWERS: &str = "answers";

impl FileApprovalStore {
    /// A store in this file (created on the first answer kept).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileApprovalStore { file: RecordFile::new(path.into()) }
    }

    /// The default file of `app`: `approvals.json` beside
    /// [`FileConsentStore::default_path`](crate::FileConsentStore::default_path)'s
    /// file, in the user's state directory.
    pub fn default_path(app: &str) -> Option<PathBuf> {
        let base = private_file::user_base_dir("XDG_STATE_HOME", "LOCALAPPDATA", ".local/state")?;
        Some(base.join(app).join("approvals.json"))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl ApprovalStore for FileApprovalStore {
    fn get(&self, server: &str, tool: &str) -> Result<Option<bool>, TrustError> {
        let answers = self.file.read::<String, Answer>(ANSWERS)?;
        Ok(answers.get(&key(server, tool)).map(|a| *a == Answer::Allow))
    }

    fn set(&self, server: &str, tool: &str, allow: bool) -> Result<(), TrustError> {
        let answer = if allow { Answer::Allow } else { Answer::Deny };
        self.file
            .update(ANSWERS, |answers: &mut BTreeMap<String, Answer>| {
                answers.insert(key(server, tool), answer) != Some(answer)
            })
            .map(|_| ())
    }
}

/// A kept answer, as the file spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    Allow,
    Deny,
}
