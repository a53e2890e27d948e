"""Small builders the tests share."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from compactctl.summarizers import Summary, SummaryRequest
from compactctl.transcript import content_text
from compactctl.usage import SummarizerUsage

SAMPLES_FOLDER = Path(__file__).resolve().parent.parent / "samples"


def bundled_samples() -> list[Path]:
    """The samples the repository ships, sorted: not what a run wrote beside them (the README's first
    command writes samples/coding-agent.compacted.jsonl before the second runs the tests)."""
    written = (".compacted.", ".pruned.")  # .gitignore's samples/*.compacted.* and samples/*.pruned.*
    return sorted(p for p in SAMPLES_FOLDER.glob("*.jsonl") if not any(mark in p.name for mark in written))


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class ScriptedSummarizer:
    """A fake summarizer: given its replies, it records its requests; a reply left unused fails the test.

    Use through the ``scripted`` fixture, which checks at teardown that every reply was used.
    """

    def __init__(self) -> None:
        self.replies: deque[Summary] = deque()
        self.requests: list[SummaryRequest] = []

    def enqueue(
        self, *texts: str, prompt_tokens: int = 10, completion_tokens: int = 5, truncated: bool = False
    ) -> None:
        for text in texts:
            usage = SummarizerUsage(1, prompt_tokens, completion_tokens, int(truncated))
            self.replies.append(Summary(text, usage, truncated))

    def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected summarizer call #{len(self.requests)} ({request.strategy})")
        return self.replies.popleft()


def valid_transcripts(max_rounds: int = 8):
    """A hypothesis strategy for API-valid transcripts: system, then user/assistant/tool rounds."""
    from hypothesis import strategies as st

    text = st.text(alphabet="abc \n0123456789", min_size=1, max_size=60)

    @st.composite
    def build(draw):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        next_id = 0
        for _ in range(draw(st.integers(0, max_rounds))):
            kind = draw(st.sampled_from(["user", "assistant", "tools", "pinned"]))
            if kind == "tools":
                count = draw(st.integers(1, 3))
                ids = [f"c{next_id + i}" for i in range(count)]
                next_id += count
                messages.append({"role": "assistant", "content": None, "tool_calls": [call(i, "f") for i in ids]})
                messages += [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in ids]
            elif kind == "pinned":
                messages.append({"role": "user", "content": draw(text), "compactctl": {"pin": True}})
            else:
                messages.append({"role": kind, "content": draw(text)})
        return messages

    return build()


def lost_facts(messages: list[dict[str, Any]], out: list[dict[str, Any]], required: tuple[str, ...] = ()) -> list[str]:
    """Declared (and ``required``) facts some input message holds and no output message does (folded)."""
    from compactctl.facts import declared_facts, fold
    from compactctl.transcript import message_text

    before, after = ([fold(message_text(m)) for m in ms] for ms in (messages, out))
    return [
        fact
        for fact in declared_facts(messages, required)
        if any(fold(fact) in text for text in before) and not any(fold(fact) in text for text in after)
    ]


# --- agent transcripts with every annotation, for the deterministic steps' properties ----------

TEXTS = [
    "alpha beta gamma delta epsilon zeta eta theta iota kappa",
    "ALPHA  beta gamma delta epsilon zeta eta theta iota kappa",
    "the quick brown fox jumps over the lazy dog near the river bank",
    "ok",
    "",
    "[compactctl: superseded by message #3]",
    "[compactctl: duplicate of message #1]",
    "error: file not found: /srv/app/config.yaml (errno 2)",
]
KEYS = ["k1", "k2", "k3"]


@st.composite
def annotation(draw: st.DrawFn, text: str) -> dict[str, Any] | None:
    note: dict[str, Any] = {}
    if draw(st.booleans()):
        return None
    if draw(st.integers(0, 4)) == 0:
        note["key"] = draw(st.sampled_from(KEYS))
    if draw(st.booleans()):
        note["defines"] = draw(st.lists(st.sampled_from(KEYS), max_size=2))
    if draw(st.booleans()):
        note["references"] = draw(st.lists(st.sampled_from(KEYS), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        note["kind"] = draw(st.sampled_from(["retrieval", "observation"]))
    if draw(st.integers(0, 9)) == 0:
        note["pin"] = True
    if text and draw(st.integers(0, 7)) == 0:
        words = text.split()
        note["facts"] = [words[draw(st.integers(0, len(words) - 1))]]
    return note


@st.composite
def content(draw: st.DrawFn) -> Any:
    text = draw(st.sampled_from(TEXTS))
    return [{"type": "text", "text": text}] if text and draw(st.integers(0, 5)) == 0 else text


def with_note(draw: st.DrawFn, message: dict[str, Any]) -> dict[str, Any]:
    note = draw(annotation(content_text(message)))
    if note is not None:
        message["compactctl"] = note
    return message


@st.composite
def agent_transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    counter = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools"]))
        if kind in ("user", "assistant"):
            text = draw(st.sampled_from([t for t in TEXTS if t]))
            messages.append(with_note(draw, {"role": kind, "content": text}))
            continue
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            counter += 1
            name = draw(st.sampled_from(["read", "grep"]))
            args = draw(st.sampled_from(['{"p": 1}', '{"p":1}', '{"p": 2}', "raw args"]))
            calls.append(call(f"c{counter}", name, args))
        assistant_text = draw(st.sampled_from([None, "", "Looking."]))
        messages.append(with_note(draw, {"role": "assistant", "content": assistant_text, "tool_calls": calls}))
        for c in calls:
            messages.append(with_note(draw, {"role": "tool", "tool_call_id": c["id"], "content": draw(content())}))
    return messages


def compact_file_with(job: Any, steps: list[str], values: dict[str, Any], counter: Any, **rest: Any) -> Any:
    """``files.compact.compact_file`` with its option groups built from flat values, as the CLI builds them."""
    from compactctl.cli.options import Given
    from compactctl.config import DatabaseOptions, GateOptions, InputOptions, WriteOptions
    from compactctl.files.compact import compact_file

    given = Given(values)
    groups = {"read": given.of(InputOptions), "gates": given.of(GateOptions), "database": given.of(DatabaseOptions)}
    groups["written"] = given.of(WriteOptions)
    return compact_file(job, steps, given.strategies(), counter, **groups, **rest)


def replay_file_with(source: str, name: str, grid: Any, values: dict[str, Any], counter: Any, prices: Any) -> Any:
    """``files.replay.replay_file`` with its option groups built from flat values, as the CLI builds them."""
    from compactctl.cli.options import Given
    from compactctl.config import InputOptions, RecordedOptions
    from compactctl.files.replay import replay_file

    given = Given(values)
    return replay_file(
        source, name, grid, given.strategies(), counter, prices,
        read=given.of(InputOptions), recorded_options=given.of(RecordedOptions),
    )  # fmt: skip
