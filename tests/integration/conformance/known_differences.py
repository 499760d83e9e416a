"""Differences from Apache Kafka the corpus finds that are known, each with why it is left (or who owns it).

Keyed by step name (corpus.py). The CI test fails on any difference not listed here, and on a listed one that no
longer shows (then it was fixed: remove it here and from the README table).
"""

from __future__ import annotations

ARGUED = "argued"  # a deliberate, harmless difference, argued in the README
OPEN = "open"  # a real difference not fixed yet
OTHERS = "owned by another issue"

KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    # Kafka 4.2 vs the Kafka 4.0 our broker implements.
    "create the main topic (3 partitions)": (
        OPEN,
        "topic configs Kafka has and ours lacks (compression levels, …)",
    ),
    "create a compacted topic": (OPEN, "topic configs Kafka has and ours lacks (compression levels, …)"),
    "create topics, one per version": (
        OPEN,
        "topic configs Kafka has and ours lacks (compression levels, …)",
    ),
    "create with validate_only": (OPEN, "topic configs Kafka has and ours lacks (compression levels, …)"),
    "describe topic configs": (
        OPEN,
        "topic configs Kafka has and ours lacks; synonyms; '' vs null error message",
    ),
    "describe some topic configs": (OPEN, "retention.ms synonyms: ours lists log.retention.ms's default"),
    "describe configs after the changes": (
        OPEN,
        "retention.ms synonyms: ours lists log.retention.ms's default",
    ),
    "describe configs of an unknown topic": (OPEN, "Kafka answers an empty message"),
    "describe a broker's config": (OPEN, "Kafka answers '' as the message of a success"),
    "metadata auto-creates a topic (v0–3 always allow it)": (
        ARGUED,
        "ours creates the topic before answering (its leader at once); Kafka answers UNKNOWN_TOPIC_OR_PARTITION "
        "while its controller creates it, and the client asks again",
    ),
    "alter a read-only broker config": (
        ARGUED,
        "num.network.threads sizes a JVM thread pool ours does not have; ours refuses it as unknown",
    ),
    "incremental alter: unknown operation": (
        ARGUED,
        "Kafka answers UNKNOWN_SERVER_ERROR (an unhandled exception); ours INVALID_REQUEST naming the operation",
    ),
    "add a raft voter that does not answer": (
        ARGUED,
        "a single node of ours has a static quorum (kraft.version 0): UNSUPPORTED_VERSION; the fixture formats "
        "Kafka --standalone (kraft.version 1). Clusters of ours are dynamic and answer as Kafka",
    ),
    "remove a raft voter that is not one": (
        ARGUED,
        "as AddRaftVoter: a single node of ours has a static quorum",
    ),
    "api versions with an invalid software name": (
        OPEN,
        "Kafka refuses an invalid client software name (42)",
    ),
    "create an ACL with an unknown operation": (
        ARGUED,
        "Kafka closes the connection (the request does not parse into its enum); ours answers INVALID_REQUEST",
    ),
    "describe ACLs with a bad filter": (
        ARGUED,
        "Kafka closes the connection (the request does not parse into its enum); ours answers INVALID_REQUEST",
    ),
    "describe client quotas of an unknown entity type": (OPEN, "Kafka answers UNSUPPORTED_VERSION (35)"),
    "produce a keyless record to a compacted topic": (
        OPEN,
        "log_start_offset of a refused batch: Kafka 0, ours -1",
    ),
    "produce a control batch": (OPEN, "log_start_offset of a refused batch: Kafka 0, ours -1"),
    "fetch past the log end": (OPEN, "OFFSET_OUT_OF_RANGE: Kafka answers high watermark and LSO -1"),
    "fetch an unknown partition": (OPEN, "aborted_transactions: Kafka [] on an error, ours null"),
    "fetch an unknown topic": (OPEN, "aborted_transactions: Kafka [] on an error, ours null"),
    "list offsets max timestamp": (OPEN, "-3 (max timestamp) before v7: Kafka UNSUPPORTED_VERSION"),
    "describe producers": (OPEN, "unknown topic: Kafka gives a message"),
    "create partitions of an unknown topic": (OPEN, "Kafka answers no message"),
    "describe cluster for controllers": (
        OPEN,
        "endpoint_type 2 at a broker: Kafka MISMATCHED_ENDPOINT_TYPE (114)",
    ),
    "alter reassignments: cancel none in progress": (OPEN, "Kafka answers no message"),
    "describe quorum": (
        ARGUED,
        "a single node of ours has a static quorum: no voter directory ids and no v2 node listeners; Kafka "
        "answers '' as the message of a success",
    ),
    "describe quorum of another topic": (OPEN, "Kafka answers 0 for leader id, epoch and high watermark"),
    "delete an unknown topic id": (OPEN, "Kafka gives a message"),
    "find the group coordinator": (OPEN, "Kafka answers the message 'NONE' with error 0 (v1+)"),
    "find the transaction coordinator": (OPEN, "Kafka answers the message 'NONE' with error 0 (v1+)"),
    "commit offsets as the member": (
        OPEN,
        "v2–3 before the sync: Kafka UNKNOWN_MEMBER_ID (25), ours REBALANCE_IN_PROGRESS",
    ),
    "commit offsets with a stale generation": (
        OPEN,
        "Kafka UNKNOWN_MEMBER_ID (25), ours REBALANCE_IN_PROGRESS (27)",
    ),
    "describe the groups": (OPEN, "authorized operations: Kafka adds DESCRIBE_CONFIGS and ALTER_CONFIGS"),
    "delete the offset of an unsubscribed topic": (
        OPEN,
        "an unknown partition: Kafka UNKNOWN_TOPIC_OR_PARTITION",
    ),
    "consumer group heartbeat: join without a subscription": (
        OPEN,
        "member_epoch of a refusal: Kafka 0, ours -1",
    ),
    "consumer group heartbeat: unknown assignor": (OPEN, "member_epoch of a refusal: Kafka 0, ours -1"),
    "consumer group describe": (OPEN, "epochs of a missing group 0 (ours -1); an unset regex ''"),
    "describe the open transaction": (
        OPEN,
        "ours sends a negative start time for an unknown id: kio cannot decode it",
    ),
    "list transactions in an unknown state": (
        OPEN,
        "Kafka lists nothing for an unknown state filter and names it",
    ),
    "fetch read_committed after the commit": (OPEN, "aborted transactions listed after a commit"),
    "create an ACL": (OPEN, "Kafka answers '' as the message of a success"),
    "describe ACLs": (OPEN, "Kafka answers '' as the message of a success"),
    "describe client quotas": (OPEN, "Kafka answers '' as the message of a success"),
    "describe SCRAM credentials": (OPEN, "Kafka answers '' as the message of a success"),
}
