"""The producers' own auto-compaction points (replay's default thresholds) checked against the clients themselves.

Each format's ``AUTO_COMPACT`` says where its producer compacts; these read it
back from the pinned clients in .ci/cache: the constants in the code they ship (Claude Code's
minified JavaScript inside its binary, Gemini CLI's bundle), and for Codex, whose Rust leaves
no constant to read, its behaviour: the real client on the loopback fake compacts when the last
call's context passes 90 % of the window it is given, and not below.
"""

from __future__ import annotations

import json
import mmap
import re
import tempfile
from pathlib import Path

import pytest

from compactctl.formats import get_format
from compactctl.formats.claude_code import AUTO_COMPACT_BUFFER, AUTO_COMPACT_OUTPUT_ROOM
from tests.fakes.clients import Codex, require_client

pytestmark = pytest.mark.clients


def _trigger(format_name: str, window: int) -> int:
    """Where the format's producer compacts on ``window`` tokens, as its registry entry says."""
    auto = get_format(format_name).auto_compact
    assert auto is not None, format_name
    return auto.trigger(window)


def _shipped(binary: Path) -> Path:
    return binary.resolve()


def _search(path: Path, pattern: bytes, group: int = 1) -> bytes:
    """Group ``group`` of ``pattern``'s first match in the file (400 MB for Claude Code: mapped, not read)."""
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        found = re.search(pattern, data)
        assert found is not None, f"{pattern!r} is not in {path}: re-read the client's auto-compact code"
        return bytes(found.group(group))


def _constant(path: Path, name: bytes) -> int:
    return int(_search(path, rb"[,; ]" + re.escape(name) + rb"=(\d+)[,;]"))


def test_claude_code_s_code_keeps_its_output_room_and_a_13k_buffer_off_the_window():
    binary = _shipped(require_client("claude").binary)
    # The threshold function: the effective window less a buffer (the percent override aside). 2.1.337 caps it at
    # ``compactAtMost``, which only a percent override on a window the server's experiment chose sets; the minifier
    # names the second parameter anew in each release (2.1.332's ``n``, 2.1.337's ``o``).
    threshold = _search(
        binary,
        rb"function [\w$]+\(e,([a-z])\)\{let [a-z]=(?:Math\.min\()?e-([\w$]+)(?:,\1\.compactAtMost\?\?1/0\))?,"
        rb"[a-z]=\1\.testPctOverride",
        group=2,
    )
    # The effective window: the model's less min(its max output, a reserve).
    window = _search(binary, rb"function [\w$]+\(e,[a-z]\)\{let [a-z]=Math\.min\(e\.maxOutputTokens,([\w$]+)\)")
    assert _constant(binary, threshold) == AUTO_COMPACT_BUFFER
    assert _constant(binary, window) == AUTO_COMPACT_OUTPUT_ROOM
    # As the code reads, 167,000 on 200k; the client compacts 10,000 later (measured below), which replay uses.
    assert _trigger("claude-code", 200_000) == 200_000 - AUTO_COMPACT_OUTPUT_ROOM - AUTO_COMPACT_BUFFER + 10_000


def test_gemini_cli_compresses_at_half_the_window():
    bundle = _shipped(require_client("gemini").binary).parent
    shares = set()
    for chunk in bundle.glob("*.js"):
        text = chunk.read_text(errors="replace")
        shares |= {float(s) for s in re.findall(r"DEFAULT_COMPRESSION_TOKEN_THRESHOLD = ([0-9.]+)", text)}
    auto = get_format("gemini").auto_compact
    assert auto is not None and shares == {auto.share}


def _codex_compacts(window: int) -> tuple[bool, int]:
    """Two turns of the real Codex on ``window``: whether it compacted before the second; the first call's context."""
    from tests.fakes.responses import FakeResponses
    from tests.fakes.scenarios import project

    client = require_client("codex")
    with tempfile.TemporaryDirectory(prefix="codex-window-") as folder, FakeResponses() as fake:
        root = Path(folder)
        codex = Codex(client, root, project(root), fake, extra_config=f"model_context_window = {window}\n")
        fake.enqueue("First answer.")
        codex.run("Hello?")
        (rollout,) = codex.rollouts()
        thread = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
        assert thread is not None
        fake.enqueue("Second answer.")
        codex.run("And then?", resume=thread.group(1))
        assert not fake.errors, fake.errors
        lines = [json.loads(line) for line in rollout.read_text().splitlines() if line]
    first = next(
        line["payload"]["info"]["last_token_usage"]
        for line in lines
        if line["type"] == "event_msg" and line["payload"].get("type") == "token_count" and line["payload"].get("info")
    )
    return any(line["type"] == "compacted" for line in lines), first["input_tokens"] + first["output_tokens"]


