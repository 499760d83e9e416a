"""SSRF: channel URLs that point at this machine or its networks are refused when the channel is created and
again when a notice is sent, and the address is never contacted. Real HTTP servers listen on the loopback
addresses in question and count what reaches them."""

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from controlplane.alerts import services
from controlplane.alerts.choices import NotificationStatus
from controlplane.alerts.delivery import attempt_delivery
from controlplane.alerts.models import NotificationChannel
from controlplane.tenancy.access import Actor
from tests.integration.alerts.conftest import World

pytestmark = pytest.mark.integration


@dataclass
class Listener:
    """A real HTTP server that answers every POST with `status` (and `location`) and records the requests."""

    host: str
    port: int
    status: int = 204
    location: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Host header)

    def url(self, path: str = "/hook", *, host: str | None = None) -> str:
        name = host or (f"[{self.host}]" if ":" in self.host else self.host)
        return f"http://{name}:{self.port}{path}"


@pytest.fixture
def listen() -> Iterator[Callable[..., Listener]]:
    servers: list[ThreadingHTTPServer] = []

    def start(host: str, status: int = 204, location: str = "") -> Listener:
        listener = Listener(host, 0, status, location)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                listener.requests.append((self.path, self.headers.get("Host", "")))
                self.send_response(listener.status)
                if listener.location:
                    self.send_header("Location", listener.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.do_POST()

            def log_message(self, *args: object) -> None:
                pass

        server_class = type(
            "Server",
            (ThreadingHTTPServer,),
            {"address_family": socket.AF_INET6 if ":" in host else socket.AF_INET},
        )
        server = server_class((host, 0), Handler)
        listener.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return listener

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _ipv6_loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


def _create(world: World, url: str, kind: str = "webhook"):
    return world.developer.post(
        "/api/v1/alert-channels/",
        {"team": world.team.pk, "name": "hook", "kind": kind, "url": url},
        format="json",
    )


def _assert_refused(response, fragment: str = "OUTBOUND_ALLOWED_NETWORKS") -> None:
    assert response.status_code == 400, response.json()
    [message] = response.json()["error"]["details"]["url"]
    assert fragment in message, message


@pytest.mark.parametrize("kind", ["webhook", "slack"])
@pytest.mark.parametrize("host", ["127.0.0.1", "127.45.6.7", "::1", "localhost"])
def test_loopback_urls_are_refused_at_creation_and_never_contacted(
    world: World, listen, settings, host: str, kind: str
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    if host == "::1" and not _ipv6_loopback_works():
        pytest.skip("no IPv6 loopback on this machine")
    listener = listen("127.0.0.1" if host == "localhost" else host)
    url = listener.url(host=host if host == "localhost" else None)

    _assert_refused(_create(world, url, kind))

    assert not NotificationChannel.objects.exists()
    assert listener.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/hook",
        "http://10.200.30.40:8080/hook",
        "http://[::ffff:127.0.0.1]:80/hook",
        "http://[fd00::1]/hook",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
    ],
)
def test_metadata_private_and_multicast_urls_are_refused(world: World, settings, url: str) -> None:
    # No server can be run on these addresses here; the refusal comes from the address alone, before any
    # connection (no connect is attempted: a private address outside this machine is never a target).
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    _assert_refused(_create(world, url))
    assert not NotificationChannel.objects.exists()


def test_the_address_is_checked_again_at_send_time(world: World, listen, settings) -> None:
    """A channel created while the operator allowed the address is not posted to once that is withdrawn."""
    listener = listen("127.0.0.1")
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    response = _create(world, listener.url())
    assert response.status_code == 201, response.json()
    channel = NotificationChannel.objects.get(pk=response.json()["id"])

    settings.OUTBOUND_ALLOWED_NETWORKS = []
    notification = services.send_test_notification(actor=Actor.system(), channel=channel)
    assert attempt_delivery(notification.pk) is None  # refused for good, not retried

    notification.refresh_from_db()
    assert notification.status == NotificationStatus.FAILED
    assert "Refused to send" in notification.last_error
    assert listener.requests == []


