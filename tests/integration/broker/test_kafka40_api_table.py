"""ApiVersions against Apache Kafka 4.0's table (../shared/design/REFERENCE.md §9): every api key and version
range Kafka 4.0 advertises is advertised here too (with at least its range), and nothing else is.
"""

from __future__ import annotations

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

# api key -> (min, max) that Apache Kafka 4.0 advertises.
KAFKA_40: dict[int, tuple[int, int]] = {
    0: (0, 12),  # Produce (advertised from 0, served from 3: KAFKA-18659)
    1: (4, 17),  # Fetch
    2: (1, 10),  # ListOffsets
    3: (0, 13),  # Metadata
    8: (2, 9),  # OffsetCommit
    9: (1, 9),  # OffsetFetch
    10: (0, 6),  # FindCoordinator
    11: (2, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    17: (0, 1),  # SaslHandshake
    18: (0, 4),  # ApiVersions
    19: (2, 7),  # CreateTopics
    20: (1, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 5),  # InitProducerId
    23: (2, 4),  # OffsetForLeaderEpoch
    24: (0, 5),  # AddPartitionsToTxn
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 5),  # EndTxn
    27: (1, 1),  # WriteTxnMarkers
    28: (0, 5),  # TxnOffsetCommit
    29: (1, 3),  # DescribeAcls
    30: (1, 3),  # CreateAcls
    31: (1, 3),  # DeleteAcls
    32: (1, 4),  # DescribeConfigs
    33: (0, 2),  # AlterConfigs
    34: (1, 2),  # AlterReplicaLogDirs
    35: (1, 4),  # DescribeLogDirs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    38: (1, 3),  # CreateDelegationToken
    39: (1, 2),  # RenewDelegationToken
    40: (1, 2),  # ExpireDelegationToken
    41: (1, 3),  # DescribeDelegationToken
    42: (0, 2),  # DeleteGroups
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 0),  # AlterPartitionReassignments
    46: (0, 0),  # ListPartitionReassignments
    47: (0, 0),  # OffsetDelete
    48: (0, 1),  # DescribeClientQuotas
    49: (0, 1),  # AlterClientQuotas
    50: (0, 0),  # DescribeUserScramCredentials
    51: (0, 0),  # AlterUserScramCredentials
    55: (0, 2),  # DescribeQuorum
    57: (0, 2),  # UpdateFeatures
    60: (0, 2),  # DescribeCluster
    61: (0, 0),  # DescribeProducers
    64: (0, 0),  # UnregisterBroker
    65: (0, 0),  # DescribeTransactions
    66: (0, 1),  # ListTransactions
    68: (0, 1),  # ConsumerGroupHeartbeat
    69: (0, 1),  # ConsumerGroupDescribe
    71: (0, 0),  # GetTelemetrySubscriptions
    72: (0, 0),  # PushTelemetry
    74: (0, 0),  # ListConfigResources
    75: (0, 0),  # DescribeTopicPartitions
    80: (0, 0),  # AddRaftVoter
    81: (0, 0),  # RemoveRaftVoter
}

# Share groups (KIP-932): Kafka 4.2's ranges (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
# ShareAcknowledge, Describe/Alter/DeleteShareGroupOffsets).
KAFKA_42_SHARE_GROUPS: dict[int, tuple[int, int]] = {
    76: (1, 1),
    77: (1, 1),
    78: (1, 2),
    79: (1, 2),
    90: (0, 1),
    91: (0, 0),
    92: (0, 0),
}


def _covers(advertised: tuple[int, int] | None, wanted: tuple[int, int]) -> bool:
    return advertised is not None and advertised[0] <= wanted[0] and advertised[1] >= wanted[1]


@pytest.fixture(scope="module")
def advertised(broker: BrokerProcess) -> dict[int, tuple[int, int]]:
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            ApiVersionsRequest(client_software_name="table-test", client_software_version="1")
        )
    assert response.error_code == 0
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}


def test_nothing_outside_kafka_40s_table_is_advertised(advertised: dict[int, tuple[int, int]]) -> None:
    assert set(advertised) - set(KAFKA_40) - set(KAFKA_42_SHARE_GROUPS) == set()


def test_share_group_apis_are_advertised_with_kafka_42s_ranges(
    advertised: dict[int, tuple[int, int]],
) -> None:
    assert {key: advertised.get(key) for key in KAFKA_42_SHARE_GROUPS} == KAFKA_42_SHARE_GROUPS


@pytest.mark.parametrize("api_key", sorted(KAFKA_40))
def test_every_api_kafka_40_serves_is_advertised_with_at_least_its_range(
    advertised: dict[int, tuple[int, int]], api_key: int
) -> None:
    assert _covers(advertised.get(api_key), KAFKA_40[api_key]), (
        f"api {api_key}: Kafka 4.0 advertises {KAFKA_40[api_key]}, we {advertised.get(api_key)}"
    )
