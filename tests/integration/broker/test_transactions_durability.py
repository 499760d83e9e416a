"""kill -9 of the broker with a transaction open: after the restart the open transaction is aborted
once its timeout passes, an acknowledged EndTxn is completed, and read_committed consumers never
see part of a transaction."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Producer

from tests.fixtures.broker import BrokerProcess

from .test_transactions_clients import create_topics, read_all, transactional_producer, unique

pytestmark = pytest.mark.integration

TIMEOUT_MS = 3000


def start_broker(broker_factory: Callable[..., BrokerProcess]) -> BrokerProcess:
    return broker_factory(transaction_abort_timed_out_transaction_cleanup_interval_ms=200)


def test_an_open_transaction_is_aborted_after_its_timeout_once_the_broker_is_back(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = start_broker(broker_factory)
    topic = unique("crash-open")
    create_topics(broker.bootstrap, 2, topic)
    committed = transactional_producer(broker.bootstrap, unique("tid"))
    committed.begin_transaction()
    for i in range(4):
        committed.produce(topic, value=b"before-%d" % i, partition=i % 2)
    committed.commit_transaction(30)

    open_one = transactional_producer(
        broker.bootstrap, unique("tid"), **{"transaction.timeout.ms": TIMEOUT_MS}
    )
    open_one.begin_transaction()
    for i in range(6):
        open_one.produce(topic, value=b"partial-%d" % i, partition=i % 2)
    assert open_one.flush(10) == 0  # the records are in the log, the transaction is open
    broker.kill9()
    broker.start()

    # After the timeout the coordinator aborts it: the last stable offset moves past it again,
    # so a record written after it becomes readable, and the partial records never do.
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, value=b"after", partition=0)
    assert plain.flush(10) == 0
    deadline = time.monotonic() + TIMEOUT_MS / 1000 + 15
    seen: list[bytes] = []
    while time.monotonic() < deadline:
        seen = read_all(broker.bootstrap, topic, 2, isolation="read_committed", expect_at_least=5, wait_s=2)
        assert not [v for v in seen if v.startswith(b"partial")]
        if b"after" in seen:
            break
    assert sorted(seen) == sorted([b"before-%d" % i for i in range(4)] + [b"after"])
    assert "aborting transaction of" in broker.log_text()


def test_an_acknowledged_commit_is_completed_after_a_crash(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = start_broker(broker_factory)
    topic = unique("crash-commit")
    create_topics(broker.bootstrap, 3, topic)
    producer = transactional_producer(broker.bootstrap, unique("tid"), **{"transaction.timeout.ms": 60_000})
    producer.begin_transaction()
    for i in range(30):
        producer.produce(topic, value=b"v-%d" % i, partition=i % 3)
    producer.commit_transaction(30)  # EndTxn acknowledged: the commit must survive
    broker.kill9()
    broker.start()
    seen = read_all(broker.bootstrap, topic, 3, isolation="read_committed", expect_at_least=30, wait_s=20)
    assert sorted(seen) == sorted(b"v-%d" % i for i in range(30))
