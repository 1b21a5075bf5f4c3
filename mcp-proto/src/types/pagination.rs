//! Pagination: the `cursor` of list requests (the `nextCursor` of list
//! results is a field of each result type).

use serde::{Deserialize, Serialize};

use crate::types::{Cursor, JsonObject, Meta};

/// Common parameters for paginated requests (`tools/list`, `resources/list`,
/// `resources/templates/list`, `prompts/list`, `tasks/list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// An opaque pagination position from a previous `nextCursor`; the server
    /// returns results starting after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PaginatedRequestParams {
    /// Parameters asking for the page after `cursor` (the first page for
    /// `None`).
    pub fn new(cursor: Option<Cursor>) -> Self {
        PaginatedRequestParams { cursor, ..Default::default() }
    }
}
