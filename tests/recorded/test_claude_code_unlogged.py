"""What Claude Code sent that its log leaves out, rebuilt from what the log does hold.

The fixture is the real Claude Code 1.0.108 (the version of the real sessions in
shared/transcripts) against the loopback fake, which reports each request's input as its
cl100k tokens (``tests.fakes.record_fixtures.claude_code_1_0_fixture``): a file it had read
changed on disk by ``sed -i`` (the client sent a reminder with the changed lines and logged
none), and a long Write whose record carries the usage of the stream's start (``output_tokens``
1). Both happen in the held-out half of the calls.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compactctl.calibration import calibrate, call_features, features
from compactctl.formats.records import parse_records
from compactctl.recorded import ApiUsage, RecordedCall, RecordedContext, claude_code, claude_code_files
from compactctl.tokens import counter_for
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "claude-code-1.0.108-changed-file.jsonl"


def _session():
    return claude_code.read(parse_records(FIXTURE.read_bytes(), str(FIXTURE))[0], str(FIXTURE))


def test_the_changed_file_reminder_is_rebuilt_as_claude_code_1_0_sent_it_after_the_command():
    (sent,) = json.loads((DATA / "claude-code-1.0.108-changed-file.reminder.json").read_text())
    (context,) = _session().contexts
    rebuilt = [m for m in context.messages if "was modified, either by the user" in str(m.get("content"))]
    assert len(rebuilt) == 1
    at = context.messages.index(rebuilt[0])
    assert "sed -i" in json.dumps(context.messages[at - 2].get("tool_calls"))  # after the command's result
    counter = counter_for()
    assert counter(rebuilt[0]["content"]) == pytest.approx(counter(sent), rel=0.01)
    assert rebuilt[0]["content"].splitlines()[2:6] == sent.splitlines()[2:6]  # the numbered new lines
    assert sent.endswith(rebuilt[0]["content"])  # to the character: the hunk ends at the file's last line


def test_a_claude_code_1_0_session_calibrates_within_1_percent_held_out_with_what_its_log_left_out():
    calibration = calibrate(_session(), "claude-code")
    assert calibration.unlogged == {}  # nothing the usage shows is left unexplained
    assert calibration.held_out.median < 0.01 and calibration.held_out.p90 < 0.01
    assert calibration.ratio == pytest.approx(1.0, abs=0.03)  # the fake counts in cl100k


def test_without_the_reminder_or_the_stale_usage_the_held_out_calls_are_far_off(monkeypatch):
    monkeypatch.setattr(claude_code, "changed_file_reminders", lambda values: {})
    assert calibrate(_session(), "claude-code").held_out.p90 > 0.05
    monkeypatch.undo()
    monkeypatch.setattr(features, "stale_output", lambda output, visible: False)
    assert calibrate(_session(), "claude-code").held_out.p90 > 0.05


def test_a_later_version_that_logs_its_attachments_gets_no_rebuilt_reminder():
    values = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    assert claude_code_files.changed_file_reminders(values)
    newer = [{**v, "version": "2.1.332"} if "version" in v else v for v in values]
    assert claude_code_files.changed_file_reminders(newer) == {}
    logged = [*values, {"type": "attachment", "attachment": {"type": "edited_text_file"}}]
    assert claude_code_files.changed_file_reminders(logged) == {}


def test_the_cause_is_the_formatter_run_not_an_earlier_command_naming_the_file():
    results = [(1, "npm test test/a.ts"), (2, "npm run check:format"), (3, "npx prettier --write test/a.ts")]
    assert claude_code_files._cause(results, 0) == 3
    assert claude_code_files._cause([(1, "npm test"), (2, "git restore --staged logs/")], 0) == 1


def _turns(model: str) -> RecordedContext:
    thinking = {"type": "thinking", "thinking": "Let me weigh the options. " * 40, "signature": "s"}
    messages = [
        {"role": "user", "content": "First task."},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "Done."}]},
        {"role": "user", "content": "Second task."},
        {"role": "assistant", "content": "Also done."},
    ]
    calls = [
        RecordedCall(1, model, None, ApiUsage(1_000, output_tokens=600)),
        RecordedCall(3, model, None, ApiUsage(1_100, output_tokens=10)),
    ]
    return RecordedContext("main", messages, calls)


@pytest.mark.parametrize(
    ("model", "drops"), [("claude-sonnet-4-5-20250929", True), ("claude-opus-4-5-20251101", False)]
)
def test_earlier_turns_thinking_leaves_the_input_at_a_new_prompt_where_the_api_strips_it(model, drops):
    counter = counter_for("cl100k_base", "anthropic")
    _, second = call_features(_turns(model), counter, counter_for())
    # The response stays as its billed output (600), or where the API strips it, as its other blocks alone.
    visible = counter.message({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    assert second.resent == (round(1.2 * visible) if drops else 600)
    assert features.strips_thinking(model) is drops


FORMATTED = DATA / "claude-code-1.0.69-formatted-file.jsonl"


def _formatted():
    return claude_code.read(parse_records(FORMATTED.read_bytes(), str(FORMATTED))[0], str(FORMATTED))


def test_files_prettier_rewrote_that_the_log_never_shows_again_get_the_reminders_claude_code_1_0_sent():
    """The real 1.0.69 sent the formatted files' reminders with prettier's ``app.ts 181ms``: app.ts it
    had written, lib.ts a ``cat`` had shown. The log holds prettier's lines alone and never shows
    either file again."""
    (sent,) = json.loads((DATA / "claude-code-1.0.69-formatted-file.reminder.json").read_text())
    (context,) = _formatted().contexts
    estimated = [m for m in context.messages if "was modified, either by the user" in str(m.get("content"))]
    assert [m["content"].split(" was modified")[0].rsplit("/", 1)[1] for m in estimated] == ["app.ts", "lib.ts"]
    at = context.messages.index(estimated[0])
    assert "prettier --write app.ts lib.ts" in json.dumps(context.messages[at - 2].get("tool_calls"))
    counter = counter_for()
    reminders = ["<system-reminder>" + part for part in sent.split("<system-reminder>")[1:]]
    for ours, theirs in zip(estimated, reminders, strict=True):
        # Only the trailing blanks are known to go: the semicolons prettier added are not in the estimate.
        assert counter(ours["content"]) == pytest.approx(counter(theirs.strip()), rel=0.05)
        assert ours["content"].splitlines()[:2] == theirs.strip().splitlines()[:2]


def test_a_file_only_cat_showed_is_watched_as_claude_code_1_0_watches_it(monkeypatch):
    monkeypatch.setattr(claude_code_files, "_shown", lambda command, result, cwd: None)
    (context,) = _formatted().contexts
    estimated = [m for m in context.messages if "was modified, either by the user" in str(m.get("content"))]
    assert len(estimated) == 1 and "/app.ts was modified" in estimated[0]["content"]


def test_without_the_formatted_file_estimate_its_held_out_calls_are_far_off(monkeypatch):
    assert calibrate(_formatted(), "claude-code").held_out.p90 < 0.02
    monkeypatch.setattr(claude_code_files, "rewritten", lambda command, output, cwd: [])
    assert calibrate(_formatted(), "claude-code").held_out.p90 > 0.05


def _write_then_format(output: str, later_read: str | None = None) -> list[dict]:
    """Records of a 1.0.x session: a Write of a.ts with indented blank lines, a formatter run, and
    optionally a later whole Read of a.ts showing ``later_read``."""
    text = "const a = 1\n  \nconst b = 2\n"

    def use(n: int, name: str, arguments: dict) -> dict:
        block = {"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}
        return {"type": "assistant", "version": "1.0.69", "message": {"role": "assistant", "content": [block]}}

    def result(n: int, content: str, tool: object) -> dict:
        block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": content}
        message = {"role": "user", "content": [block]}
        return {"type": "user", "version": "1.0.69", "cwd": "/p", "message": message, "toolUseResult": tool}

    values = [
        use(1, "Write", {"file_path": "/p/a.ts", "content": text}),
        result(1, "File created", {"type": "create", "filePath": "/p/a.ts", "content": text}),
        use(2, "Bash", {"command": "npx prettier --write a.ts b.ts"}),
        result(2, output, {"stdout": output, "stderr": ""}),
    ]
    if later_read is not None:
        lines = later_read.count("\n") + 1
        file = {"filePath": "/p/a.ts", "content": later_read, "startLine": 1, "numLines": lines, "totalLines": lines}
        values += [use(3, "Read", {"file_path": "/p/a.ts"}), result(3, later_read, {"type": "text", "file": file})]
    return values


def test_only_the_files_the_formatter_says_it_changed_get_an_estimate_and_a_later_view_replaces_it():
    (changed,) = claude_code_files.changed_file_reminders(_write_then_format("a.ts 40ms\nb.ts 3ms (unchanged)"))[3]
    assert "/p/a.ts was modified" in changed and "     2→\n" in changed  # the blank line without its indent
    assert claude_code_files.changed_file_reminders(_write_then_format("a.ts 40ms (unchanged)")) == {}
    seen = claude_code_files.changed_file_reminders(_write_then_format("a.ts 40ms", "const a = 1;\n\nconst b = 2;\n"))
    (rebuilt,) = seen[3]  # the reminder rebuilt from the later Read, not the estimate beside it
    assert "const a = 1;" in rebuilt
    assert claude_code_files.rewritten("npm test", "a.ts 40ms", "/p") == []
    assert claude_code_files.rewritten("black src", "reformatted src/x.py\nAll done!", "/p") == ["/p/src/x.py"]


@needs_transcripts
def test_kesslerios_step_after_npm_run_format_is_the_reminders_of_the_files_prettier_listed(monkeypatch):
    """7.35k tokens in its sidechain's usage after ``npm run format`` were in no record: the files
    prettier lists as changed, written by the sidechain and never shown again."""
    path = SHARED_TRANSCRIPTS / "claude-code" / "kesslerio__attio-mcp-server" / "chat.json"

    def unlogged() -> int:
        session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
        return sum(calibrate(session, "claude-code").unlogged_of("sidechain 1").values())

    assert unlogged() == 0
    monkeypatch.setattr(claude_code_files, "rewritten", lambda command, output, cwd: [])
    assert unlogged() > 7_000


PROMPT_LOG = DATA / "claude-code-1.0.69-prompt-log.jsonl"


def _prompt_log():
    return claude_code.read(parse_records(PROMPT_LOG.read_bytes(), str(PROMPT_LOG))[0], str(PROMPT_LOG))


def test_a_hooks_prompt_log_gets_the_reminders_claude_code_1_0_sent_after_each_later_prompt():
    """The real 1.0.69 in its terminal interface: a UserPromptSubmit hook logs each prompt to
    logs/user_prompt_submit.json, a ``cat`` showed the log, and after each later prompt the first
    tool result carried the log's new entry; the session file holds the results alone."""
    sent = json.loads((DATA / "claude-code-1.0.69-prompt-log.reminder.json").read_text())
    (context,) = _prompt_log().contexts
    rebuilt = [m for m in context.messages if "user_prompt_submit.json was modified" in str(m.get("content"))]
    assert len(rebuilt) == len(sent) == 2
    for ours, theirs in zip(rebuilt, sent, strict=True):
        # To the character, but for the transcript's path: the one figure guessed (the user's home
        # from the folder; the fixture's home was a temporary folder).
        assert _path_blanked(ours["content"]) == _path_blanked(theirs[theirs.index("<system-reminder>") :])
    after = [context.messages[context.messages.index(m) - 1] for m in rebuilt]
    assert [m["content"] for m in after] == ["2026", "120"]  # the first command after each prompt


