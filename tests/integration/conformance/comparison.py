"""Send the corpus to both brokers, decode both answers and compare them field by field."""

from __future__ import annotations

import dataclasses
import io
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer

from broker.wire.schemas import UnknownApi, request_class, response_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.conformance.corpus import Context, Step
from tests.integration.conformance.normalization import differences, normalize, only_this_run, to_tree

IDENTICAL = "identical"
NORMALIZED = "equal after normalization"
DIFFERENT = "different"

# Keys our broker does not serve yet and that are out of this harness's scope (share groups, Streams groups),
# by name, for the table.
API_NAMES = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    3: "Metadata",
    8: "OffsetCommit",
    9: "OffsetFetch",
    10: "FindCoordinator",
    11: "JoinGroup",
    12: "Heartbeat",
    13: "LeaveGroup",
    14: "SyncGroup",
    15: "DescribeGroups",
    16: "ListGroups",
    17: "SaslHandshake",
    18: "ApiVersions",
    19: "CreateTopics",
    20: "DeleteTopics",
    21: "DeleteRecords",
    22: "InitProducerId",
    23: "OffsetForLeaderEpoch",
    24: "AddPartitionsToTxn",
    25: "AddOffsetsToTxn",
    26: "EndTxn",
    27: "WriteTxnMarkers",
    28: "TxnOffsetCommit",
    29: "DescribeAcls",
    30: "CreateAcls",
    31: "DeleteAcls",
    32: "DescribeConfigs",
    33: "AlterConfigs",
    34: "AlterReplicaLogDirs",
    35: "DescribeLogDirs",
    36: "SaslAuthenticate",
    37: "CreatePartitions",
    38: "CreateDelegationToken",
    39: "RenewDelegationToken",
    40: "ExpireDelegationToken",
    41: "DescribeDelegationToken",
    42: "DeleteGroups",
    43: "ElectLeaders",
    44: "IncrementalAlterConfigs",
    45: "AlterPartitionReassignments",
    46: "ListPartitionReassignments",
    47: "OffsetDelete",
    48: "DescribeClientQuotas",
    49: "AlterClientQuotas",
    50: "DescribeUserScramCredentials",
    51: "AlterUserScramCredentials",
    55: "DescribeQuorum",
    57: "UpdateFeatures",
    60: "DescribeCluster",
    61: "DescribeProducers",
    64: "UnregisterBroker",
    65: "DescribeTransactions",
    66: "ListTransactions",
    68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe",
    71: "GetTelemetrySubscriptions",
    72: "PushTelemetry",
    74: "ListConfigResources",
    75: "DescribeTopicPartitions",
    76: "ShareGroupHeartbeat",
    77: "ShareGroupDescribe",
    78: "ShareFetch",
    79: "ShareAcknowledge",
    80: "AddRaftVoter",
    81: "RemoveRaftVoter",
    83: "InitializeShareGroupState",
    84: "ReadShareGroupState",
    85: "WriteShareGroupState",
    86: "DeleteShareGroupState",
    87: "ReadShareGroupStateSummary",
    88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe",
    90: "DescribeShareGroupOffsets",
    91: "AlterShareGroupOffsets",
    92: "DeleteShareGroupOffsets",
}


@dataclasses.dataclass
class Outcome:
    step: Step
    version: int
    verdict: str
    differences: list[str]
    normalizations: set[str]


class ConformanceClient(WireClient):
    def send_request_only(self, body: Any) -> None:
        """Send a request that is answered by nothing (Produce with acks=0)."""
        self.correlation_id += 1
        buffer = io.BytesIO()
        header_type = RequestHeaderV2 if body.__flexible__ else RequestHeaderV1
        header = header_type(
            request_api_key=int(body.__api_key__),
            request_api_version=int(body.__version__),
            correlation_id=self.correlation_id,
            client_id="wire-test",
        )
        entity_writer(header_type)(buffer, header)
        entity_writer(type(body))(buffer, body)
        self.send_raw(buffer.getvalue())


