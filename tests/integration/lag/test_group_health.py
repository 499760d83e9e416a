"""Acceptance 1 and 2 of consumer lag: on a real broker, with a producer at a steady rate, a group that
keeps up, slows down, stalls, leaves, is rewound and loses data shows each status within two sampling
intervals of the change, and the lag in seconds matches the true age of the first unconsumed record."""

from __future__ import annotations

import pytest

from controlplane.clusters.connections import connection_for
from controlplane.kafka.groups import alter_group_offsets
from controlplane.kafka.offsets import delete_records
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import Health
from tests.integration.lag.conftest import PRODUCE_PER_SECOND, LagWorld

pytestmark = pytest.mark.integration


def _true_lag_seconds(world: LagWorld, row: GroupLag) -> float:
    """The age, at the sample, of the oldest first-unconsumed record over the group's partitions."""
    ages = []
    sampled_at = row.observed_at.timestamp()
    for p in row.partitions:
        if p["lag_messages"] > 0:
            produced_ms = world.producer.timestamps[(p["partition"], p["committed_offset"])]
            ages.append(sampled_at - produced_ms / 1000)
    return max(ages)


def _assert_time_lag_is_exact(world: LagWorld, row: GroupLag) -> None:
    truth = _true_lag_seconds(world, row)
    assert row.lag_seconds is not None
    assert abs(row.lag_seconds - truth) <= max(2.0, 0.1 * truth), (row.lag_seconds, truth)
    assert not row.lag_seconds_is_lower_bound


def test_a_group_goes_through_every_status_as_its_consumer_changes(lag_world: LagWorld) -> None:
    world = lag_world

    # (a) keeps up: OK with (almost) no lag.
    for _run in range(3):
        row = world.sample()
    assert row.status == Health.OK, row.reason
    assert row.lag_messages <= PRODUCE_PER_SECOND // 2  # at most half a second of production in flight
    assert row.member_count == 1
    assert sorted((a["topic"], a["partition"]) for a in row.members[0]["assignments"]) == [
        (world.topic, 0),
        (world.topic, 1),
    ]

    # (b) slowed down: LAGGING, and lag in seconds grows about as fast as wall time.
    world.consumer.mode = "slow"
    lagging = world.status_within_two_intervals(Health.LAGGING)
    assert "grew" in lagging.reason
    _assert_time_lag_is_exact(world, lagging)
    later = world.sample()
    later = world.sample()
    elapsed = (later.observed_at - lagging.observed_at).total_seconds()
    growth = later.lag_seconds - lagging.lag_seconds
    assert 0.5 * elapsed <= growth <= 1.5 * elapsed, (growth, elapsed)
    assert later.consume_rate is not None
    assert later.produce_rate is not None
    assert later.consume_rate < later.produce_rate
    assert later.time_to_catch_up_seconds is None  # falling behind: it never catches up
    _assert_time_lag_is_exact(world, later)

    # (c) stops committing while still a member: STALLED.
    world.consumer.mode = "stall"
    stalled = world.status_within_two_intervals(Health.STALLED)
    assert "has not moved" in stalled.reason
    assert stalled.member_count == 1
    _assert_time_lag_is_exact(world, stalled)

    # (d) leaves the group: STOPPED.
    world.consumer.leave()
    stopped = world.status_within_two_intervals(Health.STOPPED)
    assert stopped.member_count == 0
    assert stopped.state == "EMPTY"

    # (e) its offsets are reset backwards: REWIND.
    connection = connection_for(world.cluster)
    committed = {(p["topic"], p["partition"]): p["committed_offset"] for p in stopped.partitions}
    alter_group_offsets(
        connection,
        group_id=world.group,
        offsets={tp: max(0, offset - 20) for tp, offset in committed.items()},
    )
    rewound = world.status_within_two_intervals(Health.REWIND)
    assert "went back" in rewound.reason

    # (f) retention deletes records it never read: DATA_LOSS.
    rewound_to = {(p["topic"], p["partition"]): p["committed_offset"] for p in rewound.partitions}
    delete_records(connection, {tp: offset + 10 for tp, offset in rewound_to.items()})
    lost = world.status_within_two_intervals(Health.DATA_LOSS)
    assert "retention deleted 10 unread records" in lost.reason
    assert lost.lag_seconds_is_lower_bound
