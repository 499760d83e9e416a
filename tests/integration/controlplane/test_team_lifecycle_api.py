"""Teams from nothing through the API the console uses: an org admin creates a team, gives it a prefix,
renames it and deletes it; a team that still owns topics is refused with what it owns, not a 500."""

import pytest

from controlplane.audit.models import AuditEvent
from controlplane.clusters.choices import Provider
from controlplane.clusters.models import Cluster
from controlplane.tenancy.models import Team
from controlplane.topics.models import Topic

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_an_org_admin_creates_renames_and_deletes_a_team(world) -> None:
    client = world.org_admin.session()

    created = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": "Risk"}, format="json"
    )
    assert created.status_code == 201, created.json()
    team = created.json()["id"]
    prefix = client.post(
        "/api/v1/prefixes/", {"team": team, "resource_type": "topic", "prefix": "risk."}, format="json"
    )
    assert prefix.status_code == 201
    renamed = client.patch(f"/api/v1/teams/{team}/", {"name": "Risk & Fraud"}, format="json")
    assert renamed.json()["name"] == "Risk & Fraud"
    assert client.delete(f"/api/v1/teams/{team}/").status_code == 204

    assert not Team.objects.filter(pk=team).exists()
    actions = AuditEvent.objects.filter(team_id=team).order_by("id").values_list("action", flat=True)
    assert list(actions) == ["team.create", "prefix.create", "team.update", "team.delete"]


def test_a_team_that_owns_topics_is_not_deleted_and_says_why(world) -> None:
    cluster = Cluster.objects.create(organization=world.organization, name="main", provider=Provider.EXTERNAL)
    team = Team.objects.create(organization=world.organization, name="Ledger", slug="ledger")
    Topic.objects.create(cluster=cluster, team=team, name="ledger.entries", partitions=1)

    response = world.org_admin.session().delete(f"/api/v1/teams/{team.id}/")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "team_not_empty"
    assert error["details"] == {"owned": ["topics"]}
    assert Team.objects.filter(pk=team.id).exists()
    assert AuditEvent.objects.get(action="team.delete").result == "failure"


def test_team_admins_rename_but_do_not_create_or_delete_teams(world) -> None:
    client = world.team_a_admin.session()

    assert (
        client.patch(f"/api/v1/teams/{world.team_a.id}/", {"name": "Pay"}, format="json").status_code == 200
    )
    create = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": "X"}, format="json"
    )
    assert create.status_code == 403
    assert client.delete(f"/api/v1/teams/{world.team_a.id}/").status_code == 403
