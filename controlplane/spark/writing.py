"""Producing rows to topics with the idempotent producer (no duplicates or reordering on retries)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from confluent_kafka import KafkaError, Producer

FLUSH_TIMEOUT_S = 60.0


class ProduceFailed(RuntimeError):
    pass


def _as_bytes(value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value  # type: ignore[return-value]
    return str(value).encode()


def produce_batches(
    batches: Iterator[pa.RecordBatch], kafka_config: dict[str, str], *, default_topic: str | None
) -> int:
    """Produce every row (columns value, and optionally key, topic, partition, headers); returns the count.

    Raises ProduceFailed when any record was not acknowledged, so Spark retries or fails the task.
    """
    producer = Producer({"linger.ms": 20, **kafka_config, "enable.idempotence": True, "acks": "all"})
    return produce_with(producer, batches, default_topic=default_topic)


def produce_with(producer: Producer, batches: Iterator[pa.RecordBatch], *, default_topic: str | None) -> int:
    """Produce every row with `producer` and wait until each is acknowledged (see produce_batches); a
    transactional producer must be inside a transaction."""
    failures: list[KafkaError] = []

    def delivered(error: KafkaError | None, _message: object) -> None:
        if error is not None:
            failures.append(error)

    produced = 0
    for batch in batches:
        names = batch.schema.names
        if "value" not in names:
            raise ProduceFailed("writing to a topic needs a 'value' column")
        columns = {name: batch.column(name).to_pylist() for name in names}
        for row in range(batch.num_rows):
            topic = columns["topic"][row] if "topic" in columns and columns["topic"][row] else default_topic
            if topic is None:
                raise ProduceFailed("a row has no topic and the 'topic' option is not set")
            arguments: dict[str, object] = {
                "value": _as_bytes(columns["value"][row]),
                "key": _as_bytes(columns["key"][row]) if "key" in columns else None,
                "on_delivery": delivered,
            }
            if "partition" in columns and columns["partition"][row] is not None:
                arguments["partition"] = columns["partition"][row]
            if "headers" in columns and columns["headers"][row]:
                arguments["headers"] = [(h["key"], h["value"]) for h in columns["headers"][row]]
            while True:
                try:
                    producer.produce(topic, **arguments)
                    break
                except BufferError:
                    producer.poll(0.1)
            produced += 1
        producer.poll(0)
    remaining = producer.flush(FLUSH_TIMEOUT_S)
    if remaining:
        raise ProduceFailed(f"{remaining} records were not acknowledged within {FLUSH_TIMEOUT_S}s")
    if failures:
        raise ProduceFailed(f"{len(failures)} records failed: {failures[0].str()}")
    return produced
