"""`streamhub login` with single sign-on, end to end: the real CLI (a subprocess, as a person runs it) against
a live control plane and a real OpenID provider (oidc-provider with the device authorization grant). The test
plays the person in the browser: it opens the page the CLI prints, confirms the code, signs in at the
provider; then the CLI's commands act as that person, renew the expired access token with the refresh token,
and `logout` forgets and revokes. A refusal at the provider ends `login` with its own exit code."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from django.core.cache import cache

from controlplane.people.models import Identity
from controlplane.tenancy.models import Organization, Team
from tests.fixtures.oidc import CLI_CLIENT_ID, REDIRECT_PATH, follow_provider, sso_settings
from tests.fixtures.servers import REPO_ROOT

pytestmark = pytest.mark.integration

PASSWORD = "alice's provider password"
RULES = [
    {"value": "kafka-payments", "organization": "Acme", "team": "payments", "role": "developer"},
    {"value": "kafka-billing", "organization": "Acme", "team": "billing", "role": "viewer"},
]
AUDIENCE = "urn:streamhub:api"
# Access tokens live 31 s and the CLI renews 30 s before expiry: one second after login, the next command
# renews (the provider's TTL is its only clock, so nothing here is faked).
ACCESS_TOKEN_TTL = 31


@pytest.fixture
def stack(live_server, transactional_db, oidc_provider_factory, settings, tmp_path: Path):
    cache.clear()  # login throttle counters of earlier tests
    organization = Organization.objects.create(name="Acme", slug="acme")
    for name in ("payments", "billing", "search"):
        Team.objects.create(organization=organization, name=name, slug=name)
    provider = oidc_provider_factory(
        [live_server.url], access_token_ttl=ACCESS_TOKEN_TTL, device_poll_interval=1
    )
    provider.set_user("alice", password=PASSWORD, groups=["kafka-payments", "kafka-billing"])
    sso_settings(
        settings,
        provider.issuer,
        RULES,
        OIDC_API_AUDIENCE=AUDIENCE,
        OIDC_CLI_CLIENT_ID=CLI_CLIENT_ID,
        OIDC_CLI_SCOPES=("openid", "offline_access", "api"),
    )
    # alice has signed in to the console once (the API accepts tokens of people it knows).
    console = requests.Session()
    start = console.get(f"{live_server.url}/api/v1/auth/oidc/login/?next=/teams", allow_redirects=False)
    back = follow_provider(
        start.headers["Location"],
        f"{live_server.url}{REDIRECT_PATH}",
        form={"login": "alice", "password": PASSWORD},
    )
    assert console.get(back, allow_redirects=False).status_code == 302
    assert Identity.objects.filter(subject="alice").exists()
    return live_server.url, provider, tmp_path / "streamhub" / "config.json"


def cli_env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STREAMHUB_URL", "STREAMHUB_API_KEY")}
    return {**env, "STREAMHUB_CONFIG": str(config), "PYTHONPATH": str(REPO_ROOT)}


def streamhub(config: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli.streamhub", *arguments],
        env=cli_env(config),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def start_login(config: Path, url: str) -> tuple[subprocess.Popen, str, list[str]]:
    """Runs `streamhub login` and reads what it tells the person: the page to open (with the code)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.streamhub", "login", "--url", url],
        env=cli_env(config),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    told: list[str] = []
    while not any(line.startswith("Waiting for your approval") for line in told):
        line = process.stderr.readline()
        if not line:
            process.wait(timeout=10)
            raise AssertionError(f"login ended early ({process.returncode}): {''.join(told)}")
        told.append(line)
    page = re.search(r"open (\S+)", told[0]).group(1)
    return process, page, told


def hidden_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


def confirm_code(browser: requests.Session, page: str, *, abort: bool = False) -> requests.Response:
    """Opens the page the CLI printed (it carries the code) and answers its confirmation."""
    opened = browser.get(page, timeout=10)  # an auto-submitting form that posts the code
    action = urljoin(page, re.search(r'<form[^>]*action="([^"]+)"', opened.text).group(1))
    confirmation = browser.post(action, data=hidden_fields(opened.text), timeout=10)
    assert "Confirm device" in confirmation.text, confirmation.text[:500]
    answer = hidden_fields(confirmation.text) | ({"abort": "yes"} if abort else {})
    return browser.post(action, data=answer, allow_redirects=False, timeout=10)


