"""A local node's own metrics, read from its Prometheus endpoint on 127.0.0.1 (Broker.metrics_port).

Both engines serve the same names there: our broker on its `metrics.port` (broker/runtime/metrics.py), Apache
Kafka through the JMX exporter agent, whose rules (controlplane/apache_kafka/node.py) rename Kafka's MBeans to
ours. Counters become rates between two reads of the page (the previous read is kept in the cache for
RATE_WINDOW_SECONDS); Apache Kafka also reports its own count of under-replicated partitions it leads.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.core.cache import cache

SCRAPE_TIMEOUT_SECONDS = 2.0
RATE_WINDOW_SECONDS = 600
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
COUNTERS = {
    "bytes_in": "kafka_broker_topic_bytes_in_total",
    "bytes_out": "kafka_broker_topic_bytes_out_total",
    "messages_in": "kafka_broker_topic_messages_in_total",
    "requests": "kafka_broker_requests_total",
}
UNDER_REPLICATED = "kafka_broker_under_replicated_partitions"


class MetricsUnavailable(Exception):
    """The node has no metrics endpoint, or it did not answer."""


@dataclass(frozen=True)
class NodeMetrics:
    totals: dict[str, float]
    # Per second since the previous read (None on the first read, or after a restart reset the counters).
    rates: dict[str, float | None]
    under_replicated_partitions: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            **{f"{name}_total": value for name, value in self.totals.items()},
            **{f"{name}_per_second": value for name, value in self.rates.items()},
            "under_replicated_partitions": self.under_replicated_partitions,
        }


def parse_exposition(text: str) -> dict[str, float]:
    """Sums every sample of each metric name over its labels (comments and unparsable lines skipped)."""
    sums: dict[str, float] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        sums[match.group(1)] = sums.get(match.group(1), 0.0) + value
    return sums


def scrape(port: int) -> dict[str, float]:
    if not port:
        raise MetricsUnavailable("the node has no metrics endpoint")
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT_SECONDS
        ) as response:
            return parse_exposition(response.read().decode(errors="replace"))
    except (OSError, urllib.error.URLError) as error:
        raise MetricsUnavailable(f"127.0.0.1:{port} did not answer: {error}") from error


def read_node_metrics(*, cluster_id: int, node_id: int, port: int) -> NodeMetrics:
    """The node's totals, and rates against the previous read of the same node."""
    sums = scrape(port)
    now = time.time()
    totals = {name: sums.get(metric, 0.0) for name, metric in COUNTERS.items()}
    key = f"node-metrics:{cluster_id}:{node_id}:{port}"
    previous = cache.get(key)
    rates: dict[str, float | None] = dict.fromkeys(totals)
    if previous is not None:
        then, before = previous
        elapsed = now - then
        if elapsed > 0 and all(totals[name] >= before.get(name, 0.0) for name in totals):
            rates = {name: (totals[name] - before.get(name, 0.0)) / elapsed for name in totals}
    cache.set(key, (now, totals), RATE_WINDOW_SECONDS)
    under = sums.get(UNDER_REPLICATED)
    return NodeMetrics(
        totals=totals, rates=rates, under_replicated_partitions=None if under is None else int(under)
    )
