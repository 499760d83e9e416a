"""Acceptance 2 of issue #33: a rolling upgrade of a 3-node cluster (RF 3, min.insync 2) from the release's
code to this tree's, one node at a time with full ISR in between, under an idempotent producer (acks=all)
writing numbered records to several partitions: nothing acknowledged is lost, duplicated or reordered, and a
topic, its config and an ACL created while the nodes run different versions survive. bench/rolling_upgrade.py
runs more rounds with kill -9 and back and forth.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.broker import REPO_ROOT
from tests.fixtures.cluster import LocalCluster
from tests.fixtures.rolling_upgrade import (
    create_mid_upgrade_state,
    create_writer_topic,
    format_counts,
    mid_upgrade_state_survived,
    per_partition,
    roll,
    start_cluster_on,
    start_writer,
    stop_and_check,
    target_of,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def release_cluster(tmp_path: Path, release_tree: Path) -> Iterator[LocalCluster]:
    cluster = start_cluster_on(tmp_path, release_tree)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_a_rolling_upgrade_under_an_idempotent_producer_loses_nothing(release_cluster: LocalCluster) -> None:
    target = target_of(release_cluster)
    create_writer_topic(target)
    writer = start_writer(release_cluster)
    try:
        for node_id, node in sorted(release_cluster.nodes.items()):
            roll(release_cluster, node, REPO_ROOT)
            if node_id < len(release_cluster.nodes):
                create_mid_upgrade_state(target, f"after-node-{node_id}")
    finally:
        report = stop_and_check(release_cluster, writer)
    counts = per_partition(report, writer)
    print(format_counts(counts))
    assert writer.fatal is None
    assert report.acked > 1000, "the producer hardly wrote during the upgrade"
    assert all(c["lost"] == c["duplicated"] == c["reordered"] == c["moved"] == 0 for c in counts.values()), (
        format_counts(counts) + f"\nfirst problems: {report.summary()['first_problems']}"
    )
    assert report.ok, report.summary()
    for node_id in range(1, len(release_cluster.nodes)):
        assert mid_upgrade_state_survived(target, f"after-node-{node_id}") == []
