"""Read and write speed of the native formats on generated sessions.

    python bench/formats_bench.py [--turns 2000] [--runs 5]

Builds a Claude Code session and a Codex rollout of TURNS tool rounds each (split
assistant records, interleaved non-message records, token_count events), then prints
the median time to read, to write back unchanged (byte for byte) and to write a
window-compacted version, with the file size and records per second read.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable

import orjson

from compactctl.compaction import compact
from compactctl.formats import load


def claude_code(turns: int) -> bytes:
    env = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "s", "version": "2.1.219"}
    lines = []
    for n in range(turns):
        usage = {"input_tokens": 5, "cache_read_input_tokens": 1000 + n * 50, "output_tokens": 40}
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "usage": usage}
        lines.append(
            {**env, "type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": f"Step {n}: run it"}}
        )
        text = {"type": "text", "text": f"Running step {n}."}
        lines.append({**env, "type": "assistant", "uuid": f"a{n}", "message": {**message, "content": [text]}})
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": f"make step-{n}"}}
        lines.append({**env, "type": "assistant", "uuid": f"b{n}", "message": {**message, "content": [call]}})
        lines.append({"type": "last-prompt", "lastPrompt": f"Step {n}", "leafUuid": f"b{n}", "sessionId": "s"})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok\n" * 40}
        lines.append({**env, "type": "user", "uuid": f"r{n}", "message": {"role": "user", "content": [result]}})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def codex(turns: int) -> bytes:
    def line(kind: str, payload: dict) -> bytes:
        return orjson.dumps({"timestamp": "2026-03-03T10:00:00.000Z", "type": kind, "payload": payload}) + b"\n"

    out = [line("session_meta", {"id": "s", "base_instructions": {"text": "You are Codex. " * 500}})]
    for n in range(turns):
        text = [{"type": "input_text", "text": f"Step {n}: run it"}]
        out.append(line("response_item", {"type": "message", "role": "user", "content": text}))
        out.append(line("event_msg", {"type": "user_message", "message": f"Step {n}: run it"}))
        out.append(line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x" * 800}))
        call = {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"make"}', "call_id": f"c{n}"}
        out.append(line("response_item", call))
        usage = {"input_tokens": 1000 + 50 * n, "cached_input_tokens": 900, "output_tokens": 30}
        out.append(line("event_msg", {"type": "token_count", "info": {"last_token_usage": usage}}))
        output = {"type": "function_call_output", "call_id": f"c{n}", "output": "ok\n" * 40}
        out.append(line("response_item", output))
    return b"".join(out)


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name, data in (("claude-code", claude_code(args.turns)), ("codex", codex(args.turns))):
        fmt, transcripts = load(data)
        assert fmt.name == name and fmt.write(transcripts) == data
        records = data.count(b"\n")
        read = median_seconds(lambda data=data: load(data), args.runs)
        write = median_seconds(lambda fmt=fmt, t=transcripts: fmt.write(t), args.runs)
        kept = compact(transcripts[0].messages, ["window"], {"keep_recent": 20}).messages
        compacted = [dataclasses.replace(transcripts[0], messages=kept)]
        write_compacted = median_seconds(lambda fmt=fmt, c=compacted: fmt.write(c), args.runs)
        print(
            f"{name:12} {len(data) / 1e6:6.1f} MB {records:7,} records  read {read * 1000:7.1f} ms "
            f"({records / read:,.0f} records/s)  write unchanged {write * 1000:6.1f} ms  "
            f"write compacted {write_compacted * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    main()
