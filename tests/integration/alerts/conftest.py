"""Alerting against real parts: a team with people holding API keys, a cluster row (evaluation never talks
to the cluster: sampling runs are built by the tests), a real HTTP webhook receiver on 127.0.0.1, and a real
Celery worker delivering from the test's PostgreSQL database."""

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from controlplane.alerts.channels import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_is_valid
from controlplane.clusters.choices import Provider
from controlplane.clusters.models import Cluster
from controlplane.lag.observations import GroupObservation, PartitionObservation, SamplingRun
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team
from tests.integration.clusters.conftest import _client_for, _database_url_of_this_test

SYSTEM = Actor.system()


@dataclass
class World:
    team: Team
    other_team: Team
    cluster: Cluster
    admin: APIClient  # org admin
    developer: APIClient  # developer in `team`
    viewer: APIClient  # viewer in `team`
    outsider: APIClient  # developer in `other_team`

    def run(self, at: datetime, lags: dict[str, float | None], *, team: Team | None = None) -> SamplingRun:
        """A sampling run in which each named group of the team lags by the given seconds on orders-0."""
        owner = team or self.team
        groups = tuple(
            _group(self.cluster.pk, owner.pk, index, name, seconds)
            for index, (name, seconds) in enumerate(lags.items())
        )
        return SamplingRun(cluster_id=self.cluster.pk, observed_at=at, groups=groups)


def _group(cluster_id: int, team_id: int, index: int, name: str, seconds: float | None) -> GroupObservation:
    lag = 0 if not seconds else int(seconds * 10)
    status = "LAGGING" if seconds and seconds > 10 else "OK"
    partition = PartitionObservation(
        topic="orders",
        partition=0,
        committed_offset=1000,
        log_start_offset=0,
        log_end_offset=1000 + lag,
        lag_messages=lag,
        lag_seconds=seconds,
        lag_seconds_is_lower_bound=False,
        consume_rate=5.0,
        produce_rate=10.0,
        time_to_catch_up_seconds=None if lag else 0.0,
        status=status,
        reason=f"lag {seconds} s",
    )
    return GroupObservation(
        cluster_id=cluster_id,
        group_id=index + 1,
        group=name,
        team_id=team_id,
        status=status,
        reason=partition.reason,
        member_count=1,
        lag_messages=lag,
        lag_seconds=seconds,
        time_to_catch_up_seconds=partition.time_to_catch_up_seconds,
        partitions=(partition,),
    )


def _world(settings) -> World:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    other_team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Search")
    clients = {}
    for username, member_of, role in [
        ("olga", None, None),
        ("dave", team, TeamRole.DEVELOPER),
        ("vera", team, TeamRole.VIEWER),
        ("otto", other_team, TeamRole.DEVELOPER),
    ]:
        user, clients[username] = _client_for(username)
        if member_of is None:
            tenancy.add_org_member(actor=SYSTEM, organization=organization, user=user, is_org_admin=True)
        else:
            tenancy.add_member(actor=SYSTEM, team=member_of, user=user, role=role)
    cluster = Cluster.objects.create(organization=organization, name="prod", provider=Provider.EXTERNAL)
    return World(
        team, other_team, cluster, clients["olga"], clients["dave"], clients["vera"], clients["otto"]
    )


@pytest.fixture
def world(db, settings) -> World:
    return _world(settings)


@pytest.fixture
def shared_world(transactional_db, settings) -> World:
    """The same, committed, so a worker process sees it."""
    return _world(settings)


@dataclass
class Received:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    url: str
    received: list[Received] = field(default_factory=list)
    failures_left: int = 0  # answer this many requests with 503 first
    status_for_path: dict[str, int] = field(default_factory=dict)  # fixed answers for some paths
    lock: threading.Lock = field(default_factory=threading.Lock)

    def signed_by(self, secret: str) -> list[dict[str, Any]]:
        """Bodies of the requests received so far; every one must carry a valid signature of `secret`."""
        with self.lock:
            received = list(self.received)
        for request in received:
            header = request.headers.get(SIGNATURE_HEADER.lower(), "")
            timestamp = request.headers.get(TIMESTAMP_HEADER.lower(), "")
            assert signature_is_valid(secret, timestamp, request.body, header), request.headers
        return [request.json for request in received]


# Outbound posts refuse loopback unless allowlisted: the test receivers listen on 127.0.0.1.
RECEIVER_NETWORK = "127.0.0.1/32"


@pytest.fixture
def webhook_receiver(settings, monkeypatch) -> Iterator[WebhookReceiver]:
    """A real HTTP receiver on 127.0.0.1, allowlisted for this test (in this process and in workers that
    start after this fixture; `worker_environment` allowlists it for the others)."""
    settings.OUTBOUND_ALLOWED_NETWORKS = [RECEIVER_NETWORK]
    monkeypatch.setenv("OUTBOUND_ALLOWED_NETWORKS", RECEIVER_NETWORK)
    receiver: WebhookReceiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with receiver.lock:
                failing = receiver.failures_left > 0
                receiver.failures_left -= int(failing)
                receiver.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
            self.send_response(503 if failing else receiver.status_for_path.get(self.path, 204))
            self.end_headers()

        def log_message(self, *args: object) -> None:  # keep the test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = WebhookReceiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks/lag")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def worker_environment(shared_world: World, monkeypatch, settings) -> None:
    """Set before the worker starts: this test's database, this process's secret key (to decrypt channel
    secrets), and quick retries."""
    monkeypatch.setenv("DATABASE_URL", _database_url_of_this_test())
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)
    monkeypatch.setenv("ALERT_DELIVERY_BACKOFF_SECONDS", "0.2")
    monkeypatch.setenv("ALERT_DELIVERY_TIMEOUT_SECONDS", "5")
    monkeypatch.setenv("OUTBOUND_ALLOWED_NETWORKS", RECEIVER_NETWORK)


@pytest.fixture
def delivery_worker(worker_environment, celery_worker_process, shared_world: World) -> World:
    """A real Celery worker delivering this test's notifications; the world it delivers for."""
    return shared_world


def created(response: Any, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.json()
    return response.json()
