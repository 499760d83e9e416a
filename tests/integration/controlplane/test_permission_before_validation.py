"""Permission is checked before the request body: a caller without the role gets 403 (or 404 for what it
cannot see) whatever it sends, never a 400 that tells it which fields the operation wants (README, Security
defaults). Every write operation of the OpenAPI schema is swept with a team viewer and with a developer
against an org-admin operation, with no body and with an invalid one. No refusal names another team."""

from __future__ import annotations

import pytest
import yaml
from django.test import Client

from controlplane.clusters.choices import ClusterStatus, Provider
from controlplane.clusters.models import Cluster
from controlplane.topics.models import Topic
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

WRITES = sorted(
    (method.upper(), path)
    for path, operations in yaml.safe_load((REPO_ROOT / "frontend" / "openapi.yaml").read_text())[
        "paths"
    ].items()
    for method in operations
    if method in ("post", "put", "patch", "delete")
)
# Writes a viewer may make: signing in and out, a password link, and its own API keys (keys carry at most the
# caller's role, checked on the body); an alert rule's preview and a health check, which only read.
OPEN_TO_VIEWERS = {
    ("POST", "/api/v1/auth/login/"),
    ("POST", "/api/v1/auth/logout/"),
    ("POST", "/api/v1/auth/password-links/inspect/"),
    ("POST", "/api/v1/auth/password-links/use/"),
    ("POST", "/api/v1/api-keys/"),
    ("POST", "/api/v1/api-keys/{key_id}/revoke/"),
    ("POST", "/api/v1/api-keys/{key_id}/rotate/"),
    ("POST", "/api/v1/alert-rules/preview/"),
    ("POST", "/api/v1/clusters/{id}/check-health/"),
    # A plan only reads; the services' own checks refuse, change by change, what the caller may not do.
    ("POST", "/api/v1/declarative/plan/"),
}


def _fill(client: Client, template: str) -> str:
    """The path with each `{…}` replaced by the id of the first object the collection in front of it shows
    the caller (1 if none: then 404 is the right answer)."""
    path = template
    while "{" in path:
        start = path.index("{")
        listed = client.get(path[:start])
        results = listed.json().get("results", []) if listed.status_code == 200 else []
        identifier = str(results[0].get("id", 1)) if results and isinstance(results[0], dict) else "1"
        path = path[:start] + identifier + path[path.index("}", start) + 1 :]
    return path


@pytest.fixture
def objects(world) -> None:
    cluster = Cluster.objects.create(
        organization=world.organization,
        name="shared",
        provider=Provider.EXTERNAL,
        status=ClusterStatus.RUNNING,
        bootstrap_servers="127.0.0.1:1",
    )
    Topic.objects.create(cluster=cluster, team=world.team_a, name="payments.orders", partitions=1)


@pytest.mark.parametrize(("method", "path"), [w for w in WRITES if w not in OPEN_TO_VIEWERS])
def test_a_viewer_is_refused_before_its_body_is_read(world, objects, method: str, path: str) -> None:
    viewer = Client(HTTP_AUTHORIZATION=f"Bearer {world.team_a_viewer.token}")
    send = getattr(viewer, method.lower())
    filled = _fill(viewer, path)

    for body in (None, b"{}", b'{"name": 0, "team": "x", "cluster": [], "confirm_name": 1}'):
        response = send(filled, data=body or b"", content_type="application/json")

        assert response.status_code in (403, 404), (
            filled,
            body,
            response.status_code,
            response.content[:300],
        )
        assert world.team_b.name.encode() not in response.content


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/api/v1/clusters/{id}/"),
        ("POST", "/api/v1/people/"),
        ("POST", "/api/v1/teams/"),
        ("POST", "/api/v1/prefixes/"),
        ("PATCH", "/api/v1/organizations/{id}/guardrails/"),
        ("POST", "/api/v1/clusters/{id}/reassignments/"),
    ],
)
def test_a_developer_is_refused_an_org_admin_operation_before_its_body_is_read(
    world, objects, method: str, path: str
) -> None:
    developer = Client(HTTP_AUTHORIZATION=f"Bearer {world.team_a_developer.token}")
    filled = _fill(developer, path)

    for body in (None, b"{}"):
        send = getattr(developer, method.lower())
        response = send(filled, data=body or b"", content_type="application/json")

        assert response.status_code == 403, (filled, body, response.status_code, response.content[:300])


def test_another_teams_principal_in_a_quota_is_refused_without_naming_the_team(world, objects) -> None:
    developer = Client(HTTP_AUTHORIZATION=f"Bearer {world.team_a_developer.token}")
    cluster = Cluster.objects.get(name="shared")

    def quota_for(user: str):
        body = {"cluster": cluster.id, "entity": {"user": user}, "values": {"producer_byte_rate": 1e6}}
        return developer.post("/api/v1/quotas/", body, content_type="application/json")

    others = quota_for(world.service_account_b.name)
    nobodys = quota_for("nobody-owns-this")

    assert others.status_code == nobodys.status_code == 403
    assert world.team_b.name not in others.json()["error"]["message"]
    assert others.json()["error"]["message"] == nobodys.json()["error"]["message"]
