"""Turns a failed Kafka call into the API's refusal: a 4xx naming Kafka's error and saying what it means."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from controlplane.core.api.errors import Conflict, ServiceError
from controlplane.kafka.errors import (
    AuthenticationFailed,
    ClusterUnreachable,
    KafkaGatewayError,
    NotAuthorized,
)

# Kafka error name -> (our error code, what it means for the caller, conflict?)
EXPLANATIONS: dict[str, tuple[str, str, bool]] = {
    "TOPIC_ALREADY_EXISTS": ("duplicate", "A topic with this name already exists on the cluster.", True),
    "INVALID_PARTITIONS": ("invalid_partitions", "The partition count is not valid for this topic.", False),
    "INVALID_REPLICATION_FACTOR": (
        "invalid_replication_factor",
        "The cluster cannot place that many replicas.",
        False,
    ),
    "INVALID_CONFIG": ("invalid_config", "The cluster rejected a topic config.", False),
    "POLICY_VIOLATION": ("policy_violation", "The cluster's own policy refused the request.", False),
    "UNKNOWN_TOPIC_OR_PART": (
        "unknown_topic",
        "The topic or partition does not exist on the cluster.",
        False,
    ),
    "INVALID_TOPIC_EXCEPTION": ("invalid_topic", "Kafka does not accept this topic name.", False),
    "NON_EMPTY_GROUP": ("group_active", "The group has active members; stop its consumers first.", True),
    "GROUP_ID_NOT_FOUND": ("unknown_group", "The group does not exist on the cluster.", False),
    "GROUP_SUBSCRIBED_TO_TOPIC": (
        "group_subscribed",
        "Active members of the group are subscribed to this topic.",
        True,
    ),
    "OFFSET_OUT_OF_RANGE": ("offset_out_of_range", "The offset is outside the partition's log.", False),
    "THROTTLING_QUOTA_EXCEEDED": (
        "throttled",
        "The cluster's mutation quota was exceeded; retry later.",
        True,
    ),
    "INVALID_REQUEST": ("invalid_request", "The cluster refused the request as invalid.", False),
    "SECURITY_DISABLED": ("security_disabled", "The cluster has no authorizer or SASL configured.", False),
}


def refusal_for(error: KafkaGatewayError) -> ServiceError:
    details = {"kafka_error": error.error_name, "message": error.message}
    if isinstance(error, ClusterUnreachable):
        return ServiceError(
            "The cluster did not answer in time.", code="cluster_unreachable", details=details
        )
    if isinstance(error, AuthenticationFailed):
        return ServiceError(
            "The cluster refused the control plane's credentials.",
            code="authentication_failed",
            details=details,
        )
    if isinstance(error, NotAuthorized):
        return ServiceError(
            "The control plane's principal is not allowed to do this.", code="cluster_denied", details=details
        )
    code, message, conflict = EXPLANATIONS.get(
        error.error_name, ("kafka_error", f"The cluster refused the request ({error.error_name}).", False)
    )
    return (Conflict if conflict else ServiceError)(message, code=code, details=details)


@contextmanager
def kafka_refusals() -> Iterator[None]:
    """Gateway errors inside the block become API refusals (which audited_change records as failures)."""
    try:
        yield
    except KafkaGatewayError as error:
        raise refusal_for(error) from error
