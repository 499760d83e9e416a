"""Producing one message, and showing message bytes as text (reading them: reader.py)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, Producer

from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, librdkafka_log, raise_typed
from controlplane.kafka.errors import ClusterUnreachable


@dataclass(frozen=True)
class ProducedMessage:
    partition: int
    offset: int
    timestamp_ms: int


def produce_message(
    connection: Connection,
    *,
    topic: str,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes]],
    partition: int | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> ProducedMessage:
    producer = Producer(
        {**connection.client_config(timeout_seconds), "message.timeout.ms": int(timeout_seconds * 1000)},
        logger=librdkafka_log,
    )
    outcome: dict[str, Any] = {}

    def delivered(error: KafkaError | None, message: Any) -> None:
        outcome["error"], outcome["message"] = error, message

    extra = {"partition": partition} if partition is not None else {}
    producer.produce(topic, value=value, key=key, headers=headers, on_delivery=delivered, **extra)
    producer.flush(timeout_seconds + 1)
    if "message" not in outcome:
        raise ClusterUnreachable("_TIMED_OUT", "the message was not acknowledged in time")
    if outcome["error"] is not None:
        raise_typed(outcome["error"], "Produce failed")
    message = outcome["message"]
    return ProducedMessage(
        partition=message.partition(), offset=message.offset(), timestamp_ms=message.timestamp()[1]
    )


def decode_text(data: bytes | None) -> tuple[str | None, str]:
    """(text, encoding): UTF-8 text when the bytes are valid UTF-8, base64 otherwise."""
    if data is None:
        return None, "null"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"
