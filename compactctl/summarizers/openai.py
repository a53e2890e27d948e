"""The model summarizer, through the official ``openai`` client (chat completions or responses).

This is the only module that imports ``openai``, and the registry (``build.SUMMARIZERS``)
imports it only when ``--summarizer openai`` is asked for: most commands never pay for it.

Retries are ours, not the client's (``max_retries=0``), so the backoff is a setting
and tests can make it short: 429, 408/409, 5xx, timeouts and connection errors are
retried with exponential backoff (a ``Retry-After`` header is honoured, capped), then
``SummarizerError`` (exit 3) is raised and nothing is written.

Faults a server can send with a 200 (an HTML page, malformed JSON, another shape) are
checked in ``replies`` and fail at once with a one-line reason. ``timeout`` bounds each
whole request, slow bytes included (the client's own timeout is per read, so a server
trickling one byte a second would never trip it): the request runs on a worker thread and
is abandoned at the deadline. ``deadline`` bounds all the run's requests together, retries
and backoff included; after ``fail_after`` failed summaries in a row the server is not
called again in this run, so a batch against a dead server fails fast, file after file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time
from typing import IO, Any

import openai

from compactctl import lazyre
from compactctl.errors import InputError, SummarizerError
from compactctl.summarizers import ContextExceeded, Summary, SummaryRequest
from compactctl.summarizers.cache import DiskCache, cache_key
from compactctl.summarizers.extractive import verbatim
from compactctl.summarizers.openai_config import OpenAIConfig, config_of
from compactctl.summarizers.options import SummarizerOptions
from compactctl.summarizers.redact import redact, redact_messages, redact_reply, redact_url
from compactctl.summarizers.replies import NonConforming, chat_reply, decode, responses_reply, with_fences_closed
from compactctl.summarizers.request import (
    VERBATIM_NOTE,
    Built,
    build_request,
    max_tokens_field,
    part_note,
    prompt_for,
)
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage

NAME = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER = 60.0
RETRIED_STATUSES = frozenset({408, 409, 429})
DRY_RUN_TEXT = "(dry run: no summary was requested)"
# finish_reason values that mean "cut off by the token limit": OpenAI, vLLM, llama.cpp and Ollama
# say "length"; some compatible servers pass an Anthropic-style "max_tokens" through.
# Of a summary's bound, what the verbatim ledger and user messages may take; the model writes the rest.
VERBATIM_SHARE = 0.4
MIN_PROSE_TOKENS = 256
# A server that reports reading less than 1/this of what compactctl counted in a request truncated it:
# tokenizers differ by far less than this factor.
TRUNCATED_PROMPT = 2.5
# Kept free in the server's window beside our count of a request: the chat template's own tokens.
WINDOW_MARGIN = 64
# Where servers state their context window in ``GET /models``: vLLM ``max_model_len``; LM Studio and
# proxies ``context_length`` / ``context_window``; llama.cpp's llama-server ``meta.n_ctx_train``.
WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "n_ctx", "max_context_length")
# How servers refuse a request larger than their window. OpenAI, vLLM and llama-cpp-python:
# "maximum context length is N tokens. However, you requested M tokens (P in the messages, ...)";
# llama.cpp's llama-server: "request (P tokens) exceeds the available context size (N tokens)".
WINDOW_REFUSALS = (
    lazyre.compile(r"maximum context length is (?P<window>\d+) tokens(?:.*?\((?P<prompt>\d+) in the messages)?", re.S),
    lazyre.compile(r"request \((?P<prompt>\d+) tokens\) exceeds the available context size \((?P<window>\d+) tokens\)"),
    lazyre.compile(r"Requested tokens \((?P<prompt>\d+)\) exceed context window of (?P<window>\d+)"),
)


def build(
    options: SummarizerOptions,
    counter: TokenCounter | None = None,
    out: IO[str] | None = None,
    dry_run: bool = False,
) -> OpenAISummarizer:
    """The summarizer the options describe (``dry_run``: print each request, send nothing)."""
    return OpenAISummarizer(config_of(options, dry_run), out or sys.stdout, counter)


class OpenAISummarizer:
    """Summaries from a model behind an OpenAI-compatible API."""

    def __init__(self, config: OpenAIConfig, out: IO[str] | None = None, counter: TokenCounter | None = None) -> None:
        self.config = config
        self.out = out or sys.stdout
        self.counter = counter or counter_for()
        self.tokens_field = max_tokens_field(config.max_tokens_field, config.base_url)
        self.cache = DiskCache(config.cache_dir) if config.cache_dir is not None else None
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self._key = config.api_key or os.environ.get("OPENAI_API_KEY")
        self._started = time.monotonic()
        self._failures_in_a_row = 0
        self._last_failure = ""
        self._window: int | None = None  # the server's context window, in its tokens, once known
        self._window_asked = False
        self._ratio = 1.0  # our tokens per server token, from the usage the server reports

    @property
    def base_url(self) -> str:
        return (self.config.base_url or DEFAULT_BASE_URL).rstrip("/")

    @property
    def shown_url(self) -> str:
        """The base URL as printed (errors, ``--dry-run``): a password in it is masked."""
        return redact_url(self.base_url, (self._key,))

    @property
    def redacts(self) -> bool:
        """Whether requests and summaries are redacted (strategies redact what they add to a summary, too)."""
        return self.config.redact

    def redact_span(self, span: list[Message], previous: str | None) -> tuple[list[Message], str | None]:
        """Whole messages with their secrets redacted (unless ``--no-redact``): before any chunking."""
        if not self.config.redact:
            return span, previous
        return redact_messages(span)[0], redact(previous)[0] if previous else previous

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                # Checked on first use: a run whose steps summarize nothing needs no key.
                if not self._key and self.config.base_url is None:
                    raise InputError(
                        f"the openai {self.config.role} needs OPENAI_API_KEY (or `base_url` for a local server)"
                    )
                self._client = openai.OpenAI(
                    # A local server without auth still needs some key for the client to start.
                    api_key=self._key or "no-key",
                    base_url=self.base_url,
                    timeout=self.config.timeout,
                    max_retries=0,
                )
            return self._client

    def input_limit(self, max_tokens: int) -> int | None:
        """The most a request may hold, in our tokens, in the server's context window; None when not known.

        The window comes from ``GET /models`` where the server states it (vLLM, llama-server), else
        from the server's refusal of a larger request (llama-cpp-python, OpenAI). The reply shares
        the window, and the server counts with its own tokenizer: the ratio of its counts to ours
        (from the usage it reports) converts.
        """
        window = self.window()
        if window is None:
            return None
        return max(0, int((window - max_tokens) * self._ratio) - WINDOW_MARGIN)

    def window(self) -> int | None:
        with self._lock:
            if self._window is not None or self._window_asked or self.config.dry_run:
                return self._window
            self._window_asked = True
        found = self._stated_window() if self.config.base_url is not None else None
        with self._lock:
            self._window = self._window or found
            return self._window

    def _stated_window(self) -> int | None:
        """The window ``GET /models`` states for this model, if the server states one."""
        try:
            client = self.client().with_options(timeout=min(self.config.timeout, 10.0))
            raw = client.models.with_raw_response.list()
            data = decode(raw.content, raw.headers.get("content-type"))
        except (openai.OpenAIError, NonConforming, InputError):
            return None
        entries = [e for e in data.get("data") or () if isinstance(e, dict)]
        mine = [e for e in entries if e.get("id") == self.config.model] or (entries if len(entries) == 1 else [])
        for entry in mine:
            meta = entry.get("meta")
            for place in (entry, meta if isinstance(meta, dict) else {}):
                for key in (*WINDOW_FIELDS, "n_ctx_train"):
                    value = place.get(key)
                    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                        return value
        return None

    def _learn(self, ours: int, theirs: int) -> None:
        """The server counted ``theirs`` tokens in a request we counted ``ours``: the ratio converts windows."""
        if ours > 0 and theirs > 0:
            with self._lock:
                self._ratio = ours / theirs

    def _refused_as_too_large(self, built: Built, error: Exception) -> ContextExceeded | None:
        message = str(getattr(error, "message", "") or error)
        for pattern in WINDOW_REFUSALS:
            match = pattern.search(message)
            if match:
                window = int(match.group("window"))
                if match.group("prompt"):
                    self._learn(self._counted(built), int(match.group("prompt")))
                with self._lock:
                    self._window = window
                first = redact(message.splitlines()[0][:200])[0]
                return ContextExceeded(window, self._describe_text(f"HTTP 400: {first}", 1))
        return None

    def _counted(self, built: Built) -> int:
        """Our count of what a request sends to the model: its prompt and data."""
        body = built.body
        parts = [str(m.get("content", "")) for m in body.get("messages", ())] or [
            str(body.get("instructions", "")),
            str(body.get("input", "")),
        ]
        return sum(self.counter(part) for part in parts)

    def prompt_text(self, strategy: str, max_tokens: int) -> str:
        """The prompt a request for ``strategy`` carries: strategies keep room for it in each request."""
        return prompt_for(strategy, max_tokens, self.config.prompts)

    def overhead_tokens(self, strategy: str, max_tokens: int, counter: TokenCounter) -> int:
        """What a request holds besides its messages and the running summary: prompt, notes, verbatim block."""
        notes = part_note((2, 3)) + VERBATIM_NOTE
        return counter(self.prompt_text(strategy, max_tokens)) + counter(notes) + int(VERBATIM_SHARE * max_tokens) + 16

    def split(self, request: SummaryRequest) -> tuple[str, int]:
        """The verbatim block for this request (the last part only) and the tokens left for the model's prose."""
        if not request.is_last:
            return "", request.max_tokens
        span = request.whole_span or request.messages
        # Never more than a quarter of what it summarizes: on a short span the model's prose is the summary.
        share = min(int(VERBATIM_SHARE * request.max_tokens), self.counter.messages(span) // 4)
        block = verbatim(span, self.counter, share)
        return block, max(MIN_PROSE_TOKENS, request.max_tokens - self.counter(block))

    def summarize(self, request: SummaryRequest) -> Summary:
        config = self.config
        block, prose_tokens = self.split(request)
        built = build_request(
            request,
            model=config.model,
            api=config.api,
            overrides=config.prompts,
            redact_secrets=config.redact,
            verbatim=block,
            max_tokens=prose_tokens,
            tokens_field=self.tokens_field,
            temperature=config.temperature,
        )
        if config.dry_run:
            with self._lock:
                shown = {
                    "method": "POST",
                    "url": self.shown_url + built.path,
                    "part": list(request.part),
                    "body": built.body,
                    "appended_after_the_reply": block or None,
                }
                self.out.write(json.dumps(shown, indent=2, ensure_ascii=False) + "\n")
                self.out.flush()
            return Summary(_joined(DRY_RUN_TEXT, block))
        summary = self.complete(built, request.max_tokens)
        # The ledger and the user's words, appended as written: identifiers survive whatever the model wrote.
        # A code block the model left open (a real server's reply cut at the bound stops mid-block) is
        # closed first, so they stay Markdown sections, not lines of its code.
        return Summary(_joined(with_fences_closed(summary.text), block), summary.usage, summary.truncated)

    def complete(self, built: Built, max_tokens: int, require_text: bool = True) -> Summary:
        """One request as built, through the disk cache and the retries: the model's own text.

        The summaries and the judge's answers (``judge.OpenAIJudge``) both come through here, so
        both are cached under a hash of the whole request and retried the same way.
        """
        config = self.config
        key = cache_key(model=config.model, api=config.api, path=built.path, body=built.body, max_tokens=max_tokens)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("text"), str):
                # No call was made: no calls, no tokens; a cut-off summary is still flagged.
                truncated = bool(hit.get("truncated"))
                return Summary(hit["text"], SummarizerUsage(truncated=int(truncated)), truncated)
        summary = self._with_retries(built, require_text)
        if self.cache is not None:
            self.cache.put(key, {"text": summary.text, "truncated": summary.truncated, "model": config.model})
        return summary

    def _with_retries(self, built: Built, require_text: bool = True) -> Summary:
        with self._lock:
            if self._failures_in_a_row >= self.config.fail_after:
                raise SummarizerError(
                    f"openai {self.config.role} ({self.config.model} at {self.shown_url}): not called, the server "
                    f"failed {self._failures_in_a_row} times in a row (last: {self._last_failure})"
                )
        try:
            summary = self._attempts(built, require_text)
        except ContextExceeded:
            raise  # not a failure of the server: the caller cuts the request to the window it stated
        except SummarizerError as error:
            with self._lock:
                self._failures_in_a_row += 1
                self._last_failure = str(error).partition("): ")[2] or str(error)
            raise
        with self._lock:
            self._failures_in_a_row = 0
        return summary

    def _attempts(self, built: Built, require_text: bool = True) -> Summary:
        attempts = self.config.retries + 1
        # One summary's attempts share --summary-request-deadline: a server that hangs costs the
        # file that long, not (timeout + backoff) x attempts.
        give_up = time.monotonic() + self.config.request_deadline
        for attempt in range(attempts):
            left = give_up - time.monotonic()
            if left <= 0:
                what = f"no reply within `summary_request_deadline` ({self.config.request_deadline:g} s)"
                raise SummarizerError(self._describe_text(what, attempt))
            bound = min(self._bound(attempt), left)
            try:
                return self._send_within(built, bound, require_text)
            except NonConforming as error:  # a 200 of the wrong shape: another try would get the same
                raise SummarizerError(self._describe_text(f"the 200 reply is {error}", attempt + 1)) from None
            except (openai.APIConnectionError, openai.APIStatusError, RequestTimeout) as error:
                status = getattr(error, "status_code", None)
                retryable = status is None or status in RETRIED_STATUSES or status >= 500
                if not retryable or attempt == attempts - 1:
                    raise SummarizerError(self._describe(error, attempt + 1)) from None
                delay = self._delay(error, attempt)
                if time.monotonic() + delay >= give_up:
                    note = (
                        f"; `summary_request_deadline` ({self.config.request_deadline:g} s) leaves no time for another"
                    )
                    raise SummarizerError(self._describe(error, attempt + 1) + note) from None
                remaining = self._remaining()
                if remaining is not None and delay >= remaining:
                    raise SummarizerError(self._describe(error, attempt + 1) + self._deadline_note()) from None
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _remaining(self) -> float | None:
        if self.config.deadline is None:
            return None
        return self.config.deadline - (time.monotonic() - self._started)

    def _deadline_note(self) -> str:
        return f"; the run's `summary_deadline` of {self.config.deadline:g} s leaves no time for another"

    def _bound(self, attempt: int) -> float:
        """Seconds this attempt may take: the request timeout, cut to what the run's deadline leaves."""
        remaining = self._remaining()
        if remaining is None:
            return self.config.timeout
        if remaining <= 0:
            what = f"the run's `summary_deadline` of {self.config.deadline:g} s has passed"
            raise SummarizerError(self._describe_text(what, attempt))
        return min(self.config.timeout, remaining)

    def _send_within(self, built: Built, seconds: float, require_text: bool = True) -> Summary:
        """``_send`` on a worker thread, abandoned after ``seconds``: a trickling reply cannot hold the run."""
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                outcome["summary"] = self._send(built, require_text)
            except BaseException as error:  # handed to the waiting thread, which raises it
                outcome["error"] = error
            finally:
                done.set()

        threading.Thread(target=work, name="compactctl-summary-request", daemon=True).start()
        if not done.wait(seconds):  # interruptible: Ctrl-C is not held up by a slow server
            raise RequestTimeout(seconds)
        if "error" in outcome:
            raise outcome["error"]
        summary: Summary = outcome["summary"]
        return summary

    def _delay(self, error: Exception, attempt: int) -> float:
        delay = self.config.backoff * 2**attempt
        response = getattr(error, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        if header:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(float(header), MAX_RETRY_AFTER))
        return delay

    def _describe(self, error: Exception, attempts: int) -> str:
        status = getattr(error, "status_code", None)
        if isinstance(error, RequestTimeout):
            what = f"timed out after {error.seconds:g} s"
        elif isinstance(error, openai.APITimeoutError):
            what = f"timed out after {self.config.timeout:g} s"
        elif status is None:
            what = f"connection failed ({error.__class__.__name__})"
        else:
            message = getattr(error, "message", "") or ""
            # A server's error text may echo the request or the key (a 401): redacted whole as the
            # request is, the key masked wherever a piece of it shows, and only then cut.
            first = redact_reply(message, (self._key,)) if message else error.__class__.__name__
            what = f"HTTP {status}: {first}"
        return self._describe_text(what, attempts)

    def _describe_text(self, what: str, attempts: int) -> str:
        tries = f" after {attempts} attempt{'s' if attempts > 1 else ''}" if attempts else ""
        # Every error line passes here: whatever it quotes is redacted with the request's function.
        shown = redact_reply(what, (self._key,), limit=400)
        return f"openai {self.config.role} ({self.config.model} at {self.shown_url}): {shown}{tries}"

    def _send(self, built: Built, require_text: bool = True) -> Summary:
        try:
            return self._send_once(built, require_text)
        except openai.BadRequestError as error:
            too_large = self._refused_as_too_large(built, error)
            if too_large is not None:
                raise too_large from None
            # A server that refuses this reply bound's field names the other one: switch once, remember it.
            other = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}
            field_ = next((f for f in other if f in built.body), None)
            if field_ is None or other[field_] not in str(getattr(error, "message", "")):
                raise
            body = {k: v for k, v in built.body.items() if k != field_} | {other[field_]: built.body[field_]}
            self.tokens_field = other[field_]
            return self._send_once(Built(built.path, body, built.redactions), require_text)

    def _send_once(self, built: Built, require_text: bool = True) -> Summary:
        body: dict[str, Any] = dict(built.body)
        client = self.client()
        # The raw reply, checked here: the client's own parsing turns an HTML page into a str
        # and a wrong shape into an AttributeError later on.
        if self.config.api == "chat":
            raw = client.chat.completions.with_raw_response.create(**body)
            reply = chat_reply(decode(raw.content, raw.headers.get("content-type")))
        else:
            raw = client.responses.with_raw_response.create(**body)
            reply = responses_reply(decode(raw.content, raw.headers.get("content-type")))
        if require_text and not reply.text.strip():
            why = " (cut off by the token limit)" if reply.truncated else ""
            raise SummarizerError(f"openai {self.config.role} ({self.config.model}): the model returned no text{why}")
        ours = self._counted(built)
        if reply.truncated and reply.prompt_tokens and ours > TRUNCATED_PROMPT * reply.prompt_tokens:
            # The server read a fraction of what was sent and answered anyway (Ollama truncates a prompt past
            # num_ctx without a word, then ends on finish_reason "length"): what it read is its window; the
            # span is cut to fit and sent again. (A count cut by a prompt cache alone comes without "length".)
            with self._lock:
                self._window, self._ratio = reply.prompt_tokens, 1.0
            what = (
                f"the server read {reply.prompt_tokens:,} tokens of a request of about {ours:,}: it truncated the "
                "prompt to its context window"
            )
            raise ContextExceeded(reply.prompt_tokens, self._describe_text(what, 1))
        self._learn(ours, reply.prompt_tokens)
        usage = SummarizerUsage(1, reply.prompt_tokens, reply.completion_tokens, int(reply.truncated))
        return Summary(reply.text.strip(), usage, reply.truncated)


def _joined(text: str, block: str) -> str:
    return f"{text}\n\n{block}" if block else text


class RequestTimeout(Exception):
    """A whole request (connect, headers, every byte of the body) took longer than allowed."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:g} s")
        self.seconds = seconds
