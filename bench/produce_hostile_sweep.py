"""Hostile Produce requests, v3 to v12, against a fresh broker: garbage in every field, huge counts and sizes.

    .venv/bin/python bench/produce_hostile_sweep.py

For each request version: acks (1, -1, 0, 2, -2, 32767) by timeouts (0, -1, Int32.MAX), transactional ids
("", 32,767 characters), topic names (empty, 300 characters, `..`, an internal topic, NUL, non-ASCII),
partition indexes (-1, past the last, Int32.MAX), record sets (null, empty, 11 MB, 2^31-1 records declared,
lastOffsetDelta Int32.MAX, the largest producer id and sequence, a negative producer id, timestamps at Long.MIN
and Long.MAX, unknown attribute bits, 1 MB of random bytes), 5,000 partitions and 2,000 unknown topics in one
request. Prints one JSON line per version (answers, broker RSS) and one for what a consumer then reads of the
partition everything went to: the broker must answer every request, stay up, stay within its memory, and keep
the partition readable. Last run (load 20): every request answered, RSS 67 → 87 MB, the partition read to
its end by librdkafka.
"""

from __future__ import annotations

import datetime
import importlib
import io
import json
import random
import shutil
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from kio.schema.api_versions.v3.request import ApiVersionsRequest  # noqa: E402
from kio.schema.request_header.v1.header import RequestHeader as HeaderV1  # noqa: E402
from kio.schema.request_header.v2.header import RequestHeader as HeaderV2  # noqa: E402
from kio.serial import entity_writer  # noqa: E402
from kio.static.primitive import i16, i32, i32Timedelta  # noqa: E402

from broker.wire.records.records import Record, build_batch  # noqa: E402
from tests.fixtures.broker import BrokerProcess  # noqa: E402
from tests.fixtures.poison_batches import raw_batch, record  # noqa: E402
from tests.integration.broker.helpers import create_topic  # noqa: E402
from tests.integration.broker.kafka_wire import WireClient  # noqa: E402


def rss_mb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) // 1024


def produce(port: int, version: int, acks: int, timeout_ms: int, txn: str | None, topics: list) -> str:
    """Send one Produce request; what came back: answered, closed, or nothing (acks=0)."""
    schema = importlib.import_module(f"kio.schema.produce.v{version}.request")
    body = schema.ProduceRequest(
        transactional_id=txn,
        acks=i16(acks),
        timeout=i32Timedelta.parse(datetime.timedelta(milliseconds=timeout_ms)),
        topic_data=tuple(
            schema.TopicProduceData(
                name=name,
                partition_data=tuple(schema.PartitionProduceData(index=i32(i), records=r) for i, r in parts),
            )
            for name, parts in topics
        ),
    )
    header_type = HeaderV2 if body.__flexible__ else HeaderV1
    buffer = io.BytesIO()
    header = header_type(
        request_api_key=i16(0), request_api_version=i16(version), correlation_id=i32(1), client_id="sweep"
    )
    entity_writer(header_type)(buffer, header)
    entity_writer(type(body))(buffer, body)
    payload = buffer.getvalue()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        if acks == 0:
            return "no answer (acks=0)"
        try:
            return "answered" if len(sock.recv(4)) == 4 else "closed"
        except (TimeoutError, ConnectionError) as error:
            return type(error).__name__


def main() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="produce-sweep-"))
    broker = BrokerProcess(data_dir, {})
    broker.start()
    try:
        sweep(broker)
    finally:
        broker.kill9()
        shutil.rmtree(data_dir, ignore_errors=True)


def sweep(broker: BrokerProcess) -> None:
    port, pid = broker.port, broker.process.pid
    topic = create_topic(broker.bootstrap, f"sweep-{int(time.time())}", partitions=2)
    good = build_batch([Record(b"k", b"v")])
    noise = random.Random(1).randbytes(1 << 16) * 16
    record_sets = {
        "null": None,
        "empty": b"",
        "good": good,
        "11 MB": build_batch([Record(b"k", b"x" * 11_000_000)]),
        "2^31-1 records declared": raw_batch(record(), 2**31 - 1, last_offset_delta=2**31 - 2),
        "lastOffsetDelta Int32.MAX": raw_batch(record(), 1, last_offset_delta=2**31 - 1),
        "largest producer id and sequence": raw_batch(
            record(), 1, producer_id=2**63 - 1, base_sequence=2**31 - 1
        ),
        "producer id -5": raw_batch(record(), 1, producer_id=-5),
        "timestamp Long.MIN": raw_batch(record(), 1, base_timestamp=-(2**63)),
        "timestamp Long.MAX": raw_batch(record(), 1, base_timestamp=2**63 - 1),
        "unknown attribute bits": raw_batch(record(), 1, attributes=-64),
        "1 MB of random bytes": noise,
    }
    start_rss = rss_mb(pid)
    for version in range(3, 13):
        answers: dict[str, int] = {}

        def note(answer: str, answers: dict[str, int] = answers) -> None:
            answers[answer] = answers.get(answer, 0) + 1

        for acks in (1, -1, 0, 2, -2, 32767):
            for timeout_ms in (0, -1, 2**31 - 1):
                note(produce(port, version, acks, timeout_ms, None, [(topic, [(0, good)])]))
        for txn in ("", "x" * 32767):
            note(produce(port, version, 1, 1000, txn, [(topic, [(0, good)])]))
        for name in ("", "a" * 300, "../x", "__consumer_offsets", "\x00", "ü" * 100):
            note(produce(port, version, 1, 1000, None, [(name, [(0, good)])]))
        for index in (-1, 2, 2**31 - 1):
            note(produce(port, version, 1, 1000, None, [(topic, [(index, good)])]))
        for records in record_sets.values():
            note(produce(port, version, 1, 1000, None, [(topic, [(0, records)])]))
        note(produce(port, version, 1, 1000, None, [(topic, [(0, good)] * 5000)]))
        note(produce(port, version, 1, 1000, None, [(f"nope-{i}", [(0, good)]) for i in range(2000)]))
        with WireClient(broker.bootstrap, timeout=10) as client:
            alive = client.request(ApiVersionsRequest(client_software_name="s", client_software_version="1"))
        print(
            json.dumps(
                {
                    "version": version,
                    "answers": answers,
                    "serving": alive.error_code.value == 0,
                    "rss_mb": rss_mb(pid),
                    "rss_mb_at_start": start_rss,
                }
            ),
            flush=True,
        )
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "sweep", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    read, errors, deadline = 0, [], time.monotonic() + 30
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            if message.error().code() == -191:  # _PARTITION_EOF: read to the end
                break
            errors.append(str(message.error()))
            continue
        read += 1
    consumer.close()
    print(json.dumps({"consumed": read, "reached_end": time.monotonic() < deadline, "errors": errors[:5]}))


if __name__ == "__main__":
    main()
