"""The redaction table: every row a kind of secret, a pattern and what replaces it.

Three layers, run in order:

1. issuers' token shapes (a known prefix and alphabet: ``sk_live_``, ``AIza``, ``glpat-``...),
   which are specific enough to match anywhere;
2. values after a label that says what they are (``aws_secret_access_key =``,
   ``"SecretAccessKey":``, ``Authorization: Basic``, ``X-API-Key:``, ``password=``,
   ``?password=`` in a query string, ``user:pass@`` in a URL), where the label is kept;
3. private key blocks, whole (and a run of PEM body lines with no header, which is what a
   cut-off key looks like).

Each hit becomes ``[REDACTED:kind]``; a marker matches no row. ``redact`` (summarizers/redact.py)
runs the table, then the passes for what the table alone misses (a secret cut by a line break,
one base64- or URL-encoded).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from compactctl import lazyre
from compactctl.summarizers.row_index import Row, StartsFound, row_index

MARKER = "[REDACTED:{}]"
_M = MARKER

# A value after a label: not a marker already, not a reference to where the secret lives
# ($VAR, ${VAR}, $(cmd) as the whole value, os.environ[...], process.env.X, getenv(...)), not a
# plain number.
_VALUE_GUARD = (
    r"(?!\[REDACTED)(?!\$(?:\{[^}\s]*\}|\([^)\s]*\)|[A-Za-z_]\w*)(?:[\s\"'`,;)\\]|$))"
    r"(?!os\.|process\.env|getenv|env\(|environ)(?!\d+(?:\.\d+)?(?![^\s\"',;}\]]))"
)
_START = r"(?:(?<=\\[nrt])|\b)"
# A label's end: an optional closing quote (escaped inside JSON text), then = : => :=.
# (app.config['SECRET_KEY'] = ...: a subscript's closing bracket may come first.)
_ASSIGN = r"\\?[\"']?\]?\s*(?:=|:|=>|:=)\s*\\?[\"'`]?"
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|client[_-]?key[_-]?data|credentials?|auth|salt"
    # Short words only where a word starts (smtp_pass, rclone's pass =, AIRTABLE_PAT), not in bypass or compat.
    r"|(?:(?<![A-Za-z])|(?<=\\[nrt]))pa(?:ss|t)"
    r"|(?:app|master|encryption|signing|jwt|session|cookie|hmac|storage|account)[_-]?key)"
)
# What [A-Za-z] matches under re.I beside its own letters (İ and ı fold to i, ſ to s, the Kelvin sign to k).
_CASE_BLIND_EXTRA = "\u0130\u0131\u017f\u212a"
# What may follow the word in a label: SECRET_KEY, secret_key_base, DB_PASSWORD_HASH.
_LABEL_TAIL = r"(?:[_-]?key)?(?:[_-]?base)?s?\b"


ASSIGNMENT_KEYS = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "salt", "pat")
# The first letters of every word of _SECRET_WORD: where an assignment's label can start.
_SECRET_WORD_STARTS = (
    "pass", "pwd", "secret", "token", "api", "access", "private", "client", "credential", "auth", "salt", "app",
    "master", "encryption", "signing", "jwt", "session", "cookie", "hmac", "storage", "account", "pat",
)  # fmt: skip


def _row(
    kind: str,
    pattern: str,
    replacement: str = _M,
    flags: int = 0,
    keys: tuple[str, ...] = (),
    gate: str | None = None,
) -> Row:
    # A token right after an escaped newline ("...\\nghp_...", as in JSON arguments) starts a word too.
    pattern = pattern.replace(r"|\b", "|" + _START)
    pattern = _START + pattern[2:] if pattern.startswith(r"\b") else pattern
    pattern = "(" + _START + pattern[3:] if pattern.startswith(r"(\b") else pattern
    return Row(
        kind,
        lazyre.compile(pattern, flags),
        replacement.replace("{}", kind),
        keys,
        bool(flags & re.I),
        gate=lazyre.compile(gate, flags) if gate else None,
    )


def _issued(kind: str, pattern: str, keys: tuple[str, ...]) -> Row:
    """An issuer's token: each alternative is ``\\b`` and one of ``keys`` as written, so a match starts where a key
    does, and is tried there only (``starts``, lower-cased as they are looked for): led by ``\\b``, the pattern
    was tried at every character of a text holding a key, some 70 ns each (tests/summarizers/test_redact_gates.py)."""
    return dataclasses.replace(_row(kind, pattern, keys=keys), starts=tuple(key.lower() for key in keys))


def _labelled(
    kind: str,
    label: str,
    value: str,
    flags: int = re.I,
    keys: tuple[str, ...] = (),
    starts: tuple[str, ...] = (),
    after: bool = False,
    gate: str | None = None,
) -> Row:
    """A secret after a label: the label (group 1) is kept, the value becomes the marker."""
    row = _row(kind, f"({label}){_VALUE_GUARD}{value}", r"\1" + _M, flags, keys)
    return dataclasses.replace(row, starts=starts, after=after, gate=lazyre.compile(gate, flags) if gate else None)


# What each URL row needs after the scheme (a user part and ':', or a long token, then '@'): most URLs don't.
_URL_WITH_PASSWORD, _URL_WITH_TOKEN = r"://[^\s:/@\"'<>\[\]]*:\S*@", r"://[^\s:/@\"'<>]{16,}@"

PATTERNS: tuple[Row, ...] = (
    # 3 first: a key block is replaced whole before a token row could cut it in two.
    # Any armored key block but a public one: PRIVATE KEY of every kind, PGP's, OpenVPN's "Static key".
    _row(
        "private-key",
        r"-----BEGIN (?![^\r\n-]*PUBLIC)[ A-Za-z0-9_-]*(?:PRIVATE KEY|\b[Kk]ey\b)[ A-Za-z0-9_-]*-----.*?"
        r"(?:-----END [^\r\n]*?-----|\Z)",
        flags=re.S,
        keys=("-----BEGIN ",),
    ),
    _row(
        "private-key",
        r"(?m)(Private-Lines: *\d+\r?\n)(?:[A-Za-z0-9+/=]{20,}\r?\n?)+",
        r"\1" + _M,
        keys=("Private-Lines",),
    ),
    # A run of base64 lines of PEM width with no header: the middle of a key cut elsewhere. It starts
    # where a line does (``^``): tried there only (after each "\n", and at the text's start), not at
    # every character of a long text.
    dataclasses.replace(
        _row(
            "key-body",
            r"(?m)(?:^[A-Za-z0-9+/]{60,76}(?:\r?\n|\\n)){3,}(?:[A-Za-z0-9+/]{0,76}={0,2}(?=\r?\n|\\n|$))?",
            # A line's sixty characters after a line break, looked for once: most texts have no such line,
            # and the row is then not tried after each of their line breaks. A match's second line has
            # them (each line starts where ``^`` does, after a "\n"); led by "\n", the engine skips to
            # each line, where led by the class it tried every character of every shorter run.
            gate=r"\n[A-Za-z0-9+/]{60}",
        ),
        starts=("\n",),
        after=True,
        shortest=183,  # three lines of 60 characters and their breaks
    ),
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
    _issued("gitlab-token", r"\bGR1348941[0-9A-Za-z_-]{20,}", keys=("GR1348941",)),
    _issued("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", keys=("xox", "xapp-")),
    _row(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
        keys=("hooks.slack.com",),
    ),
    # A webhook URL whose path holds a long random segment (Teams' webhookb2/.../IncomingWebhook/...,
    # Mattermost's /hooks/ID): the URL is the credential.
    _row(
        "webhook-url",
        r"https://[^\s\"'<>/]+/(?:[^\s\"'<>/]+/)*?(?:webhooks?|webhookb2|hooks|IncomingWebhook)/"
        r"(?=[^\s\"'<>]*?(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]{24})(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z]))"
        r"[^\s\"'<>]+",
        keys=("hook",),
    ),
    _row(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
        keys=("/api/webhooks/",),
    ),
    # Its key, ".", is in most texts, and the pattern has no literal start: the gate, a piece of it that
    # starts with one, is found by a fast scan.
    # Its gate starts at the token's first ".", 24 to 28 characters in ([MNO] and 23 to 27 more): the row
    # is tried at the 28 characters before each place the gate matches, not over the whole text.
    dataclasses.replace(
        _row(
            "discord-token",
            r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
            keys=(".",),
            gate=r"\.[A-Za-z0-9_-]{6}\.",
        ),
        lead=28,
    ),
    _issued("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", keys=("npm_",)),
    _issued("pypi-token", r"\bpypi-Ag[A-Za-z0-9_-]{50,}", keys=("pypi-Ag",)),
    _row("huggingface-token", r"\b(?:hf_[A-Za-z]{30,}|api_org_[A-Za-z]{30,})", keys=("hf_", "api_org_")),
    _issued("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,46}", keys=("SG.",)),
    _row("mailchimp-key", r"\b[0-9a-f]{32}-us\d{1,2}\b", keys=("-us",), gate=r"-us\d"),  # not each hex run tried
    _row("mailgun-key", r"\b(?:pub)?key-[0-9a-f]{32}\b", keys=("key-",)),
    _issued("shopify-token", r"\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}\b", keys=("shp",)),
    _row("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", keys=("_v1_",)),
    _row("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b", keys=("SK", "AC")),
    _row("telegram-token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", keys=(":AA",)),
    _row("azure-client-secret", r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", keys=("Q~",)),
    _row("vault-token", r"\bhv[sb]\.[A-Za-z0-9_-]{24,}", keys=("hvs.", "hvb.")),
    _issued("linear-key", r"\blin_api_[A-Za-z0-9]{40}\b", keys=("lin_api_",)),
    _issued("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", keys=("PMAK-",)),
    _row(
        "grafana-token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        keys=("glsa_", "glc_"),
    ),
    _issued("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", keys=("dapi",)),
    _issued(
        "age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", keys=("AGE-SECRET-KEY-1",)
    ),
    _row(
        "newrelic-key",
        r"\bNR(?:AK|AA|II)-[A-Z0-9]{27}\b|\bNRJS-[a-f0-9]{19}\b",
        keys=("NRAK-", "NRAA-", "NRII-", "NRJS-"),
    ),
    _issued("doppler-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b", keys=("dp.",)),
    _issued("planetscale-token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}", keys=("pscale_",)),
    _issued("mapbox-token", r"\bsk\.eyJ[A-Za-z0-9._-]{50,}", keys=("sk.eyJ",)),
    _issued("groq-key", r"\bgsk_[A-Za-z0-9]{52}\b", keys=("gsk_",)),
    _issued("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}", keys=("sntry",)),
    _issued("langsmith-key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b", keys=("lsv2_",)),
    _row("square-token", r"\b(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60})", keys=("sq0", "EAAA")),
    _issued("atlassian-token", r"\bATATT3[A-Za-z0-9_=-]{180,}", keys=("ATATT3",)),
    _issued("notion-token", r"\bntn_\d{11}[A-Za-z0-9]{35}\b|\bsecret_[A-Za-z0-9]{43}\b", keys=("ntn_", "secret_")),
    _issued("perplexity-key", r"\bpplx-[A-Za-z0-9]{48}\b", keys=("pplx-",)),
    _issued("replicate-token", r"\br8_[A-Za-z0-9]{37}\b", keys=("r8_",)),
    _issued("supabase-token", r"\bsbp_[a-f0-9]{40}\b", keys=("sbp_",)),
    _issued("pulumi-token", r"\bpul-[a-f0-9]{40}\b", keys=("pul-",)),
    _issued("facebook-token", r"\bEAA[A-Za-z0-9]{100,}", keys=("EAA",)),
    _issued("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", keys=("eyJ",)),
    # 2: labelled values.
    _labelled(
        "authorization",
        rf"\bauthorization{_ASSIGN}(?:bearer|basic|token|digest|bot|apikey)\s+",
        r"[A-Za-z0-9._~+/=-]{8,}",
        keys=("authorization",),
    ),
    # Any other scheme (Okta's SSWS, FCM's key=, GenieKey...), or none: a value with a digit.
    _labelled(
        "authorization",
        rf"\bauthorization{_ASSIGN}(?:[A-Za-z][A-Za-z0-9_-]*(?:[ \t]+|=))?",
        r"(?=[A-Za-z0-9._~+/=:-]*\d)[A-Za-z0-9._~+/=:-]{12,}",
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
        # Every label starts so, in letters no other character folds to under re.I (unlike i, k, s):
        # the match is tried there only, not at every character of a long text.
        starts=("x-", "ap", "pr", "oc"),
    ),
    _labelled(
        "aws-secret-key",
        rf"\b(?:aws_?)?(?:secret_?access_?key|secret_?key|session_?token){_ASSIGN}",
        r"[A-Za-z0-9/+=]{40,}",
        keys=("secret", "session"),
        # The label's last letter (key's y, token's n), its = or :, and the value's first 40 characters,
        # looked for first and case-sensitively, led by a class the engine skips to (under re.I the
        # label's words are tried at every character); the letters re.I adds to [A-Za-z] are spelled
        # out (İ ı ſ K; y and n have none: tests/summarizers/test_redact_gates.py), so no match is missed.
        gate=rf"(?-i:[yYnN]{_ASSIGN}[A-Za-z0-9/+={_CASE_BLIND_EXTRA}]{{40}})",
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
    # The password may hold an unencoded '@': it runs to the last '@' before the host.
    _labelled(
        "url-password",
        r"\b[a-z][a-z0-9+.-]*://[^\s:/@\"'<>\[\]]*:",
        r"(?!\d+[/@])[^\s\"'<>]+(?=@[^\s@/\"'<>]*(?:[/?#\s\"'<>]|$))",
        keys=("://",),
        gate=_URL_WITH_PASSWORD,
    ),
    # A token alone before the host (https://TOKEN@host): long, with letters and digits, unlike a user name.
    _labelled(
        "url-token",
        r"\b[a-z][a-z0-9+.-]*://",
        r"(?=[^\s:/@\"'<>]*\d)(?=[^\s:/@\"'<>]*[A-Za-z])[^\s:/@\"'<>]{16,}(?=@)",
        keys=("://",),
        gate=_URL_WITH_TOKEN,
    ),
    # A connection string's Password=...; / PWD=...; runs to the ';' (a password may hold '&').
    _labelled(
        "connection-password",
        r"(?:^|[;\s\"'{])(?:password|pwd)\s*=\s*",
        r"(?:\{[^}\r\n]*\}|[^;\s\"'\r\n]+)(?=;|\s*$|[\"'])",
        keys=("password", "pwd"),
    ),
    _labelled(
        "query-password",
        r"[?&;](?:password|passwd|pwd|pass|secret|token|api[_-]?key|apikey|key|access[_-]?token|auth|auth[_-]?token"
        r"|client[_-]?secret|refresh[_-]?token|id[_-]?token|private[_-]?token|sig|signature|code)=",
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
    # Every match starts at a space before a dash: tried there only (the gate, led by a class the engine
    # skips to), not at every character, as the alternation of the pattern's head gives the engine none.
    dataclasses.replace(
        _labelled(
            "cli-token",
            r"(?:\s--(?:[a-z0-9]+-)*(?:token|password|passwd|pass|api-key|apikey|secret|credentials?)(?:-(?:key|value))?"
            r"[= ]\s*|\s-t\s+(?=dop_|[A-Za-z0-9_-]{30})"
            r"|\s-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)\s+|\s-pass(?:in|out)\s+pass:)"
            r"[\"']?",
            r"(?!-)[^\s\"']{6,}",
            keys=("--", "-t ", "pass"),
            gate=r"\s-",
        ),
        lead=0,
    ),
    # A password piped into a registry login: echo 'PW' | docker login --password-stdin.
    _labelled(
        "cli-password",
        r"\b(?:echo|printf)\s+(?:-n\s+)?([\"']?)",
        r"[^\s\"'|]{6,}(?=\2\s*\|\s*(?:sudo\s+)?(?:docker|podman|helm|oras|buildah|skopeo|nerdctl|crane)\b[^\n|]*"
        r"\blogin\b)",
        keys=("login",),
    ),
    # ~/.pgpass: host:port:database:user:password, a line each.
    _labelled(
        "pgpass-password",
        r"[A-Za-z0-9.-]+:(?:\d{1,5}|\*):[A-Za-z0-9_.$*-]+:[A-Za-z0-9_.@*-]+:",
        r"(?![\d*]*(?:$|\s))[^\s\"':]{6,}(?=$|[\r\n\"']|\\n)",
        flags=re.M,
        keys=(":",),
        starts=("\n", "\\n", "'", '"', " "),
        after=True,
        gate=r":(?:\d{1,5}|\*):[A-Za-z0-9_.$*-]+:[A-Za-z0-9_.@*-]+:",
    ),
    # The output of `cat` on a key file (config/master.key, secret.txt, *.pem): its first line.
    _labelled(
        "key-file",
        r"(?:^|(?<=[\s\"'])|\\n)(?:\$ )?cat\s+[^\s|;&]*"
        r"(?:master\.key|secret|token|credential|password|passwd|\.key\b)[^\s|;&]*\s*(?:\r?\n|\\n)",
        r"[A-Za-z0-9+/=_.-]{16,}(?=\r?\n|\\n|$|\s|[\"'])",
        keys=("cat",),
        gate=r"cat\s+[^\s|;&]*(?:master\.key|secret|token|credential|password|passwd|\.key\b)",
    ),
    # A Terraform variable marked sensitive, or named for a secret: its default is the secret.
    _labelled(
        "terraform-default",
        rf"\bvariable\s+\\?\"(?:[^\"\n]*{_SECRET_WORD}[^\"\n]*\"\s*\{{|[^\"\n]*\"\s*\{{(?=[^}}]*\bsensitive\s*=\s*true))"
        r"[^}]*?\bdefault\s*=\s*\\?\"",
        # One line break inside the quotes is a wrapped value (HCL strings hold none).
        r"[^\"\\\r\n]{1,1000}(?:(?:\r?\n|\\n)[^\"\\\r\n]{1,1000})?(?=\\?\")",
        keys=("variable",),
    ),
    # define('DB_PASSWORD', '...'), setenv("API_TOKEN", "..."): a secret's name, then its value, quoted.
    _labelled(
        "secret-assignment",
        rf"\(\s*([\"'])[A-Za-z0-9_.-]*{_SECRET_WORD}{_LABEL_TAIL}[A-Za-z0-9_.-]*\2\s*,\s*(\\?[\"'])",
        r"(?:(?!\3)[^\r\n]){6,1000}?(?=\3)",
        keys=ASSIGNMENT_KEYS,
        starts=("(",),
    ),
    # "key": "value", KEY='value', key = `value`: a quoted value runs to its closing quote, whatever it
    # holds (a Django key's ( # ! @ %, a password's spaces), on one line.
    _labelled(
        "secret-assignment",
        rf"{_SECRET_WORD}{_LABEL_TAIL}\\?[\"']?\]?\s*(?:=|:|=>|:=)[ \t]*(\\?[\"'`])",
        r"(?:(?!\2)[^\r\n]){6,1000}?(?=\2)",
        keys=ASSIGNMENT_KEYS,
        starts=_SECRET_WORD_STARTS,
    ),
    # KEY=value, key: value, key => value unquoted: to the next space or separator; ( ) and # may be inside.
    _labelled(
        "secret-assignment",
        rf"{_SECRET_WORD}{_LABEL_TAIL}{_ASSIGN}",
        # A value that is a function being called (get_token(), Secret("x")) is not a secret.
        r"(?![A-Za-z_][\w.]*\([\w.'\", =\[\]-]*\)(?:[\s,;]|$))"
        r"[^\s\"'`,;\\<>{}\[\]]{6,}?(?=\)*(?:[\s\"'`,;\\<>{}\[\]]|$))",
        keys=ASSIGNMENT_KEYS,
        starts=_SECRET_WORD_STARTS,
    ),
)


_RANDOM_VALUE = (  # case matters here, whatever the row's label does
    r"(?-i:(?=[0-9]*[A-Fa-f])[A-Fa-f0-9]{16,}(?:-[A-Za-z0-9]{2,8})?"
    r"|(?=[A-Za-z0-9+/=_-]*\d)(?=[A-Za-z0-9+/=_-]*[a-z])(?=[A-Za-z0-9+/=_-]*[A-Z])[A-Za-z0-9+/=_-]{20,})"
    r"(?![A-Za-z0-9+/=_.-])"
)
PATTERNS = (
    *PATTERNS,
    # MC_KEY=, segment_write_key: a name ending in _key, with a value that looks generated (hex, or
    # letters of both cases with digits): a name alone (sort_key: name) is not enough.
    _labelled(
        "key-assignment",
        rf"(?<=[A-Za-z0-9])[_-]key{_ASSIGN}",
        _RANDOM_VALUE,
        keys=("key",),
        starts=("_key", "-key"),
    ),
)
# Rows that read what the rows above left: a value passed beside a redacted one is its pair.
PATTERNS = (
    *PATTERNS,
    # Client("AC...", "TOKEN"), login(KEY_ID, 'SECRET'): the quoted token right after a redacted
    # argument is the other half of the credential.
    _labelled(
        "credential-pair",
        r"\[REDACTED:[a-z-]+\]\\?[\"']\s*,\s*\\?[\"']",
        r"(?=(?:[A-Za-z0-9+/=_.~-]|\r?\n|\\n){16})[A-Za-z0-9+/=_.~-]+(?:(?:\r?\n|\\n)[A-Za-z0-9+/=_.~-]+)?"
        r"(?=\\?[\"'])",
        flags=0,
        keys=("[REDACTED:",),
    ),
)


KEY_BLOCK_ROWS = 3  # the private-key and key-body rows at the head of PATTERNS
KEY_BLOCKS, TOKEN_ROWS = PATTERNS[:KEY_BLOCK_ROWS], PATTERNS[KEY_BLOCK_ROWS:]  # the two runs of redact.py


def redact_rows(text: str, rows: Sequence[Row] = PATTERNS) -> tuple[str, int]:
    """The table's rows, in order, over ``text``.

    A row with keys runs only when the text holds one of them; which keys it holds is looked for
    once per text (rows share keys), not once per row: those of case-blind rows in the text as
    given, the others in the text as it is now (again after a row replaced something). The rows
    to run are read off an index from key to rows, not tried one by one.
    """
    table = row_index(rows)
    lowered = text.lower() if table.folded_keys else text
    folded = table.held(lowered, folded=True)
    exact = table.held(text, folded=False)
    total = 0
    done = -1
    todo = table.to_run(folded, exact)
    # The lower-cased text for the rows that look for where a match starts; None: not lowered, or out of date.
    current: str | None = lowered if table.folded_keys else None
    # Where rows sharing their starts may start in ``current``: found once, while the text is unchanged.
    starts_found: StartsFound = {}
    while todo:
        index = todo.pop(0)
        row = rows[index]
        if len(text) < row.shortest:
            continue
        if row.starts and current is None:
            current = text.lower()
        text, count = row.sub(text, current, starts_found)
        total += count
        done = index
        if count:
            current = None
            starts_found = {}
            exact = table.held(text, folded=False)
            todo = [later for later in table.to_run(folded, exact) if later > done]
    return text, total
