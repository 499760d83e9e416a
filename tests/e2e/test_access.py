"""Browser journeys for access: a service account made in the console gets a SCRAM credential and a producer
grant from the template, shows in the ACL list, and a real client logs in with that password and writes
inside the team's prefix only; a quota is created and deleted on a SASL + ACL broker."""

import uuid
from dataclasses import dataclass

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import Page, expect

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.quotas.models import ClientQuota
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import Team
from controlplane.topics import services as topics
from tests.e2e.conftest import screenshot
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER, SecureBrokerProcess
from tests.integration.topics.clients import code_of, produce_one

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"


@dataclass
class SecurePayments:
    olga: Actor
    team: Team
    cluster: Cluster
    topic_prefix: str
    uid: str


@pytest.fixture
def secure_payments(django_user_model, settings, secure_broker: SecureBrokerProcess) -> SecurePayments:
    """Team Payments of Acme with fresh prefixes on the session's SASL + ACL broker, registered with its super
    user as Acme's cluster; olga administers Acme."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    uid = uuid.uuid4().hex[:6]
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=Actor.system(), name="Acme")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=Actor.system(), organization=organization, name="Payments")
    topic_prefix = f"pay-{uid}."
    tenancy.add_prefix(
        actor=Actor.system(), team=team, resource_type=PrefixResourceType.TOPIC, prefix=topic_prefix
    )
    tenancy.add_prefix(
        actor=Actor.system(), team=team, resource_type=PrefixResourceType.GROUP, prefix=f"pay-{uid}-"
    )
    olga = Actor(user=user)
    cluster = clusters.register_external_cluster(
        actor=olga,
        organization=organization,
        name=f"secure-{uid}",
        bootstrap_servers=secure_broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        username=ADMIN_USER,
        password=ADMIN_PASSWORD,
    )
    return SecurePayments(olga=olga, team=team, cluster=cluster, topic_prefix=topic_prefix, uid=uid)


def sign_in(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_a_service_account_gets_a_credential_and_a_producer_grant_and_writes_inside_its_prefix(
    page: Page, live_server, secure_payments: SecurePayments, secure_broker: SecureBrokerProcess
) -> None:
    world = secure_payments
    account = f"billing-{world.uid}"
    inside = f"{world.topic_prefix}orders"
    outside = f"elsewhere-{world.uid}"
    topics.create_topic(actor=world.olga, cluster=world.cluster, team=world.team, name=inside, partitions=1)
    # A topic outside the team's prefix, made with the super user.
    super_user = AdminClient(secure_broker.client_config())
    for future in super_user.create_topics([NewTopic(outside, 1, 1)]).values():
        future.result(10)

    sign_in(page, f"{live_server.url}/service-accounts")
    page.get_by_role("button", name="New service account").click()
    dialog = page.get_by_role("dialog", name="New service account")
    dialog.get_by_label("Name").fill(account)
    dialog.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name=account, level=1)).to_be_visible()

    page.get_by_role("button", name="Issue credential").click()
    issue = page.get_by_role("dialog", name=f"Issue a SCRAM credential for {account}")
    expect(issue.get_by_label("Mechanism")).to_have_value("SCRAM-SHA-512")
    issue.get_by_role("button", name="Issue credential").click()
    secret_dialog = page.get_by_role("dialog", name="SCRAM credential issued")
    password = secret_dialog.get_by_label("Secret").input_value()
    assert len(password) >= 20
    secret_dialog.get_by_role("button", name="I have saved it").click()
    expect(page.get_by_role("table", name="SCRAM credentials")).to_contain_text(world.cluster.name)
    screenshot(page, "service-account-scram")

    page.get_by_role("link", name="Grant access").click()
    grant = page.get_by_role("dialog", name="Grant access from a template")
    expect(grant.get_by_label("Service account")).to_have_value(str(_account_id(account)))
    expect(grant.get_by_label("Topic prefix")).to_have_value(world.topic_prefix)
    expect(grant.get_by_label("What the template grants")).to_contain_text("WRITE and DESCRIBE")
    grant.get_by_role("button", name="Grant access").click()
    expect(grant).to_be_hidden()

    page.get_by_label("Principal").fill(f"User:{account}")
    bindings = page.get_by_role("table", name="ACL bindings")
    expect(bindings.get_by_role("row")).to_have_count(3)
    expect(bindings.get_by_role("row", name="Write")).to_contain_text(world.topic_prefix)
    expect(bindings.get_by_role("row", name="Write")).to_contain_text("Producer grant")
    expect(page).to_have_url(
        f"{live_server.url}/acls?account={_account_id(account)}&principal=User%3A{account}"
    )
    expect(page.get_by_role("table", name="Access grants")).to_contain_text(account)
    screenshot(page, "acls-producer-grant")

    # The broker agrees: the new password logs in, writes inside the prefix and nowhere else.
    producer = Producer({**secure_broker.client_config(account, password), "message.timeout.ms": 5000})
    assert produce_one(producer, inside, b"from the console's account") is None
    assert code_of(produce_one(producer, outside, b"not allowed")) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert page.problems.messages == []


def _account_id(name: str) -> int:
    return ServiceAccount.objects.get(name=name).pk


def test_a_quota_is_created_and_deleted(page: Page, live_server, secure_payments: SecurePayments) -> None:
    world = secure_payments
    sign_in(page, f"{live_server.url}/quotas")
    expect(page.get_by_text("No quotas yet")).to_be_visible()

    page.get_by_role("button", name="New quota").click()
    dialog = page.get_by_role("dialog", name="New quota")
    dialog.get_by_label("User", exact=True).select_option("named")
    dialog.get_by_label("User name").fill(f"app-{world.uid}")
    dialog.get_by_label("Produce bytes/s").fill("102400")
    dialog.get_by_label("Request time %").fill("25")
    dialog.get_by_role("button", name="Set quota").click()
    expect(dialog).to_be_hidden()

    entity = f"user=app-{world.uid}"
    row = page.get_by_role("table", name="Quotas").get_by_role("row", name=entity)
    expect(row).to_contain_text("100.0 KiB/s")
    expect(row).to_contain_text("25 %")
    expect(row).to_contain_text("applied")
    quota = ClientQuota.objects.get(entity_key=entity)
    assert quota.observed_values == {"producer_byte_rate": 102400.0, "request_percentage": 25.0}
    screenshot(page, "quotas")

    row.get_by_role("button", name=f"Delete {entity}").click()
    confirm = page.get_by_role("alertdialog", name="Delete this quota?")
    confirm.get_by_role("textbox").fill(entity)
    confirm.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("No quotas yet")).to_be_visible()
    assert not ClientQuota.objects.filter(entity_key=entity).exists()
    assert page.problems.messages == []
