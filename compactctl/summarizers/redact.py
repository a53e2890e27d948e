"""Secrets found in text are replaced before the text leaves the machine.

Patterns are deliberately specific (known key prefixes and shapes) so ordinary
identifiers survive; each hit becomes ``[REDACTED:kind]``.
"""

from __future__ import annotations

import re

_M = "[REDACTED:{}]"

# (kind, pattern, replacement): groups around the secret (a label, a scheme) are kept.
PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
        _M,
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), _M),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), _M),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), _M),
    (
        "aws-secret-key",
        re.compile(r"(?i)(aws_secret_access_key|aws_secret_key)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40,}"),
        r"\1\2" + _M,
    ),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"), _M),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), _M),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"), _M),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), _M),
    ("bearer-token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{16,}"), r"\1" + _M),
    ("url-password", re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(@)", re.I), r"\1" + _M + r"\2"),
)


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were."""
    total = 0
    for kind, pattern, replacement in PATTERNS:
        text, count = pattern.subn(replacement.replace("{}", kind), text)
        total += count
    return text, total
