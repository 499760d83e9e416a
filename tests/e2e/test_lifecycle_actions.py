"""Lifecycle actions in the console on a real broker, no REST call: purge one partition up to an offset, delete a
consumer group's offsets for a chosen topic and then the group, register a new schema subject, soft-delete a
version and then delete it permanently. Each new dialog and section is photographed at 1280 and 1440 px, light
and dark."""

import json
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition
from playwright.sync_api import Page, expect

from controlplane.clusters import services as clusters
from controlplane.lag.sampler import sample_cluster
from controlplane.schemas.models import SubjectVersion
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.topics import services as topics
from controlplane.topics.models import Topic
from tests.e2e.test_groups_and_jobs import PASSWORD, commit_as_group, produce, sign_in
from tests.e2e.test_people_journey import screenshots

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SYSTEM = Actor.system()


def _start_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "lifecycle-probe"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[0]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def test_an_admin_purges_a_partition_deletes_group_offsets_and_the_group_and_soft_then_hard_deletes_a_schema(
    page: Page, live_server, broker, django_user_model, settings, redis_url
) -> None:
    settings.REDIS_URL = redis_url
    uid = uuid.uuid4().hex[:6]
    prefix = f"ops-{uid}."
    topic, other, group = f"{prefix}events", f"{prefix}audit", f"{prefix}indexer"
    admin = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=admin, is_org_admin=True)
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Ops")
    for resource_type in (PrefixResourceType.TOPIC, PrefixResourceType.GROUP, PrefixResourceType.SUBJECT):
        tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=resource_type, prefix=prefix)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name="shared", bootstrap_servers=broker.bootstrap
    )
    for name in (topic, other):
        topics.create_topic(actor=SYSTEM, cluster=cluster, team=team, name=name, partitions=2)
    produce(broker.bootstrap, topic, [(0, None, b"e%d" % i) for i in range(6)] + [(1, None, b"x")] * 2)
    produce(broker.bootstrap, other, [(0, None, b"a")] * 2)
    config = {"bootstrap.servers": broker.bootstrap}
    commit_as_group(config, topic, group, {0: 6})
    commit_as_group(config, other, group, {0: 2})
    sample_cluster(cluster)
    topic_id = Topic.objects.get(name=topic).pk

    # Purge partition 0 of the topic before offset 4.
    sign_in(page, f"{live_server.url}/topics/{topic_id}", "olga")
    expect(page.get_by_role("heading", name=topic, level=1)).to_be_visible()
    page.get_by_role("button", name="More actions").click()
    page.get_by_role("menuitem", name="Purge a partition…").click()
    purge = page.get_by_role("dialog", name=f"Purge a partition of {topic}")
    purge.get_by_label("Partition", exact=True).select_option("0")
    purge.get_by_label("Delete records before offset").fill("4")
    expect(purge).to_contain_text("4 records of partition 0 will be deleted")
    screenshots(page, "purge-partition", prefix="lifecycle")
    purge.get_by_role("button", name="Delete records").click()
    expect(purge.get_by_role("status")).to_have_text("Partition 0 now starts at offset 4.")
    assert _start_offsets(broker.bootstrap, topic, 2) == {0: 4, 1: 0}
    purge.get_by_role("button", name="Cancel").click()

    # The group: forget its offsets for one topic, then delete it.
    page.get_by_role("navigation").get_by_role("link", name="Consumer groups").click()
    page.get_by_role("table", name="Consumer groups").get_by_role("link", name=group).click()
    lifecycle = page.get_by_role("region", name="Delete offsets or the group")
    lifecycle.get_by_role("checkbox", name=other).check()
    screenshots(page, "group-lifecycle", prefix="lifecycle")
    lifecycle.get_by_role("button", name="Delete offsets (1 topic)").click()
    confirm = page.get_by_role("alertdialog")
    confirm.get_by_role("textbox").fill(group)
    confirm.get_by_role("button", name="Delete offsets").click()
    expect(lifecycle.get_by_role("status")).to_contain_text("Deleted.")
    expect(page.get_by_role("table", name="Partition lag")).not_to_contain_text(other)
    lifecycle.get_by_role("button", name="Delete group").click()
    confirm = page.get_by_role("alertdialog", name=f"Delete the consumer group {group}?")
    confirm.get_by_role("textbox").fill(group)
    screenshots(page, "group-delete-confirm", prefix="lifecycle")
    confirm.get_by_role("button", name="Delete group").click()
    expect(page.get_by_role("heading", name="Consumer groups", level=1)).to_be_visible()
    expect(page.get_by_role("link", name=group)).to_have_count(0)

    # A new subject, its first version soft-deleted, then deleted permanently.
    subject = f"{prefix}events-value"
    schema = {"type": "record", "name": "Event", "fields": [{"name": "id", "type": "string"}]}
    page.get_by_role("navigation").get_by_role("link", name="Schemas").click()
    page.get_by_role("button", name="New subject").click()
    create = page.get_by_role("dialog", name="New subject")
    create.get_by_label("Subject", exact=True).fill(subject)
    create.get_by_label("Schema", exact=True).fill(json.dumps(schema, indent=2))
    screenshots(page, "new-subject", prefix="lifecycle")
    create.get_by_role("button", name="Register version 1").click()
    expect(page.get_by_role("heading", name=subject, level=1)).to_be_visible()
    expect(page.get_by_text("1 version: 1")).to_be_visible()
    section = page.get_by_role("region", name="Delete versions or the subject")
    screenshots(page, "subject-lifecycle", prefix="lifecycle")
    section.get_by_role("button", name="Delete version 1").click()
    confirm = page.get_by_role("alertdialog", name=f"Delete version 1 of {subject}?")
    confirm.get_by_role("textbox").fill("version 1")
    confirm.get_by_role("button", name="Delete", exact=True).click()
    permanent = section.get_by_role("button", name="Permanently delete version 1")
    expect(permanent).to_be_visible()
    assert SubjectVersion.objects.get(subject=subject, version=1).deleted
    screenshots(page, "subject-soft-deleted", prefix="lifecycle")
    permanent.click()
    confirm = page.get_by_role("alertdialog", name=f"Permanently delete version 1 of {subject}?")
    confirm.get_by_role("textbox").fill("version 1")
    confirm.get_by_role("button", name="Delete permanently").click()
    expect(permanent).to_have_count(0)
    assert not SubjectVersion.objects.filter(subject=subject).exists()
