"""The requests sent to both brokers: valid, edge-case and invalid ones, for every API key both serve.

A `Step` is one request; its body is built for each version by `tests.fixtures.entity_trees.entity_from_tree`, which
keeps the fields that version has, so one body serves every version of a key. Steps run in order on both brokers
(each request to Apache Kafka, then the same to ours), so state built by earlier steps is the same on both.
A body may read what an earlier answer of the *same* broker told (`Context`: topic ids, member ids, producer ids),
which is how flows (join → sync → heartbeat → leave, init → add → produce → end) are expressed.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from broker.share.state_records import share_coordinator_key
from broker.wire.records.records import Record, build_batch

Body = dict[str, Any]
Context = dict[str, Any]
# Records' timestamps: fixed for a run and the same on both brokers, and recent — records older than retention.ms
# (7 days) are deleted by a broker's first retention pass (Kafka's runs 30 s after it starts), and Kafka 4 refuses
# timestamps more than an hour ahead.
BASE_TIMESTAMP = (int(time.time()) // 3600 - 1) * 3600 * 1000


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    api_key: int
    body: Callable[[int, Context], Body]
    kind: str = "valid"  # valid | edge | invalid
    # Which of the versions both brokers serve to send (default: all of them).
    versions: Callable[[list[int]], Iterable[int]] | None = None
    # Reads what later steps need from this broker's answer (answer, context, version).
    remember: Callable[[Any, Context, int], None] | None = None
    # The answer lists everything of a kind the broker has: only this run's entries are compared.
    listing: bool = False
    # Topics that must be visible in Metadata on both brokers before the next step (Kafka creates them in the
    # controller and then propagates them to its brokers' metadata caches).
    settle_topics: Callable[[int], list[str]] | None = None
    # Resent while a coordinator is still loading or not yet available (14, 15), as clients do: Kafka creates
    # __consumer_offsets and __transaction_state on first use.
    retry_coordinator: bool = False


def highest(versions: list[int]) -> list[int]:
    return versions[-1:]


def records(*values: bytes, key: bytes | None = b"k", start: int = 0, **batch: Any) -> bytes:
    return build_batch(
        [Record(key, value, (), BASE_TIMESTAMP + start + index) for index, value in enumerate(values)],
        **batch,
    )


class Names:
    """Names of everything the corpus creates, unique to one run (the same on both brokers)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.topic = f"conf-{token}-main"
        self.compacted = f"conf-{token}-compacted"
        self.missing = f"conf-{token}-missing"
        self.group = f"conf-{token}-group"
        self.txn = f"conf-{token}-txn"

    def per_version(self, what: str, version: int) -> str:
        return f"conf-{self.token}-{what}-v{version}"


def _remember_topic_ids(response: Any, context: Context, version: int) -> None:
    for topic in response.topics:
        if topic.name is not None and getattr(topic, "topic_id", None) is not None:
            context.setdefault("topic_ids", {})[topic.name] = topic.topic_id


UNKNOWN_TOPIC_ID = uuid.UUID(int=0xABCD)


def _topic_id(context: Context, name: str) -> Any:
    return context.get("topic_ids", {}).get(name)


def _partition_fetch(offset: int = 0, partition: int = 0, max_bytes: int = 1 << 20) -> Body:
    return {
        "partition": partition,
        "current_leader_epoch": -1,
        "fetch_offset": offset,
        "last_fetched_epoch": -1,
        "log_start_offset": -1,
        "partition_max_bytes": max_bytes,
    }


def fetch(
    names: Names, name: str, partitions: list[Body], isolation: int = 0
) -> Callable[[int, Context], Body]:
    def body(version: int, context: Context) -> Body:
        return {
            "replica_id": -1,
            "max_wait": 0,
            "min_bytes": 0,
            "max_bytes": 1 << 20,
            "isolation_level": isolation,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": name, "topic_id": _topic_id(context, name), "partitions": partitions}],
            "forgotten_topics_data": [],
            "rack_id": "",
        }

    return body


def produce(
    name: str, batch: bytes, partition: int = 0, acks: int = -1, **extra: Any
) -> Callable[[int, Context], Body]:
    return lambda version, context: {
        "acks": acks,
        "timeout": 5000,
        "transactional_id": None,
        **extra,
        "topic_data": [
            {
                "name": name,
                # v13+ names the topic by id (an unknown topic: an id no topic has).
                "topic_id": _topic_id(context, name) or UNKNOWN_TOPIC_ID,
                "partition_data": [{"index": partition, "records": batch}],
            }
        ],
    }


def _topic_config(name: str, partitions: int = 3, **configs: str) -> Body:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": 1,
        "assignments": [],
        "configs": [{"name": key, "value": value} for key, value in configs.items()],
    }


def create_topics(*topics: Body, validate_only: bool = False) -> Callable[[int, Context], Body]:
    return lambda version, context: {"topics": list(topics), "timeout": 5000, "validate_only": validate_only}


def metadata(*names: str | None) -> Callable[[int, Context], Body]:
    def body(version: int, context: Context) -> Body:
        topics = None if names == (None,) else [{"name": name, "topic_id": None} for name in names]
        return {
            "topics": topics,
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }

    return body


def list_offsets(
    name: str, timestamp: int, partition: int = 0, isolation: int = 0
) -> Callable[[int, Context], Body]:
    return lambda version, context: {
        "replica_id": -1,
        "isolation_level": isolation,
        "timeout": 1000,
        "topics": [
            {
                "name": name,
                "partitions": [
                    {"partition_index": partition, "current_leader_epoch": -1, "timestamp": timestamp}
                ],
            }
        ],
    }