def test_a_redirect_to_loopback_is_not_followed(world: World, listen, settings) -> None:
    target = listen("127.0.0.1")
    # The receiver (allowlisted as if it were a public host) answers with a redirect to the loopback target.
    receiver = listen("127.0.0.2", status=302, location=target.url("/internal"))
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    response = _create(world, receiver.url())
    assert response.status_code == 201, response.json()

    channel = NotificationChannel.objects.get(pk=response.json()["id"])
    notification = services.send_test_notification(actor=Actor.system(), channel=channel)
    assert attempt_delivery(notification.pk) is None

    notification.refresh_from_db()
    assert notification.status == NotificationStatus.FAILED
    assert "redirects are not followed" in notification.last_error
    assert [path for path, _ in receiver.requests] == ["/hook"]
    assert target.requests == []


def test_the_connection_goes_to_the_address_that_was_checked(
    world: World, listen, settings, monkeypatch
) -> None:
    """DNS rebinding: the name resolves once per send, to an allowed address, and the connection is made to
    that address, whatever the name would resolve to a moment later. The resolver is replaced (no DNS server
    can be run for a made-up name here) so that every lookup after the first answers loopback."""
    allowed = listen("127.0.0.2")
    loopback = listen("127.0.0.1")
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding_getaddrinfo(host, port, *args, **kwargs):
        if host != "hooks.rebind.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        lookups.append(host)
        address = "127.0.0.2" if len(lookups) % 2 == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)
    response = _create(world, allowed.url(host="hooks.rebind.test"))
    assert response.status_code == 201, response.json()
    lookups.clear()

    channel = NotificationChannel.objects.get(pk=response.json()["id"])
    notification = services.send_test_notification(actor=Actor.system(), channel=channel)
    attempt_delivery(notification.pk)

    notification.refresh_from_db()
    assert notification.status == NotificationStatus.SENT, notification.last_error
    assert lookups == ["hooks.rebind.test"]  # resolved once, and that answer was used
    assert allowed.requests == [("/hook", f"hooks.rebind.test:{allowed.port}")]
    assert loopback.requests == []

    # The next send resolves to loopback: refused, and loopback still got nothing.
    second = services.send_test_notification(actor=Actor.system(), channel=channel)
    attempt_delivery(second.pk)
    second.refresh_from_db()
    assert second.status == NotificationStatus.FAILED
    assert loopback.requests == []


def _resolve_as(monkeypatch, name: str, address: str) -> None:
    """An internal single-label name (as a container network or /etc/hosts gives) resolving to `address`."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == name:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_an_allowlisted_single_label_host_is_accepted_and_posted_to(
    world: World, listen, settings, monkeypatch
) -> None:
    receiver = listen("127.0.0.2")
    _resolve_as(monkeypatch, "alertmanager", "127.0.0.2")
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.2/32"]

    response = _create(world, receiver.url("/api/v2/alerts", host="alertmanager"))

    assert response.status_code == 201, response.json()
    channel = NotificationChannel.objects.get(pk=response.json()["id"])
    notification = services.send_test_notification(actor=Actor.system(), channel=channel)
    attempt_delivery(notification.pk)
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.SENT, notification.last_error
    assert receiver.requests == [("/api/v2/alerts", f"alertmanager:{receiver.port}")]


def test_a_single_label_host_resolving_to_an_internal_address_is_refused_unless_allowlisted(
    world: World, listen, settings, monkeypatch
) -> None:
    receiver = listen("127.0.0.2")
    _resolve_as(monkeypatch, "alertmanager", "127.0.0.2")
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    _assert_refused(_create(world, receiver.url(host="alertmanager")))

    assert not NotificationChannel.objects.exists()
    assert receiver.requests == []
