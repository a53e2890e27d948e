"""The user's cache folder, where compactctl keeps what a run can rebuild (summaries, tokenizer tables)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir() -> Path:
    """The platform's user cache folder, then ``compactctl``: nothing in it is needed, all of it saves time."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "compactctl"
