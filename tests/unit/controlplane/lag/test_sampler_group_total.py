"""The group's lag in messages is Kafka's: the sum over partitions with a committed offset."""

from controlplane.lag.observations import Health, PartitionObservation
from controlplane.lag.sampler import _group_observation, _GroupRef


def _partition(partition: int, committed: int | None, lag: int) -> PartitionObservation:
    return PartitionObservation(
        topic="orders",
        partition=partition,
        committed_offset=committed,
        log_start_offset=0,
        log_end_offset=(committed or 0) + lag,
        lag_messages=lag,
        lag_seconds=None,
        lag_seconds_is_lower_bound=False,
        consume_rate=None,
        produce_rate=None,
        time_to_catch_up_seconds=None,
        status=Health.NO_COMMIT if committed is None else Health.OK,
        reason="",
    )


def test_it_leaves_partitions_without_a_commit_out_of_the_groups_lag() -> None:
    group = _GroupRef(pk=1, name="billing", cluster_id=1, team_id=None)
    partitions = [_partition(0, 68, 9_932), _partition(1, None, 20_000), _partition(2, None, 30_068)]

    observation = _group_observation(group, partitions, member_count=0)

    # As kafka-consumer-groups.sh --describe and the group's live page count it (9,932), not 60,000.
    assert observation.lag_messages == 9_932
    # The never-committed partitions still make the group's status.
    assert observation.status == Health.NO_COMMIT
