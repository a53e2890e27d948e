"""``replay --plot``: context size per call as a PNG or SVG chart, with matplotlib from the plot extra."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compactctl.errors import InputError
from compactctl.replay.results import FileReplay


def check_plot(path: str | Path) -> None:
    """Fail before any work when ``--plot`` cannot be honoured: a suffix matplotlib will not write, or no matplotlib."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise InputError(f"--plot: {path} must end in .png or .svg")
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never needs a display
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'compactctl[plot]'") from None
    return plt


def write_plot(path: str | Path, source: FileReplay) -> None:
    """Context size per call for each setting, as PNG or SVG (by suffix), with matplotlib from the plot extra."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(10, 5))
    for row, series in zip(source.settings, source.chart, strict=True):
        name = row.trigger if row.threshold is None else f"{row.trigger} {row.threshold:,}"
        label = name if row.strategy == "none" else f"{name} ({row.strategy})"
        (line,) = axes.plot(range(1, len(series) + 1), series, label=label, linewidth=1.2)
        if row.threshold is not None:
            axes.axhline(row.threshold, color=line.get_color(), linestyle=":", linewidth=0.8)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_xlabel("model call (dotted: each setting's threshold)")
    axes.set_ylabel("context (input tokens)")
    which = f" ({source.chart_label})" if source.chart_label else ""
    axes.set_title(f"context per call: {Path(source.file).name}{which}", fontsize="medium")
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    try:
        figure.savefig(str(path))
    except OSError as error:
        raise InputError(f"cannot write the chart: {error.strerror}", str(path)) from None
    finally:
        plt.close(figure)
