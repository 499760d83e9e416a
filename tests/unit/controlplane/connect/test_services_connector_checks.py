"""What a team's connector config may name (topics, local files), checked before Connect sees it; the workers'
properties; how a connector's status reads as an alert subject and PostgreSQL LSNs as Debezium's offsets."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from controlplane.connect import lag, workers
from controlplane.connect.alerting import connector_subject
from controlplane.connect.models import ConnectCluster, Connector
from controlplane.connect.services import check_connector_config, check_local_paths
from controlplane.core.errors import ServiceError
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import Team

SYSTEM = Actor.system()


@pytest.fixture
def team(db) -> Team:
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=PrefixResourceType.TOPIC, prefix="pay.")
    tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=PrefixResourceType.GROUP, prefix="pay-")
    return team


def refusal(team: Team, name: str, config: dict[str, str]) -> str:
    with pytest.raises(ServiceError) as refused:
        check_connector_config(team, name, config)
    return refused.value.code


def test_it_accepts_a_connector_inside_the_teams_prefixes(team: Team) -> None:
    check_connector_config(team, "pay-cdc", {"topic.prefix": "pay.db", "topics.regex": r"pay\.orders.*"})


@pytest.mark.parametrize(
    "config",
    [
        {"topics": "pay.a, search.b"},
        {"topic": "search.b"},
        {"topics.regex": ".*"},
        {"errors.deadletterqueue.topic.name": "dlq"},
        {"transforms.r.replacement": "search.stolen"},
    ],
)
def test_it_refuses_topics_outside_the_team(team: Team, config: dict[str, str]) -> None:
    assert refusal(team, "pay-x", config) == "topic_outside_team"


def test_it_refuses_a_name_outside_the_group_prefixes_and_config_provider_references(team: Team) -> None:
    assert refusal(team, "search-x", {"topic": "pay.a"}) == "invalid_name"
    assert refusal(team, "pay-x", {"file": "${file:/etc/passwd:root}"}) == "invalid_config"


def path_refusal(directory: str, config: dict[str, str]) -> dict[str, list[str]]:
    with pytest.raises(ServiceError) as refused:
        check_local_paths(ConnectCluster(file_directory=directory), config)
    assert refused.value.code == "path_outside_directory"
    return refused.value.details["fields"]


def test_connectors_name_local_files_only_under_the_directory_the_org_admin_set(tmp_path: Path) -> None:
    root = tmp_path / "exchange"
    (root / "in").mkdir(parents=True)
    (root / "in" / "escape").symlink_to("/etc")
    check_local_paths(ConnectCluster(file_directory=str(root)), {"file": str(root / "in" / "a.txt")})
    check_local_paths(ConnectCluster(file_directory=str(root)), {"topic": "/etc/passwd"})  # not a path key
    for path in ("/etc/passwd", f"{root}/../etc/passwd", f"{root}/in/escape/passwd", "relative.txt"):
        assert list(path_refusal(str(root), {"file": path})) == ["file"], path
    assert list(path_refusal(str(root), {"database.sslrootcert": "/etc/ssl/private/ca.pem"})) == [
        "database.sslrootcert"
    ]
    assert list(path_refusal(str(root), {"producer.ssl.truststore.location": "/etc/keys.jks"})) == [
        "producer.ssl.truststore.location"
    ]
    # No directory set: no local file at all.
    assert path_refusal("", {"file": str(root / "in" / "a.txt")}) == {
        "file": ["this Connect cluster lets connectors name no local file"]
    }


def test_worker_configs_are_private_and_bound_to_loopback(tmp_path: Path) -> None:
    plan = workers.WorkerPlan(index=1, rest_port=18083, directory=tmp_path / "worker-1")
    login = workers.ClusterLogin("127.0.0.1:9092", "SASL_PLAINTEXT", "SCRAM-SHA-512", "connect-1", "s3cret")
    group = workers.WorkerGroup("connect-1", 1, tmp_path / "secrets")
    workers.write_worker_config(plan, login, group)
    text = plan.config_path.read_text()
    assert stat.S_IMODE(plan.config_path.stat().st_mode) == 0o600
    assert "listeners=http://127.0.0.1:18083\n" in text
    assert f"config.providers.file.param.allowed.paths={tmp_path / 'secrets'}\n" in text
    assert "connector.client.config.override.policy=None\n" in text
    assert stat.S_IMODE(group.secrets_dir.stat().st_mode) == 0o700


def test_postgresql_lsns_read_as_debeziums_offsets_numbers() -> None:
    assert lag.lsn_number("0/16B3748") == 0x16B3748
    assert lag.lsn_number("1/0") == 1 << 32
    assert lag.lsn_text(lag.lsn_number("2A/FF00AA01")) == "2A/FF00AA01"


def test_a_connector_alert_subject_is_one_when_anything_is_paused_or_failed_and_unknown_when_unreachable() -> (
    None
):
    connector = Connector(pk=7, name="pay-cdc")

    def subject(state: str, *task_states: str) -> tuple[float | None, str]:
        tasks = [{"id": index, "state": task} for index, task in enumerate(task_states)]
        observed = connector_subject(connector, {"state": state, "tasks": tasks, "error": "refused"})
        assert (observed.fingerprint, observed.group) == ("connector:7", "pay-cdc")
        return observed.value, observed.reason

    assert subject("RUNNING", "RUNNING", "RUNNING")[0] == 0.0
    assert subject("PAUSED", "PAUSED") == (
        1.0,
        "Connector pay-cdc: the connector is PAUSED, task 0 is PAUSED.",
    )
    assert subject("RUNNING", "RUNNING", "FAILED") == (1.0, "Connector pay-cdc: task 1 is FAILED.")
    assert subject("STOPPED")[0] == 1.0
    assert subject("UNREACHABLE") == (None, "Connect gave no status: refused")
