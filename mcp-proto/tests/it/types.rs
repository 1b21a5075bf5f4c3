//! Round trips of the MCP 2025-11-25 wire types.
//!
//! Every case is JSON written by hand after the specification; `check`
//! decodes it (from a `Value` and from text), encodes it again and requires
//! the very same JSON back.

use std::fmt::Debug;

use mcp_proto::RequestId;
use mcp_proto::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Decodes `input` as `T`, re-encodes it, and requires the same JSON.
#[track_caller]
fn check<T: Serialize + DeserializeOwned + Debug + PartialEq>(input: Value) -> T {
    let name = std::any::type_name::<T>();
    let decoded: T = serde_json::from_value(input.clone())
        .unwrap_or_else(|e| panic!("{name} does not decode: {e}\n{input:#}"));
    let from_text: T = serde_json::from_str(&input.to_string())
        .unwrap_or_else(|e| panic!("{name} does not decode from text: {e}\n{input:#}"));
    assert_eq!(from_text, decoded, "{name}: decoding from text and from a value differ");
    let encoded = serde_json::to_value(&decoded).expect("encodes");
    assert_eq!(encoded, input, "{name} does not round-trip");
    decoded
}

/// Every input must round-trip as `T`.
#[track_caller]
fn check_all<T: Serialize + DeserializeOwned + Debug + PartialEq>(inputs: Vec<Value>) {
    for input in inputs {
        check::<T>(input);
    }
}

/// `input` must not decode as `T`, with an error mentioning `needle`.
#[track_caller]
fn check_err<T: DeserializeOwned + Debug>(input: Value, needle: &str) {
    match serde_json::from_value::<T>(input.clone()) {
        Ok(v) => panic!("{input} decoded as {v:?}"),
        Err(e) => assert!(e.to_string().contains(needle), "error {e:?} lacks {needle:?}"),
    }
}

#[test]
fn common_types() {
    check_all::<Implementation>(vec![
        json!({"name": "host", "version": "1.0.0"}),
        json!({
            "name": "files", "title": "File Server", "version": "2.1.0",
            "description": "Reads and writes files", "websiteUrl": "https://example.com",
            "icons": [
                {"src": "https://example.com/icon.png", "mimeType": "image/png",
                 "sizes": ["48x48", "96x96"], "theme": "light"},
                {"src": "data:image/svg+xml;base64,PHN2Zy8+", "sizes": ["any"], "theme": "dark"}
            ],
            "x-build": 7
        }),
    ]);
    let icon = check::<Icon>(json!({"src": "https://x/i.png", "theme": "high-contrast"}));
    assert_eq!(icon.theme, Some(IconTheme::Other("high-contrast".into())));
    check_all::<Annotations>(vec![
        json!({}),
        json!({"audience": ["user", "assistant"], "priority": 0.8,
               "lastModified": "2025-01-12T15:00:58Z"}),
        json!({"priority": 1}),
        json!({"priority": 0}),
    ]);
    check_all::<RequestParams>(vec![json!({}), json!({"_meta": {"progressToken": 3}})]);
    check_all::<NotificationParams>(vec![json!({}), json!({"_meta": {"trace": "abc"}})]);
    check_all::<EmptyResult>(vec![json!({}), json!({"_meta": {"k": [1, 2]}, "extra": true})]);
    check_all::<PaginatedRequestParams>(vec![json!({}), json!({"cursor": "eyJwYWdlIjoyfQ=="})]);
}

#[test]
fn progress_tokens() {
    assert_eq!(check::<ProgressToken>(json!("abc")), ProgressToken::from("abc"));
    assert_eq!(check::<ProgressToken>(json!(-7)), ProgressToken::Number(-7));
    check_err::<ProgressToken>(json!(1.5), "not a 64-bit integer");
    check_err::<ProgressToken>(json!(null), "string or an integer");
    let meta = json!({"progressToken": "t-1"});
    assert_eq!(
        ProgressToken::from_meta(meta.as_object().unwrap()),
        Some(ProgressToken::String("t-1".into()))
    );
    assert_eq!(ProgressToken::from_meta(&Meta::new()), None);
}

