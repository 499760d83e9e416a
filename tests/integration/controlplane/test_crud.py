"""One generic create/read/update/delete test per resource, through the API with an allowed persona,
checking the audit log records each change with its before and after."""

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from controlplane.audit.models import AuditEvent

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@dataclass(frozen=True)
class Resource:
    url: str
    persona: str
    audit_type: str
    create: Callable | None = None
    update: dict = field(default_factory=dict)
    existing: Callable | None = None  # for resources that exist without being created (policies)
    deletable: bool = True


RESOURCES = [
    Resource(
        "/api/v1/teams/",
        "org_admin",
        "team",
        create=lambda world: {
            "organization": world.organization.id,
            "name": "Billing",
            "description": "invoices",
        },
        update={"description": "invoices and refunds"},
    ),
    Resource(
        "/api/v1/org-memberships/",
        "org_admin",
        "org_membership",
        create=lambda world: {
            "organization": world.organization.id,
            "username": "newbie",
            "is_org_admin": False,
        },
        update={"is_org_admin": True},
    ),
    Resource(
        "/api/v1/memberships/",
        "team_a_admin",
        "membership",
        create=lambda world: {"team": world.team_a.id, "username": "newbie", "role": "viewer"},
        update={"role": "developer"},
    ),
    Resource(
        "/api/v1/prefixes/",
        "org_admin",
        "prefix",
        create=lambda world: {"team": world.team_a.id, "resource_type": "group", "prefix": "payments-"},
    ),
    Resource(
        "/api/v1/policies/",
        "org_admin",
        "policy",
        existing=lambda world: world.team_a.policy.id,
        update={"max_partitions_per_topic": 12, "allowed_topic_configs": ["cleanup.policy", "retention.ms"]},
        deletable=False,
    ),
    Resource(
        "/api/v1/service-accounts/",
        "team_a_admin",
        "service_account",
        create=lambda world: {"team": world.team_a.id, "name": "payments-worker", "description": "jobs"},
        update={"description": "background jobs"},
    ),
]


def _audit(resource_type: str, action_suffix: str, resource_id: object) -> AuditEvent:
    return AuditEvent.objects.get(
        resource_type=resource_type,
        action__endswith=f".{action_suffix}",
        resource_id=str(resource_id),
        result="success",
    )


@pytest.mark.parametrize("resource", RESOURCES, ids=[resource.url.split("/")[-2] for resource in RESOURCES])
def test_a_permitted_persona_can_create_read_update_and_delete(world, resource: Resource) -> None:
    get_user_model().objects.create_user("newbie", "newbie@example.com", "a long test password")
    client = getattr(world, resource.persona).client()

    if resource.create is not None:
        created = client.post(resource.url, resource.create(world), format="json")
        assert created.status_code == 201, created.json()
        object_id = created.json()["id"]
        assert _audit(resource.audit_type, "create", object_id).after
    else:
        object_id = resource.existing(world)

    listed = client.get(resource.url, {"limit": 500})
    assert listed.status_code == 200
    assert object_id in [row["id"] for row in listed.json()["results"]]
    detail = client.get(f"{resource.url}{object_id}/")
    assert detail.status_code == 200
    assert detail.json()["id"] == object_id

    if resource.update:
        updated = client.patch(f"{resource.url}{object_id}/", resource.update, format="json")
        assert updated.status_code == 200, updated.json()
        for name, value in resource.update.items():
            assert updated.json()[name] == value
        event = _audit(resource.audit_type, "update", object_id)
        assert event.before != event.after
        assert all(event.after[name] == value for name, value in resource.update.items())

    if resource.deletable:
        assert client.delete(f"{resource.url}{object_id}/").status_code == 204
        assert client.get(f"{resource.url}{object_id}/").status_code == 404
        assert _audit(resource.audit_type, "delete", object_id).before is not None


@pytest.mark.parametrize("resource", RESOURCES, ids=[resource.url.split("/")[-2] for resource in RESOURCES])
def test_anonymous_callers_get_the_error_shape_and_nothing_else(world, resource: Resource) -> None:
    response = APIClient().get(resource.url)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert set(response.json()["error"]) == {"code", "message", "details", "request_id"}


def test_the_console_session_works_like_a_key(world) -> None:
    client = world.org_admin.session()

    response = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": "Billing"}, format="json"
    )

    assert response.status_code == 201
    event = _audit("team", "create", response.json()["id"])
    assert (event.via, event.api_key_id, event.actor_name) == ("session", "", "olga")
