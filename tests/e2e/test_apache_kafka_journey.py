"""The Apache Kafka journey of issue 31: an org admin provisions a 3-node Apache Kafka cluster from the
console and watches it come up, creates a topic, produces to it and browses it, sees a real consumer group's
lag, reads a broker's JVM metrics, then adds a broker and removes it again. The Celery worker provisions real
Apache Kafka JVMs; screenshots of each step land in test-artifacts/screenshots/apache-kafka-*.png."""

import re
from pathlib import Path

import pytest
from confluent_kafka import Producer
from playwright.sync_api import Page, expect

from controlplane.apache_kafka import runtime
from controlplane.clusters import connections
from controlplane.clusters.models import Cluster
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy.models import Organization
from tests.e2e import test_clusters_and_schemas as cluster_journeys
from tests.e2e.conftest import screenshot
from tests.e2e.test_groups_and_jobs import commit_as_group
from tests.e2e.test_journeys import team_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

acme = cluster_journeys.acme
worker_environment = cluster_journeys.worker_environment
provisioning_worker = cluster_journeys.provisioning_worker
sign_in = cluster_journeys.sign_in

# Three JVM starts for the cluster and one for the added broker, each ~15-40 s on a loaded machine.
PROVISIONING_TIMEOUT_MS = 240_000
DONE = re.compile(r"^Done: all \d+ steps finished$")


