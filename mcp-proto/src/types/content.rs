//! Content blocks: what tool results, prompt messages and sampling messages
//! carry.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::{Annotations, JsonObject, Meta, Resource};

open_tagged_enum! {
    /// A block of content in a tool result or a prompt message.
    pub enum ContentBlock {
        /// `"type": "text"`.
        Text(TextContent) => "text",
        /// `"type": "image"`.
        Image(ImageContent) => "image",
        /// `"type": "audio"`.
        Audio(AudioContent) => "audio",
        /// `"type": "resource_link"`.
        ResourceLink(ResourceLink) => "resource_link",
        /// `"type": "resource"`: an embedded resource.
        Resource(EmbeddedResource) => "resource",
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

/// Text provided to or from an LLM.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(TextContent { text: "text" required, annotations: "annotations", meta: "_meta" });

visit_rest_via_value!(ImageContent, AudioContent, Resource, EmbeddedResource);

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), ..Default::default() }
    }
}

/// An image provided to or from an LLM.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image data.
    pub data: String,
    /// The MIME type of the image.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Audio provided to or from an LLM.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The base64-encoded audio data.
    pub data: String,
    /// The MIME type of the audio.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A link to a resource the server can read, in a prompt or a tool result
/// (`"type": "resource_link"`): a [`Resource`] with a type tag. It need not
/// appear in `resources/list`.
pub type ResourceLink = Resource;

/// The contents of a resource, embedded into a prompt or a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The embedded contents (text or blob).
    pub resource: ResourceContents,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The contents of a resource: text or a base64 blob.
///
/// The union has no tag: an object with a `text` member is
/// [`ResourceContents::Text`], otherwise one with a `blob` member is
/// [`ResourceContents::Blob`]; an object with neither is an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents, base64-encoded.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the resource.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type of the resource, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(t: TextResourceContents) -> Self {
        ResourceContents::Text(t)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(b: BlobResourceContents) -> Self {
        ResourceContents::Blob(b)
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(map) = &value else {
            return Err(de::Error::custom(format!(
                "resource contents must be an object, found {}",
                crate::jsonrpc::kind_of(&value)
            )));
        };
        if map.contains_key("text") {
            serde_json::from_value(value).map(ResourceContents::Text).map_err(de::Error::custom)
        } else if map.contains_key("blob") {
            serde_json::from_value(value).map(ResourceContents::Blob).map_err(de::Error::custom)
        } else {
            Err(de::Error::custom("resource contents have neither \"text\" nor \"blob\""))
        }
    }
}

/// The text contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text of the item.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded data.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}
