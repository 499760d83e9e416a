"""The `streamhub` CLI against a real server (Django on a live port) and a real broker: login, export, plan,
diff, apply with CI exit codes, refusals with the API's reason, get/describe, produce and consume."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from cli.streamhub.main import cli
from tests.fixtures.engines import STREAMHUB
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


@pytest.fixture
def engine() -> str:
    """The CLI speaks HTTP only: one engine is enough here (the plan and apply tests cover both)."""
    return STREAMHUB


@pytest.fixture
def streamhub(live_server, transactional_db, kafka_world: KafkaWorld, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("STREAMHUB_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.delenv("STREAMHUB_URL", raising=False)
    monkeypatch.delenv("STREAMHUB_API_KEY", raising=False)
    token = kafka_world.developer_a._credentials["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    runner = CliRunner()

    def run(*arguments: str) -> Result:
        return runner.invoke(cli, list(arguments), catch_exceptions=False)

    login = run("login", "--url", live_server.url, "--api-key", token)
    assert login.exit_code == 0, login.output
    assert "Logged in" in login.output
    assert stat.S_IMODE(os.stat(tmp_path / "config.json").st_mode) == 0o600
    return run


def test_export_plan_apply_diff_and_refusals_with_ci_exit_codes(
    streamhub, kafka_world: KafkaWorld, tmp_path: Path
) -> None:
    world = kafka_world
    create_topic(world, world.developer_a, world.topic_prefix_a + "orders", partitions=2)
    folder = tmp_path / "kafka"
    exported = streamhub(
        "export", "--team", world.team_a.slug, "--cluster", world.cluster.name, "-o", f"{folder}/"
    )
    assert exported.exit_code == 0, exported.output
    assert sorted(p.name for p in folder.iterdir()) == ["serviceaccounts.yaml", "topics.yaml"]

    claim = streamhub("plan", str(folder))
    assert claim.exit_code == 2, claim.output  # the existing resources become the file set's
    assert 'managedBy: (none) -> "kafka"' in claim.output
    applied = streamhub("apply", str(folder), "--yes")
    assert applied.exit_code == 0, applied.output
    assert "applied" in applied.output
    assert streamhub("plan", str(folder)).exit_code == 0

    (folder / "new.yaml").write_text(
        yaml.safe_dump(
            {
                "kind": "Topic",
                "metadata": {
                    "name": world.topic_prefix_a + "events",
                    "team": world.team_a.slug,
                    "cluster": world.cluster.name,
                },
                "spec": {"partitions": 3, "configs": {"cleanup.policy": "compact"}},
            }
        )
    )
    difference = streamhub("diff", str(folder))
    assert difference.exit_code == 2, difference.output
    assert difference.output.splitlines() == [
        f"+ Topic/{world.topic_prefix_a}events partitions: null -> 3",
        f"+ Topic/{world.topic_prefix_a}events replicationFactor: null -> 1",
        f'+ Topic/{world.topic_prefix_a}events configs.cleanup.policy: null -> "compact"',
    ]
    assert streamhub("apply", str(folder), "--yes").exit_code == 0

    (folder / "bad.yaml").write_text(
        yaml.safe_dump(
            {
                "kind": "Topic",
                "metadata": {
                    "name": world.topic_prefix_b + "theirs",
                    "team": world.team_a.slug,
                    "cluster": world.cluster.name,
                },
                "spec": {"partitions": 1},
            }
        )
    )
    refused = streamhub("plan", str(folder))
    assert refused.exit_code == 3, refused.output
    assert "refused (policy_violation)" in refused.output
    blocked = streamhub("apply", str(folder), "--yes")
    assert blocked.exit_code == 3, blocked.output
    (folder / "bad.yaml").write_text("kind: Topic\nmetadata: {name: x}\nspec: {partitions: zero}\n")
    invalid = streamhub("plan", str(folder))
    assert invalid.exit_code == 1
    assert "invalid_documents" in invalid.output
    assert "at 'spec/partitions'" in invalid.output
    assert "request id:" in invalid.output


def test_get_describe_produce_and_consume(streamhub, kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "checks"
    create_topic(world, world.developer_a, name)
    listed = streamhub("get", "topics", "--cluster", world.cluster.name)
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines()[0].split() == [
        "ID",
        "NAME",
        "CLUSTER",
        "TEAM",
        "PARTITIONS",
        "REPLICATION_FACTOR",
        "MANAGED",
    ]
    assert name in listed.output
    described = streamhub("describe", "topic", name, "--cluster", world.cluster.name, "-o", "json")
    assert described.exit_code == 0, described.output
    assert '"partitions": 1' in described.output
    produced = streamhub(
        "topics", "produce", name, "hello from the cli", "--cluster", world.cluster.name, "--key", "k1"
    )
    assert produced.exit_code == 0, produced.output
    assert "at offset 0" in produced.output
    consumed = streamhub("topics", "consume", name, "--cluster", world.cluster.name, "-o", "yaml")
    assert consumed.exit_code == 0, consumed.output
    (message,) = yaml.safe_load(consumed.output)
    assert (message["key"], message["value"], message["offset"]) == ("k1", "hello from the cli", 0)
    missing = streamhub("describe", "clusters", "999999")
    assert missing.exit_code == 1
    assert "error: Not found. (not_found)" in missing.output
