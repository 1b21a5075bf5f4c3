//! The tools' definitions: what `tools/list` shows, and the headers their
//! arguments ask for.

use mcp_server_io::logging::LOG_LEVELS;
use serde_json::{Value, json};

use super::{MAX_BYTES, MAX_NOISY_LINES, MAX_SLOW_MS, MAX_STEPS};

/// The `x-mcp-header` annotations of the tools, by tool name: (property,
/// header name) pairs, read once from the tool definitions.
pub(crate) fn param_headers(name: &str) -> &'static [(String, String)] {
    static TABLE: std::sync::OnceLock<std::collections::HashMap<String, Vec<(String, String)>>> =
        std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = std::collections::HashMap::new();
        for tool in definitions(true, true) {
            let Some(name) = tool["name"].as_str() else { continue };
            let Some(properties) = tool["inputSchema"]["properties"].as_object() else { continue };
            let pairs: Vec<(String, String)> = properties
                .iter()
                .filter_map(|(property, schema)| {
                    let header = schema.get("x-mcp-header")?.as_str()?;
                    Some((property.clone(), header.to_owned()))
                })
                .collect();
            if !pairs.is_empty() {
                table.insert(name.to_owned(), pairs);
            }
        }
        table
    });
    table.get(name).map_or(&[], Vec::as_slice)
}

/// Every tool, in list order; `extra` last when it is switched on. With
/// `modern`, the stateless-era tools come before `extra`.
pub(crate) fn definitions(extra: bool, modern: bool) -> Vec<Value> {
    let mut tools = vec![
        task_optional(tool(
            "echo",
            "Echo",
            "Returns the message as text. The benchmark's hot path: no structured output.",
            json!({
                "type": "object",
                "properties": { "message": { "type": "string", "description": "Text to return" } },
                "required": ["message"],
            }),
        )),
        task_optional({
            let mut add = tool(
                "add",
                "Add",
                "Adds two numbers; the sum comes as text and as structured content.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": { "type": "number", "description": "First addend" },
                        "b": { "type": "number", "description": "Second addend" },
                    },
                    "required": ["a", "b"],
                }),
            );
            add["outputSchema"] = json!({
                "type": "object",
                "properties": { "sum": { "type": "number" } },
                "required": ["sum"],
            });
            add
        }),
        task_optional(tool(
            "slow",
            "Slow",
            "Sleeps `ms` milliseconds in total, sending `steps` progress notifications when \
             the request carries a progress token, then returns \"done\".",
            json!({
                "type": "object",
                "properties": {
                    "ms": { "type": "integer", "minimum": 0, "maximum": MAX_SLOW_MS,
                            "description": "Total sleep in milliseconds" },
                    "steps": { "type": "integer", "minimum": 0, "maximum": MAX_STEPS,
                               "description": "Progress notifications to send (default 0)" },
                },
                "required": ["ms"],
            }),
        )),
        task_optional(tool(
            "hang",
            "Hang",
            "Never answers, until cancelled: for client timeout tests.",
            no_arguments(),
        )),
        task_optional(tool(
            "fail",
            "Fail",
            "Returns a tool execution error (isError: true) with the message.",
            json!({
                "type": "object",
                "properties": { "message": { "type": "string",
                                             "description": "Error text (default: \"failed on purpose\")" } },
            }),
        )),
        tool(
            "crash",
            "Crash",
            "Writes the stderr text, then ends the server process with the exit code, \
             without answering.",
            json!({
                "type": "object",
                "properties": {
                    "code": { "type": "integer", "minimum": 0, "maximum": 255,
                              "description": "Exit code (default 3)" },
                    "stderr": { "type": "string",
                                "description": "Text for stderr (default \"testkit: crashing on purpose\")" },
                },
            }),
        ),
        tool(
            "big",
            "Big",
            "Returns one text block of exactly `bytes` ASCII bytes.",
            json!({
                "type": "object",
                "properties": { "bytes": { "type": "integer", "minimum": 0, "maximum": MAX_BYTES,
                                           "description": "Length of the text" } },
                "required": ["bytes"],
            }),
        ),
        tool(
            "noisy",
            "Noisy",
            "Writes garbage to stdout (a non-JSON line, JSON that is not JSON-RPC, a response \
             for an unknown id, an over-long line when `long_line_bytes` is given) and lines \
             to stderr, then answers normally. Over other transports only the stderr part.",
            json!({
                "type": "object",
                "properties": {
                    "lines": { "type": "integer", "minimum": 0, "maximum": MAX_NOISY_LINES,
                               "description": "Lines written to stderr (default 3)" },
                    "long_line_bytes": { "type": "integer", "minimum": 1, "maximum": MAX_BYTES,
                                         "description": "Also write one line of this length" },
                    "garbage_rounds": { "type": "integer", "minimum": 0, "maximum": MAX_NOISY_LINES,
                                        "description": "How many times the three garbage lines are written (default 1)" },
                },
            }),
        ),
        tool(
            "ask",
            "Ask the client",
            "Sends the client a request mid-call (ping, roots/list, elicitation/create or \
             sampling/createMessage), waits for its answer and returns it as JSON text: \
             {\"result\": ...} or {\"error\": ...}.",
            json!({
                "type": "object",
                "properties": { "what": { "type": "string",
                                          "enum": ["ping", "roots", "elicit", "sample"] } },
                "required": ["what"],
            }),
        ),
        tool(
            "change",
            "Change a list",
            "With `list` \"tools\" (the default): switches the `extra` tool in or out of the \
             list and sends notifications/tools/list_changed. With \"resources\" or \
             \"prompts\": sends notifications/resources/list_changed or \
             notifications/prompts/list_changed.",
            json!({
                "type": "object",
                "properties": { "list": { "type": "string",
                                          "enum": ["tools", "resources", "prompts"],
                                          "description": "Which list (default \"tools\")" } },
            }),
        ),
        tool(
            "cancelled_log",
            "Cancellation log",
            "Returns, as a JSON array, the request ids of every notifications/cancelled the \
             server received.",
            no_arguments(),
        ),
        tool(
            "spawn_child",
            "Spawn a child",
            "Starts `sleep 300` in the server's process group and returns its pid: a client's \
             close should leave no such orphan.",
            json!({
                "type": "object",
                "properties": { "inherit_stdio": { "type": "boolean",
                                                   "description": "Share the server's stdio (default false)" } },
            }),
        ),
        tool(
            "env",
            "Environment variable",
            "Returns the value of the environment variable in the server process as JSON text: \
             a string, or null when unset.",
            json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            }),
        ),
        tool(
            "log",
            "Log",
            "Sends notifications/message at the level (if logging/setLevel allows it), then answers.",
            json!({
                "type": "object",
                "properties": {
                    "level": { "type": "string", "enum": LOG_LEVELS },
                    "message": { "type": "string" },
                },
                "required": ["level", "message"],
            }),
        ),
        tool(
            "annotated",
            "Annotated",
            "Returns its arguments as JSON text. Its string, integer and boolean arguments carry \
             `x-mcp-header`, so a Streamable HTTP client also sends them as Mcp-Param-Region, \
             Mcp-Param-Priority and Mcp-Param-Dry-Run headers; `note` has no header.",
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "priority": { "type": "integer", "x-mcp-header": "Priority" },
                    "dry_run": { "type": "boolean", "x-mcp-header": "Dry-Run" },
                    "note": { "type": "string" },
                },
            }),
        ),
        tool(
            "touch",
            "Touch a resource",
            "Sends notifications/resources/updated for the resource if the client subscribed \
             to it (resources/subscribe), as a message of no request; returns \"touched\", \
             else \"not subscribed\".",
            json!({
                "type": "object",
                "properties": { "uri": { "type": "string", "description": "The resource's URI" } },
                "required": ["uri"],
            }),
        ),
    ];
    if modern {
        tools.extend(modern_definitions());
    }
    if extra {
        tools.push(tool(
            "extra",
            "Extra",
            "Listed only after `change`; returns \"extra\".",
            no_arguments(),
        ));
    }
    tools
}

