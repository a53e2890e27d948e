"""compactctl's markup escaping, which spares a run the import of rich.markup, escapes as rich does."""

import subprocess
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.markup import escape as rich_escape

from compactctl.cli.markup import escape
from tests.properties import examples

# What rich reads as markup: brackets, the letters and signs a tag starts with, backslashes.
MARKUP = st.text(alphabet="[]\\/#@ab =x\n", max_size=40)


@settings(max_examples=examples(600))
@given(MARKUP)
@example("pip install 'compactctl[ray]'")
@example("C:\\path\\")
@example("\\\\[bold]x[/]\\")
def test_escape_is_rich_markups_escape(text):
    assert escape(text) == rich_escape(text)


def test_a_quiet_compact_that_goes_well_imports_no_rich(tmp_path):
    from tests.helpers import bundled_samples

    sample = bundled_samples()[0]
    code = (
        "import sys\n"
        f"sys.argv = ['compactctl', 'compact', {str(sample)!r}, '-o', {str(tmp_path / 'out.jsonl')!r}, '-q']\n"
        "from compactctl.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] == 'rich'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (tmp_path / "out.jsonl").exists()
    assert result.stdout.splitlines()[-1] == "LOADED []"
