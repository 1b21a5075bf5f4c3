//! Search mode (`mcpc serve --tools search`): the host is given two tools
//! instead of every tool, `search_tools` (a query in words: the served
//! tools that fit it best, ranked by the registry's [`ToolIndex`], with
//! their names, descriptions and input schemas) and `call_tool` (a name
//! `search_tools` gave and its arguments, called as a direct `tools/call`
//! of that name would be). The two never change, so no tool list change
//! is sent to the host.

use mcp_host_registry::ToolIndex;
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::types::Tool;
use serde_json::{Value, json};

use crate::cli::ToolsMode;

/// The search tool's name.
pub(crate) const SEARCH_TOOL: &str = "search_tools";
/// The call tool's name.
pub(crate) const CALL_TOOL: &str = "call_tool";
/// How many tools a search gives unless asked for another count.
const DEFAULT_LIMIT: u64 = 5;
/// The most tools one search gives.
const MAX_LIMIT: u64 = 20;
/// The longest query read (characters beyond it are ignored).
const MAX_QUERY_CHARS: usize = 1000;
/// `--tools auto` is search mode above this many tools.
pub(crate) const AUTO_SEARCH_ABOVE: usize = 40;

/// Whether `mode` gives the host the two search-mode tools, the servers
/// offering `tools` tools when the bridge starts.
pub(crate) fn searching(mode: ToolsMode, tools: usize) -> bool {
    match mode {
        ToolsMode::All => false,
        ToolsMode::Search => true,
        ToolsMode::Auto => tools > AUTO_SEARCH_ABOVE,
    }
}

/// The two tools the host lists in search mode.
pub(crate) fn tools() -> Value {
    json!({ "tools": [
        {
            "name": SEARCH_TOOL,
            "title": "Search tools",
            "description": "Finds the tools that fit a task, described in words. Gives the best \
                matching tools with their names, descriptions and input schemas; call one with \
                call_tool.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What the tool should do, in words",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "description": format!("How many tools to give at most (default {DEFAULT_LIMIT})"),
                    },
                },
                "required": ["query"],
            },
            "annotations": { "readOnlyHint": true, "openWorldHint": false },
        },
        {
            "name": CALL_TOOL,
            "title": "Call a tool",
            "description": "Calls a tool that search_tools found, by its name, with arguments \
                that follow its input schema.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "description": "The tool's name, as search_tools gave it",
                    },
                    "arguments": {
                        "type": "object",
                        "description": "The tool's arguments",
                    },
                },
                "required": ["name"],
            },
        },
    ]})
}

/// What a `search_tools` call asks: its query and how many tools at most.
pub(crate) fn query(arguments: Option<&Value>) -> Result<(String, usize), ErrorObject> {
    let invalid = |m: &str| ErrorObject::new(error_code::INVALID_PARAMS, m);
    let query = arguments
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("search_tools needs a query (a string)"))?;
    let limit = match arguments.and_then(|a| a.get("limit")) {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(n) => n
            .as_u64()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| invalid(&format!("search_tools limit must be 1 to {MAX_LIMIT}")))?,
    };
    let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
    Ok((query, usize::try_from(limit).unwrap_or(usize::MAX)))
}

/// A search's result: the `limit` tools of `listed` (the host's name of
/// each, and the tool) that fit `query` best, best first, as a tool result
/// (the list as JSON text, and as `structuredContent`).
pub(crate) fn found(listed: &[(String, Tool)], query: &str, limit: usize) -> Value {
    let index = ToolIndex::from_tools(listed.iter().map(|(name, tool)| (name.as_str(), tool)));
    // Indexed under the host's name as the "server": each is unique.
    let hits = index.search(query, limit);
    let tools: Vec<Value> = hits
        .iter()
        .filter_map(|hit| listed.iter().find(|(name, _)| *name == hit.server))
        .map(|(name, tool)| {
            let mut entry = json!({
                "name": name,
                "inputSchema": tool.input_schema,
            });
            if let Some(title) = &tool.title {
                entry["title"] = json!(title);
            }
            if let Some(description) = &tool.description {
                entry["description"] = json!(description);
            }
            entry
        })
        .collect();
    let structured = json!({ "tools": tools });
    let text = if tools.is_empty() {
        format!("No tool fits {query:?}; try other words.")
    } else {
        serde_json::to_string_pretty(&structured).unwrap_or_default()
    };
    json!({
        "content": [{ "type": "text", "text": text }],
        "structuredContent": structured,
    })
}