/// The tools listed only to stateless-era requests.
fn modern_definitions() -> Vec<Value> {
    vec![
        tool(
            "ask_twice",
            "Ask twice",
            "Needs two rounds of client input (multi round-trip request): first \
             elicitation/create (key `name`), then sampling/createMessage (key `greeting`); \
             returns \"<name>: <greeting>\" with structuredContent {name, greeting}. Needs the \
             elicitation and sampling client capabilities.",
            no_arguments(),
        ),
        tool(
            "retry_once",
            "Retry once",
            "Answers input_required with only a requestState the first time; the retry echoing \
             it completes with \"retried with <requestState>\".",
            no_arguments(),
        ),
        tool(
            "received_log",
            "Received log",
            "Returns, as a JSON array, what each stateless-era request carried: id, method, \
             protocolVersion, clientCapabilities, clientInfo, logLevel, name, requestState, \
             inputResponses.",
            no_arguments(),
        ),
        tool(
            "close_subscriptions",
            "Close subscriptions",
            "Ends every open subscriptions/listen stream gracefully (its result, with the \
             subscriptionId); returns how many there were.",
            no_arguments(),
        ),
    ]
}

fn tool(name: &str, title: &str, description: &str, input_schema: Value) -> Value {
    json!({ "name": name, "title": title, "description": description, "inputSchema": input_schema })
}

/// A tool that may be called as a task (`execution.taskSupport`).
fn task_optional(mut tool: Value) -> Value {
    tool["execution"] = json!({ "taskSupport": "optional" });
    tool
}

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {} })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_documented() {
        for extra in [false, true] {
            for t in definitions(extra, true) {
                for field in ["name", "title", "description"] {
                    assert!(t[field].as_str().is_some_and(|s| !s.is_empty()), "{t}: {field}");
                }
                assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            }
        }
        assert_eq!(definitions(true, false).len(), definitions(false, false).len() + 1);
        assert_eq!(definitions(false, true).len(), definitions(false, false).len() + 4);
    }
}
