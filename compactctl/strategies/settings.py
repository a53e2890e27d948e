"""The settings several strategies take: declared once here, each strategy giving its own default.

``threshold: int = THRESHOLD(8000)`` in a strategy's options is the whole declaration;
help, bounds and flags come from the spec, so ``--help`` lists each strategy's default.
"""

from __future__ import annotations

from compactctl.settings import SettingSpec

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