#[test]
fn open_string_enums() {
    assert_eq!(check::<LoggingLevel>(json!("warning")), LoggingLevel::Warning);
    assert_eq!(check::<LoggingLevel>(json!("trace")), LoggingLevel::Other("trace".into()));
    assert_eq!(LoggingLevel::from("emergency").severity(), Some(7));
    assert_eq!(LoggingLevel::from("trace").severity(), None);
    assert_eq!(check::<Role>(json!("assistant")), Role::Assistant);
    assert_eq!(check::<TaskStatus>(json!("input_required")), TaskStatus::InputRequired);
    assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::Working.is_terminal());
    assert_eq!(check::<StopReason>(json!("refusal")).as_str(), "refusal");
    assert_eq!(check::<IncludeContext>(json!("thisServer")), IncludeContext::ThisServer);
    assert_eq!(check::<ToolChoiceMode>(json!("none")), ToolChoiceMode::None);
    assert_eq!(check::<ElicitAction>(json!("decline")).to_string(), "decline");
    assert_eq!(check::<TaskSupport>(json!("optional")), TaskSupport::Optional);
    assert_eq!(check::<StringFormat>(json!("date-time")), StringFormat::DateTime);
}

#[test]
fn initialize_in_full() {
    let params = check::<InitializeRequestParams>(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "experimental": {"x-trace": {"level": 2}},
            "roots": {"listChanged": true},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {
                "list": {}, "cancel": {},
                "requests": {
                    "sampling": {"createMessage": {}},
                    "elicitation": {"create": {}}
                }
            },
            "x-vendor": {"colour": "blue"}
        },
        "clientInfo": {"name": "host", "title": "Host", "version": "0.1.0",
                       "description": "An agent host", "websiteUrl": "https://host.example"},
        "_meta": {"progressToken": "init"}
    }));
    let caps = &params.capabilities;
    assert_eq!(caps.roots.as_ref().unwrap().list_changed, Some(true));
    assert!(caps.elicitation.as_ref().unwrap().url.is_some());
    assert!(caps.sampling.as_ref().unwrap().tools.is_some());
    let tasks = caps.tasks.as_ref().unwrap().requests.as_ref().unwrap();
    assert!(tasks.elicitation.as_ref().unwrap().create.is_some());
    assert_eq!(caps.extra["x-vendor"], json!({"colour": "blue"}));
    assert_eq!(params.client_info.name, "host");

    let result = check::<InitializeResult>(json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {
            "experimental": {"streaming": {}},
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": false},
            "tools": {"listChanged": true},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            "x-future": true
        },
        "serverInfo": {"name": "everything", "version": "2026.8.31",
                       "icons": [{"src": "https://e.example/i.png"}]},
        "instructions": "Call echo first.",
        "_meta": {"io.example/trace": "abc"},
        "futureMember": [1, 2, 3]
    }));
    let caps = &result.capabilities;
    assert!(caps.logging.is_some() && caps.completions.is_some());
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    let call = &caps.tasks.as_ref().unwrap().requests.as_ref().unwrap().tools;
    assert!(call.as_ref().unwrap().call.is_some());
    assert_eq!(caps.extra["x-future"], json!(true));
    assert_eq!(result.extra["futureMember"], json!([1, 2, 3]));
    assert_eq!(result.meta.unwrap()["io.example/trace"], json!("abc"));

    check_all::<ClientCapabilities>(vec![json!({}), json!({"elicitation": {}})]);
    check_all::<ServerCapabilities>(vec![json!({}), json!({"tools": {}})]);
    let built = InitializeRequestParams::new(
        "2025-11-25",
        ClientCapabilities::default(),
        Implementation::new("host", "1"),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "host", "version": "1"}})
    );
}