class Endpoint:
    """One broker as the harness talks to it: a connection (reopened after the broker closes it) and the
    context its answers fill."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.client: ConformanceClient | None = None
        self.context: Context = {}

    def send(self, request: Any, *, expect_answer: bool = True) -> Any:
        if self.client is None:
            self.client = ConformanceClient(self.bootstrap, timeout=15.0)
        try:
            if not expect_answer:
                self.client.send_request_only(request)
                return None
            frame, body_offset = self.client.request_frame(request)
        except (TimeoutError, ConnectionError) as closed:
            self.close()
            return {"<connection>": f"closed ({type(closed).__name__})"}
        response_type = response_class(int(request.__api_key__), int(request.__version__))
        try:
            return entity_reader(response_type)(frame, body_offset)[0]
        except Exception as undecodable:  # kio raises several kinds; the answer is then compared as bytes
            return {"<undecodable by kio>": str(undecodable), "bytes": frame[body_offset:].hex()}

    def wait_for_topics(self, names: list[str], timeout: float = 15.0) -> None:
        """Until Metadata shows every topic of `names` with a leader on each partition (or `timeout`)."""
        request = entity_from_tree(
            request_class(3, 12),
            {
                "topics": [{"name": name, "topic_id": None} for name in names],
                "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False,
            },
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = self.send(request)
            if not isinstance(answer, dict) and all(
                topic.error_code.value == 0 and all(p.leader_id >= 0 for p in topic.partitions)
                for topic in answer.topics
            ):
                return
            time.sleep(0.05)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


COORDINATOR_WAIT_S = 30.0
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR (the coordinator just moved in)
_COORDINATOR_NOT_READY = {14, 15, 16}


def _coordinator_not_ready(answer: Any) -> bool:
    if answer is None or isinstance(answer, dict):
        return False
    codes = [getattr(answer, "error_code", None)]
    codes += [coordinator.error_code for coordinator in getattr(answer, "coordinators", ())]
    # The share coordinator's RPCs answer per share-partition.
    codes += [
        partition.error_code
        for result in getattr(answer, "results", ())
        for partition in getattr(result, "partitions", ())
    ]
    return any(code is not None and code.value in _COORDINATOR_NOT_READY for code in codes)


def api_versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    with WireClient(bootstrap) as client:
        answer = client.request(
            entity_from_tree(
                request_class(18, 3), {"client_software_name": "conformance", "client_software_version": "1"}
            )
        )
    return {int(key.api_key): (int(key.min_version), int(key.max_version)) for key in answer.api_keys}


def common_versions(
    ours: dict[int, tuple[int, int]], theirs: dict[int, tuple[int, int]]
) -> dict[int, list[int]]:
    """Per key both serve, the versions both advertise that kio can encode."""
    common: dict[int, list[int]] = {}
    for key in sorted(set(ours) & set(theirs)):
        low, high = max(ours[key][0], theirs[key][0]), min(ours[key][1], theirs[key][1])
        versions = []
        for version in range(low, high + 1):
            try:
                request_class(key, version)
            except UnknownApi:
                continue
            versions.append(version)
        common[key] = versions
    return common


def _compare_api_versions(ours: Any, theirs: Any, common: dict[int, list[int]]) -> tuple[Any, Any]:
    """ApiVersions answers differ by design in their tables (Kafka 4.2 serves more); those are compared by
    `versions_table`. What remains compared: the error, and each common key's presence."""

    def strip(tree: Any) -> Any:
        if not isinstance(tree, dict):
            return tree
        keys = [entry["api_key"] for entry in tree.get("api_keys", []) if entry["api_key"] in common]
        return {
            **tree,
            "api_keys": keys,
            "supported_features": "<table>",
            "finalized_features": "<table>",
            "finalized_features_epoch": "<table>",
        }

    return strip(ours), strip(theirs)


def run_step(
    step: Step, version: int, theirs: Endpoint, ours: Endpoint, common: dict[int, list[int]], token: str
) -> Outcome:
    answers = []
    for endpoint in (theirs, ours):
        body = step.body(version, endpoint.context)
        request = entity_from_tree(request_class(step.api_key, version), body)
        acks_zero = step.api_key == 0 and body.get("acks") == 0
        answer = endpoint.send(request, expect_answer=not acks_zero)
        deadline = time.monotonic() + COORDINATOR_WAIT_S
        while step.retry_coordinator and _coordinator_not_ready(answer) and time.monotonic() < deadline:
            time.sleep(0.1)
            answer = endpoint.send(request)
        if step.remember is not None and answer is not None and not isinstance(answer, dict):
            step.remember(answer, endpoint.context, version)
        answers.append(answer)
        if step.settle_topics is not None:
            endpoint.wait_for_topics(step.settle_topics(version))
    their_tree, our_tree = (to_tree(answer) if not isinstance(answer, dict) else answer for answer in answers)
    if step.api_key == 18:
        our_tree, their_tree = _compare_api_versions(our_tree, their_tree, common)
    if our_tree == their_tree:
        return Outcome(step, version, IDENTICAL, [], set())
    applied: set[str] = set()
    if step.listing:
        our_tree, their_tree = (
            only_this_run(our_tree, token, applied),
            only_this_run(their_tree, token, applied),
        )
    found = differences(
        normalize(our_tree, applied, step.api_key), normalize(their_tree, applied, step.api_key)
    )
    return Outcome(step, version, DIFFERENT if found else NORMALIZED, found, applied)


def run_corpus(
    steps: Iterable[Step], theirs: Endpoint, ours: Endpoint, common: dict[int, list[int]], token: str
) -> list[Outcome]:
    outcomes = []
    for step in steps:
        served = common.get(step.api_key, [])
        versions = list(step.versions(served)) if step.versions is not None else served
        for version in versions:
            outcomes.append(run_step(step, version, theirs, ours, common, token))
    return outcomes


@dataclasses.dataclass
class KeyRow:
    api_key: int
    versions: list[int]
    covered: set[int]
    verdict: str
    requests: int
    normalizations: set[str]
    differences: list[str]
    different_steps: list[str]


def per_key(outcomes: list[Outcome], common: dict[int, list[int]]) -> list[KeyRow]:
    grouped: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        grouped[outcome.step.api_key].append(outcome)
    rows = []
    for key, versions in common.items():
        mine = grouped.get(key, [])
        verdicts = {outcome.verdict for outcome in mine}
        verdict = DIFFERENT if DIFFERENT in verdicts else NORMALIZED if NORMALIZED in verdicts else IDENTICAL
        found = []
        for outcome in mine:
            for difference in outcome.differences:
                found.append(f"{outcome.step.name} (v{outcome.version}): {difference}")
        rows.append(
            KeyRow(
                key,
                versions,
                {outcome.version for outcome in mine},
                verdict if mine else "not sent",
                len(mine),
                set().union(*(outcome.normalizations for outcome in mine)) if mine else set(),
                found,
                sorted({outcome.step.name for outcome in mine if outcome.verdict == DIFFERENT}),
            )
        )
    return rows


def version_span(versions: list[int]) -> str:
    if not versions:
        return "–"
    return f"{versions[0]}" if versions[0] == versions[-1] else f"{versions[0]}–{versions[-1]}"
