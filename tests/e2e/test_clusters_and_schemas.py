"""Browser journeys for clusters and schemas: an org admin provisions a local cluster through the console and
watches a real worker bring it up, then deletes it; a registered cluster's schema registry shows a subject's
versions, their diff and a failing compatibility test."""

import contextlib
import json
import os
import re
import signal
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.clusters import services as clusters
from controlplane.clusters.models import Cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Organization
from tests.e2e.conftest import screenshot
from tests.integration.clusters.conftest import broker_pids_under

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"
SUBJECT = "orders.placed-value"
ORDER_V1 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "long", "default": 0}],
}
# A new field without a default: readers of the new schema cannot read old records.
ORDER_BREAKING = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "amount", "type": "long", "default": 0},
        {"name": "currency", "type": "string"},
    ],
}


@pytest.fixture
def acme(django_user_model) -> Organization:
    """The organization Acme, administered by olga (who is not a platform admin)."""
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=Actor.system(), name="Acme")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    return organization


def _database_url_of_this_test() -> str:
    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("the worker process needs a database it can share with the test: set DATABASE_URL")
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    return (
        f"postgres://{settings_dict['USER']}{password}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )


@pytest.fixture
def worker_environment(tmp_path: Path, settings, monkeypatch) -> Iterator[Path]:
    """The worker shares this test's database, data directory and secret key; brokers left over are killed."""
    monkeypatch.setenv("DATABASE_URL", _database_url_of_this_test())
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)
    settings.DATA_DIR = tmp_path
    yield tmp_path
    for pid in broker_pids_under(tmp_path / "clusters"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def provisioning_worker(worker_environment, celery_worker_process):
    return celery_worker_process


def sign_in(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_an_org_admin_creates_a_cluster_watches_it_come_up_and_deletes_it(
    page: Page, live_server, acme, worker_environment: Path, provisioning_worker
) -> None:
    sign_in(page, f"{live_server.url}/clusters")
    expect(page.get_by_role("heading", name="Clusters", level=1)).to_be_visible()
    expect(page.get_by_text("No clusters yet")).to_be_visible()

    page.get_by_role("button", name="Create cluster").click()
    dialog = page.get_by_role("dialog", name="Create cluster")
    dialog.get_by_label("Name").fill("events")
    dialog.get_by_label("Brokers").fill("1")  # replicated clusters: test_cluster_replication.py
    dialog.get_by_role("button", name="Add override").click()
    dialog.get_by_label("Property 1").fill("num.partitions")
    dialog.get_by_label("Value 1").fill("lots")
    dialog.get_by_role("button", name="Create cluster").click()
    # The server validates overrides and the console puts its message on the row it is about.
    expect(dialog.get_by_label("Property 1")).to_have_accessible_description(
        "num.partitions must be an integer, not 'lots'."
    )
    # The refused request is the one problem the browser saw; it is expected, nothing else is.
    assert page.problems.messages == [
        "console: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]
    page.problems.messages.clear()
    assert Cluster.objects.count() == 0
    dialog.get_by_label("Value 1").fill("3")
    dialog.get_by_role("button", name="Create cluster").click()

    expect(dialog.get_by_role("progressbar")).to_be_visible()
    expect(dialog.get_by_role("progressbar", name="Done: all 5 steps finished")).to_be_visible(timeout=60_000)
    expect(dialog.get_by_role("list", name="Log")).not_to_be_empty()
    screenshot(page, "cluster-provisioned")
    dialog.get_by_role("button", name="Done").click()

    table = page.get_by_role("table", name="Clusters")
    expect(table.get_by_role("row", name="events")).to_contain_text("running")
    table.get_by_role("link", name="events").click()
    expect(page.get_by_role("heading", name="events", level=1)).to_be_visible()
    tabs = page.get_by_role("navigation", name="Cluster sections")
    tabs.get_by_role("link", name="Brokers (1)").click()
    expect(page.get_by_role("table", name="Brokers")).to_contain_text("running")
    tabs.get_by_role("link", name="Broker configs").click()
    page.get_by_label(re.compile(r"^Filter broker \d+ configs$")).fill("num.partitions")
    expect(page.get_by_role("table", name=re.compile(r"^Broker \d+ configs$"))).to_contain_text("3")
    tabs.get_by_role("link", name="Overview").click()
    page.get_by_role("button", name="Check health").click()
    expect(page.get_by_text("healthy · 1 broker up")).to_be_visible()
    screenshot(page, "cluster-detail")

    page.get_by_role("button", name="Delete cluster").click()
    confirm = page.get_by_role("alertdialog", name="Delete cluster events?")
    confirm.get_by_role("textbox").fill("events")
    confirm.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("group", name="Deleting events")).to_be_visible()
    expect(
        page.get_by_role("group", name="Deleting events").get_by_role(
            "progressbar", name="Done: all 3 steps finished"
        )
    ).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name="events", level=1)).to_be_visible()
    expect(page.locator(".page-header").get_by_text("deleted", exact=True)).to_be_visible(timeout=10_000)
    expect(page.get_by_text("not watched while deleted")).to_be_visible()
    assert Cluster.objects.get(name="events").status == "deleted"
    assert broker_pids_under(worker_environment / "clusters") == []
    screenshot(page, "cluster-deleted")
    assert page.problems.messages == []


