"""A corpus of realistic FAKE secrets, one per kind, each in the context a transcript would hold it.

Every value is made here from a seeded generator in the shape the issuer uses (prefix,
alphabet, length), so nothing real is in the repository and no literal token sits in a
file for a scanner to trip on. ``CORPUS`` is shared by the redaction tests and by
``bench/secrets_bench.py``; ``leaked(secret, text)`` says whether any part of a secret got
through (a 10-character window is enough to count as a leak: a partial key is a leak).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_rng = random.Random(1414)
LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def fake(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Secret:
    kind: str
    secret: str  # what must not leave the machine
    text: str  # the secret in the line(s) a transcript would carry it in


def _pem(label: str, lines: int = 12) -> tuple[str, str]:
    body_lines = [fake(B64, 64) for _ in range(lines)] + [fake(B64, 40) + "=="]
    body = "\n".join(body_lines)
    return body, f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _build() -> list[Secret]:
    out: list[Secret] = []

    def add(kind: str, secret: str, template: str) -> None:
        out.append(Secret(kind, secret, template.replace("{s}", secret)))

    add("openai project key", "sk-proj-" + fake(URLSAFE, 48) + "T3BlbkFJ" + fake(URLSAFE, 48), "OPENAI_API_KEY={s}")
    add("openai legacy key", "sk-" + fake(ALNUM, 20) + "T3BlbkFJ" + fake(ALNUM, 20), "client = OpenAI(api_key='{s}')")
    add("anthropic key", "sk-ant-api03-" + fake(URLSAFE, 93) + "AA", "export ANTHROPIC_API_KEY={s}")
    add("anthropic admin key", "sk-ant-admin01-" + fake(URLSAFE, 93) + "AA", "admin key is {s}")
    add("aws access key id", "AKIA" + fake(UPPER + "234567", 16), "aws_access_key_id = {s}")
    add("aws secret, labelled", fake(B64, 40), "aws_secret_access_key = {s}")
    sts_secret, sts_token = fake(B64, 40), "IQoJb3JpZ2luX2Vj" + fake(B64, 300)
    add(
        "aws secret in sts json",
        sts_secret,
        json.dumps({"Credentials": {"AccessKeyId": "ASIA" + fake(UPPER + DIGITS, 16), "SecretAccessKey": "{s}"}}),
    )
    add("aws session token in sts json", sts_token, '{"SessionToken": "{s}", "Expiration": "2026-12-01T10:00:00Z"}')
    add("github classic token", "ghp_" + fake(ALNUM, 36), "git clone https://x-access-token:{s}@github.com/acme/app")
    add("github fine-grained token", "github_pat_11" + fake(UPPER + DIGITS, 20) + "_" + fake(ALNUM, 59), "GH={s}")
    add("github oauth token", "gho_" + fake(ALNUM, 36), "token: {s}")
    add(
        "gitlab personal token",
        "glpat-" + fake(URLSAFE, 20),
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.example.com",
    )
    add("gitlab runner token", "glrt-" + fake(URLSAFE, 20), "gitlab-runner register --token {s}")
    add("slack bot token", "xoxb-" + fake(DIGITS, 12) + "-" + fake(DIGITS, 13) + "-" + fake(ALNUM, 24), "SLACK={s}")
    add(
        "slack webhook",
        "https://hooks.slack.com/services/T"
        + fake(UPPER + DIGITS, 8)
        + "/B"
        + fake(UPPER + DIGITS, 10)
        + "/"
        + fake(ALNUM, 24),
        "post to {s}",
    )
    add("stripe live secret key", "sk_live_" + fake(ALNUM, 99), 'stripe.api_key = "{s}"')
    add("stripe restricted key", "rk_live_" + fake(ALNUM, 99), "STRIPE_RESTRICTED {s}")
    add("stripe webhook secret", "whsec_" + fake(ALNUM, 32), "endpoint secret {s}")
    add("google api key", "AIza" + fake(URLSAFE, 35), "https://maps.googleapis.com/maps/api/geocode/json?key={s}")
    add("google oauth client secret", "GOCSPX-" + fake(URLSAFE, 28), "client secret {s}")
    gcp_body, gcp_pem = _pem("PRIVATE KEY", 8)
    out.append(
        Secret(
            "gcp service account json",
            gcp_body,
            json.dumps({"type": "service_account", "private_key_id": fake(HEX, 40), "private_key": gcp_pem + "\n"}),
        )
    )
    add("npm token", "npm_" + fake(ALNUM, 36), "//registry.npmjs.org/:_authToken={s}")
    add("pypi upload token", "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 140), "password = {s}")
    add("hugging face token", "hf_" + fake(LOWER + UPPER, 34), "huggingface-cli login --token {s}")
    add("sendgrid key", "SG." + fake(URLSAFE, 22) + "." + fake(URLSAFE, 43), "SENDGRID {s}")
    add("mailgun key", "key-" + fake(HEX, 32), "api: {s}")
    add("shopify access token", "shpat_" + fake(HEX, 32), "X-Shopify-Access-Token: {s}")
    add("digitalocean token", "dop_v1_" + fake(HEX, 64), "doctl auth init -t {s}")
    add(
        "discord bot token",
        "M" + fake(ALNUM, 25) + "." + fake(URLSAFE, 6) + "." + fake(URLSAFE, 38),
        "client.run('{s}')",
    )
    add(
        "discord webhook",
        "https://discord.com/api/webhooks/" + fake(DIGITS, 18) + "/" + fake(URLSAFE, 68),
        "webhook {s}",
    )
    add("twilio api key", "SK" + fake(HEX, 32), "twilio key {s}")
    add("telegram bot token", fake(DIGITS, 10) + ":AA" + fake(URLSAFE, 33), "bot = Bot('{s}')")
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Ada","admin":true}').decode().rstrip("=")
    add("jwt", header + "." + claims + "." + fake(URLSAFE, 43), "cookie session={s}; Path=/")
    add("bearer header", fake(URLSAFE, 40), "Authorization: Bearer {s}")
    basic = base64.b64encode(b"deploy:" + fake(ALNUM, 18).encode()).decode()
    add("basic auth header", basic, "-H 'Authorization: Basic {s}'")
    add("x-api-key header", fake(ALNUM, 32), "X-API-Key: {s}")
    add(".env password line", "Tr0ub4dor&3-" + fake(ALNUM, 6), "DB_PASSWORD={s}")
    add(".env api key line", fake(HEX, 32), "DATADOG_API_KEY={s}")
    add(".env secret key line", fake(ALNUM + "!@%^*-_", 50), "DJANGO_SECRET_KEY='{s}'")
    add("yaml password", "s3cr3t-" + fake(ALNUM, 10), "  password: {s}")
    add("json client secret", fake(URLSAFE, 40), '{"client_id": "web-app", "client_secret": "{s}"}')
    add("database url password", "pg-" + fake(ALNUM, 16), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app")
    add("url password, empty user", "rd-" + fake(ALNUM, 20), "redis://:{s}@cache.internal:6379/0")
    add("url password with a slash", "ab/" + fake(ALNUM, 12) + "/cd", "mongodb://admin:{s}@mongo.internal/admin")
    add(
        "jdbc query password",
        "Jd8-" + fake(ALNUM, 14),
        "jdbc:mysql://db.internal:3306/shop?user=shop&password={s}&useSSL=true",
    )
    add("netrc password", "nt-" + fake(ALNUM, 16), "machine api.example.com login bot password {s}")
    add("curl user password", "cu-" + fake(ALNUM, 16), "curl -u admin:{s} https://ci.example.com/api")
    rsa_body, rsa_pem = _pem("RSA PRIVATE KEY", 25)
    add("rsa private key", rsa_body, rsa_pem)
    ssh_body, ssh_pem = _pem("OPENSSH PRIVATE KEY", 6)
    add("openssh private key", ssh_body, ssh_pem)
    ec_body, ec_pem = _pem("EC PRIVATE KEY", 3)
    add("ec private key", ec_body, ec_pem)
    pgp_lines = [fake(B64, 64) for _ in range(10)]
    pgp_body = "\n".join(pgp_lines)
    add(
        "pgp private key",
        pgp_body,
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n=" + fake(B64, 4) + "\n-----END PGP PRIVATE KEY BLOCK-----",
    )
    add(
        "azure storage account key",
        fake(B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
    )
    add("azure ad client secret", fake(ALNUM, 3) + "8Q~" + fake(ALNUM + "_~.-", 34), "AZURE_CLIENT_SECRET {s}")
    add("vault token", "hvs." + fake(URLSAFE, 90), "VAULT_TOKEN {s}")
    add("linear key", "lin_api_" + fake(ALNUM, 40), "linear {s}")
    add("postman key", "PMAK-" + fake(HEX, 24) + "-" + fake(HEX, 34), "postman {s}")
    add("grafana service account token", "glsa_" + fake(ALNUM, 32) + "_" + fake(HEX, 8), "grafana {s}")
    add("databricks token", "dapi" + fake(HEX, 32), "databricks {s}")
    add(
        "age secret key",
        "AGE-SECRET-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
        "# created: 2026-11-30\n{s}",
    )
    add("new relic user key", "NRAK-" + fake(UPPER + DIGITS, 27), "newrelic {s}")
    add("doppler token", "dp.pt." + fake(ALNUM, 43), "doppler {s}")
    add("planetscale password", "pscale_pw_" + fake(URLSAFE, 43), "planetscale {s}")
    add("mapbox secret token", "sk.eyJ1Ijoi" + fake(URLSAFE, 60) + "." + fake(URLSAFE, 22), "mapbox {s}")
    add("groq key", "gsk_" + fake(ALNUM, 52), "groq {s}")
    add("sentry auth token", "sntrys_eyJpYXQiOjE" + fake(URLSAFE, 60), "sentry {s}")
    add("huggingface org token", "api_org_" + fake(LOWER + UPPER, 34), "hf org {s}")
    add(
        "docker config auth",
        base64.b64encode(b"ci:" + fake(ALNUM, 20).encode()).decode(),
        '{"auths": {"ghcr.io": {"auth": "{s}"}}}',
    )
    add("kubeconfig client key data", fake(B64, 120) + "=", "    client-key-data: {s}")
    add("mysql password flag", "My-" + fake(ALNUM, 14), "mysql -u root -p'{s}' shop")
    add("langsmith key", "lsv2_pt_" + fake(HEX, 32) + "_" + fake(HEX, 10), "LANGCHAIN {s}")
    add("square access token", "EAAA" + fake(URLSAFE, 60), "square {s}")
    add("atlassian api token", "ATATT3xFfGF0" + fake(URLSAFE, 180) + "=" + fake(HEX, 8), "jira {s}")
    add("notion token", "ntn_" + fake(DIGITS, 11) + fake(ALNUM, 35), "notion {s}")
    add("perplexity key", "pplx-" + fake(ALNUM, 48), "pplx {s}")
    add("replicate token", "r8_" + fake(ALNUM, 37), "replicate {s}")
    add("supabase token", "sbp_" + fake(HEX, 40), "supabase {s}")
    add("pulumi token", "pul-" + fake(HEX, 40), "pulumi {s}")
    return out


CORPUS: tuple[Secret, ...] = tuple(_build())

# Text that must come back unchanged: ordinary identifiers a transcript is full of.
CLEAN = (
    "Run pytest -q in src/app.py for order ORD-1234; see https://example.com/a:b and commit 3f9c2a1d7e",
    "git log: 9fceb02d0ae598e95dc970b74767f19372d61af8 Merge pull request #12",
    "request id 7d444840-9dc0-11d1-b245-5ffdce74fad2 took 312 ms",
    "max_tokens: 500, prompt_tokens: 1234, total_tokens: 1734",
    "The password field is required; the token expires in 3600 s.",
    "client = OpenAI(api_key=os.environ['OPENAI_API_KEY'])",
    "password = os.getenv('DB_PASSWORD')",
    "tokenizer: cl100k_base, author: Ada Lovelace",
    "http://localhost:8080/api/users@me",
    "The sha256 of the file is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
)


def leaked(secret: str, text: str, window: int = 10) -> bool:
    """True when the secret, or any ``window``-character piece of one of its lines, is in ``text``."""
    for line in secret.splitlines() or [secret]:
        for variant in (line, json.dumps(line)[1:-1]):
            if len(variant) <= window:
                if variant and variant in text:
                    return True
                continue
            if any(variant[i : i + window] in text for i in range(len(variant) - window + 1)):
                return True
    return False
