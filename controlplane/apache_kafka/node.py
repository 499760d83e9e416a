"""One Apache Kafka node of a StreamHub cluster: its server.properties, its storage format, its JVM.

Plain values in, files and command lines out (no Django, no processes): the Apache Kafka provisioner
(controlplane/clusters/provisioners/apache_kafka.py) decides where nodes live and runs what this builds.

A node is KRaft, always: `broker,controller` for the quorum's voters, `broker` for the others. Clients and
brokers speak SASL_PLAINTEXT with SCRAM on 127.0.0.1 (brokers authenticate to each other as the control
plane's super user), ACLs are on (StandardAuthorizer), and the controller listener is mutual TLS with the
cluster's own CA, as our broker's local clusters are.
"""

from __future__ import annotations

import base64
import contextlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.apache_kafka import runtime

CONTROLLER_LISTENER = "CONTROLLER"
CLIENT_LISTENER = "SASL_PLAINTEXT"
SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
INTER_BROKER_MECHANISM = "SCRAM-SHA-512"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# Peers on the controller listener present a certificate of the cluster's CA (CN=node-<id>); they all map
# to this principal, a super user, since brokers' registrations and heartbeats need CLUSTER_ACTION.
QUORUM_PRINCIPAL = "streamhub-quorum"
# Heap per node, the same for every node: 512 MiB holds a KRaft combined node's metadata, the request
# buffers and a few thousand partitions' indexes at this scale; the page cache (not the heap) holds the
# data. A fresh node's RSS is ~370-390 MiB (bench/engine_provisioning.py); it can grow towards the heap plus
# ~200 MiB (metaspace, threads, direct buffers) as the heap fills.
DEFAULT_HEAP_MB = 512
MIN_HEAP_MB = 256
# The JVM exits (the provisioner then reports the log tail) instead of limping on without memory.
NODE_JVM_OPTIONS = ("-XX:+ExitOnOutOfMemoryError",)
# Which MBeans the JMX exporter reads on each scrape (everything else is skipped, which keeps it cheap).
JMX_EXPORTER_RULES = """\
# Written by StreamHub: Apache Kafka's MBeans under the metric names our broker serves on metrics.port.
lowercaseOutputName: true
includeObjectNames:
  - "kafka.server:type=BrokerTopicMetrics,*"
  - "kafka.network:type=RequestMetrics,name=RequestsPerSec,*"
  - "kafka.server:type=ReplicaManager,*"
rules:
  - pattern: 'kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec, topic=(.+)><>Count'
    name: kafka_broker_topic_bytes_in_total
    type: COUNTER
    labels: {topic: "$1"}
  - pattern: 'kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec, topic=(.+)><>Count'
    name: kafka_broker_topic_bytes_out_total
    type: COUNTER
    labels: {topic: "$1"}
  - pattern: 'kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec, topic=(.+)><>Count'
    name: kafka_broker_topic_messages_in_total
    type: COUNTER
    labels: {topic: "$1"}
  - pattern: 'kafka.network<type=RequestMetrics, name=RequestsPerSec, request=(\\w+), version=(\\d+)><>Count'
    name: kafka_broker_requests_total
    type: COUNTER
    labels: {api: "$1", version: "$2"}
  - pattern: 'kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value'
    name: kafka_broker_under_replicated_partitions
    type: GAUGE
"""


class UnwritableProperty(ValueError):
    """A value that would break the properties line or the JAAS line it goes into."""


def heap_mb() -> int:
    """APACHE_KAFKA_NODE_HEAP_MB, or DEFAULT_HEAP_MB."""
    configured = os.environ.get("APACHE_KAFKA_NODE_HEAP_MB", "")
    if not configured:
        return DEFAULT_HEAP_MB
    if not configured.isdigit() or int(configured) < MIN_HEAP_MB:
        raise UnwritableProperty(
            f"APACHE_KAFKA_NODE_HEAP_MB={configured!r}: a whole number of MiB, at least {MIN_HEAP_MB}"
        )
    return int(configured)


