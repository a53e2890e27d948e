"""The lines of a text that hold one of a few words: what a pattern tried line by line is tried on.

A tool output is read line by line for its test results and its error lines, each line matched
by a pattern tried at every character; the lines of a file view (most of a long output) hold none
of the words every match holds, so only the lines that do are matched (``tests/summarizers/test_prefilters.py``).
"""

from __future__ import annotations

from compactctl import lazyre

OTHER_BREAKS = lazyre.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # str.splitlines cuts at these too


def lines_with(text: str, words: tuple[str, ...]) -> list[str]:
    """``[line for line in text.splitlines() if any(word in line for word in words)]`` for words without a
    line break: each word looked for in the whole text (a line holding it taken once, in order), where
    every line was looked into for every word. A text cut at other breaks too is split as it was."""
    if OTHER_BREAKS.search(text) is not None:
        return [line for line in text.splitlines() if any(word in line for word in words)]
    spans: set[tuple[int, int]] = set()
    size = len(text)
    for word in words:
        at = text.find(word)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = size if end < 0 else end
            spans.add((start, end))
            at = text.find(word, end + 1)
    return [text[start:end] for start, end in sorted(spans)]
