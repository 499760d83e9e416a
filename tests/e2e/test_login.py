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
