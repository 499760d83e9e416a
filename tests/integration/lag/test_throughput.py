"""Cluster throughput on a real broker: a producer at a known rate, a few sampler runs, and the endpoint's
messages per second within ±30% of it; other organizations cannot read it."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise

import pytest

from controlplane.tenancy import services as tenancy
from tests.fixtures.servers import free_port
from tests.integration.lag.conftest import PRODUCE_PER_SECOND, SYSTEM, LagWorld
from tests.integration.topics.world import api_client

pytestmark = pytest.mark.integration


def test_the_endpoint_reports_the_produced_rate_from_the_samplers_log_end_points(lag_world: LagWorld) -> None:
    world = lag_world
    user, org_admin = api_client(f"olga-{world.topic}")
    tenancy.add_org_member(
        actor=SYSTEM, organization=world.cluster.organization, user=user, is_org_admin=True
    )
    for _run in range(5):
        world.sample()

    response = org_admin.get(f"/api/v1/clusters/{world.cluster.id}/throughput/")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["cluster"] == world.cluster.id
    times = [datetime.fromisoformat(time).timestamp() for time in body["times"]]
    assert len(times) == 4
    rates = body["messages_per_second"]
    # Time-weighted over the intervals whose start the response shows (all but the first): a run delayed
    # by a busy machine shifts records between neighbouring intervals but not out of the window.
    spans = [later - earlier for earlier, later in pairwise(times)]
    assert min(spans) > 0
    mean = sum(rate * span for rate, span in zip(rates[1:], spans, strict=True)) / sum(spans)
    assert PRODUCE_PER_SECOND * 0.7 <= mean <= PRODUCE_PER_SECOND * 1.3, rates
    (topic,) = body["by_topic"]
    assert topic["topic"] == world.topic
    assert topic["messages_per_second"] == rates

    until = body["times"][1]
    earlier = org_admin.get(f"/api/v1/clusters/{world.cluster.id}/throughput/", {"until": until}).json()
    assert earlier["times"] == body["times"][:2]
    bad = org_admin.get(f"/api/v1/clusters/{world.cluster.id}/throughput/", {"since": until, "until": until})
    assert bad.status_code == 400
    assert "since" in bad.json()["error"]["details"]

    _stranger_user, stranger = api_client(f"sam-{world.topic}")
    assert stranger.get(f"/api/v1/clusters/{world.cluster.id}/throughput/").status_code == 404


def test_the_endpoint_answers_503_while_redis_is_down(lag_world: LagWorld, settings) -> None:
    user, org_admin = api_client(f"otto-{lag_world.topic}")
    tenancy.add_org_member(
        actor=SYSTEM, organization=lag_world.cluster.organization, user=user, is_org_admin=True
    )
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there

    response = org_admin.get(f"/api/v1/clusters/{lag_world.cluster.id}/throughput/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "service_unavailable"
