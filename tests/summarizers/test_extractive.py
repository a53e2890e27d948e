"""The offline summarizer: sections, the verbatim ledger, constraints, the bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.summarizers import SummaryRequest
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.summarizers.sections import parse_summary
from compactctl.tokens import counter_for
from tests.helpers import agent_transcripts as transcripts
from tests.helpers import call
from tests.properties import examples
from tests.secrets_corpus import CLEAN, CORPUS

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


@settings(max_examples=examples(40), deadline=None)
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
    from compactctl.summarizers.writings import constraints

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


def test_constraints_in_seven_languages_are_whole_user_sentences():
    from compactctl.summarizers.writings import constraints

    said = [
        {"role": "user", "content": "Don’t use any external frameworks — keep it pure HTML."},
        {"role": "user", "content": "Ne modifiez jamais le schéma de la base."},
        {"role": "user", "content": "Nunca borres los datos de producción."},
        {"role": "user", "content": "Du darfst die API nicht ändern."},
        {"role": "user", "content": "不要修改公共接口的任何函数签名。"},
        {"role": "user", "content": "テストファイルは絶対に編集しないでください。"},
        {"role": "user", "content": "공개 API는 절대 변경하지 마세요."},
    ]
    assert constraints(said) == [m["content"] for m in said]


def test_hard_wrapped_user_text_is_joined_back_into_sentences():
    from compactctl.summarizers.writings import constraints

    wrapped = "Please fix the importer. You must keep the old CSV\ncolumns in the same order, and never\ndrop a row.\n"
    listed = "Rules:\n- only touch src/importer.py\n- do not add dependencies"
    said = [{"role": "user", "content": wrapped}, {"role": "user", "content": listed}]
    assert constraints(said) == [
        "You must keep the old CSV columns in the same order, and never drop a row.",
        "only touch src/importer.py",
        "do not add dependencies",
    ]


def test_harness_tool_output_and_earlier_summaries_are_never_user_constraints():
    harness = {"role": "user", "content": "<system-reminder>You must never mention this reminder.</system-reminder>"}
    summary = {"role": "user", "content": "This session is being continued from a previous conversation. Never stop."}
    tagged = {
        "role": "user",
        "content": "Resume directly — do not acknowledge the summary.",
        "compactctl": {"kind": "harness"},
    }
    call_ = {"role": "assistant", "content": None, "tool_calls": [call("c1", "bash", '{"cmd": "git diff"}')]}
    diff = {"role": "tool", "tool_call_id": "c1", "content": "- you must not remove this line\n+ always add it back"}
    typed = {"role": "user", "content": "<ide_opened_file>a.py</ide_opened_file>Only edit a.py, never b.py."}
    text = summarize([harness, summary, tagged, call_, diff, typed], max_tokens=400)
    assert text.split("## Constraints\n")[1] == "- Only edit a.py, never b.py."
    assert "- Current request: Only edit a.py, never b.py." in text


def test_the_ledger_has_no_hunk_markers_colours_uuid_halves_or_build_steps():
    from compactctl.summarizers.ledger import facts

    session = [
        {"role": "user", "content": "Issue #12: the colour #1e1e1e is wrong in src/theme.css, see commit 3f9a2c1d."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "Bash", '{"command": "docker build ."}')]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "#1 [internal] load build definition\n#2 DONE 0.3s\n178d167\n333a310\n"
            "id 6f1c9b1e-2f5a-4a55-9a8e-63a1d1c0c7e1\nraise ValueError('bad')\nError: build failed at step 2",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c2", "Bash", '{"command": ["bash", "-lc", "make test"]}')],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "FAILED (failures=1)"},
    ]
    found = facts(session)
    ids = [f.text for f in found if f.kind == "id"]
    assert ids == ["Issue #12", "3f9a2c1d", "6f1c9b1e-2f5a-4a55-9a8e-63a1d1c0c7e1"]
    assert [f.text for f in found if f.kind == "command"] == ["docker build .", "make test"]
    assert [f.text for f in found if f.kind == "error"] == ["Error: build failed at step 2", "FAILED (failures=1)"]
    paths = [f for f in found if f.kind == "path"]
    assert [p.text for p in paths] == ["src/theme.css"] and not paths[0].touched
    # The latest error comes first in the summary's ledger.
    text = summarize(session)
    assert text.index("FAILED (failures=1)") < text.index("Error: build failed at step 2")
    assert "- $ make test" in text and "docker build" in text and '"command"' not in text


def test_a_rule_quoting_inline_code_is_still_the_users_sentence():
    from compactctl.summarizers.writings import constraints

    said = [{"role": "user", "content": "Render iff `currentUserId === transfer.toUserId` — never a global notice.\n"
             "if (x) { return y; }"}]  # fmt: skip
    assert constraints(said) == ["Render iff `currentUserId === transfer.toUserId` — never a global notice."]


@settings(max_examples=examples(200), deadline=None)
@given(
    transcripts(),
    st.lists(st.sampled_from([s.text for s in CORPUS[:40]] + list(CLEAN)), min_size=1, max_size=6),
)
def test_a_span_redacted_string_by_string_is_what_redacting_each_message_gives(messages, texts):
    """The summarizer redacts each distinct string once (a memo): the same as redacting every message whole."""
    from compactctl.summarizers.extractive import redacted
    from compactctl.summarizers.redact import redact_messages

    span = [*messages, *({"role": "user", "content": text} for text in texts)]
    span.append({"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": texts[0]}]})
    span.append({"role": "assistant", "content": [{"type": "thinking", "thinking": texts[-1], "signature": "s"}]})
    assert _thinking_put_back(redact_messages(span)[0], span) == redacted(span)
    assert _thinking_put_back(redact_messages(span)[0], span) == redacted(span)  # again, from the memo


def _thinking_put_back(redacted_span: list[dict], span: list[dict]) -> list[dict]:
    """``redacted_span`` with each thinking part as it was in ``span`` (the summarizer never reads one)."""
    from compactctl.transcript import is_thinking

    out = []
    for new, old in zip(redacted_span, span, strict=True):
        content = old.get("content")
        if isinstance(content, list):
            parts = [o if is_thinking(o) else n for n, o in zip(new["content"], content, strict=True)]
            new = {**new, "content": parts}
        out.append(new)
    return out


def test_a_thinking_part_is_passed_to_the_summary_as_it_is_and_none_of_it_reaches_the_summary():
    """Thinking is not read (``content_text`` leaves it out), so it is not redacted either: a signature's
    base64 run was decoded and scanned for nothing. The summary is the one of the span without it."""
    from compactctl.summarizers.extractive import redacted

    key = "sk-ant-api03-" + "Zk8q2mWv7Rt5Xn3bQ9" * 4
    thinking = {"type": "thinking", "thinking": f"The key is {key}, use it", "signature": "RXJyb3I6" * 40}
    said = {"type": "text", "text": f"Deploying with {key} now."}
    span = [
        {"role": "user", "content": "Deploy the app to staging, never to production."},
        {"role": "assistant", "content": [thinking, said]},
    ]
    (_, copied) = redacted(span)
    assert copied["content"][0] is thinking  # as it was, not a redacted copy
    assert copied["content"][1]["text"] == "Deploying with [REDACTED:anthropic-key] now."
    without = [span[0], {"role": "assistant", "content": [said]}]
    summarizer = ExtractiveSummarizer(counter_for())
    summary = summarizer.summarize(SummaryRequest(span, "structured", 400)).text
    assert summary == summarizer.summarize(SummaryRequest(without, "structured", 400)).text
    assert key not in summary and "use it" not in summary
