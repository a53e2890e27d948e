"""A third corpus of FAKE secrets, written blind: shapes neither other corpus nor the table was built from.

``tests/secrets_corpus.py`` was written beside the redactor and ``tests/heldout_secrets.py``
after reading it; this one was written from the files and headers the issuers document
(Okta's ``SSWS`` header, Cloudflare's ``X-Auth-Key``, FCM's ``Authorization: key=``, a
Teams webhook, an OpenVPN static key, rclone's ``pass =``, Terraform variable defaults,
Helm values, an SSH key in a YAML block scalar, a service-account key base64'd into a CI
secret...), before running the redactor on any of them. Nothing here imports the
redactor. The figures before and after the fixes it led to are in the README.

Each document is placed as the held-out corpus places its own (``heldout_secrets.PLACEMENTS``:
as it is, cut by a line break, base64-encoded, URL-encoded), and ``bench/secrets_bench.py --paths``
puts it into messages of a real Claude Code session and runs it down every path.
"""

from __future__ import annotations

import base64
import json
import random
import string

from tests.heldout_secrets import PLACEMENTS, Document, Placed

_rng = random.Random(26_0303)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
SYMBOLS = "!#$%&*+-.=?@^_~"


def pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def passphrase(n: int = 18) -> str:
    """A generated password: letters, digits and symbols, at least one of each."""
    body = list(pick(ALNUM + SYMBOLS, n - 3) + _rng.choice(UPPER) + _rng.choice(DIGITS) + _rng.choice(SYMBOLS))
    _rng.shuffle(body)
    return "".join(body)


def uuid() -> str:
    return f"{pick(HEX, 8)}-{pick(HEX, 4)}-4{pick(HEX, 3)}-a{pick(HEX, 3)}-{pick(HEX, 12)}"


def _pem_lines(count: int, width: int = 64) -> str:
    return "\n".join(pick(B64, width) for _ in range(count))


def _documents() -> list[Document]:
    out: list[Document] = []

    def doc(kind: str, secret: str, text: str) -> None:
        assert "{s}" in text, kind
        out.append(Document(kind, secret, text.replace("{s}", secret)))

    doc(
        "stripe restricted key in .env",
        "rk_live_51" + pick(ALNUM, 96),
        "# payments\nSTRIPE_PUBLISHABLE=pk_live_51" + pick(ALNUM, 20) + "\nSTRIPE_RESTRICTED={s}\nNODE_ENV=production",
    )
    doc(
        "azure service bus connection string",
        pick(B64, 43) + "=",
        "Endpoint=sb://acme-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccessKey={s}",
    )
    doc(
        "azure blob SAS url",
        pick(B64, 43) + "=",
        "https://acmebackups.blob.core.windows.net/db?sv=2022-11-02&ss=b&srt=co&sp=rl"
        "&se=2026-12-31T00:00:00Z&spr=https&sig={s}",
    )
    doc(
        ".npmrc legacy _password",
        base64.b64encode(passphrase().encode()).decode(),
        "registry=https://npm.acme.dev/\n//npm.acme.dev/:username=ci\n//npm.acme.dev/:_password={s}\n"
        "//npm.acme.dev/:email=ci@acme.dev",
    )
    doc(
        ".pypirc private index",
        passphrase(),
        "[distutils]\nindex-servers = internal\n\n[internal]\nrepository = https://pypi.acme.dev/\n"
        "username = deploy\npassword = {s}",
    )
    doc(
        "teams incoming webhook",
        uuid() + "@" + uuid() + "/IncomingWebhook/" + pick(HEX, 32) + "/" + uuid(),
        # The secret is the path: "https://acme" alone would match the other documents' URLs.
        "notify_url = 'https://acme.webhook.office.com/webhookb2/{s}'",
    )
    doc(
        "twilio auth token as an argument",
        pick(HEX, 32),
        'from twilio.rest import Client\nclient = Client("AC' + pick(HEX, 32) + '", "{s}")',
    )
    doc("mailchimp key in yaml", pick(HEX, 32) + "-us21", "newsletter:\n  provider: mailchimp\n  mc_key: {s}")
    sa_key = json.dumps(
        {
            "type": "service_account",
            "project_id": "acme-prod",
            "private_key_id": pick(HEX, 40),
            "private_key": "-----BEGIN PRIVATE KEY-----\n" + _pem_lines(10) + "\n-----END PRIVATE KEY-----\n",
            "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
        }
    )
    doc(
        "gcp key base64 in a CI secret",
        base64.b64encode(sa_key.encode()).decode(),
        "    - name: auth\n      env:\n        GCP_SA_KEY_B64: {s}",
    )
    doc(
        "ssh key in a yaml block scalar",
        _pem_lines(7, 70),
        "deploy:\n  host: web1\n  ssh_key: |\n    -----BEGIN OPENSSH PRIVATE KEY-----\n    {s}\n"
        "    -----END OPENSSH PRIVATE KEY-----",
    )
    doc(
        "terraform variable default",
        passphrase(),
        'variable "db_admin" {\n  type      = string\n  default   = "{s}"\n  sensitive = true\n}',
    )
    doc(
        "helm values",
        passphrase(20),
        "postgresql:\n  enabled: true\n  auth:\n    username: app\n    postgresPassword: {s}\n    database: app",
    )
    doc(
        "okta SSWS header",
        "00" + pick(URLSAFE, 40),
        'curl -H "Authorization: SSWS {s}" https://acme.okta.com/api/v1/users',
    )
    doc(
        "cloudflare global api key",
        pick(HEX, 37),
        'curl https://api.cloudflare.com/client/v4/zones -H "X-Auth-Email: ops@acme.dev" -H "X-Auth-Key: {s}"',
    )
    doc(
        "openvpn static key",
        "\n".join(pick(HEX, 32) for _ in range(16)),
        "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n{s}\n-----END OpenVPN Static key V1-----\n</tls-auth>",
    )
    doc(
        "fcm legacy server key",
        "AAAA" + pick(URLSAFE, 7) + ":APA91b" + pick(URLSAFE, 134),
        "POST /fcm/send HTTP/1.1\nHost: fcm.googleapis.com\nAuthorization: key={s}\nContent-Type: application/json",
    )
    doc("rclone sftp pass", pick(URLSAFE, 46), "[nas]\ntype = sftp\nhost = nas.lan\nuser = backup\npass = {s}")
    doc(
        "alibaba cloud cli",
        pick(ALNUM, 30),
        "aliyun configure set --profile prod --access-key-id LTAI" + pick(ALNUM, 20) + " --access-key-secret {s}",
    )
    doc("airtable personal access token", "pat" + pick(ALNUM, 14) + "." + pick(HEX, 64), "AIRTABLE_PAT={s}")
    doc(
        "smtp password in yaml",
        passphrase(),
        "mailer:\n  smtp_host: smtp.acme.dev\n  smtp_user: noreply\n  smtp_pass: {s}",
    )
    return out


DOCUMENTS: tuple[Document, ...] = tuple(_documents())
PLACED: tuple[Placed, ...] = tuple(
    Placed(d.kind, name, d.secret, *place(d)) for d in DOCUMENTS for name, place in PLACEMENTS.items()
)
