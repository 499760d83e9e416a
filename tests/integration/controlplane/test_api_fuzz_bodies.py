"""Every operation of the OpenAPI schema that takes a body, sent bodies no generator produces: JSON nested
5,000 levels deep and a body larger than the server accepts. Each must be refused in the error shape, never
answered with a 5xx. Path parameters name real objects of the world where the collection lists one, so the
body is really parsed (an unknown id would be refused before)."""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.conf import settings
from django.test import Client

from controlplane.clusters.choices import ClusterStatus, Provider
from controlplane.clusters.models import Cluster
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

schema = schemathesis.openapi.from_path(REPO_ROOT / "frontend" / "openapi.yaml")
OPERATIONS = [
    result.ok()
    for result in schema.get_all_operations()
    if result.ok().body and any("json" in body.media_type for body in result.ok().body)
]

DEEP = b'{"name": ' + b"[" * 5000 + b"]" * 5000 + b"}"


def oversized() -> bytes:
    filler = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1024)
    return json.dumps({"name": filler, "description": filler}).encode()


def _path(client: Client, template: str) -> str:
    """Fills `{…}` with the id of the first object the collection in front of it lists (1 if none)."""
    path = template
    while "{" in path:
        start = path.index("{")
        collection = path[:start]
        listed = client.get(collection)
        results = listed.json().get("results", []) if listed.status_code == 200 else []
        identifier = str(results[0].get("id", 1)) if results and isinstance(results[0], dict) else "1"
        path = collection + identifier + path[path.index("}", start) + 1 :]
    return path


@pytest.mark.parametrize("operation", OPERATIONS, ids=[f"{o.method.upper()} {o.path}" for o in OPERATIONS])
def test_deep_and_oversized_bodies_are_refused_in_the_error_shape(operation, world) -> None:
    client = Client(HTTP_AUTHORIZATION=f"Bearer {world.org_admin.token}")
    path = _path(client, operation.path)
    send = getattr(client, operation.method.lower())

    for body, expected in ((DEEP, {400}), (oversized(), {400, 413})):
        response = send(path, data=body, content_type="application/json")

        assert response.status_code < 500, (path, response.status_code, response.content[:300])
        if response.status_code in (400, 413) and response.content:
            error = response.json()["error"]
            assert error["request_id"] == response["X-Request-ID"]
            if response.status_code in expected and error["code"] in ("parse_error", "request_too_large"):
                assert ("levels deep" in error["message"]) == (body is DEEP)


def test_the_schema_registry_refuses_deep_nesting_in_its_own_error_shape(world) -> None:
    cluster = Cluster.objects.create(
        organization=world.organization,
        name="registry-only",
        provider=Provider.EXTERNAL,
        status=ClusterStatus.RUNNING,
        bootstrap_servers="127.0.0.1:1",
    )
    client = Client(HTTP_AUTHORIZATION=f"Bearer {world.org_admin.token}")
    base = f"/clusters/{cluster.id}/schema-registry"
    for path in ("/subjects/x/versions", "/compatibility/subjects/x/versions/latest", "/subjects/x"):
        response = client.post(base + path, data=DEEP, content_type="application/vnd.schemaregistry.v1+json")

        assert response.status_code == 400, (path, response.content[:300])
        assert response.json()["error_code"] in (400, 42201)
