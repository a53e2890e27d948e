"""Each strategy's options, and the settings several strategies take: declared once here, each strategy
giving its own default. A strategy's code (its module) is imported only when a step runs it.

``threshold: int = THRESHOLD(8000)`` in a strategy's options is the whole declaration;
help, bounds and flags come from the spec, so ``--help`` lists each strategy's default.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.settings import Options, SettingSpec, setting

STRATEGY_PANEL = "Strategies"
SUMMARY_PANEL = "Summaries"
SUMMARY_ROLES = ("system", "user")
DEFAULT_INPUT_MAX_TOKENS = 32000

KEEP_RECENT = SettingSpec("Messages kept at the end.", min=0, panel=STRATEGY_PANEL)
TOOL_MAX_TOKENS = SettingSpec("trim-tools: tool outputs over this are trimmed.", min=1, panel=STRATEGY_PANEL)
HEAD_LINES = SettingSpec("trim-tools: first lines kept.", min=0, panel=STRATEGY_PANEL)
TAIL_LINES = SettingSpec("trim-tools: last lines kept.", min=0, panel=STRATEGY_PANEL)
THRESHOLD = SettingSpec(
    "Summarizing strategies compact above this many tokens (0: always).", min=0, panel=SUMMARY_PANEL
)
SUMMARY_MAX_TOKENS = SettingSpec("Summary size bound.", min=16, panel=SUMMARY_PANEL)
SUMMARY_INPUT_MAX_TOKENS = SettingSpec(
    "Largest text one summarizer request takes; more is chunked and merged.", min=1, panel=SUMMARY_PANEL
)
SUMMARY_ROLE = SettingSpec("Role of the summary message.", choices=SUMMARY_ROLES, panel=SUMMARY_PANEL)

MODES = ("stub", "drop")  # prune --mode


@dataclass(frozen=True)
class WindowOptions(Options):
    """window's settings."""

    keep_recent: int = KEEP_RECENT(6)
    require: tuple[str, ...] = ()  # the run's --require facts: one copy of each stays
    # Set by the caller for a format whose API wants the user's turn first (Anthropic Messages):
    # where what is kept would open on the model's turn, the latest user message before it stays too.
    open_on_user: bool = False


@dataclass(frozen=True)
class PruneOptions(Options):
    """prune's settings."""

    mode: str = setting(
        "stub",
        help="stub: a pruned tool result keeps its place as a short stub; drop: the call and its result go.",
        choices=MODES,
        metavar="stub|drop",
        panel="Pruning",
    )
    require: tuple[str, ...] = ()  # the run's --require facts: one copy of each stays


@dataclass(frozen=True)
class MaskOptions(Options):
    """mask-observations' settings."""

    keep_tool_uses: int = setting(
        3, help="mask-observations: the results of the last N tool uses stay.", min=0, panel=STRATEGY_PANEL
    )
    mask_keep_turns: int = setting(
        0,
        help="mask-observations: keep the results of the last N tool-using assistant turns instead (0: count uses).",
        min=0,
        panel=STRATEGY_PANEL,
    )
    never_mask: tuple[str, ...] = setting(
        (),
        help="mask-observations: a tool whose results are never masked (repeatable).",
        metavar="TOOL",
        panel=STRATEGY_PANEL,
    )
    mask_inputs: bool = setting(
        False,
        help="mask-observations: replace the masked calls' arguments too.",
        flags=("--mask-inputs",),
        panel=STRATEGY_PANEL,
    )
    mask_min_tokens: int = setting(
        0, help="mask-observations: mask nothing unless at least this many tokens go.", min=0, panel=STRATEGY_PANEL
    )
    require: tuple[str, ...] = ()  # the run's --require facts: one copy of each stays


@dataclass(frozen=True)
class ClearThinkingOptions(Options):
    """clear-thinking's settings."""

    keep_thinking_turns: int = setting(
        1,
        help="clear-thinking: the last N assistant turns carrying thinking keep it.",
        min=0,
        panel=STRATEGY_PANEL,
    )


@dataclass(frozen=True)
class SummaryOptions(Options):
    """summary's settings."""

    threshold: int = THRESHOLD(10000)
    keep_recent: int = KEEP_RECENT(6)
    summary_max_tokens: int = SUMMARY_MAX_TOKENS(500)
    summary_input_max_tokens: int = SUMMARY_INPUT_MAX_TOKENS(DEFAULT_INPUT_MAX_TOKENS)
    summary_role: str = SUMMARY_ROLE("system")
    open_on_user: bool = False  # set by the caller for Anthropic output (strategies.base.keep_opening_request)


@dataclass(frozen=True)
class SelectiveOptions(Options):
    """selective's settings."""

    threshold: int = THRESHOLD(10000)
    keep_recent: int = KEEP_RECENT(6)
    summary_max_tokens: int = SUMMARY_MAX_TOKENS(200)
    summary_input_max_tokens: int = SUMMARY_INPUT_MAX_TOKENS(DEFAULT_INPUT_MAX_TOKENS)
    summary_role: str = SUMMARY_ROLE("system")
    open_on_user: bool = False  # set by the caller for Anthropic output (strategies.base.keep_opening_request)
    keep_pattern: tuple[str, ...] = setting(
        (),
        help="selective: messages matching REGEX stay verbatim (repeatable).",
        metavar="REGEX",
        panel=SUMMARY_PANEL,
    )


@dataclass(frozen=True)
class RollingOptions(Options):
    """rolling's settings."""

    threshold: int = THRESHOLD(8000)
    window: int = setting(8, help="rolling: messages kept after each fold.", min=0, panel=SUMMARY_PANEL)
    summary_max_tokens: int = SUMMARY_MAX_TOKENS(400)
    summary_input_max_tokens: int = SUMMARY_INPUT_MAX_TOKENS(DEFAULT_INPUT_MAX_TOKENS)
    summary_role: str = SUMMARY_ROLE("system")
    open_on_user: bool = False  # set by the caller for Anthropic output: see the end of rolling()
