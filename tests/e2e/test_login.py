import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser("admin", "admin@example.com", "a long test password")


def test_it_logs_in_to_the_console_and_sees_the_overview(page: Page, live_server, admin_user) -> None:
    page.goto(f"{live_server.url}/")

    expect(page).to_have_url(f"{live_server.url}/login?next=%2F")
    screenshot(page, "login")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill("a long test password")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_text("admin").first).to_be_visible()
    expect(page.get_by_role("region", name="Background worker")).to_contain_text("Not reporting")
    screenshot(page, "overview")
    assert page.problems.messages == []


def test_it_shows_the_error_for_a_wrong_password(page: Page, live_server, admin_user) -> None:
    page.goto(f"{live_server.url}/login")

    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_text("The username or password is not correct.")).to_be_visible()
    assert page.url.startswith(f"{live_server.url}/login")


# The sidebar's sections (frontend/src/layout/navigation.ts); each page's heading is its label.
NAVIGATION = (
    "Overview",
    "Clusters",
    "Topics",
    "Consumer groups",
    "ACLs",
    "Quotas",
    "Schemas",
    "Service accounts",
    "Teams",
    "People",
    "Jobs",
    "Connectors",
    "Replication",
    "Alerts",
    "Audit log",
    "Settings",
)


def test_every_section_opens_from_the_navigation_and_is_captured(page: Page, live_server, admin_user) -> None:
    page.goto(f"{live_server.url}/login")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill("a long test password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Overview", level=1)).to_be_visible()
    navigation = page.get_by_role("navigation", name="Main")
    assert navigation.get_by_role("link").all_inner_texts() == list(NAVIGATION)

    for label in NAVIGATION:
        navigation.get_by_role("link", name=label, exact=True).click()
        expect(page.get_by_role("heading", name=label, exact=True, level=1)).to_be_visible()
        # Settled: no spinner left (lists show their rows or their empty state).
        expect(page.get_by_role("status").filter(has_text="Loading")).to_have_count(0)
        screenshot(page, f"page-{label.lower().replace(' ', '-')}")

    page.get_by_role("button", name="Dark mode").click()
    navigation.get_by_role("link", name="Overview", exact=True).click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    screenshot(page, "page-overview-dark")
    assert page.problems.messages == []
