"""What ``replay`` takes beside the strategies' and the summarizer's settings: when to compact, prices, the chart."""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.settings import Options, setting

TRIGGER_PANEL = "When to compact"
PRICE_PANEL = "Prices"
OUT_PANEL = "Output"
DEFAULT_THRESHOLDS = (8000, 16000, 32000)


@dataclass(frozen=True)
class ReplayOptions(Options):
    thresholds: tuple[str, ...] = setting(
        (),
        help="Compact before the next call when the last call's context exceeded N tokens. "
        "Several values (8000,16000,32000 or repeated) are compared side by side.",
        flags=("--threshold", "-t"),
        metavar="N[,N...]",
        # As replay picks them (cli/replay.py, replay/fitted_thresholds.py): from the first file where it can.
        shown_default="where the first file records its usage, its producer's auto-compact point on the model's "
        f"window and half and a quarter of it; else {','.join(map(str, DEFAULT_THRESHOLDS))}; none with a stage "
        "trigger alone",
        panel=TRIGGER_PANEL,
    )
    stage_marker: str | None = setting(
        None,
        help="A message whose text matches REGEX ends a stage: compact before the next call.",
        metavar="REGEX",
        panel=TRIGGER_PANEL,
    )
    stage: bool = setting(
        False,
        help="Compact at compactctl.stage_end annotations (implied by --stage-marker).",
        flags=("--stage",),
        panel=TRIGGER_PANEL,
    )
    model_pricing: str | None = setting(
        None, help="Price as this model from the table.", metavar="NAME", shown_default="gpt-4o", panel=PRICE_PANEL
    )
    prices: str | None = setting(
        None, help="Your own price table (JSON or TOML), laid over the shipped one.", metavar="FILE", panel=PRICE_PANEL
    )
    price_in: float | None = setting(
        None, help="USD per million input tokens.", min=0, metavar="USD", panel=PRICE_PANEL
    )
    price_cached: float | None = setting(
        None, help="USD per million cached (cache-read) input tokens.", min=0, metavar="USD", panel=PRICE_PANEL
    )
    price_write: float | None = setting(
        None, help="USD per million tokens written to the cache.", min=0, metavar="USD", panel=PRICE_PANEL
    )
    price_out: float | None = setting(
        None, help="USD per million output tokens.", min=0, metavar="USD", panel=PRICE_PANEL
    )
    cache_min_tokens: int | None = setting(
        None,
        help="Prompts shorter than this are not cached.",
        min=0,
        shown_default="the model's, e.g. 1024",
        panel=PRICE_PANEL,
    )
    plot: str | None = setting(
        None,
        help="Write the context-size chart to FILE (.png or .svg; needs the plot extra).",
        metavar="FILE",
        panel=OUT_PANEL,
    )