def _setup_and_data_path(names: Names) -> list[Step]:
    main, compacted, missing = names.topic, names.compacted, names.missing
    return [
        Step(
            "create the main topic (3 partitions)",
            19,
            create_topics(_topic_config(main)),
            versions=highest,
            settle_topics=lambda v: [main],
        ),
        Step(
            "create a compacted topic",
            19,
            create_topics(_topic_config(compacted, 1, **{"cleanup.policy": "compact"})),
            versions=highest,
            settle_topics=lambda v: [compacted],
        ),
        Step("metadata of the topics", 3, metadata(main, compacted), remember=_remember_topic_ids),
        Step(
            "metadata of every topic",
            3,
            metadata(None),
            kind="edge",
            versions=lambda v: [x for x in v if x >= 1],
            listing=True,
        ),
        Step(
            "metadata of an unknown topic",
            3,
            metadata(missing),
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 4],
        ),
        Step(
            "metadata auto-creates a topic: v0–3 always allow it",
            3,
            lambda v, c: metadata(names.per_version("auto", v))(v, c),
            kind="edge",
            versions=lambda v: [x for x in v if x <= 3],
            settle_topics=lambda v: [names.per_version("auto", v)],
        ),
        Step("metadata of an illegal topic name", 3, metadata("bad/name"), kind="invalid"),
        Step("produce records", 0, produce(main, records(b"one", b"two", b"three"))),
        Step("produce with acks=1 to partition 1", 0, produce(main, records(b"p1"), partition=1, acks=1)),
        Step(
            "produce acks=0 is answered by nothing",
            0,
            produce(main, records(b"fire"), partition=2, acks=0),
            kind="edge",
            versions=highest,
        ),
        Step(
            "produce headers and a null key",
            0,
            produce(main, build_batch([Record(None, b"h", (("h", b"v"),), BASE_TIMESTAMP)]), partition=2),
        ),
        Step("produce to an unknown topic", 0, produce(missing, records(b"x")), kind="invalid"),
        Step("produce to an unknown partition", 0, produce(main, records(b"x"), partition=7), kind="invalid"),
        Step("produce with acks=2", 0, produce(main, records(b"x"), acks=2), kind="invalid"),
        Step(
            "produce a keyless record to a compacted topic",
            0,
            produce(compacted, records(b"x", key=None)),
            kind="invalid",
        ),
        Step("produce a keyed record to a compacted topic", 0, produce(compacted, records(b"x"))),
        Step("produce a control batch", 0, produce(main, records(b"x", control=True)), kind="invalid"),
        Step(
            "produce a batch with a bad CRC", 0, produce(main, records(b"x")[:-1] + b"\x00"), kind="invalid"
        ),
        Step("fetch from offset 0", 1, fetch(names, main, [_partition_fetch(0)])),
        Step(
            "fetch partitions 1 and 2",
            1,
            fetch(names, main, [_partition_fetch(0, 1), _partition_fetch(0, 2)]),
        ),
        Step("fetch past the log end", 1, fetch(names, main, [_partition_fetch(10_000)]), kind="invalid"),
        Step("fetch an unknown partition", 1, fetch(names, main, [_partition_fetch(0, 9)]), kind="invalid"),
        Step(
            "fetch an unknown topic",
            1,
            fetch(names, missing, [_partition_fetch(0)]),
            kind="invalid",
            versions=lambda v: [x for x in v if x < 13],
        ),
        Step("fetch read_committed", 1, fetch(names, main, [_partition_fetch(0)], isolation=1)),
        Step("list offsets earliest", 2, list_offsets(main, -2)),
        Step("list offsets latest", 2, list_offsets(main, -1)),
        Step("list offsets by timestamp", 2, list_offsets(main, BASE_TIMESTAMP + 1)),
        Step("list offsets after every timestamp", 2, list_offsets(main, BASE_TIMESTAMP * 2), kind="edge"),
        Step("list offsets max timestamp", 2, list_offsets(main, -3), kind="edge"),
        Step("list offsets of an unknown partition", 2, list_offsets(main, -1, partition=9), kind="invalid"),
        Step("list offsets of an unknown topic", 2, list_offsets(missing, -1), kind="invalid"),
        Step("list offsets read_committed", 2, list_offsets(main, -1, isolation=1)),
        Step(
            "offset for leader epoch",
            23,
            lambda v, c: {
                "replica_id": -1,
                "topics": [
                    {
                        "topic": main,
                        "partitions": [
                            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0},
                            {"partition": 9, "current_leader_epoch": -1, "leader_epoch": 0},
                        ],
                    }
                ],
            },
        ),
        Step(
            "offset for a future leader epoch",
            23,
            lambda v, c: {
                "replica_id": -1,
                "topics": [
                    {
                        "topic": main,
                        "partitions": [{"partition": 0, "current_leader_epoch": 5, "leader_epoch": 5}],
                    }
                ],
            },
            kind="invalid",
        ),
        Step(
            "delete records before offset 1",
            21,
            lambda v, c: {
                "topics": [{"name": main, "partitions": [{"partition_index": 1, "offset": 0}]}],
                "timeout": 5000,
            },
        ),
        Step(
            "delete records past the high watermark",
            21,
            lambda v, c: {
                "topics": [{"name": main, "partitions": [{"partition_index": 0, "offset": 999}]}],
                "timeout": 5000,
            },
            kind="invalid",
        ),
        Step(
            "delete records of a compacted topic",
            21,
            lambda v, c: {
                "topics": [{"name": compacted, "partitions": [{"partition_index": 0, "offset": 0}]}],
                "timeout": 5000,
            },
            kind="invalid",
        ),
        Step(
            "delete records of an unknown topic",
            21,
            lambda v, c: {
                "topics": [{"name": missing, "partitions": [{"partition_index": 0, "offset": 0}]}],
                "timeout": 5000,
            },
            kind="invalid",
        ),
        Step(
            "describe topic partitions",
            75,
            lambda v, c: {
                "topics": [{"name": main}, {"name": missing}],
                "response_partition_limit": 2,
                "cursor": None,
            },
        ),
        Step(
            "describe producers",
            61,
            lambda v, c: {
                "topics": [
                    {"name": main, "partition_indexes": [0, 9]},
                    {"name": missing, "partition_indexes": [0]},
                ]
            },
        ),
    ]


