"""The judge goes through the summarizer's transport: retried as summaries are, and cached on disk."""

from __future__ import annotations

import pytest

from compactctl.errors import SummarizerError
from compactctl.summarizers.judge import OpenAIJudge, judge_config


def judge_for(server, tmp_path, **settings):
    base = {
        "judge_model": "judge-model",
        "base_url": server.url,
        "summary_timeout": 5,
        "summary_retries": 2,
        "summary_backoff": 0.01,
        "cache_dir": str(tmp_path / "cache"),
        "summary_temperature": 0,
    }
    return OpenAIJudge(judge_config({**base, **settings}))


def test_a_429_then_a_500_are_retried_and_the_answer_comes_through(openai_server, tmp_path):
    openai_server.enqueue("429", "500")
    openai_server.text = "src/app.py"
    assert judge_for(openai_server, tmp_path).answer("Which file?", "[1] user: fix src/app.py") == "src/app.py"
    assert len(openai_server.requests) == 3
    assert openai_server.requests[-1].body["temperature"] == 0


def test_a_rerun_asks_the_server_nothing(openai_server, tmp_path):
    openai_server.text = "yes"
    assert judge_for(openai_server, tmp_path).grade("Which file?", "src/app.py", "src/app.py") is True
    asked = len(openai_server.requests)
    openai_server.text = "no"  # a new request would now be graded otherwise
    assert judge_for(openai_server, tmp_path).grade("Which file?", "src/app.py", "src/app.py") is True
    assert len(openai_server.requests) == asked == 1


def test_a_server_that_keeps_failing_stops_the_judge_with_the_summarizers_error(openai_server, tmp_path):
    openai_server.enqueue("500", "500", "500")
    with pytest.raises(SummarizerError, match=r"HTTP 500.*after 3 attempts"):
        judge_for(openai_server, tmp_path, cache=False).answer("Which file?", "history")
