"""JSON bodies nested deeper than any request needs are refused before they are parsed.

Python's parser recurses once per level, so a body of a few thousand brackets raises RecursionError (a 500)
in the parser, and anything that walks the parsed value (serializers, the audit log's redaction) recurses
again. No request of this API or of the schema registry nests anywhere near MAX_JSON_DEPTH levels.
"""

from __future__ import annotations

import io
import json
import re
from itertools import accumulate
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 64

# Strings may contain brackets; they are cut out before the brackets are counted.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")
_DELTA = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class TooDeeplyNested(ValueError):
    pass


def nesting_depth(raw: bytes) -> int:
    """The deepest level of arrays and objects in a JSON text (0 for a scalar)."""
    brackets = _BRACKETS.findall(_STRING.sub(b"", raw))
    return max(accumulate(_DELTA[b[0]] for b in brackets), default=0)


def loads_bounded(raw: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads that raises TooDeeplyNested (a ValueError) instead of recursing without bound."""
    data = raw.encode() if isinstance(raw, str) else raw
    depth = nesting_depth(data)
    if depth > max_depth:
        raise TooDeeplyNested(f"JSON nested {depth} levels deep; at most {max_depth} are accepted")
    return json.loads(data)


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the nesting bound: a deep body is a 400 in the API's error shape. (DRF hands
    it `request.body`, whose size Django has already checked: a larger body is a 413, see errors.py.)"""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        raw = stream.read() if stream is not None else b""
        depth = nesting_depth(raw)
        if depth > MAX_JSON_DEPTH:
            raise ParseError(f"JSON nested {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted.")
        return super().parse(io.BytesIO(raw), media_type, parser_context)