#[test]
fn tools() {
    let list = check::<ListToolsResult>(json!({
        "tools": [
            {
                "name": "get_weather",
                "title": "Weather",
                "description": "Current weather for a city",
                "inputSchema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name", "x-mcp-header": "City"},
                        "units": {"type": "string", "enum": ["c", "f"], "default": "c"}
                    },
                    "required": ["city"],
                    "additionalProperties": false,
                    "$defs": {"unit": {"type": "string"}}
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"temperature": {"type": "number"}},
                    "required": ["temperature"]
                },
                "execution": {"taskSupport": "optional"},
                "annotations": {"title": "Weather lookup", "readOnlyHint": true,
                                "destructiveHint": false, "idempotentHint": true,
                                "openWorldHint": true},
                "icons": [{"src": "https://w.example/sun.png", "mimeType": "image/png"}],
                "_meta": {"io.example/version": 3}
            },
            {"name": "ping", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "preferred"}},
            {"name": "legacy", "inputSchema": {"type": "object", "properties": {}}, "annotations": {"title": "Old"}}
        ],
        "nextCursor": "page-2",
        "_meta": {"cached": true}
    }));
    let weather = &list.tools[0];
    assert_eq!(weather.input_schema.required, Some(vec!["city".to_owned()]));
    assert_eq!(weather.input_schema.extra["additionalProperties"], json!(false));
    assert_eq!(
        weather.input_schema.properties.as_ref().unwrap()["city"]["x-mcp-header"],
        json!("City")
    );
    assert_eq!(weather.display_name(), "Weather");
    assert_eq!(
        list.tools[1].execution.as_ref().unwrap().task_support,
        Some(TaskSupport::from("preferred"))
    );
    assert_eq!(list.tools[2].display_name(), "Old");
    assert_eq!(list.next_cursor.as_deref(), Some("page-2"));

    // A tool without inputSchema still decodes, with the default schema.
    let tool: Tool = serde_json::from_value(json!({"name": "bare"})).unwrap();
    assert_eq!(tool.input_schema, ToolSchema::default());
    assert_eq!(tool.display_name(), "bare");

    check_all::<CallToolRequestParams>(vec![
        json!({"name": "ping"}),
        json!({"name": "get_weather", "arguments": {"city": "Oslo", "days": 3, "hourly": false},
               "task": {"ttl": 60000}, "_meta": {"progressToken": 12}}),
    ]);
}

#[test]
fn content_blocks() {
    let cases = [
        (json!({"type": "text", "text": "hello"}), "text"),
        (
            json!({"type": "text", "text": "", "annotations": {"audience": ["user"], "priority": 0.5},
                "_meta": {"k": "v"}}),
            "text",
        ),
        (json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}), "image"),
        (
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav",
                "annotations": {"lastModified": "2025-11-25T00:00:00Z"}}),
            "audio",
        ),
        (
            json!({"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs",
                "title": "Main", "description": "Entry point", "mimeType": "text/x-rust",
                "size": 1024, "annotations": {"priority": 1},
                "icons": [{"src": "https://x/rs.png"}], "_meta": {"a": 1}}),
            "resource_link",
        ),
        (
            json!({"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain",
                "text": "notes", "_meta": {"b": 2}}, "annotations": {"audience": ["assistant"]}}),
            "resource",
        ),
        (
            json!({"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"},
                "_meta": {"c": 3}}),
            "resource",
        ),
        (json!({"type": "hologram", "frames": 3, "data": {"x": [1, 2]}}), "hologram"),
        (json!({"type": "text", "text": "with a future member", "voice": "calm"}), "text"),
    ];
    for (input, kind) in cases {
        let block = check::<ContentBlock>(input);
        assert_eq!(block.type_name(), kind);
    }
    let unknown = check::<ContentBlock>(json!({"type": "video", "uri": "https://v"}));
    assert!(matches!(unknown, ContentBlock::Unknown(_)));
    let extra = check::<ContentBlock>(json!({"type": "text", "text": "t", "lang": "en"}));
    let ContentBlock::Text(text) = extra else { panic!("not text") };
    assert_eq!(text.extra["lang"], json!("en"));
    let ContentBlock::Resource(res) = check::<ContentBlock>(
        json!({"type": "resource", "resource": {"uri": "u", "blob": "AA=="}}),
    ) else {
        panic!("not a resource")
    };
    assert!(matches!(res.resource, ResourceContents::Blob(_)));
    assert_eq!(res.resource.uri(), "u");

    check_err::<ContentBlock>(json!({"type": "text"}), "text block");
    check_err::<ContentBlock>(json!({"text": "no type"}), "no \"type\"");
    check_err::<ContentBlock>(json!({"type": 3}), "must be a string");
    check_err::<ContentBlock>(json!("text"), "must be an object");
    check_err::<ResourceContents>(json!({"uri": "file:///x"}), "neither");
    assert_eq!(
        serde_json::to_value(ContentBlock::text("hi")).unwrap(),
        json!({"type": "text", "text": "hi"})
    );
}