# The 3-node scenario of test_apache_kafka_clusters.py leaves adding and removing a broker to this journey.
@pytest.mark.timeout(600)
def test_an_org_admin_runs_an_apache_kafka_cluster_from_the_console(
    page: Page, live_server, acme: Organization, worker_environment: Path, provisioning_worker
) -> None:
    version = runtime.pinned_version()
    team_with_prefixes(acme, "Payments", "pay.")
    sign_in(page, f"{live_server.url}/clusters")
    expect(page.get_by_role("heading", name="Clusters", level=1)).to_be_visible()

    # Create: the engine select offers Apache Kafka and the installed versions.
    page.get_by_role("button", name="Create cluster").click()
    dialog = page.get_by_role("dialog", name="Create cluster")
    dialog.get_by_label("Name").fill("ledger")
    dialog.get_by_label("Engine").select_option("apache-kafka")
    expect(dialog.get_by_label("Apache Kafka version")).to_have_value(version)
    dialog.get_by_label("Brokers").fill("3")
    screenshot(page, "apache-kafka-1-create")
    dialog.get_by_role("button", name="Create cluster").click()
    # Three JVMs start one after the other: the bar shows the step under way.
    expect(dialog.get_by_role("progressbar", name=re.compile(r"^Step [3-5] of 5"))).to_be_visible(
        timeout=PROVISIONING_TIMEOUT_MS
    )
    screenshot(page, "apache-kafka-2-provisioning")
    expect(dialog.get_by_role("progressbar", name="Done: all 5 steps finished")).to_be_visible(
        timeout=PROVISIONING_TIMEOUT_MS
    )
    dialog.get_by_role("button", name="Done").click()
    expect(page.get_by_role("table").get_by_role("row", name="ledger")).to_contain_text(
        f"Apache Kafka {version}"
    )
    screenshot(page, "apache-kafka-3-cluster-list")
    cluster = Cluster.objects.get(name="ledger")
    assert cluster.engine == "apache-kafka"
    assert cluster.brokers.count() == 3

    # Create a topic replicated over the three nodes, produce a message and browse it.
    page.get_by_role("navigation").get_by_role("link", name="Topics").click()
    page.get_by_role("button", name="Create topic").click()
    create = page.get_by_role("dialog", name="Create topic")
    create.get_by_label("Name").fill("pay.payments")
    create.get_by_label("Partitions").fill("2")
    create.get_by_label("Replication factor").fill("3")
    create.get_by_role("button", name="Create topic").click()
    expect(page.get_by_role("heading", name="pay.payments", level=1)).to_be_visible()
    page.get_by_role("button", name="Produce message").click()
    produce_dialog = page.get_by_role("dialog", name="Produce a message to pay.payments")
    produce_dialog.get_by_label("Key", exact=True).fill("payment-1")
    produce_dialog.get_by_label("Value", exact=True).fill('{"amount": 42}')
    produce_dialog.get_by_label("Partition", exact=True).select_option("0")
    produce_dialog.get_by_role("button", name="Produce", exact=True).click()
    expect(produce_dialog.get_by_role("status")).to_contain_text("Produced to partition 0 at offset 0.")
    produce_dialog.get_by_role("link", name="Browse it").click()
    messages = page.get_by_role("table", name="Messages")
    messages.get_by_role("button", name="Details of partition 0 offset 0").click()
    expect(messages.get_by_label("Value as JSON")).to_contain_text("42")
    screenshot(page, "apache-kafka-4-message-browser")

    # A real consumer group (SCRAM, as the cluster's admin) reads part of the topic; the sampler measures it.
    scram = connections.connection_for(cluster).client_config(10)
    producer = Producer({**scram, "linger.ms": 5})
    for index in range(5):
        producer.produce("pay.payments", value=b"payment %d" % index, partition=0)
    assert producer.flush(15) == 0
    commit_as_group(scram, "pay.payments", "pay.billing", {0: 2})
    sample_cluster(cluster)
    page.get_by_role("navigation").get_by_role("link", name="Consumer groups").click()
    row = page.get_by_role("table", name="Consumer groups").get_by_role("row", name="pay.billing")
    row.get_by_role("link", name="pay.billing").click()
    expect(page.get_by_text("4 messages behind")).to_be_visible()
    screenshot(page, "apache-kafka-5-group-lag")

    # The cluster page: engine and version, three controller + broker nodes, one broker's JVM metrics.
    page.goto(f"{live_server.url}/clusters/{cluster.id}")
    expect(page.get_by_role("heading", name="ledger", level=1)).to_be_visible()
    expect(page.locator("body")).to_contain_text(f"Apache Kafka {version}")
    screenshot(page, "apache-kafka-6-cluster")
    tabs = page.get_by_role("navigation", name="Cluster sections")
    tabs.get_by_role("link", name="Brokers (3)").click()
    brokers = page.get_by_role("table", name="Brokers")
    expect(brokers.get_by_role("row")).to_have_count(4)
    brokers.get_by_role("link", name="Broker 1").click()
    expect(page.get_by_role("heading", name="Broker 1", level=1)).to_be_visible()
    screenshot(page, "apache-kafka-7-broker-metrics")

    # A broker-only node joins, then leaves again.
    page.goto(f"{live_server.url}/clusters/{cluster.id}")
    tabs.get_by_role("link", name="Brokers (3)").click()
    page.get_by_role("button", name="Add broker").click()
    adding = page.get_by_role("group", name="Adding a broker ledger")
    expect(adding.get_by_role("progressbar", name=DONE)).to_be_visible(timeout=PROVISIONING_TIMEOUT_MS)
    expect(brokers.get_by_role("row")).to_have_count(5, timeout=10_000)
    expect(brokers.get_by_role("row").nth(4)).to_contain_text("up", timeout=30_000)
    screenshot(page, "apache-kafka-8-broker-added")
    # One replica of each partition moves onto it, so removing it has replicas to drain.
    form = page.get_by_role("form", name="Move a topic onto a broker")
    form.get_by_label("Topic").fill("pay.payments")
    form.get_by_label("Onto broker").select_option("4")
    form.get_by_role("button", name="Move replicas").click()
    expect(form.get_by_text("Moving 2 partitions.")).to_be_visible()
    expect(page.get_by_text("No partitions are moving")).to_be_visible(timeout=60_000)
    brokers.get_by_role("button", name="Remove broker 4").click()
    confirm = page.get_by_role("alertdialog", name="Remove broker 4?")
    confirm.get_by_role("textbox").fill("4")
    confirm.get_by_role("button", name="Remove").click()
    removing = page.get_by_role("group", name="Removing a broker ledger")
    expect(removing.get_by_role("progressbar", name=DONE)).to_be_visible(timeout=120_000)
    expect(brokers.get_by_role("row")).to_have_count(4, timeout=10_000)
    expect(removing).to_contain_text("2 partition(s) have a replica on broker 4")
    screenshot(page, "apache-kafka-9-broker-removed")
    assert sorted(Cluster.objects.get(pk=cluster.pk).brokers.values_list("node_id", flat=True)) == [1, 2, 3]
    assert page.problems.messages == []
