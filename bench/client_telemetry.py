"""What hostile client telemetry (KIP-714) pushes cost a broker, as JSON lines.

    python -m bench.client_telemetry [--flood 20000] [--series 50] [--bombs 50] [--garbage 50]

Starts `python -m broker` with a subscription to every metric every 100 ms, then measures its resident
memory (VmRSS), the time per request, the worst ApiVersions round trip of another client that keeps
asking meanwhile (a thread of this process: it also waits for the flooding thread's GIL), and how long a
scrape of the metrics endpoint takes afterwards:

- `flood`: `--flood` new client instances (a GetTelemetrySubscriptions with the zero id, then a push of
  `--series` distinct series each): the receiver keeps `client.telemetry.max.clients` (1,000) of them and
  the instance cache 16,384;
- `bombs`: pushes of a zstd payload under `telemetry.max.bytes` (1 MiB) that inflates to 1 GiB;
- `garbage`: pushes of 1 MiB of random bytes (not protobuf).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cramjam
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from bench.broker_connections import API_VERSIONS_V0, rss_kb, settled_rss_kb
from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.telemetry_wire import (
    NONE,
    ZSTD,
    alter_subscription,
    gauge,
    get_subscriptions,
    push,
    scrape,
)


def series_payload(client_number: int, series: int) -> bytes:
    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "org.apache.kafka.producer.node.request.latency.avg"
    for number in range(series):
        point = metric.gauge.data_points.add()
        point.as_double = float(number)
        attribute = point.attributes.add()
        attribute.key = "node_id"
        attribute.value.string_value = f"{client_number}-{number}"
    return data.SerializeToString()


class Probe(threading.Thread):
    """Another client: ApiVersions round trips, the worst one kept."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.worst_s = 0.0
        self.failures = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    sock.sendall(struct.pack(">i", len(API_VERSIONS_V0)) + API_VERSIONS_V0)
                    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
                    sock.recv(size, socket.MSG_WAITALL)
                except OSError:
                    self.failures += 1
                    return
                self.worst_s = max(self.worst_s, time.monotonic() - started)
                time.sleep(0.01)


def phase(broker: BrokerProcess, name: str, count: int, one: Callable[[WireClient, int], int]) -> dict:
    """Run `one` `count` times on one connection while a probe client keeps asking."""
    assert broker.process is not None
    before = rss_kb(broker.process.pid)
    probe = Probe(broker.port)
    probe.start()
    errors: dict[int, int] = {}
    started = time.monotonic()
    with WireClient(broker.bootstrap, timeout=60) as client:
        for number in range(count):
            error = one(client, number)
            errors[error] = errors.get(error, 0) + 1
    elapsed = time.monotonic() - started
    probe.stopping.set()
    probe.join()
    scrape_started = time.monotonic()
    text = scrape(broker.metrics_port)
    scrape_s = time.monotonic() - scrape_started
    return {
        "phase": name,
        "requests": count,
        "ms_per_request": round(elapsed * 1000 / count, 3),
        "errors": {str(k): v for k, v in sorted(errors.items())},
        "rss_before_mb": round(before / 1024, 1),
        "rss_after_mb": round(settled_rss_kb(broker.process.pid) / 1024, 1),
        "exported_clients": gauge(text, "kafka_broker_telemetry_clients"),
        "exported_series": gauge(text, "kafka_broker_telemetry_series"),
        "scrape_ms": round(scrape_s * 1000, 1),
        "scrape_mb": round(len(text) / 1e6, 1),
        "probe_worst_ms": round(probe.worst_s * 1000, 1),
        "probe_failures": probe.failures,
        "loadavg_1m": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flood", type=int, default=20_000)
    parser.add_argument("--series", type=int, default=50)
    parser.add_argument("--bombs", type=int, default=50)
    parser.add_argument("--garbage", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        broker = BrokerProcess(Path(directory), {})
        broker.start()
        try:
            assert alter_subscription(broker.bootstrap, "all", metrics="*", interval_ms="100") == (0, None)

            def flood(client: WireClient, number: int) -> int:
                answer = get_subscriptions(client)
                payload = series_payload(number, args.series)
                return push(client, answer.client_instance_id, int(answer.subscription_id), payload)

            bomb = bytes(cramjam.zstd.compress(bytes(1 << 30)))
            garbage = os.urandom(1 << 20)

            def pushing(payload: bytes, compression: int) -> Callable[[WireClient, int], int]:
                def one(client: WireClient, _number: int) -> int:
                    answer = get_subscriptions(client)
                    return push(
                        client, answer.client_instance_id, int(answer.subscription_id), payload, compression
                    )

                return one

            print(json.dumps({"bomb_bytes": len(bomb), "inflates_to": 1 << 30}), flush=True)
            for name, count, one in (
                ("flood", args.flood, flood),
                ("bombs", args.bombs, pushing(bomb, ZSTD)),
                ("garbage", args.garbage, pushing(garbage, NONE)),
            ):
                print(json.dumps(phase(broker, name, count, one)), flush=True)
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
