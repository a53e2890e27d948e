"""A tiny stdio MCP server: one tool, read_note, that returns a fixed note."""

import json
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "result": {
                    "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "notes", "version": "1.0"},
                },
            }
        )
    elif method == "tools/list":
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "result": {
                    "tools": [
                        {
                            "name": "read_note",
                            "description": "Read the team note.",
                            "inputSchema": {
                                "type": "object",
                                "properties": {"topic": {"type": "string"}},
                                "required": ["topic"],
                            },
                        }
                    ]
                },
            }
        )
    elif method == "tools/call":
        topic = msg["params"].get("arguments", {}).get("topic", "")
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "result": {
                    "content": [{"type": "text", "text": f"Note on {topic}: results stay in CSV."}],
                    "isError": False,
                },
            }
        )
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
