"""The message browser: the newest records across partitions, scans from the start, an offset or a time
with filters, and a live tail — each request bounded in time, continued with a cursor.

Why a cursor and not a stream: the console is served by WSGI worker threads (granian, 2 workers of 4 threads by default),
and a stream would hold one for as long as a page stays open. Every request here reads for at most
MESSAGE_SCAN_POLL_SECONDS (a tail waits at most MESSAGE_TAIL_WAIT_SECONDS for something new) and answers
with what it found, the progress, and a cursor: each partition's next offset, so the next request goes on
exactly where this one stopped — no gap, no repeat — on any worker, without server-side state.

Cursor kinds: `forward` scans [start, end) of each partition (end fixed when the scan began); `backward`
scans newest-first in windows (SCAN_STEP_RECORDS offsets over all partitions), each read forward; `tail`
follows the log end for as long as the page asks.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from controlplane.clusters.connections import connection_for
from controlplane.core.errors import ServiceError
from controlplane.kafka.messages import decode_text
from controlplane.kafka.reader import Record, TopicReader, merge_key, read_first, read_newest
from controlplane.kafka.refusals import kafka_refusals
from controlplane.schemas.decoding import PayloadDecoder
from controlplane.tenancy.access import Actor
from controlplane.topics import cel_filter
from controlplane.topics.cel_filter import FilterError, FilterSandbox, record_tuple
from controlplane.topics.choices import BrowseStart
from controlplane.topics.models import Topic

MAX_BROWSE_LIMIT = 500
# A backward scan (Newest with a filter) reads this many offsets over all partitions per step.
SCAN_STEP_RECORDS = 20_000
FILTER_BATCH = 500
# A forward scan that found something answers after this long rather than at the end of its step.
FIRST_ANSWER_SECONDS = 0.5
NEWEST_SECONDS = 10.0
CURSOR_KINDS = ("forward", "backward", "tail")


@dataclass(frozen=True)
class SimpleFilter:
    """The plain filters of the browse form: substrings of key and value, a header's presence."""

    key_contains: str = ""
    value_contains: str = ""
    header_key: str = ""

    def __bool__(self) -> bool:
        return bool(self.key_contains or self.value_contains or self.header_key)

    def __call__(self, record: Record) -> bool:
        if self.key_contains and self.key_contains.encode() not in (record.key or b""):
            return False
        if self.value_contains and self.value_contains.encode() not in (record.value or b""):
            return False
        return not self.header_key or any(name == self.header_key for name, _ in record.headers)


