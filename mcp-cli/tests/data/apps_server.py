"""A handshake-era MCP server over stdio for `mcpc serve`'s tests: one
tool with an MCP Apps view (`_meta.ui`), icons and annotations, the view
as a `ui://` resource, and a tool that answers with the `_meta` its call
carried. Unknown methods get -32601.
"""

import json
import sys

TOOL = {
    "name": "show",
    "title": "Show",
    "description": "Shows a view",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True, "title": "Show it"},
    "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png"}],
    "_meta": {"ui": {"resourceUri": "ui://apps/view", "visibility": ["model", "app"]},
              "vendor/x": 1},
}
META_TOOL = {
    "name": "meta",
    "description": "Answers with the _meta of its call",
    "inputSchema": {"type": "object", "properties": {}},
}
VIEW = {
    "uri": "ui://apps/view",
    "name": "view",
    "mimeType": "text/html;profile=mcp-app",
    "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    params = message.get("params") or {}
    error = None
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "apps", "version": "1.0.0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [TOOL, META_TOOL]}
    elif method == "tools/call" and params.get("name") == "meta":
        result = {"content": [{"type": "text", "text": json.dumps(params.get("_meta") or {})}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "shown"}],
                  "_meta": {"ui": {"resourceUri": "ui://apps/view"}}}
    elif method == "resources/list":
        result = {"resources": [VIEW]}
    elif method == "resources/read" and params.get("uri") == VIEW["uri"]:
        content = dict(VIEW)
        content["text"] = "<html><body>view</body></html>"
        del content["name"]
        result = {"contents": [content]}
    else:
        error = {"code": -32601, "message": "Method not found: " + method}
    if error:
        send({"jsonrpc": "2.0", "id": message["id"], "error": error})
    else:
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