def _path_blanked(text: str) -> str:
    return re.sub(r'"transcript_path": "[^"]*"', '"transcript_path": "…"', text)


def test_without_the_prompt_log_reminders_the_held_out_calls_are_off(monkeypatch):
    from compactctl.recorded import claude_code_hooks

    assert calibrate(_prompt_log(), "claude-code").held_out.p90 < 0.01
    monkeypatch.setattr(claude_code_hooks, "prompt_log_reminders", lambda values: {})
    assert calibrate(_prompt_log(), "claude-code").held_out.p90 > 0.02


def test_the_client_forgets_the_prompt_log_at_a_compaction_and_in_a_new_process():
    values = [json.loads(line) for line in PROMPT_LOG.read_text().splitlines() if line.strip()]
    from compactctl.recorded import claude_code_hooks

    assert len(claude_code_hooks.prompt_log_reminders(values)) == 2
    second = next(n for n, v in enumerate(values) if "Now the year." in json.dumps(v.get("message")))
    boundary = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}
    assert claude_code_hooks.prompt_log_reminders([*values[:second], boundary, *values[second:]]) == {}
    resumed = [*values[:second], *({**v, "sessionId": "resumed"} for v in values[second:])]  # a new process
    assert claude_code_hooks.prompt_log_reminders(resumed) == {}