@dataclass
class Cursor:
    """Where a scan or a tail stands. `partitions` maps each partition to [window start, next offset,
    window end] (a tail: [next offset]); the counters add up over the requests of one scan."""

    kind: str
    partitions: dict[int, list[int]]
    scanned: int = 0
    bytes_scanned: int = 0
    matched: int = 0

    def encode(self) -> str:
        body = {
            "k": self.kind,
            "p": {str(p): state for p, state in sorted(self.partitions.items())},
            "n": self.scanned,
            "b": self.bytes_scanned,
            "m": self.matched,
        }
        return base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).decode()

    @classmethod
    def decode(cls, text: str, partition_count: int) -> Cursor:
        """A cursor of this topic's shape; anything else is a 400 (the text comes from the client)."""
        try:
            body = json.loads(base64.urlsafe_b64decode(text.encode()))
            kind = body["k"]
            width = 1 if kind == "tail" else 3
            partitions = {int(p): [int(v) for v in state] for p, state in body["p"].items()}
            counters = [int(body[name]) for name in ("n", "b", "m")]
        except (binascii.Error, ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
            raise ServiceError("The cursor is not one this API gave out.", code="invalid_cursor") from None
        valid = (
            kind in CURSOR_KINDS
            and all(0 <= p < partition_count for p in partitions)
            and all(len(state) == width and min(state) >= 0 for state in partitions.values())
            and min(counters) >= 0
            and (kind == "tail" or all(s[0] <= s[1] <= s[2] for s in partitions.values()))
        )
        if not valid:
            raise ServiceError("The cursor is not one this API gave out.", code="invalid_cursor")
        return cls(kind, partitions, *counters)


@dataclass
class PollResult:
    records: list[Record] = field(default_factory=list)
    filter_errors: int = 0
    first_filter_error: str | None = None
    stopped_because: str | None = None


def _rendered(data: bytes | None) -> dict[str, Any]:
    text, encoding = decode_text(data)
    return {"data": text, "encoding": encoding}


def _rendered_payload(data: bytes | None, decoder: PayloadDecoder, *, is_key: bool) -> dict[str, Any]:
    """Text or base64, plus the `decoded` value when the payload carries a schema registry id."""
    rendered = _rendered(data)
    decoded = decoder.decode(data, is_key=is_key)
    if decoded is not None:
        rendered["decoded"] = decoded
    return rendered


def render(records: Iterable[Record], decoder: PayloadDecoder) -> list[dict[str, Any]]:
    return [
        {
            "partition": r.partition,
            "offset": r.offset,
            "timestamp": datetime.fromtimestamp(r.timestamp_ms / 1000, tz=UTC).isoformat(),
            "size": r.size,
            "key": _rendered_payload(r.key, decoder, is_key=True),
            "value": _rendered_payload(r.value, decoder, is_key=False),
            "headers": [{"key": name, "value": _rendered(value)} for name, value in r.headers],
        }
        for r in records
    ]


class _Matcher:
    """Applies the plain filters, then the CEL expression in its sandbox, a batch at a time."""

    def __init__(self, simple: SimpleFilter, sandbox: FilterSandbox | None, decoder: PayloadDecoder) -> None:
        self.simple = simple
        self.sandbox = sandbox
        self.decoder = decoder
        self.errors = 0
        self.first_error: str | None = None

    def _decoded(self, data: bytes | None, *, is_key: bool) -> tuple[Any, bytes] | None:
        decoded = self.decoder.decode(data, is_key=is_key)
        if decoded is None or decoded["error"] is not None or data is None:
            return None
        return decoded["value"], data

    def matches(self, batch: list[Record]) -> list[int]:
        candidates = [i for i, record in enumerate(batch) if not self.simple or self.simple(record)]
        if self.sandbox is None or not candidates:
            return candidates
        self.sandbox.submit(
            [
                record_tuple(
                    partition=r.partition,
                    offset=r.offset,
                    timestamp_ms=r.timestamp_ms,
                    size=r.size,
                    key=r.key,
                    value=r.value,
                    headers=r.headers,
                    decoded_key=self._decoded(r.key, is_key=True),
                    decoded_value=self._decoded(r.value, is_key=False),
                )
                for r in (batch[i] for i in candidates)
            ]
        )
        result = self.sandbox.result()
        self.errors += result.errors
        self.first_error = self.first_error or result.first_error
        return [candidates[i] for i in result.matches]


def _window(partition_count: int, limit: int) -> int:
    """Offsets per partition in one backward step: about SCAN_STEP_RECORDS over all partitions."""
    return max(limit, SCAN_STEP_RECORDS // max(1, partition_count))


def _scan(
    reader: TopicReader, cursor: Cursor, matcher: _Matcher | None, *, limit: int, deadline: float, lows: dict
) -> PollResult:
    """Reads on from the cursor until `limit` records matched (over the whole scan), the ranges end, the
    byte cap is reached or the deadline passes; moves the cursor exactly past what was looked at.

    Forward scans and tails stop at the record that fills the limit. A backward step (one window per
    partition) is always finished before the limit applies (a window is read oldest first, so its first
    matches are not its newest), and each answer holds its newest `limit` matches: the page keeps the
    newest `limit` of all answers."""
    result = PollResult()
    tail = cursor.kind == "tail"
    backward = cursor.kind == "backward"
    forward = cursor.kind == "forward"
    began = time.monotonic()

    def wanted() -> int:
        """Matches still wanted: over the whole scan, or in this poll of a tail."""
        return limit - (len(result.records) if tail else cursor.matched)

    def settle(batch: list[Record]) -> bool:
        """Filters the batch; False when the limit was reached and the rest of it is left unscanned."""
        hits = matcher.matches(batch) if matcher is not None else list(range(len(batch)))
        left = wanted()
        cut = len(batch)
        if len(hits) >= left and not backward:
            hits = hits[: max(0, left)]
            cut = (hits[-1] + 1) if hits else 0
        result.records.extend(batch[i] for i in hits)
        cursor.matched += len(hits)
        unscanned = batch[cut:]
        cursor.scanned += cut
        cursor.bytes_scanned += sum(r.size for r in batch[:cut])
        for record in reversed(unscanned):  # the earliest unscanned record of each partition is next
            reader.positions[record.partition] = record.offset
        return not unscanned and (backward or wanted() > 0)

    while time.monotonic() < deadline:
        if backward:
            window = _window(len(cursor.partitions), limit)
            for p, state in cursor.partitions.items():
                window_start, position, window_end = state
                if position >= window_end and window_start > lows.get(p, 0):
                    start = max(lows.get(p, 0), window_start - window)
                    cursor.partitions[p] = [start, start, window_start]
        if tail:
            ranges: dict[int, tuple[int, int | None]] = {
                p: (s[0], None) for p, s in cursor.partitions.items()
            }
        else:
            ranges = {
                p: (max(s[1], lows.get(p, 0)), s[2]) for p, s in cursor.partitions.items() if s[1] < s[2]
            }
        if not ranges:
            result.stopped_because = "end"
            return result
        batch: list[Record] = []
        stop = early = False
        # Unfiltered, every record matches: no more than the limit is read.
        batch_size = FILTER_BATCH if matcher is not None or backward else max(1, min(FILTER_BATCH, wanted()))
        for record in reader.read(ranges, deadline=deadline, idle_return=tail):
            batch.append(record)
            if len(batch) >= batch_size:
                if not settle(batch) or cursor.bytes_scanned >= settings.MESSAGE_SCAN_MAX_BYTES:
                    stop = True
                    batch = []
                    break
                batch = []
                if forward and result.records and time.monotonic() - began >= FIRST_ANSWER_SECONDS:
                    early = True  # the page shows the first matches now; the scan goes on with the cursor
                    break
        if batch and not settle(batch):
            stop = True
        for p, position in reader.positions.items():
            if tail:
                cursor.partitions[p] = [position]
            else:
                cursor.partitions[p][1] = position
        if matcher is not None:
            result.filter_errors, result.first_filter_error = matcher.errors, matcher.first_error
        if backward:
            # Matches beyond the newest `limit` of this request are older than `limit` others: never shown.
            result.records = sorted(result.records, key=merge_key)[-limit:]
            if cursor.matched >= limit and all(s[1] >= s[2] for s in cursor.partitions.values()):
                result.stopped_because = "limit"
                return result
        if cursor.matched >= limit and not tail and not backward:
            result.stopped_because = "limit"
            return result
        if cursor.bytes_scanned >= settings.MESSAGE_SCAN_MAX_BYTES and not tail:
            result.stopped_because = "byte_cap"
            return result
        if early or (tail and (stop or result.records)):
            return result
    return result


def _initial_cursor(
    reader: TopicReader,
    partitions: list[int],
    bounds: dict[int, tuple[int, int]],
    *,
    start: str,
    offset: int | None,
    timestamp: datetime | None,
) -> Cursor:
    if start == BrowseStart.NEWEST:
        # An empty first window: the scan opens the first real one, sized for the partition count.
        return Cursor("backward", {p: [high, high, high] for p, (_low, high) in bounds.items()})
    if start == BrowseStart.EARLIEST:
        return Cursor("forward", {p: [low, low, high] for p, (low, high) in bounds.items()})
    if start == BrowseStart.OFFSET:
        p = partitions[0]
        low, high = bounds[p]
        begin = min(max(int(offset or 0), low), high)
        return Cursor("forward", {p: [begin, begin, high]})
    assert timestamp is not None
    found = reader.offsets_at(partitions, int(timestamp.timestamp() * 1000))
    starts = {
        p: high if found[p] is None else min(max(found[p], low), high) for p, (low, high) in bounds.items()
    }
    return Cursor("forward", {p: [starts[p], starts[p], bounds[p][1]] for p in partitions})


def _remaining(cursor: Cursor, bounds: dict[int, tuple[int, int]]) -> int:
    total = 0
    for p, state in cursor.partitions.items():
        low, high = bounds.get(p, (0, 0))
        if cursor.kind == "tail":
            total += max(0, high - state[0])
        elif cursor.kind == "backward":
            total += max(0, state[2] - max(state[1], low)) + max(0, state[0] - low)
        else:
            total += max(0, state[2] - max(state[1], low))
    return total


def browse(
    *,
    actor: Actor,
    topic: Topic,
    start: str,
    partition: int | None = None,
    offset: int | None = None,
    timestamp: datetime | None = None,
    limit: int = 50,
    simple: SimpleFilter | None = None,
    expression: str = "",
    cursor: str = "",
    live: bool = False,
    wait_seconds: float | None = None,
) -> dict[str, Any]:
    """One step of browsing (see the module's docstring). Newest without a filter is exactly the latest
    `limit` records across the partitions and needs no second request; `live` starts a tail at the end."""
    count = topic.observed_partitions or topic.partitions
    if partition is not None and not 0 <= partition < count:
        raise ServiceError(f"The topic has partitions 0 to {count - 1}.", code="unknown_partition")
    if start == BrowseStart.OFFSET and (offset is None or partition is None) and not cursor:
        raise ServiceError("Browsing from an offset needs a partition and an offset.", code="invalid_browse")
    if start == BrowseStart.TIMESTAMP and timestamp is None and not cursor:
        raise ServiceError("Browsing from a timestamp needs the timestamp.", code="invalid_browse")
    limit = max(1, min(limit, MAX_BROWSE_LIMIT))
    simple = simple or SimpleFilter()
    expression = expression.strip()
    partitions = [partition] if partition is not None else list(range(count))
    state = Cursor.decode(cursor, count) if cursor else None
    decoder = PayloadDecoder.for_actor(actor=actor, cluster_id=topic.cluster_id, topic=topic.name)
    filtering = bool(simple) or bool(expression)
    sandbox = None
    try:
        sandbox = cel_filter.acquire(expression) if expression else None
    except FilterError as error:
        raise _filter_refusal(error) from None
    poll_seconds = settings.MESSAGE_SCAN_POLL_SECONDS
    try:
        with kafka_refusals(), TopicReader(connection_for(topic.cluster), topic.name) as reader:
            matcher = _Matcher(simple, sandbox, decoder) if filtering else None
            if state is None and (live or (start == BrowseStart.NEWEST and not filtering)):
                bounds = reader.bounds(partitions)
                records: list[Record] = []
                if not filtering:
                    deadline = time.monotonic() + NEWEST_SECONDS
                    records = read_newest(reader, bounds, limit, deadline=deadline)
                if not live:
                    done = PollResult(stopped_because="end")
                    return _answer(render(records, decoder), None, done, None, bounds)
                # Everything shown lies before these ends: the tail starts exactly there.
                tail = Cursor("tail", {p: [high] for p, (_low, high) in bounds.items()})
                return _answer(render(records, decoder), tail, PollResult(), tail, bounds)
            bounds = reader.bounds(partitions)
            if state is None:
                state = _initial_cursor(
                    reader, partitions, bounds, start=start, offset=offset, timestamp=timestamp
                )
                if not filtering:  # exactly the first `limit` by time, in one request
                    ranges = {p: (s[1], s[2]) for p, s in state.partitions.items()}
                    deadline = time.monotonic() + NEWEST_SECONDS
                    records = read_first(reader, ranges, limit, deadline=deadline)
                    return _answer(
                        render(records, decoder), None, PollResult(stopped_because="end"), None, bounds
                    )
            lows = {p: low for p, (low, _high) in bounds.items()}
            wait = settings.MESSAGE_TAIL_WAIT_SECONDS
            if wait_seconds is not None:
                wait = min(max(wait_seconds, 0.1), wait)
            deadline = time.monotonic() + (wait if state.kind == "tail" else poll_seconds)
            polled = _scan(reader, state, matcher, limit=limit, deadline=deadline, lows=lows)
            if state.kind == "tail":
                bounds = reader.bounds(partitions)
            records = sorted(polled.records, key=merge_key)
            finished = polled.stopped_because is not None and state.kind != "tail"
            return _answer(render(records, decoder), None if finished else state, polled, state, bounds)
    except FilterError as error:
        raise _filter_refusal(error) from None
    finally:
        if sandbox is not None:
            cel_filter.release(sandbox)


def _answer(
    messages: list[dict[str, Any]],
    next_cursor: Cursor | None,
    polled: PollResult,
    progress_of: Cursor | None,
    bounds: dict[int, tuple[int, int]],
) -> dict[str, Any]:
    progress = None
    if progress_of is not None:
        remaining = _remaining(progress_of, bounds)
        progress = {
            "scanned": progress_of.scanned,
            "bytes_scanned": progress_of.bytes_scanned,
            "matched": progress_of.matched,
            "remaining": remaining if progress_of.kind != "tail" else 0,
            "done": next_cursor is None,
            "stopped_because": polled.stopped_because,
            "filter_errors": polled.filter_errors,
            "first_filter_error": polled.first_filter_error,
        }
    lag = None
    if progress_of is not None and progress_of.kind == "tail":
        lag = _remaining(progress_of, bounds)
    return {
        "messages": messages,
        "cursor": next_cursor.encode() if next_cursor is not None else None,
        "progress": progress,
        "lag": lag,
        "end_offsets": {str(p): high for p, (_low, high) in sorted(bounds.items())},
    }


def _filter_refusal(error: FilterError) -> ServiceError:
    details: dict[str, Any] = {}
    if error.line is not None:
        details = {"line": error.line, "column": error.column}
    return ServiceError(error.message, code=error.code, details=details)
