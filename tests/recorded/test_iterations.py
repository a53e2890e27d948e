"""A response's sampling passes (``usage.iterations``), billed as Claude Code 2.1.332's own cost function bills them
(its bundle: the advisor's ``advisor_message`` passes added at their model, under the response's ``inference_geo``; a
fallback's ``fallback_message`` passes alone where one served, less a last one still refused), and a server-side
compaction's pass, which the top-level usage leaves out, at the request's model."""

from __future__ import annotations

from typing import Any

from compactctl.recorded import ApiUsage
from compactctl.recorded.iterations import billed


def _pass(kind: str, input_tokens: int, output_tokens: int, model: str | None = None, read: int = 0) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": kind, "input_tokens": input_tokens, "output_tokens": output_tokens,
                             "cache_read_input_tokens": read, "cache_creation_input_tokens": 0}  # fmt: skip
    return {**entry, "model": model} if model else entry


def _top(passes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The top-level usage the API reports: the sum of the executor's passes."""
    executor = [p for p in passes if p["type"] == "message"]
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return {**{key: sum(p[key] for p in executor) for key in keys}, "iterations": passes, **extra}


def test_a_response_of_one_pass_is_its_top_level_usage():
    plain = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 900, "iterations": []}
    bill = billed(plain, "claude-sonnet-4-6", None)
    assert bill == billed({k: v for k, v in plain.items() if k != "iterations"}, "claude-sonnet-4-6", None)
    assert bill.usage == ApiUsage(1000, cached_tokens=900, output_tokens=20) and bill.passes == ()


def test_an_advice_is_billed_at_the_advisors_model_beside_the_executors_passes():
    passes = [_pass("message", 20_000, 30, read=0), _pass("advisor_message", 20_030, 1_500, "claude-opus-4-7"),
              _pass("message", 600, 40, read=20_100)]  # fmt: skip
    top = _top(passes)
    bill = billed(top, "claude-sonnet-4-6", 1.0)
    # The call is the context as sent, with all that the executor wrote.
    assert bill.model == "claude-sonnet-4-6"
    assert bill.usage == ApiUsage(20_000, output_tokens=70)
    assert [(p.model, p.usage) for p in bill.passes] == [
        ("claude-sonnet-4-6", ApiUsage(20_700, cached_tokens=20_100)),  # its output is the call's
        ("claude-opus-4-7", ApiUsage(20_030, output_tokens=1_500)),
    ]
    assert all(p.timestamp == 1.0 for p in bill.passes)
    total = bill.usage + bill.passes[0].usage  # type: ignore[operator]
    everything = top["input_tokens"] + top["cache_read_input_tokens"]
    assert (total.input_tokens, total.output_tokens) == (everything, top["output_tokens"])  # counted once


def test_an_advice_is_priced_under_the_responses_inference_geo_never_in_fast_mode():
    passes = [_pass("message", 1_000, 10), _pass("advisor_message", 1_010, 500, "claude-opus-4-7")]
    bill = billed(_top(passes, speed="fast", inference_geo="us"), "claude-opus-5", None)
    (advice,) = bill.passes
    assert advice.pricing == (("inference_geo", "us"),)


def test_a_server_side_compaction_is_billed_at_the_requests_model():
    """The API's own example: the summarizing pass read 180,000 tokens and wrote 3,500; the top-level usage is the
    response's pass after it alone (23,000 in, 1,000 out)."""
    passes = [_pass("compaction", 180_000, 3_500), _pass("message", 23_000, 1_000)]
    bill = billed(_top(passes), "claude-opus-4-7", None)
    assert bill.usage == ApiUsage(23_000, output_tokens=1_000)
    assert [(p.model, p.usage) for p in bill.passes] == [("claude-opus-4-7", ApiUsage(180_000, output_tokens=3_500))]


def test_a_fallback_bills_its_own_passes_and_not_the_refused_ones():
    refused, served = _pass("message", 5_000, 40), _pass("fallback_message", 5_000, 300, "claude-sonnet-4-6")
    usage = {"input_tokens": 5_000, "output_tokens": 300, "iterations": [refused, served]}
    bill = billed(usage, "claude-opus-4-7", None, stop_reason="end_turn")
    assert bill.model == "claude-sonnet-4-6"
    assert bill.usage == ApiUsage(5_000, output_tokens=300) and bill.passes == ()
    # A response still refused after its fallbacks: the last fallback's pass is not billed either.
    again = _pass("fallback_message", 5_100, 20, "claude-haiku-4-5")
    usage = {"input_tokens": 5_100, "output_tokens": 20, "iterations": [refused, served, again]}
    bill = billed(usage, "claude-opus-4-7", None, stop_reason="refusal")
    assert bill.model == "claude-sonnet-4-6" and bill.usage == ApiUsage(5_000, output_tokens=300)
    assert bill.passes == ()


def test_executor_passes_that_do_not_add_up_leave_the_top_level_as_the_call():
    """The client prices the passes one by one only where they sum to the top-level usage; else the top-level."""
    passes = [_pass("message", 900, 10), _pass("advisor_message", 910, 200, "claude-opus-4-7")]
    usage = {"input_tokens": 1_000, "output_tokens": 10, "iterations": passes}
    bill = billed(usage, "claude-sonnet-4-6", None)
    assert bill.usage == ApiUsage(1_000, output_tokens=10)
    assert [p.model for p in bill.passes] == ["claude-opus-4-7"]
