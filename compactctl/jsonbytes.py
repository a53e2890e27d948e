"""JSON to bytes with orjson, and the standard library for what orjson refuses: integers past 64 bits.

Transcripts carry such integers (snowflake ids, big counters); read exactly (see
``formats.records``), they must be hashed, compared and written exactly too.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any, sort_keys: bool = False, indent: bool = False) -> bytes:
    """Compact JSON bytes (indented by 2 with ``indent``), as orjson writes them; an integer past 64
    bits is written as it is, whatever its size (input values reach ``--json`` and the writers)."""
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(value, option=option or None)
    except TypeError as error:
        if "64-bit" not in str(error):
            raise
        separators = (",", ": ") if indent else (",", ":")
        text = json.dumps(
            value, ensure_ascii=False, separators=separators, sort_keys=sort_keys, indent=2 if indent else None
        )
        return text.encode("utf-8", "surrogatepass")


def dumps_text(value: Any, sort_keys: bool = False) -> str:
    """``dumps`` as a str."""
    return dumps(value, sort_keys).decode("utf-8", "surrogatepass")