@needs_transcripts
def test_kesslerios_steps_after_its_prompts_are_its_hooks_prompt_log(monkeypatch):
    """+622 and +580 tokens at the first tool result after each prompt before the compaction: its
    hooks' logs/user_prompt_submit.json, which its sidechain's ``git status`` listed."""
    from compactctl.recorded import claude_code_hooks

    path = SHARED_TRANSCRIPTS / "claude-code" / "kesslerio__attio-mcp-server" / "chat.json"
    values = json.loads(path.read_text())
    placed = claude_code_hooks.prompt_log_reminders(values)
    assert [values[at]["timestamp"] for at in placed] == ["2025-08-06T15:35:22.945Z", "2025-08-06T16:38:46.450Z"]

    def unlogged() -> int:
        session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
        return sum(calibrate(session, "claude-code").unlogged_of("main").values())

    with_log = unlogged()
    monkeypatch.setattr(claude_code_hooks, "prompt_log_reminders", lambda values: {})
    assert unlogged() - with_log > 1_000


IDE_DIAGNOSTICS = DATA / "claude-code-1.0.69-ide-diagnostics.jsonl"


def test_ide_diagnostics_claude_code_1_0_sent_unlogged_are_measured_as_a_step_of_their_size():
    """The real 1.0.69 with an IDE connected: its Edit moved the 60 lines the IDE warns on, and the
    client sent them as new diagnostics inside the Edit's result, which the session file holds
    without them; after the next prompt, with no edit of its own, it sent none (the baseline is
    kept only for files the client edited since the prompt). What the log cannot show is measured
    where the usage shows it: a step after the Edit's result, of the diagnostics' size."""
    sent, _ = json.loads((DATA / "claude-code-1.0.69-ide-diagnostics.reminder.json").read_text())
    assert sent.count("⚠ [Line ") == 60 and "new-diagnostics" not in IDE_DIAGNOSTICS.read_text()
    session = claude_code.read(parse_records(IDE_DIAGNOSTICS.read_bytes(), str(IDE_DIAGNOSTICS))[0], "ide.jsonl")
    (context,) = session.contexts
    edited = next(n for n, m in enumerate(context.messages) if "lib.ts has been updated" in str(m.get("content")))
    steps = calibrate(session, "claude-code").unlogged_of("main")
    tokens = counter_for("cl100k_base", "anthropic")(sent)  # the fake counts each request in cl100k
    assert steps[edited] == pytest.approx(tokens, rel=0.03)  # about 29 tokens a diagnostic
    assert min(steps) == edited  # nothing unlogged before it


