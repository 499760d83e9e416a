"""The client telemetry receiver: decodes what PushTelemetry carries (OTLP `MetricsData`, protobuf) and keeps
the latest value of every series, exported on the broker's Prometheus endpoint as `kafka_client_<name>`
gauges labelled with the client instance id and client id.

Kafka leaves this to a ClientTelemetryReceiver plugin; ours is bounded so that no client can bloat the
broker: a cap on client instances kept (the least recently pushing one is dropped first), on series per
client and in all, on label count and length, and clients that stop pushing expire.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from broker.runtime.metrics import escape_label_value
from broker.telemetry.subscriptions import ClientIdentity

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue

FAMILY_PREFIX = "kafka_client_"
MAX_SERIES_PER_CLIENT = 2_000
MAX_SERIES = 100_000
# Data points read from one push; the rest are ignored. Bounds the event loop time one push can take.
MAX_POINTS_PER_PUSH = 5_000
MAX_ATTRIBUTES = 8
MAX_LABEL_VALUE_CHARS = 128
MAX_NAME_CHARS = 200
# A client that has not pushed for this many of its push intervals (and at least MIN_EXPIRY_S) is dropped.
EXPIRY_INTERVALS = 3
MIN_EXPIRY_S = 60.0

_NOT_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")
Labels = tuple[tuple[str, str], ...]


class TelemetryDecodeError(Exception):
    """The payload is not OTLP MetricsData (PushTelemetry answers INVALID_RECORD)."""


def _name(raw: str) -> str:
    return _NOT_NAME_CHARS.sub("_", raw[:MAX_NAME_CHARS])


def _attribute_labels(attributes: Iterable[KeyValue]) -> Labels:
    labels = []
    for attribute in attributes:
        if len(labels) == MAX_ATTRIBUTES:
            break
        key = _name(attribute.key).lstrip("_")  # "__" names are Prometheus's own
        if not key or key in ("client_instance_id", "client_id"):
            continue
        if key[0].isdigit():  # not a valid label name
            key = "_" + key
        value = attribute.value
        kind = value.WhichOneof("value")
        text = (
            str(getattr(value, kind))
            if kind in ("string_value", "int_value", "bool_value", "double_value")
            else ""
        )
        labels.append((key, text[:MAX_LABEL_VALUE_CHARS]))
    return tuple(sorted(labels))


def decode_samples(payload: bytes) -> Iterator[tuple[str, Labels, float]]:
    """(family name, data point labels, value) of the number and histogram data points in `payload`.
    Histograms and summaries give `<name>_count` and `<name>_sum`. The caller stops reading when it
    has enough (MAX_POINTS_PER_PUSH)."""
    # protobuf and the OTLP classes are imported by the first push (a client pushes only once a metrics
    # subscription matches it), not when the broker starts: 0.06 s of CPU.
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

    try:
        data = MetricsData.FromString(payload)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise TelemetryDecodeError(f"not an OTLP MetricsData payload: {exc}") from None
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                name = FAMILY_PREFIX + _name(metric.name)
                kind = metric.WhichOneof("data")
                if kind in ("gauge", "sum"):
                    for point in getattr(metric, kind).data_points:
                        number = point.as_double if point.WhichOneof("value") == "as_double" else point.as_int
                        yield name, _attribute_labels(point.attributes), float(number)
                elif kind in ("histogram", "exponential_histogram", "summary"):
                    for point in getattr(metric, kind).data_points:
                        labels = _attribute_labels(point.attributes)
                        yield f"{name}_count", labels, float(point.count)
                        yield f"{name}_sum", labels, float(point.sum)


HELP = "Latest value pushed by clients (KIP-714 client telemetry)."


@dataclass(eq=False, slots=True)
class _ClientSeries:
    client_id: str
    expires_at: float
    # (family, data point labels) -> (the series as the exposition names it, its latest value). The
    # name is rendered once, when the series first arrives: a scrape of 100,000 series only joins text.
    values: dict[tuple[str, Labels], tuple[str, float]] = field(default_factory=dict)


class TelemetryReceiver:
    """Latest pushed values per client instance, rendered as gauges for the metrics endpoint."""

    def __init__(self, max_clients: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_clients = max_clients
        self._clock = clock
        self._clients: OrderedDict[str, _ClientSeries] = OrderedDict()
        self._series = 0
        self.dropped_series = 0  # series refused by the caps since start

    @property
    def series(self) -> int:
        return self._series

    def __len__(self) -> int:
        return len(self._clients)

    def export(self, client: ClientIdentity, push_interval_ms: int, payload: bytes) -> None:
        """Keep the values in `payload` (uncompressed MetricsData) as the latest of this client's series.
        A payload that does not decode changes nothing (TelemetryDecodeError)."""
        samples = list(itertools.islice(decode_samples(payload), MAX_POINTS_PER_PUSH))
        now = self._clock()
        self._expire(now)
        instance = client.client_instance_id
        entry = self._clients.pop(instance, None)
        if entry is None:
            while len(self._clients) >= self.max_clients:
                self._forget(next(iter(self._clients)))
            entry = _ClientSeries(client.client_id[:MAX_LABEL_VALUE_CHARS], now)
        self._clients[instance] = entry  # most recently pushing last
        entry.expires_at = now + max(MIN_EXPIRY_S, EXPIRY_INTERVALS * push_interval_ms / 1000)
        for name, labels, value in samples:
            if not math.isfinite(value):  # Prometheus spells them NaN/+Inf; none is worth a series
                continue
            key = (name, labels)
            known = entry.values.get(key)
            if known is None:
                if len(entry.values) >= MAX_SERIES_PER_CLIENT or self._series >= MAX_SERIES:
                    self.dropped_series += 1
                    continue
                self._series += 1
                all_labels = (("client_instance_id", instance), ("client_id", entry.client_id), *labels)
                label_text = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in all_labels)
                entry.values[key] = (f"{name}{{{label_text}}}", value)
            else:
                entry.values[key] = (known[0], value)

    def _forget(self, client_instance_id: str) -> None:
        self._series -= len(self._clients.pop(client_instance_id).values)

    def _expire(self, now: float) -> None:
        for instance in [i for i, entry in self._clients.items() if entry.expires_at <= now]:
            self._forget(instance)

    def exposition(self) -> list[str]:
        """Every exported series as Prometheus text exposition lines, grouped by family (for
        BrokerMetrics.add_collector)."""
        self._expire(self._clock())
        families: dict[str, list[str]] = {}
        for entry in self._clients.values():
            for (name, _labels), (series, value) in entry.values.items():
                families.setdefault(name, []).append(f"{series} {value}")
        lines: list[str] = []
        for name in sorted(families):
            lines += (f"# HELP {name} {HELP}", f"# TYPE {name} gauge", *families[name])
        return lines
