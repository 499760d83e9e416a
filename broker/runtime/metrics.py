"""Broker metrics in Prometheus text exposition format, served on 127.0.0.1:metrics.port."""

from __future__ import annotations

import asyncio
import bisect
import logging
import struct
from collections import defaultdict
from collections.abc import Callable, Iterable

from kio.index import api_key_map

log = logging.getLogger(__name__)

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


_BATCH_LENGTH = struct.Struct(">i")
_RECORD_COUNT_AT = 57  # v2 batch header: recordCount sits at [57:61)


def count_records(records: bytes) -> int:
    """Records in a buffer of whole v2 batches, read from the batch headers only."""
    count = 0
    position = 0
    end = len(records) - 61
    while position <= end:
        count += _BATCH_LENGTH.unpack_from(records, position + _RECORD_COUNT_AT)[0]
        position += 12 + _BATCH_LENGTH.unpack_from(records, position + 8)[0]
    return count


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Histogram:
    __slots__ = ("buckets", "count", "total")

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self.count = 0
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
        self.count += 1
        self.total += seconds


class BrokerMetrics:
    """Counters updated from the event loop; rendered on demand."""

    def __init__(self) -> None:
        self.bytes_in: dict[str, int] = defaultdict(int)
        self.messages_in: dict[str, int] = defaultdict(int)
        self.bytes_out: dict[str, int] = defaultdict(int)
        self.messages_out: dict[str, int] = defaultdict(int)
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.latency: dict[str, _Histogram] = defaultdict(_Histogram)
        self.connections = 0
        self.connections_total = 0
        self.closed_for_bad_input = 0
        self.connections_refused = 0
        # Gauges computed when scraped: name -> (help, callable returning [(labels, value)]).
        self._gauges: dict[str, tuple[str, Callable[[], Iterable[tuple[dict[str, str], float]]]]] = {}
        # Sources of whole metric families whose names are known only when scraped (client telemetry):
        # callables returning exposition lines.
        self._collectors: list[Callable[[], Iterable[str]]] = []

    def record_request(self, api_key: int, api_version: int, seconds: float) -> None:
        name = api_key_map.get(api_key, str(api_key))
        self.requests[(name, api_version)] += 1
        self.latency[name].observe(seconds)

    def record_produce(self, topic: str, size: int, count: int) -> None:
        self.bytes_in[topic] += size
        self.messages_in[topic] += count

    def record_fetch(self, topic: str, records: bytes) -> None:
        self.bytes_out[topic] += len(records)
        self.messages_out[topic] += count_records(records)

    def add_gauge(
        self, name: str, help_text: str, sample: Callable[[], Iterable[tuple[dict[str, str], float]]]
    ) -> None:
        self._gauges[name] = (help_text, sample)

    def add_collector(self, collect: Callable[[], Iterable[str]]) -> None:
        """`collect()` returns exposition lines (HELP, TYPE and samples), rendered after the rest."""
        self._collectors.append(collect)

    def render(self) -> str:
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")

        family("kafka_broker_topic_bytes_in_total", "counter", "Record bytes appended per topic.")
        for topic, value in sorted(self.bytes_in.items()):
            lines.append(f'kafka_broker_topic_bytes_in_total{{topic="{escape_label_value(topic)}"}} {value}')
        family("kafka_broker_topic_messages_in_total", "counter", "Records appended per topic.")
        for topic, value in sorted(self.messages_in.items()):
            lines.append(
                f'kafka_broker_topic_messages_in_total{{topic="{escape_label_value(topic)}"}} {value}'
            )
        family("kafka_broker_topic_bytes_out_total", "counter", "Record bytes fetched per topic.")
        for topic, value in sorted(self.bytes_out.items()):
            lines.append(f'kafka_broker_topic_bytes_out_total{{topic="{escape_label_value(topic)}"}} {value}')
        family("kafka_broker_topic_messages_out_total", "counter", "Records fetched per topic.")
        for topic, value in sorted(self.messages_out.items()):
            lines.append(
                f'kafka_broker_topic_messages_out_total{{topic="{escape_label_value(topic)}"}} {value}'
            )
        family("kafka_broker_requests_total", "counter", "Requests handled per API and version.")
        for (api, version), value in sorted(self.requests.items()):
            lines.append(f'kafka_broker_requests_total{{api="{api}",version="{version}"}} {value}')
        family("kafka_broker_request_duration_seconds", "histogram", "Request handling time per API.")
        for api, hist in sorted(self.latency.items()):
            cumulative = 0
            for bound, count in zip((*LATENCY_BUCKETS_S, float("inf")), hist.buckets, strict=True):
                cumulative += count
                le = "+Inf" if bound == float("inf") else repr(bound)
                lines.append(
                    f'kafka_broker_request_duration_seconds_bucket{{api="{api}",le="{le}"}} {cumulative}'
                )
            lines.append(f'kafka_broker_request_duration_seconds_sum{{api="{api}"}} {hist.total:.6f}')
            lines.append(f'kafka_broker_request_duration_seconds_count{{api="{api}"}} {hist.count}')
        family("kafka_broker_connections", "gauge", "Open client connections.")
        lines.append(f"kafka_broker_connections {self.connections}")
        family("kafka_broker_connections_total", "counter", "Client connections accepted.")
        lines.append(f"kafka_broker_connections_total {self.connections_total}")
        family("kafka_broker_bad_input_closes_total", "counter", "Connections closed for malformed input.")
        lines.append(f"kafka_broker_bad_input_closes_total {self.closed_for_bad_input}")
        family(
            "kafka_broker_connections_refused_total",
            "counter",
            "Connections refused by max.connections or max.connections.per.ip.",
        )
        lines.append(f"kafka_broker_connections_refused_total {self.connections_refused}")
        for name, (help_text, sample) in sorted(self._gauges.items()):
            family(name, "gauge", help_text)
            try:
                samples = list(sample())
            except Exception:  # a broken gauge must not break the whole scrape
                log.exception("metrics gauge %s failed", name)
                continue
            for labels, value in samples:
                label_text = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels.items())
                lines.append(f"{name}{{{label_text}}} {value}" if label_text else f"{name} {value}")
        for collect in self._collectors:
            try:
                lines.extend(collect())
            except Exception:  # as a broken gauge
                log.exception("metrics collector %s failed", collect)
        return "\n".join(lines) + "\n"


async def serve_metrics(metrics: BrokerMetrics, host: str, port: int) -> asyncio.AbstractServer:
    """A tiny HTTP/1.0 server: GET /metrics answers the exposition, anything else 404."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 5)
            while (await asyncio.wait_for(reader.readline(), 5)) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.decode("latin-1").split()
            if len(parts) >= 2 and parts[0] == "GET" and parts[1].split("?")[0] == "/metrics":
                body = metrics.render().encode()
                status = "200 OK"
                content_type = "text/plain; version=0.0.4; charset=utf-8"
            else:
                body, status, content_type = b"not found\n", "404 Not Found", "text/plain"
            writer.write(
                f"HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, port)
