"""Transactions survive a leader kill on a three-broker cluster: the followers kept the producer
state, the last stable offset and the aborted-transaction index, so the new leader serves
read_committed exactly as the old one did and accepts the open transaction's marker."""

from __future__ import annotations

import pytest
from kio.schema.errors import ErrorCode

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.servers import wait_until
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.test_transactions_log import (
    ALL,
    COMMITTED_BEFORE_D,
    D1_OFFSET,
    write_interleaved_transactions,
)
from tests.integration.broker.transactions_wire import consume_values, watermarks
from tests.integration.cluster.fault_checker import create_topic, partition_states, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TOPIC = "txn-failover"


def test_a_new_leader_serves_read_committed_like_the_old_one(cluster3: LocalCluster) -> None:
    create_topic(cluster3, TOPIC, 1)
    old_leader = partition_states(cluster3, TOPIC)[0][0]
    with WireClient(cluster3.node(old_leader).bootstrap) as client:
        _, b = write_interleaved_transactions(client, TOPIC)
    assert wait_for_isr(cluster3, TOPIC, timeout_s=30)  # every follower has the markers
    cluster3.node(old_leader).kill9()
    wait_until(
        lambda: partition_states(cluster3, TOPIC)[0][0] not in (-1, old_leader),
        timeout=60,
        what="a new leader",
    )
    new_leader = partition_states(cluster3, TOPIC)[0][0]
    bootstrap = cluster3.node(new_leader).bootstrap
    wait_until(
        lambda: watermarks(bootstrap, TOPIC, "read_uncommitted")[1] == len(ALL) + 3,
        timeout=30,
        what="the new leader's high watermark to cover the whole log",
    )
    assert watermarks(bootstrap, TOPIC, "read_committed") == (0, D1_OFFSET)
    assert consume_values(bootstrap, TOPIC, "read_committed", 4) == COMMITTED_BEFORE_D
    assert consume_values(bootstrap, TOPIC, "read_uncommitted", len(ALL)) == ALL
    with WireClient(bootstrap) as client:
        assert b.end(TOPIC, [0], commit=False, client=client) == {0: ErrorCode.none}
    assert consume_values(bootstrap, TOPIC, "read_committed", 5) == [*COMMITTED_BEFORE_D, b"p2"]
