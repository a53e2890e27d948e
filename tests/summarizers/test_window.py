"""Chunks follow the server's context window: stated by ``GET /models``, or learned from its refusal."""

from __future__ import annotations

from compactctl.compaction import compact
from compactctl.summarizers.build import make_summarizer
from compactctl.tokens import counter_for
from tests.review.conftest import session

COUNTER = counter_for("approx")


def summarizer_for(server, tmp_path, **settings):
    base = {
        "summarizer": "openai",
        "base_url": server.url,
        "model": "small-local",
        "summary_backoff": 0.01,
        "summary_retries": 1,
        "summary_timeout": 5,
        "cache": False,
    }
    return make_summarizer({**base, **settings}, COUNTER)


def sizes(server) -> list[int]:
    """What each chat request held, in the fake server's own count (4 characters a token)."""
    return [sum(len(str(m["content"])) // 4 for m in r.body["messages"]) for r in server.requests]


def test_a_window_the_server_states_in_models_cuts_the_span_before_any_request(openai_server, tmp_path):
    messages = session(rounds=10)
    openai_server.models = {"object": "list", "data": [{"id": "small-local", "object": "model", "max_model_len": 3000}]}
    openai_server.window = 3000  # and it would refuse a larger request
    summarizer = summarizer_for(openai_server, tmp_path)
    result = compact(messages, ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER, summarizer=summarizer)
    assert len(openai_server.requests) >= 2  # the 32,000 default would have sent one request
    assert max(sizes(openai_server)) <= 3000  # none refused: every request fits the stated window
    assert result.usage.calls == len(openai_server.requests)


def test_a_refusal_naming_the_window_is_learned_and_the_span_cut_to_fit(openai_server, tmp_path):
    messages = session(rounds=10)
    openai_server.window = 3200  # no /models: only the refusal says how large the window is
    summarizer = summarizer_for(openai_server, tmp_path)
    result = compact(messages, ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER, summarizer=summarizer)
    refused, *accepted = sizes(openai_server)
    assert refused > 3200 and accepted and max(accepted) <= 3200
    assert result.usage.calls == len(accepted)  # the refusal is not a summary
    assert "compactctl summary" in result.messages[1]["content"]


def test_a_window_too_small_for_a_summary_is_a_usage_error_that_says_so(openai_server, tmp_path):
    import pytest

    from compactctl.errors import InputError

    openai_server.window = 900
    summarizer = summarizer_for(openai_server, tmp_path)
    with pytest.raises(InputError, match="the server's context window leaves"):
        compact(
            session(rounds=10), ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER, summarizer=summarizer
        )


def test_a_server_that_truncates_the_prompt_silently_is_caught_by_its_usage_and_the_span_cut(openai_server, tmp_path):
    messages = session(rounds=10)
    openai_server.window, openai_server.truncates = 3200, True  # as Ollama past num_ctx: a 200, and less read
    summarizer = summarizer_for(openai_server, tmp_path)
    result = compact(messages, ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER, summarizer=summarizer)
    truncated, *accepted = sizes(openai_server)
    assert truncated > 2.5 * 3200 and accepted and max(accepted) <= 3200
    assert result.usage.calls == len(accepted) and result.usage.truncated == 0  # the cut reply was not kept
