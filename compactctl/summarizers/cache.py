"""Summaries on disk, keyed by a hash of everything that shapes them, so a rerun pays nothing."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from compactctl import interrupts
from compactctl.userdirs import user_cache_dir

CACHE_ENV = "COMPACTCTL_CACHE_DIR"
CACHE_VERSION = 1


def default_cache_dir() -> Path:
    """``$COMPACTCTL_CACHE_DIR``, else the platform's user cache folder, then ``compactctl/summaries``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return user_cache_dir() / "summaries"


def cache_key(**parts: Any) -> str:
    """A hash of the parts (model, api, prompt, input, limits), stable across runs and machines."""
    data = json.dumps({"version": CACHE_VERSION, **parts}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


class DiskCache:
    """One small JSON file per entry; writes are atomic so parallel jobs never see half a file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Named and registered like every output's temporary file: removed if the run is stopped.
        with interrupts.temporary_beside(path) as temporary:
            temporary.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, path)