#[test]
fn call_tool_results() {
    let result = check::<CallToolResult>(json!({
        "content": [
            {"type": "text", "text": "{\"temperature\": 22.5}"},
            {"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"},
            {"type": "audio", "data": "SUQz", "mimeType": "audio/mpeg"},
            {"type": "resource_link", "uri": "https://w.example/report", "name": "report"},
            {"type": "resource", "resource": {"uri": "mem://1", "text": "t"}},
            {"type": "sparkles", "count": 9}
        ],
        "structuredContent": {"temperature": 22.5},
        "isError": false,
        "_meta": {"io.example/cost": 0.01}
    }));
    assert_eq!(result.content.len(), 6);
    assert!(matches!(result.content[5], ContentBlock::Unknown(_)));
    assert_eq!(result.structured_content, Some(json!({"temperature": 22.5})));
    check_all::<CallToolResult>(vec![
        json!({"content": []}),
        json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
    ]);
    // A server that omits `content` is tolerated.
    let bare: CallToolResult =
        serde_json::from_value(json!({"structuredContent": {"ok": true}})).unwrap();
    assert!(bare.content.is_empty());
}

#[test]
fn resources() {
    check::<ListResourcesResult>(json!({
        "resources": [
            {"uri": "file:///project/README.md", "name": "README.md", "title": "Read me",
             "description": "Project readme", "mimeType": "text/markdown", "size": 2048,
             "annotations": {"audience": ["user"], "priority": 0.2},
             "icons": [{"src": "https://x/md.png"}], "_meta": {"x": 1}},
            {"uri": "https://example.com/data", "name": "data"}
        ],
        "nextCursor": "c2"
    }));
    check::<ListResourceTemplatesResult>(json!({
        "resourceTemplates": [
            {"uriTemplate": "file:///{path}", "name": "files", "title": "Files",
             "description": "Any file", "mimeType": "application/octet-stream",
             "annotations": {"priority": 0.5}, "icons": [{"src": "https://x/f.png"}], "_meta": {}}
        ]
    }));
    let read = check::<ReadResourceResult>(json!({
        "contents": [
            {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "alpha"},
            {"uri": "file:///b.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
            {"uri": "file:///c", "text": "", "_meta": {"k": 1}, "future": "kept"}
        ],
        "_meta": {"m": 1}
    }));
    assert!(matches!(read.contents[0], ResourceContents::Text(_)));
    assert!(matches!(read.contents[1], ResourceContents::Blob(_)));
    assert_eq!(read.contents[1].mime_type(), Some("image/png"));
    check_all::<ResourceRequestParams>(vec![
        json!({"uri": "file:///a.txt"}),
        json!({"uri": "file:///a.txt", "_meta": {"progressToken": "r"}}),
    ]);
    check::<ResourceUpdatedNotificationParams>(json!({"uri": "file:///a.txt", "_meta": {}}));
}

#[test]
fn prompts() {
    check::<ListPromptsResult>(json!({
        "prompts": [
            {"name": "code_review", "title": "Request Code Review",
             "description": "Asks the LLM to review code",
             "arguments": [{"name": "code", "title": "Code", "description": "The code", "required": true},
                           {"name": "style"}],
             "icons": [{"src": "https://x/p.png", "sizes": ["any"]}],
             "_meta": {"p": 1}}
        ],
        "nextCursor": "next"
    }));
    check_all::<GetPromptRequestParams>(vec![
        json!({"name": "code_review"}),
        json!({"name": "code_review", "arguments": {"code": "fn main() {}", "style": "terse"}}),
    ]);
    let got = check::<GetPromptResult>(json!({
        "description": "Code review prompt",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please review"}},
            {"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "resource",
                                         "resource": {"uri": "file:///x.rs", "text": "fn x() {}"}}},
            {"role": "user", "content": {"type": "resource_link", "uri": "file:///y.rs", "name": "y.rs"}}
        ]
    }));
    assert_eq!(got.messages[1].role, Role::Assistant);
}

#[test]
fn completion() {
    let params = check::<CompleteRequestParams>(json!({
        "ref": {"type": "ref/prompt", "name": "code_review", "title": "Review"},
        "argument": {"name": "language", "value": "py"},
        "context": {"arguments": {"framework": "flask"}}
    }));
    assert!(matches!(params.reference, Reference::Prompt(_)));
    check::<CompleteRequestParams>(json!({
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "path", "value": "src/"},
        "_meta": {"progressToken": 1}
    }));
    check_all::<CompleteResult>(vec![
        json!({"completion": {"values": ["python", "pytorch"], "total": 10, "hasMore": true}}),
        json!({"completion": {"values": []}}),
    ]);
}

