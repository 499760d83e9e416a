"""What the brokers and reassignments API refuses before it touches a cluster (no broker processes run)."""

import pytest

from controlplane.clusters.models import Broker, Cluster, Operation

pytestmark = pytest.mark.integration


def _cluster(people, name: str, *, voters: int, brokers: int, provider: str = "local") -> Cluster:
    cluster = Cluster.objects.create(
        organization=people.organization, name=name, provider=provider, broker_count=brokers, status="running"
    )
    for node_id in range(1, brokers + 1):
        Broker.objects.create(
            cluster=cluster,
            node_id=node_id,
            host="127.0.0.1",
            port=29090 + node_id,
            controller_port=29190 + node_id if node_id <= voters else 0,
            status="running",
        )
    return cluster


def _error_code(response) -> str:
    return response.json()["error"]["code"]


def test_a_single_broker_cluster_takes_no_brokers(people) -> None:
    single = _cluster(people, "single", voters=0, brokers=1)

    refused = people.org_admin.post(f"/api/v1/clusters/{single.id}/brokers/")

    assert refused.status_code == 409
    assert _error_code(refused) == "single_node"
    assert not Operation.objects.filter(cluster=single).exists()


@pytest.mark.parametrize(
    ("node_id", "confirmed", "status", "code"),
    [(2, 2, 409, "controller_voter"), (4, 3, 400, "confirmation_mismatch")],
    ids=["a controller voter cannot leave", "the node id must be repeated"],
)
def test_a_removal_is_refused_for_a_voter_or_without_the_node_id(
    people, node_id: int, confirmed: int, status: int, code: str
) -> None:
    replicated = _cluster(people, "replicated", voters=3, brokers=4)

    refused = people.org_admin.delete(
        f"/api/v1/clusters/{replicated.id}/brokers/{node_id}/", {"confirm_node_id": confirmed}, format="json"
    )

    assert refused.status_code == status
    assert _error_code(refused) == code
    assert not Operation.objects.filter(cluster=replicated).exists()


def test_brokers_are_not_added_while_another_operation_runs(people) -> None:
    replicated = _cluster(people, "replicated", voters=3, brokers=3)
    Operation.objects.create(
        cluster=replicated, kind="restart_broker", state="running", steps=["start brokers"]
    )

    refused = people.org_admin.post(f"/api/v1/clusters/{replicated.id}/brokers/")

    assert refused.status_code == 409
    assert _error_code(refused) == "operation_running"


def test_adding_a_broker_queues_an_operation_for_the_next_unused_node_id(people) -> None:
    replicated = _cluster(people, "replicated", voters=3, brokers=3)
    # Node 4 was added (and later removed) before: its id is not given out again.
    Operation.objects.create(
        cluster=replicated, kind="add_broker", state="succeeded", steps=["verify"], parameters={"node_id": 4}
    )

    accepted = people.org_admin.post(f"/api/v1/clusters/{replicated.id}/brokers/")

    assert accepted.status_code == 202, accepted.json()
    assert accepted.json()["operation"]["kind"] == "add_broker"
    assert Operation.objects.get(pk=accepted.json()["operation"]["id"]).parameters == {"node_id": 5}


def test_only_org_admins_change_brokers_and_registered_clusters_are_not_ours_to_change(people) -> None:
    replicated = _cluster(people, "replicated", voters=3, brokers=3)
    external = _cluster(people, "elsewhere", voters=0, brokers=3, provider="external")

    # A developer of the organization sees the cluster but may not change it; an outsider does not see it.
    assert people.developer.post(f"/api/v1/clusters/{replicated.id}/brokers/").status_code == 403
    assert people.outsider.post(f"/api/v1/clusters/{replicated.id}/brokers/").status_code == 404
    refused = people.org_admin.post(f"/api/v1/clusters/{external.id}/brokers/")
    assert refused.status_code == 400
    assert _error_code(refused) == "not_local"


def test_a_reassignment_names_either_target_replicas_or_a_broker(people) -> None:
    replicated = _cluster(people, "replicated", voters=3, brokers=3)
    url = f"/api/v1/clusters/{replicated.id}/reassignments/"

    both = people.org_admin.post(url, {"topic": "t", "replicas": [1, 2], "onto_broker": 3}, format="json")
    neither = people.org_admin.post(url, {"topic": "t"}, format="json")

    assert both.status_code == 400
    assert neither.status_code == 400
    assert _error_code(both) == "invalid"
