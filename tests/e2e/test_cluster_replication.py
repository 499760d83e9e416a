"""Browser journeys for a replicated cluster: an org admin adds a fourth broker from the console, moves a
topic onto it and watches the copy's progress bar until nothing moves any more; and replaces a controller
node (a dynamic quorum's AddRaftVoter and RemoveRaftVoter) and follows the operation to its end."""

import re
from pathlib import Path

import pytest
from confluent_kafka import Producer
from playwright.sync_api import Page, expect

from controlplane.clusters import connections
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster, Operation
from controlplane.kafka.topics import create_topic, list_topics
from controlplane.tenancy.access import Actor
from controlplane.tenancy.models import Organization
from tests.e2e import test_clusters_and_schemas as cluster_journeys
from tests.e2e.conftest import screenshot
from tests.fixtures.servers import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The cluster journeys' fixtures: Acme with olga as its admin, and a worker that provisions for this test.
acme = cluster_journeys.acme
worker_environment = cluster_journeys.worker_environment
provisioning_worker = cluster_journeys.provisioning_worker
sign_in = cluster_journeys.sign_in

# The follower's copy is throttled (bytes/s) and the topic holds more than the quota windows let through
# at once, so the progress bar has several seconds to be seen.
FOLLOWER_THROTTLE = 200_000
TOPIC_BYTES = 4_000_000


def _provisioned(organization: Organization) -> Cluster:
    operation = clusters.request_cluster(
        actor=Actor.system(),
        organization=organization,
        spec=clusters.ClusterSpec(
            name="replicated",
            broker_config={"follower.replication.throttled.rate": str(FOLLOWER_THROTTLE)},
        ),
    )

    def finished() -> bool:
        return Operation.objects.get(pk=operation.id).state in ("succeeded", "failed")

    wait_until(finished, 120, "the 3-broker cluster to be provisioned", interval=0.5)
    assert Operation.objects.get(pk=operation.id).state == "succeeded", Operation.objects.get(
        pk=operation.id
    ).error
    return Cluster.objects.get(pk=operation.cluster_id)


def _fill(cluster: Cluster, topic: str) -> None:
    connection = connections.connection_for(cluster)
    create_topic(connection, name=topic, partitions=1, replication_factor=3, configs={})
    producer = Producer({**connection.client_config(timeout_seconds=5), "acks": "all"})
    chunk = b"x" * 50_000
    for _ in range(TOPIC_BYTES // len(chunk)):
        producer.produce(topic, value=chunk)
        producer.poll(0)
    assert producer.flush(60) == 0


def test_an_org_admin_adds_a_broker_and_watches_a_topic_move_onto_it(
    page: Page, live_server, acme, worker_environment: Path, provisioning_worker
) -> None:
    cluster = _provisioned(acme)
    _fill(cluster, "ledger")

    sign_in(page, f"{live_server.url}/clusters/{cluster.id}")
    expect(page.get_by_role("heading", name="replicated", level=1)).to_be_visible()
    tabs = page.get_by_role("navigation", name="Cluster sections")
    tabs.get_by_role("link", name="Broker configs").click()
    expect(page.get_by_role("table", name=re.compile(r"^Broker \d+ configs$"))).to_contain_text(
        "broker.session.timeout.ms"
    )
    tabs.get_by_role("link", name="Brokers (3)").click()
    brokers = page.get_by_role("table", name="Brokers")
    expect(brokers.get_by_role("row")).to_have_count(4)
    expect(brokers).to_contain_text("controller + broker")
    expect(page.get_by_text("No partitions are moving")).to_be_visible()

    page.get_by_role("button", name="Add broker").click()
    adding = page.get_by_role("group", name="Adding a broker replicated")
    expect(adding.get_by_role("progressbar", name="Done: all 5 steps finished")).to_be_visible(timeout=90_000)
    expect(brokers.get_by_role("row")).to_have_count(5, timeout=10_000)
    expect(brokers.get_by_role("row").nth(4)).to_contain_text("broker")

    form = page.get_by_role("form", name="Move a topic onto a broker")
    form.get_by_label("Topic").fill("ledger")
    form.get_by_label("Onto broker").select_option("4")
    form.get_by_role("button", name="Move replicas").click()
    expect(form.get_by_text("Moving 1 partition.")).to_be_visible()

    moving = page.get_by_role("list", name="Moving partitions")
    expect(moving.get_by_role("progressbar", name="ledger-0", exact=False)).to_be_visible(timeout=10_000)
    expect(moving).to_contain_text("adding 4")
    screenshot(page, "cluster-reassignment-progress")
    expect(page.get_by_text("No partitions are moving")).to_be_visible(timeout=90_000)

    (partition,) = list_topics(connections.connection_for(cluster))["ledger"].partitions
    assert 4 in partition.replicas
    assert len(partition.replicas) == 3
    screenshot(page, "cluster-reassignment-done")
    assert page.problems.messages == []


def test_an_org_admin_replaces_a_controller_node(
    page: Page, live_server, acme, worker_environment: Path, provisioning_worker
) -> None:
    cluster = _provisioned(acme)
    sign_in(page, f"{live_server.url}/clusters/{cluster.id}")
    tabs = page.get_by_role("navigation", name="Cluster sections")
    tabs.get_by_role("link", name="Brokers (3)").click()
    brokers = page.get_by_role("table", name="Brokers")
    expect(brokers.get_by_role("row")).to_have_count(4)

    page.get_by_role("button", name="Replace controller 1").click()
    confirm = page.get_by_role("alertdialog", name="Replace controller 1?")
    confirm.get_by_role("textbox").fill("1")
    confirm.get_by_role("button", name="Replace").click()
    replacing = page.get_by_role("group", name="Replacing a controller replicated")
    expect(replacing.get_by_role("progressbar", name="Done: all 10 steps finished")).to_be_visible(
        timeout=180_000
    )
    expect(brokers.get_by_role("row")).to_have_count(4, timeout=10_000)
    expect(brokers.get_by_role("button", name="Replace controller 4")).to_be_visible()
    expect(brokers.get_by_role("button", name="Replace controller 1")).to_have_count(0)
    screenshot(page, "cluster-controller-replaced")
    assert page.problems.messages == []
