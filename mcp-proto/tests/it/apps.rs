//! MCP Apps metadata read from the wire types, on tables.

use mcp_proto::apps::{self, ToolUi, UiCsp, Visibility};
use mcp_proto::types::{ReadResourceResult, Resource, Tool};
use serde_json::{Value, json};

fn tool(meta: Value) -> Tool {
    let mut v = json!({"name": "t", "inputSchema": {"type": "object"}});
    if !meta.is_null() {
        v["_meta"] = meta;
    }
    serde_json::from_value(v).unwrap()
}

#[test]
fn a_tool_s_view_and_visibility() {
    use Visibility::{App, Model};
    // (`_meta`, resource URI, visibility, visible to the model, callable by the view)
    type Case = (Value, Option<&'static str>, Option<Vec<Visibility>>, bool, bool);
    let cases: &[Case] = &[
        (Value::Null, None, None, true, true),
        (json!({"other": 1}), None, None, true, true),
        (json!({"ui": {"resourceUri": "ui://a/v.html"}}), Some("ui://a/v.html"), None, true, true),
        (json!({"ui": {"visibility": ["model", "app"]}}), None, Some(vec![Model, App]), true, true),
        (json!({"ui": {"visibility": ["app"]}}), None, Some(vec![App]), false, true),
        (json!({"ui": {"visibility": ["model"]}}), None, Some(vec![Model]), true, false),
        // An empty list names nobody.
        (json!({"ui": {"visibility": []}}), None, Some(vec![]), false, false),
        // A value this crate does not know is kept and grants nothing.
        (
            json!({"ui": {"visibility": ["app", "robot"]}}),
            None,
            Some(vec![App, Visibility::Other("robot".into())]),
            false,
            true,
        ),
        // The older flat key, alone and beside the nested one (which wins).
        (json!({"ui/resourceUri": "ui://old"}), Some("ui://old"), None, true, true),
        (
            json!({"ui/resourceUri": "ui://old", "ui": {"resourceUri": "ui://new", "visibility": ["app"]}}),
            Some("ui://new"),
            Some(vec![App]),
            false,
            true,
        ),
        // A `ui` of another shape reads as absent: the tool stays visible.
        (json!({"ui": "yes"}), None, None, true, true),
        (json!({"ui": {"visibility": "app"}}), None, None, true, true),
    ];
    for (meta, uri, visibility, model, app) in cases {
        let t = tool(meta.clone());
        let ui = t.ui();
        assert_eq!(ui.as_ref().and_then(|u| u.resource_uri.as_deref()), *uri, "{meta}");
        assert_eq!(ui.as_ref().and_then(|u| u.visibility.clone()), *visibility, "{meta}");
        assert_eq!(t.is_visible_to_model(), *model, "{meta}");
        let callable = ui.as_ref().is_none_or(ToolUi::is_callable_by_app);
        assert_eq!(callable, *app, "{meta}");
        assert_eq!(ui.as_ref().is_some_and(ToolUi::is_app_only), !*model, "{meta}");
    }
    // Unknown members of `ui` are kept.
    let t = tool(json!({"ui": {"resourceUri": "ui://a", "future": 1}}));
    assert_eq!(t.ui().unwrap().extra["future"], json!(1));
}

#[test]
fn a_view_s_security_policy_and_permissions() {
    let read: ReadResourceResult = serde_json::from_value(json!({"contents": [
        {
            "uri": "ui://chart/view.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": "<!doctype html><p>hi</p>",
            "_meta": {"ui": {
                "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"], "frameDomains": ["https://player.example.com"], "baseUriDomains": ["https://base.example.com"], "newKind": ["x"]},
                "permissions": {"camera": {}, "clipboardWrite": {}},
                "domain": "abc.example-content.com",
                "prefersBorder": false
            }}
        },
        {"uri": "ui://plain", "mimeType": "text/html", "text": "<p>plain</p>"},
        {"uri": "ui://b", "mimeType": "TEXT/HTML ; Profile=\"MCP-APP\"", "blob": "PHA+aGk8L3A+"}
    ]}))
    .unwrap();
    let ui = read.contents[0].ui().unwrap();
    let csp = ui.csp.clone().unwrap();
    assert_eq!(csp.connect_domains, ["https://api.example.com"]);
    assert_eq!(csp.resource_domains, ["https://cdn.example.com"]);
    assert_eq!(csp.frame_domains, ["https://player.example.com"]);
    assert_eq!(csp.base_uri_domains, ["https://base.example.com"]);
    assert_eq!(csp.extra["newKind"], json!(["x"]));
    assert_eq!(ui.permission_names(), ["camera", "clipboardWrite"]);
    assert_eq!(ui.domain.as_deref(), Some("abc.example-content.com"));
    assert_eq!(ui.prefers_border, Some(false));
    assert!(read.contents[0].is_app_view());
    // No `_meta.ui`: none, and a plain HTML page is not a view.
    assert_eq!(read.contents[1].ui(), None);
    assert!(!read.contents[1].is_app_view());
    // The MIME type compares without case, spaces or quotes.
    assert!(read.contents[2].is_app_view());
    // Written back as read.
    let back = serde_json::to_value(&ui).unwrap();
    assert_eq!(back["csp"]["newKind"], json!(["x"]));
    assert_eq!(back["prefersBorder"], json!(false));
    assert_eq!(UiCsp::default(), serde_json::from_value(json!({})).unwrap());
}

#[test]
fn mime_types_and_listed_views() {
    for (mime, is_app) in [
        ("text/html;profile=mcp-app", true),
        ("text/html; profile=mcp-app", true),
        ("text/html;charset=utf-8;profile=mcp-app", true),
        ("text/html", false),
        ("text/plain;profile=mcp-app", false),
        ("text/html;profile=mcp-apps", false),
        ("", false),
    ] {
        assert_eq!(apps::is_app_mime_type(mime), is_app, "{mime}");
    }
    let r: Resource = serde_json::from_value(json!({
        "uri": "ui://chart/view.html", "name": "chart", "mimeType": apps::APP_MIME_TYPE,
        "_meta": {"ui": {"prefersBorder": true}}
    }))
    .unwrap();
    assert!(r.is_app_view());
    assert_eq!(r.ui().unwrap().prefers_border, Some(true));
    let plain: Resource = serde_json::from_value(json!({"uri": "file:///a", "name": "a"})).unwrap();
    assert!(!plain.is_app_view() && plain.ui().is_none());
    assert_eq!(apps::client_settings(), json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
}
