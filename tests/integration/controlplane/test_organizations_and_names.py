"""Team and organization names name something a person can read; a platform administrator creates an
organization through the API (no Django shell) and administers it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from controlplane.audit.models import AuditEvent
from controlplane.tenancy.models import Organization, OrgMembership

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

MEANINGLESS = ["0", "0" * 100, "-", "a", "7eleven", "Pay  ments", "<b>", "Payments!"]


@pytest.mark.parametrize("name", MEANINGLESS)
def test_a_team_name_without_meaning_is_refused(world, name: str) -> None:
    client = world.org_admin.client()

    created = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": name}, format="json"
    )
    renamed = client.patch(f"/api/v1/teams/{world.team_a.id}/", {"name": name}, format="json")

    for response in (created, renamed):
        assert response.status_code == 400, (name, response.json())
        assert "starts with a letter" in str(response.json()["error"]), response.json()


@pytest.mark.parametrize("name", ["Data Platform", "Équipe données", "R&D (EU)", "team-7_ops.v2", "Ωmega"])
def test_a_readable_team_name_is_accepted(world, name: str) -> None:
    response = world.org_admin.client().post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": name}, format="json"
    )

    assert response.status_code == 201, response.json()


@pytest.fixture
def platform_admin() -> APIClient:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "a long test password")
    client = APIClient()
    client.force_login(user)
    return client


def test_a_platform_admin_creates_an_organization_and_administers_it(platform_admin) -> None:
    response = platform_admin.post("/api/v1/organizations/", {"name": "Initech"}, format="json")

    assert response.status_code == 201, response.json()
    organization = Organization.objects.get(pk=response.json()["id"])
    assert (organization.name, organization.slug) == ("Initech", "initech")
    assert OrgMembership.objects.get(organization=organization).is_org_admin
    assert AuditEvent.objects.filter(action="organization.create", result="success").exists()
    team = platform_admin.post(
        "/api/v1/teams/", {"organization": organization.id, "name": "Billing"}, format="json"
    )
    assert team.status_code == 201, team.json()
    assert platform_admin.post("/api/v1/organizations/", {"name": "0"}, format="json").status_code == 400
    assert (
        platform_admin.post("/api/v1/organizations/", {"name": "Initech"}, format="json").status_code == 409
    )


def test_only_a_platform_admin_creates_an_organization_and_permission_comes_first(world) -> None:
    for persona in (world.org_admin, world.team_a_developer, world.outsider):
        for body in ({"name": "Umbrella"}, {}):
            response = persona.client().post("/api/v1/organizations/", body, format="json")

            assert response.status_code == 403, (persona.user.username, body, response.json())
    assert not Organization.objects.filter(name="Umbrella").exists()
