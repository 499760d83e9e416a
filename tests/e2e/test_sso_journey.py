"""Single sign-on in Chromium against a real OpenID provider (oidc-provider, tests/fixtures/oidc.py): sign in
on the provider's own login page, land in the console seeing only the mapped teams' resources, read the
profile, sign out at the provider too; and the break-glass admin signs in while the provider is stopped."""

import pytest
from playwright.sync_api import Page, expect

from controlplane.accounts import services as accounts
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from tests.e2e.conftest import screenshot
from tests.fixtures.oidc import sso_settings

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice's provider password"
RULES = [
    {"value": "kafka-payments", "organization": "Acme", "team": "Payments", "role": "developer"},
    {"value": "kafka-billing", "organization": "Acme", "team": "Billing", "role": "viewer"},
]


@pytest.fixture
def acme_with_accounts(db) -> None:
    """Three teams of Acme, each with a service account; the provider's groups map to two of them."""
    system = Actor.system()
    organization = tenancy.create_organization(actor=system, name="Acme")
    for name in ("Payments", "Billing", "Search"):
        team = tenancy.create_team(actor=system, organization=organization, name=name)
        accounts.create_service_account(actor=system, team=team, name=f"{name.lower()}-app")


@pytest.fixture
def provider(oidc_provider_factory, live_server, settings, acme_with_accounts):
    provider = oidc_provider_factory([live_server.url])
    provider.set_user("alice", password=PASSWORD, groups=["kafka-payments", "kafka-billing"])
    sso_settings(
        settings, provider.issuer, RULES, OIDC_HIDE_LOCAL_LOGIN=True, OIDC_BREAK_GLASS_USERS=["root"]
    )
    settings.OIDC = {**settings.OIDC, "provider_name": "Acme Login"}
    return provider


def test_sign_in_at_the_provider_shows_only_the_mapped_teams_and_signs_out_there_too(
    page: Page, live_server, provider
) -> None:
    page.goto(f"{live_server.url}/service-accounts")
    expect(page).to_have_url(f"{live_server.url}/login?next=%2Fservice-accounts")
    expect(page.get_by_label("Username")).to_have_count(0)  # local login hidden
    screenshot(page, "sso-login")

    page.get_by_role("link", name="Sign in with Acme Login").click()
    expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
    assert page.url.startswith(f"{provider.issuer}/interaction/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    screenshot(page, "sso-provider-login")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Service accounts", level=1)).to_be_visible()
    assert page.url == f"{live_server.url}/service-accounts"
    expect(page.get_by_role("cell", name="payments-app", exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name="billing-app", exact=True)).to_be_visible()
    expect(page.get_by_text("search-app")).to_have_count(0)
    screenshot(page, "sso-service-accounts")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Teams", exact=True).click()
    expect(page.get_by_role("link", name="Payments")).to_be_visible()
    expect(page.get_by_role("link", name="Billing")).to_be_visible()
    expect(page.get_by_role("link", name="Search")).to_have_count(0)

    page.get_by_role("link", name="alice").click()
    expect(page.get_by_role("heading", name="Profile", level=1)).to_be_visible()
    groups = page.get_by_role("region", name="Groups at the identity provider")
    expect(groups.get_by_role("listitem")).to_have_text(["kafka-payments", "kafka-billing"])
    teams = page.get_by_role("region", name="Teams")
    expect(teams.get_by_role("row")).to_have_count(3)
    expect(teams.get_by_role("row").filter(has_text="Payments")).to_contain_text("Developer")
    expect(teams.get_by_role("row").filter(has_text="Billing")).to_contain_text("Viewer")
    screenshot(page, "sso-profile")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Yes, sign me out")).to_be_visible()
    screenshot(page, "sso-provider-logout")
    page.get_by_role("button", name="Yes, sign me out").click()
    expect(page.get_by_role("link", name="Sign in with Acme Login")).to_be_visible()
    assert page.url.startswith(f"{live_server.url}/login")
    # Both sessions ended: the provider asks for the password again.
    page.get_by_role("link", name="Sign in with Acme Login").click()
    expect(page.get_by_label("Password")).to_be_visible()
    assert page.url.startswith(f"{provider.issuer}/interaction/")
    assert page.problems.messages == []


def test_the_break_glass_admin_signs_in_while_the_provider_is_stopped(
    page: Page, live_server, provider, django_user_model
) -> None:
    django_user_model.objects.create_superuser("root", "root@example.com", "break glass password 42")
    provider.stop()

    page.goto(f"{live_server.url}/login")
    page.get_by_role("link", name="Sign in with Acme Login").click()
    expect(page.get_by_role("alert")).to_contain_text("could not be reached")
    screenshot(page, "sso-provider-down")

    page.get_by_role("link", name="Administrator sign-in").click()
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("break glass password 42")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Overview", level=1)).to_be_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="People", exact=True).click()
    expect(page.get_by_role("heading", name="People", level=1)).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Loading")).to_have_count(0)
    screenshot(page, "sso-break-glass-admin")
    assert page.problems.messages == []
