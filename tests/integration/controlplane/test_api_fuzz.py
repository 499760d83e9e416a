"""Schemathesis sends generated requests for every operation in the OpenAPI schema, in process through
Django's WSGI application, as an org admin. Whatever it sends, the API must not answer with a 5xx."""

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from console.wsgi import application
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# The committed schema is the generated one (tests/unit/console/test_openapi.py keeps them equal).
schema = schemathesis.openapi.from_path(REPO_ROOT / "frontend" / "openapi.yaml")


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
