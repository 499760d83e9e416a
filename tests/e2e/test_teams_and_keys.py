import json
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from controlplane.accounts.models import ApiKey
from controlplane.tenancy import services
from controlplane.tenancy.access import Actor
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test password"


@pytest.fixture
def payments_team(django_user_model):
    """Team Payments of Acme, whose organization admin (not a platform admin) is olga."""
    user = django_user_model.objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = services.create_organization(actor=Actor.system(), name="Acme")
    services.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    return services.create_team(actor=Actor.system(), organization=organization, name="Payments")


def session_user_for(base_url: str, secret: str) -> dict:
    request = urllib.request.Request(
        f"{base_url}/api/v1/auth/session/", headers={"Authorization": f"Bearer {secret}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


def test_it_creates_a_service_account_and_key_and_the_audit_log_shows_both(
    page: Page, live_server, payments_team
) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"{live_server.url}/service-accounts")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Service accounts", level=1)).to_be_visible()
    expect(page.get_by_text("No service accounts yet")).to_be_visible()
    page.get_by_role("button", name="New service account").click()
    dialog = page.get_by_role("dialog", name="New service account")
    expect(dialog.get_by_label("Team")).to_have_value(str(payments_team.id))
    dialog.get_by_label("Name").fill("billing-app")
    dialog.get_by_label("Description").fill("Charges cards")
    dialog.get_by_role("button", name="Create").click()

    expect(page.get_by_role("heading", name="billing-app", level=1)).to_be_visible()
    expect(page.get_by_text("User:billing-app")).to_be_visible()
    page.get_by_role("button", name="Create API key").click()
    form = page.get_by_role("dialog", name="New API key for billing-app")
    form.get_by_label("Name").fill("prod")
    form.get_by_label("Role").select_option("developer")
    form.get_by_label("Expires after").select_option("30 days")
    form.get_by_role("button", name="Create key").click()

    secret_dialog = page.get_by_role("dialog", name="API key prod created")
    expect(secret_dialog).to_contain_text("You won’t see it again")
    secret = secret_dialog.get_by_label("Secret").input_value()
    assert secret.startswith("shk_")
    lifetime = ApiKey.objects.get(name="prod").expires_at - timezone.now()
    assert timedelta(days=29) < lifetime <= timedelta(days=30)
    secret_dialog.get_by_role("button", name="Copy").click()
    expect(secret_dialog.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == secret
    screenshot(page, "api-key-secret-once")
    secret_dialog.get_by_role("button", name="I have saved it").click()

    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("table", name="API keys")).to_contain_text("prod")
    assert secret not in page.content()
    # The secret shown is the real key: the API accepts it as the service account.
    assert session_user_for(live_server.url, secret)["authenticated"] is True

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit log").click()
    table = page.get_by_role("table", name="Audit events")
    expect(table).to_contain_text("service_account.create")
    expect(table).to_contain_text("api_key.create")
    page.get_by_role("button", name="Details of service_account.create", exact=False).click()
    drawer = page.get_by_role("dialog", name="service_account.create · billing-app")
    expect(drawer.get_by_role("table", name="Changes")).to_contain_text("billing-app")
    screenshot(page, "audit-log-detail")
    page.keyboard.press("Escape")

    page.get_by_label("Action").fill("api_key.create")
    page.get_by_role("button", name="Apply filters").click()
    expect(page).to_have_url(f"{live_server.url}/audit?action=api_key.create")
    expect(table).not_to_contain_text("service_account.create")
    expect(table).to_contain_text("olga")
    assert page.problems.messages == []
