"""The sandbox process that evaluates a message browser filter (a CEL expression) over records.

Run as a file (`python -I cel_worker.py <memory bytes> <cpu seconds>`) by `cel_filter.FilterSandbox`; it
imports no project code and no Django. CEL cannot loop, open files or reach the network, but an
expression can still cost time and memory in proportion to the data it looks at (`value.items.map(x,
valueText + valueText)` over a big record); this process is where that cost is paid: its address space and
CPU time are capped with rlimits, and the parent kills it when a batch outlasts its time limit.

Frames on stdin/stdout are a 4-byte big-endian length and a body. The parent's frames are pickles (the
parent is trusted: it wrote this program); this process answers in JSON only, which the parent parses
without trusting it. The first frame is the expression: answered {"ok": true} or {"error": message,
"line": n, "column": n}. Every further frame is a batch of records (tuples, see `_context`), answered
{"matches": [index, ...], "errors": count, "first_error": message | null}.
"""

from __future__ import annotations

import json
import pickle
import re
import resource
import struct
import sys
from datetime import UTC, datetime
from typing import Any

# Where a JSON document can start: only such payloads are parsed, so plain text skips the parser.
_JSON_STARTS = frozenset(b'{["-0123456789tfn')
_POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")
_MAX_ERROR_CHARS = 500


def _read_frame() -> bytes | None:
    header = sys.stdin.buffer.read(4)
    if len(header) < 4:
        return None
    (length,) = struct.unpack(">I", header)
    return sys.stdin.buffer.read(length)


def _write(answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    sys.stdout.buffer.write(struct.pack(">I", len(body)) + body)
    sys.stdout.buffer.flush()


def _payload(data: Any) -> Any:
    """A key or value as the expression sees it: the registry's decoding (sent as a 1-tuple), else the
    JSON document the bytes hold, else their text."""
    if isinstance(data, tuple):
        return data[0]
    if data is None:
        return None
    stripped = data.lstrip()
    if stripped and stripped[0] in _JSON_STARTS:
        try:
            return json.loads(data)
        except ValueError:
            pass
    return data.decode("utf-8", "replace")


def _text(data: Any) -> str | None:
    if isinstance(data, tuple):
        data = data[1]
    return None if data is None else data.decode("utf-8", "replace")


def _context(record: tuple) -> dict[str, Any]:
    partition, offset, timestamp_ms, size, key, value, headers = record
    return {
        "partition": partition,
        "offset": offset,
        "timestamp": datetime.fromtimestamp(timestamp_ms / 1000, tz=UTC),
        "size": size,
        "key": _payload(key),
        "value": _payload(value),
        "keyText": _text(key),
        "valueText": _text(value),
        "headers": {name: (item or b"").decode("utf-8", "replace") for name, item in headers},
    }


def _compile_error(error: Exception) -> dict[str, Any]:
    text = str(error)
    found = _POSITION.search(text)
    if found is None:
        return {"error": text[:_MAX_ERROR_CHARS], "line": None, "column": None}
    return {
        "error": found.group(3)[:_MAX_ERROR_CHARS],
        "line": int(found.group(1)),
        "column": int(found.group(2)),
    }


def main() -> None:
    memory_bytes, cpu_seconds = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    import cel  # after the limits: the library's own allocations count too

    source = _read_frame()
    if source is None:
        return
    try:
        program = cel.compile(pickle.loads(source))
    except Exception as error:  # the library reports parse errors as ValueError, others as it likes
        _write(_compile_error(error))
        return
    _write({"ok": True})
    while (frame := _read_frame()) is not None:
        matches: list[int] = []
        errors = 0
        first_error = None
        for index, record in enumerate(pickle.loads(frame)):
            try:
                result = program.execute(_context(record))
            except MemoryError:
                raise
            except Exception as error:  # a missing field, a type mismatch: no match, counted
                errors += 1
                first_error = first_error or f"{type(error).__name__}: {error}"[:_MAX_ERROR_CHARS]
                continue
            if result is True:
                matches.append(index)
            elif result is not False:
                errors += 1
                first_error = first_error or f"the filter returned {type(result).__name__}, not true or false"
        _write({"matches": matches, "errors": errors, "first_error": first_error})


if __name__ == "__main__":
    main()
