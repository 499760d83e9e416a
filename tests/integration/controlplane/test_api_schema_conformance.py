"""Answers match the published OpenAPI schema field by field (schemathesis' response_schema_conformance), for
shapes the generated requests rarely reach: a key that was never rotated (`rotated_from` is null)."""

from __future__ import annotations

import pytest
import schemathesis
from schemathesis.checks import response_schema_conformance

from console.wsgi import application
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

schema = schemathesis.openapi.from_path(REPO_ROOT / "frontend" / "openapi.yaml")


def test_a_key_never_rotated_matches_the_published_schema(world, in_process) -> None:
    headers = {"Authorization": f"Bearer {world.org_admin.token}"}
    for path, parameters in (
        ("/api/v1/api-keys/", {}),
        ("/api/v1/api-keys/{key_id}/", {"key_id": world.org_admin.api_key.key_id}),
    ):
        case = schema[path]["GET"].Case(path_parameters=parameters)
        response = case.call(app=application, headers=headers)

        assert response.status_code == 200
        case.validate_response(response, checks=[response_schema_conformance])


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/alerts/",
        "/api/v1/audit-events/",
        "/api/v1/people/",
        "/api/v1/api-keys/",
        "/api/v1/lag/groups/",
    ],
)
def test_an_id_filter_beyond_a_database_integer_is_a_400_not_an_overflow(world, path: str) -> None:
    client = world.org_admin.client()

    for name in ("team", "organization"):
        response = client.get(path, {name: "-34570309557197342648154718208"})

        assert response.status_code in (200, 400), (path, name, response.status_code)