def kafka_uuid(value: uuid.UUID) -> str:
    """A UUID as Kafka writes one (org.apache.kafka.common.Uuid: URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def cluster_uuid(cluster_key: str) -> str:
    """The Kafka cluster id of the StreamHub cluster `cluster_key`: the same on every format of every node
    (a retried provisioning, a node added later)."""
    return kafka_uuid(uuid.uuid5(uuid.NAMESPACE_URL, f"streamhub:cluster:{cluster_key}"))


def initial_controllers_argument(voters: str) -> str:
    """`id@host:port:directory-id,...` with each directory id (a UUID in any form Python reads, or already
    Kafka's base64) written as kafka-storage expects it."""
    converted = []
    for voter in voters.split(","):
        address, _, directory = voter.rpartition(":")
        with contextlib.suppress(ValueError):  # not a UUID string: Kafka's own form already
            directory = kafka_uuid(uuid.UUID(directory))
        converted.append(f"{address}:{directory}")
    return ",".join(converted)


@dataclass(frozen=True)
class NodeSpec:
    """What one node's configuration depends on."""

    node_id: int
    host: str
    port: int
    data_dir: Path
    controller_port: int
    # host:port of every controller voter (controller.quorum.bootstrap.servers).
    quorum_bootstrap: str
    super_user: str
    super_user_password: str = field(repr=False)
    # The node's PEM keystore (key + certificate) and the cluster CA, for the controller listener.
    keystore: Path = Path()
    truststore: Path = Path()

    @property
    def is_controller(self) -> bool:
        return self.controller_port > 0

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"


def server_properties(spec: NodeSpec, defaults: dict[str, str], overrides: dict[str, str]) -> dict[str, str]:
    """The node's server.properties: `defaults` (replication, timings), the cluster's `overrides`, then
    what StreamHub owns (roles, listeners, security), which overrides cannot change."""
    user, password = spec.super_user, spec.super_user_password
    if not user or not password or any(char in f"{user}{password}" for char in ';\r\n\\"'):
        raise UnwritableProperty("The cluster's super user name or password cannot be written to its config.")
    client = f"{CLIENT_LISTENER}://{spec.host}:{spec.port}"
    controller = f"{CONTROLLER_LISTENER}://{spec.host}:{spec.controller_port}"
    controller_prefix = f"listener.name.{CONTROLLER_LISTENER.lower()}."
    client_prefix = f"listener.name.{CLIENT_LISTENER.lower()}."
    owned = {
        "node.id": str(spec.node_id),
        "process.roles": "broker,controller" if spec.is_controller else "broker",
        "controller.quorum.bootstrap.servers": spec.quorum_bootstrap,
        "controller.listener.names": CONTROLLER_LISTENER,
        "listeners": f"{client},{controller}" if spec.is_controller else client,
        # A dynamic quorum's voters advertise their controller endpoint (AddRaftVoter sends it).
        "advertised.listeners": f"{client},{controller}" if spec.is_controller else client,
        "inter.broker.listener.name": CLIENT_LISTENER,
        "listener.security.protocol.map": f"{CLIENT_LISTENER}:SASL_PLAINTEXT,{CONTROLLER_LISTENER}:SSL",
        "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
        "sasl.mechanism.inter.broker.protocol": INTER_BROKER_MECHANISM,
        # The broker's own login for inter-broker SCRAM; the other mechanism's server side needs a module.
        f"{client_prefix}{INTER_BROKER_MECHANISM.lower()}.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{user}" password="{password}";'
        ),
        **{
            f"{client_prefix}{mechanism.lower()}.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            )
            for mechanism in SASL_MECHANISMS
            if mechanism != INTER_BROKER_MECHANISM
        },
        "authorizer.class.name": AUTHORIZER,
        "allow.everyone.if.no.acl.found": "false",
        "super.users": f"User:{user};User:{QUORUM_PRINCIPAL}",
        f"{controller_prefix}ssl.client.auth": "required",
        f"{controller_prefix}ssl.keystore.type": "PEM",
        f"{controller_prefix}ssl.keystore.location": str(spec.keystore),
        f"{controller_prefix}ssl.truststore.type": "PEM",
        f"{controller_prefix}ssl.truststore.location": str(spec.truststore),
        f"{controller_prefix}ssl.principal.mapping.rules": (
            f"RULE:^CN=node-[0-9]+$/{QUORUM_PRINCIPAL}/,DEFAULT"
        ),
        "log.dirs": str(spec.log_dir),
    }
    return {**defaults, **overrides, **owned}


def properties_text(properties: dict[str, str]) -> str:
    """The properties file's text, `\\` and line breaks escaped as java.util.Properties reads them."""
    lines = ["# Written by the StreamHub Apache Kafka provisioner; changes are overwritten.\n"]
    for name, value in sorted(properties.items()):
        if any(char in f"{name}{value}" for char in "\r\n"):
            raise UnwritableProperty(f"{name}: a line break cannot be written to server.properties")
        lines.append(f"{name}={value.replace(chr(92), chr(92) * 2)}\n")
    return "".join(lines)


def format_arguments(
    config: Path,
    cluster_id: str,
    *,
    quorum: str,
    initial_controllers: str = "",
    super_user: str = "",
    super_user_password: str = "",
) -> list[str]:
    """kafka-storage format's arguments. `quorum` is "initial" (with `initial_controllers`), "join" (a
    controller that joins a running quorum as an observer) or "broker" (a broker-only node). The super
    user's SCRAM credentials go into the bootstrap metadata of the initial controllers."""
    arguments = ["format", "--cluster-id", cluster_id, "--config", str(config), "--ignore-formatted"]
    if quorum == "initial":
        arguments += ["--initial-controllers", initial_controllers_argument(initial_controllers)]
        for mechanism in SASL_MECHANISMS:
            arguments += ["--add-scram", f"{mechanism}=[name={super_user},password={super_user_password}]"]
    elif quorum == "join":
        arguments.append("--no-initial-controllers")
    elif quorum != "broker":
        raise ValueError(f"quorum: {quorum!r}")
    return arguments


def argument_file_text(arguments: list[str]) -> str:
    """Arguments as a `java @file` reads them (one per line, quoted): the super user's password stays off
    the command line, which every local user can read in /proc."""
    return "".join('"' + argument.replace("\\", "\\\\").replace('"', '\\"') + '"\n' for argument in arguments)


def storage_tool_command(
    installation: runtime.Installation, argument_file: Path, arguments: list[str]
) -> tuple[list[str], str]:
    """The format command line (JVM options, then `@argument_file`) and the text to write into
    `argument_file` (the classpath, the main class and `arguments`)."""
    command = installation.command(runtime.STORAGE_TOOL_MAIN, *arguments)
    split = command.index("-cp")
    return [*command[:split], f"@{argument_file}"], argument_file_text(command[split:])


def broker_command(
    installation: runtime.Installation,
    config: Path,
    *,
    log4j_config: Path,
    metrics_port: int,
    metrics_rules: Path,
    heap: int,
) -> list[str]:
    """The node's `kafka.Kafka` command line: its heap, the JMX exporter on 127.0.0.1:`metrics_port`."""
    agent = f"-javaagent:{installation.jmx_exporter_agent}=127.0.0.1:{metrics_port}:{metrics_rules}"
    options = NODE_JVM_OPTIONS + ((agent,) if metrics_port else ())
    return installation.command(
        runtime.BROKER_MAIN, str(config), heap=f"{heap}m", log4j_config=log4j_config, jvm_options=options
    )
