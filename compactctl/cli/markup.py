"""Rich markup escaped without importing rich: ``rich.markup`` costs some 50 ms at every start
(it loads rich's text, style and emoji tables), and each command escapes its options' help while
its flags are built, long before it prints anything, if it prints at all (``-q``)."""

from __future__ import annotations

import re

from compactctl import lazyre

# rich.markup.escape's own pattern: a run of backslashes, then what rich would read as a tag.
_TAG = lazyre.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def escape(markup: str) -> str:
    """``rich.markup.escape(markup)``, by the same rule (a test holds the two equal): each tag-like
    ``[...]`` gets a backslash, the backslashes before it doubled; a trailing lone backslash too."""
    markup = _TAG.sub(_escaped_tag, markup)
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"
    return markup


def _escaped_tag(match: re.Match[str]) -> str:
    backslashes, text = match.groups()
    return f"{backslashes}{backslashes}\\{text}"
