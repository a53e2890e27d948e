"""``--help`` that reads whole at 80 columns: every option name whole, a placeholder that says what to type.

Typer lays an options panel out in six columns (long name, short name, ``--no-`` form, its short
form, type, help) and, when they do not fit, Rich cuts the widest: ``--summary-input-ma…``. Here
a panel has two: the option as it is typed (``-j, --jobs N [x>=0]``, ``--redact/--no-redact``),
never cut, and its help, wrapped in what is left; an option longer than half the width has its
line to itself, its help under it. The rest of the page (usage, the docstring,
defaults, the commands list) is Typer's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typer.core import TyperArgument, TyperCommand

if TYPE_CHECKING:
    from rich.console import Console

# Rich's layout and Typer's rich_utils (markdown-it, pygments: some 0.05 s) are imported when a
# page is printed, not when a command is built to run.

GAP = 2  # spaces between an option and its help


def option_names(param: Any) -> str:
    """The option as typed: ``-j, --jobs N [x>=0]``, ``--redact/--no-redact``, ``PATH...``."""
    if isinstance(param, TyperArgument):
        return param.display_name_raw + ("..." if param.nargs != 1 else "")
    short = [name for name in param.opts if not name.startswith("--")]
    long = [name for name in param.opts if name.startswith("--")]
    names = ", ".join([*short, *long])
    if param.secondary_opts:
        names += "/" + ", ".join(param.secondary_opts)
    placeholder = "" if param.is_flag else param.metavar
    if placeholder is None:  # an option no declaration gave a placeholder (e.g. a library's)
        placeholder = "VALUE"
    bounds = param._get_number_range_help_str()
    return " ".join(part for part in (names, placeholder, f"[{bounds}]" if bounds else "") if part)


def options_panel(*, name: str, params: list[Any], ctx: Any, markup_mode: Any, console: Console) -> None:
    """One panel of options in two columns, in place of Typer's six."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

    if not params:
        return
    rows = [
        (("*" if param.required else "") + option_names(param),
         rich_utils._get_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode))
        for param in params
    ]  # fmt: skip
    # The names' column is as wide as the names that fit in half the panel; a longer one has its
    # line to itself, with its help under it, where the others' starts (as argparse does).
    limit = (console.width - 4) // 2
    width = max((len(names) for names, _ in rows if len(names) <= limit), default=limit)
    lines: list[Any] = []
    for names, help_text in rows:
        option = Text(names, style=rich_utils.STYLE_OPTION)
        if len(names) > width:
            lines += [option, Padding(help_text, (0, 0, 0, width + GAP))]
            continue
        row = Table.grid(padding=(0, GAP, 0, 0), expand=True)
        row.add_column(width=width, no_wrap=True)
        row.add_column(ratio=1)
        row.add_row(option, help_text)
        lines.append(row)
    console.print(
        Panel(Group(*lines), border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER, title=name, title_align="left")
    )


class ReadableCommand(TyperCommand):
    """A command whose ``--help`` lays its options out with :func:`options_panel`."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""  # a switch: nothing to type after it
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from typer import rich_utils

        # Typer looks its panel printer up in its module when it prints: swapped for this page only.
        typers = rich_utils._print_options_panel
        rich_utils._print_options_panel = options_panel  # type: ignore[assignment]
        try:
            super().format_help(ctx, formatter)
        finally:
            rich_utils._print_options_panel = typers
