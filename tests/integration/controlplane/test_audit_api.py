from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.audit.models import AuditEvent

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _team_ids(response) -> set:
    return {row["team_id"] for row in response.json()["results"]}


def test_org_admins_read_the_whole_organizations_trail(world) -> None:
    response = world.org_admin.client().get("/api/v1/audit-events/", {"limit": 500})

    assert response.status_code == 200
    assert {world.team_a.id, world.team_b.id} <= _team_ids(response)
    assert {row["organization_id"] for row in response.json()["results"]} == {world.organization.id}


def test_team_admins_read_only_their_teams_trail(world) -> None:
    world.team_b_admin.client().patch(
        f"/api/v1/teams/{world.team_b.id}/", {"description": "b"}, format="json"
    )

    response = world.team_a_admin.client().get("/api/v1/audit-events/", {"limit": 500})

    assert _team_ids(response) == {world.team_a.id}
    foreign = AuditEvent.objects.filter(team_id=world.team_b.id).first()
    assert world.team_a_admin.client().get(f"/api/v1/audit-events/{foreign.id}/").status_code == 404


@pytest.mark.parametrize("persona", ["team_a_developer", "team_a_viewer"])
def test_developers_and_viewers_do_not_read_the_trail(world, persona: str) -> None:
    assert getattr(world, persona).client().get("/api/v1/audit-events/").json()["count"] == 0


def test_the_trail_filters_by_actor_action_resource_team_and_time(world) -> None:
    admin = world.team_a_admin.client()
    admin.patch(f"/api/v1/teams/{world.team_a.id}/", {"description": "cards"}, format="json")
    client = world.org_admin.client()

    by_actor = client.get("/api/v1/audit-events/", {"actor": "alice"}).json()["results"]
    assert [row["action"] for row in by_actor] == ["team.update"]
    assert by_actor[0]["before"] == {"name": "Payments", "slug": "payments", "description": ""}
    assert by_actor[0]["after"]["description"] == "cards"
    assert by_actor[0]["via"] == "api_key"
    assert by_actor[0]["api_key_id"] == world.team_a_admin.api_key.key_id
    assert by_actor[0]["client_address"] == "127.0.0.1"

    assert client.get("/api/v1/audit-events/", {"resource_type": "prefix"}).json()["count"] == 2
    assert (
        client.get("/api/v1/audit-events/", {"action": "team.create", "team": world.team_b.id}).json()[
            "count"
        ]
        == 1
    )
    future = (timezone.now() + timedelta(minutes=1)).isoformat()
    assert client.get("/api/v1/audit-events/", {"since": future}).json()["count"] == 0
    assert client.get("/api/v1/audit-events/", {"until": future}).json()["count"] > 0
    assert client.get("/api/v1/audit-events/", {"since": "yesterday"}).status_code == 400


def test_the_trail_is_append_only(world) -> None:
    client = world.org_admin.client()
    event = AuditEvent.objects.filter(organization_id=world.organization.id).first()
    url = f"/api/v1/audit-events/{event.id}/"

    assert client.delete(url).status_code == 405
    assert client.patch(url, {"result": "failure"}, format="json").status_code == 405
    assert client.post("/api/v1/audit-events/", {}, format="json").status_code == 405
    assert AuditEvent.objects.get(id=event.id).result == "success"


def test_the_trail_of_a_deleted_team_survives_it(world) -> None:
    client = world.org_admin.client()
    team = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": "Temp"}, format="json"
    ).json()
    assert client.delete(f"/api/v1/teams/{team['id']}/").status_code == 204

    trail = client.get("/api/v1/audit-events/", {"team": team["id"], "ordering": "timestamp"}).json()[
        "results"
    ]

    assert [row["action"] for row in trail] == ["team.create", "team.delete"]
    assert trail[1]["before"]["name"] == "Temp"


def test_a_trusted_proxy_supplies_the_client_address(world, settings) -> None:
    settings.TRUST_X_FORWARDED_FOR = True
    world.org_admin.client().patch(
        f"/api/v1/teams/{world.team_a.id}/",
        {"description": "x"},
        format="json",
        HTTP_X_FORWARDED_FOR="198.51.100.7",
    )

    assert AuditEvent.objects.get(action="team.update").client_address == "198.51.100.7"
