"""Fixtures for tests against a local multi-node cluster (tests/fixtures/cluster.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
def cluster3(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    """Three nodes, each a broker and a controller; RF 3 and min.insync.replicas 2 by default."""
    cluster = start_cluster(tmp_path / "cluster", 3)
    try:
        yield cluster
    finally:
        if _test_failed(request):
            print(f"\n=== node logs of the failed test ===\n{cluster.log_tails(60)}")
        cluster.stop()
