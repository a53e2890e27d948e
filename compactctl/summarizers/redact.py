"""Secrets found in text are replaced before the text leaves the machine.

Three layers, each a row of ``PATTERNS`` (kind, pattern, replacement), run in order:

1. issuers' token shapes (a known prefix and alphabet: ``sk_live_``, ``AIza``, ``glpat-``...),
   which are specific enough to match anywhere;
2. values after a label that says what they are (``aws_secret_access_key =``,
   ``"SecretAccessKey":``, ``Authorization: Basic``, ``X-API-Key:``, ``password=``,
   ``?password=`` in a query string, ``user:pass@`` in a URL), where the label is kept;
3. private key blocks, whole (and a run of PEM body lines with no header, which is what a
   cut-off key looks like).

Each hit becomes ``[REDACTED:kind]``. Redaction runs on whole messages before any
chunking (``redact_messages``), so a chunk boundary inside a key cannot let its body out,
and again on the request text. Running it twice changes nothing: a marker matches no row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MARKER = "[REDACTED:{}]"
_M = MARKER

# A value after a label: not a marker already, not a reference to where the secret lives
# ($VAR, ${VAR}, os.environ[...], process.env.X, getenv(...)), not a plain number.
_VALUE_GUARD = r"(?!\[REDACTED)(?!\$)(?!os\.|process\.env|getenv|env\(|environ)(?!\d+(?:\.\d+)?(?![^\s\"',;}\]]))"
_START = r"(?:(?<=\\[nrt])|\b)"
# A label's end: an optional closing quote (escaped inside JSON text), then = : => :=.
_ASSIGN = r"\\?[\"']?\s*(?:=|:|=>|:=)\s*\\?[\"'`]?"
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|client[_-]?key[_-]?data|credentials?|auth)"
)


@dataclass(frozen=True)
class Row:
    kind: str
    pattern: re.Pattern[str]
    replacement: str
    # Strings one of which a match must contain (lower-case, and looked for in the lower-cased
    # text, when the row ignores case): a row whose keys are all absent from the text is
    # skipped, which is most rows on most texts, since a substring test costs little.
    keys: tuple[str, ...] = ()
    folded: bool = False


def _row(kind: str, pattern: str, replacement: str = _M, flags: int = 0, keys: tuple[str, ...] = ()) -> Row:
    # A token right after an escaped newline ("...\\nghp_...", as in JSON arguments) starts a word too.
    pattern = pattern.replace(r"|\b", "|" + _START)
    pattern = _START + pattern[2:] if pattern.startswith(r"\b") else pattern
    pattern = "(" + _START + pattern[3:] if pattern.startswith(r"(\b") else pattern
    return Row(kind, re.compile(pattern, flags), replacement.replace("{}", kind), keys, bool(flags & re.I))


def _labelled(kind: str, label: str, value: str, flags: int = re.I, keys: tuple[str, ...] = ()) -> Row:
    """A secret after a label: the label (group 1) is kept, the value becomes the marker."""
    return _row(kind, f"({label}){_VALUE_GUARD}{value}", r"\1" + _M, flags, keys)


PATTERNS: tuple[Row, ...] = (
    # 3 first: a key block is replaced whole before a token row could cut it in two.
    _row(
        "private-key",
        r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        flags=re.S,
        keys=("PRIVATE KEY",),
    ),
    _row(
        "private-key",
        r"(?m)(Private-Lines: *\d+\r?\n)(?:[A-Za-z0-9+/=]{20,}\r?\n?)+",
        r"\1" + _M,
        keys=("Private-Lines",),
    ),
    # A run of base64 lines of PEM width with no header: the middle of a key cut elsewhere.
    _row("key-body", r"(?m)(?:^[A-Za-z0-9+/]{60,76}(?:\r?\n|\\n)){3,}(?:[A-Za-z0-9+/]{0,76}={0,2}(?=\r?\n|\\n|$))?"),
    # 1: issuers' shapes.
    _row("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", keys=("sk-ant-",)),
    _row("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|or-v1-|None-)?[A-Za-z0-9_-]{20,}", keys=("sk-",)),
    _row("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}", keys=("_live_", "_test_", "_prod_")),
    _row("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9]{24,}", keys=("whsec_",)),
    _row(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        keys=("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "A3T"),
    ),
    _row("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}", keys=("AIza",)),
    _row("google-oauth-secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}", keys=("GOCSPX-",)),
    _row("google-oauth-token", r"\bya29\.[0-9A-Za-z_-]{20,}", keys=("ya29.",)),
    _row(
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        keys=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _row(
        "gitlab-token",
        r"\bgl(?:pat|dt|ptt|rt|cbt|imt|oas|ft|soat|ffct|agent)-[0-9A-Za-z_-]{20,}",
        keys=(
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "gloas-",
            "glft-",
            "glsoat-",
            "glffct-",
            "glagent-",
        ),
    ),
    _row("gitlab-token", r"\bGR1348941[0-9A-Za-z_-]{20,}", keys=("GR1348941",)),
    _row("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", keys=("xox", "xapp-")),
    _row(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
        keys=("hooks.slack.com",),
    ),
    _row(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
        keys=("/api/webhooks/",),
    ),
    _row("discord-token", r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b", keys=(".",)),
    _row("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", keys=("npm_",)),
    _row("pypi-token", r"\bpypi-Ag[A-Za-z0-9_-]{50,}", keys=("pypi-Ag",)),
    _row("huggingface-token", r"\b(?:hf_[A-Za-z]{30,}|api_org_[A-Za-z]{30,})", keys=("hf_", "api_org_")),
    _row("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,46}", keys=("SG.",)),
    _row("mailgun-key", r"\b(?:pub)?key-[0-9a-f]{32}\b", keys=("key-",)),
    _row("shopify-token", r"\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}\b", keys=("shp",)),
    _row("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", keys=("_v1_",)),
    _row("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b", keys=("SK", "AC")),
    _row("telegram-token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", keys=(":AA",)),
    _row("azure-client-secret", r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", keys=("Q~",)),
    _row("vault-token", r"\bhv[sb]\.[A-Za-z0-9_-]{24,}", keys=("hvs.", "hvb.")),
    _row("linear-key", r"\blin_api_[A-Za-z0-9]{40}\b", keys=("lin_api_",)),
    _row("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", keys=("PMAK-",)),
    _row(
        "grafana-token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        keys=("glsa_", "glc_"),
    ),
    _row("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", keys=("dapi",)),
    _row("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", keys=("AGE-SECRET-KEY-1",)),
    _row(
        "newrelic-key",
        r"\bNR(?:AK|AA|II)-[A-Z0-9]{27}\b|\bNRJS-[a-f0-9]{19}\b",
        keys=("NRAK-", "NRAA-", "NRII-", "NRJS-"),
    ),
    _row("doppler-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b", keys=("dp.",)),
    _row("planetscale-token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}", keys=("pscale_",)),
    _row("mapbox-token", r"\bsk\.eyJ[A-Za-z0-9._-]{50,}", keys=("sk.eyJ",)),
    _row("groq-key", r"\bgsk_[A-Za-z0-9]{52}\b", keys=("gsk_",)),
    _row("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}", keys=("sntry",)),
    _row("langsmith-key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b", keys=("lsv2_",)),
    _row("square-token", r"\b(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60})", keys=("sq0", "EAAA")),
    _row("atlassian-token", r"\bATATT3[A-Za-z0-9_=-]{180,}", keys=("ATATT3",)),
    _row("notion-token", r"\bntn_\d{11}[A-Za-z0-9]{35}\b|\bsecret_[A-Za-z0-9]{43}\b", keys=("ntn_", "secret_")),
    _row("perplexity-key", r"\bpplx-[A-Za-z0-9]{48}\b", keys=("pplx-",)),
    _row("replicate-token", r"\br8_[A-Za-z0-9]{37}\b", keys=("r8_",)),
    _row("supabase-token", r"\bsbp_[a-f0-9]{40}\b", keys=("sbp_",)),
    _row("pulumi-token", r"\bpul-[a-f0-9]{40}\b", keys=("pul-",)),
    _row("facebook-token", r"\bEAA[A-Za-z0-9]{100,}", keys=("EAA",)),
    _row("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", keys=("eyJ",)),
    # 2: labelled values.
    _labelled(
        "authorization",
        rf"\bauthorization{_ASSIGN}(?:bearer|basic|token|digest|bot|apikey)\s+",
        r"[A-Za-z0-9._~+/=-]{8,}",
        keys=("authorization",),
    ),
    _labelled("bearer-token", r"\bbearer\s+", r"[A-Za-z0-9._~+/=-]{16,}", keys=("bearer",)),
    _labelled("basic-auth", r"\bbasic\s+", r"(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2}", keys=("basic",)),
    _labelled(
        "api-key-header",
        r"\b(?:x-api-key|api-key|x-auth-token|x-access-token|x-goog-api-key|x-functions-key|private-token"
        rf"|x-shopify-access-token|ocp-apim-subscription-key){_ASSIGN}",
        r"[^\s\"',;]{8,}",
        keys=("key", "token", "api"),
    ),
    _labelled(
        "aws-secret-key",
        rf"\b(?:aws_?)?(?:secret_?access_?key|secret_?key|session_?token){_ASSIGN}",
        r"[A-Za-z0-9/+=]{40,}",
        keys=("secret", "session"),
    ),
    _labelled(
        "azure-key",
        r"\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=",
        r"[A-Za-z0-9+/=%]{20,}",
        keys=("accountkey", "sharedaccess"),
    ),
    _labelled(
        "url-signature",
        r"[?&](?:sig|signature|X-Amz-Signature|X-Goog-Signature)=",
        r"[A-Za-z0-9%+/=_-]{20,}",
        keys=("sig", "signature"),
    ),
    # user:password@ in a URL, the user possibly empty, the password possibly holding '/'
    # (a port and path are not a password: the first segment may not be all digits).
    _labelled("url-password", r"\b[a-z][a-z0-9+.-]*://[^\s:/@\"'<>]*:", r"(?!\d+[/@])[^\s@\"'<>]+(?=@)", keys=("://",)),
    _labelled(
        "query-password",
        r"[?&;](?:password|passwd|pwd|pass|secret|token|api_?key|access_token)=",
        r"[^&;\s\"'#]+",
        keys=("=",),
    ),
    _labelled("netrc-password", r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+", r"[^\s\"'\\]+", keys=("machine",)),
    _labelled("cli-password", r"\bcurl\b[^\n]*?\s(?:-u|--user)\s+[\"']?[^\s:\"']+:", r"[^\s\"']+", keys=("curl",)),
    _labelled(
        "cli-password",
        r"\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?\s-p(?=\S)",
        r"[\"']?[^\s\"']{4,}[\"']?",
        keys=("mysql",),
    ),
    _labelled("cli-password", r"\bsshpass\s+-p\s*", r"[^\s\"'\\]+", keys=("sshpass",)),
    _labelled(
        "cli-token",
        r"(?:\s--(?:token|password|api-key|access-token|auth-token|secret)[= ]\s*|\s-t\s+(?=dop_|[A-Za-z0-9_-]{30}))"
        r"[\"']?",
        r"[^\s\"']{8,}",
        keys=("--", "-t "),
    ),
    # KEY=value, key: value, "key": "value", key => value, for a key naming a secret.
    _labelled(
        "secret-assignment",
        rf"{_SECRET_WORD}(?:[_-]?key)?s?\b{_ASSIGN}",
        # A value followed by "(" is a function being called, not a secret.
        r"(?![^\s\"'`,;#\\<>{}()\[\]]*\()[^\s\"'`,;#\\<>{}()\[\]]{6,}",
        keys=("pass", "pwd", "secret", "token", "key", "credential", "auth"),
    ),
)


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were."""
    total = 0
    lowered = text.lower()
    for row in PATTERNS:
        if row.keys and not any(key in (lowered if row.folded else text) for key in row.keys):
            continue
        text, count = row.pattern.subn(row.replacement, text)
        total += count
    return text, total


def redact_value(value: Any) -> tuple[Any, int]:
    """Every string inside ``value`` (a message, a part, a list, arguments) redacted; keys are kept."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], count = redact_value(item)
            total += count
        return out, total
    if isinstance(value, list):
        items = [redact_value(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    return value, 0


def redact_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Whole messages redacted (content, parts, tool-call arguments, every string): before any chunking."""
    redacted = [redact_value(message) for message in messages]
    return [message for message, _ in redacted], sum(count for _, count in redacted)


def redact_url(url: str) -> str:
    """A URL with its password (and any key in its query) masked: for error lines and dry runs."""
    return redact(url)[0]