def test_codex_compacts_past_90_percent_of_its_window_and_not_below():
    _, context = _codex_compacts(1_000_000)  # far from any limit: what the first call holds
    # Windows whose trigger (as fitted_thresholds computes it) sits 3 % under and over that context.
    under = round(context * 0.97 / 0.9)
    over = round(context * 1.03 / 0.9)
    assert _trigger("codex", under) < context < _trigger("codex", over)
    assert _codex_compacts(under)[0] is True
    assert _codex_compacts(over)[0] is False


def _claude_code_compacts(model: str, words: int, tokens_per_token: float = 1.0) -> tuple[bool, int]:
    """A first prompt of ``words`` words, then a second turn: whether Claude Code auto-compacted before it, and the
    first call's context. The fake bills ``tokens_per_token`` of its own count, so a call of 1M tokens does not need
    a prompt the client itself refuses as too long before it sends it."""
    import subprocess

    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.clients import ClaudeCode
    from tests.fakes.scenarios import project

    client = require_client("claude")
    with (
        tempfile.TemporaryDirectory(prefix="claude-window-") as folder,
        FakeAnthropic(tokenizer={model: tokens_per_token}) as fake,
    ):
        root = Path(folder)
        claude = ClaudeCode(client, root, project(root), fake)

        def run(prompt: str, *extra: str) -> str:
            args = [str(client.binary), "-p", "--output-format", "json", "--model", model, *extra]
            # The prompt on stdin: one argument cannot hold a 170k-token prompt.
            done = subprocess.run(
                args, input=prompt, cwd=claude.cwd, env=claude.env(), capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, (done.stderr[-2000:], done.stdout[-2000:])
            return str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])

        fake.enqueue("Noted.")
        session = run("Keep this in mind:\n" + " ".join(f"w{i % 997}" for i in range(words)))
        fake.enqueue("Second answer.")
        run("And then?", "--resume", session)
        assert not fake.errors, fake.errors
        records = [json.loads(line) for line in claude.session_file(session).read_text().splitlines() if line]
    first = next(r["message"]["usage"] for r in records if r.get("type") == "assistant")
    compacted = any(r.get("subtype") == "compact_boundary" for r in records)
    return compacted, first["input_tokens"] + first["output_tokens"]


@pytest.mark.parametrize(
    ("model", "tokens_per_token", "under", "over"),
    [
        # 200k: the code's formula says 167,000; the client compacts near 177,000 (so does 2.1.332).
        ("claude-sonnet-4-6", 1.0, 124_000, 128_000),
        # 1M native (its catalog): near 977,000, with no call past 200k first.
        ("claude-opus-4-7", 1.5, 509_000, 518_000),
    ],
)
def test_claude_code_compacts_at_the_window_less_23k(model: str, tokens_per_token: float, under: int, over: int):
    from compactctl.replay.fitted_thresholds import FileEvidence, fitted_thresholds

    fitted = fitted_thresholds(get_format("claude-code"), model, FileEvidence(peak=50_000))
    assert fitted is not None
    below, context = _claude_code_compacts(model, under, tokens_per_token)
    assert context < fitted.trigger and below is False
    above, context = _claude_code_compacts(model, over, tokens_per_token)
    assert fitted.trigger < context < fitted.trigger * 1.03 and above is True


def test_claude_code_does_not_compact_its_older_models_before_the_api_refuses():
    # On a fake that refuses nothing, claude-sonnet-4-5 goes on past 1M: its only point is the window's refusal.
    assert "claude-sonnet-4-5" in (get_format("claude-code").auto_compact or ()).when_refused  # type: ignore[operator]
    compacted, context = _claude_code_compacts("claude-sonnet-4-5", 560_000, 1.5)
    assert context > 1_000_000 and compacted is False
