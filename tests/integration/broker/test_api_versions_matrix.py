"""Every served version of the data-path APIs answers correctly (clients differ in what they send)."""

import pytest

from broker.wire.records.records import Record, build_batch
from broker.wire.schemas import request_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def matrix_topic(broker):
    return create_topic(broker.bootstrap, "api-version-matrix")


def request(api_key: int, version: int, body: dict):
    return entity_from_tree(request_class(api_key, version), body)


@pytest.mark.parametrize("version", range(3, 13))
def test_produce_answers_every_served_version(broker, matrix_topic, version):
    body = {
        "acks": -1,
        "timeout": 5000,
        "topic_data": [
            {
                "name": matrix_topic,
                "partition_data": [{"index": 0, "records": build_batch([Record(b"k", b"v")])}],
            }
        ],
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(0, version, body))
    partition = response.responses[0].partition_responses[0]
    assert partition.error_code.value == 0
    assert partition.base_offset >= 0


@pytest.mark.parametrize("version", range(4, 13))
def test_fetch_answers_every_served_version(broker, matrix_topic, version):
    from tests.fixtures.entity_trees import entity_from_tree as build

    with WireClient(broker.bootstrap) as client:
        client.request(
            build(
                request_class(0, 9),
                {
                    "acks": 1,
                    "timeout": 5000,
                    "topic_data": [
                        {
                            "name": matrix_topic,
                            "partition_data": [
                                {"index": 0, "records": build_batch([Record(b"k", b"fetched")])}
                            ],
                        }
                    ],
                },
            )
        )
        body = {
            "replica_id": -1,
            "max_wait": 100,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "topics": [
                {
                    "topic": matrix_topic,
                    "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
                }
            ],
            "forgotten_topics_data": [],
        }
        response = client.request(request(1, version, body))
    partition = response.responses[0].partitions[0]
    assert partition.error_code.value == 0
    assert partition.high_watermark >= 1
    assert b"fetched" in partition.records or b"v" in partition.records


@pytest.mark.parametrize("version", range(1, 11))
def test_list_offsets_answers_every_served_version(broker, matrix_topic, version):
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "timeout": 1000,
        "topics": [{"name": matrix_topic, "partitions": [{"partition_index": 0, "timestamp": -2}]}],
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(2, version, body))
    partition = response.topics[0].partitions[0]
    assert (partition.error_code.value, partition.offset) == (0, 0)


@pytest.mark.parametrize(
    ("version", "timestamp", "answer"), [(8, -4, (0, 0)), (9, -5, (0, -1)), (7, -4, (42, -1))]
)
def test_list_offsets_earliest_local_and_latest_tiered_without_tiered_storage(
    broker, matrix_topic, version, timestamp, answer
):
    """-4 (v8+) is the log start when every segment is local; -5 (v9+) finds nothing tiered, offset -1.
    Before their versions these timestamps are invalid requests (42), as in Kafka."""
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": matrix_topic, "partitions": [{"partition_index": 0, "timestamp": timestamp}]}],
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(2, version, body))
    partition = response.topics[0].partitions[0]
    assert (partition.error_code.value, partition.offset) == answer


@pytest.mark.parametrize("version", range(14))
def test_metadata_answers_every_served_version(broker, matrix_topic, version):
    body = {
        "topics": [{"name": matrix_topic, "topic_id": None}],
        "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(3, version, body))
    assert [t.name for t in response.topics] == [matrix_topic]
    assert response.brokers[0].port == broker.port


@pytest.mark.parametrize("version", range(2, 5))
def test_offset_for_leader_epoch_answers_every_served_version(broker, matrix_topic, version):
    body = {"topics": [{"topic": matrix_topic, "partitions": [{"partition": 0, "leader_epoch": 0}]}]}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(23, version, body))
    assert response.topics[0].partitions[0].error_code.value == 0


def _versions(api_key: int) -> list[int]:
    from broker.handlers.api_table import API_TABLE

    low, high, *_ = API_TABLE[api_key]
    return list(range(low, high + 1))


@pytest.mark.parametrize("version", _versions(19))
def test_create_and_delete_topics_answer_every_served_version(broker, version):
    name = f"matrix-create-v{version}"
    topic = {"name": name, "num_partitions": 2, "replication_factor": 1, "assignments": [], "configs": []}
    create = {"topics": [topic], "timeout": 5000}
    with WireClient(broker.bootstrap) as client:
        created = client.request(request(19, version, create))
        assert created.topics[0].error_code.value == 0
        delete_version = min(version, 6)
        if delete_version >= 6:
            delete = {"topics": [{"name": name, "topic_id": None}], "timeout": 5000}
        else:
            delete = {"topic_names": [name], "timeout": 5000}
        deleted = client.request(request(20, delete_version, delete))
    assert deleted.responses[0].error_code.value == 0


@pytest.mark.parametrize("version", _versions(37))
def test_create_partitions_answers_every_served_version(broker, version):
    name = create_topic(broker.bootstrap, f"matrix-partitions-v{version}")
    body = {
        "topics": [{"name": name, "count": 3, "assignments": None}],
        "timeout": 5000,
        "validate_only": False,
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(37, version, body))
    assert response.results[0].error_code.value == 0


@pytest.mark.parametrize("version", _versions(32))
def test_describe_configs_answers_every_served_version(broker, matrix_topic, version):
    body = {"resources": [{"resource_type": 2, "resource_name": matrix_topic, "configuration_keys": None}]}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(32, version, body))
    configs = {c.name: c.value for c in response.results[0].configs}
    assert configs["cleanup.policy"] == "delete"


