"""The CLI's device authorization grant (RFC 8628) against a tiny local HTTP server that answers the token
endpoint with a scripted sequence: pending, slow_down (+5 s to the interval, for good), access_denied,
expired_token, and a code whose lifetime passes without an answer. The waits are recorded instead of slept, so
the intervals are checked exactly without spending them; everything else (HTTP, parsing, the CLI's exit codes
and messages) runs for real."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner

from cli.streamhub import oidc
from cli.streamhub.main import EXIT_LOGIN_DENIED, EXIT_LOGIN_EXPIRED, cli


class Script:
    """What the fake provider and server answer: token endpoint answers in order, the last one repeated."""

    def __init__(self) -> None:
        self.token_answers: list[tuple[int, dict]] = []
        self.token_requests: list[dict[str, list[str]]] = []
        self.device_answer: dict = {}
        self.cli_offer: dict | None = None


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path == "/.well-known/openid-configuration":
                self.answer(
                    200,
                    {
                        "issuer": base,
                        "device_authorization_endpoint": f"{base}/device/auth",
                        "token_endpoint": f"{base}/token",
                    },
                )
            elif self.path == "/api/v1/auth/cli/":
                offered = script.cli_offer and {**script.cli_offer, "issuer": base}
                self.answer(200, {"oidc": offered})
            else:
                self.answer(404, {})

        def do_POST(self) -> None:
            form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
            if self.path == "/device/auth":
                self.answer(200, script.device_answer)
            elif self.path == "/token":
                script.token_requests.append(form)
                index = min(len(script.token_requests), len(script.token_answers)) - 1
                self.answer(*script.token_answers[index])

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    httpd.shutdown()
    httpd.server_close()


OFFER = oidc.Offer("", "streamhub-cli", ("openid", "offline_access"), "urn:streamhub:api")
PENDING = (400, {"error": "authorization_pending"})
SLOW_DOWN = (400, {"error": "slow_down"})
TOKENS = (200, {"access_token": "a.b.c", "refresh_token": "r", "expires_in": 600, "token_type": "Bearer"})


def authorization(interval: int = 2, expires_in: int = 600) -> oidc.DeviceAuthorization:
    return oidc.DeviceAuthorization("the-device-code", "ABCD-EFGH", "v", None, expires_in, interval)


def poll(base: str, grant: oidc.DeviceAuthorization) -> tuple[oidc.Tokens, list[float]]:
    waits: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    endpoints = oidc.discover(base)
    tokens = oidc.poll(OFFER, endpoints, grant, sleep=sleep, clock=lambda: now[0], wall_clock=lambda: 1000.0)
    return tokens, waits


def test_it_waits_the_interval_while_pending_and_five_more_seconds_after_each_slow_down(server) -> None:
    base, script = server
    script.token_answers = [PENDING, SLOW_DOWN, PENDING, SLOW_DOWN, PENDING, TOKENS]
    tokens, waits = poll(base, authorization(interval=2))
    assert waits == [2, 2, 7, 7, 12, 12]
    assert tokens == oidc.Tokens("a.b.c", "r", 1600.0)
    assert {request["grant_type"][0] for request in script.token_requests} == {oidc.DEVICE_CODE_GRANT}
    assert {request["device_code"][0] for request in script.token_requests} == {"the-device-code"}
    assert {request["client_id"][0] for request in script.token_requests} == {"streamhub-cli"}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ((400, {"error": "access_denied"}), "access_denied"),
        ((400, {"error": "expired_token"}), "expired_token"),
        ((400, {"error": "invalid_client", "error_description": "no such client"}), "invalid_client"),
        ((500, {}), "http_500"),
    ],
)
def test_it_stops_on_a_final_answer_with_its_reason(server, answer, reason: str) -> None:
    base, script = server
    script.token_answers = [PENDING, answer]
    with pytest.raises(oidc.OidcLoginError) as raised:
        poll(base, authorization())
    assert raised.value.reason == reason
    assert len(script.token_requests) == 2


def test_a_code_whose_lifetime_passes_unanswered_expires_without_asking_again(server) -> None:
    base, script = server
    script.token_answers = [PENDING]
    with pytest.raises(oidc.OidcLoginError) as raised:
        poll(base, authorization(interval=5, expires_in=12))
    assert raised.value.reason == "expired_token"
    assert len(script.token_requests) == 2  # at 5 s and 10 s; at 15 s the code is dead already


def test_without_an_interval_it_waits_the_rfc_s_five_seconds(server) -> None:
    base, script = server
    script.device_answer = {"device_code": "d", "user_code": "U", "verification_uri": "v", "expires_in": 60}
    grant = oidc.start(OFFER, oidc.discover(base))
    assert grant.interval == oidc.DEFAULT_INTERVAL_SECONDS == 5


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STREAMHUB_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.delenv("STREAMHUB_URL", raising=False)
    monkeypatch.delenv("STREAMHUB_API_KEY", raising=False)
    return tmp_path / "config.json"


@pytest.mark.parametrize(
    ("answer", "code", "message"),
    [
        ((400, {"error": "access_denied"}), EXIT_LOGIN_DENIED, "refused at the identity provider"),
        ((400, {"error": "expired_token"}), EXIT_LOGIN_EXPIRED, "The code expired before it was approved"),
    ],
)
def test_login_exits_with_the_documented_code_and_keeps_nothing(
    server, cli_home: Path, answer, code: int, message: str
) -> None:
    base, script = server
    script.cli_offer = {"client_id": "streamhub-cli", "scopes": ["openid"], "audience": "urn:streamhub:api"}
    script.device_answer = {
        "device_code": "d",
        "user_code": "WDJB-MJHT",
        "verification_uri": f"{base}/device",
        "verification_uri_complete": f"{base}/device?user_code=WDJB-MJHT",
        "expires_in": 60,
        "interval": 1,
    }
    script.token_answers = [answer]
    result = CliRunner().invoke(cli, ["login", "--url", base])
    assert result.exit_code == code, result.output
    assert f"To sign in, open {base}/device?user_code=WDJB-MJHT" in result.output
    assert "and check that it shows the code WDJB-MJHT." in result.output
    assert message in result.output
    assert not cli_home.exists()


def test_login_oidc_on_a_server_that_offers_none_says_so(server, cli_home: Path) -> None:
    base, _script = server
    result = CliRunner().invoke(cli, ["login", "--url", base, "--oidc"])
    assert result.exit_code == 1
    assert f"{base} offers no single sign-on for the CLI." in result.output
    assert "OIDC_CLI_CLIENT_ID" in result.output
    assert not cli_home.exists()
