"""JSON to bytes with orjson, and the standard library for what orjson refuses: integers past 64 bits.

Transcripts carry such integers (snowflake ids, big counters); read exactly (see
``formats.records``), they must be hashed, compared and written exactly too.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any, sort_keys: bool = False) -> bytes:
    """Compact JSON bytes, as orjson writes them; an integer past 64 bits is written as it is."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError as error:
        if "64-bit" not in str(error):
            raise
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys).encode()
