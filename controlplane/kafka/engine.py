"""Which engine runs a cluster known only by its address: our broker, Apache Kafka (and its release line), or
something else that speaks the protocol.

No request names the server's software: ApiVersions v3's software name and version travel from the client
to the server only, and DescribeCluster and DescribeFeatures answer with brokers and feature levels. The
signals used, in order:

1. DescribeConfigs of a broker (which any client with DESCRIBE_CONFIGS on the cluster may send) lists the
   broker's configuration keys. Our broker lists properties of its own that Apache Kafka has no config for
   (`metrics.port`); Apache Kafka lists those of its JVM implementation our broker has none of
   (`kafka.metrics.reporters`, `remote.log.storage.system.enable`).
2. ApiVersions v3's SupportedFeatures: the highest metadata.version a node supports is its release's latest
   production level (Apache Kafka 4.0: 25 = 4.0-IV3, 4.1: 27, 4.2: 29; org.apache.kafka.server.common.
   MetadataVersion), so it names the release line, not the patch release. It also identifies Apache Kafka
   when DescribeConfigs is refused: our broker supports at most level 25.
"""

from __future__ import annotations

from dataclasses import dataclass

from kio.schema.api_versions.v3.request import ApiVersionsRequest

from controlplane.kafka.cluster import BrokerNode
from controlplane.kafka.configs import describe_documented_configs
from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, protocol_connection
from controlplane.kafka.errors import KafkaGatewayError

STREAMHUB, APACHE_KAFKA, UNKNOWN = "streamhub", "apache-kafka", "unknown"
STREAMHUB_ONLY_CONFIGS = frozenset({"metrics.port"})
APACHE_KAFKA_ONLY_CONFIGS = frozenset({"kafka.metrics.reporters", "remote.log.storage.system.enable"})
# metadata.version levels -> the release that introduced them; the highest one a node supports is its
# release's (3.3-IV3 is the first KRaft production level).
METADATA_VERSION_RELEASES = {
    7: "3.3", 8: "3.4", 9: "3.5", 10: "3.5", 11: "3.5", 12: "3.6", 13: "3.6", 14: "3.6", 15: "3.7", 16: "3.7",
    17: "3.7", 18: "3.7", 19: "3.7", 20: "3.8", 21: "3.9", 22: "4.0", 23: "4.0", 24: "4.0", 25: "4.0",
    26: "4.1", 27: "4.1", 28: "4.2", 29: "4.2", 30: "4.3",
}  # fmt: skip
STREAMHUB_MAX_METADATA_VERSION = 25


@dataclass(frozen=True)
class DetectedEngine:
    engine: str
    # The release line ("4.2") for Apache Kafka; empty when unknown.
    version: str
    # What gave it away, for the cluster page and the audit log.
    evidence: str


def supported_metadata_version(connection: Connection, address: str, timeout_seconds: float) -> int | None:
    """The highest metadata.version level the node at `address` supports (ApiVersions v3), or None."""
    request = ApiVersionsRequest(client_software_name="streamhub-controlplane", client_software_version="1")
    with protocol_connection(connection, timeout_seconds, address) as wire:
        response = wire.request(request)
    levels = [int(f.max_version) for f in response.supported_features if f.name == "metadata.version"]
    return max(levels, default=None)


def detect_engine(
    connection: Connection, broker: BrokerNode, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> DetectedEngine:
    """Asks `broker` (one node of the cluster) what it is; never raises for a refusal, it only knows less."""
    try:
        level = supported_metadata_version(connection, f"{broker.host}:{broker.port}", timeout_seconds)
    except KafkaGatewayError:
        level = None
    release = METADATA_VERSION_RELEASES.get(level or 0, "")
    features = f"metadata.version up to level {level}" if level is not None else "no metadata.version"
    try:
        names = set(describe_documented_configs(connection, broker=broker, timeout_seconds=timeout_seconds))
    except KafkaGatewayError as error:
        names, refused = set(), f"DescribeConfigs refused ({error.error_name})"
    else:
        refused = ""
    if names & STREAMHUB_ONLY_CONFIGS:
        return DetectedEngine(
            STREAMHUB, "", f"broker configs include {sorted(names & STREAMHUB_ONLY_CONFIGS)}"
        )
    if names & APACHE_KAFKA_ONLY_CONFIGS:
        return DetectedEngine(
            APACHE_KAFKA,
            release,
            f"broker configs include {sorted(names & APACHE_KAFKA_ONLY_CONFIGS)}; {features}",
        )
    if level is not None and level > STREAMHUB_MAX_METADATA_VERSION:
        return DetectedEngine(APACHE_KAFKA, release, f"{features}; {refused or 'no telling configs'}")
    return DetectedEngine(UNKNOWN, "", f"{features}; {refused or 'no telling configs'}")
