"""The authentication and authorization matrix over every operation of the API's OpenAPI schema:

- missing, garbage and revoked credentials → 401 with `WWW-Authenticate` (nothing runs, nothing is said);
- another team's objects → 404 (they do not exist for the caller);
- actions the caller's role does not allow → 403, naming no other team or its principals.
"""

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.alerts import services as alerts
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SYSTEM = Actor.system()
# Session endpoints of the console that anybody may call (signing in needs no credentials; a one-time link
# is its own credential).
OPEN = {
    ("/api/v1/auth/login/", "post"),
    ("/api/v1/auth/session/", "get"),
    ("/api/v1/auth/options/", "get"),  # how the login page offers to sign in
    ("/api/v1/auth/cli/", "get"),  # how `streamhub login` may sign in (single sign-on or API key)
    ("/api/v1/auth/logout/", "post"),
    ("/api/v1/auth/password-links/inspect/", "post"),
    ("/api/v1/auth/password-links/use/", "post"),
}


def _operations() -> Iterator[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, methods in schema["paths"].items():
        for method in methods:
            if method in ("get", "post", "put", "patch", "delete") and (path, method) not in OPEN:
                # Path parameters are filled with 1: credentials are checked before any object is looked up.
                yield re.sub(r"\{[^}]+\}", "1", path), method


OPERATIONS = sorted(_operations())


def test_the_matrix_covers_the_api() -> None:
    assert len(OPERATIONS) > 80
    assert ("/api/v1/alert-channels/", "post") in OPERATIONS
    assert ("/api/v1/topics/1/produce/", "post") in OPERATIONS


def _assert_401(response, what: str) -> None:
    assert response.status_code == 401, (what, response.status_code, response.content[:300])
    assert response["WWW-Authenticate"] == 'Bearer realm="api"', what
    assert response.json()["error"]["code"] in (
        "not_authenticated",
        "invalid_api_key",
        "authentication_failed",
    )


@pytest.mark.parametrize("credentials", ["missing", "garbage bearer", "garbage basic", "revoked key"])
def test_bad_credentials_get_401_with_a_challenge_on_every_operation(world, credentials: str) -> None:
    client = APIClient()
    if credentials == "garbage bearer":
        client.credentials(HTTP_AUTHORIZATION="Bearer shk_notakey_nonsense")
    elif credentials == "garbage basic":
        client.credentials(HTTP_AUTHORIZATION="Basic Zm9vOmJhcg==")
    elif credentials == "revoked key":
        key, token = accounts.create_api_key(
            actor=world.team_a_developer.actor, name="old laptop", role=TeamRole.DEVELOPER
        )
        accounts.revoke_api_key(actor=world.team_a_developer.actor, api_key=key)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for path, method in OPERATIONS:
        _assert_401(getattr(client, method)(path, {}, format="json"), f"{method.upper()} {path}")


@pytest.fixture
def team_b_objects(world) -> dict[str, int]:
    """One object of every team-owned kind, in team B."""
    channel, _ = alerts.create_channel(
        actor=SYSTEM,
        team=world.team_b,
        name="search-oncall",
        kind="email",
        email_recipients=["b@example.com"],
    )
    rule = alerts.create_rule(
        actor=SYSTEM,
        team=world.team_b,
        name="search lag",
        metric="lag_messages",
        threshold=10,
        channels=[channel],
    )
    silence = alerts.create_silence(
        actor=SYSTEM, team=world.team_b, ends_at=timezone.now() + timedelta(hours=1), comment="deploy"
    )
    membership = world.team_b.memberships.get(user=world.team_b_admin.user)
    return {
        "teams": world.team_b.id,
        "policies": world.team_b.policy.id,
        "memberships": membership.id,
        "service-accounts": world.service_account_b.id,
        "alert-channels": channel.id,
        "alert-rules": rule.id,
        "alert-silences": silence.id,
    }


DETAIL_WRITES = ["get", "patch", "put", "delete"]


@pytest.mark.parametrize("persona", ["team_a_admin", "team_a_developer", "team_a_viewer"])
def test_another_teams_objects_are_404_for_every_method(world, team_b_objects, persona: str) -> None:
    client = getattr(world, persona).client()
    for resource, object_id in team_b_objects.items():
        url = f"/api/v1/{resource}/{object_id}/"
        for method in DETAIL_WRITES:
            response = getattr(client, method)(url, {"name": "mine now"}, format="json")
            assert response.status_code in (404, 405), (persona, method, url, response.status_code)
            if response.status_code == 405:
                continue  # the method does not exist for that resource at all
            assert world.team_b.name not in response.content.decode()
    for action in (
        "alert-channels/{}/test/",
        "alert-channels/{}/rotate-secret/",
        "alert-silences/{}/expire/",
    ):
        resource = action.split("/")[0]
        url = "/api/v1/" + action.format(team_b_objects[resource])
        assert client.post(url).status_code == 404, (persona, url)


def _forbidden_writes(world) -> list[tuple[str, str, str, dict]]:
    """(persona, method, url, payload): each valid or not, each beyond the persona's role in its own team."""
    a = world.team_a.id
    return [
        ("team_a_viewer", "post", "/api/v1/service-accounts/", {"team": a, "name": "viewer-made"}),
        ("team_a_viewer", "post", "/api/v1/service-accounts/", {"team": a}),  # invalid: still 403
        ("team_a_viewer", "patch", f"/api/v1/service-accounts/{world.service_account_a.id}/", {"name": ""}),
        ("team_a_viewer", "post", "/api/v1/alert-channels/", {"team": a, "kind": "nope"}),
        ("team_a_viewer", "post", "/api/v1/alert-rules/", {"team": a, "name": "r", "metric": "broker_down"}),
        ("team_a_viewer", "post", "/api/v1/alert-silences/", {"team": a}),
        (
            "team_a_developer",
            "post",
            "/api/v1/memberships/",
            {"team": a, "username": "bob", "role": "viewer"},
        ),
        ("team_a_developer", "post", "/api/v1/memberships/", {"team": a}),
        ("team_a_developer", "patch", f"/api/v1/teams/{a}/", {"description": "x"}),
        ("team_a_developer", "patch", f"/api/v1/teams/{a}/", {"name": ""}),
        ("team_a_developer", "delete", f"/api/v1/service-accounts/{world.service_account_a.id}/", None),
        (
            "team_a_admin",
            "post",
            "/api/v1/prefixes/",
            {"team": a, "resource_type": "topic", "prefix": "search."},
        ),
        (
            "team_a_admin",
            "patch",
            f"/api/v1/policies/{world.team_a.policy.id}/",
            {"max_partitions_per_topic": 1},
        ),
        ("team_a_developer", "post", "/api/v1/api-keys/", {"name": "mine", "role": "team_admin"}),
        ("team_a_viewer", "post", "/api/v1/api-keys/", {"name": "mine", "role": "developer"}),
    ]


def test_forbidden_actions_are_403_and_name_no_other_team(world) -> None:
    others = [world.team_b.name, world.team_b_admin.user.username, world.service_account_b.name, "Globex"]
    for persona, method, url, payload in _forbidden_writes(world):
        response = getattr(getattr(world, persona).client(), method)(url, payload, format="json")
        assert response.status_code == 403, (persona, method, url, payload, response.json())
        assert response.json()["error"]["code"] == "permission_denied"
        body = response.content.decode()
        assert not [name for name in others if name in body], (url, body)


def test_a_personal_key_cannot_carry_a_role_its_owner_lacks(world) -> None:
    # dave is a developer: his own team-admin key (minted by the fixture before his membership existed) may
    # not mint another team-admin key, nor rotate one.
    client = world.team_a_developer.client()
    refused = client.post("/api/v1/api-keys/", {"name": "escalate", "role": "team_admin"}, format="json")
    assert refused.status_code == 403
    allowed = client.post("/api/v1/api-keys/", {"name": "ci", "role": "developer"}, format="json")
    assert allowed.status_code == 201, allowed.json()
    assert allowed.json()["role"] == "developer"
    rotated = client.post(
        f"/api/v1/api-keys/{world.team_a_developer.api_key.key_id}/rotate/", {}, format="json"
    )
    assert rotated.status_code == 403
    # Revoking one's own over-privileged key is always allowed.
    assert client.post(f"/api/v1/api-keys/{world.team_a_developer.api_key.key_id}/revoke/").status_code == 200


def test_the_schema_url_exists() -> None:
    assert reverse("api-schema") == "/api/schema/"
