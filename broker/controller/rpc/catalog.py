"""Every controller RPC this code speaks, and in which versions."""

from __future__ import annotations

from typing import Any

from broker.controller.rpc import admin, brokers, quorum
from broker.controller.rpc.base import Request

REQUEST_TYPES: tuple[type[Request[Any]], ...] = (
    quorum.ApiVersionsRequest,
    quorum.DescribeQuorumRequest,
    quorum.DescribeClusterRequest,
    quorum.RaftFetchRequest,
    quorum.AddVoterRequest,
    quorum.RemoveVoterRequest,
    quorum.UpdateVoterRequest,
    brokers.RegisterBrokerRequest,
    brokers.BrokerHeartbeatRequest,
    brokers.FetchMetadataRequest,
    brokers.AlterPartitionsRequest,
    brokers.AllocateProducerIdsRequest,
    brokers.UnregisterBrokerRequest,
    admin.CreateTopicsRequest,
    admin.DeleteTopicsRequest,
    admin.CreatePartitionsRequest,
    admin.AlterConfigsRequest,
    admin.SecurityChangeRequest,
    admin.UpdateFeaturesRequest,
    admin.ElectLeadersRequest,
    admin.AlterPartitionReassignmentsRequest,
    admin.ListPartitionReassignmentsRequest,
)
REQUESTS: dict[str, type[Request[Any]]] = {cls.API: cls for cls in REQUEST_TYPES}

# What this code speaks: RPC name -> (lowest, highest) version.
VERSIONS: dict[str, tuple[int, int]] = {cls.API: (cls.MIN_VERSION, cls.MAX_VERSION) for cls in REQUEST_TYPES}
# What a controller that does not know api_versions (d32902d) speaks: version 0 of everything else.
LEGACY_VERSIONS: dict[str, tuple[int, int]] = {
    name: (0, 0) for name in VERSIONS if name != quorum.ApiVersionsRequest.API
}


def common_version(ours: tuple[int, int], theirs: tuple[int, int] | None) -> int | None:
    """The highest version both sides speak (None: none; the peer does not know the RPC at all)."""
    if theirs is None:
        return None
    highest = min(ours[1], theirs[1])
    return highest if highest >= max(ours[0], theirs[0]) else None
