"""Kafka's own command-line tools (Apache Kafka 4.2.0's jars, the main class of each bin/ script) against our
broker with SASL/SCRAM and ACLs, on one node and on three.

Every tool runs in the session's JVM driver (tests/fixtures/jvm_ecosystem.py), as `bin/<tool>.sh` would with a
`--command-config` file holding the SCRAM login; the super user sets things up and a user limited by ACLs is
refused what it was not granted.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from tests.fixtures.jvm_ecosystem import JVM_TARGETS, JvmDriver, SecureTarget, ToolRun
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(params=JVM_TARGETS, scope="module")
def target(request: pytest.FixtureRequest) -> SecureTarget:
    return request.getfixturevalue(f"secure_{request.param}_target")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def admin_tool(driver: JvmDriver, target: SecureTarget, script: str, *args: str) -> ToolRun:
    return driver.tool(
        script, "--bootstrap-server", target.bootstrap, "--command-config", target.config_file(), *args
    )


def events(run: ToolRun) -> list[dict[str, Any]]:
    """The JSON events a verifiable producer or consumer printed."""
    return [json.loads(line) for line in run.out.splitlines() if line.startswith("{")]


def produce(
    driver: JvmDriver,
    target: SecureTarget,
    topic: str,
    count: int,
    *,
    user: str = "admin",
    password: str | None = None,
) -> ToolRun:
    return driver.tool(
        "kafka-verifiable-producer",
        "--bootstrap-server",
        target.bootstrap,
        "--command-config",
        target.config_file(user, password),
        "--topic",
        topic,
        "--max-messages",
        str(count),
        "--acks",
        "-1",
    )


def consume(
    driver: JvmDriver,
    target: SecureTarget,
    topic: str,
    group: str,
    count: int,
    *,
    protocol: str = "classic",
    user: str = "admin",
    password: str | None = None,
) -> ToolRun:
    return driver.tool(
        "kafka-verifiable-consumer",
        "--bootstrap-server",
        target.bootstrap,
        "--command-config",
        target.config_file(user, password),
        "--topic",
        topic,
        "--group-id",
        group,
        "--group-protocol",
        protocol,
        "--max-messages",
        str(count),
        "--reset-policy",
        "earliest",
    )


def acked_offsets(run: ToolRun) -> dict[int, list[int]]:
    acked: dict[int, list[int]] = {}
    for event in events(run):
        if event["name"] == "producer_send_success":
            acked.setdefault(event["partition"], []).append(event["offset"])
    return acked


def consumed_counts(run: ToolRun) -> dict[int, int]:
    counts: dict[int, int] = {}
    for event in events(run):
        if event["name"] == "records_consumed":
            for partition in event["partitions"]:
                counts[partition["partition"]] = counts.get(partition["partition"], 0) + partition["count"]
    return counts


def create_topic(driver: JvmDriver, target: SecureTarget, topic: str, partitions: int, *extra: str) -> None:
    replication = str(min(target.nodes, 3))
    admin_tool(
        driver,
        target,
        "kafka-topics",
        "--create",
        "--topic",
        topic,
        "--partitions",
        str(partitions),
        "--replication-factor",
        replication,
        *extra,
    ).ok()


def _set_describe_delete(
    driver: JvmDriver, target: SecureTarget, entity: tuple[str, ...], name: str, value: str
) -> None:
    """kafka-configs sets `name` on `entity`, describes it back with that value, then deletes it."""
    admin_tool(driver, target, "kafka-configs", *entity, "--alter", "--add-config", f"{name}={value}").ok()
    described = admin_tool(driver, target, "kafka-configs", *entity, "--describe").ok().out
    assert f"{name}={value}" in described
    admin_tool(driver, target, "kafka-configs", *entity, "--alter", "--delete-config", name).ok()


def test_kafka_topics_and_kafka_configs(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    topic = unique("tools-topic")
    create_topic(jvm_driver, target, topic, 3, "--config", "retention.ms=3600000")
    again = admin_tool(jvm_driver, target, "kafka-topics", "--create", "--topic", topic, "--partitions", "1")
    assert again.exit == 1
    assert f"Topic '{topic}' already exists" in again.out + again.err

    assert topic in admin_tool(jvm_driver, target, "kafka-topics", "--list").ok().out.split()
    admin_tool(jvm_driver, target, "kafka-topics", "--alter", "--topic", topic, "--partitions", "4").ok()
    described = admin_tool(jvm_driver, target, "kafka-topics", "--describe", "--topic", topic).ok().out
    assert f"PartitionCount: 4\tReplicationFactor: {min(target.nodes, 3)}" in described
    assert "retention.ms=3600000" in described
    assert len(re.findall(rf"Topic: {topic}\tPartition: \d+\tLeader: \d+", described)) == 4

    configs = ("--entity-type", "topics", "--entity-name", topic)
    admin_tool(
        jvm_driver,
        target,
        "kafka-configs",
        *configs,
        "--alter",
        "--add-config",
        "max.message.bytes=65536,segment.ms=600000",
    ).ok()
    admin_tool(
        jvm_driver, target, "kafka-configs", *configs, "--alter", "--delete-config", "retention.ms"
    ).ok()
    topic_configs = admin_tool(jvm_driver, target, "kafka-configs", *configs, "--describe").ok().out
    assert "max.message.bytes=65536" in topic_configs
    assert "segment.ms=600000" in topic_configs
    assert "retention.ms" not in topic_configs
    bad = admin_tool(
        jvm_driver, target, "kafka-configs", *configs, "--alter", "--add-config", "no.such.config=1"
    )
    assert bad.exit != 0
    assert "no.such.config" in bad.out + bad.err

    broker = ("--entity-type", "brokers", "--entity-name", "1")
    _set_describe_delete(jvm_driver, target, broker, "log.cleaner.backoff.ms", "16000")
    all_configs = admin_tool(jvm_driver, target, "kafka-configs", *broker, "--describe", "--all").ok().out
    assert "log.cleaner.backoff.ms=15000" in all_configs
    default = ("--entity-type", "brokers", "--entity-default")
    _set_describe_delete(jvm_driver, target, default, "log.retention.bytes", "1073741824")
    read_only = admin_tool(
        jvm_driver, target, "kafka-configs", *broker, "--alter", "--add-config", "log.dirs=/tmp/x"
    )
    assert read_only.exit != 0
    assert "log.dirs" in read_only.out + read_only.err


def test_scram_users_quotas_and_acls_with_a_limited_user(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    user, password = unique("alice"), "alice-secret-1"
    topic, group = unique("acl-topic"), unique("acl-group")
    create_topic(jvm_driver, target, topic, 2)
    users = ("--entity-type", "users", "--entity-name", user)
    admin_tool(
        jvm_driver,
        target,
        "kafka-configs",
        *users,
        "--alter",
        "--add-config",
        f"SCRAM-SHA-512=[iterations=8192,password={password}]",
    ).ok()
    admin_tool(
        jvm_driver,
        target,
        "kafka-configs",
        *users,
        "--alter",
        "--add-config",
        "producer_byte_rate=10485760,request_percentage=200",
    ).ok()
    client = ("--entity-type", "clients", "--entity-name", f"{user}-client")
    admin_tool(
        jvm_driver, target, "kafka-configs", *client, "--alter", "--add-config", "consumer_byte_rate=2097152"
    ).ok()
    described = admin_tool(jvm_driver, target, "kafka-configs", *users, "--describe").ok().out
    assert (
        f"SCRAM credential configs for user-principal '{user}' are SCRAM-SHA-512=iterations=8192" in described
    )
    assert "producer_byte_rate=1.048576E7" in described
    assert "request_percentage=200.0" in described
    assert (
        "consumer_byte_rate=2097152.0"
        in admin_tool(jvm_driver, target, "kafka-configs", *client, "--describe").ok().out
    )

    # Authenticated but granted nothing: refused.
    denied = produce(jvm_driver, target, topic, 5, user=user, password=password)
    assert not acked_offsets(denied)
    assert (
        "TopicAuthorizationException" in denied.out + denied.err
        or "Not authorized" in denied.out + denied.err
    )

    principal = f"User:{user}"
    acls = ("--allow-principal", principal)
    admin_tool(
        jvm_driver,
        target,
        "kafka-acls",
        "--add",
        *acls,
        "--operation",
        "Write",
        "--operation",
        "Describe",
        "--topic",
        topic,
    ).ok()
    admin_tool(
        jvm_driver,
        target,
        "kafka-acls",
        "--add",
        *acls,
        "--operation",
        "Read",
        "--topic",
        topic,
        "--group",
        group,
    ).ok()
    listed = admin_tool(jvm_driver, target, "kafka-acls", "--list", "--principal", principal).ok().out
    assert listed.count(f"principal={principal}") == 4

    produced = produce(jvm_driver, target, topic, 200, user=user, password=password)
    assert sum(len(offsets) for offsets in acked_offsets(produced).values()) == 200
    consumed = consume(jvm_driver, target, topic, group, 200, user=user, password=password)
    assert sum(consumed_counts(consumed).values()) == 200

    refused = jvm_driver.tool(
        "kafka-topics",
        "--bootstrap-server",
        target.bootstrap,
        "--command-config",
        target.config_file(user, password),
        "--create",
        "--topic",
        unique("not-allowed"),
        "--partitions",
        "1",
    )
    assert refused.exit == 1
    assert "Authorization failed" in refused.out + refused.err

    admin_tool(
        jvm_driver,
        target,
        "kafka-acls",
        "--remove",
        "--force",
        *acls,
        "--operation",
        "Write",
        "--topic",
        topic,
    ).ok()
    assert (
        admin_tool(jvm_driver, target, "kafka-acls", "--list", "--principal", principal)
        .ok()
        .out.count(f"principal={principal}")
        == 3
    )
    admin_tool(
        jvm_driver, target, "kafka-configs", *users, "--alter", "--delete-config", "SCRAM-SHA-512"
    ).ok()
    gone = jvm_driver.tool(
        "kafka-topics",
        "--bootstrap-server",
        target.bootstrap,
        "--command-config",
        target.config_file(user, password),
        "--list",
    )
    assert gone.exit != 0


def test_kafka_consumer_groups_describe_reset_and_delete(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    topic, classic, modern = unique("groups-topic"), unique("classic"), unique("modern")
    create_topic(jvm_driver, target, topic, 3)
    produced = produce(jvm_driver, target, topic, 300)
    acked = acked_offsets(produced)
    assert sum(len(offsets) for offsets in acked.values()) == 300
    # Keyless records go where the sticky partitioner puts them: every partition is counted, empty ones too.
    end_offsets = {partition: len(acked.get(partition, [])) for partition in range(3)}
    assert sum(end_offsets.values()) == 300

    assert sum(consumed_counts(consume(jvm_driver, target, topic, classic, 300)).values()) == 300
    assert (
        sum(consumed_counts(consume(jvm_driver, target, topic, modern, 300, protocol="consumer")).values())
        == 300
    )

    groups = admin_tool(jvm_driver, target, "kafka-consumer-groups", "--list").ok().out.split()
    assert {classic, modern} <= set(groups)

    def committed(group: str) -> dict[int, tuple[int, int]]:
        described = (
            admin_tool(
                jvm_driver, target, "kafka-consumer-groups", "--describe", "--group", group, "--offsets"
            )
            .ok()
            .out
        )
        rows = re.findall(rf"^{group}\s+{topic}\s+(\d+)\s+(\d+|-)\s+(\d+)\s+", described, re.MULTILINE)
        return {
            int(partition): (int(current) if current != "-" else -1, int(end))
            for partition, current, end in rows
        }

    filled = {partition: (end, end) for partition, end in end_offsets.items() if end}
    assert {partition: row for partition, row in committed(classic).items() if partition in filled} == filled
    assert committed(modern) == committed(classic)
    state = (
        admin_tool(jvm_driver, target, "kafka-consumer-groups", "--describe", "--group", modern, "--state")
        .ok()
        .out
    )
    assert re.search(rf"^{modern}\s+127.0.0.1:\d+\s+\(\d\)\s+uniform\s+Empty\s+0\s*$", state, re.MULTILINE), (
        state
    )

    reset = ("--reset-offsets", "--group", classic, "--topic", topic)
    dry = admin_tool(jvm_driver, target, "kafka-consumer-groups", *reset, "--to-earliest", "--dry-run").ok()
    assert committed(classic) == committed(modern)
    assert len(re.findall(rf"{classic}\s+{topic}\s+\d+\s+0", dry.out)) == 3
    admin_tool(jvm_driver, target, "kafka-consumer-groups", *reset, "--to-earliest", "--execute").ok()
    assert committed(classic) == {partition: (0, end) for partition, end in end_offsets.items()}
    busy = max(end_offsets, key=lambda partition: end_offsets[partition])
    admin_tool(
        jvm_driver,
        target,
        "kafka-consumer-groups",
        "--reset-offsets",
        "--group",
        classic,
        "--topic",
        f"{topic}:{busy}",
        "--shift-by",
        "7",
        "--execute",
    ).ok()
    assert committed(classic)[busy][0] == 7
    assert sum(consumed_counts(consume(jvm_driver, target, topic, classic, 293)).values()) == 293

    admin_tool(
        jvm_driver, target, "kafka-consumer-groups", "--delete-offsets", "--group", modern, "--topic", topic
    ).ok()
    assert all(current == -1 for current, _ in committed(modern).values())
    admin_tool(
        jvm_driver, target, "kafka-consumer-groups", "--delete", "--group", classic, "--group", modern
    ).ok()
    remaining = admin_tool(jvm_driver, target, "kafka-consumer-groups", "--list").ok().out.split()
    assert classic not in remaining
    assert modern not in remaining


def test_kafka_transactions_list_describe_find_hanging_and_abort(
    jvm_driver: JvmDriver, target: SecureTarget
) -> None:
    topic, transactional_id = unique("txn-topic"), unique("txn")
    create_topic(jvm_driver, target, topic, 1)
    opened = jvm_driver.check(
        "open_transaction",
        properties=target.client_properties(),
        transactional_id=transactional_id,
        topic=topic,
        partition=0,
        records=3,
    ).ok()
    try:
        listed = admin_tool(jvm_driver, target, "kafka-transactions", "list").ok().out
        assert re.search(rf"^{transactional_id}\s+\d+\s+\d+\s+Ongoing", listed, re.MULTILINE), listed
        described = (
            admin_tool(
                jvm_driver, target, "kafka-transactions", "describe", "--transactional-id", transactional_id
            )
            .ok()
            .out
        )
        assert "Ongoing" in described
        assert f"{topic}-0" in described
        producers = (
            admin_tool(
                jvm_driver,
                target,
                "kafka-transactions",
                "describe-producers",
                "--topic",
                topic,
                "--partition",
                "0",
            )
            .ok()
            .out
        )
        assert re.search(rf"\s{opened.result['first_offset']}\s*$", producers, re.MULTILINE), producers
        hanging = (
            admin_tool(jvm_driver, target, "kafka-transactions", "find-hanging", "--broker-id", "1").ok().out
        )
        assert transactional_id not in hanging

        admin_tool(
            jvm_driver,
            target,
            "kafka-transactions",
            "abort",
            "--topic",
            topic,
            "--partition",
            "0",
            "--start-offset",
            str(opened.result["first_offset"]),
        ).ok()

        def no_open_transaction() -> bool:
            answer = (
                admin_tool(
                    jvm_driver,
                    target,
                    "kafka-transactions",
                    "describe-producers",
                    "--topic",
                    topic,
                    "--partition",
                    "0",
                )
                .ok()
                .out
            )
            return bool(re.search(r"\s-1\s*$", answer, re.MULTILINE)) or "None" in answer

        wait_until(no_open_transaction, timeout=20, what="the aborted transaction to leave the partition")
    finally:
        jvm_driver.check("close_producer", transactional_id=transactional_id)


def test_features_quorum_log_dirs_and_offsets(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    features = admin_tool(jvm_driver, target, "kafka-features", "describe").ok().out
    assert re.search(
        r"Feature: metadata.version\s+SupportedMinVersion: \S+\s+SupportedMaxVersion: \S+\s+FinalizedVersionLevel: \S+",
        features,
    )
    assert "Feature: transaction.version" in features
    assert "Feature: group.version" in features
    downgrade = admin_tool(
        jvm_driver, target, "kafka-features", "downgrade", "--feature", "group.version=0", "--dry-run"
    )
    assert downgrade.exit == 0, downgrade.err

    status = admin_tool(jvm_driver, target, "kafka-metadata-quorum", "describe", "--status").ok().out
    voters = re.search(r"CurrentVoters:\s+(\[.*\])", status)
    assert voters is not None
    assert len(json.loads(voters.group(1))) == target.nodes
    replication = (
        admin_tool(jvm_driver, target, "kafka-metadata-quorum", "describe", "--replication").ok().out
    )
    assert replication.count("Leader") == 1
    assert len(re.findall(r"Follower|Leader", replication)) == target.nodes

    topic = unique("offsets-topic")
    create_topic(jvm_driver, target, topic, 2)
    acked = acked_offsets(produce(jvm_driver, target, topic, 100))
    offsets = admin_tool(jvm_driver, target, "kafka-get-offsets", "--topic", topic, "--time", "-1").ok().out
    assert sorted(offsets.split()) == sorted(
        f"{topic}:{partition}:{len(acked.get(partition, []))}" for partition in (0, 1)
    )
    earliest = (
        admin_tool(jvm_driver, target, "kafka-get-offsets", "--topic", topic, "--time", "earliest").ok().out
    )
    assert sorted(earliest.split()) == [f"{topic}:0:0", f"{topic}:1:0"]

    log_dirs = admin_tool(jvm_driver, target, "kafka-log-dirs", "--describe", "--topic-list", topic).ok().out
    answer = json.loads(log_dirs.strip().splitlines()[-1])
    replicas = [
        partition
        for broker in answer["brokers"]
        for directory in broker["logDirs"]
        for partition in directory["partitions"]
    ]
    assert len(replicas) == 2 * min(target.nodes, 3)
    assert all(
        replica["size"] > 0 for replica in replicas if acked.get(int(replica["partition"].rsplit("-", 1)[1]))
    )


def test_reassign_partitions_and_leader_election(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    topic = unique("reassign-topic")
    replicas = [1] if target.nodes == 1 else [1, 2]
    admin_tool(
        jvm_driver,
        target,
        "kafka-topics",
        "--create",
        "--topic",
        topic,
        "--replica-assignment",
        ":".join(map(str, replicas)),
    ).ok()
    produce(jvm_driver, target, topic, 50)
    moved = [1] if target.nodes == 1 else [3, 2]
    plan = target.work_dir / f"{topic}.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": moved}]})
    )
    admin_tool(
        jvm_driver, target, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--execute"
    ).ok()

    def verified() -> bool:
        out = (
            admin_tool(
                jvm_driver,
                target,
                "kafka-reassign-partitions",
                "--reassignment-json-file",
                str(plan),
                "--verify",
            )
            .ok()
            .out
        )
        return f"Reassignment of partition {topic}-0 is completed" in out

    wait_until(verified, timeout=60, what="the reassignment to complete", interval=1)
    described = admin_tool(jvm_driver, target, "kafka-topics", "--describe", "--topic", topic).ok().out
    assert f"Replicas: {','.join(map(str, moved))}\t" in described
    assert (
        "No partition reassignments found"
        in admin_tool(jvm_driver, target, "kafka-reassign-partitions", "--list").ok().out
    )

    election = (
        admin_tool(
            jvm_driver,
            target,
            "kafka-leader-election",
            "--election-type",
            "preferred",
            "--topic",
            topic,
            "--partition",
            "0",
        )
        .ok()
        .out
    )
    if target.nodes == 1:
        assert "Valid replica already elected for partitions" in election
    else:

        def led_by_preferred() -> bool:
            out = admin_tool(jvm_driver, target, "kafka-topics", "--describe", "--topic", topic).ok().out
            return f"Leader: {moved[0]}\t" in out

        wait_until(led_by_preferred, timeout=30, what="the preferred replica to lead")


def test_kafka_delegation_tokens(jvm_driver: JvmDriver, target: SecureTarget) -> None:
    created = (
        admin_tool(
            jvm_driver,
            target,
            "kafka-delegation-tokens",
            "--create",
            "--max-life-time-period",
            "-1",
            "--renewer-principal",
            "User:admin",
        )
        .ok()
        .out
    )
    token = re.search(
        r"^(\S+)\s+(\S+)\s+User:admin\s+", created.split("TOKENID", 1)[1].split("\n", 2)[2], re.MULTILINE
    )
    assert token is not None, created
    token_id, hmac = token.group(1), token.group(2)
    # `--describe` alone asks for no owner's tokens (Apache Kafka answers none too).
    owned = ("--describe", "--owner-principal", "User:admin")
    assert token_id in admin_tool(jvm_driver, target, "kafka-delegation-tokens", *owned).ok().out
    admin_tool(
        jvm_driver,
        target,
        "kafka-delegation-tokens",
        "--renew",
        "--hmac",
        hmac,
        "--renew-time-period",
        "3600000",
    ).ok()
    admin_tool(
        jvm_driver,
        target,
        "kafka-delegation-tokens",
        "--expire",
        "--hmac",
        hmac,
        "--expiry-time-period",
        "-1",
    ).ok()
    assert token_id not in admin_tool(jvm_driver, target, "kafka-delegation-tokens", *owned).ok().out
