"""Headless Chromium (Debian's ``chromium`` package) for the review page: DOM, screenshot, load time.

Used by tests/review/ and bench/review_bench.py. No browser is downloaded: it is the system
``chromium`` (``.ci/run`` installs it), started with the flags a closed network needs and a
new empty profile each time, so nothing carries over between runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)

# Appended to a copy of a page (never to the page itself): in the load handler, force the first
# layout and write the elapsed time since navigation began into the DOM, where --dump-dom sees it.
TIMING_SCRIPT = (
    "<script>addEventListener('load',()=>{document.body.offsetHeight;"
    "const n=document.createElement('output');n.id='load-ms';n.textContent=performance.now().toFixed(1);"
    "document.body.append(n)})</script>"
)
_LOAD_MS = re.compile(r'<output id="load-ms">([\d.]+)</output>')


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class Chromium:
    executable: str
    timeout: float = 60.0
    width: int = 1400
    height: int = 1000

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="compactctl-chromium-") as profile:
            command = [
                self.executable,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={self.width},{self.height}",
            ]
            return subprocess.run([*command, *args], capture_output=True, text=True, timeout=self.timeout, check=True)

    def dom(self, page: Path) -> str:
        """The page's DOM after load, as the browser serialises it (scripts have run)."""
        return self._run("--dump-dom", page.resolve().as_uri()).stdout

    def screenshot(self, page: Path, png: Path) -> Path:
        self._run(f"--screenshot={png.resolve()}", page.resolve().as_uri())
        if not png.is_file():
            raise RuntimeError(f"chromium wrote no screenshot at {png}")
        return png

    def load_ms(self, page: Path) -> tuple[float, float]:
        """(ms from navigation start to the load event with the first layout done, wall seconds of the run)."""
        with tempfile.TemporaryDirectory(prefix="compactctl-timed-") as folder:
            timed = Path(folder) / page.name
            timed.write_bytes(page.read_bytes().replace(b"</body>", TIMING_SCRIPT.encode() + b"</body>", 1))
            started = time.perf_counter()
            dom = self.dom(timed)
            wall = time.perf_counter() - started
        found = _LOAD_MS.search(dom)
        if not found:
            raise RuntimeError("the page did not report its load time")
        return float(found.group(1)), wall
