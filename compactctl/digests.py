"""The hash functions a command uses on its hot path, taken from Python's own modules, not OpenSSL.

``import hashlib`` loads OpenSSL (``_hashlib``: the library, its relocations and its
algorithm table: some 11 M instructions, about 5 ms of CPU at every start) though what a
``compact`` hashes is small: digests of texts and messages, and the uuid5 of each record
written. Python builds ``_blake2``, ``_sha256`` and ``_sha1`` in; they give the same digests.
Where one is missing (a build without it; Python 3.12's sha256, in ``_sha2``), hashlib's is used.
Large inputs (a tokenizer table of megabytes) keep to ``hashlib``: OpenSSL is faster there.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

try:
    from _blake2 import blake2b as blake2b
except ImportError:  # pragma: no cover - every CPython since 3.6 builds it in
    from hashlib import blake2b as blake2b

if TYPE_CHECKING:  # typeshed has no stubs for these two; they are hashlib's functions
    from hashlib import sha1, sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:  # Python 3.12 names it _sha2: hashlib's there
        from hashlib import sha256
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover
        from hashlib import sha1

__all__ = ["blake2b", "sha1", "sha256", "uuid5"]


def uuid5(namespace: uuid.UUID, name: str) -> uuid.UUID:
    """``uuid.uuid5``, whose ``from hashlib import sha1`` would load OpenSSL: the same UUID."""
    digest = sha1(namespace.bytes + name.encode("utf-8")).digest()
    return uuid.UUID(bytes=digest[:16], version=5)