#[test]
fn logging_and_roots() {
    check::<SetLevelRequestParams>(json!({"level": "notice"}));
    check_all::<LoggingMessageNotificationParams>(vec![
        json!({"level": "error", "logger": "database",
               "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}}),
        json!({"level": "info", "data": "plain message", "_meta": {"seq": 4}}),
        json!({"level": "verbose", "data": null}),
    ]);
    check::<ListRootsResult>(json!({
        "roots": [
            {"uri": "file:///home/user/projects/myproject", "name": "My Project"},
            {"uri": "file:///tmp", "_meta": {"writable": true}}
        ]
    }));
}

#[test]
fn sampling_with_tools() {
    let params = check::<CreateMessageRequestParams>(json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "What is the weather in Paris?"}},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather",
                 "input": {"city": "Paris"}, "_meta": {"cache": "x"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "call_1",
                 "content": [{"type": "text", "text": "18°C, cloudy"}],
                 "structuredContent": {"temperature": 18}, "isError": false},
                {"type": "image", "data": "AA==", "mimeType": "image/jpeg"},
                {"type": "audio", "data": "AA==", "mimeType": "audio/ogg"}
            ], "_meta": {"turn": 3}}
        ],
        "modelPreferences": {
            "hints": [{"name": "claude-3-sonnet"}, {"name": "sonnet", "vendor": "x"}],
            "costPriority": 0.3, "speedPriority": 0.8, "intelligencePriority": 0.5
        },
        "systemPrompt": "You are a helpful assistant.",
        "includeContext": "none",
        "temperature": 0.7,
        "maxTokens": 100,
        "stopSequences": ["\n\nHuman:"],
        "metadata": {"provider": {"seed": 1}},
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object",
                   "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
        "toolChoice": {"mode": "auto"},
        "task": {"ttl": 1000},
        "_meta": {"progressToken": "s"}
    }));
    assert_eq!(params.messages[0].content.blocks().len(), 1);
    assert!(matches!(params.messages[0].content, SamplingContent::Single(_)));
    assert!(matches!(
        params.messages[1].content.blocks()[0],
        SamplingMessageContentBlock::ToolUse(_)
    ));
    assert_eq!(params.messages[2].content.blocks()[0].type_name(), "tool_result");
    assert_eq!(params.tools.as_ref().unwrap().len(), 1);
    check::<CreateMessageRequestParams>(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 1,
        "temperature": 1
    }));

    let result = check::<CreateMessageResult>(json!({
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Oslo"}}],
        "model": "claude-3-sonnet-20240307",
        "stopReason": "toolUse",
        "_meta": {"usage": {"in": 10}}
    }));
    assert_eq!(result.stop_reason, Some(StopReason::ToolUse));
    check_all::<CreateMessageResult>(vec![
        json!({"role": "assistant", "content": {"type": "text", "text": "Hello"},
               "model": "m", "stopReason": "endTurn"}),
        json!({"role": "assistant", "content": {"type": "thinking", "thought": "hm"},
               "model": "m", "stopReason": "provider_specific"}),
    ]);
    check_all::<ToolChoice>(vec![json!({}), json!({"mode": "required"})]);
}

