"""Secrets redaction measured on one corpus: compactctl's table, detect-secrets, gitleaks' rules.

    python bench/secrets_bench.py [--gitleaks-config PATH] [--transcripts DIR]

Three corpora, reported apart: the table's own (``tests/secrets_corpus.py``, written beside
the redactor) and a held-out one (``tests/heldout_secrets.py``, written from the files people
keep secrets in: framework settings, CI YAML, cloud CLI configs, kubeconfig, docker config,
``.netrc``, connection strings, JWTs in headers). Each kind is placed as it is, cut by a line
break, base64-encoded under a neutral key and URL-encoded (in user text, as a tool output and
inside tool-call arguments); a kind counts as redacted in a placement when no 10-character
piece of it got through in any of the three. Per detector and placement: kinds redacted.
A third, blind corpus (``tests/blind_secrets.py``: shapes written before the redactor
was run on them) is reported the same way. Then the held-out and blind kinds one by one
for the table, then what each detector changes in the real
transcripts (``/work/shared/transcripts`` by default), where a hit is most likely a false
positive, and the time each takes there (and its ratio to the table's, same run).

- ``table``: ``compactctl.summarizers.redact`` (what compactctl runs).
- ``detect-secrets``: Yelp's detect-secrets 1.5 with its default plugins, line by line, each
  reported secret replaced (``pip install detect-secrets``; skipped when missing).
- ``gitleaks``: gitleaks' default rule table (its ``config/gitleaks.toml``, given by path,
  not shipped here) run by a small port of its matcher: keywords prefilter, regex, secret
  group, Shannon entropy threshold, the global and per-rule allowlists and stopwords. Go's
  RE2 syntax is turned into Python's where they differ (an inline ``(?i)`` moves to the front).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from compactctl.formats import load  # noqa: E402
from compactctl.summarizers.redact import redact  # noqa: E402
from compactctl.transcript import message_text  # noqa: E402
from tests.blind_secrets import PLACED as BLIND_PLACED  # noqa: E402
from tests.heldout_secrets import PLACED, PLACEMENTS, Document, Placed, exposed  # noqa: E402
from tests.secrets_corpus import CORPUS  # noqa: E402

Redactor = Callable[[str], str]


def table(text: str) -> str:
    return redact(text)[0]


def detect_secrets_redactor() -> Redactor | None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def run(text: str) -> str:
        with default_settings():
            found = {s.secret_value for line in text.splitlines() for s in scan_line(line) if s.secret_value}
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, "[REDACTED]")
        return text

    return run


def _go_to_python(pattern: str) -> str:
    pattern = pattern.replace(r"\z", r"\Z")
    if "(?i)" in pattern[1:]:
        pattern = "(?i)" + pattern.replace("(?i)", "")
    return pattern


def _entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = {c: text.count(c) for c in set(text)}
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def gitleaks_redactor(config_path: Path) -> tuple[Redactor, int, int]:
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    global_allow = [re.compile(_go_to_python(r)) for r in config.get("allowlist", {}).get("regexes", [])]
    global_stop = [w.lower() for w in config.get("allowlist", {}).get("stopwords", [])]
    rules: list[dict[str, Any]] = []
    failed = 0
    for rule in config["rules"]:
        if "regex" not in rule or "path" in rule:
            continue  # path-only rules look at file names, not text
        try:
            compiled = re.compile(_go_to_python(rule["regex"]))
        except re.error:
            failed += 1
            continue
        allows = []
        for allow in rule.get("allowlists", []):
            if "paths" in allow and allow.get("condition") == "AND":
                continue  # needs a file path to hold
            regexes = []
            for r in allow.get("regexes", []):
                with contextlib.suppress(re.error):
                    regexes.append(re.compile(_go_to_python(r)))
            allows.append(
                (allow.get("regexTarget", "secret"), regexes, [w.lower() for w in allow.get("stopwords", [])])
            )
        rules.append(
            {
                "regex": compiled,
                "keywords": [k.lower() for k in rule.get("keywords", [])],
                "entropy": rule.get("entropy"),
                "group": rule.get("secretGroup"),
                "allows": allows,
            }
        )

    def allowed(secret: str, match: str, line: str, allows: list[Any]) -> bool:
        if any(r.search(secret) for r in global_allow) or any(w in secret.lower() for w in global_stop):
            return True
        for target, regexes, stopwords in allows:
            subject = {"secret": secret, "match": match, "line": line}.get(target, secret)
            if any(r.search(subject) for r in regexes) or any(w in secret.lower() for w in stopwords):
                return True
        return False

    def run(text: str) -> str:
        lowered = text.lower()
        spans: list[tuple[int, int]] = []
        for rule in rules:
            if rule["keywords"] and not any(k in lowered for k in rule["keywords"]):
                continue
            for match in rule["regex"].finditer(text):
                group = rule["group"] or next((i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)), 0)
                secret = match.group(group) or match.group(0)
                if rule["entropy"] and _entropy(secret) < rule["entropy"]:
                    continue
                start = text.rfind("\n", 0, match.start()) + 1
                end = text.find("\n", match.end())
                if allowed(secret, match.group(0), text[start : end if end >= 0 else len(text)], rule["allows"]):
                    continue
                spans.append(match.span(group))
        for start, end in sorted(spans, reverse=True):
            text = text[:start] + "[REDACTED]" + text[end:]
        return text

    return run, len(rules), failed


def placements(text: str) -> dict[str, str]:
    """The secret where a transcript holds it: said by the user, printed by a tool, passed as arguments."""
    return {
        "user": f"Here is the config, please fix it:\n{text}\nthanks",
        "tool": f"$ cat .env\n{text}\n$ echo done\ndone",
        "arguments": json.dumps({"command": f"deploy --config '{text}'"}),
    }


def real_messages(folder: Path) -> list[str]:
    texts = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".jsonl", ".json", ".traj") or not path.is_file():
            continue
        try:
            _, transcripts = load(path.read_bytes(), str(path))
        except Exception as error:  # a bench never stops on one file
            print(f"  (skipped {path.name}: {error})", file=sys.stderr)
            continue
        texts += [message_text(m) for t in transcripts for m in t.messages]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gitleaks-config", type=Path, help="gitleaks' config/gitleaks.toml")
    default = os.environ.get("COMPACTCTL_TRANSCRIPTS") or ROOT.parent / "shared" / "transcripts"
    parser.add_argument("--transcripts", type=Path, default=Path(default))
    args = parser.parse_args()
    detectors: dict[str, Redactor] = {"table": table}
    ds = detect_secrets_redactor()
    if ds:
        detectors["detect-secrets"] = ds
    else:
        print("detect-secrets is not installed: skipped")
    if args.gitleaks_config:
        gl, count, failed = gitleaks_redactor(args.gitleaks_config)
        detectors["gitleaks"] = gl
        print(f"gitleaks: {count} text rules ported, {failed} did not compile in Python")

    names = list(detectors)
    table_placed = [
        Placed(x.kind, name, x.secret, *place(Document(x.kind, x.secret, x.text)))
        for x in CORPUS
        for name, place in PLACEMENTS.items()
    ]
    held_out_rows: dict[str, dict[str, str]] = {}
    corpora = (
        ("table's corpus", table_placed),
        ("held-out corpus", list(PLACED)),
        ("blind corpus", list(BLIND_PLACED)),
    )
    for title, corpus in corpora:
        kinds = len({p.kind for p in corpus})
        print(f"\n{title}: {kinds} kinds, redacted in every context (of {kinds})")
        print(f"{'placement':14} " + " ".join(f"{n:>15}" for n in names))
        for placement in PLACEMENTS:
            row = []
            for name, run in detectors.items():
                held = 0
                for item in (p for p in corpus if p.placement == placement):
                    ok = all(not exposed(item, run(text)) for text in placements(item.text).values())
                    held += ok
                    if not title.startswith("table") and name == "table":
                        held_out_rows.setdefault(item.kind, {})[placement] = "ok" if ok else "LEAK"
                row.append(held)
            print(f"{placement:14} " + " ".join(f"{r:>15}" for r in row))
    print(f"\nheld-out and blind kinds, table: {' '.join(f'{p:>11}' for p in PLACEMENTS)}")
    for kind, row in held_out_rows.items():
        print(f"  {kind:38} " + " ".join(f"{row[p]:>11}" for p in PLACEMENTS))

    texts = real_messages(args.transcripts) if args.transcripts.is_dir() else []
    chars = sum(len(t) for t in texts)
    print(f"\nreal transcripts under {args.transcripts}: {len(texts):,} messages, {chars / 1e6:.1f} M chars")
    print(f"{'detector':16} {'messages changed':>17} {'seconds':>8} {'vs table':>9}")
    base = None
    for name, run in detectors.items():
        started = time.perf_counter()
        changed = [t for t in texts if run(t) != t]
        elapsed = time.perf_counter() - started
        base = base or elapsed
        print(f"{name:16} {len(changed):>17,} {elapsed:>8.2f} {elapsed / base:>8.2f}x")


if __name__ == "__main__":
    main()