def _admin(names: Names) -> list[Step]:
    main, missing = names.topic, names.missing

    def per_version_topic(what: str, **extra: Any) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "topics": [_topic_config(names.per_version(what, v), 2) | extra],
            "timeout": 5000,
            "validate_only": False,
        }

    def configs(
        resource_type: int, name: str, keys: list[str] | None = None
    ) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "resources": [
                {"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}
            ],
            "include_synonyms": True,
            "include_documentation": False,
        }

    def alter(
        resource_type: int, name: str, entries: dict[str, str], validate: bool = True
    ) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "resources": [
                {
                    "resource_type": resource_type,
                    "resource_name": name,
                    "configs": [{"name": k, "value": x} for k, x in entries.items()],
                }
            ],
            "validate_only": validate,
        }

    def incremental(
        resource_type: int, name: str, operations: list[tuple[str, int, str | None]], validate: bool = False
    ) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "resources": [
                {
                    "resource_type": resource_type,
                    "resource_name": name,
                    "configs": [{"name": k, "config_operation": op, "value": x} for k, op, x in operations],
                }
            ],
            "validate_only": validate,
        }

    return [
        Step(
            "create topics, one per version",
            19,
            per_version_topic("created"),
            settle_topics=lambda v: [names.per_version("created", v)],
        ),
        Step("create a topic that exists", 19, create_topics(_topic_config(main)), kind="invalid"),
        Step(
            "create with validate_only",
            19,
            create_topics(_topic_config(names.per_version("validated", 0)), validate_only=True),
            kind="edge",
        ),
        Step(
            "create with 0 partitions",
            19,
            create_topics(_topic_config(names.per_version("zero", 0), 0)),
            kind="invalid",
        ),
        Step("create with an invalid name", 19, create_topics(_topic_config("bad name!")), kind="invalid"),
        Step(
            "create with an unknown config",
            19,
            create_topics(_topic_config(names.per_version("cfg", 0), 1, **{"no.such.config": "1"})),
            kind="invalid",
        ),
        Step(
            "create with a bad config value",
            19,
            create_topics(_topic_config(names.per_version("badcfg", 0), 1, **{"retention.ms": "soon"})),
            kind="invalid",
        ),
        Step(
            "create with replication factor 3 on one broker",
            19,
            create_topics(_topic_config(names.per_version("rf3", 0), 1) | {"replication_factor": 3}),
            kind="invalid",
        ),
        Step(
            "create partitions 2 → 4",
            37,
            lambda v, c: {
                "topics": [{"name": names.per_version("created", 7), "count": 4 + v, "assignments": None}],
                "timeout": 5000,
                "validate_only": False,
            },
        ),
        Step(
            "create partitions fewer than now",
            37,
            lambda v, c: {
                "topics": [{"name": main, "count": 1, "assignments": None}],
                "timeout": 5000,
                "validate_only": False,
            },
            kind="invalid",
        ),
        Step(
            "create partitions of an unknown topic",
            37,
            lambda v, c: {
                "topics": [{"name": missing, "count": 5, "assignments": None}],
                "timeout": 5000,
                "validate_only": True,
            },
            kind="invalid",
        ),
        Step("describe topic configs", 32, configs(2, main)),
        Step(
            "describe some topic configs",
            32,
            configs(2, main, ["retention.ms", "cleanup.policy", "no.such.config"]),
            kind="edge",
        ),
        Step("describe configs of an unknown topic", 32, configs(2, missing), kind="invalid"),
        Step(
            "describe a broker's config",
            32,
            configs(4, "1", ["num.partitions", "log.retention.hours", "message.max.bytes"]),
        ),
        Step("describe configs of an unknown broker", 32, configs(4, "7"), kind="invalid"),
        Step("describe configs of a malformed broker id", 32, configs(4, "one"), kind="invalid"),
        Step("alter configs (validate only)", 33, alter(2, main, {"retention.ms": "1000"})),
        Step("alter configs with a bad value", 33, alter(2, main, {"retention.ms": "soon"}), kind="invalid"),
        Step(
            "alter configs of an unknown topic", 33, alter(2, missing, {"retention.ms": "1"}), kind="invalid"
        ),
        Step(
            "alter a broker's network thread count",
            33,
            alter(4, "1", {"num.network.threads": "3"}),
            kind="invalid",
        ),
        Step("incremental alter: set", 44, incremental(2, main, [("retention.ms", 0, "123456")])),
        Step(
            "incremental alter: append to a list",
            44,
            incremental(2, main, [("cleanup.policy", 2, "compact")]),
        ),
        Step(
            "incremental alter: delete",
            44,
            incremental(2, main, [("retention.ms", 1, None), ("cleanup.policy", 1, None)]),
        ),
        Step(
            "incremental alter: append to a non-list",
            44,
            incremental(2, main, [("retention.ms", 2, "1")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: unknown config",
            44,
            incremental(2, main, [("no.such.config", 0, "1")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: same config twice",
            44,
            incremental(2, main, [("retention.ms", 0, "1"), ("retention.ms", 0, "2")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: unknown operation",
            44,
            incremental(2, main, [("retention.ms", 9, "1")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: Kafka 4.2's topic configs",
            44,
            incremental(
                2,
                main,
                [
                    ("compression.zstd.level", 0, "-5"),
                    ("leader.replication.throttled.replicas", 0, "0:1,1:2"),
                    ("local.retention.ms", 0, "-2"),
                    ("remote.log.copy.disable", 0, "true"),
                ],
            ),
        ),
        Step(
            "incremental alter: a compression level out of range",
            44,
            incremental(2, main, [("compression.gzip.level", 0, "0")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: throttled replicas not partition:broker",
            44,
            incremental(2, main, [("follower.replication.throttled.replicas", 0, "0 : 1")]),
            kind="invalid",
        ),
        Step(
            "incremental alter: remote storage without tiered storage",
            44,
            incremental(2, main, [("remote.storage.enable", 0, "true")]),
            kind="invalid",
        ),
        Step(
            "describe Kafka 4.2's topic configs",
            32,
            configs(
                2,
                main,
                [
                    "compression.zstd.level",
                    "compression.gzip.level",
                    "leader.replication.throttled.replicas",
                    "local.retention.ms",
                    "remote.log.copy.disable",
                    "remote.storage.enable",
                ],
            ),
        ),
        Step("describe configs after the changes", 32, configs(2, main, ["retention.ms", "cleanup.policy"])),
        Step(
            "list every config resource (v0: client metrics)",
            74,
            lambda v, c: {"resource_types": []},
            kind="edge",
            listing=True,
        ),
        Step(
            "list config resources",
            74,
            lambda v, c: {"resource_types": [2] if v >= 1 else []},
            kind="edge",
            versions=lambda v: [x for x in v if x >= 1],
            listing=True,
        ),
        Step(
            "describe cluster",
            60,
            lambda v, c: {
                "include_cluster_authorized_operations": True,
                "endpoint_type": 1,
                "include_fenced_brokers": False,
            },
        ),
        Step(
            "describe cluster for controllers",
            60,
            lambda v, c: {
                "include_cluster_authorized_operations": False,
                "endpoint_type": 2,
                "include_fenced_brokers": False,
            },
            kind="edge",
            versions=lambda v: [x for x in v if x >= 1],
        ),
        Step(
            "describe log dirs of a topic",
            35,
            lambda v, c: {"topics": [{"topic": names.compacted, "partitions": [0, 5]}]},
        ),
        Step(
            "alter replica log dirs to an unknown dir",
            34,
            lambda v, c: {"dirs": [{"path": "/nonexistent", "topics": [{"name": main, "partitions": [0]}]}]},
            kind="invalid",
        ),
        Step("list partition reassignments", 46, lambda v, c: {"timeout": 1000, "topics": None}),
        Step(
            "list reassignments of an unknown topic",
            46,
            lambda v, c: {"timeout": 1000, "topics": [{"name": missing, "partition_indexes": [0]}]},
            kind="invalid",
        ),
        Step(
            "alter reassignments: cancel none in progress",
            45,
            lambda v, c: {
                "timeout": 1000,
                "topics": [{"name": main, "partitions": [{"partition_index": 0, "replicas": None}]}],
            },
            kind="invalid",
        ),
        Step(
            "alter reassignments: unknown broker",
            45,
            lambda v, c: {
                "timeout": 1000,
                "topics": [{"name": main, "partitions": [{"partition_index": 0, "replicas": [7]}]}],
            },
            kind="invalid",
        ),
        Step(
            "elect leaders: preferred",
            43,
            lambda v, c: {
                "election_type": 0,
                "topic_partitions": [{"topic": main, "partitions": [0, 9]}],
                "timeout": 1000,
            },
        ),
        Step(
            "elect leaders: unclean",
            43,
            lambda v, c: {
                "election_type": 1,
                "topic_partitions": [{"topic": main, "partitions": [0]}],
                "timeout": 1000,
            },
            kind="edge",
            versions=lambda v: [x for x in v if x >= 1],
        ),
        Step(
            "describe quorum",
            55,
            lambda v, c: {
                "topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
            },
        ),
        Step(
            "describe quorum of another topic",
            55,
            lambda v, c: {"topics": [{"topic_name": main, "partitions": [{"partition_index": 0}]}]},
            kind="invalid",
        ),
        Step(
            "update features: validate a no-op",
            57,
            lambda v, c: {
                "timeout": 1000,
                "feature_updates": [
                    {
                        "feature": "group.version",
                        "max_version_level": 1,
                        "allow_downgrade": False,
                        "upgrade_type": 1,
                    }
                ],
                "validate_only": True,
            },
        ),
        Step(
            "update features: unknown feature",
            57,
            lambda v, c: {
                "timeout": 1000,
                "feature_updates": [
                    {
                        "feature": "no.such.feature",
                        "max_version_level": 1,
                        "allow_downgrade": False,
                        "upgrade_type": 1,
                    }
                ],
                "validate_only": True,
            },
            kind="invalid",
        ),
        Step("unregister an unknown broker", 64, lambda v, c: {"broker_id": 7}, kind="invalid"),
        Step(
            "add a raft voter that does not answer",
            80,
            lambda v, c: {
                "cluster_id": None,
                "timeout": 1000,
                "voter_id": 9,
                "voter_directory_id": uuid.UUID(int=1),
                "listeners": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 1}],
            },
            kind="invalid",
        ),
        Step(
            "remove a raft voter that is not one",
            81,
            lambda v, c: {"cluster_id": None, "voter_id": 9, "voter_directory_id": uuid.UUID(int=1)},
            kind="invalid",
        ),
        Step(
            "delete the per-version topics",
            20,
            lambda v, c: {
                "topic_names": [names.per_version("created", v)],
                "topics": [{"name": names.per_version("created", v), "topic_id": None}],
                "timeout": 5000,
            },
        ),
        Step(
            "delete an unknown topic",
            20,
            lambda v, c: {
                "topic_names": [missing],
                "topics": [{"name": missing, "topic_id": None}],
                "timeout": 5000,
            },
            kind="invalid",
        ),
        Step(
            "delete an unknown topic id",
            20,
            lambda v, c: {"topics": [{"name": None, "topic_id": uuid.UUID(int=0xABCD)}], "timeout": 5000},
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 6],
        ),
    ]


CONSUMER_PROTOCOL = b"\x00\x03\x00\x00\x00\x01\x00\x04main\xff\xff\xff\xff\x00\x00\x00\x00"


def _remember_member(response: Any, context: Context, version: int) -> None:
    """Each version's flow has a group of its own, so members are remembered per version."""
    context.setdefault("members", {})[version] = (response.member_id, int(response.generation_id))


def _member(context: Context, version: int) -> tuple[str, int]:
    return context.get("members", {}).get(version, ("", -1))


def _groups(names: Names) -> list[Step]:
    main, group = names.topic, names.group

    def group_of(version: int) -> str:
        return f"{group}-v{version}"

    def join(member: Callable[[int, Context], str]) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "group_id": group_of(v),
            "session_timeout": 10000,
            "rebalance_timeout": 10000,
            "member_id": member(v, c),
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": CONSUMER_PROTOCOL}],
            "reason": None,
        }

    def with_member(**fields: Any) -> Callable[[int, Context], Body]:
        return lambda v, c: (
            {
                "group_id": group_of(v),
                "generation_id": _member(c, v)[1],
                "member_id": _member(c, v)[0],
                "group_instance_id": None,
            }
            | fields
        )

    def commit(
        generation: Callable[[int, Context], int], member: Callable[[int, Context], str], partition: int = 0
    ) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "group_id": group_of(v),
            "generation_id_or_member_epoch": generation(v, c),
            "member_id": member(v, c),
            "group_instance_id": None,
            "retention_time": -1,
            "topics": [
                {
                    "name": main,
                    "topic_id": _topic_id(c, main),
                    "partitions": [
                        {
                            "partition_index": partition,
                            "committed_offset": 2,
                            "committed_leader_epoch": -1,
                            "committed_metadata": "m",
                        }
                    ],
                }
            ],
        }

    def offset_fetch(
        group_id: Callable[[int], str], topics: list[Body] | None
    ) -> Callable[[int, Context], Body]:
        def with_ids(c: Context) -> list[Body] | None:
            # v10 names topics by id.
            return None if topics is None else [{**t, "topic_id": _topic_id(c, t["name"])} for t in topics]

        return lambda v, c: {
            "group_id": group_id(v),
            "topics": topics,
            "groups": [
                {"group_id": group_id(v), "member_id": None, "member_epoch": -1, "topics": with_ids(c)}
            ],
            "require_stable": False,
        }

    every_version = [{"name": main, "partition_indexes": [0, 1, 9]}]
    # JoinGroup v4+ asks a member without an id to rejoin with the one it is given (KIP-394).
    first_join = Step(
        "join a group (new member)",
        11,
        join(lambda v, c: ""),
        remember=_remember_member,
        retry_coordinator=True,
    )
    return [
        Step(
            "find the group coordinator",
            10,
            lambda v, c: {"key": group_of(v), "key_type": 0, "coordinator_keys": [group_of(v)]},
            retry_coordinator=True,
        ),
        Step(
            "find a coordinator of an unknown key type",
            10,
            lambda v, c: {"key": group, "key_type": 5, "coordinator_keys": [group]},
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 1],
        ),
        first_join,
        Step(
            "join again with the given member id",
            11,
            join(lambda v, c: _member(c, v)[0]),
            remember=_remember_member,
        ),
        Step("join with an unknown member id", 11, join(lambda v, c: "nobody"), kind="invalid"),
        Step(
            "join with a session timeout below the minimum",
            11,
            lambda v, c: join(lambda v, c: "")(v, c) | {"session_timeout": 10},
            kind="invalid",
        ),
        Step(
            "sync the leader's assignment",
            14,
            with_member(protocol_type="consumer", protocol_name="range", assignments=[]),
            versions=lambda v: [x for x in v if x <= 9],
        ),
        Step(
            "sync with a wrong generation",
            14,
            lambda v, c: (
                with_member(protocol_type="consumer", protocol_name="range", assignments=[])(v, c)
                | {"generation_id": 99}
            ),
            kind="invalid",
        ),
        Step("heartbeat", 12, with_member()),
        Step(
            "heartbeat of an unknown member",
            12,
            lambda v, c: with_member()(v, c) | {"member_id": "nobody"},
            kind="invalid",
        ),
        Step(
            "heartbeat of an unknown group",
            12,
            lambda v, c: with_member()(v, c) | {"group_id": names.missing},
            kind="invalid",
        ),
        Step(
            "commit offsets as the member",
            8,
            commit(lambda v, c: _member(c, v)[1], lambda v, c: _member(c, v)[0]),
        ),
        Step(
            "commit offsets with a stale generation",
            8,
            commit(lambda v, c: 99, lambda v, c: _member(c, v)[0]),
            kind="invalid",
        ),
        Step(
            "commit offsets as an unknown member (a group awaiting its sync from v6)",
            8,
            commit(lambda v, c: _member(c, v)[1], lambda v, c: "nobody"),
            kind="invalid",
        ),
        Step(
            "commit offsets to an unknown partition",
            8,
            commit(lambda v, c: _member(c, v)[1], lambda v, c: _member(c, v)[0], partition=9),
            kind="invalid",
        ),
        Step("fetch committed offsets", 9, offset_fetch(group_of, every_version)),
        Step(
            "fetch every committed offset",
            9,
            offset_fetch(group_of, None),
            kind="edge",
            versions=lambda v: [x for x in v if x >= 2],
        ),
        Step(
            "fetch offsets of an unknown group",
            9,
            offset_fetch(lambda v: names.missing, every_version),
            kind="edge",
        ),
        Step(
            "describe the groups",
            15,
            lambda v, c: {"groups": [group_of(v), names.missing], "include_authorized_operations": True},
        ),
        Step(
            "list groups",
            16,
            listing=True,
            body=lambda v, c: {"states_filter": ["Stable"] if v >= 4 else [], "types_filter": []},
            versions=lambda v: [x for x in v if x >= 4],
        ),
        Step("list every group", 16, lambda v, c: {"states_filter": [], "types_filter": []}, listing=True),
        Step(
            "list groups of an unknown state",
            16,
            lambda v, c: {"states_filter": ["Sleeping"], "types_filter": []},
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 4],
        ),
        Step("delete a group with members", 42, lambda v, c: {"groups_names": [group_of(v)]}, kind="invalid"),
        Step(
            "delete the offset of a subscribed topic",
            47,
            lambda v, c: {
                "group_id": group_of(0),
                "topics": [{"name": main, "partitions": [{"partition_index": 0}]}],
            },
            kind="invalid",
        ),
        Step(
            "leave the group",
            13,
            lambda v, c: {
                "group_id": group_of(v),
                "member_id": _member(c, v)[0],
                "members": [{"member_id": _member(c, v)[0], "group_instance_id": None, "reason": "done"}],
            },
        ),
        Step(
            "leave an unknown group",
            13,
            lambda v, c: {
                "group_id": names.missing,
                "member_id": "nobody",
                "members": [{"member_id": "nobody", "group_instance_id": None, "reason": None}],
            },
            kind="invalid",
        ),
        Step(
            "commit offsets of a simple (memberless) group",
            8,
            lambda v, c: commit(lambda v, c: -1, lambda v, c: "")(v, c) | {"group_id": f"{group}-simple"},
        ),
        Step(
            "delete the offset of an unsubscribed topic",
            47,
            lambda v, c: {
                "group_id": f"{group}-simple",
                "topics": [{"name": main, "partitions": [{"partition_index": 0}, {"partition_index": 9}]}],
            },
        ),
        Step("delete the empty groups", 42, lambda v, c: {"groups_names": [group_of(v), names.missing]}),
        Step(
            "consumer group heartbeat: join",
            68,
            lambda v, c: {
                "group_id": f"{group}-consumer-v{v}",
                "member_id": f"{'m' * 22}",
                "member_epoch": 0,
                "instance_id": None,
                "rack_id": None,
                "rebalance_timeout": 30000,
                "subscribed_topic_names": [main],
                "subscribed_topic_regex": None,
                "server_assignor": "uniform",
                "topic_partitions": [],
            },
        ),
        Step(
            "consumer group heartbeat: join without a subscription",
            68,
            lambda v, c: {
                "group_id": f"{group}-bad",
                "member_id": "",
                "member_epoch": 0,
                "instance_id": None,
                "rack_id": None,
                "rebalance_timeout": 30000,
                "subscribed_topic_names": None,
                "subscribed_topic_regex": None,
                "server_assignor": None,
                "topic_partitions": [],
            },
            kind="invalid",
        ),
        Step(
            "consumer group heartbeat: unknown assignor",
            68,
            lambda v, c: {
                "group_id": f"{group}-bad",
                "member_id": "m" * 22,
                "member_epoch": 0,
                "instance_id": None,
                "rack_id": None,
                "rebalance_timeout": 30000,
                "subscribed_topic_names": [main],
                "subscribed_topic_regex": None,
                "server_assignor": "roundest",
                "topic_partitions": [],
            },
            kind="invalid",
        ),
        Step(
            "consumer group describe",
            69,
            lambda v, c: {
                "group_ids": [f"{group}-consumer-v{v}", names.missing, group_of(0)],
                "include_authorized_operations": False,
            },
        ),
        Step(
            "consumer group heartbeat: join asking for the range assignor",
            68,
            lambda v, c: {
                "group_id": f"{group}-range-v{v}",
                "member_id": "r" * 22,
                "member_epoch": 0,
                "instance_id": None,
                "rack_id": None,
                "rebalance_timeout": 30000,
                "subscribed_topic_names": [main],
                "subscribed_topic_regex": None,
                "server_assignor": "range",
                "topic_partitions": [],
            },
        ),
        Step(
            "consumer group heartbeat: leave",
            68,
            lambda v, c: {
                "group_id": f"{group}-range-v{v}",
                "member_id": "r" * 22,
                "member_epoch": -1,
                "instance_id": None,
                "rack_id": None,
                "rebalance_timeout": -1,
                "subscribed_topic_names": None,
                "subscribed_topic_regex": None,
                "server_assignor": None,
                "topic_partitions": None,
            },
        ),
        Step(
            # No member asks for an assignor any more: Kafka describes its default one.
            "consumer group describe after its only member left",
            69,
            lambda v, c: {"group_ids": [f"{group}-range-v{v}"], "include_authorized_operations": False},
        ),
        Step(
            "streams group heartbeat without a member id",
            88,
            lambda v, c: _streams_heartbeat(f"{group}-streams", "", 0),
            kind="invalid",
        ),
        Step(
            "streams group heartbeat joining without a rebalance timeout",
            88,
            lambda v, c: _streams_heartbeat(f"{group}-streams", "member-1", 0),
            kind="invalid",
        ),
        Step(
            "streams group heartbeat of a group that does not exist",
            88,
            lambda v, c: _streams_heartbeat(f"{group}-streams", "member-1", 5),
            kind="invalid",
        ),
        Step(
            "streams group describe of a group that does not exist",
            89,
            lambda v, c: {"group_ids": [names.missing], "include_authorized_operations": False},
            kind="invalid",
        ),
    ]


def _streams_heartbeat(group_id: str, member_id: str, member_epoch: int) -> Body:
    return {
        "group_id": group_id,
        "member_id": member_id,
        "member_epoch": member_epoch,
        "endpoint_information_epoch": 0,
        "active_tasks": None,
        "standby_tasks": None,
        "warmup_tasks": None,
        "client_tags": None,
        "task_offsets": None,
        "task_end_offsets": None,
    }


def _remember_producer(response: Any, context: Context, version: int) -> None:
    context["producer_id"] = int(response.producer_id)
    context["producer_epoch"] = int(response.producer_epoch)


def _transactions(names: Names) -> list[Step]:
    main, txn = names.topic, names.txn
    idempotent_topic = names.per_version("idempotent", 0)

    def ids(c: Context) -> Body:
        return {"producer_id": c.get("producer_id", -1), "producer_epoch": c.get("producer_epoch", -1)}

    def add_partitions(v: int, c: Context) -> Body:
        topics = [{"name": main, "partitions": [0]}]
        return {
            "v3_and_below_transactional_id": txn,
            "v3_and_below_producer_id": c.get("producer_id", -1),
            "v3_and_below_producer_epoch": c.get("producer_epoch", -1),
            "v3_and_below_topics": topics,
            "transactions": [{"transactional_id": txn, **ids(c), "verify_only": False, "topics": topics}],
        }

    def transactional_batch(c: Context) -> bytes:
        return records(
            b"in-txn",
            producer_id=c.get("producer_id", -1),
            producer_epoch=c.get("producer_epoch", -1),
            base_sequence=0,
            transactional=True,
        )

    def new_producer(transactional_id: str | None) -> Callable[[int, Context], Body]:
        return lambda v, c: {
            "transactional_id": transactional_id,
            "transaction_timeout": 60000,
            "producer_id": -1,
            "producer_epoch": -1,
        }

    def idempotent_batch(c: Context, sequence: int) -> bytes:
        return records(
            b"idempotent",
            producer_id=c.get("producer_id", -1),
            producer_epoch=c.get("producer_epoch", -1),
            base_sequence=sequence,
        )

    # One transaction, with requests at their highest common version (a client speaks one version per key).
    return [
        Step(
            "init producer id (idempotent)",
            22,
            lambda v, c: {
                "transactional_id": None,
                "transaction_timeout": 60000,
                "producer_id": -1,
                "producer_epoch": -1,
            },
            retry_coordinator=True,
        ),
        Step(
            "init producer id with a too long timeout",
            22,
            lambda v, c: {
                "transactional_id": txn + "-x",
                "transaction_timeout": 10**9,
                "producer_id": -1,
                "producer_epoch": -1,
            },
            kind="invalid",
        ),
        Step(
            "find the transaction coordinator",
            10,
            lambda v, c: {"key": txn, "key_type": 1, "coordinator_keys": [txn]},
            versions=lambda v: [x for x in v if x >= 1],
            retry_coordinator=True,
        ),
        Step(
            # Its own topic: the answers below differ (argued), and the main topic's later reads must not.
            "create a topic for an idempotent producer",
            19,
            create_topics(_topic_config(idempotent_topic, 1)),
            versions=highest,
            remember=_remember_topic_ids,
            settle_topics=lambda v: [idempotent_topic],
        ),
        Step(
            "init an idempotent producer",
            22,
            new_producer(None),
            versions=highest,
            remember=_remember_producer,
            retry_coordinator=True,
        ),
        Step(
            # A partition that knows nothing of the producer (its batches expired, or were deleted) takes any
            # first sequence.
            "idempotent produce starting at sequence 5",
            0,
            lambda v, c: produce(idempotent_topic, idempotent_batch(c, 5))(v, c),
            versions=highest,
        ),
        Step(
            "idempotent produce out of sequence",
            0,
            lambda v, c: produce(idempotent_topic, idempotent_batch(c, 0))(v, c),
            versions=highest,
            kind="invalid",
        ),
        Step(
            "init a transactional producer",
            22,
            new_producer(txn),
            versions=highest,
            remember=_remember_producer,
            retry_coordinator=True,
        ),
        Step(
            "add partitions to the transaction",
            24,
            add_partitions,
            versions=lambda v: [x for x in v if x <= 3][-1:],
        ),
        Step(
            "produce in the transaction",
            0,
            lambda v, c: produce(main, transactional_batch(c), transactional_id=txn)(v, c),
            versions=lambda v: [x for x in v if x <= 11][-1:],
        ),
        Step(
            "list offsets read_committed with an open transaction",
            2,
            list_offsets(main, -1, isolation=1),
            versions=highest,
        ),
        Step("describe the open transaction", 65, lambda v, c: {"transactional_ids": [txn, names.missing]}),
        Step(
            "list transactions",
            66,
            listing=True,
            body=lambda v, c: {
                "state_filters": ["Ongoing"],
                "producer_id_filters": [],
                "duration_filter": -1,
            },
        ),
        Step(
            "list transactions whose id matches a pattern",
            66,
            listing=True,
            body=lambda v, c: {
                "state_filters": [],
                "producer_id_filters": [],
                "duration_filter": -1,
                "transactional_id_pattern": f"{txn[:-2]}.*",
            },
            versions=lambda v: [x for x in v if x >= 2],
        ),
        Step(
            "list transactions with a bad pattern",
            66,
            body=lambda v, c: {
                "state_filters": [],
                "producer_id_filters": [],
                "duration_filter": -1,
                "transactional_id_pattern": "[unclosed",
            },
            versions=lambda v: [x for x in v if x >= 2],
            kind="invalid",
        ),
        Step(
            "list transactions in an unknown state",
            66,
            listing=True,
            body=lambda v, c: {
                "state_filters": ["Dancing"],
                "producer_id_filters": [],
                "duration_filter": -1,
            },
            kind="invalid",
        ),
        Step(
            "list transactions in a known and an unknown state",
            66,
            listing=True,
            body=lambda v, c: {
                "state_filters": ["Ongoing", "Dancing"],
                "producer_id_filters": [],
                "duration_filter": -1,
            },
            kind="edge",
        ),
        Step(
            "add offsets to the transaction",
            25,
            lambda v, c: {"transactional_id": txn, **ids(c), "group_id": f"{names.group}-txn"},
            versions=lambda v: [x for x in v if x <= 3][-1:],
        ),
        Step(
            "commit offsets in the transaction",
            28,
            lambda v, c: {
                "transactional_id": txn,
                "group_id": f"{names.group}-txn",
                **ids(c),
                "generation_id": -1,
                "member_id": "",
                "group_instance_id": None,
                "topics": [
                    {
                        "name": main,
                        "partitions": [
                            {
                                "partition_index": 0,
                                "committed_offset": 1,
                                "committed_leader_epoch": -1,
                                "committed_metadata": "",
                            }
                        ],
                    }
                ],
            },
            versions=lambda v: [x for x in v if x <= 4][-1:],
        ),
        Step(
            "end the transaction with the wrong epoch",
            26,
            lambda v, c: {
                "transactional_id": txn,
                "producer_id": c.get("producer_id", -1),
                "producer_epoch": 99,
                "committed": True,
            },
            kind="invalid",
            versions=lambda v: [x for x in v if x <= 4][-1:],
        ),
        Step(
            "commit the transaction",
            26,
            lambda v, c: {"transactional_id": txn, **ids(c), "committed": True},
            versions=lambda v: [x for x in v if x <= 4][-1:],
        ),
        Step(
            "end a transaction nobody began",
            26,
            lambda v, c: {
                "transactional_id": names.missing,
                "producer_id": 1,
                "producer_epoch": 0,
                "committed": False,
            },
            kind="invalid",
        ),
        Step(
            "add partitions for an unknown transactional id",
            24,
            lambda v, c: (
                add_partitions(v, c)
                | {
                    "v3_and_below_transactional_id": names.missing,
                    "transactions": [
                        {
                            "transactional_id": names.missing,
                            "producer_id": 1,
                            "producer_epoch": 0,
                            "verify_only": False,
                            "topics": [],
                        }
                    ],
                }
            ),
            kind="invalid",
        ),
        Step(
            "add offsets for an unknown transactional id",
            25,
            lambda v, c: {
                "transactional_id": names.missing,
                "producer_id": 1,
                "producer_epoch": 0,
                "group_id": names.group,
            },
            kind="invalid",
        ),
        Step(
            "commit transactional offsets for an unknown producer",
            28,
            lambda v, c: {
                "transactional_id": names.missing,
                "group_id": names.group,
                "producer_id": 1,
                "producer_epoch": 0,
                "generation_id": -1,
                "member_id": "",
                "group_instance_id": None,
                "topics": [],
            },
            kind="invalid",
        ),
        Step(
            "write transaction markers from a client",
            27,
            lambda v, c: {
                "markers": [
                    {
                        "producer_id": 1,
                        "producer_epoch": 0,
                        "transaction_result": False,
                        "topics": [{"name": main, "partition_indexes": [0]}],
                        "coordinator_epoch": 0,
                    }
                ]
            },
            kind="invalid",
        ),
        Step(
            "fetch read_committed after the commit",
            1,
            fetch(names, main, [_partition_fetch(0)], isolation=1),
            versions=highest,
        ),
    ]


def _security(names: Names) -> list[Step]:
    topic_acl = {
        "resource_type": 2,
        "resource_name": names.topic,
        "resource_pattern_type": 3,
        "principal": "User:alice",
        "host": "*",
        "operation": 3,
        "permission_type": 3,
    }
    describe = {
        "resource_type_filter": 2,
        "resource_name_filter": names.topic,
        "pattern_type_filter": 3,
        "principal_filter": None,
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    acl_filter = {
        "resource_type_filter": 2,
        "resource_name_filter": names.topic,
        "pattern_type_filter": 3,
        "principal_filter": "User:alice",
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    quota_entity = [{"entity_type": "client-id", "entity_name": f"conf-{names.token}"}]
    return [
        Step(
            "api versions",
            18,
            lambda v, c: {"client_software_name": "conformance", "client_software_version": "1.0"},
        ),
        Step(
            "api versions with an invalid software name",
            18,
            lambda v, c: {"client_software_name": "bad name!", "client_software_version": "1.0"},
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 3],
        ),
        Step(
            "sasl handshake on a PLAINTEXT listener",
            17,
            lambda v, c: {"mechanism": "SCRAM-SHA-512"},
            kind="invalid",
        ),
        Step(
            "sasl authenticate without a handshake",
            36,
            lambda v, c: {"auth_bytes": b"\x00admin\x00admin-secret"},
            kind="invalid",
        ),
        Step(
            "create an ACL",
            30,
            lambda v, c: {"creations": [topic_acl | {"resource_name": f"{names.topic}-v{v}"}]},
        ),
        Step(
            "create an ACL with an unknown operation",
            30,
            lambda v, c: {"creations": [topic_acl | {"operation": 0}]},
            kind="invalid",
        ),
        Step(
            "create an ACL with a bad principal",
            30,
            lambda v, c: {"creations": [topic_acl | {"principal": "alice"}]},
            kind="invalid",
        ),
        Step("describe ACLs", 29, lambda v, c: describe | {"resource_name_filter": f"{names.topic}-v{v}"}),
        Step(
            "describe ACLs with a bad filter",
            29,
            lambda v, c: describe | {"pattern_type_filter": 0},
            kind="invalid",
        ),
        Step(
            "delete ACLs",
            31,
            lambda v, c: {"filters": [acl_filter | {"resource_name_filter": f"{names.topic}-v{v}"}]},
        ),
        Step("delete ACLs matching nothing", 31, lambda v, c: {"filters": [acl_filter]}, kind="edge"),
        Step(
            "alter client quotas",
            49,
            lambda v, c: {
                "entries": [
                    {
                        "entity": quota_entity,
                        "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}],
                    }
                ],
                "validate_only": False,
            },
        ),
        Step(
            "alter client quotas with an unknown key",
            49,
            lambda v, c: {
                "entries": [
                    {"entity": quota_entity, "ops": [{"key": "no_such_rate", "value": 1.0, "remove": False}]}
                ],
                "validate_only": True,
            },
            kind="invalid",
        ),
        Step(
            "describe client quotas",
            48,
            lambda v, c: {
                "components": [{"entity_type": "client-id", "match_type": 0, "match": f"conf-{names.token}"}],
                "strict": False,
            },
        ),
        Step(
            "describe client quotas of an unknown entity type",
            48,
            lambda v, c: {
                "components": [{"entity_type": "planet", "match_type": 1, "match": None}],
                "strict": False,
            },
            kind="invalid",
        ),
        Step(
            "alter SCRAM credentials",
            51,
            lambda v, c: {
                "deletions": [],
                "upsertions": [
                    {
                        "name": f"conf-{names.token}",
                        "mechanism": 2,
                        "iterations": 4096,
                        "salt": b"salt",
                        "salted_password": b"p" * 64,
                    }
                ],
            },
        ),
        Step(
            "alter SCRAM credentials with too few iterations",
            51,
            lambda v, c: {
                "deletions": [],
                "upsertions": [
                    {
                        "name": f"conf-{names.token}-x",
                        "mechanism": 1,
                        "iterations": 1,
                        "salt": b"salt",
                        "salted_password": b"p" * 32,
                    }
                ],
            },
            kind="invalid",
        ),
        Step(
            "delete an unknown SCRAM credential",
            51,
            lambda v, c: {"deletions": [{"name": names.missing, "mechanism": 1}], "upsertions": []},
            kind="invalid",
        ),
        Step(
            "describe SCRAM credentials",
            50,
            lambda v, c: {"users": [{"name": f"conf-{names.token}"}, {"name": names.missing}]},
        ),
        Step(
            "create a delegation token on a PLAINTEXT connection",
            38,
            lambda v, c: {
                "owner_principal_type": None,
                "owner_principal_name": None,
                "renewers": [],
                "max_lifetime": -1,
            },
            kind="invalid",
        ),
        Step(
            "renew a delegation token on a PLAINTEXT connection",
            39,
            lambda v, c: {"hmac": b"x", "renew_period": 1000},
            kind="invalid",
        ),
        Step(
            "expire a delegation token on a PLAINTEXT connection",
            40,
            lambda v, c: {"hmac": b"x", "expiry_time_period": 1000},
            kind="invalid",
        ),
        Step("describe delegation tokens", 41, lambda v, c: {"owners": None}, kind="edge"),
    ]


def _share_groups(names: Names) -> list[Step]:
    """Share groups (KIP-932): answers that do not depend on timing. A member joining a group on a topic is
    answered before the group initialized its share-partitions: an empty assignment, on both brokers."""
    group = f"{names.group}-share"
    member = "j" * 22

    def joining(v: int, c: Context) -> Body:
        return {
            "group_id": f"{group}-join-v{v}",
            "member_id": member,
            "member_epoch": 0,
            "rack_id": None,
            "subscribed_topic_names": [names.topic],
        }

    return [
        Step("share group heartbeat: a member joins on a topic", 76, joining),
        Step(
            "share group heartbeat: the member leaves",
            76,
            lambda v, c: {**joining(v, c), "member_epoch": -1, "subscribed_topic_names": None},
        ),
        Step(
            "share group heartbeat without a member id",
            76,
            lambda v, c: {
                "group_id": group,
                "member_id": "",
                "member_epoch": 0,
                "subscribed_topic_names": [names.topic],
            },
            kind="invalid",
        ),
        Step(
            "share group describe of a missing group",
            77,
            lambda v, c: {"group_ids": [names.missing], "include_authorized_operations": False},
        ),
        Step(
            "share fetch in a session that does not exist",
            78,
            lambda v, c: {
                "group_id": group,
                "member_id": "m" * 22,
                "share_session_epoch": 5,
                "max_wait": 0,
                "min_bytes": 1,
                "max_bytes": 1024,
                "max_records": 10,
                "batch_size": 10,
                "topics": [],
                "forgotten_topics_data": [],
            },
            kind="edge",
        ),
        Step(
            "share acknowledge with epoch 0",
            79,
            lambda v, c: {"group_id": group, "member_id": "m" * 22, "share_session_epoch": 0, "topics": []},
            kind="invalid",
        ),
        Step(
            "describe share group offsets of a group without state",
            90,
            lambda v, c: {"groups": [{"group_id": f"{group}-v{v}", "topics": None}]},
        ),
        Step(
            "alter share group offsets of a missing topic",
            91,
            lambda v, c: {
                "group_id": group,
                "topics": [
                    {"topic_name": names.missing, "partitions": [{"partition_index": 0, "start_offset": 0}]}
                ],
            },
            kind="edge",
        ),
        Step(
            "delete share group offsets of a missing topic",
            92,
            lambda v, c: {"group_id": group, "topics": [{"topic_name": names.missing}]},
            kind="edge",
        ),
        *_share_coordinator(names),
    ]


# FindCoordinator's share key names a topic id the two brokers share (only its hash matters; each broker gives
# the corpus topic an id of its own).
SHARE_KEY_TOPIC_ID = uuid.UUID(int=0x5A4E)


def _share_coordinator(names: Names) -> list[Step]:
    """The share coordinator's RPCs (inter-broker; answered to the super user), on share-partitions of the corpus
    topic that no share group ever used, one group per version. FindCoordinator with the share key type comes
    first: it makes Kafka create `__share_group_state`."""

    def state_group(version: int) -> str:
        return f"{names.group}-state-v{version}"

    def one_partition(c: Context, **fields: Any) -> list[dict[str, Any]]:
        return [{"topic_id": _topic_id(c, names.topic), "partitions": [{"partition": 0, **fields}]}]

    return [
        Step(
            "find the share coordinator of a share-partition",
            10,
            lambda v, c: {
                "key": "",
                "key_type": 2,
                "coordinator_keys": [share_coordinator_key(state_group(v), SHARE_KEY_TOPIC_ID, 0)],
            },
            versions=lambda v: [x for x in v if x >= 6],
            retry_coordinator=True,
        ),
        Step(
            "find the share coordinator of a key that is not group:topicId:partition",
            10,
            lambda v, c: {
                "key": "",
                "key_type": 2,
                "coordinator_keys": [f"{state_group(v)}:{SHARE_KEY_TOPIC_ID}:0"],
            },
            kind="invalid",
            versions=lambda v: [x for x in v if x >= 6],
        ),
        Step(
            "read the share state of a share-partition never initialized",
            84,
            lambda v, c: {"group_id": state_group(v), "topics": one_partition(c, leader_epoch=0)},
            kind="edge",
            retry_coordinator=True,
        ),
        Step(
            "read the share state summary of a share-partition never initialized",
            87,
            lambda v, c: {"group_id": state_group(v), "topics": one_partition(c, leader_epoch=0)},
            retry_coordinator=True,
        ),
        Step(
            "write the share state of a share-partition never initialized",
            85,
            lambda v, c: {
                "group_id": state_group(v),
                "topics": one_partition(
                    c,
                    state_epoch=0,
                    leader_epoch=0,
                    start_offset=0,
                    state_batches=[
                        {"first_offset": 0, "last_offset": 0, "delivery_state": 0, "delivery_count": 1}
                    ],
                ),
            },
            kind="edge",
            retry_coordinator=True,
        ),
        Step(
            "initialize the share state of a share-partition",
            83,
            lambda v, c: {
                "group_id": state_group(v),
                "topics": one_partition(c, state_epoch=0, start_offset=0),
            },
            retry_coordinator=True,
        ),
        Step(
            "delete the share state of a share-partition",
            86,
            lambda v, c: {"group_id": state_group(v), "topics": one_partition(c)},
            retry_coordinator=True,
        ),
    ]


def corpus(names: Names) -> list[Step]:
    """Every step, in the order they are sent."""
    return (
        _setup_and_data_path(names)
        + _admin(names)
        + _groups(names)
        + _share_groups(names)
        + _transactions(names)
        + _security(names)
    )
