from compactctl.compaction import compact
from compactctl.transcript import is_valid
from tests.conftest import unchanged


def test_window_never_starts_on_a_tool_result(agent_messages):
    original = unchanged(agent_messages)
    # The last 5 messages start on the tool result c3: the cut moves back to its call.
    result = compact(agent_messages, ["window"], {"keep_recent": 5})
    assert agent_messages == original
    roles = [m["role"] for m in result.messages]
    assert roles == ["system", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    assert is_valid(result.messages)
    assert [e.action for e in result.manifest].count("removed") == 3
