"""Sequences of admin, produce, fetch, group and transaction requests, and the state they leave, observed the same
way on both brokers. The property tests and the long benchmark draw sequences with hypothesis."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import strategies as st

from broker.wire.schemas import request_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.integration.conformance.comparison import Endpoint
from tests.integration.conformance.corpus import records
from tests.integration.conformance.normalization import normalize, to_tree

PARTITIONS = 2
CONCURRENT_TRANSACTIONS = 51
Operation = tuple[Any, ...]

operations = st.one_of(
    st.tuples(
        st.just("produce"),
        st.integers(0, PARTITIONS - 1),
        st.lists(st.binary(max_size=8), min_size=1, max_size=4),
    ),
    st.tuples(
        st.just("commit"), st.sampled_from(["g1", "g2"]), st.integers(0, PARTITIONS - 1), st.integers(-1, 6)
    ),
    st.tuples(st.just("delete_records"), st.integers(0, PARTITIONS - 1), st.integers(0, 6)),
    st.tuples(
        st.just("set_config"),
        st.sampled_from(["retention.ms", "max.message.bytes", "cleanup.policy"]),
        st.sampled_from(["1000", "2048", "compact", "delete", "-5"]),
    ),
    st.tuples(st.just("acl"), st.sampled_from(["User:alice", "User:bob"]), st.sampled_from([2, 3, 4])),
    st.tuples(st.just("transaction"), st.integers(0, PARTITIONS - 1), st.booleans()),
)
sequences = st.lists(operations, min_size=1, max_size=8)


def _request(api_key: int, version: int, body: dict[str, Any]) -> Any:
    return entity_from_tree(request_class(api_key, version), body)


def _wait_for_coordinator(endpoint: Endpoint, key: str, key_type: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = endpoint.send(_request(10, 6, {"key_type": key_type, "coordinator_keys": [key]}))
        if not isinstance(answer, dict) and answer.coordinators[0].error_code.value == 0:
            return
        time.sleep(0.1)


# Answers a client retries (the partition's leader is not ready yet: Kafka says so for a moment after a topic is
# created or while it verifies a transactional partition with its coordinator).
_RETRIABLE = {5, 6}
_PREPARED = {"PrepareCommit", "PrepareAbort"}
RETRY_S = 15.0


def _has_error(tree: Any, codes: set[int]) -> bool:
    if isinstance(tree, dict):
        return tree.get("error_code") in codes or any(_has_error(child, codes) for child in tree.values())
    if isinstance(tree, list):
        return any(_has_error(child, codes) for child in tree)
    return False


def _send_retrying(endpoint: Endpoint, request: Any) -> Any:
    """`request`'s answer, sent again while it is one a client retries (retrying is safe for every operation
    here: produce is idempotent by its sequence or harmless, the others set state)."""
    deadline = time.monotonic() + RETRY_S
    answer = endpoint.send(request)
    while _has_error(to_tree(answer) if not isinstance(answer, dict) else answer, _RETRIABLE):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
        answer = endpoint.send(request)
    return answer


def apply(endpoint: Endpoint, topic: str, operation: Operation) -> Any:
    """Send one operation; its answer as a tree (compared too)."""
    kind = operation[0]
    if kind == "produce":
        _, partition, values = operation
        body = {
            "acks": -1,
            "timeout": 5000,
            "transactional_id": None,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": partition, "records": records(*values)}]}
            ],
        }
        return to_tree(_send_retrying(endpoint, _request(0, 11, body)))
    if kind == "commit":
        _, group, partition, offset = operation
        _wait_for_coordinator(endpoint, f"{topic}-{group}", 0)
        body = {
            "group_id": f"{topic}-{group}",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {
                            "partition_index": partition,
                            "committed_offset": offset,
                            "committed_leader_epoch": -1,
                            "committed_metadata": None,
                        }
                    ],
                }
            ],
        }
        return to_tree(_send_retrying(endpoint, _request(8, 9, body)))
    if kind == "delete_records":
        _, partition, offset = operation
        body = {
            "topics": [{"name": topic, "partitions": [{"partition_index": partition, "offset": offset}]}],
            "timeout": 5000,
        }
        return to_tree(_send_retrying(endpoint, _request(21, 2, body)))
    if kind == "set_config":
        _, name, value = operation
        body = {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": topic,
                    "configs": [{"name": name, "config_operation": 0, "value": value}],
                }
            ],
            "validate_only": False,
        }
        answer = to_tree(_send_retrying(endpoint, _request(44, 1, body)))
        if answer.get("responses", [{}])[0].get("error_code") == 0:
            _wait_for_config(endpoint, topic, name, value)
        return answer
    if kind == "acl":
        _, principal, operation_code = operation
        body = {
            "creations": [
                {
                    "resource_type": 2,
                    "resource_name": topic,
                    "resource_pattern_type": 3,
                    "principal": principal,
                    "host": "*",
                    "operation": operation_code,
                    "permission_type": 3,
                }
            ]
        }
        return to_tree(_send_retrying(endpoint, _request(30, 3, body)))
    if kind == "transaction":
        _, partition, commit = operation
        return _transaction(endpoint, topic, partition, commit)
    raise ValueError(kind)


def _transaction(endpoint: Endpoint, topic: str, partition: int, commit: bool) -> Any:
    transactional_id = f"{topic}-txn"
    _wait_for_coordinator(endpoint, transactional_id, 1)
    init_request = _request(
        22,
        4,
        {
            "transactional_id": transactional_id,
            "transaction_timeout": 60000,
            "producer_id": -1,
            "producer_epoch": -1,
        },
    )
    init = endpoint.send(init_request)
    deadline = time.monotonic() + 30
    # The previous transaction's markers may still be being written: clients retry CONCURRENT_TRANSACTIONS.
    while (
        not isinstance(init, dict)
        and init.error_code.value == CONCURRENT_TRANSACTIONS
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
        init = endpoint.send(init_request)
    answers = [to_tree(init)]
    if isinstance(init, dict) or init.error_code.value != 0:
        return answers
    ids = {"producer_id": int(init.producer_id), "producer_epoch": int(init.producer_epoch)}
    answers.append(
        to_tree(
            _send_retrying(
                endpoint,
                _request(
                    24,
                    3,
                    {
                        "v3_and_below_transactional_id": transactional_id,
                        "v3_and_below_producer_id": ids["producer_id"],
                        "v3_and_below_producer_epoch": ids["producer_epoch"],
                        "v3_and_below_topics": [{"name": topic, "partitions": [partition]}],
                    },
                ),
            )
        )
    )
    batch = records(
        b"txn",
        producer_id=ids["producer_id"],
        producer_epoch=ids["producer_epoch"],
        base_sequence=0,
        transactional=True,
    )
    answers.append(
        to_tree(
            _send_retrying(
                endpoint,
                _request(
                    0,
                    11,
                    {
                        "acks": -1,
                        "timeout": 5000,
                        "transactional_id": transactional_id,
                        "topic_data": [
                            {"name": topic, "partition_data": [{"index": partition, "records": batch}]}
                        ],
                    },
                ),
            )
        )
    )
    answers.append(
        to_tree(
            _send_retrying(
                endpoint, _request(26, 4, {"transactional_id": transactional_id, **ids, "committed": commit})
            )
        )
    )
    _wait_until_complete(endpoint, transactional_id)
    return answers


def _wait_for_config(endpoint: Endpoint, topic: str, name: str, value: str) -> None:
    """Until the topic's config reads `value`: Kafka's controller commits the change and its broker applies it a
    moment later (a DeleteRecords sent at once may still meet the old cleanup policy)."""
    body = {
        "resources": [{"resource_type": 2, "resource_name": topic, "configuration_keys": [name]}],
        "include_synonyms": False,
        "include_documentation": False,
    }
    deadline = time.monotonic() + RETRY_S
    while time.monotonic() < deadline:
        answer = endpoint.send(_request(32, 4, body))
        if isinstance(answer, dict) or any(c.value == value for c in answer.results[0].configs):
            return
        time.sleep(0.05)


def _wait_until_complete(endpoint: Endpoint, transactional_id: str) -> None:
    """Until the coordinator has written the transaction's markers. Kafka answers EndTxn once it has logged
    PrepareCommit/PrepareAbort and writes the markers after, so a record produced right after could land before
    the marker (ours writes them before answering); a client has no ordering guarantee there, so the sequences
    wait for them."""
    deadline = time.monotonic() + RETRY_S
    while time.monotonic() < deadline:
        answer = endpoint.send(_request(65, 0, {"transactional_ids": [transactional_id]}))
        if isinstance(answer, dict) or answer.transaction_states[0].transaction_state not in _PREPARED:
            return
        time.sleep(0.05)


def read_committed(endpoint: Endpoint, topic: str, partition: int) -> Any:
    """Everything a read_committed consumer reads of a partition from offset 0, fetching on from the next offset
    as consumers do (a fetch answer may hold any prefix of what there is: Apache Kafka's often stops after one
    batch, ours gives what fits)."""
    batches: list[Any] = []
    aborted: list[Any] = []
    first_answer: Any = None
    offset = 0
    for _ in range(100):
        body = {
            "replica_id": -1,
            "max_wait": 0,
            "min_bytes": 0,
            "max_bytes": 1 << 20,
            "isolation_level": 1,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [
                        {
                            "partition": partition,
                            "current_leader_epoch": -1,
                            "fetch_offset": offset,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": 1 << 20,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        answer = to_tree(_send_retrying(endpoint, _request(1, 12, body)))
        if not isinstance(answer, dict) or "responses" not in answer:
            return answer
        found = answer["responses"][0]["partitions"][0]
        if first_answer is None:
            first_answer = {
                key: found[key]
                for key in ("error_code", "high_watermark", "last_stable_offset", "log_start_offset")
            }
        if found["error_code"] != 0 or not found["records"]:
            break
        batches += found["records"]
        aborted += [entry for entry in found["aborted_transactions"] or [] if entry not in aborted]
        offset = batches[-1]["base_offset"] + batches[-1]["last_offset_delta"] + 1
        if offset >= found["last_stable_offset"]:
            break
    # What the consumer keeps: the aborted producers' batches from each aborted transaction's first offset on are
    # dropped by the consumer, so the list is compared as the set of (producer, first offset) it was told.
    return {"start": first_answer, "batches": batches, "aborted": sorted(aborted, key=repr)}


def observe(endpoint: Endpoint, topic: str) -> Any:
    """What a client can see of the topic afterwards: offsets, records (read_committed), committed offsets,
    configs, ACLs."""
    partitions = list(range(PARTITIONS))
    state: dict[str, Any] = {}
    for name, timestamp, isolation in (("earliest", -2, 0), ("latest", -1, 0), ("stable", -1, 1)):
        body = {
            "replica_id": -1,
            "isolation_level": isolation,
            "timeout": 1000,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {"partition_index": p, "current_leader_epoch": -1, "timestamp": timestamp}
                        for p in partitions
                    ],
                }
            ],
        }
        state[name] = to_tree(_send_retrying(endpoint, _request(2, 9, body)))
    for partition in partitions:
        state[f"records {partition}"] = read_committed(endpoint, topic, partition)
    for group in ("g1", "g2"):
        body = {
            "group_id": f"{topic}-{group}",
            "topics": [{"name": topic, "partition_indexes": partitions}],
            "require_stable": True,
        }
        state[f"offsets {group}"] = to_tree(_send_retrying(endpoint, _request(9, 7, body)))
    state["configs"] = to_tree(
        endpoint.send(
            _request(
                32,
                4,
                {
                    "resources": [
                        {
                            "resource_type": 2,
                            "resource_name": topic,
                            "configuration_keys": ["retention.ms", "max.message.bytes", "cleanup.policy"],
                        }
                    ],
                    "include_synonyms": False,
                    "include_documentation": False,
                },
            )
        )
    )
    state["acls"] = to_tree(
        endpoint.send(
            _request(
                29,
                3,
                {
                    "resource_type_filter": 2,
                    "resource_name_filter": topic,
                    "pattern_type_filter": 3,
                    "principal_filter": None,
                    "host_filter": None,
                    "operation": 1,
                    "permission_type": 1,
                },
            )
        )
    )
    return state


def create(endpoint: Endpoint, topic: str) -> Any:
    body = {
        "topics": [
            {
                "name": topic,
                "num_partitions": PARTITIONS,
                "replication_factor": 1,
                "assignments": [],
                "configs": [],
            }
        ],
        "timeout": 5000,
        "validate_only": False,
    }
    answer = endpoint.send(_request(19, 7, body))
    endpoint.wait_for_topics([topic])
    return to_tree(answer)


def run_sequence(
    theirs: Endpoint, ours: Endpoint, topic: str, sequence: list[Operation]
) -> list[tuple[str, Any, Any]]:
    """Apply `sequence` to both; every (what, ours, theirs) pair of normalized answers and observed states."""
    pairs = []
    steps: list[tuple[str, Any]] = [
        ("create", None),
        *((repr(operation), operation) for operation in sequence),
        ("observe", None),
    ]
    for what, operation in steps:
        answers = []
        for endpoint in (theirs, ours):
            if what == "create":
                answers.append(create(endpoint, topic))
            elif what == "observe":
                answers.append(observe(endpoint, topic))
            else:
                answers.append(apply(endpoint, topic, operation))
        if what == "create":
            # Topic creation's own answer (and its configs) is compared by the corpus; here it is setup.
            continue
        applied: set[str] = set()
        pairs.append((what, normalize(answers[1], applied, -1), normalize(answers[0], applied, -1)))
    return pairs