#[test]
fn elicitation_form_mode() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Your name",
                     "minLength": 1, "maxLength": 50, "default": "Ada"},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "hostname"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 2.5},
            "subscribe": {"type": "boolean", "title": "Subscribe", "default": false},
            "colour": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "size": {"type": "string", "title": "Size",
                     "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a"]},
            "toppings": {"type": "array",
                         "items": {"anyOf": [{"const": "ham", "title": "Ham"},
                                             {"const": "egg", "title": "Egg"}]}},
            "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
            "when": {"type": "object", "properties": {"day": {"type": "string"}}}
        },
        "required": ["name", "email"],
        "additionalProperties": false
    });
    let params = check::<ElicitRequestParams>(json!({
        "message": "Please provide your details",
        "requestedSchema": schema
    }));
    let ElicitRequestParams::Form(form) = &params else { panic!("not form mode") };
    assert_eq!(form.mode, None);
    let props = &form.requested_schema.properties;
    assert!(matches!(props["name"], PrimitiveSchemaDefinition::String(_)));
    let PrimitiveSchemaDefinition::Number(age) = &props["age"] else { panic!("age") };
    assert_eq!(age.number_type, NumberType::Integer);
    assert!(matches!(props["subscribe"], PrimitiveSchemaDefinition::Boolean(_)));
    assert!(matches!(
        props["colour"],
        PrimitiveSchemaDefinition::Enum(EnumSchema::UntitledSingleSelect(_))
    ));
    assert!(matches!(
        props["size"],
        PrimitiveSchemaDefinition::Enum(EnumSchema::TitledSingleSelect(_))
    ));
    assert!(matches!(
        props["tags"],
        PrimitiveSchemaDefinition::Enum(EnumSchema::UntitledMultiSelect(_))
    ));
    assert!(matches!(
        props["toppings"],
        PrimitiveSchemaDefinition::Enum(EnumSchema::TitledMultiSelect(_))
    ));
    assert!(matches!(
        props["legacy"],
        PrimitiveSchemaDefinition::Enum(EnumSchema::LegacyTitled(_))
    ));
    assert!(matches!(props["when"], PrimitiveSchemaDefinition::Unknown(_)));
    let PrimitiveSchemaDefinition::String(site) = &props["site"] else { panic!("site") };
    assert_eq!(site.format, Some(StringFormat::Other("hostname".into())));
    assert_eq!(form.requested_schema.extra["additionalProperties"], json!(false));
    assert_eq!(params.message(), "Please provide your details");

    let explicit = check::<ElicitRequestParams>(json!({
        "mode": "form",
        "message": "Confirm?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        "task": {"ttl": 5000},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}
    }));
    let ElicitRequestParams::Form(form) = explicit else { panic!("not form mode") };
    assert_eq!(form.mode, Some(ElicitFormMode::Form));

    check_all::<EnumSchema>(vec![
        json!({"type": "string", "enum": ["a"]}),
        json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
    ]);
    check_err::<EnumSchema>(json!({"type": "string"}), "not an enum schema");
    check_err::<ElicitRequestParams>(
        json!({"message": "m", "requestedSchema": {"type": "object",
               "properties": {"n": {"type": "string", "minLength": "one"}}}}),
        "invalid type",
    );
}

#[test]
fn elicitation_url_mode_and_results() {
    let params = check::<ElicitRequestParams>(json!({
        "mode": "url",
        "message": "Please authorize access to your files",
        "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
        "url": "https://mcp.example.com/connect?id=550e8400",
        "_meta": {"k": 1}
    }));
    let ElicitRequestParams::Url(url) = &params else { panic!("not URL mode") };
    assert_eq!(url.elicitation_id, "550e8400-e29b-41d4-a716-446655440000");
    check_err::<ElicitRequestParams>(
        json!({"mode": "oauth", "message": "m"}),
        "unknown elicitation mode",
    );
    check_err::<ElicitRequestParams>(json!({"mode": "url", "message": "m"}), "elicitationId");
    check_err::<ElicitRequestParams>(json!({"mode": 1, "message": "m"}), "must be a string");

    check::<URLElicitationRequiredErrorData>(json!({
        "elicitations": [{"mode": "url", "message": "Sign in", "elicitationId": "e1",
                          "url": "https://x.example/auth"}]
    }));
    let accepted = check::<ElicitResult>(json!({
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "ratio": 1.5, "subscribe": true, "tags": ["a", "b"]}
    }));
    let content = accepted.content.unwrap();
    assert_eq!(content["age"], ElicitValue::from(36));
    assert_eq!(content["tags"], ElicitValue::from(vec!["a".to_owned(), "b".to_owned()]));
    check_all::<ElicitResult>(vec![
        json!({"action": "decline"}),
        json!({"action": "cancel", "_meta": {"why": "closed"}}),
        json!({"action": "accept"}),
    ]);
    check::<ElicitationCompleteNotificationParams>(json!({"elicitationId": "e1"}));
}

#[test]
fn notifications() {
    let progress = check::<ProgressNotificationParams>(json!({
        "progressToken": "abc123", "progress": 50, "total": 100, "message": "Reticulating splines..."
    }));
    assert_eq!(progress.progress, 50.0);
    check_all::<ProgressNotificationParams>(vec![
        json!({"progressToken": 7, "progress": 0.25}),
        json!({"progressToken": 7, "progress": 1.5, "total": 2.5, "_meta": {"m": 1}}),
    ]);
    let cancelled = check::<CancelledNotificationParams>(
        json!({"requestId": "123", "reason": "User requested cancellation"}),
    );
    assert_eq!(cancelled.request_id, Some(RequestId::from("123")));
    check_all::<CancelledNotificationParams>(vec![json!({"requestId": 9}), json!({})]);
    assert_eq!(
        serde_json::to_value(CancelledNotificationParams::new(RequestId::Number(4), None)).unwrap(),
        json!({"requestId": 4})
    );
}

