"""Schemathesis sends generated requests for every operation in the OpenAPI schema, in process through
Django's WSGI application, as an org admin. Whatever it sends, the API must not answer with a 5xx."""

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from console.wsgi import application
from controlplane.core.api.throttling import ApiKeyRateThrottle
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# The committed schema is the generated one (tests/unit/console/test_openapi.py keeps them equal).
schema = schemathesis.openapi.from_path(REPO_ROOT / "frontend" / "openapi.yaml")


@pytest.fixture
def in_process(monkeypatch) -> Iterator[None]:
    """Like Django's test client: keep the test's database connection (and its transaction) open across
    requests, and lift the per-key rate limit the generated requests would run into."""
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "100000/min"})
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_no_generated_request_gets_a_server_error(case, world, in_process) -> None:
    case.call_and_validate(
        app=application,
        headers={"Authorization": f"Bearer {world.org_admin.token}"},
        checks=[not_a_server_error],
    )
