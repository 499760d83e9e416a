"""Browser journeys: Playwright drives Debian's Chromium against a live Django server."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Request, sync_playwright

from tests.fixtures.servers import REPO_ROOT

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = REPO_ROOT / "test-artifacts" / "screenshots"
# Playwright's sync API keeps an event loop in this thread; Django's ORM calls from fixtures are still sync.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM} (scripts/bootstrap.sh --test installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        yield browser
        browser.close()


class BrowserProblems:
    """Collects console errors and failed requests so journeys can assert there were none."""

    def __init__(self, page: Page) -> None:
        self.messages: list[str] = []
        page.on("console", lambda msg: msg.type == "error" and self.messages.append(f"console: {msg.text}"))
        page.on("pageerror", lambda error: self.messages.append(f"page error: {error}"))
        page.on("requestfailed", self._request_failed)
        page.on(
            "response",
            lambda response: (
                response.status >= 500 and self.messages.append(f"{response.status}: {response.url}")
            ),
        )

    def _request_failed(self, request: Request) -> None:
        # A query the page cancelled itself (a newer poll replaced it, the view went away) is aborted
        # by the browser; a refused, reset or empty answer from the server is a problem.
        if request.failure != "net::ERR_ABORTED":
            self.messages.append(f"request failed: {request.url} ({request.failure})")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(timezone_id="Europe/Berlin", viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.problems = BrowserProblems(page)
    yield page
    context.close()


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
