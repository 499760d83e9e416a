"""Domain rules through the API: prefixes, policies, duplicates and bad input give clear 4xx answers."""

import pytest

from controlplane.tenancy import services as tenancy
from controlplane.tenancy.models import OrgMembership

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize("prefix", ["payments.cards.", "pay", "payments."])
def test_a_prefix_overlapping_another_teams_is_refused(world, prefix: str) -> None:
    response = world.org_admin.client().post(
        "/api/v1/prefixes/",
        {"team": world.team_b.id, "resource_type": "topic", "prefix": prefix},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "prefix_overlap"
    assert response.json()["error"]["details"] == {"prefix": "payments.", "team": "Payments"}


def test_prefixes_of_different_resource_types_do_not_clash(world) -> None:
    response = world.org_admin.client().post(
        "/api/v1/prefixes/",
        {"team": world.team_b.id, "resource_type": "group", "prefix": "payments."},
        format="json",
    )

    assert response.status_code == 201


def test_a_prefix_with_characters_kafka_refuses_is_a_field_error(world) -> None:
    response = world.org_admin.client().post(
        "/api/v1/prefixes/",
        {"team": world.team_a.id, "resource_type": "topic", "prefix": "pay ments"},
        format="json",
    )

    assert response.status_code == 400
    assert "prefix" in response.json()["error"]["details"]


@pytest.mark.parametrize(
    ("url", "payload"),
    [
        ("/api/v1/teams/", lambda w: {"organization": w.organization.id, "name": "Payments"}),
        ("/api/v1/service-accounts/", lambda w: {"team": w.team_b.id, "name": "payments-api"}),
        ("/api/v1/memberships/", lambda w: {"team": w.team_a.id, "username": "dave", "role": "viewer"}),
        ("/api/v1/org-memberships/", lambda w: {"organization": w.organization.id, "username": "olga"}),
    ],
)
def test_duplicates_are_a_conflict(world, url: str, payload) -> None:
    response = world.org_admin.client().post(url, payload(world), format="json")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "duplicate"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"naming_pattern": "payments.("}, "naming_pattern"),
        ({"max_partitions_per_topic": 0}, "max_partitions_per_topic"),
        ({"max_retention_ms": -1}, "max_retention_ms"),
        ({"allowed_topic_configs": "retention.ms"}, "allowed_topic_configs"),
        ({"max_total_partitions": "many"}, "max_total_partitions"),
    ],
)
def test_bad_policy_values_are_field_errors(world, payload: dict, field: str) -> None:
    response = world.org_admin.client().patch(
        f"/api/v1/policies/{world.team_a.policy.id}/", payload, format="json"
    )

    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


def test_the_topic_check_reads_the_stored_policy_and_prefixes(world) -> None:
    world.org_admin.client().patch(
        f"/api/v1/policies/{world.team_a.policy.id}/",
        {"max_partitions_per_topic": 6, "allowed_topic_configs": ["retention.ms"]},
        format="json",
    )

    violations = tenancy.check_topic_request(
        team=world.team_a, name="search.logs", partitions=12, configs={"cleanup.policy": "compact"}
    )

    assert {violation.code for violation in violations} == {
        "name_outside_prefixes",
        "too_many_partitions",
        "config_not_allowed",
    }
    assert (
        tenancy.check_topic_request(team=world.team_a, name="payments.orders", partitions=6, configs={}) == []
    )


def test_service_account_names_must_be_valid_principals(world) -> None:
    response = world.team_a_admin.client().post(
        "/api/v1/service-accounts/", {"team": world.team_a.id, "name": "bad,name"}, format="json"
    )

    assert response.status_code == 400
    assert "name" in response.json()["error"]["details"]


def test_a_service_account_is_renamed_never(world) -> None:
    url = f"/api/v1/service-accounts/{world.service_account_a.id}/"

    response = world.team_a_admin.client().patch(url, {"name": "renamed", "description": "d"}, format="json")

    assert response.status_code == 200
    assert response.json()["name"] == "payments-api"
    assert response.json()["principal"] == "User:payments-api"


def test_a_team_with_service_accounts_is_not_deleted(world) -> None:
    response = world.org_admin.client().delete(f"/api/v1/teams/{world.team_a.id}/")

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"service_accounts": ["payments-api"]}


def test_adding_a_team_member_makes_them_an_organization_member(world) -> None:
    client = world.team_a_admin.client()

    response = client.post(
        "/api/v1/memberships/", {"team": world.team_a.id, "username": "otto", "role": "viewer"}, format="json"
    )

    assert response.status_code == 201
    assert OrgMembership.objects.filter(user=world.outsider.user, organization=world.organization).exists()


def test_leaving_an_organization_ends_its_team_memberships(world) -> None:
    membership = OrgMembership.objects.get(user=world.team_a_developer.user, organization=world.organization)

    response = world.org_admin.client().delete(f"/api/v1/org-memberships/{membership.id}/")

    assert response.status_code == 204
    assert world.team_a_developer.client().get(f"/api/v1/teams/{world.team_a.id}/").status_code == 404


def test_organizations_are_listed_to_their_members(world) -> None:
    rows = world.team_a_viewer.client().get("/api/v1/organizations/").json()["results"]

    assert [row["name"] for row in rows] == ["Acme"]


def test_unknown_users_and_roles_are_field_errors(world) -> None:
    response = world.team_a_admin.client().post(
        "/api/v1/memberships/",
        {"team": world.team_a.id, "username": "nobody", "role": "owner"},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.json()["error"]["details"]) == {"username", "role"}
