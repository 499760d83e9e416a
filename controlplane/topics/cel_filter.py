"""Message browser filters: CEL expressions evaluated in a sandbox process (`cel_worker.py`) with a cap on
its memory and CPU time and a wall-clock limit per batch of records.

The expression sees one record at a time:

    partition, offset (int), timestamp (timestamp), size (int: key, value and header bytes),
    key, value (the registry's decoding, else the JSON document, else the text; null for none),
    keyText, valueText (the bytes as UTF-8 text), headers (map of name to UTF-8 text)

e.g. `value.amount > 100 && headers["source"] == "web"` or `key.startsWith("order-")`. A record for which
the expression fails (a missing field, a type mismatch) does not match; failures are counted and the first
one is reported, so a typo does not silently match nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from django.conf import settings

MAX_EXPRESSION_CHARS = 2000
# Brackets nested deeper than this are refused before the parser sees them.
MAX_NESTING = 32
_WORKER = Path(__file__).with_name("cel_worker.py")
_COMPILE_SECONDS = 5.0
_PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size for unprivileged processes
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_MAX_ANSWER_BYTES = 16 << 20


class FilterError(Exception):
    """The filter cannot be used: `code` says why for the API (invalid_filter, filter_too_slow, ...)."""

    def __init__(
        self, message: str, *, code: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.line = line
        self.column = column


@dataclass
class BatchResult:
    matches: list[int]
    errors: int
    first_error: str | None


def check_expression(expression: str) -> None:
    """Refuses what the parser should never see: too long, or nested too deep (strings skipped)."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise FilterError(
            f"The filter has {len(expression)} characters; at most {MAX_EXPRESSION_CHARS} are allowed.",
            code="invalid_filter",
        )
    depth = 0
    quote: str | None = None
    escaped = False
    line, column = 1, 0
    for char in expression:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise FilterError(
                    f"The filter nests brackets deeper than {MAX_NESTING} levels.",
                    code="invalid_filter",
                    line=line,
                    column=column,
                )
        elif char in ")]}":
            depth -= 1


def record_tuple(
    *,
    partition: int,
    offset: int,
    timestamp_ms: int,
    size: int,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]],
    decoded_key: tuple[Any, bytes] | None = None,
    decoded_value: tuple[Any, bytes] | None = None,
) -> tuple:
    """A record as the worker takes it; a payload the registry decoded goes as (decoded, raw bytes)."""
    return (
        partition,
        offset,
        timestamp_ms,
        size,
        decoded_key if decoded_key is not None else key,
        decoded_value if decoded_value is not None else value,
        headers,
    )


