//! Types shared across the protocol: `_meta`, progress tokens, cursors,
//! roles, icons, implementation info, annotations, and the plain parameter
//! and result shapes.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::types::macros::serialize_opt_f64;

/// A JSON object: the type of free-form members such as `arguments`,
/// `structuredContent`, capability objects and unknown members.
pub type JsonObject = Map<String, Value>;

/// The `_meta` member: reserved metadata attached to params, results and many
/// objects. Always kept as sent.
pub type Meta = Map<String, Value>;

/// The `_meta` key under which a request asks for progress notifications.
pub const PROGRESS_TOKEN_META_KEY: &str = "progressToken";

/// An opaque token used to represent a cursor for pagination.
pub type Cursor = String;

/// A progress token, used to associate progress notifications with the
/// original request: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl ProgressToken {
    /// The `progressToken` member of a request's `_meta`, if it is a valid
    /// token.
    pub fn from_meta(meta: &Meta) -> Option<ProgressToken> {
        match meta.get(PROGRESS_TOKEN_META_KEY)? {
            Value::String(s) => Some(ProgressToken::String(s.clone())),
            Value::Number(n) => n.as_i64().map(ProgressToken::Number),
            _ => None,
        }
    }

    /// The token as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            ProgressToken::Number(n) => Value::from(*n),
            ProgressToken::String(s) => Value::from(s.as_str()),
        }
    }
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Number(n) => write!(f, "{n}"),
            ProgressToken::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl Serialize for ProgressToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ProgressToken::Number(n) => serializer.serialize_i64(*n),
            ProgressToken::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(s) => Ok(ProgressToken::String(s)),
            Value::Number(n) => n.as_i64().map(ProgressToken::Number).ok_or_else(|| {
                de::Error::custom(format!("progress token {n} is not a 64-bit integer"))
            }),
            other => Err(de::Error::custom(format!(
                "a progress token must be a string or an integer, found {}",
                crate::jsonrpc::kind_of(&other)
            ))),
        }
    }
}

open_string_enum! {
    /// The sender or recipient of messages and data in a conversation.
    pub enum Role {
        /// `user`.
        User => "user",
        /// `assistant`.
        Assistant => "assistant",
    }
}

open_string_enum! {
    /// The theme an icon is designed for.
    pub enum IconTheme {
        /// `light`: for a light background.
        Light => "light",
        /// `dark`: for a dark background.
        Dark => "dark",
    }
}

/// An optionally-sized icon that can be displayed in a user interface.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// A URI pointing to the icon: an HTTP(S) URL or a `data:` URI.
    /// Untrusted: check its origin, and beware of SVG.
    pub src: String,
    /// Optional MIME type override, such as `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon can be used at (`"48x48"`, or `"any"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Describes an MCP implementation (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// A human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The implementation's version.
    pub version: String,
    /// What this implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The implementation's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons a user interface may show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(Implementation {
    name: "name" required,
    title: "title",
    version: "version" required,
    description: "description",
    website_url: "websiteUrl",
    icons: "icons",
});

impl Implementation {
    /// An implementation with a name and a version and nothing else.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation { name: name.into(), version: version.into(), ..Default::default() }
    }
}

/// Optional annotations that inform how a client uses or displays an object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important the data is, from 0 (optional) to 1 (required).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub priority: Option<f64>,
    /// When the object was last modified (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of a request that has no parameters of its own (`ping`,
/// `roots/list`), or the common part of any request's parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestParams {
    /// Metadata; `progressToken` asks for progress notifications.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of a notification that has no parameters of its own
/// (`notifications/initialized`, the `list_changed` notifications).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A result that indicates success but carries no data (`ping`,
/// `logging/setLevel`, `resources/subscribe`, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyResult {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}
