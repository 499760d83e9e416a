from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.accounts.api.throttling import ApiKeyRateThrottle
from controlplane.accounts.models import ApiKey
from controlplane.audit.models import AuditEvent

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _create_service_key(world, **extra) -> dict:
    response = world.team_a_admin.client().post(
        "/api/v1/api-keys/",
        {"name": "deploy", "role": "developer", "service_account": world.service_account_a.id, **extra},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def _assert_refused(response) -> None:
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_the_secret_is_shown_once_and_only_its_hash_is_stored(world, key_client) -> None:
    created = _create_service_key(world)
    secret = created["secret"]

    assert secret.startswith(f"shk_{created['key_id']}_")
    detail = world.team_a_admin.client().get(f"/api/v1/api-keys/{created['key_id']}/")
    listed = world.team_a_admin.client().get("/api/v1/api-keys/")
    assert "secret" not in detail.json()
    assert secret not in listed.content.decode()
    stored = ApiKey.objects.get(key_id=created["key_id"])
    assert secret.split("_", 2)[2] not in stored.secret_hash
    audit_rows = str(list(AuditEvent.objects.values()))
    assert secret.split("_", 2)[2] not in audit_rows
    assert key_client(secret).get("/api/v1/service-accounts/").status_code == 200


def test_a_key_records_its_last_use_at_most_once_a_minute(world, key_client) -> None:
    created = _create_service_key(world)
    client = key_client(created["secret"])

    client.get("/api/v1/teams/")
    first_use = ApiKey.objects.get(key_id=created["key_id"]).last_used_at
    client.get("/api/v1/teams/")
    assert first_use is not None
    assert ApiKey.objects.get(key_id=created["key_id"]).last_used_at == first_use

    ApiKey.objects.filter(key_id=created["key_id"]).update(last_used_at=first_use - timedelta(minutes=2))
    client.get("/api/v1/teams/")
    assert ApiKey.objects.get(key_id=created["key_id"]).last_used_at > first_use


def test_an_expired_key_is_refused(world, key_client) -> None:
    created = _create_service_key(world, expires_in_days=1)
    assert key_client(created["secret"]).get("/api/v1/teams/").status_code == 200

    ApiKey.objects.filter(key_id=created["key_id"]).update(expires_at=timezone.now() - timedelta(seconds=1))

    _assert_refused(key_client(created["secret"]).get("/api/v1/teams/"))


def test_a_key_expires_after_the_lifetime_it_is_given_which_cannot_be_in_the_past(world) -> None:
    client = world.team_a_admin.client()
    before = timezone.now()

    created = client.post(
        "/api/v1/api-keys/", {"name": "ci", "role": "viewer", "expires_in_days": 30}, format="json"
    )

    assert created.status_code == 201, created.json()
    expires_at = ApiKey.objects.get(key_id=created.json()["key_id"]).expires_at
    assert before + timedelta(days=30) <= expires_at <= timezone.now() + timedelta(days=30)
    assert created.json()["expires_at"] == expires_at.isoformat().replace("+00:00", "Z")
    for lifetime in (0, -1, 3651):
        refused = client.post(
            "/api/v1/api-keys/", {"name": "old", "role": "viewer", "expires_in_days": lifetime}, format="json"
        )
        assert refused.status_code == 400, lifetime
        assert list(refused.json()["error"]["details"]) == ["expires_in_days"], refused.json()
    endless = client.post("/api/v1/api-keys/", {"name": "forever", "role": "viewer"}, format="json")
    assert ApiKey.objects.get(key_id=endless.json()["key_id"]).expires_at is None


def test_a_revoked_key_is_refused_at_once_and_the_revocation_is_audited(world, key_client) -> None:
    created = _create_service_key(world)

    revoked = world.team_a_admin.client().post(f"/api/v1/api-keys/{created['key_id']}/revoke/")

    assert revoked.status_code == 200
    assert revoked.json()["status"] == "revoked"
    _assert_refused(key_client(created["secret"]).get("/api/v1/teams/"))
    event = AuditEvent.objects.get(action="api_key.revoke", resource_name=created["key_id"])
    assert event.before["revoked_at"] is None
    assert event.after["revoked_at"] is not None
    again = world.team_a_admin.client().post(f"/api/v1/api-keys/{created['key_id']}/revoke/")
    assert again.status_code == 409


def test_a_rotated_key_works_until_the_overlap_ends(world, key_client) -> None:
    old = _create_service_key(world)

    rotated = world.team_a_admin.client().post(
        f"/api/v1/api-keys/{old['key_id']}/rotate/", {"overlap_seconds": 600}, format="json"
    )

    assert rotated.status_code == 201
    new = rotated.json()
    assert new["rotated_from"] == old["key_id"]
    assert (new["role"], new["service_account"]) == (old["role"], old["service_account"])
    assert key_client(new["secret"]).get("/api/v1/teams/").status_code == 200
    assert key_client(old["secret"]).get("/api/v1/teams/").status_code == 200
    assert (
        world.team_a_admin.client().get(f"/api/v1/api-keys/{old['key_id']}/").json()["status"] == "rotating"
    )

    ApiKey.objects.filter(key_id=old["key_id"]).update(overlap_until=timezone.now() - timedelta(seconds=1))

    _assert_refused(key_client(old["secret"]).get("/api/v1/teams/"))
    assert key_client(new["secret"]).get("/api/v1/teams/").status_code == 200
    event = AuditEvent.objects.get(action="api_key.rotate")
    assert event.after["new"]["key_id"] == new["key_id"]
    assert event.after["old"]["overlap_until"] is not None


def test_a_key_is_rotated_only_once(world) -> None:
    old = _create_service_key(world)
    client = world.team_a_admin.client()
    client.post(f"/api/v1/api-keys/{old['key_id']}/rotate/", {"overlap_seconds": 0}, format="json")

    again = client.post(f"/api/v1/api-keys/{old['key_id']}/rotate/", {}, format="json")

    assert again.status_code == 409


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer shk_nope",
        "Bearer shk_abcdefghijkl_" + "A" * 43,
        "Bearer a b",
        "bearer shk_\u00ff\u00fe",
    ],
)
def test_malformed_or_unknown_keys_are_refused_with_the_error_shape(world, header: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)

    _assert_refused(client.get("/api/v1/teams/"))


def test_the_right_key_id_with_a_wrong_secret_is_refused(world, key_client) -> None:
    created = _create_service_key(world)
    key_id = created["key_id"]

    _assert_refused(key_client(f"shk_{key_id}_{'x' * 43}").get("/api/v1/teams/"))


def test_each_key_has_its_own_request_budget(world, key_client, monkeypatch) -> None:
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "3/min"})
    busy = world.team_a_admin.client()
    for _ in range(3):
        assert busy.get("/api/v1/teams/").status_code == 200

    throttled = busy.get("/api/v1/teams/")

    assert throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "throttled"
    assert throttled.json()["error"]["details"]["retry_after_seconds"] > 0
    assert world.team_a_developer.client().get("/api/v1/teams/").status_code == 200


def test_a_personal_key_acts_for_its_owner(world) -> None:
    response = world.team_a_admin.client().post(
        "/api/v1/api-keys/", {"name": "scripts", "role": "developer"}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["owner"] == "alice"
    assert response.json()["service_account"] is None
    mine = world.team_a_admin.client().get("/api/v1/api-keys/", {"personal": "true"}).json()["results"]
    assert {row["owner"] for row in mine} == {"alice"}