#[test]
fn tasks() {
    let task = json!({
        "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
        "status": "working",
        "statusMessage": "The operation is now in progress.",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttl": 60000,
        "pollInterval": 5000
    });
    let created = check::<CreateTaskResult>(json!({"task": task, "_meta": {"m": 1}}));
    assert_eq!(created.task.ttl, Some(60000));
    for status in ["working", "input_required", "completed", "failed", "cancelled", "paused"] {
        check::<Task>(json!({"taskId": "t", "status": status, "createdAt": "2025-11-25T10:30:00Z",
                             "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null}));
    }
    check::<GetTaskResult>(json!({"taskId": "t", "status": "completed",
        "createdAt": "a", "lastUpdatedAt": "b", "ttl": null,
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}}));
    check::<ListTasksResult>(json!({"tasks": [task], "nextCursor": "n"}));
    check_all::<TaskRequestParams>(vec![json!({"taskId": "t"})]);
    check_all::<TaskMetadata>(vec![json!({}), json!({"ttl": 30000})]);
    check::<RelatedTaskMetadata>(json!({"taskId": "t"}));
    let payload =
        check::<GetTaskPayloadResult>(json!({"content": [{"type": "text", "text": "done"}]}));
    let call: CallToolResult = serde_json::from_value(Value::Object(payload)).unwrap();
    assert_eq!(call.content, vec![ContentBlock::text("done")]);
    assert_eq!(RELATED_TASK_META_KEY, "io.modelcontextprotocol/related-task");
}

#[test]
fn requested_schema_defaults() {
    let schema: mcp_proto::types::RequestedSchema = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "ratio": {"type": "number", "default": 0.5},
            "ok": {"type": "boolean", "default": true},
            "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
            "plain": {"type": "string"}
        }
    }))
    .unwrap();
    assert_eq!(
        serde_json::Value::Object(schema.defaults()),
        serde_json::json!({"name": "Ada", "age": 36, "ratio": 0.5, "ok": true, "color": "green", "tags": ["a"]})
    );
}

