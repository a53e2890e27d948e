"""A tiny stdio MCP server: one tool, read_note, that returns a fixed note (a large one, or an image, by topic)."""

import base64
import json
import struct
import sys
import zlib


def _png(width=32, height=24):
    """A small real PNG (a grey gradient)."""
    rows = b"".join(b"\x00" + bytes((x * 8) % 256 for x in range(width)) for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PNG = _png()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def note(topic):
    """The note's content: ``everything`` is a large text (over Claude Code's MCP output limit), ``picture`` an
    image with a caption, any other topic one line."""
    if topic == "everything":
        return [{"type": "text", "text": "".join(f"Rule {n}: results stay in CSV.\n" for n in range(6000))}]
    if topic == "picture":
        image = base64.b64encode(PNG).decode()
        return [{"type": "text", "text": "The diagram:"}, {"type": "image", "data": image, "mimeType": "image/png"}]
    return [{"type": "text", "text": f"Note on {topic}: results stay in CSV."}]


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
                    "content": note(topic),
                    "isError": False,
                },
            }
        )
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
