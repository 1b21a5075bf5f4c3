"""An MCP Apps server over stdio (handshake era) for the registry's tests.

Tools: `show` (a view, for the model and the view), `refresh` (only the
view may call it), `plain` (no view), `caps` (JSON text of the
capabilities the client declared in `initialize`). Every `tools/call` it
receives is answered with the tool's name, and `calls` answers with the
names called so far, so a test can tell that a refused call never came.
"""

import json
import sys

VIEW = "ui://apps/view.html"
TOOLS = [
    {"name": "show", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}}},
    {"name": "refresh", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}},
    {"name": "plain", "inputSchema": {"type": "object"}},
    {"name": "caps", "inputSchema": {"type": "object"}},
    {"name": "calls", "inputSchema": {"type": "object"}},
]

capabilities = {}
called = []


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value):
    return {"content": [{"type": "text", "text": value}]}


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        capabilities = params.get("capabilities") or {}
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "apps", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = params.get("name")
        called.append(name)
        if name == "caps":
            result = text(json.dumps(capabilities, sort_keys=True))
        elif name == "calls":
            result = text(json.dumps(called))
        else:
            result = text(name)
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": message["id"],
              "error": {"code": -32601, "message": "method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
