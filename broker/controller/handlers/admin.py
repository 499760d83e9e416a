"""RPC handlers of the admin writes brokers forward: topics, partitions, configs, security records,
features, leader elections and reassignments."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from broker.controller import records as rec
from broker.controller.decisions import ELECTION_PREFERRED, ELECTION_UNCLEAN, Decision, TopicRequest
from broker.controller.handlers.brokers import raise_for
from broker.controller.quorum_driver import QuorumDriver
from broker.controller.rpc import admin as msg
from broker.controller.rpc.base import Empty, PartitionResult, RpcError
from broker.metadata.features import FeatureUpdate


def _results(decision: Decision) -> tuple[PartitionResult, ...]:
    return tuple(PartitionResult(r.topic, r.partition, r.error_code, r.message) for r in decision.results)


async def create_topics(driver: QuorumDriver, request: msg.CreateTopicsRequest) -> msg.TopicResults:
    results = []
    for topic in request.topics:
        wanted = TopicRequest(
            name=topic.name,
            partitions=topic.partitions,
            replication_factor=topic.replication_factor,
            configs=dict(topic.configs or {}),
            internal=topic.internal,
            assignments=topic.assignments or (),
        )
        if request.validate_only:
            decision = driver.active_decider().create_topic(driver.image, wanted)
        else:
            decision = await driver.decide_and_commit(lambda d, image, r=wanted: d.create_topic(image, r))
        created = driver.image.topic_by_name(wanted.name)
        results.append(
            msg.TopicResult(
                wanted.name,
                decision.error_code,
                decision.message,
                str(created.topic_id) if created and not decision.error_code else None,
            )
        )
    return msg.TopicResults(tuple(results))


async def delete_topics(driver: QuorumDriver, request: msg.DeleteTopicsRequest) -> msg.TopicResults:
    results = []
    for name in request.names:
        decision = await driver.decide_and_commit(lambda d, image, n=name: d.delete_topic(image, n))
        results.append(msg.TopicResult(name, decision.error_code, decision.message))
    return msg.TopicResults(tuple(results))


async def create_partitions(driver: QuorumDriver, request: msg.CreatePartitionsRequest) -> Empty:
    decision = await driver.decide_and_commit(
        lambda d, image: d.create_partitions(image, request.name, request.total, request.assignments or ())
    )
    raise_for(decision)
    return Empty()


async def alter_configs(driver: QuorumDriver, request: msg.AlterConfigsRequest) -> Empty:
    decision = await driver.decide_and_commit(
        lambda d, image: d.alter_configs(
            image, request.resource_type, request.resource_name, dict(request.changes)
        )
    )
    raise_for(decision)
    return Empty()


async def security_change(driver: QuorumDriver, request: msg.SecurityChangeRequest) -> Empty:
    records = rec.decode_records(request.records)
    decision = await driver.decide_and_commit(lambda d, image: d.security_change(records))
    raise_for(decision)
    return Empty()


async def update_features(driver: QuorumDriver, request: msg.UpdateFeaturesRequest) -> Empty:
    updates = [FeatureUpdate(u.feature, u.level, u.upgrade_type) for u in request.updates]
    node_id = driver.config.node_id
    decision = await driver.decide_and_commit(
        lambda d, image: d.update_features(image, updates, request.validate_only, node_id)
    )
    raise_for(decision)
    return Empty()


async def elect_leaders(driver: QuorumDriver, request: msg.ElectLeadersRequest) -> msg.ElectLeadersResponse:
    if request.election_type not in (ELECTION_PREFERRED, ELECTION_UNCLEAN):
        raise RpcError(ErrorCode.invalid_request, f"unknown election type {request.election_type}")
    partitions = None if request.partitions is None else list(request.partitions)
    decision = await driver.decide_and_commit(
        lambda d, image: d.elect_leaders(image, request.election_type, partitions)
    )
    return msg.ElectLeadersResponse(
        changed=tuple(
            (str(r.topic_id), r.partition)
            for r in decision.records
            if isinstance(r, rec.PartitionChangeRecord)
        ),
        results=_results(decision),
    )


async def alter_partition_reassignments(
    driver: QuorumDriver, request: msg.AlterPartitionReassignmentsRequest
) -> msg.PartitionResults:
    reassignments = [
        (topic, partition, None if ids is None else list(ids))
        for topic, partition, ids in request.reassignments
    ]
    decision = await driver.decide_and_commit(
        lambda d, image: d.reassign_partitions(image, reassignments, request.allow_replication_factor_change)
    )
    return msg.PartitionResults(_results(decision))


async def list_partition_reassignments(
    driver: QuorumDriver, request: msg.ListPartitionReassignmentsRequest
) -> msg.ListPartitionReassignmentsResponse:
    partitions = None if request.partitions is None else list(request.partitions)
    ongoing = driver.active_decider().list_reassignments(driver.image, partitions)
    return msg.ListPartitionReassignmentsResponse(
        tuple(
            msg.OngoingReassignment(p.topic, p.partition, p.replicas, p.adding_replicas, p.removing_replicas)
            for p in ongoing
        )
    )
