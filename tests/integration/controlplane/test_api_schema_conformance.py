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
