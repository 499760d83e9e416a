"""Differences from Apache Kafka the corpus finds that are known, each with why it is left (or who owns it).

Keyed by step name (corpus.py). The CI test fails on any difference not listed here, and on a listed one that no
longer shows (then it was fixed: remove it here and from the README table).
"""

from __future__ import annotations

ARGUED = "argued"  # a deliberate, harmless difference, argued in the README
OPEN = "open"  # a real difference not fixed yet
OTHERS = "owned by another issue"

KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "metadata auto-creates a topic: v0–3 always allow it": (
        ARGUED,
        "ours creates the topic before answering (its leader at once); Kafka answers UNKNOWN_TOPIC_OR_PARTITION "
        "while its controller creates it, and the client asks again",
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
    "create an ACL with an unknown operation": (
        ARGUED,
        "Kafka closes the connection (the request does not parse into its enum); ours answers INVALID_REQUEST",
    ),
    "describe ACLs with a bad filter": (
        ARGUED,
        "Kafka closes the connection (the request does not parse into its enum); ours answers INVALID_REQUEST",
    ),
    "idempotent produce starting at sequence 5": (
        ARGUED,
        "a producer this partition knows nothing of (its batches expired or were deleted): Kafka takes any first "
        "sequence, ours answers UNKNOWN_PRODUCER_ID unless it is 0, and the client bumps its epoch and starts again "
        "at 0; Kafka's way lets a later batch in before a retried earlier one, which then fails out of order",
    ),
    "idempotent produce out of sequence": (
        ARGUED,
        "follows from the step before: Kafka expects sequence 6 after taking 5, ours took this 0 as the first",
    ),
    "produce a control batch": (OTHERS, "Kafka refuses it without a message (Produce batch validation)"),
    "describe quorum": (
        ARGUED,
        "a single node of ours has a static quorum: no voter directory ids and no v2 node listeners",
    ),
}
