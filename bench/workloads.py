"""Deterministic synthetic transcripts for benchmarks: ``generate(workload, turns, seed)``.

Three workloads, each labeled the way compactctl reads labels (``compactctl`` annotations):

- ``chat``: a normal assistant conversation; now and then a small lookup tool, sometimes
  called again with the same arguments (a little to prune).
- ``rag``: an assistant that retrieves every turn; chunks come from a small corpus in
  overlapping windows, so the same chunk comes back often (duplicates).
- ``tool``: a coding agent making frequent, highly repeated calls (the same file read, the
  same test run), so earlier results are superseded.

Every transcript carries 15 facts (``facts`` on user messages, spread over the whole
conversation; with ``facts_in="tools"``, in the tool workload's files and the RAG
workload's chunks instead: every later read of that file or retrieval of that chunk holds
the fact and is labeled with it, as a labeler marks every chunk holding it, half of them
spelled in another case than the text) and dependencies: some tool outputs or retrieved chunks ``define`` a key that
a later assistant message ``references``, and some of those definers are later superseded
or duplicated, so a pruner must restore them. The same (workload, turns, seed) always gives
the same messages; the replay benchmark imports ``generate`` too.

``retrieval="calls"`` fetches through tool calls instead: RAG chunks are the answers of
``search`` calls (a few queries per topic, so a query comes again and different queries
return the same chunk), and the chat's lookups name an order beside the hub, so different
calls return the same hub status. One copy of each text is what a pruner should keep there,
whatever call fetched it.
"""

from __future__ import annotations

import json
import random
from typing import Any

WORKLOADS = ("chat", "rag", "tool")
FACTS_PER_TRANSCRIPT = 15

_VOCABULARY = (
    "the a system user request answer change file test value order account policy update result error "
    "report data service check config build deploy review plan step issue fix code module function class "
    "return call input output process model cache token limit budget customer refund shipping invoice "
    "status pending approved rejected version branch commit merge release schedule meeting summary detail "
    "option setting default network server client query index table column row field record batch job "
    "queue worker timeout retry latency memory disk usage metric alert log trace event handler route"
)
_WORDS = _VOCABULARY.split()

_FACT_TEMPLATES = (
    "My account number is ACC-{n:05d}.",
    "Please send results in CSV, never as XLSX (rule {n}).",
    "The order id is ORD-{n:06d}.",
    "Do not change the public interface of module m{n}.",
    "The budget is {n} EUR, no more.",
    "Use the staging server stg-{n}.internal only.",
    "My name is Dana Whitfield-{n}.",
    "The deadline is day {n} of the quarter.",
    "Ticket reference TKT-{n:05d} must be quoted.",
    "Always answer in French for client {n}.",
)


def _sentence(rng: random.Random, words: int) -> str:
    picked = [rng.choice(_WORDS) for _ in range(words)]
    return " ".join(picked).capitalize() + "."


def _text(rng: random.Random, sentences: int, words: tuple[int, int] = (8, 14)) -> str:
    return " ".join(_sentence(rng, rng.randint(*words)) for _ in range(sentences))


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _note(message: dict[str, Any], **fields: Any) -> dict[str, Any]:
    message.setdefault("compactctl", {}).update(fields)
    return message