#[test]
fn tagged_blocks_decode_the_same_whatever_the_member_order() {
    // `type` first takes the streaming path, `type` later the buffered one;
    // both must give the same block, unknown members kept.
    let first = r#"{"type":"text","text":"hi","x-a":{"b":[1]},"annotations":{"priority":0.5}}"#;
    let later = r#"{"text":"hi","x-a":{"b":[1]},"type":"text","annotations":{"priority":0.5}}"#;
    let a: ContentBlock = serde_json::from_str(first).unwrap();
    let b: ContentBlock = serde_json::from_str(later).unwrap();
    assert_eq!(a, b);
    let ContentBlock::Text(t) = &a else { panic!("not text: {a:?}") };
    assert_eq!(t.text, "hi");
    assert_eq!(t.extra.get("x-a"), Some(&json!({"b": [1]})));
    assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::from_str::<Value>(first).unwrap());

    for (input, needle) in [
        (r#"{"type":"text","annotations":null}"#, "text block: missing field `text`"),
        (r#"{"annotations":null,"type":"text"}"#, "text block: missing field `text`"),
        (r#"{"type":7,"text":"hi"}"#, "must be a string"),
        (r#"{"type":"text","text":5}"#, "text block: invalid type"),
    ] {
        let e = serde_json::from_str::<ContentBlock>(input).unwrap_err().to_string();
        assert!(e.contains(needle), "{input}: error {e:?} lacks {needle:?}");
    }

    // A `type` that is no string names what it is instead, whichever
    // member comes first; an escaped one decodes like any other string.
    for (tag, kind) in [
        ("null", "null"),
        ("true", "a boolean"),
        ("-1.5", "a number"),
        ("[\"text\"]", "an array"),
        ("{\"a\":[1]}", "an object"),
    ] {
        for input in
            [format!(r#"{{"type":{tag},"text":"hi"}}"#), format!(r#"{{"text":"hi","type":{tag}}}"#)]
        {
            let e = serde_json::from_str::<ContentBlock>(&input).unwrap_err().to_string();
            assert!(e.contains(&format!("must be a string, found {kind}")), "{input}: {e:?}");
        }
    }
    let escaped: ContentBlock =
        serde_json::from_str(r#"{"text":"hi","type":"te\u0078t"}"#).unwrap();
    assert_eq!(escaped, ContentBlock::text("hi"));

    // An unknown type, first or not, is kept whole.
    for input in [r#"{"type":"hologram","z":1}"#, r#"{"z":1,"type":"hologram"}"#] {
        let block: ContentBlock = serde_json::from_str(input).unwrap();
        assert_eq!(block, ContentBlock::Unknown(json!({"type": "hologram", "z": 1})));
    }

    // Sampling content shares the macro: its other variants decode too.
    let tool_use = r#"{"type":"tool_use","id":"c1","name":"get","input":{"q":1}}"#;
    let content: SamplingContent = serde_json::from_str(tool_use).unwrap();
    assert_eq!(
        serde_json::to_value(&content).unwrap(),
        serde_json::from_str::<Value>(tool_use).unwrap()
    );
}

#[test]
fn call_tool_results_decode_members_straight_into_fields() {
    let text = r#"{"content":[{"type":"text","text":"a"}],"isError":true,"x-n":1,"isError":false,"structuredContent":null}"#;
    let r: CallToolResult = serde_json::from_str(text).unwrap();
    // A repeated member counts as its last value, as in a parsed object.
    assert_eq!(r.is_error, Some(false));
    assert_eq!(r.structured_content, None);
    assert_eq!(r.extra.get("x-n"), Some(&json!(1)));
    assert_eq!(r.content, vec![ContentBlock::text("a")]);
    let empty: CallToolResult = serde_json::from_str("{}").unwrap();
    assert!(empty.content.is_empty());
    let e = serde_json::from_str::<CallToolResult>(r#"{"content":{}}"#).unwrap_err();
    assert!(e.to_string().contains("invalid type"), "{e}");
}

#[test]
fn opening_results_decode_members_straight_into_fields() {
    // The answers a client decodes at every start (`initialize`,
    // `server/discover`), decoded member by member: unknown members kept
    // at every level, `null` for an absent optional member, a repeated
    // member counting as its last value, required members required.
    let text = r#"{"supportedVersions":["2026-07-28"],"resultType":"complete",
        "capabilities":{"tools":{"listChanged":true,"x-t":1},"prompts":null,
            "resources":{"subscribe":true,"subscribe":false},"x-cap":{"a":[1]},
            "tasks":{"requests":{"tools":{"call":{},"x-call":2}}}},
        "instructions":null,
        "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1","x-i":true}}}"#;
    let d: DiscoverResult = serde_json::from_str(text).unwrap();
    assert_eq!(d.supported_versions, ["2026-07-28"]);
    assert_eq!(d.extra["resultType"], json!("complete"));
    let caps = &d.capabilities;
    assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
    assert_eq!(caps.tools.as_ref().unwrap().extra["x-t"], json!(1));
    assert!(caps.prompts.is_none());
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(false));
    assert_eq!(caps.extra["x-cap"], json!({"a": [1]}));
    let tools = caps.tasks.as_ref().unwrap().requests.as_ref().unwrap().tools.as_ref().unwrap();
    assert!(tools.call.is_some());
    assert_eq!(tools.extra["x-call"], json!(2));
    assert!(d.instructions.is_none());
    let info = d.server_info().unwrap();
    assert_eq!((info.name.as_str(), info.version.as_str()), ("s", "1"));
    assert_eq!(info.extra["x-i"], json!(true));
    // Decoding from a value gives the same.
    let from_value: DiscoverResult =
        serde_json::from_value(serde_json::from_str::<Value>(text).unwrap()).unwrap();
    assert_eq!(from_value, d);
    // No capabilities: the default.
    let bare: DiscoverResult = serde_json::from_str(r#"{"supportedVersions":[]}"#).unwrap();
    assert_eq!(bare.capabilities, ServerCapabilities::default());

    check_err::<DiscoverResult>(json!({"capabilities": {}}), "supportedVersions");
    check_err::<InitializeResult>(
        json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        "serverInfo",
    );
    check_err::<InitializeResult>(
        json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}}),
        "capabilities",
    );
    check_err::<Implementation>(json!({"name": "s"}), "version");
    check_err::<ServerCapabilities>(json!({"tools": {"listChanged": "yes"}}), "invalid type");
    check_err::<InitializeResult>(json!([]), "invalid type");
}
