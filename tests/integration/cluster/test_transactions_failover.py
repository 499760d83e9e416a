"""Exactly-once consume-transform-produce on a three-broker cluster while the transaction
coordinator's broker is killed with SIGKILL (issue #22; the loop and checker are eos_checker.py).

The input and output partitions' leaders are spread over the brokers, so markers go to other brokers
than the coordinator. A third of the way in, the broker leading the transactional id's
`__transaction_state` partition is killed: the producer finds the new coordinator (which loaded the
partition's state), and the run carries on. Nothing may be lost, duplicated or reordered.
"""

from __future__ import annotations

import pytest

from broker.transactions.state_format import partition_for_transactional_id
from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.eos_checker import EosRun, check_output, fill_source, process_all
from tests.integration.cluster.fault_checker import create_topic, partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

STATE_PARTITIONS = 3  # transaction.state.log.num.partitions in the test defaults


def test_exactly_once_while_the_transaction_coordinator_is_killed(cluster3: LocalCluster) -> None:
    run = EosRun(cluster3, "eos-in", "eos-out", "eos-app", "eos-app-1", partitions=3, records=900)
    create_topic(cluster3, run.source, run.partitions)
    create_topic(cluster3, run.sink, run.partitions)
    fill_source(run)
    killed: list[int] = []

    def kill_the_coordinator(committed: int) -> None:
        if not killed and committed >= run.records // 3:
            state_partition = partition_for_transactional_id(run.transactional_id, STATE_PARTITIONS)
            killed.append(partition_states(cluster3, "__transaction_state")[state_partition][0])
            cluster3.node(killed[0]).kill9()

    process_all(run, limit_s=60, on_progress=kill_the_coordinator)
    assert killed
    # The coordinator moved: another broker loaded the transactional id's state partition.
    assert "coordinating the 1 transactional ids" in "".join(
        node.log_text() for node in cluster3.brokers if node.node_id != killed[0]
    )
    assert check_output(run) == (0, 0, 0), f"{run.aborts} aborted transactions: {run.errors}"