class _Builder:
    def __init__(
        self, workload: str, turns: int, seed: int, facts_in: str = "user", retrieval: str = "messages"
    ) -> None:
        self.rng = random.Random(f"{workload}:{turns}:{seed}" + ("" if retrieval == "messages" else f":{retrieval}"))
        self.facts_in = facts_in
        self.retrieval = retrieval
        self.placed: dict[Any, str] = {}  # file path or chunk id -> the fact it holds
        self.turns = turns
        self.messages: list[dict[str, Any]] = []
        self.calls = 0
        step = max(1, turns // FACTS_PER_TRANSCRIPT)
        self.fact_turns = {min(turns - 1, i * step + step // 3) for i in range(FACTS_PER_TRANSCRIPT)}
        self.facts_made = 0

    def add(self, message: dict[str, Any]) -> dict[str, Any]:
        self.messages.append(message)
        return message

    def place(self, turn: int, where: Any) -> None:
        """``facts_in="tools"``: from this turn on, the file or chunk ``where`` holds a fact."""
        if turn in self.fact_turns and self.facts_made < FACTS_PER_TRANSCRIPT and where not in self.placed:
            template = _FACT_TEMPLATES[self.facts_made % len(_FACT_TEMPLATES)]
            self.placed[where] = template.format(n=1000 + 37 * self.facts_made + turn)
            self.facts_made += 1

    def holding(self, message: dict[str, Any], where: Any) -> dict[str, Any]:
        """The tool output or chunk with the fact ``where`` holds, labeled (in lower case every other time)."""
        fact = self.placed.get(where)
        if fact is not None:
            message["content"] += f"\n# {fact}"
            _note(message, facts=[fact.lower() if len(self.placed) % 2 else fact])
        return message

    def user(self, turn: int, text: str) -> None:
        message = self.add({"role": "user", "content": text})
        if self.facts_in == "tools":
            return
        if turn in self.fact_turns and self.facts_made < FACTS_PER_TRANSCRIPT:
            template = _FACT_TEMPLATES[self.facts_made % len(_FACT_TEMPLATES)]
            fact = template.format(n=1000 + 37 * self.facts_made + turn)
            message["content"] = f"{text} {fact}"
            _note(message, facts=[fact])
            self.facts_made += 1

    def tool(self, name: str, arguments: dict[str, Any], output: str, text: str | None = None) -> dict[str, Any]:
        self.calls += 1
        call_id = f"call_{self.calls:05d}"
        self.add({"role": "assistant", "content": text, "tool_calls": [_call(call_id, name, arguments)]})
        return self.add({"role": "tool", "tool_call_id": call_id, "content": output})

    def facts_left(self) -> None:
        # Very short transcripts have fewer turns than facts: put the rest in the last user turn.
        while self.facts_made < FACTS_PER_TRANSCRIPT:
            self.user(-1, "One more thing.")
            template = _FACT_TEMPLATES[self.facts_made % len(_FACT_TEMPLATES)]
            fact = template.format(n=5000 + self.facts_made)
            self.messages[-1]["content"] += f" {fact}"
            _note(self.messages[-1], facts=[fact])
            self.facts_made += 1
            self.add({"role": "assistant", "content": "Noted."})


def _chat(b: _Builder) -> None:
    rng = b.rng
    b.add({"role": "system", "content": "You are a helpful assistant for a logistics company. " + _text(rng, 3)})
    cities = ["Paris", "Lyon", "Berlin"]
    for turn in range(b.turns):
        b.user(turn, _text(rng, 1, (10, 18)))
        # Besides the random lookups, one at a fifth of the way that the answer relies on and
        # one at half way that supersedes it: even a short chat needs a restoration.
        pinned_turns = (b.turns // 5, b.turns // 2)
        if rng.random() < 0.08 or turn in pinned_turns:
            city = cities[0] if turn in pinned_turns else rng.choice(cities)
            if b.retrieval == "calls":
                # The hub's status changes now and then; orders at one hub all get it.
                status = _text(random.Random(f"hub:{city}:{turn // 40}"), 3, (10, 14))
                arguments: dict[str, Any] = {"hub": city, "order": f"ORD-{rng.randrange(10**6):06d}"}
                result = b.tool("shipping_status", arguments, f"Hub {city}: {status}")
            else:
                result = b.tool("shipping_status", {"hub": city}, f"Hub {city}: " + _text(rng, 3, (10, 14)))
            if rng.random() < 0.3 or turn == pinned_turns[0]:
                _note(result, defines=[f"hub:{city}:{turn}"])
                b.add(_note({"role": "assistant", "content": _text(rng, 1)}, references=[f"hub:{city}:{turn}"]))
                continue
        b.add({"role": "assistant", "content": _text(rng, 2, (10, 16))})
    b.facts_left()


def _chunk(d: int) -> str:
    return f"[doc {d}] " + _text(random.Random(f"doc:{d}"), 1, (14, 20))


def _rag(b: _Builder) -> None:
    rng = b.rng
    b.add({"role": "system", "content": "You answer from the retrieved documents only. " + _text(rng, 2)})
    topic = 0
    for turn in range(b.turns):
        # The conversation drifts through an endless corpus, so chunks come back while the
        # topic is near and the duplicate rate does not grow with the transcript's length.
        if rng.random() < 0.13:
            topic += rng.randint(1, 3)
        b.user(turn, _text(rng, 1, (5, 8)))
        cited = None
        for k in range(2):
            d = topic + rng.randrange(4) + k
            if k == 0 and b.facts_in == "tools":
                b.place(turn, d)
            if b.retrieval == "calls":
                # A few phrasings of a query per document: asked again, or another query, same chunk.
                query = f"{_WORDS[d % len(_WORDS)]} {_WORDS[(d * 7 + rng.randrange(3)) % len(_WORDS)]}"
                chunk = b.holding(b.tool("search", {"query": query, "top_k": 1}, _chunk(d)), d)
            else:
                chunk = b.add(b.holding(_note({"role": "user", "content": _chunk(d)}, kind="retrieval"), d))
            if k == 0 and rng.random() < 0.08:
                # The answer relies on this very retrieval (often a duplicate of an earlier one).
                cited = f"retrieved:{turn}:{d}"
                _note(chunk, defines=[cited])
        answer = {"role": "assistant", "content": _text(rng, 1, (8, 12))}
        b.add(_note(answer, references=[cited]) if cited else answer)
    b.facts_left()


def _tool(b: _Builder) -> None:
    rng = b.rng
    b.add({"role": "system", "content": "You are a coding agent. Use the tools. " + _text(rng, 2)})
    versions: dict[str, int] = {}
    first = 0
    for turn in range(b.turns):
        # The agent works on a few files at a time and moves on, so repeats stay local.
        if rng.random() < 0.04:
            first += 1
        files = [f"src/pkg/mod{i}.py" for i in range(first, first + 5)]
        if turn % 10 == 0 or turn in b.fact_turns:
            b.user(turn, _text(rng, 1, (8, 14)))
        roll = rng.random()
        forced = b.facts_in == "tools" and turn in b.fact_turns
        if roll < 0.35 or forced:
            path = rng.choice(files)
            if forced:
                b.place(turn, path)
            version = versions.setdefault(path, 0)
            body = "\n".join(f"    {_sentence(random.Random(f'{path}:{version}:{j}'), 6)}" for j in range(7))
            result = b.tool("read_file", {"path": path}, f"# {path} v{version}\n{body}")
            b.holding(result, path)
            if rng.random() < 0.15:
                key = f"{path}@{version}:{turn}"
                _note(result, defines=[key])
                b.add(_note({"role": "assistant", "content": f"In {path}: " + _text(rng, 1)}, references=[key]))
        elif roll < 0.50:
            failed = rng.randrange(3)
            failures = "".join(
                f"FAILED tests/test_mod{rng.randrange(9)}.py::test_{rng.choice(_WORDS)}\n" for _ in range(failed)
            )
            b.tool("run_tests", {}, f"{failures}{40 - failed} passed, {failed} failed in 1.{rng.randrange(10)}s")
        elif roll < 0.58:
            path = rng.choice(files)
            versions[path] = versions.get(path, 0) + 1
            b.tool("edit_file", {"path": path, "patch": _text(rng, 1, (4, 8))}, "ok", _text(rng, 1, (6, 10)))
        elif roll < 0.68:
            b.tool("list_dir", {"path": "src/pkg"}, "\n".join(files))
        else:
            b.add({"role": "assistant", "content": _text(rng, 1, (10, 18))})
    b.add({"role": "assistant", "content": "Done: " + _text(rng, 1)})
    b.facts_left()


def generate(
    workload: str, turns: int, seed: int = 0, facts_in: str = "user", retrieval: str = "messages"
) -> list[dict[str, Any]]:
    """A labeled transcript of ``turns`` turns for ``workload`` ("chat", "rag" or "tool").

    ``facts_in="tools"`` (rag and tool) puts the facts in retrieved chunks and read files;
    ``retrieval="calls"`` (rag and chat) fetches through tool calls (see the module's text).
    """
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    builder = _Builder(workload, turns, seed, facts_in, retrieval)
    {"chat": _chat, "rag": _rag, "tool": _tool}[workload](builder)
    return builder.messages
