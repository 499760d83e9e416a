"""Tenant isolation: nobody sees or changes another team's service accounts or keys, viewers change
nothing, and every refused attempt is recorded."""

import pytest

from controlplane.accounts import services as accounts
from controlplane.accounts.models import ServiceAccount
from controlplane.audit.models import AuditEvent
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TEAM_A_MEMBERS = ["team_a_admin", "team_a_developer", "team_a_viewer"]
STRANGERS_TO_TEAM_B = [*TEAM_A_MEMBERS, "outsider"]


@pytest.fixture
def team_b_key(world):
    api_key, _ = accounts.create_api_key(
        actor=Actor.system(), name="indexer", role=TeamRole.DEVELOPER, service_account=world.service_account_b
    )
    return api_key


@pytest.mark.parametrize("persona", STRANGERS_TO_TEAM_B)
def test_team_b_service_accounts_do_not_exist_for_others(world, persona: str) -> None:
    client = getattr(world, persona).client()
    url = f"/api/v1/service-accounts/{world.service_account_b.id}/"

    listed = client.get("/api/v1/service-accounts/", {"limit": 500}).json()["results"]
    assert world.service_account_b.id not in [row["id"] for row in listed]
    assert client.get(url).status_code == 404
    assert client.patch(url, {"description": "mine now"}, format="json").status_code == 404
    assert client.put(url, {"description": "mine now"}, format="json").status_code == 404
    assert client.delete(url).status_code == 404

    world.service_account_b.refresh_from_db()
    assert world.service_account_b.description == ""


@pytest.mark.parametrize("persona", STRANGERS_TO_TEAM_B)
def test_team_b_api_keys_do_not_exist_for_others(world, team_b_key, persona: str) -> None:
    client = getattr(world, persona).client()
    url = f"/api/v1/api-keys/{team_b_key.key_id}/"

    listed = client.get("/api/v1/api-keys/", {"limit": 500}).json()["results"]
    assert team_b_key.key_id not in [row["key_id"] for row in listed]
    assert client.get(url).status_code == 404
    assert client.post(f"{url}revoke/").status_code == 404
    assert client.post(f"{url}rotate/", {}, format="json").status_code == 404
    assert client.delete(url).status_code == 405  # keys are revoked, never deleted

    team_b_key.refresh_from_db()
    assert team_b_key.revoked_at is None
    assert team_b_key.overlap_until is None


@pytest.mark.parametrize("persona", STRANGERS_TO_TEAM_B)
def test_nobody_can_create_objects_in_a_team_they_cannot_see(world, persona: str) -> None:
    """Naming another team's id answers exactly as naming an id that does not exist: a 400 "does not exist",
    or a 403 for a caller who may not make such objects in any team; never the other team's name."""
    client = getattr(world, persona).client()
    missing = 999_999

    def attempts(team_id: int, account_id: int) -> list:
        return [
            client.post("/api/v1/service-accounts/", {"team": team_id, "name": "sneaky"}, format="json"),
            client.post(
                "/api/v1/api-keys/",
                {"name": "sneaky", "role": "viewer", "service_account": account_id},
                format="json",
            ),
            client.post(
                "/api/v1/memberships/", {"team": team_id, "username": "dave", "role": "viewer"}, format="json"
            ),
        ]

    for real, unknown in zip(
        attempts(world.team_b.id, world.service_account_b.id), attempts(missing, missing), strict=True
    ):
        # A team they cannot see is no team: 404 as for an id nobody has (or 403 for a role they lack).
        assert real.status_code in (403, 404), real.json()
        assert (real.status_code, real.json()["error"]["code"]) == (
            unknown.status_code,
            unknown.json()["error"]["code"],
        )
        assert real.json()["error"]["code"] in ("not_found", "permission_denied")
        assert world.team_b.name not in real.content.decode()
    assert not ServiceAccount.objects.filter(name="sneaky").exists()


@pytest.mark.parametrize("persona", STRANGERS_TO_TEAM_B)
def test_personal_keys_of_other_people_are_invisible(world, persona: str) -> None:
    client = getattr(world, persona).client()
    bobs_key = world.team_b_admin.api_key.key_id

    assert client.get(f"/api/v1/api-keys/{bobs_key}/").status_code == 404
    assert client.post(f"/api/v1/api-keys/{bobs_key}/revoke/").status_code == 404


def test_another_organizations_admin_sees_none_of_this_organization(world) -> None:
    client = world.outsider.client()

    for url in ("/api/v1/teams/", "/api/v1/memberships/", "/api/v1/prefixes/", "/api/v1/audit-events/"):
        rows = client.get(url).json()["results"]
        assert all(
            row.get("organization", row.get("organization_id")) != world.organization.id for row in rows
        ), url
    assert client.get(f"/api/v1/organizations/{world.organization.id}/").status_code == 404
    assert client.get(f"/api/v1/teams/{world.team_a.id}/").status_code == 404


