"""Small builders the tests share."""

from __future__ import annotations

from typing import Any


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


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