def _registry_call(base: str, token: str, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{base}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/vnd.schemaregistry.v1+json",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_a_subject_shows_its_versions_their_diff_and_a_failing_compatibility_test(
    page: Page, live_server, acme, broker, django_user_model
) -> None:
    olga = Actor(user=django_user_model.objects.get(username="olga"))
    cluster = clusters.register_external_cluster(
        actor=olga, organization=acme, name="legacy", bootstrap_servers=broker.bootstrap
    )
    _key, token = accounts.create_api_key(actor=olga, name="ci", role=TeamRole.TEAM_ADMIN)
    registry = f"{live_server.url}/clusters/{cluster.id}/schema-registry"
    subject_path = f"/subjects/{SUBJECT}/versions"
    first = _registry_call(registry, token, "POST", subject_path, {"schema": json.dumps(ORDER_V1)})
    second = _registry_call(registry, token, "POST", subject_path, {"schema": json.dumps(ORDER_V2)})
    assert first["id"] != second["id"]

    sign_in(page, f"{live_server.url}/schemas?cluster={cluster.id}")
    subjects = page.get_by_role("table", name="Subjects")
    expect(subjects.get_by_role("row", name=SUBJECT)).to_contain_text("orders.placed")
    subjects.get_by_role("link", name=SUBJECT).click()

    expect(page.get_by_role("heading", name=SUBJECT, level=1)).to_be_visible()
    expect(page.get_by_text("2 versions: 1, 2")).to_be_visible()
    expect(page.get_by_label("Schema of version 2")).to_contain_text('"amount"')
    diff = page.get_by_role("table", name="Version 1 compared with version 2")
    expect(diff.locator('tr[data-kind="added"]').first).to_be_visible()
    expect(diff.locator('tr[data-kind="added"]', has_text='"name": "amount"')).to_have_count(1)
    compatibility = page.get_by_role("region", name="Compatibility")
    expect(compatibility).to_contain_text("New versions must be BACKWARD compatible")
    expect(compatibility.get_by_label("Compatibility level")).to_have_value("BACKWARD")
    screenshot(page, "schema-versions-diff")

    page.get_by_label("New schema").fill(json.dumps(ORDER_BREAKING, indent=2))
    register = page.get_by_role("button", name="Register version")
    expect(register).to_be_disabled()
    page.get_by_role("button", name="Test compatibility").click()
    expect(page.get_by_text("Not compatible")).to_be_visible()
    messages = page.get_by_role("list", name="Compatibility messages")
    expect(messages).to_contain_text("currency")
    expect(register).to_be_disabled()
    screenshot(page, "schema-compatibility-failed")
    assert page.problems.messages == []