/// The parameters of the direct `tools/call` a `call_tool` call stands
/// for: its `name` and `arguments`, and the call's own `_meta` (progress
/// token included).
pub(crate) fn direct_call(params: &Value) -> Result<Value, ErrorObject> {
    let invalid = |m: &str| ErrorObject::new(error_code::INVALID_PARAMS, m);
    let arguments = params.get("arguments");
    let name = arguments
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("call_tool needs the name of a tool (a string)"))?;
    if name == SEARCH_TOOL || name == CALL_TOOL {
        return Err(invalid(&format!("call_tool calls the servers' tools, not {name}")));
    }
    let mut direct = json!({ "name": name });
    match arguments.and_then(|a| a.get("arguments")) {
        None | Some(Value::Null) => {}
        Some(a @ Value::Object(_)) => direct["arguments"] = a.clone(),
        Some(_) => return Err(invalid("call_tool arguments must be an object")),
    }
    if let Some(meta) = params.get("_meta") {
        direct["_meta"] = meta.clone();
    }
    Ok(direct)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        let mut t: Tool = serde_json::from_value(json!({"name": name})).unwrap();
        t.description = Some(description.into());
        t
    }

    #[test]
    fn a_search_gives_the_host_names_best_first_and_bounded() {
        let listed = vec![
            ("a__read_file".to_owned(), tool("read_file", "Read a file's text")),
            ("b__move_file".to_owned(), tool("move_file", "Move or rename a file")),
            ("b__get_sum".to_owned(), tool("get_sum", "Add two numbers")),
        ];
        let result = found(&listed, "rename a file", 2);
        let tools = result["structuredContent"]["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["b__move_file", "a__read_file"]);
        assert_eq!(tools[0]["description"], "Move or rename a file");
        assert_eq!(tools[0]["inputSchema"]["type"], "object");
        let none = found(&listed, "weather", 5);
        assert_eq!(none["structuredContent"]["tools"], json!([]));
        assert!(none["content"][0]["text"].as_str().unwrap().starts_with("No tool fits"));
    }

    #[test]
    fn queries_and_calls_are_checked() {
        assert_eq!(query(Some(&json!({"query": "x"}))).unwrap(), ("x".into(), 5));
        assert_eq!(query(Some(&json!({"query": "x", "limit": 20}))).unwrap().1, 20);
        for bad in [json!({}), json!({"query": 1}), json!({"query": "x", "limit": 21})] {
            assert!(query(Some(&bad)).is_err(), "{bad}");
        }
        let call = json!({"name": "call_tool", "arguments": {"name": "a__echo",
            "arguments": {"message": "hi"}}, "_meta": {"progressToken": 3}});
        assert_eq!(
            direct_call(&call).unwrap(),
            json!({"name": "a__echo", "arguments": {"message": "hi"}, "_meta": {"progressToken": 3}})
        );
        for bad in [
            json!({"arguments": {}}),
            json!({"arguments": {"name": "search_tools"}}),
            json!({"arguments": {"name": "a__echo", "arguments": [1]}}),
        ] {
            assert!(direct_call(&bad).is_err(), "{bad}");
        }
        assert!(!searching(ToolsMode::Auto, AUTO_SEARCH_ABOVE));
        assert!(searching(ToolsMode::Auto, AUTO_SEARCH_ABOVE + 1));
        assert!(searching(ToolsMode::Search, 0) && !searching(ToolsMode::All, 1000));
    }
}
