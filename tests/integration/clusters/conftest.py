"""Clusters are provisioned by a real Celery worker into a throwaway data directory, with real broker
processes; the worker reads the same test database as the test (so tests use transactional_db)."""

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.clusters.models import Operation
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Organization
from tests.fixtures.servers import wait_until
from tests.integration.topics.world import kafka_world  # noqa: F401 - the fixture, shared by the apps' tests

SYSTEM = Actor.system()


@dataclass
class Admins:
    organization: Organization
    org_admin: APIClient
    developer: APIClient
    outsider: APIClient


def _client_for(username: str) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username, f"{username}@example.com", "a long test password")
    _key, token = accounts.create_api_key(actor=Actor(user=user), name="laptop", role=TeamRole.TEAM_ADMIN)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return user, client


@pytest.fixture
def people(transactional_db, settings) -> Admins:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    other = tenancy.create_organization(actor=SYSTEM, name="Globex")
    admin, admin_client = _client_for("olga")
    tenancy.add_org_member(actor=SYSTEM, organization=organization, user=admin, is_org_admin=True)
    developer, developer_client = _client_for("dave")
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    tenancy.add_member(actor=SYSTEM, team=team, user=developer, role=TeamRole.DEVELOPER)
    outsider, outsider_client = _client_for("otto")
    tenancy.add_org_member(actor=SYSTEM, organization=other, user=outsider, is_org_admin=True)
    return Admins(organization, admin_client, developer_client, outsider_client)


def _database_url_of_this_test() -> str:
    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("the worker process needs a database it can share with the test: set DATABASE_URL")
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    return (
        f"postgres://{settings_dict['USER']}{password}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )


def _broker_pids_under(root: Path) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
                if "broker" in cmdline and str(root) in cmdline:
                    pids.append(int(entry))
    return pids


@pytest.fixture
def cluster_data_dir(tmp_path: Path, settings) -> Iterator[Path]:
    """The data dir shared by this test and its worker; brokers left running under it are killed after."""
    settings.DATA_DIR = tmp_path
    yield tmp_path
    for pid in _broker_pids_under(tmp_path / "clusters"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cluster_worker(people, cluster_data_dir: Path, monkeypatch, settings) -> None:
    """A real Celery worker that provisions into `cluster_data_dir` on this test's database."""
    monkeypatch.setenv("DATABASE_URL", _database_url_of_this_test())
    # The worker must decrypt what this process encrypted (its data dir would otherwise get a new key).
    monkeypatch.setenv("SECRET_KEY", settings.SECRET_KEY)


@pytest.fixture
def worker(cluster_worker, celery_worker_process) -> Any:
    return celery_worker_process


@pytest.fixture
def wait_for_operation() -> Callable[..., Operation]:
    def wait(operation_id: int, timeout: float = 60) -> Operation:
        def finished() -> bool:
            return Operation.objects.get(pk=operation_id).state in ("succeeded", "failed")

        wait_until(finished, timeout, f"operation {operation_id} to finish", interval=0.05)
        return Operation.objects.get(pk=operation_id)

    return wait


def broker_pids_under(root: Path) -> list[int]:
    return _broker_pids_under(root)