class FilterSandbox:
    """One sandbox process for one request: compiled once, then fed batches. Always use it as a context
    manager: the process is killed on exit."""

    def __init__(self, expression: str) -> None:
        check_expression(expression)
        self.expression = expression
        self.memory_bytes = settings.MESSAGE_FILTER_MEMORY_MB << 20
        self.batch_seconds = settings.MESSAGE_FILTER_BATCH_SECONDS
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-I",
                str(_WORKER),
                str(self.memory_bytes),
                str(settings.MESSAGE_FILTER_CPU_SECONDS),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._in = self._process.stdin.fileno()
        self._out = self._process.stdout.fileno()
        for descriptor in (self._in, self._out):
            # A smaller pipe only means the writes wait for the worker more often.
            with contextlib.suppress(OSError):
                fcntl.fcntl(descriptor, _F_SETPIPE_SZ, _PIPE_BYTES)
            os.set_blocking(descriptor, False)
        self._in_flight = 0
        try:
            self._send(expression, time.monotonic() + _COMPILE_SECONDS)
            answer = self._receive(time.monotonic() + _COMPILE_SECONDS, "compiling the filter")
        except BaseException:
            self.close()
            raise
        if "error" in answer:
            self.close()
            raise FilterError(
                f"The filter is not valid CEL: {answer['error']}",
                code="invalid_filter",
                line=answer.get("line"),
                column=answer.get("column"),
            )

    def __enter__(self) -> FilterSandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def submit(self, records: Sequence[tuple]) -> None:
        """Sends a batch; its result comes from `result()`, in order. One batch may be evaluated while the
        caller reads and decodes the next."""
        self._send(list(records), time.monotonic() + self.batch_seconds)
        self._in_flight += 1

    def result(self) -> BatchResult:
        if not self._in_flight:
            raise RuntimeError("no batch was submitted")
        answer = self._receive(time.monotonic() + self.batch_seconds, "evaluating the filter")
        self._in_flight -= 1
        return BatchResult(
            matches=[int(index) for index in answer.get("matches", [])],
            errors=int(answer.get("errors", 0)),
            first_error=answer.get("first_error"),
        )

    @property
    def reusable(self) -> bool:
        """Alive and with no batch whose answer is still to be read."""
        return self._process.poll() is None and self._in_flight == 0

    def _send(self, body: Any, deadline: float) -> None:
        pickled = pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL)
        data = memoryview(struct.pack(">I", len(pickled)) + pickled)
        while data:
            self._wait(self._in, deadline, writable=True, doing="evaluating the filter")
            try:
                written = os.write(self._in, data)
            except BrokenPipeError:
                raise self._died("evaluating the filter") from None
            except BlockingIOError:
                continue
            data = data[written:]

    def _receive(self, deadline: float, doing: str) -> dict[str, Any]:
        header = self._read_exactly(4, deadline, doing)
        (length,) = struct.unpack(">I", header)
        if length > _MAX_ANSWER_BYTES:
            raise self._died(doing)
        answer = json.loads(self._read_exactly(length, deadline, doing))
        if not isinstance(answer, dict):
            raise self._died(doing)
        return answer

    def _read_exactly(self, count: int, deadline: float, doing: str) -> bytes:
        chunks, left = [], count
        while left:
            self._wait(self._out, deadline, writable=False, doing=doing)
            try:
                chunk = os.read(self._out, left)
            except BlockingIOError:
                continue
            if not chunk:
                raise self._died(doing)
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _wait(self, descriptor: int, deadline: float, *, writable: bool, doing: str) -> None:
        left = deadline - time.monotonic()
        if left > 0:
            ready = (
                select.select([], [descriptor], [], left)
                if writable
                else select.select([descriptor], [], [], left)
            )
            if ready[1] or ready[0]:
                return
        self.close()
        raise FilterError(
            f"The filter took longer than {self.batch_seconds:g} s {doing} on a batch of records and was "
            "stopped. Simplify it (fewer comprehensions over large fields).",
            code="filter_too_slow",
        )

    def _died(self, doing: str) -> FilterError:
        self.close()
        return FilterError(
            f"The filter stopped while {doing}: it needed more than the "
            f"{self.memory_bytes >> 20} MB or the CPU time a filter may use.",
            code="filter_too_expensive",
        )


# Sandboxes kept warm between the requests of a scan (a process start and `import cel` cost 50-300 ms,
# more than a scan step's reading on a busy machine): per web process, by expression, for a minute.
_IDLE_SECONDS = 60.0
_IDLE_MAX = 4
_idle: list[tuple[float, str, FilterSandbox]] = []
_idle_lock = threading.Lock()


def acquire(expression: str) -> FilterSandbox:
    """A sandbox compiled for `expression`: an idle one of an earlier request, else a new one. Give it
    back with `release`."""
    now = time.monotonic()
    found = None
    expired = []
    with _idle_lock:
        for entry in list(_idle):
            since, source, sandbox = entry
            if now - since > _IDLE_SECONDS:
                _idle.remove(entry)
                expired.append(sandbox)
            elif found is None and source == expression:
                _idle.remove(entry)
                found = sandbox
    for sandbox in expired:
        sandbox.close()
    if found is not None and found.reusable:
        return found
    if found is not None:
        found.close()
    return FilterSandbox(expression)


def release(sandbox: FilterSandbox) -> None:
    """Keeps a healthy sandbox for the next request of the same filter; closes anything else."""
    if not sandbox.reusable:
        sandbox.close()
        return
    evicted = None
    with _idle_lock:
        _idle.append((time.monotonic(), sandbox.expression, sandbox))
        if len(_idle) > _IDLE_MAX:
            evicted = _idle.pop(0)[2]
    if evicted is not None:
        evicted.close()
