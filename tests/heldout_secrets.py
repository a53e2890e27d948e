"""A second corpus of FAKE secrets, written from the files people keep them in, not from the table.

``tests/secrets_corpus.py`` was written beside ``compactctl.summarizers.redact`` and shares
its view of what a secret looks like. This one starts from the other end: the settings files,
CI files and CLI configs their tools write (Django, Rails, Laravel, Spring, WordPress,
GitHub Actions, GitLab CI, CircleCI, the AWS/Azure/gcloud CLIs, kubeconfig, docker
``config.json``, ``.netrc``, ``.pgpass``, ``.npmrc``, ``pip.conf``, Terraform, connection
strings, JWTs in request headers), each filled with a value made the way its issuer makes
one (Django's ``get_random_secret_key`` alphabet, passwords with punctuation, ``@`` and
``#`` unencoded). Nothing here imports the redactor.

Each document is then *placed* four ways (``PLACEMENTS``): as it is, with a line break cut
into the secret (a wrapped terminal line), base64-encoded under a neutral key, and
URL-encoded in a query string. ``exposed(secret, placement, text)`` says whether any
10-character piece of the secret, in the form that placement sends it, is in ``text``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

_rng = random.Random(20261201)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
DJANGO = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)"  # django.core.management.utils
PUNCTUATED = ALNUM + "!@#$%^&*()-_+=?.,:~"
WINDOW = 10


def pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def password(n: int = 16) -> str:
    """A password as a manager makes one: every class, punctuation included, an '@' and a '#' often."""
    body = list(pick(PUNCTUATED, n - 4) + _rng.choice(UPPER) + _rng.choice(DIGITS) + _rng.choice("@#!") + "@")
    _rng.shuffle(body)
    return "".join(body)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt() -> str:
    head = _b64url(b'{"alg":"RS256","kid":"' + pick(HEX, 8).encode() + b'","typ":"JWT"}')
    claims = _b64url(
        json.dumps({"sub": pick(DIGITS, 9), "iss": "https://auth.example.com", "exp": 1893456000}).encode()
    )
    return f"{head}.{claims}.{_b64url(_rng.randbytes(64))}"


@dataclass(frozen=True)
class Document:
    kind: str
    secret: str
    text: str  # the file (or the lines of it) holding the secret


def _documents() -> list[Document]:
    out: list[Document] = []

    def doc(kind: str, secret: str, text: str) -> None:
        assert "{s}" in text, kind
        out.append(Document(kind, secret, text.replace("{s}", secret)))

    doc("django settings.py", pick(DJANGO, 50), "DEBUG = False\nSECRET_KEY = '{s}'\nALLOWED_HOSTS = ['*']")
    doc("django insecure key", "django-insecure-" + pick(DJANGO, 50), 'SECRET_KEY = "{s}"')
    doc(
        "django DATABASES",
        password(),
        "DATABASES = {\n    'default': {\n        'ENGINE': 'django.db.backends.postgresql',\n"
        "        'USER': 'app',\n        'PASSWORD': '{s}',\n        'HOST': 'db',\n    }\n}",
    )
    doc("flask config", pick(HEX, 64), "app.config['SECRET_KEY'] = '{s}'")
    doc("rails secret_key_base", pick(HEX, 128), "production:\n  secret_key_base: {s}")
    doc("rails master.key", pick(HEX, 32), "$ cat config/master.key\n{s}")
    doc(
        "laravel .env app key",
        "base64:" + base64.b64encode(_rng.randbytes(32)).decode(),
        "APP_ENV=production\nAPP_KEY={s}",
    )
    doc("laravel .env db password", password(20), "DB_CONNECTION=mysql\nDB_USERNAME=forge\nDB_PASSWORD={s}")
    doc(
        "spring application.properties",
        password(),
        "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password={s}",
    )
    doc("spring application.yml", password(), 'spring:\n  datasource:\n    username: app\n    password: "{s}"')
    doc("wp-config.php", password(24), "define( 'DB_USER', 'wp' );\ndefine( 'DB_PASSWORD', '{s}' );")
    doc("wp-config auth salt", pick(PUNCTUATED + "<>[]{}|", 64), "define( 'AUTH_KEY',         '{s}' );")
    doc(
        "github actions env",
        pick(ALNUM, 40),
        "jobs:\n  deploy:\n    steps:\n      - run: ./deploy.sh\n        env:\n          DEPLOY_TOKEN: {s}",
    )
    doc(
        "github actions docker login",
        password(),
        "      - uses: docker/login-action@v3\n        with:\n          username: bot\n          password: {s}",
    )
    doc("gitlab-ci variables", pick(ALNUM, 32), 'variables:\n  SONAR_TOKEN: "{s}"\n  SONAR_HOST_URL: https://sonar')
    doc("circleci context", pick(HEX, 40), '      - run: curl -H "Circle-Token: {s}" https://circleci.com/api/v2/me')
    doc(
        "aws credentials file",
        pick(B64, 40),
        "[default]\naws_access_key_id = AKIA" + pick(UPPER + "234567", 16) + "\naws_secret_access_key = {s}",
    )
    doc(
        "aws cli env export",
        pick(B64, 40),
        "export AWS_ACCESS_KEY_ID=ASIA" + pick(UPPER + DIGITS, 16) + "\nexport AWS_SECRET_ACCESS_KEY={s}",
    )
    doc(
        "gcloud application_default_credentials",
        "1//0" + pick(URLSAFE, 99),
        json.dumps(
            {
                "client_id": pick(DIGITS, 12) + ".apps.googleusercontent.com",
                "refresh_token": "{s}",
                "type": "authorized_user",
            }
        ),
    )
    doc(
        "azure cli service principal",
        pick(ALNUM, 3) + "8Q~" + pick(ALNUM + "_-.~", 31),
        "az login --service-principal -u " + pick(HEX, 8) + "-0000-4000-8000-" + pick(HEX, 12) + " -p {s} --tenant t",
    )
    doc(
        "kubeconfig user token",
        pick(ALNUM, 6) + "." + pick(ALNUM, 16),
        "users:\n- name: admin\n  user:\n    token: {s}",
    )
    doc("kubeconfig bearer jwt", jwt(), "users:\n- name: sa\n  user:\n    token: {s}")
    doc(
        "kubeconfig basic auth",
        password(),
        "users:\n- name: legacy\n  user:\n    username: admin\n    password: {s}",
    )
    doc(
        "kubernetes secret manifest",
        base64.b64encode(password().encode()).decode(),
        "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  db-password: {s}",
    )
    doc(
        "docker config.json",
        base64.b64encode(b"ci-bot:" + password().encode()).decode(),
        json.dumps({"auths": {"registry.example.com": {"auth": "{s}"}}}, indent=2),
    )
    doc(
        "docker identitytoken",
        pick(URLSAFE, 64),
        json.dumps({"auths": {"myregistry.azurecr.io": {"identitytoken": "{s}"}}}),
    )
    doc("docker login stdin", password(), "echo '{s}' | docker login --username bot --password-stdin")
    doc("netrc multi-line", password(), "machine git.example.com\n  login deploy\n  password {s}")
    doc("pgpass", password().replace(":", ""), "db.internal:5432:shop:shop_rw:{s}")
    doc("npmrc auth token", pick(URLSAFE, 40), "//npm.example.com/:_authToken={s}")
    doc("npmrc _auth", base64.b64encode(b"ci:" + password().encode()).decode(), "_auth={s}\nalways-auth=true")
    doc("pip.conf index-url", password(), "[global]\nindex-url = https://__token__:{s}@pypi.example.com/simple")
    doc("terraform.tfvars", password(), 'db_password = "{s}"\nregion = "eu-west-1"')
    doc("postgres url, unencoded @", password(), "DATABASE_URL=postgresql://app:{s}@db.example.com:5432/app")
    doc("mysql url", password(), "mysql://root:{s}@127.0.0.1:3306/shop")
    doc("mongodb+srv url", password(), "mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/?retryWrites=true")
    doc("redis url", password(), "REDIS_URL=rediss://default:{s}@cache.example.com:6380")
    doc("amqp url", password(), "CELERY_BROKER_URL=amqp://celery:{s}@rabbit:5672//")
    doc(
        "sql server connection string",
        password(),
        "Server=tcp:sql.example.net,1433;Initial Catalog=shop;User ID=app;Password={s};Encrypt=True;",
    )
    doc("odbc pwd", password(), "DRIVER={ODBC Driver 18};SERVER=db;UID=sa;PWD={s};")
    doc("jwt in authorization header", jwt(), "GET /v1/me HTTP/1.1\nHost: api.example.com\nAuthorization: Bearer {s}")
    doc("jwt in cookie", jwt(), "Cookie: theme=dark; access_token={s}; lang=en")
    doc("jwt in curl", jwt(), "curl -s https://api.example.com/v1/me -H 'Authorization: Bearer {s}'")
    doc("api key header in curl", pick(ALNUM, 32), 'curl -H "X-Api-Key: {s}" https://api.example.com/v2/items')
    doc("ssh private key", "\n".join(pick(B64, 70) for _ in range(6)),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----")  # fmt: skip
    doc("htpasswd-like env", password(), "BASIC_AUTH_PASSWORD={s}")
    doc("java keystore flag", password(), "keytool -list -keystore app.jks -storepass {s}")
    doc("jenkins api token", pick(HEX, 34), "JENKINS_API_TOKEN={s}")
    doc("sentry dsn", pick(HEX, 32), "SENTRY_DSN=https://{s}@o123456.ingest.sentry.io/7654321")
    doc("heroku api key", pick(HEX, 8) + "-" + pick(HEX, 4) + "-" + pick(HEX, 4) + "-" + pick(HEX, 4) + "-"
        + pick(HEX, 12), "HEROKU_API_KEY={s}")  # fmt: skip
    return out


DOCUMENTS: tuple[Document, ...] = tuple(_documents())


def _split(document: Document) -> tuple[str, str]:
    """A line break cut into the secret, as a terminal wraps it: (the text, the secret as sent)."""
    at = _rng.randrange(WINDOW // 2, max(WINDOW // 2 + 1, len(document.secret) - WINDOW // 2))
    cut = document.secret[:at] + "\n" + document.secret[at:]
    return document.text.replace(document.secret, cut), cut


def _base64(document: Document) -> tuple[str, str]:
    encoded = base64.b64encode(document.text.encode()).decode()
    return f"config_blob: {encoded}", encoded


def _urlencoded(document: Document) -> tuple[str, str]:
    encoded = quote(document.text, safe="")
    return f"https://app.example.com/import?payload={encoded}&step=2", quote(document.secret, safe="")


def _as_is(document: Document) -> tuple[str, str]:
    return document.text, document.secret


PLACEMENTS: dict[str, Callable[[Document], tuple[str, str]]] = {
    "as is": _as_is,
    "split": _split,
    "base64": _base64,
    "url-encoded": _urlencoded,
}


@dataclass(frozen=True)
class Placed:
    kind: str
    placement: str
    secret: str
    text: str
    sent_as: str  # the secret in the form this placement carries it


def placed() -> list[Placed]:
    out = []
    for document in DOCUMENTS:
        for name, place in PLACEMENTS.items():
            text, sent_as = place(document)
            out.append(Placed(document.kind, name, document.secret, text, sent_as))
    return out


PLACED: tuple[Placed, ...] = tuple(placed())


def exposed(item: Placed, text: str) -> bool:
    """True when any WINDOW-character piece of the secret, as sent or as it is, is in ``text``."""
    forms = {item.secret, item.sent_as, json.dumps(item.sent_as)[1:-1]}
    for form in forms:
        for line in form.splitlines() or [form]:
            for variant in (line, json.dumps(line)[1:-1]):
                if len(variant) >= WINDOW and any(
                    variant[i : i + WINDOW] in text for i in range(len(variant) - WINDOW + 1)
                ):
                    return True
    return False