def test_a_service_account_key_sees_only_its_own_team(world, key_client) -> None:
    _, token = accounts.create_api_key(
        actor=Actor.system(), name="ci", role=TeamRole.TEAM_ADMIN, service_account=world.service_account_a
    )
    client = key_client(str(token))

    teams = client.get("/api/v1/teams/").json()["results"]
    assert [team["id"] for team in teams] == [world.team_a.id]
    assert client.get(f"/api/v1/service-accounts/{world.service_account_b.id}/").status_code == 404
    created = client.post(
        "/api/v1/service-accounts/", {"team": world.team_a.id, "name": "made-by-ci"}, format="json"
    )
    assert created.status_code == 201
    event = AuditEvent.objects.get(action="service_account.create", resource_name="made-by-ci")
    assert (event.actor_type, event.actor_name, event.api_key_id) == (
        "service_account",
        "service-account:payments-api",
        token.key_id,
    )


VIEWER_WRITES = [
    ("post", "/api/v1/service-accounts/", lambda w: {"team": w.team_a.id, "name": "viewer-made"}),
    ("patch", "/api/v1/service-accounts/{sa_a}/", lambda w: {"description": "x"}),
    ("delete", "/api/v1/service-accounts/{sa_a}/", None),
    (
        "post",
        "/api/v1/api-keys/",
        lambda w: {"name": "k", "role": "viewer", "service_account": w.service_account_a.id},
    ),
    ("patch", "/api/v1/teams/{team_a}/", lambda w: {"description": "x"}),
    ("post", "/api/v1/memberships/", lambda w: {"team": w.team_a.id, "username": "bob", "role": "viewer"}),
    ("patch", "/api/v1/policies/{policy_a}/", lambda w: {"max_partitions_per_topic": 1}),
    (
        "post",
        "/api/v1/prefixes/",
        lambda w: {"team": w.team_a.id, "resource_type": "group", "prefix": "pay-"},
    ),
    ("delete", "/api/v1/teams/{team_a}/", None),
]


@pytest.mark.parametrize(
    ("method", "url", "payload"), VIEWER_WRITES, ids=[f"{m} {u}" for m, u, _ in VIEWER_WRITES]
)
def test_a_viewer_cannot_change_anything_in_its_own_team(world, method: str, url: str, payload) -> None:
    client = world.team_a_viewer.client()
    url = url.format(sa_a=world.service_account_a.id, team_a=world.team_a.id, policy_a=world.team_a.policy.id)
    before = AuditEvent.objects.filter(result="failure").count()

    response = getattr(client, method)(url, payload(world) if payload else None, format="json")

    assert response.status_code == 403, response.json()
    assert response.json()["error"]["code"] == "permission_denied"
    assert AuditEvent.objects.filter(result="failure").count() == before + 1
    refused = AuditEvent.objects.filter(result="failure").first()
    assert (refused.actor_name, refused.via) == ("vera", "api_key")
    assert refused.reason


def test_a_viewer_key_is_read_only_even_for_an_org_admin(world) -> None:
    _, token = accounts.create_api_key(actor=world.org_admin.actor, name="dashboards", role=TeamRole.VIEWER)
    client = world.org_admin.client()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    assert client.get(f"/api/v1/service-accounts/{world.service_account_b.id}/").status_code == 200
    response = client.post(
        "/api/v1/teams/", {"organization": world.organization.id, "name": "X"}, format="json"
    )
    assert response.status_code == 403
    assert client.delete(f"/api/v1/service-accounts/{world.service_account_b.id}/").status_code == 403


def test_a_developer_cannot_mint_a_key_above_its_role(world) -> None:
    client = world.team_a_developer.client()

    response = client.post(
        "/api/v1/api-keys/",
        {"name": "too-strong", "role": "team_admin", "service_account": world.service_account_a.id},
        format="json",
    )

    assert response.status_code == 403
    assert response.json()["error"]["details"] == {"requested_role": "team_admin", "your_role": "developer"}


def test_a_team_admin_cannot_administer_the_organization(world) -> None:
    client = world.team_a_admin.client()

    assert (
        client.post(
            "/api/v1/teams/", {"organization": world.organization.id, "name": "X"}, format="json"
        ).status_code
        == 403
    )
    assert client.delete(f"/api/v1/teams/{world.team_a.id}/").status_code == 403
    assert (
        client.patch(
            f"/api/v1/policies/{world.team_a.policy.id}/", {"max_total_partitions": 1}, format="json"
        ).status_code
        == 403
    )
    assert client.get("/api/v1/org-memberships/").json()["count"] == 0


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/auth/session/",
        "/api/v1/organizations/",
        "/api/v1/org-memberships/",
        "/api/v1/teams/",
        "/api/v1/memberships/",
        "/api/v1/prefixes/",
        "/api/v1/policies/",
        "/api/v1/service-accounts/",
        "/api/v1/api-keys/",
        "/api/v1/audit-events/",
    ],
)
def test_a_service_account_key_reads_every_list_it_may_see(world, key_client, url: str) -> None:
    _, token = accounts.create_api_key(
        actor=Actor.system(), name="ci", role=TeamRole.VIEWER, service_account=world.service_account_a
    )

    response = key_client(str(token)).get(url)

    assert response.status_code == 200
