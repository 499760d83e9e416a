"""The console's two journeys from the issue, against the real stack. An org admin logs in, creates a local
cluster and watches it come up, creates a topic, produces and browses a message, creates a service account with
a producer grant, sees a real consumer group with its lag and previews an offset reset. A team member sees only
their own team's topics, groups and service accounts, and other teams' direct URLs answer not found."""

import uuid

import pytest
from confluent_kafka import Producer
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.accounts.models import ServiceAccount
from controlplane.clusters import connections
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.groups.models import ConsumerGroup
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Organization, Team
from controlplane.topics import services as topics
from controlplane.topics.models import Topic
from tests.e2e.conftest import screenshot
from tests.e2e.test_clusters_and_schemas import provisioning_worker, worker_environment  # noqa: F401
from tests.e2e.test_groups_and_jobs import PASSWORD, commit_as_group, produce, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SYSTEM = Actor.system()


def team_with_prefixes(organization: Organization, name: str, prefix: str) -> Team:
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name=name)
    for resource_type in (PrefixResourceType.TOPIC, PrefixResourceType.GROUP):
        tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=resource_type, prefix=prefix)
    return team


@pytest.mark.usefixtures("worker_environment", "provisioning_worker")
def test_an_org_admin_goes_from_a_new_cluster_to_a_consumer_groups_offset_reset_preview(
    page: Page,
    live_server,
    django_user_model,
    settings,
    redis_url,
) -> None:
    settings.REDIS_URL = redis_url
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=user, is_org_admin=True)
    prefix = f"pay-{uuid.uuid4().hex[:6]}."
    team_with_prefixes(organization, "Payments", prefix)
    topic, group, account = f"{prefix}orders", f"{prefix}billing", f"{prefix.rstrip('.')}-app"

    # Log in and create a cluster, watching its provisioning progress.
    sign_in(page, f"{live_server.url}/", "olga")
    expect(page.get_by_role("heading", name="Overview", level=1)).to_be_visible()
    expect(page.get_by_text("No clusters yet")).to_be_visible()
    screenshot(page, "journey-overview-empty")
    page.get_by_role("navigation").get_by_role("link", name="Clusters").click()
    page.get_by_role("button", name="Create cluster").click()
    dialog = page.get_by_role("dialog", name="Create cluster")
    dialog.get_by_label("Name").fill("events")
    dialog.get_by_role("button", name="Create cluster").click()
    expect(dialog.get_by_role("progressbar")).to_be_visible()
    screenshot(page, "journey-cluster-provisioning")
    expect(dialog.get_by_role("progressbar", name="Done: all 5 steps finished")).to_be_visible(timeout=90_000)
    dialog.get_by_role("button", name="Done").click()
    cluster = Cluster.objects.get(name="events")

    # Create a topic, produce a message and browse it.
    page.get_by_role("navigation").get_by_role("link", name="Topics").click()
    page.get_by_role("button", name="Create topic").click()
    create = page.get_by_role("dialog", name="Create topic")
    create.get_by_label("Name").fill(topic)
    create.get_by_label("Partitions").fill("1")
    create.get_by_role("button", name="Create topic").click()
    expect(page.get_by_role("heading", name=topic, level=1)).to_be_visible()
    page.get_by_role("button", name="Produce message").click()
    produce_dialog = page.get_by_role("dialog", name=f"Produce a message to {topic}")
    produce_dialog.get_by_label("Key", exact=True).fill("order-1")
    produce_dialog.get_by_label("Value", exact=True).fill('{"id": "order-1"}')
    produce_dialog.get_by_role("button", name="Produce", exact=True).click()
    expect(produce_dialog.get_by_role("status")).to_contain_text("Produced to partition 0 at offset 0.")
    produce_dialog.get_by_role("link", name="Browse it").click()
    messages = page.get_by_role("table", name="Messages")
    expect(messages.get_by_role("button", name="Details of partition 0 offset 0")).to_be_visible()
    messages.get_by_role("button", name="Details of partition 0 offset 0").click()
    expect(messages.get_by_label("Value as JSON")).to_contain_text('"order-1"')
    screenshot(page, "journey-message-browser")

    # A service account with a SCRAM credential and a producer grant.
    page.get_by_role("navigation").get_by_role("link", name="Service accounts").click()
    page.get_by_role("button", name="New service account").click()
    new_account = page.get_by_role("dialog", name="New service account")
    new_account.get_by_label("Name").fill(account)
    new_account.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name=account, level=1)).to_be_visible()
    page.get_by_role("button", name="Issue credential").click()
    page.get_by_role("dialog", name=f"Issue a SCRAM credential for {account}").get_by_role(
        "button", name="Issue credential"
    ).click()
    page.get_by_role("dialog", name="SCRAM credential issued").get_by_role(
        "button", name="I have saved it"
    ).click()
    page.get_by_role("link", name="Grant access").click()
    grant = page.get_by_role("dialog", name="Grant access from a template")
    expect(grant.get_by_label("What the template grants")).to_contain_text("WRITE and DESCRIBE")
    grant.get_by_role("button", name="Grant access").click()
    expect(grant).to_be_hidden()
    page.get_by_label("Principal").fill(f"User:{account}")
    expect(page.get_by_role("table", name="ACL bindings").get_by_role("row", name="Write")).to_contain_text(
        "Producer grant"
    )
    screenshot(page, "journey-producer-grant")

    # A real consumer group reads part of the topic; the sampler measures its lag.
    super_user = connections.connection_for(cluster).client_config(10)
    producer = Producer({**super_user, "linger.ms": 5})
    for index in range(9):
        producer.produce(topic, value=b"order %d" % index, partition=0)
    assert producer.flush(15) == 0
    commit_as_group(super_user, topic, group, {0: 4})
    sample_cluster(cluster)
    page.get_by_role("navigation").get_by_role("link", name="Consumer groups").click()
    row = page.get_by_role("table", name="Consumer groups").get_by_role("row", name=group)
    expect(row.get_by_role("cell").nth(6)).to_have_text(
        "6"
    )  # lag (after the type column): 10 records, 4 committed
    row.get_by_role("link", name=group).click()
    expect(page.get_by_text("6 messages behind")).to_be_visible()
    expect(page.get_by_role("img", name="Lag in messages over the last 1h")).to_be_visible()
    screenshot(page, "journey-group-lag")

    # Preview a reset to the latest offset: the lag it leaves is zero, nothing is committed yet.
    reset = page.get_by_role("form", name="Describe the offset reset")
    reset.get_by_label("Strategy").select_option("latest")
    reset.get_by_role("button", name="Preview reset").click()
    preview = page.get_by_role("table", name="Reset preview")
    expect(preview.get_by_role("row").nth(1)).to_contain_text("10")
    expect(preview.get_by_role("row").nth(1).get_by_role("cell").nth(5)).to_contain_text("0")
    screenshot(page, "journey-reset-preview")
    assert ConsumerGroup.objects.get(name=group).total_lag == 6
    assert page.problems.messages == []


