"""Self-service end to end through the REST API with API keys: an org admin creates a team, a service account
and a local cluster; the team issues the account a SCRAM credential on that cluster, and a real Kafka client
authenticates with it — and is refused with a wrong or rotated-out password."""

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

pytestmark = pytest.mark.integration


def _metadata_as(cluster: dict, username: str, password: str) -> list[int]:
    admin = AdminClient(
        {
            "bootstrap.servers": cluster["bootstrap_servers"],
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": username,
            "sasl.password": password,
            "socket.timeout.ms": 3000,
        }
    )
    return sorted(admin.list_topics(timeout=5).brokers)


def _refused(cluster: dict, username: str, password: str) -> bool:
    try:
        _metadata_as(cluster, username, password)
    except KafkaException:
        return True
    return False


def test_a_team_issues_its_service_account_a_scram_credential_on_a_local_cluster(
    people, worker, wait_for_operation
) -> None:
    admin = people.org_admin
    team = admin.post(
        "/api/v1/teams/", {"organization": people.organization.id, "name": "Billing"}, format="json"
    )
    assert team.status_code == 201, team.json()
    account = admin.post(
        "/api/v1/service-accounts/", {"team": team.json()["id"], "name": "billing-app"}, format="json"
    )
    assert account.status_code == 201, account.json()
    accepted = admin.post(
        "/api/v1/clusters/",
        {"organization": people.organization.id, "name": "shared", "broker_count": 1},
        format="json",
    )
    assert accepted.status_code == 202, accepted.json()
    assert wait_for_operation(accepted.json()["operation"]["id"]).state == "succeeded"
    cluster = admin.get(f"/api/v1/clusters/{accepted.json()['cluster']['id']}/").json()
    assert cluster["status"] == "running"

    issued = admin.post(
        "/api/v1/scram-credentials/",
        {"service_account": account.json()["id"], "cluster": cluster["id"], "mechanism": "SCRAM-SHA-512"},
        format="json",
    )
    assert issued.status_code == 201, issued.json()
    credential = issued.json()
    assert credential["username"] == "billing-app"

    assert _metadata_as(cluster, "billing-app", credential["password"]) == [1]
    assert _refused(cluster, "billing-app", credential["password"] + "-wrong")
    listed = admin.get("/api/v1/scram-credentials/").json()["results"]
    assert all("password" not in item for item in listed)  # shown once, at issue time only

    rotated = admin.post(f"/api/v1/scram-credentials/{credential['id']}/rotate/", format="json")
    assert rotated.status_code == 200, rotated.json()
    new_password = rotated.json()["password"]
    assert new_password != credential["password"]
    assert _metadata_as(cluster, "billing-app", new_password) == [1]
    assert _refused(cluster, "billing-app", credential["password"])  # the rotated-out password

    actions = {
        event["action"] for event in admin.get("/api/v1/audit-events/", {"limit": 200}).json()["results"]
    }
    assert {"team.create", "service_account.create"} <= actions
    assert any(action.startswith("scram_credential.") for action in actions)
