"""The offline summarizer: sections, the verbatim ledger, constraints, the bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.summarizers import SummaryRequest
from compactctl.summarizers.extractive import ExtractiveSummarizer, parse_summary
from compactctl.tokens import counter_for
from tests.helpers import call

COUNTER = counter_for()
SESSION = [
    {"role": "user", "content": "Hi, my name is Alice Martin. Order #48213 arrived broken; ticket SUP-981 is open."},
    {"role": "user", "content": "Results must be in CSV. Never email me, only SMS. Ne pas appeler avant 9h."},
    {
        "role": "assistant",
        "content": "I will check the logs.",
        "tool_calls": [call("c1", "bash", '{"cmd": "grep -n timeout /var/log/app/server.log"}')],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ERROR: upstream timeout after 30 s\nlatency p99 = 412 ms"},
    {"role": "assistant", "content": "The fix is to raise the timeout in config/app.toml. Next I will run pytest -q."},
]


def summarize(messages, max_tokens=500, previous=None):
    return ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages, "structured", max_tokens, previous)).text


def test_five_sections_and_constraints_with_a_verbatim_ledger():
    text = summarize(SESSION)
    for section in ("## Goal", "## Progress", "## Facts", "## Decisions", "## Next steps", "## Constraints"):
        assert section in text
    ledger = ["Alice Martin", "#48213", "SUP-981", "/var/log/app/server.log", "config/app.toml"]
    ledger += ["grep -n timeout /var/log/app/server.log", "30 s", "412 ms", "ERROR: upstream timeout after 30 s"]
    for fact in ledger:
        assert fact in text, fact
    for constraint in ("Results must be in CSV.", "Never email me, only SMS.", "Ne pas appeler avant 9h."):
        assert f"- {constraint}" in text


def test_same_input_same_output():
    assert summarize(SESSION) == summarize(list(SESSION))


@settings(max_examples=40, deadline=None)
@given(st.integers(30, 400))
def test_the_summary_stays_under_its_bound(max_tokens):
    assert COUNTER(summarize(SESSION * 5, max_tokens)) <= max_tokens


def test_constraints_come_before_prose_when_the_bound_bites():
    text = summarize(SESSION, max_tokens=60)
    assert "Never email me, only SMS." in text and "## Progress" not in text


def test_a_previous_summary_is_merged_not_forgotten():
    earlier = summarize(SESSION[:2])
    later = summarize(SESSION[2:], previous=earlier)
    assert "Never email me, only SMS." in later and "#48213" in later and "412 ms" in later
    assert parse_summary(later) is not None


def test_observations_in_user_messages_are_not_constraints():
    task = {"role": "user", "message_type": "observation", "content": "Fix the bug. You must not edit setup.py."}
    action = {"role": "assistant", "content": "Opening it.", "action": "open setup.py"}
    observation = {"role": "user", "message_type": "observation", "content": "You must not edit this, it is generated."}
    text = summarize([task, action, observation])
    said = text.split("## Constraints")[1]
    assert "You must not edit setup.py." in said and "it is generated" not in said
    assert "- $ open setup.py" in text


def test_demonstrations_are_not_part_of_the_session():
    demo = {"role": "user", "is_demo": True, "content": "Example: never touch demo/path.py. Run `pytest -q`."}
    text = summarize([demo, *SESSION])
    assert "demo/path.py" not in text and "never touch" not in text


def test_harness_text_is_never_taken_for_the_users_goal():
    # Codex and Claude Code inject environment text as user messages; their readers mark it.
    harness = {
        "role": "user",
        "content": "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>",
        "compactctl": {"kind": "harness"},
    }
    span = [harness, {"role": "assistant", "content": "I looked at src/refunds.py."}]
    text = ExtractiveSummarizer().summarize(SummaryRequest(span, "structured", 300)).text
    assert "environment_context" not in text.split("## Progress")[0]
    person = {"role": "user", "content": "Please fix the refund bug in src/refunds.py."}
    text = ExtractiveSummarizer().summarize(SummaryRequest([harness, person], "structured", 300)).text
    assert "## Goal\n- Current request: Please fix the refund bug in src/refunds.py." in text


def test_saying_what_one_lacks_is_not_a_constraint():
    from compactctl.summarizers.ledger import constraints

    said = [
        {"role": "user", "content": "My user ID is omar_1, but I'm afraid I don't have the reservation ID with me."},
        {"role": "user", "content": "I do not want to be charged before shipping. Don't touch the refund."},
    ]
    assert constraints(said) == ["I do not want to be charged before shipping.", "Don't touch the refund."]


def test_booking_codes_are_ids_but_units_and_timestamps_are_not():
    from compactctl.summarizers.ledger import facts

    said = [{"role": "tool", "content": "Booking UM3OG5 ships 2024-05-08T14:00:00 as 6A19384756201, a 2700K lamp."}]
    said.append({"role": "tool", "content": "bits: " + "01" * 100})
    assert [f.text for f in facts(said) if f.kind == "id"] == ["UM3OG5", "6A19384756201"]
