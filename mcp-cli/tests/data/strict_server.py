"""A strict handshake-era MCP server over stdio for mcpc's tests.

It speaks 2025-11-25 only, and, as some servers of that era do, it exits
on the first request whose method it does not know (so the stateless
era's `server/discover` probe ends it). Its one tool, `echo`, answers
with its `message` argument.
"""

import json
import sys

KNOWN = {"initialize", "ping", "tools/list", "tools/call"}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    if method not in KNOWN:
        sys.stderr.write("strict: unknown method " + method + "\n")
        sys.stderr.flush()
        sys.exit(1)
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "strict", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{
            "name": "echo",
            "description": "Echoes its message",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        }]}
    elif method == "tools/call":
        arguments = (message.get("params") or {}).get("arguments") or {}
        result = {"content": [{"type": "text", "text": str(arguments.get("message", ""))}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
