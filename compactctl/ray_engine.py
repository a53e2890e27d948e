"""``--engine ray``: the per-file jobs of a command on Ray Data, for folders beyond one machine.

The dataset is the file paths (``ray.data.from_items``), never the files' JSON: reading
records with ``read_json`` would lose where one transcript ends. Each row runs the same
per-file function ``--jobs`` runs in threads (``compact_file``, ``report_pair``), so the
worker reads its file, writes its output atomically beside where ``--jobs`` would, and
sends back its result (pickled) or its error as a failure row: one bad file never fails the
job, and the summary table is built from the same results in the same order.

Ray connects to ``RAY_ADDRESS`` when it is set (a cluster) and starts a local instance
otherwise. Ray is the optional extra ``compactctl[ray]``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from compactctl.errors import CompactctlError, InputError

T = TypeVar("T")
MISSING = "`engine` ray needs Ray: pip install 'compactctl[ray]'"


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise InputError(MISSING) from None
    return ray


def start(ray: Any, cpus: int | None = None) -> None:
    """Connect to RAY_ADDRESS, or start a local instance (with ``cpus`` CPUs when given)."""
    if ray.is_initialized():
        return
    import logging

    options: dict[str, Any] = {
        "ignore_reinit_error": True,
        "log_to_driver": False,
        "include_dashboard": False,
        "logging_level": logging.WARNING,
    }
    if not os.environ.get("RAY_ADDRESS") and cpus:
        options["num_cpus"] = cpus
    ray.init(**options)


def quiet(ray: Any) -> None:
    """No progress bars or per-dataset log lines on stderr: the command prints its own summary."""
    import logging

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False


def run(
    sources: list[str], work: Callable[[int], T], cpus: int | None = None
) -> tuple[dict[int, T], dict[int, tuple[str, int]]]:
    """Run ``work(index)`` for every source on Ray Data: results, and failures as (error, exit code)."""
    ray = _ray()
    from ray import cloudpickle  # Ray ships its own

    start(ray, cpus)
    quiet(ray)

    def attempt(row: dict[str, Any]) -> dict[str, Any]:
        index = int(row["index"])
        try:
            return {"index": index, "result": cloudpickle.dumps(work(index)), "error": "", "exit_code": 0}
        except CompactctlError as error:
            return {"index": index, "result": b"", "error": str(error), "exit_code": error.exit_code}
        except OSError as error:
            message = f"{error.filename or row['source']}: {error.strerror or error}"
            return {"index": index, "result": b"", "error": message, "exit_code": 2}

    items = [{"index": index, "source": source} for index, source in enumerate(sources)]
    rows = ray.data.from_items(items, override_num_blocks=max(1, min(len(items), 200))).map(attempt).take_all()
    results: dict[int, T] = {}
    failures: dict[int, tuple[str, int]] = {}
    for row in rows:
        if row["error"]:
            failures[row["index"]] = (row["error"], int(row["exit_code"]))
        else:
            results[row["index"]] = cloudpickle.loads(row["result"])
    return results, failures
