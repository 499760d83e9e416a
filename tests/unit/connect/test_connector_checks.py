"""What a team's connector config may name, checked before Connect sees it, and the workers' properties."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from controlplane.connect import workers
from controlplane.connect.services import check_connector_config
from controlplane.core.api.errors import ServiceError
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
    return refused.value.get_codes()


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
