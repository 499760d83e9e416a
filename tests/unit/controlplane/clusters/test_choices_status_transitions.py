import pytest

from controlplane.clusters.choices import (
    CLUSTER_TRANSITIONS,
    ClusterStatus,
    InvalidTransition,
    check_transition,
)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (ClusterStatus.REQUESTED, ClusterStatus.PROVISIONING),
        (ClusterStatus.PROVISIONING, ClusterStatus.RUNNING),
        (ClusterStatus.PROVISIONING, ClusterStatus.DEGRADED),
        (ClusterStatus.RUNNING, ClusterStatus.DEGRADED),
        (ClusterStatus.DEGRADED, ClusterStatus.RUNNING),
        (ClusterStatus.RUNNING, ClusterStatus.STOPPED),
        (ClusterStatus.STOPPED, ClusterStatus.RUNNING),
        (ClusterStatus.PROVISIONING, ClusterStatus.FAILED),
        (ClusterStatus.FAILED, ClusterStatus.DELETING),
        (ClusterStatus.DELETING, ClusterStatus.DELETED),
    ],
)
def test_it_allows_the_lifecycle_steps(current: str, target: str) -> None:
    check_transition(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (ClusterStatus.REQUESTED, ClusterStatus.RUNNING),
        (ClusterStatus.RUNNING, ClusterStatus.PROVISIONING),
        (ClusterStatus.DELETING, ClusterStatus.RUNNING),
        (ClusterStatus.DELETED, ClusterStatus.DELETING),
        (ClusterStatus.FAILED, ClusterStatus.RUNNING),
    ],
)
def test_it_refuses_to_skip_or_reverse_the_lifecycle(current: str, target: str) -> None:
    with pytest.raises(InvalidTransition):
        check_transition(current, target)


def test_a_deleted_cluster_is_final_and_every_status_has_rules() -> None:
    assert set(CLUSTER_TRANSITIONS) == set(ClusterStatus.values)
    assert CLUSTER_TRANSITIONS[ClusterStatus.DELETED] == frozenset()
    check_transition(ClusterStatus.DELETED, ClusterStatus.DELETED)  # staying put is not a transition