def approve(page: str) -> None:
    """The person approves in a browser: confirm the code, sign in at the provider, consent (implied)."""
    browser = requests.Session()
    answer = confirm_code(browser, page)
    url = urljoin(page, answer.headers["Location"])
    for _ in range(10):
        response = browser.get(url, allow_redirects=False, timeout=10)
        if response.is_redirect:
            url = urljoin(url, response.headers["Location"])
        elif 'name="login"' in response.text:
            form = re.search(r'<form[^>]*action="([^"]+)"', response.text).group(1)
            signed_in = browser.post(
                urljoin(url, form),
                data={"login": "alice", "password": PASSWORD},
                allow_redirects=False,
                timeout=10,
            )
            url = urljoin(url, signed_in.headers["Location"])
        else:
            assert "Your device is signed in" in response.text, response.text[:500]
            return
    raise AssertionError("the provider redirected too often")


# Transactional like the live-server tests of this module: a plain django_db test among them left the live
# server's request threads closing an SQLite connection they do not own (a thread exception at teardown).
@pytest.mark.django_db(transaction=True)
def test_the_cli_is_offered_single_sign_on_only_with_sso_its_client_and_the_api_audience(
    client, settings
) -> None:
    def offered() -> dict | None:
        answer = client.get("/api/v1/auth/cli/")
        assert answer.status_code == 200
        return answer.json()["oidc"]

    assert offered() is None
    sso_settings(settings, "https://idp.example.com", RULES, OIDC_API_AUDIENCE=AUDIENCE)
    assert offered() is None  # no public client registered for the CLI
    settings.OIDC_CLI_CLIENT_ID = CLI_CLIENT_ID
    assert offered() == {
        "issuer": "https://idp.example.com",
        "client_id": CLI_CLIENT_ID,
        "scopes": ["openid", "offline_access"],
        "audience": AUDIENCE,
    }
    settings.OIDC_API_AUDIENCE = ""
    assert offered() is None  # the API would refuse the tokens


def test_login_acts_as_the_person_renews_the_access_token_and_logout_forgets_it(stack) -> None:
    url, _provider, config = stack
    process, page, told = start_login(config, url)
    assert any("the code" in line for line in told)
    approve(page)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert f"Logged in to {url} as alice (single sign-on); 2 team(s) visible." in out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    stored = json.loads(config.read_text())
    tokens = stored["oidc"]["tokens"]
    assert tokens["access_token"].count(".") == 2
    assert tokens["refresh_token"]
    for secret in (tokens["access_token"], tokens["refresh_token"]):
        assert secret not in out + err + "".join(told)

    teams = streamhub(config, "get", "teams", "-o", "json")
    assert teams.returncode == 0, teams.stderr
    assert sorted(team["name"] for team in json.loads(teams.stdout)) == ["billing", "payments"]
    assert json.loads(config.read_text())["oidc"]["tokens"] == tokens  # still valid: not renewed

    # Past the renewal point the next command renews with the refresh token, and keeps the new tokens.
    while time.time() < tokens["expires_at"] - 30:
        time.sleep(0.2)
    renewed = streamhub(config, "get", "teams", "-o", "json")
    assert renewed.returncode == 0, renewed.stderr
    assert sorted(team["name"] for team in json.loads(renewed.stdout)) == ["billing", "payments"]
    after = json.loads(config.read_text())["oidc"]["tokens"]
    assert after["access_token"] != tokens["access_token"]
    assert stat.S_IMODE(config.stat().st_mode) == 0o600

    # logout forgets the login and revokes the refresh token at the provider.
    kept = config.read_text()
    logout = streamhub(config, "logout")
    assert logout.returncode == 0, logout.stderr
    assert f"Logged out of {url}" in logout.stdout
    assert "The identity provider revoked its refresh token." in logout.stdout
    assert not config.exists()
    gone = streamhub(config, "get", "teams")
    assert gone.returncode == 1
    assert "Not logged in" in gone.stderr

    # A copy of those credentials works until its access token expires, then cannot be renewed (the refresh
    # token is revoked for real): the CLI asks to log in again.
    config.write_text(kept)
    while time.time() < after["expires_at"] - 30:
        time.sleep(0.2)
    expired = streamhub(config, "get", "teams")
    assert expired.returncode == 1, expired.stderr
    assert "could not be renewed" in expired.stderr
    assert "Run `streamhub login` again." in expired.stderr


def test_a_refusal_at_the_provider_ends_login_with_exit_code_4_and_keeps_nothing(stack) -> None:
    url, _provider, config = stack
    process, page, _told = start_login(config, url)
    confirm_code(requests.Session(), page, abort=True)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 4, (out, err)
    assert "error: The sign-in was refused at the identity provider." in err
    assert "hint: Run `streamhub login` again and approve the request" in err
    assert not config.exists()