def test_a_file_read_in_part_then_edited_in_place_gets_a_reminder_of_the_whole_file():
    """The same session's second prompt: a Read of lines 10-19 of lib.ts, then ``sed -i '1i // top' lib.ts``.
    The client holds only the lines it read, so the reminder it sent with the ``sed`` holds the whole file
    (the log shows neither the reminder nor the file again): 1,037 cl100k tokens. Estimated from the file as
    last seen whole; without it that call and the next were 6.7 % under their usage held out."""
    _, changed = json.loads((DATA / "claude-code-1.0.69-ide-diagnostics.reminder.json").read_text())
    session = claude_code.read(parse_records(IDE_DIAGNOSTICS.read_bytes(), str(IDE_DIAGNOSTICS))[0], "ide.jsonl")
    (context,) = session.contexts
    (ours,) = [m for m in context.messages if "was modified, either by the user" in str(m.get("content"))]
    sed = context.messages.index(ours) - 1
    assert "sed -i" in json.dumps(context.messages[sed - 1].get("tool_calls"))
    counter = counter_for("cl100k_base", "anthropic")  # the fake counts each request in cl100k
    assert counter(ours["content"]) == pytest.approx(counter(changed.strip()), rel=0.03)
    calibration = calibrate(session, "claude-code")
    assert calibration.held_out.p90 < 0.01 and sed not in calibration.unlogged_of("main")


def test_only_an_in_place_editor_names_the_files_it_edits():
    edited = claude_code_files.edited_in_place
    assert edited("sed -i '1i // top' lib.ts", "/p")[-1] == "/p/lib.ts"
    assert edited("npm test && perl -pi -e 's/a/b/' src/x.py", "/p")[-1] == "/p/src/x.py"
    assert edited("sed -i.bak -e s/x/y/ a.ts | cat", "/p")[-1] == "/p/a.ts"
    assert edited("sed -n 1,5p a.ts", "/p") == edited("perl -MList::Util -e 1 a.ts", "/p") == []
