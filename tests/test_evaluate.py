"""``eval``: probes from the full history in four families, scored from the compacted one."""

from __future__ import annotations

import json

from compactctl.compaction import compact
from compactctl.evaluate import FAMILIES, evaluate, probes
from tests.helpers import call
from tests.summarizers.openai_server import Behaviour

SESSION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the flaky login test. Never change the public API. Results must be in CSV."},
    {
        "role": "assistant",
        "content": "Reading the test first.",
        "tool_calls": [call("c1", "Read", json.dumps({"file_path": "tests/test_login.py"}))],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "def test_login():\n" + "    assert login(user)\n" * 300},
    {
        "role": "assistant",
        "content": "Patching the timeout.",
        "tool_calls": [call("c2", "Edit", json.dumps({"file_path": "src/auth/session.py", "old_string": "1"}))],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "ok"},
    {"role": "assistant", "content": None, "tool_calls": [call("c3", "Bash", json.dumps({"command": "make test"}))]},
    {
        "role": "tool",
        "tool_call_id": "c3",
        "content": "FAILED tests/test_login.py::test_login - TimeoutError: login took 5.2 s\n1 failed, 41 passed",
    },
    {"role": "user", "content": "Let's use a 10 s timeout instead. Then rerun make test."},
    {"role": "assistant", "content": "Switching to 10 s."},
]


def by_family(found):
    return {family: [p.answer for p in found if p.family == family] for family in FAMILIES}


def test_probes_come_from_the_history_in_four_families():
    found = by_family(probes(SESSION))
    # Errors the latest first: the test summary line, then the failure line above it.
    assert found["recall"][:2] == [
        "1 failed, 41 passed",
        "FAILED tests/test_login.py::test_login - TimeoutError: login took 5.2 s",
    ]
    # Numbers keep the words that say what they measure.
    assert "TimeoutError: login took 5.2 s" in found["recall"] and "Let's use a 10 s" in found["recall"]
    assert found["artifact"] == ["src/auth/session.py"]  # changed, not merely read
    assert found["continuation"] == [
        "Let's use a 10 s timeout instead. Then rerun make test.",
        "src/auth/session.py",
        "make test",
    ]
    assert found["decision"][:2] == ["Results must be in CSV.", "Never change the public API."]
    assert "Let's use a 10 s timeout instead." in found["decision"]


def test_the_history_itself_answers_every_probe_and_a_bare_window_does_not():
    full = evaluate(SESSION, SESSION)
    assert full.total() == (len(full.scored), len(full.scored))
    window = compact(SESSION, ["window"], {"keep_recent": 2}).messages
    cut = evaluate(SESSION, window)
    assert cut.total()[0] < full.total()[0]
    assert cut.family("decision")[0] == 1  # only the request still in the window
    structured = evaluate(SESSION, compact(SESSION, ["structured"], {"keep_turns": 1, "keep_recent": 2}).messages)
    assert structured.total()[0] > cut.total()[0]


def test_an_answer_matches_normalized_not_only_verbatim():
    after = [{"role": "system", "content": "the user said: **never change  the PUBLIC api.**"}]
    scored = {s.probe.answer: s.present for s in evaluate(SESSION, after).scored}
    assert scored["Never change the public API."] is True
    assert scored["Results must be in CSV."] is False


def test_a_judge_answers_from_after_alone_through_the_real_client(openai_server):
    from compactctl.summarizers.judge import JudgeConfig, OpenAIJudge

    after = compact(SESSION, ["structured"], {"keep_turns": 1, "keep_recent": 2}).messages
    count = len(probes(SESSION))
    replies = []
    for n in range(count):
        replies += [Behaviour(text=f"answer {n}"), Behaviour(text="yes" if n % 2 == 0 else "No.")]
    openai_server.enqueue(*replies)
    judged = evaluate(SESSION, after, OpenAIJudge(JudgeConfig(model="judge-model", base_url=openai_server.url)))
    assert [s.judged for s in judged.scored] == [n % 2 == 0 for n in range(count)]
    assert [s.reply for s in judged.scored] == [f"answer {n}" for n in range(count)]
    asked, graded = openai_server.requests[0].body, openai_server.requests[1].body
    assert asked["model"] == "judge-model" and asked["max_tokens"] == 300  # a local server reads max_tokens
    history = asked["messages"][1]["content"]
    assert history.startswith("<history>\n") and "[compactctl summary of" in history
    assert "Fix the flaky login test." not in history.split("</history>")[0].split("## Goal")[0]
    assert graded["messages"][1]["content"].startswith(f"Question: {judged.scored[0].probe.question}\nExpected: ")
    assert judged.total(judged=True) == ((count + 1) // 2, count)
