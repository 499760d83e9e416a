"""The issue's first journey, with no REST call: a brand-new org admin creates a team with a prefix, a topic in
it, produces a message and browses it, and invites a person into the team; the person opens the one-time link,
sets a password, signs in and sees only their team's topics. Every new page is photographed at 1280 and 1440
px, light and dark."""

import uuid
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Browser, Page, expect

from controlplane.audit.models import AuditEvent
from controlplane.clusters import services as clusters
from controlplane.people.models import PasswordLink
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import Team
from controlplane.topics import services as topics
from tests.e2e.conftest import BrowserProblems, screenshot
from tests.e2e.test_groups_and_jobs import PASSWORD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SYSTEM = Actor.system()
NEW_PASSWORD = "a fresh passphrase 42"


def screenshots(page: Page, name: str, prefix: str = "people") -> None:
    """The page as it is now at both widths, light and dark (the console follows the system's scheme)."""
    height = page.viewport_size["height"] if page.viewport_size else 900
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for width in (1280, 1440):
            page.set_viewport_size({"width": width, "height": height})
            screenshot(page, f"{prefix}-{name}-{width}-{scheme}")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1400, "height": height})


def test_a_new_admin_creates_a_team_and_topic_and_invites_a_person_who_sees_only_that_team(
    page: Page, browser: Browser, live_server, broker, django_user_model, settings, redis_url
) -> None:
    settings.REDIS_URL = redis_url
    uid = uuid.uuid4().hex[:6]
    prefix = f"pay-{uid}."
    topic = f"{prefix}orders"
    # The platform's starting point: an organization with its admin and a cluster, and no teams of its own.
    admin = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=admin, is_org_admin=True)
    cluster = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name="shared", bootstrap_servers=broker.bootstrap
    )

    sign_in(page, f"{live_server.url}/teams", "olga")
    expect(page.get_by_text("No teams yet")).to_be_visible()
    screenshots(page, "teams-empty")

    # A team with a prefix, from the Teams page.
    page.get_by_role("button", name="Create team").click()
    dialog = page.get_by_role("dialog", name="Create team")
    dialog.get_by_label("Name", exact=True).fill("Payments")
    dialog.get_by_label("Description").fill("Card payments and refunds")
    dialog.get_by_label("Name prefix").fill(prefix)
    screenshots(page, "create-team-dialog")
    dialog.get_by_role("button", name="Create team").click()
    expect(page.get_by_role("heading", name="Payments", level=1)).to_be_visible()
    prefixes = page.get_by_role("table", name="Prefixes")
    expect(prefixes.get_by_role("row", name=f"Topic {prefix}")).to_be_visible()
    expect(prefixes.get_by_role("row", name=f"Consumer group {prefix}")).to_be_visible()
    screenshots(page, "team-detail")

    # Renaming works in place.
    page.get_by_role("button", name="Edit team").click()
    edit = page.get_by_role("dialog", name="Edit team")
    edit.get_by_label("Description").fill("Card payments, refunds and payouts")
    edit.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Card payments, refunds and payouts")).to_be_visible()

    # A topic for the team, a message, and the browser page as it is today.
    page.get_by_role("navigation").get_by_role("link", name="Topics").click()
    # The team page has a "Create topic" of its own: wait for the Topics page before clicking.
    expect(page.get_by_role("heading", name="Topics", level=1)).to_be_visible()
    page.get_by_role("button", name="Create topic").click()
    create = page.get_by_role("dialog", name="Create topic")
    create.get_by_label("Name").fill(topic)
    create.get_by_label("Partitions").fill("1")
    create.get_by_role("button", name="Create topic").click()
    expect(page.get_by_role("heading", name=topic, level=1)).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Produce message").click()
    produce = page.get_by_role("dialog", name=f"Produce a message to {topic}")
    produce.get_by_label("Key", exact=True).fill("order-1")
    produce.get_by_label("Value", exact=True).fill('{"id": "order-1"}')
    produce.get_by_role("button", name="Produce", exact=True).click()
    expect(produce.get_by_role("status")).to_contain_text("Produced to partition 0 at offset 0.")
    produce.get_by_role("link", name="Browse it").click()
    expect(page.get_by_text('"order-1"').first).to_be_visible()

    # Another team's topic exists on the same cluster; the invited person must not see it.
    search = tenancy.create_team(actor=SYSTEM, organization=organization, name="Search")
    tenancy.add_prefix(
        actor=SYSTEM, team=search, resource_type=PrefixResourceType.TOPIC, prefix=f"search-{uid}."
    )
    topics.create_topic(
        actor=SYSTEM, cluster=cluster, team=search, name=f"search-{uid}.queries", partitions=1
    )

    # Invite a developer of Payments; the link is shown once.
    page.get_by_role("navigation").get_by_role("link", name="People").click()
    expect(page.get_by_role("table", name="People")).to_contain_text("olga")
    page.get_by_role("button", name="Invite person").click()
    invite = page.get_by_role("dialog", name="Invite person")
    invite.get_by_label("Username").fill("nina")
    invite.get_by_label("E-mail").fill("nina@example.com")
    invite.get_by_label("Team", exact=True).select_option(label="Payments")
    invite.get_by_label("Role", exact=True).select_option(label="Developer")
    screenshots(page, "invite-dialog")
    invite.get_by_role("button", name="Create invitation").click()
    shown = page.get_by_role("dialog", name="Invitation for nina")
    link = shown.get_by_label("One-time link").input_value()
    screenshots(page, "invite-link")
    assert urlsplit(link).path == "/set-password"
    assert "#token=" in link
    shown.get_by_role("button", name="Done").click()
    row = page.get_by_role("table", name="People").get_by_role("row", name="nina")
    expect(row).to_contain_text("Invited")
    expect(row).to_contain_text("Payments (Developer)")
    screenshots(page, "people")
    row.get_by_role("button", name="Teams of nina").click()
    drawer = page.get_by_role("dialog", name="Teams of nina")
    expect(drawer.get_by_label("Role in Payments")).to_have_value("developer")
    screenshots(page, "person-teams")
    page.keyboard.press("Escape")
    assert page.problems.messages == []

    # The person opens the link in their own browser, sets a password and signs in.
    context = browser.new_context(timezone_id="Europe/Berlin", viewport={"width": 1400, "height": 900})
    person = context.new_page()
    person.set_default_timeout(10_000)
    person.problems = BrowserProblems(person)
    person.goto(link)
    expect(person.get_by_text("Welcome, nina.")).to_be_visible()
    screenshots(person, "set-password")
    person.get_by_label("New password").fill(NEW_PASSWORD)
    person.get_by_label("Repeat it").fill(NEW_PASSWORD)
    person.get_by_role("button", name="Set password").click()
    # Setting the password signs the person in: the console opens on the overview, no second sign-in.
    expect(person.get_by_role("heading", name="Overview", level=1)).to_be_visible()
    screenshots(person, "set-password-done")
    person.get_by_role("navigation").get_by_role("link", name="Topics").click()
    table = person.get_by_role("table", name="Topics")
    expect(table).to_contain_text(topic)
    expect(table).not_to_contain_text(f"search-{uid}")
    person.get_by_role("navigation").get_by_role("link", name="Teams").click()
    expect(person.get_by_role("table", name="Teams").get_by_role("link")).to_have_text(["Payments"])
    person.get_by_role("navigation").get_by_role("link", name="People").click()
    expect(person.get_by_text("Only organization admins manage people")).to_be_visible()
    assert person.problems.messages == []

    # The link is spent; opening it again says so.
    person.goto(link)
    expect(person.get_by_role("alert")).to_contain_text("This link is not valid")
    context.close()

    nina = get_user_model().objects.get(username="nina")
    assert nina.check_password(NEW_PASSWORD)
    assert PasswordLink.objects.get(user=nina).used_at is not None
    assert Team.objects.get(name="Payments").prefixes.count() == 2
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"team.create", "prefix.create", "team.update", "user.invite", "user.accept_invite"} <= actions
