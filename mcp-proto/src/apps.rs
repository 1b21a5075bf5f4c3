//! MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): what
//! a host reads to show a server's interactive views.
//!
//! A tool names its view in `_meta.ui` ([`ToolUi`]: the `ui://` resource
//! that renders its results, and who may see and call it); the view is an
//! HTML resource (`text/html;profile=mcp-app`) whose `_meta.ui`
//! ([`UiResourceMeta`]) says which origins it may reach and which browser
//! permissions it asks for. A host declares the extension in its
//! capabilities ([`client_settings`], or `mcp_peer`'s
//! `ClientOptions::with_apps`) and keeps the tools meant only for the view
//! away from the model ([`Tool::is_visible_to_model`]).
//!
//! Everything here is read from the members the wire types keep (`meta`),
//! so a server that writes something else loses nothing: what does not
//! parse reads as absent, the message stays as it came.
//!
//! ```
//! use mcp_proto::apps::Visibility;
//! use mcp_proto::types::Tool;
//!
//! let tool: Tool = serde_json::from_value(serde_json::json!({
//!     "name": "refresh", "inputSchema": {"type": "object"},
//!     "_meta": {"ui": {"resourceUri": "ui://chart/view.html", "visibility": ["app"]}}
//! })).unwrap();
//! let ui = tool.ui().unwrap();
//! assert_eq!(ui.resource_uri.as_deref(), Some("ui://chart/view.html"));
//! assert_eq!(ui.visibility, Some(vec![Visibility::App]));
//! assert!(!tool.is_visible_to_model());
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::{JsonObject, Meta, Resource, ResourceContents, Tool};

/// The extension's identifier, the key of its capability settings.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's HTML view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme of a view's URI.
pub const UI_SCHEME: &str = "ui://";

/// The older flat `_meta` key for a tool's view (deprecated by the
/// extension in favour of `_meta.ui.resourceUri`; still read).
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The settings a host declares for the extension: the MIME types of the
/// views it can show (`{"mimeTypes": ["text/html;profile=mcp-app"]}`).
pub fn client_settings() -> Value {
    serde_json::json!({ "mimeTypes": [APP_MIME_TYPE] })
}

/// Who may see and call a tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Visibility {
    /// The model: the tool is in the agent's list and it may call it.
    Model,
    /// The view of the same server: it may call the tool.
    App,
    /// A value this crate does not know, kept as sent.
    #[serde(untagged)]
    Other(String),
}

/// A tool's `_meta.ui`: the view that renders its results and who may see
/// and call it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may see and call the tool; absent means both the model and the
    /// view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolUi {
    /// Whether the model may see and call the tool (no `visibility`, or
    /// one that names the model).
    pub fn is_visible_to_model(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether the view may call the tool (no `visibility`, or one that
    /// names the app).
    pub fn is_callable_by_app(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::App))
    }

    /// Whether only the view may see the tool (a `visibility` without the
    /// model).
    pub fn is_app_only(&self) -> bool {
        !self.is_visible_to_model()
    }
}

/// The origins a view may reach, by kind (its content security policy).
/// Absent or empty lists mean none: the host's restrictive default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiCsp {
    /// Network requests (fetch, XHR, WebSocket): `connect-src`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Scripts, images, styles, fonts, media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Nested frames: `frame-src`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// The document's base URIs: `base-uri`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A view's `_meta.ui`: its content security policy, the browser
/// permissions it asks for, its origin and border preferences.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceMeta {
    /// The origins it may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser permissions it asks for, by name (`camera`,
    /// `microphone`, `geolocation`, `clipboardWrite`, ...), each with its
    /// settings (`{}` today). A host may grant them or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<JsonObject>,
    /// The dedicated origin it asks for (its format is the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether it wants the host to draw a border and background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiResourceMeta {
    /// The names of the permissions asked for, in the order sent.
    pub fn permission_names(&self) -> Vec<&str> {
        self.permissions.iter().flat_map(|p| p.keys().map(String::as_str)).collect()
    }
}

/// The `ui` member of a `_meta`, decoded as `T`; `None` when absent or
/// not of that shape.
fn ui_of<T: for<'de> Deserialize<'de>>(meta: Option<&Meta>) -> Option<T> {
    let ui = meta?.get("ui")?;
    T::deserialize(ui).ok()
}

impl Tool {
    /// The tool's MCP Apps metadata (`_meta.ui`, or the older
    /// `_meta["ui/resourceUri"]`); `None` when it names no view and sets
    /// no visibility.
    pub fn ui(&self) -> Option<ToolUi> {
        let mut ui = ui_of::<ToolUi>(self.meta.as_ref());
        let legacy =
            self.meta.as_ref().and_then(|m| m.get(LEGACY_RESOURCE_URI_KEY)).and_then(Value::as_str);
        if let Some(uri) = legacy {
            let ui = ui.get_or_insert_with(ToolUi::default);
            if ui.resource_uri.is_none() {
                ui.resource_uri = Some(uri.to_owned());
            }
        }
        ui
    }

    /// Whether the model may see and call the tool: a host leaves the
    /// others out of the list it gives the model (MCP Apps: tools whose
    /// `visibility` is only `["app"]`).
    pub fn is_visible_to_model(&self) -> bool {
        self.ui().is_none_or(|ui| ui.is_visible_to_model())
    }
}

impl Resource {
    /// Whether the resource is an MCP App's view (a `ui://` URI).
    pub fn is_app_view(&self) -> bool {
        self.uri.starts_with(UI_SCHEME)
    }

    /// The view's metadata given in the listing (`_meta.ui`).
    pub fn ui(&self) -> Option<UiResourceMeta> {
        ui_of(self.meta.as_ref())
    }
}

impl ResourceContents {
    /// The view's metadata given with its contents (`_meta.ui`).
    pub fn ui(&self) -> Option<UiResourceMeta> {
        let meta = match self {
            ResourceContents::Text(t) => t.meta.as_ref(),
            ResourceContents::Blob(b) => b.meta.as_ref(),
        };
        ui_of(meta)
    }

    /// Whether these are an MCP App's HTML view (its MIME type, parameters
    /// compared without case or spaces).
    pub fn is_app_view(&self) -> bool {
        self.mime_type().is_some_and(is_app_mime_type)
    }
}

/// Whether `mime` is [`APP_MIME_TYPE`] (type and parameter compared without
/// case; spaces around the `;` ignored).
pub fn is_app_mime_type(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    kind.eq_ignore_ascii_case("text/html")
        && parts.any(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("profile")
                    && v.trim().trim_matches('"').eq_ignore_ascii_case("mcp-app")
            })
        })
}
