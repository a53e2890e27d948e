"""Write ``compactctl/replay/claude_code_catalog.json`` from an installed Claude Code: its baked-in model catalog.

Claude Code ships a hand-maintained catalog of the models it can run (``pricing_tiers`` and ``models``:
each model's list prices, context window, whether the 1M window is native). Its own ``/cost`` prices
calls from it, so where genai-prices has not yet listed a model a session names (``claude-mythos-5``
in 2.1.337), the catalog of the client that wrote the session is the price the user was shown.

    python bench/claude_code_catalog.py [path/to/claude]   # default: .ci/cache/npm's claude (2.1.337 today)

The catalog is a JavaScript object literal inside the bundled binary; it is cut out by its marker
comment and brace matching, and evaluated by ``node`` (an object literal, not code that runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CLIENT = ROOT / ".ci/cache/npm/node_modules/.bin/claude"
OUT = ROOT / "compactctl/replay/claude_code_catalog.json"
MARKER = b'{"//":"Hand-maintained baked-in model catalog'
PRICE_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read", "web_search")


def literal(binary: bytes) -> str:
    """The catalog's object literal: from its marker to the brace that closes it (strings skipped)."""
    start = binary.index(MARKER)
    depth, quote, escaped = 0, 0, False
    for at in range(start, len(binary)):
        byte = binary[at]
        if quote:
            escaped, quote = (False, quote) if escaped else (byte == 0x5C, 0 if byte == quote else quote)
            continue
        if byte in b"\"'`":
            quote = byte
        elif byte == 0x7B:
            depth += 1
        elif byte == 0x7D:
            depth -= 1
            if depth == 0:
                return binary[start : at + 1].decode()
    raise ValueError("the catalog's closing brace was not found")


def evaluated(source: str) -> dict:
    script = "process.stdout.write(JSON.stringify((" + source + ")))"
    return json.loads(subprocess.run(["node", "-e", script], check=True, capture_output=True, text=True).stdout)


def catalog(client: Path) -> dict:
    """The catalog of the Claude Code whose ``claude`` (the npm bin link or the binary) is ``client``."""
    binary = client.resolve()  # .bin/claude -> @anthropic-ai/claude-code/bin/claude.exe
    version = json.loads((binary.parent.parent / "package.json").read_text())["version"]
    raw = evaluated(literal(binary.read_bytes()))
    models = {}
    for entry in raw["models"]:
        tier = entry["pricing"]
        prices = raw["pricing_tiers"][tier] if isinstance(tier, str) else tier
        context = entry.get("context", {})
        models[entry["id"]] = {
            "names": sorted({n.lower() for n in entry["provider_ids"].values() if isinstance(n, str)} - {entry["id"]}),
            "prices": {k: prices[k] for k in PRICE_FIELDS if k in prices},
            "long_prompt": prices.get("long_prompt"),
            "window": context.get("window", 200_000),
            "native_1m": bool(context.get("native_1m")),
        }
    return {"client": "Claude Code", "version": version, "models": models}


def main() -> None:
    client = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CLIENT
    written = catalog(client)
    OUT.write_text(json.dumps(written, indent=1, sort_keys=True) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(written['models'])} models from Claude Code {written['version']}")


if __name__ == "__main__":
    main()
