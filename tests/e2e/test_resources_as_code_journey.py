"""Browser journey: topics applied from a file set (the `streamhub` CLI against the live server) show as managed
as code, with their file set and change set, on the topic list and the topic page; a topic made by clicks
does not."""

import uuid

import pytest
from click.testing import CliRunner
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from cli.streamhub.main import cli
from controlplane.accounts import services as accounts
from controlplane.clusters import services as clusters
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.topics import services as topics
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
SYSTEM = Actor.system()


def test_topics_applied_as_code_show_their_file_set_and_change_set(
    page: Page, live_server, broker, tmp_path, monkeypatch
) -> None:
    user = get_user_model().objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    prefix = f"payments-{uuid.uuid4().hex[:6]}."
    tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=PrefixResourceType.TOPIC, prefix=prefix)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name="orders", bootstrap_servers=broker.bootstrap
    )
    topics.create_topic(
        actor=Actor(user=user), cluster=cluster, team=team, name=f"{prefix}clicked", partitions=1
    )
    _key, token = accounts.create_api_key(actor=Actor(user=user), name="ci", role=TeamRole.DEVELOPER)

    folder = tmp_path / "payments-kafka"
    folder.mkdir()
    (folder / "topics.yaml").write_text(
        "\n---\n".join(
            f"kind: Topic\nmetadata: {{name: {prefix}{name}, team: payments, cluster: orders}}\n"
            f"spec: {{partitions: {partitions}, configs: {{retention.ms: 86400000}}}}\n"
            for name, partitions in (("orders", 3), ("refunds", 1))
        )
    )
    monkeypatch.setenv("STREAMHUB_URL", live_server.url)
    monkeypatch.setenv("STREAMHUB_API_KEY", str(token))
    applied = CliRunner().invoke(cli, ["apply", str(folder), "--yes"], catch_exceptions=False)
    assert applied.exit_code == 0, applied.output
    change_set = applied.output.rsplit("Change set ", 1)[1].split(" ", 1)[0]

    page.goto(f"{live_server.url}/topics")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    table = page.get_by_role("table", name="Topics")
    badge = f"as code · payments-kafka #{change_set}"
    expect(table.get_by_role("row", name=f"{prefix}orders")).to_contain_text(badge)
    expect(table.get_by_role("row", name=f"{prefix}refunds")).to_contain_text(badge)
    expect(table.get_by_role("row", name=f"{prefix}clicked")).not_to_contain_text("as code")
    screenshot(page, "resources-as-code-topic-list")

    table.get_by_role("link", name=f"{prefix}orders").click()
    expect(page.get_by_role("heading", name=f"{prefix}orders", level=1)).to_be_visible()
    expect(page.get_by_text(badge)).to_be_visible()
    expect(page.get_by_text("changes made here are put back by its next apply")).to_be_visible()
    screenshot(page, "resources-as-code-topic-page")
    assert page.problems.messages == []
