"""Fixtures for tests against a local multi-node cluster (tests/fixtures/cluster.py).

`cluster3` is three `broker,controller` nodes; `cluster_factory(size, **options)` starts other shapes
(`start_cluster`'s keywords: properties, controllers, client_protocol, client_settings). Every cluster a
test started is stopped afterwards, and when the test failed the tail of each node's log is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.cluster import LocalCluster, start_cluster


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    # Remember each phase's outcome on the item so that cluster fixtures can tell a failed test.
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def _test_failed(request: pytest.FixtureRequest) -> bool:
    return any(
        getattr(getattr(request.node, f"report_{phase}", None), "failed", False)
        for phase in ("setup", "call")
    )


@pytest.fixture
def cluster_factory(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., LocalCluster]]:
    started: list[LocalCluster] = []

    def start(size: int = 3, **options: Any) -> LocalCluster:
        cluster = start_cluster(tmp_path / f"cluster-{len(started) + 1}", size, **options)
        started.append(cluster)
        return cluster

    try:
        yield start
    finally:
        for cluster in started:
            if _test_failed(request):
                print(f"\n=== node logs of the failed test ({cluster.base_dir}) ===\n{cluster.log_tails(60)}")
            cluster.stop()


@pytest.fixture
def cluster3(cluster_factory: Callable[..., LocalCluster]) -> LocalCluster:
    """Three nodes, each a broker and a controller; RF 3 and min.insync.replicas 2 by default."""
    return cluster_factory(3)
