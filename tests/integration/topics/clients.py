"""Small helpers around real confluent-kafka clients for the control-plane tests."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer


def produce_one(producer: Producer, topic: str, value: bytes = b"hello", **kwargs: Any) -> KafkaError | None:
    """Produces one record and waits for its delivery report: None when acknowledged, else the error.

    librdkafka refuses the record at once, without a delivery report, when its metadata already says the topic
    is not authorized or does not exist; that refusal is the outcome too."""
    outcome: list[KafkaError | None] = []
    try:
        producer.produce(topic, value, on_delivery=lambda error, _message: outcome.append(error), **kwargs)
    except KafkaException as refused:
        return refused.args[0]
    producer.flush(15)
    assert outcome, "no delivery report"
    return outcome[0]


def first_record_or_error(
    consumer: Consumer, topics: list[str], timeout: float = 15.0
) -> tuple[bytes | None, KafkaError | None]:
    """Subscribes and returns the first record's value, or the first error the consumer reports."""
    errors: list[KafkaError] = []
    consumer.subscribe(topics, on_assign=lambda *_: None)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() != KafkaError._PARTITION_EOF:
                    errors.append(message.error())
                    return None, message.error()
                continue
            return message.value(), None
        raise AssertionError(f"neither a record nor an error within {timeout}s")
    finally:
        consumer.close()


def code_of(error: KafkaError | None) -> int | None:
    return None if error is None else error.code()
