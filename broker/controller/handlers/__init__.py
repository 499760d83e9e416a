"""The controller's typed RPC handlers: each takes its request message and returns its response
message, or raises RpcError (the listener turns either into a reply frame)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from broker.controller.handlers import admin, quorum
from broker.controller.handlers.brokers import BrokerHandlers
from broker.controller.quorum_driver import QuorumDriver
from broker.controller.rpc import admin as admin_msg
from broker.controller.rpc import brokers as broker_msg
from broker.controller.rpc import quorum as quorum_msg
from broker.controller.rpc.base import Request
from broker.controller.rpc.codec import Message

# (request, the version it came in) -> response.
Handler = Callable[[Any, int], Awaitable[Message]]


def _plain(handle: Callable[[QuorumDriver, Any], Awaitable[Message]], driver: QuorumDriver) -> Handler:
    """A handler whose answer is the same in every version of its RPC."""

    async def handler(request: Request[Any], version: int) -> Message:
        return await handle(driver, request)

    return handler


def handler_table(driver: QuorumDriver) -> dict[type[Request[Any]], Handler]:
    brokers = BrokerHandlers(driver)

    def same(handle: Callable[[Any], Awaitable[Message]]) -> Handler:
        async def handler(request: Request[Any], version: int) -> Message:
            return await handle(request)

        return handler

    return {
        quorum_msg.ApiVersionsRequest: _plain(quorum.api_versions, driver),
        quorum_msg.DescribeQuorumRequest: _plain(quorum.describe_quorum, driver),
        quorum_msg.DescribeClusterRequest: _plain(quorum.describe_cluster, driver),
        quorum_msg.RaftFetchRequest: _plain(quorum.raft_fetch, driver),
        quorum_msg.AddVoterRequest: _plain(quorum.add_voter, driver),
        quorum_msg.RemoveVoterRequest: _plain(quorum.remove_voter, driver),
        quorum_msg.UpdateVoterRequest: _plain(quorum.update_voter, driver),
        broker_msg.RegisterBrokerRequest: same(brokers.register_broker),
        broker_msg.BrokerHeartbeatRequest: same(brokers.broker_heartbeat),
        broker_msg.FetchMetadataRequest: brokers.fetch_metadata,
        broker_msg.AlterPartitionsRequest: same(brokers.alter_partitions),
        broker_msg.AllocateProducerIdsRequest: same(brokers.allocate_producer_ids),
        broker_msg.UnregisterBrokerRequest: same(brokers.unregister_broker),
        admin_msg.CreateTopicsRequest: _plain(admin.create_topics, driver),
        admin_msg.DeleteTopicsRequest: _plain(admin.delete_topics, driver),
        admin_msg.CreatePartitionsRequest: _plain(admin.create_partitions, driver),
        admin_msg.AlterConfigsRequest: _plain(admin.alter_configs, driver),
        admin_msg.SecurityChangeRequest: _plain(admin.security_change, driver),
        admin_msg.UpdateFeaturesRequest: _plain(admin.update_features, driver),
        admin_msg.ElectLeadersRequest: _plain(admin.elect_leaders, driver),
        admin_msg.AlterPartitionReassignmentsRequest: _plain(admin.alter_partition_reassignments, driver),
        admin_msg.ListPartitionReassignmentsRequest: _plain(admin.list_partition_reassignments, driver),
    }