@pytest.mark.parametrize("version", [3, 4])
def test_describe_configs_documents_and_types_configs_when_asked(broker, matrix_topic, version):
    resources = [{"resource_type": 2, "resource_name": matrix_topic, "configuration_keys": None}]
    with WireClient(broker.bootstrap) as client:
        asked = client.request(
            request(
                32, version, {"resources": resources, "include_documentation": True, "include_synonyms": True}
            )
        )
        plain = client.request(request(32, version, {"resources": resources, "include_documentation": False}))
    configs = {c.name: c for c in asked.results[0].configs}
    assert "forever" in configs["retention.ms"].documentation
    # Kafka's ConfigType numbering: LONG 5, LIST 7, STRING 2, BOOLEAN 1.
    assert (configs["retention.ms"].config_type, configs["cleanup.policy"].config_type) == (5, 7)
    assert configs["compression.type"].config_type == 2
    assert configs["preallocate"].config_type == 1
    # Synonyms asked for: Kafka lists the broker's own, except the defaults it derives (log.retention.ms is null,
    # derived from log.retention.hours: none listed, as Apache Kafka 4.2 answers, tests/integration/conformance).
    assert [s.name for s in configs["cleanup.policy"].synonyms] == ["log.cleanup.policy"]
    assert configs["retention.ms"].synonyms == ()
    assert all(c.documentation is None for c in plain.results[0].configs)


@pytest.mark.parametrize("version", [3, 4])
def test_describe_configs_documents_broker_configs(broker, version):
    body = {
        # This broker (the session broker is node 1); "" (the cluster default) lists only dynamic defaults.
        "resources": [{"resource_type": 4, "resource_name": "1", "configuration_keys": ["num.partitions"]}],
        "include_documentation": True,
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(32, version, body))
    (entry,) = response.results[0].configs
    assert entry.name == "num.partitions"
    assert entry.documentation
    assert entry.read_only


@pytest.mark.parametrize("version", _versions(33))
def test_alter_configs_answers_every_served_version(broker, matrix_topic, version):
    body = {
        "resources": [
            {
                "resource_type": 2,
                "resource_name": matrix_topic,
                "configs": [{"name": "retention.ms", "value": "1"}],
            }
        ],
        "validate_only": True,
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(33, version, body))
    assert response.responses[0].error_code.value == 0


@pytest.mark.parametrize("version", _versions(44))
def test_incremental_alter_configs_answers_every_served_version(broker, matrix_topic, version):
    op = {"name": "retention.ms", "config_operation": 0, "value": "1"}
    body = {
        "resources": [{"resource_type": 2, "resource_name": matrix_topic, "configs": [op]}],
        "validate_only": True,
    }
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(44, version, body))
    assert response.responses[0].error_code.value == 0


@pytest.mark.parametrize("version", _versions(22))
def test_init_producer_id_answers_every_served_version(broker, version):
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            request(22, version, {"transactional_id": None, "transaction_timeout": 60000})
        )
    assert response.error_code.value == 0
    assert response.producer_id >= 0


@pytest.mark.parametrize("version", _versions(35))
def test_describe_log_dirs_answers_every_served_version(broker, matrix_topic, version):
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(35, version, {"topics": None}))
    assert any(t.name == matrix_topic for result in response.results for t in result.topics)


@pytest.mark.parametrize("version", _versions(34))
def test_alter_replica_log_dirs_answers_every_served_version(broker, matrix_topic, version):
    # The dir the replica is in already: a no-op answered NONE (the session broker has one log dir).
    body = {"dirs": [{"path": str(broker.log_dir), "topics": [{"name": matrix_topic, "partitions": [0]}]}]}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(34, version, body))
    [topic] = response.results
    assert topic.topic_name == matrix_topic
    assert [(p.partition_index, p.error_code.value) for p in topic.partitions] == [(0, 0)]


@pytest.mark.parametrize("version", _versions(21))
def test_delete_records_answers_every_served_version(broker, version):
    name = create_topic(broker.bootstrap, f"matrix-delete-records-v{version}")
    body = {"topics": [{"name": name, "partitions": [{"partition_index": 0, "offset": 0}]}], "timeout": 5000}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(21, version, body))
    assert response.topics[0].partitions[0].error_code.value == 0


@pytest.mark.parametrize("version", _versions(18))
def test_api_versions_answers_every_served_version(broker, version):
    body = {"client_software_name": "matrix", "client_software_version": "1"}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(18, version, body))
    assert response.error_code.value == 0
    assert {k.api_key for k in response.api_keys} >= {0, 1, 3, 18, 55, 75}


@pytest.mark.parametrize("version", _versions(75))
def test_describe_topic_partitions_answers_every_served_version(broker, matrix_topic, version):
    body = {"topics": [{"name": matrix_topic}], "response_partition_limit": 10, "cursor": None}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(75, version, body))
    (topic,) = response.topics
    assert (topic.name, topic.error_code.value, len(topic.partitions)) == (matrix_topic, 0, 1)
    assert response.next_cursor is None


@pytest.mark.parametrize("version", _versions(55))
def test_describe_quorum_answers_every_served_version_on_a_single_node(broker, version):
    body = {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}
    with WireClient(broker.bootstrap) as client:
        response = client.request(request(55, version, body))
    assert response.error_code.value == 0
    # A single node is the one voter of its own quorum (broker/handlers/quorum.py).
    partition = response.topics[0].partitions[0]
    assert (partition.error_code.value, partition.leader_id) == (0, 1)
    assert [v.replica_id for v in partition.current_voters] == [1]
