//! Roots: the directories and files a client lets a server operate on.
//!
//! Deprecated by the protocol (SEP-2577, from 2026-07-28): kept working
//! in every revision that has them; build nothing new on them.

use serde::{Deserialize, Serialize};

use crate::types::{JsonObject, Meta};

/// A root directory or file that the server can operate on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// The root's URI (`file://` for now).
    pub uri: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's result of `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Root {
    /// A root at `uri` (a `file://` URI), with no name.
    ///
    /// ```
    /// use mcp_proto::types::{ListRootsResult, Root};
    ///
    /// let roots = ListRootsResult::new(vec![
    ///     Root::new("file:///home/user/project").with_name("project"),
    ///     Root::new("file:///tmp/scratch"),
    /// ]);
    /// assert_eq!(
    ///     serde_json::to_value(&roots).unwrap(),
    ///     serde_json::json!({"roots": [
    ///         {"uri": "file:///home/user/project", "name": "project"},
    ///         {"uri": "file:///tmp/scratch"}
    ///     ]})
    /// );
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        Root { uri: uri.into(), ..Default::default() }
    }

    /// The same root with a human-readable name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

impl ListRootsResult {
    /// The result listing `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult { roots, ..Default::default() }
    }
}
