"""Turns a failed Kafka call into the API's refusal: a 4xx that says in words what happened and what to do.

Every refusal carries `details.kafka_error` (Kafka's or librdkafka's name, for scripts and support),
`details.message` (the cluster's own words) and `details.hint` (what the person can do about it). The
message itself never is a bare error name: consoles show it as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from controlplane.core.errors import Conflict, ServiceError
from controlplane.kafka.errors import (
    AuthenticationFailed,
    ClusterUnreachable,
    KafkaGatewayError,
    NotAuthorized,
)


@dataclass(frozen=True)
class Explanation:
    code: str
    message: str
    hint: str
    # A conflict with the resource's current state (409), rather than a bad request (400).
    conflict: bool = False


_RETRY_LATER = "Wait a moment and try again; the cluster page shows whether its brokers are up."
_CHECK_BROKERS = (
    "Check the cluster's health (Clusters → the cluster → Check health): a broker may be down or paused. "
    "Try again once it is back."
)

EXPLANATIONS: dict[str, Explanation] = {
    "TOPIC_ALREADY_EXISTS": Explanation(
        "duplicate",
        "A topic with this name already exists on the cluster.",
        "Pick another name, or adopt the existing topic.",
        True,
    ),
    "INVALID_PARTITIONS": Explanation(
        "invalid_partitions",
        "The partition count is not valid for this topic.",
        "Ask for at least 1 partition.",
    ),
    "INVALID_REPLICATION_FACTOR": Explanation(
        "invalid_replication_factor",
        "The cluster cannot place that many replicas.",
        "Ask for at most as many replicas as the cluster has brokers up.",
    ),
    "INVALID_CONFIG": Explanation(
        "invalid_config",
        "The cluster rejected a config value.",
        "Correct the value the cluster named and save again.",
    ),
    "POLICY_VIOLATION": Explanation(
        "policy_violation",
        "The cluster's own policy refused the request.",
        "Ask the cluster's operators which values its policy allows.",
    ),
    "UNKNOWN_TOPIC_OR_PART": Explanation(
        "unknown_topic",
        "The topic or partition does not exist on the cluster.",
        "Reload the page: it may have been deleted meanwhile.",
    ),
    "INVALID_TOPIC_EXCEPTION": Explanation(
        "invalid_topic",
        "Kafka does not accept this topic name.",
        "Use letters, digits, '.', '_' and '-' only, at most 249 characters.",
    ),
    "NON_EMPTY_GROUP": Explanation(
        "group_active",
        "The group has active members.",
        "Stop its consumers first, then try again.",
        True,
    ),
    "GROUP_ID_NOT_FOUND": Explanation(
        "unknown_group", "The group does not exist on the cluster.", "Reload the page: it may have expired."
    ),
    "GROUP_SUBSCRIBED_TO_TOPIC": Explanation(
        "group_subscribed",
        "Active members of the group are subscribed to this topic.",
        "Stop the group's consumers of this topic first.",
        True,
    ),
    "OFFSET_OUT_OF_RANGE": Explanation(
        "offset_out_of_range",
        "The offset is outside the partition's log.",
        "Pick an offset between the partition's start and end offsets.",
    ),
    "THROTTLING_QUOTA_EXCEEDED": Explanation(
        "throttled", "The cluster's mutation quota was exceeded.", _RETRY_LATER, True
    ),
    "INVALID_REQUEST": Explanation(
        "invalid_request",
        "The cluster refused the request as invalid.",
        "Check the values; the cluster's words are below.",
    ),
    "SECURITY_DISABLED": Explanation(
        "security_disabled",
        "The cluster has no authorizer or SASL configured.",
        "ACLs and SCRAM users need a cluster with security enabled.",
    ),
    "NOT_ENOUGH_REPLICAS": Explanation(
        "not_enough_replicas",
        "Fewer replicas are in sync than the topic's min.insync.replicas.",
        "Bring the missing brokers back, or lower min.insync.replicas.",
    ),
    "NOT_CONTROLLER": Explanation(
        "controller_moving",
        "The cluster's controller is changing.",
        _RETRY_LATER,
        True,
    ),
    "LEADER_NOT_AVAILABLE": Explanation(
        "leader_not_available",
        "A partition has no leader right now (an election is running, or its brokers are down).",
        _CHECK_BROKERS,
        True,
    ),
    "NOT_LEADER_OR_FOLLOWER": Explanation(
        "leader_moving", "A partition's leadership moved while the request ran.", _RETRY_LATER, True
    ),
    "BROKER_NOT_AVAILABLE": Explanation("broker_not_available", "A broker is not available.", _CHECK_BROKERS),
    "KAFKA_STORAGE_ERROR": Explanation(
        "storage_error",
        "A broker cannot write to its disk.",
        "An org admin should look at the broker's log dirs (the broker page shows them).",
    ),
    "REASSIGNMENT_IN_PROGRESS": Explanation(
        "reassignment_in_progress",
        "Partitions of this topic are being reassigned.",
        "Wait for the reassignment to finish (the Brokers tab shows its progress).",
        True,
    ),
    "UNSUPPORTED_VERSION": Explanation(
        "unsupported_version",
        "The cluster's Kafka version does not support this request.",
        "Upgrade the cluster, or do this with the cluster's own tools.",
    ),
}


def _cluster_words(error: KafkaGatewayError) -> str:
    """The cluster's own reason, when it gave one worth showing (librdkafka's local texts are not)."""
    text = (error.message or "").strip()
    return "" if error.error_name.startswith("_") else text


def refusal_for(error: KafkaGatewayError, *, outcome: str = "") -> ServiceError:
    """The refusal for `error`; `outcome` adds what became of the request ("Nothing was sent.")."""
    details = {"kafka_error": error.error_name, "message": error.message}
    if isinstance(error, ClusterUnreachable):
        return ServiceError(
            " ".join(
                filter(
                    None,
                    [
                        "The cluster did not answer in time: its brokers may be down, paused or overloaded.",
                        outcome,
                    ],
                )
            ),
            code="cluster_unreachable",
            details={**details, "hint": _CHECK_BROKERS},
        )
    if isinstance(error, AuthenticationFailed):
        return ServiceError(
            "The cluster refused the control plane's credentials.",
            code="authentication_failed",
            details={**details, "hint": "An org admin should update the cluster's credentials."},
        )
    if isinstance(error, NotAuthorized):
        return ServiceError(
            "The cluster's ACLs do not let the control plane do this.",
            code="cluster_denied",
            details={
                **details,
                "hint": "Grant the control plane's principal the rights, or use a super user.",
            },
        )
    explanation = EXPLANATIONS.get(
        error.error_name,
        Explanation(
            "kafka_error",
            f"The cluster refused the request ({error.error_name}).",
            "Check the values and the cluster's health, then try again.",
        ),
    )
    words = _cluster_words(error)
    message = f"{explanation.message} The cluster said: {words}" if words else explanation.message
    message = f"{message} {outcome}" if outcome else message
    return (Conflict if explanation.conflict else ServiceError)(
        message, code=explanation.code, details={**details, "hint": explanation.hint}
    )


@contextmanager
def kafka_refusals() -> Iterator[None]:
    """Gateway errors inside the block become API refusals (which audited_change records as failures)."""
    try:
        yield
    except KafkaGatewayError as error:
        raise refusal_for(error) from error