def test_a_team_member_sees_only_their_teams_topics_groups_and_service_accounts(
    page: Page, live_server, broker, settings, redis_url
) -> None:
    settings.REDIS_URL = redis_url
    uid = uuid.uuid4().hex[:6]
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    payments = team_with_prefixes(organization, "Payments", f"pay-{uid}.")
    search = team_with_prefixes(organization, "Search", f"search-{uid}.")
    dave = get_user_model().objects.create_user("dave", "dave@example.com", PASSWORD)
    tenancy.add_member(actor=SYSTEM, team=search, user=dave, role=TeamRole.DEVELOPER)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name="shared", bootstrap_servers=broker.bootstrap
    )
    topics.create_topic(actor=SYSTEM, cluster=cluster, team=payments, name=f"pay-{uid}.orders", partitions=1)
    # create_topic answers with the operation; the page is the topic's.
    theirs_topic = Topic.objects.get(cluster=cluster, name=f"pay-{uid}.orders")
    topics.create_topic(
        actor=SYSTEM, cluster=cluster, team=search, name=f"search-{uid}.queries", partitions=1
    )
    theirs_account = accounts.create_service_account(actor=SYSTEM, team=payments, name=f"pay-{uid}-app")
    accounts.create_service_account(actor=SYSTEM, team=search, name=f"search-{uid}-app")
    config = {"bootstrap.servers": broker.bootstrap}
    produce(broker.bootstrap, f"pay-{uid}.orders", [(0, None, b"x")] * 3)
    produce(broker.bootstrap, f"search-{uid}.queries", [(0, None, b"q")] * 3)
    commit_as_group(config, f"pay-{uid}.orders", f"pay-{uid}.billing", {0: 1})
    commit_as_group(config, f"search-{uid}.queries", f"search-{uid}.indexer", {0: 2})
    sample_cluster(cluster)
    theirs_group = ConsumerGroup.objects.get(name=f"pay-{uid}.billing")

    sign_in(page, f"{live_server.url}/topics", "dave")
    topics_table = page.get_by_role("table", name="Topics")
    expect(topics_table).to_contain_text(f"search-{uid}.queries")
    expect(topics_table).not_to_contain_text(f"pay-{uid}")
    screenshot(page, "tenant-topics")

    page.get_by_role("navigation").get_by_role("link", name="Consumer groups").click()
    groups_table = page.get_by_role("table", name="Consumer groups")
    expect(groups_table).to_contain_text(f"search-{uid}.indexer")
    expect(groups_table).not_to_contain_text(f"pay-{uid}")
    screenshot(page, "tenant-groups")

    page.get_by_role("navigation").get_by_role("link", name="Service accounts").click()
    expect(page.get_by_role("link", name=f"search-{uid}-app")).to_be_visible()
    expect(page.get_by_text(f"pay-{uid}")).to_have_count(0)
    screenshot(page, "tenant-service-accounts")
    assert page.problems.messages == []

    # Another team's resources by direct URL: the API answers not found and the page says so.
    for path, title in [
        (f"/topics/{theirs_topic.pk}", "Could not load the topic"),
        (f"/groups/{theirs_group.pk}", "Could not load the consumer group"),
        (f"/service-accounts/{theirs_account.pk}", "Could not load the service account"),
    ]:
        page.goto(f"{live_server.url}{path}")
        alert = page.get_by_role("alert").filter(has_text=title)
        expect(alert).to_contain_text("Not found")
        screenshot(page, f"tenant-not-found-{path.split('/')[1]}")
    # The refusals are the only problems the browser saw.
    assert page.problems.messages, "the direct URLs were expected to be refused"
    assert all("404" in message for message in page.problems.messages), page.problems.messages
    assert Topic.objects.filter(team=payments).count() == 1
    assert ServiceAccount.objects.filter(team=payments).count() == 1
