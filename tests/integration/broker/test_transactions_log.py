"""The log side of transactions on a real broker: raw transactional Produce and WriteTxnMarkers
requests, read back by confluent-kafka consumers with read_committed and read_uncommitted."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kio.schema.errors import ErrorCode

from tests.fixtures.broker import BrokerProcess
from tests.fixtures.servers import wait_until
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.transactions_wire import (
    WireProducer,
    consume_values,
    consume_values_aiokafka,
    watermarks,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ALL = [b"a1", b"b1", b"p1", b"a2", b"b2", b"c1", b"d1", b"p2"]
COMMITTED_BEFORE_D = [b"a1", b"p1", b"a2", b"c1"]
D1_OFFSET = 9  # the open transaction's first offset: the last stable offset


def write_interleaved_transactions(client: WireClient, topic: str) -> tuple[WireProducer, WireProducer]:
    """a* committed and b* aborted, interleaved with each other and a plain idempotent producer's p1;
    then c1 committed, and d1 left open with p2 after it."""
    a = WireProducer.start(client, "txn-a")
    b = WireProducer.start(client, "txn-b")
    plain = WireProducer.start(client)
    a.send(topic, 0, b"a1")
    b.send(topic, 0, b"b1")
    plain.send(topic, 0, b"p1")
    a.send(topic, 0, b"a2")
    b.send(topic, 0, b"b2")
    assert a.end(topic, [0], commit=True) == {0: ErrorCode.none}
    assert b.end(topic, [0], commit=False) == {0: ErrorCode.none}
    a.send(topic, 0, b"c1")
    assert a.end(topic, [0], commit=True) == {0: ErrorCode.none}
    b.send(topic, 0, b"d1")
    plain.send(topic, 0, b"p2")
    return a, b


def test_read_committed_sees_only_committed_data_and_stops_at_the_open_transaction(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name)
    with WireClient(broker.bootstrap) as client:
        _, b = write_interleaved_transactions(client, topic_name)
        assert consume_values(broker.bootstrap, topic_name, "read_uncommitted", len(ALL)) == ALL
        assert consume_values(broker.bootstrap, topic_name, "read_committed", 4) == COMMITTED_BEFORE_D
        assert (
            consume_values_aiokafka(broker.bootstrap, topic_name, "read_committed", 4) == COMMITTED_BEFORE_D
        )
        assert consume_values_aiokafka(broker.bootstrap, topic_name, "read_uncommitted", len(ALL)) == ALL
        # a1 0, b1 1, p1 2, a2 3, b2 4, commit(a) 5, abort(b) 6, c1 7, commit(a) 8, d1 9, p2 10
        assert watermarks(broker.bootstrap, topic_name, "read_uncommitted") == (0, 11)
        assert watermarks(broker.bootstrap, topic_name, "read_committed") == (0, D1_OFFSET)
        assert b.end(topic_name, [0], commit=True) == {0: ErrorCode.none}
    assert consume_values(broker.bootstrap, topic_name, "read_committed", 6) == [
        *COMMITTED_BEFORE_D,
        b"d1",
        b"p2",
    ]
    assert watermarks(broker.bootstrap, topic_name, "read_committed") == (0, 12)


def test_a_kill_9_keeps_open_transactions_and_aborts(
    broker_factory: Callable[..., BrokerProcess], topic_name: str
) -> None:
    broker = broker_factory()
    create_topic(broker.bootstrap, topic_name)
    with WireClient(broker.bootstrap) as client:
        _, b = write_interleaved_transactions(client, topic_name)
    broker.restart(hard=True)
    assert watermarks(broker.bootstrap, topic_name, "read_committed") == (0, D1_OFFSET)
    assert consume_values(broker.bootstrap, topic_name, "read_committed", 4) == COMMITTED_BEFORE_D
    assert consume_values(broker.bootstrap, topic_name, "read_uncommitted", len(ALL)) == ALL
    with WireClient(broker.bootstrap) as client:
        assert b.end(topic_name, [0], commit=False, client=client) == {0: ErrorCode.none}
    # d1 is aborted too now: p2 becomes readable, d1 never.
    assert consume_values(broker.bootstrap, topic_name, "read_committed", 5) == [*COMMITTED_BEFORE_D, b"p2"]


def test_compaction_removes_aborted_data_and_keeps_read_committed_right(
    broker_factory: Callable[..., BrokerProcess], topic_name: str
) -> None:
    broker = broker_factory(log_cleaner_backoff_ms=200)
    create_topic(
        broker.bootstrap,
        topic_name,
        **{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"},
    )
    keys = [b"k%d" % i for i in range(4)]
    with WireClient(broker.bootstrap) as client:
        committer = WireProducer.start(client, "txn-committer")
        aborter = WireProducer.start(client, "txn-aborter")
        for round_number in range(8):
            committer.send(topic_name, 0, *[b"committed-%d" % round_number] * 4, keys=keys)
            aborter.send(topic_name, 0, *[b"aborted-%d" % round_number] * 4, keys=keys)
            assert committer.end(topic_name, [0], commit=True) == {0: ErrorCode.none}
            assert aborter.end(topic_name, [0], commit=False) == {0: ErrorCode.none}
        # Committed filler with other keys pushes every round out of the active segment.
        for filler in range(4):
            committer.send(topic_name, 0, *[b"x" * 100] * 4, keys=[b"f%d-%d" % (filler, i) for i in range(4)])
            assert committer.end(topic_name, [0], commit=True) == {0: ErrorCode.none}
    written = 8 * 8 + 16

    def uncommitted_values() -> list[bytes]:
        return consume_values(
            broker.bootstrap, topic_name, "read_uncommitted", written, timeout_s=3, settle_s=0.5
        )

    wait_until(
        lambda: not any(value.startswith(b"aborted") for value in uncommitted_values()),
        timeout=30,
        what="the cleaner to remove the aborted data",
    )
    remaining = uncommitted_values()
    assert remaining.count(b"committed-7") == 4
    assert len([v for v in remaining if v.startswith(b"committed")]) == 4  # one per key: compacted
    committed = consume_values(broker.bootstrap, topic_name, "read_committed", 4 + 16)
    assert [v for v in committed if not v.startswith(b"x")] == [b"committed-7"] * 4
