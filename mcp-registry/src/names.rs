//! Collision-free tool names, for hosts that flatten every server's tools
//! into one model-facing list.
//!
//! A model's tool list is flat, and model APIs accept only short names of
//! `[A-Za-z0-9_-]` (64 characters at most), while two servers may both have
//! a `search` tool. [`ToolNames`] gives each (server, tool) pair of a set a
//! name that is unique in the set, within those rules, and maps it back.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use mcp_proto::types::Tool;

use crate::digest::sha256_hex;
use crate::registry::ServerResult;

/// The longest name [`ToolNames`] gives (64, the limit of the major model
/// APIs).
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// The separator between server and tool in a flat name, unless another is
/// chosen: `__` (`files__read_file`).
pub const DEFAULT_SEPARATOR: &str = "__";
/// The longest separator accepted.
const MAX_SEPARATOR_LEN: usize = 8;
/// How many hex digits of the SHA-256 a shortened name ends with.
const HASH_DIGITS: usize = 12;

/// Why a separator was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The separator is empty, longer than 8 characters, or has a
    /// character outside `[A-Za-z0-9_-]`.
    BadSeparator {
        /// The separator given.
        separator: String,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::BadSeparator { separator } => write!(
                f,
                "tool name separator {separator:?} must be 1 to {MAX_SEPARATOR_LEN} characters \
                 of A-Z, a-z, 0-9, `_` and `-`"
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// Unique flat names for a set of (server, tool) pairs, and the way back.
///
/// A pair's name is `server + separator + tool` when that is already a
/// valid name (only `[A-Za-z0-9_-]`, at most 64 characters) and no other
/// pair of the set would get the same text (as `a__b`/`c` and `a`/`b__c`
/// would). Otherwise it is shortened: the plain form with every other
/// character replaced by `_`, cut to 51 characters, then `_` and the first
/// 12 hex digits of the SHA-256 of the server and tool names.
///
/// Names are stable across restarts: a pure function of the pair, except
/// that a pair caught in a clash gets the hashed form, and (with odds of one
/// in 2^48) hashed forms that clash are resolved in the sorted order of the
/// pairs. The same set always gives the same names, in whatever order the
/// pairs are given.
///
/// ```
/// use mcp_host_registry::ToolNames;
///
/// let names = ToolNames::new([("files", "read_file"), ("web", "search"), ("docs", "search")]);
/// assert_eq!(names.name("files", "read_file"), Some("files__read_file"));
/// assert_eq!(names.resolve("docs__search"), Some(("docs", "search")));
///
/// // Not a valid name as it stands: shortened with a stable hash.
/// let names = ToolNames::new([("my server", "tool.with.dots")]);
/// let flat = names.name("my server", "tool.with.dots").unwrap();
/// assert!(flat.starts_with("my_server__tool_with_dots_") && flat.len() == 38);
/// assert_eq!(names.resolve(flat), Some(("my server", "tool.with.dots")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNames {
    by_pair: BTreeMap<(String, String), String>,
    by_name: HashMap<String, (String, String)>,
}

impl ToolNames {
    /// Names for these pairs with the default separator (`__`). Repeated
    /// pairs count once.
    pub fn new<I, S, T>(pairs: I) -> ToolNames
    where
        I: IntoIterator<Item = (S, T)>,
        S: AsRef<str>,
        T: AsRef<str>,
    {
        ToolNames::build(pairs, DEFAULT_SEPARATOR)
    }

    /// Names for these pairs with another separator (1 to 8 characters of
    /// `[A-Za-z0-9_-]`).
    pub fn with_separator<I, S, T>(pairs: I, separator: &str) -> Result<ToolNames, NameError>
    where
        I: IntoIterator<Item = (S, T)>,
        S: AsRef<str>,
        T: AsRef<str>,
    {
        if separator.is_empty()
            || separator.len() > MAX_SEPARATOR_LEN
            || !separator.bytes().all(is_allowed)
        {
            return Err(NameError::BadSeparator { separator: separator.to_owned() });
        }
        Ok(ToolNames::build(pairs, separator))
    }

    /// Names for every tool of a [`Registry::list_all_tools`](crate::Registry::list_all_tools)
    /// answer (servers that failed are left out), default separator.
    pub fn from_listing(listing: &[ServerResult<Vec<Tool>>]) -> ToolNames {
        ToolNames::new(listing.iter().flat_map(|entry| {
            let tools = entry.result.as_deref().unwrap_or_default();
            tools.iter().map(move |t| (entry.server.as_str(), t.name.as_str()))
        }))
    }

    fn build<I, S, T>(pairs: I, separator: &str) -> ToolNames
    where
        I: IntoIterator<Item = (S, T)>,
        S: AsRef<str>,
        T: AsRef<str>,
    {
        let pairs: BTreeSet<(String, String)> = pairs
            .into_iter()
            .map(|(s, t)| (s.as_ref().to_owned(), t.as_ref().to_owned()))
            .collect();
        // The plain text of every pair, and how many pairs share it.
        let plain: Vec<(&(String, String), String)> =
            pairs.iter().map(|p| (p, format!("{}{separator}{}", p.0, p.1))).collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (_, text) in &plain {
            *counts.entry(text.as_str()).or_default() += 1;
        }
        let mut by_pair = BTreeMap::new();
        let mut by_name: HashMap<String, (String, String)> = HashMap::new();
        // Plain names first: they are unique among themselves.
        let mut shortened = Vec::new();
        for (pair, text) in &plain {
            if is_valid(text) && counts[text.as_str()] == 1 {
                by_name.insert(text.clone(), (*pair).clone());
                by_pair.insert((*pair).clone(), text.clone());
            } else {
                shortened.push((*pair, text));
            }
        }
        // Then the shortened ones, in the pairs' sorted order.
        for (pair, text) in shortened {
            let stem: String =
                sanitize(text).chars().take(MAX_TOOL_NAME_LEN - HASH_DIGITS - 1).collect();
            let mut round = 0u32;
            let name = loop {
                let candidate = format!("{stem}_{}", pair_hash(pair, round));
                if !by_name.contains_key(&candidate) {
                    break candidate;
                }
                round += 1;
            };
            by_name.insert(name.clone(), pair.clone());
            by_pair.insert(pair.clone(), name);
        }
        ToolNames { by_pair, by_name }
    }

    /// The flat name of a tool of a server, when the pair is in the set.
    pub fn name(&self, server: &str, tool: &str) -> Option<&str> {
        self.by_pair.get(&(server.to_owned(), tool.to_owned())).map(String::as_str)
    }

    /// The (server, tool) a flat name stands for.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        self.by_name.get(name).map(|(s, t)| (s.as_str(), t.as_str()))
    }

    /// Every (flat name, server, tool), sorted by server, then tool.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.by_pair.iter().map(|((s, t), n)| (n.as_str(), s.as_str(), t.as_str()))
    }

    /// How many pairs have names.
    pub fn len(&self) -> usize {
        self.by_pair.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.by_pair.is_empty()
    }
}

fn is_allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_valid(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME_LEN && name.bytes().all(is_allowed)
}

/// Every character outside `[A-Za-z0-9_-]` as `_`.
fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii() && is_allowed(c as u8) { c } else { '_' }).collect()
}

/// The first hex digits of the SHA-256 of the pair (and of the round, after
/// the first, should two hashed names ever clash).
fn pair_hash((server, tool): &(String, String), round: u32) -> String {
    let mut input = Vec::with_capacity(server.len() + tool.len() + 8);
    input.extend_from_slice(server.as_bytes());
    input.push(0);
    input.extend_from_slice(tool.as_bytes());
    if round > 0 {
        input.push(0);
        input.extend_from_slice(round.to_string().as_bytes());
    }
    let mut hex = sha256_hex(&input);
    hex.truncate(HASH_DIGITS);
    hex
}
