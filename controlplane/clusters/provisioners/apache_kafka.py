"""The `apache-kafka` engine of local clusters: Apache Kafka JVMs (`kafka.Kafka`) on this host, on 127.0.0.1.

The same layout and workflows as the local provisioner of our broker (it is one, with other processes):
`DATA_DIR/clusters/<cluster id>/node-<node id>/` holds broker.properties (0600), broker.log (log4j, rolled),
broker.out (the JVM's own stdout/stderr: a missing Java, an OutOfMemoryError), broker.pid, the JMX
exporter's rules and the logs/. Every node is KRaft (there is no ZooKeeper-less single broker without a
controller in Apache Kafka): a cluster of one is one combined node voting alone, larger ones have three
combined nodes and brokers beyond. The quorum is dynamic (KIP-853): the initial voters are formatted with
`--initial-controllers`, a replacement with `--no-initial-controllers`, broker-only nodes with neither.
The super user's SCRAM credentials are written into the bootstrap metadata by `kafka-storage format
--add-scram`, from a 0600 argument file, never from a command line. Node configs come from
controlplane/apache_kafka/node.py.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import time
from pathlib import Path

from controlplane.apache_kafka import node as kafka_node
from controlplane.apache_kafka import runtime
from controlplane.clusters.provisioners.base import (
    ClusterTopology,
    ListenerSecurity,
    NodePlan,
    ProvisioningFailed,
)
from controlplane.clusters.provisioners.local import (
    FAILOVER_TIMINGS,
    HOST,
    LOG_TAIL_LINES,
    MAX_CONTROLLERS,
    MIN_FREE_BYTES,
    LocalProvisioner,
    _write_private,
    port_is_free,
)
from controlplane.clusters.replication_defaults import replication_defaults

FORMAT_TIMEOUT_SECONDS = 120
PORT_RELEASE_SECONDS = 5.0
STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
# The JVM's own output: its last lines say why it did not start when log4j never got going.
JVM_OUTPUT_TAIL_LINES = 10


def apache_kafka_controller_ids(broker_count: int) -> set[int]:
    """Apache Kafka nodes are always KRaft: a single node votes alone."""
    return set(range(1, min(broker_count, MAX_CONTROLLERS) + 1))


class ApacheKafkaProvisioner(LocalProvisioner):
    # A JVM needs 5-10 s to answer on a quiet machine of two cores, several times that on a loaded one.
    start_timeout_seconds = 90.0

    def __init__(self, version: str, root: Path | None = None) -> None:
        super().__init__(root)
        self.version = version

    def controller_ids(self, broker_count: int) -> set[int]:
        return apache_kafka_controller_ids(broker_count)

    def installation(self) -> runtime.Installation:
        try:
            runtime.java_binary()
            return runtime.installation(self.version)
        except runtime.ApacheKafkaNotInstalled as error:
            raise ProvisioningFailed(str(error)) from error

    def output_path(self, node: NodePlan) -> Path:
        return node.data_dir / "broker.out"

    def metrics_rules_path(self, node: NodePlan) -> Path:
        return node.data_dir / "jmx-exporter.yaml"

    def _spec(
        self, cluster_id: int, node: NodePlan, topology: ClusterTopology, security: ListenerSecurity
    ) -> kafka_node.NodeSpec:
        if not security.uses_sasl:
            raise ProvisioningFailed("Apache Kafka clusters listen with SASL_PLAINTEXT and SCRAM only.")
        certificates = self.node_certificates(cluster_id, node)
        return kafka_node.NodeSpec(
            node_id=node.node_id,
            host=node.host,
            port=node.port,
            data_dir=node.data_dir,
            controller_port=node.controller_port,
            quorum_bootstrap=topology.bootstrap_servers_property,
            super_user=security.super_user,
            super_user_password=security.super_user_password,
            keystore=certificates.keystore,
            truststore=certificates.truststore,
        )

    def write_config(
        self,
        *,
        cluster_id: int,
        node: NodePlan,
        overrides: dict[str, str],
        security: ListenerSecurity,
        topology: ClusterTopology | None = None,
    ) -> None:
        if topology is None or not topology.replicated:
            raise ProvisioningFailed("An Apache Kafka node needs the cluster's controller voters.")
        defaults = {**replication_defaults(len(topology.voters)), **FAILOVER_TIMINGS}
        try:
            node.data_dir.mkdir(parents=True, exist_ok=True)
            node.data_dir.chmod(0o700)
            spec = self._spec(cluster_id, node, topology, security)
            text = kafka_node.properties_text(kafka_node.server_properties(spec, defaults, overrides))
            free = shutil.disk_usage(node.data_dir).free
            if free < MIN_FREE_BYTES:
                raise ProvisioningFailed(
                    f"Only {free // (1024 * 1024)} MiB free on the disk of {node.data_dir}; "
                    f"a broker needs at least {MIN_FREE_BYTES // (1024 * 1024)} MiB."
                )
            _write_private(self.config_path(node), text)
            self.metrics_rules_path(node).write_text(kafka_node.JMX_EXPORTER_RULES)
            # The cluster id is part of the node's files, so a start without a format can format it.
            (node.data_dir / "cluster.id").write_text(kafka_node.cluster_uuid(str(cluster_id)) + "\n")
        except kafka_node.UnwritableProperty as error:
            raise ProvisioningFailed(str(error)) from error
        except OSError as error:
            raise ProvisioningFailed(f"Cannot write the config of broker {node.node_id}: {error}") from error

    def _format(self, node: NodePlan, arguments: list[str]) -> None:
        argument_file = node.data_dir / "format.args"
        command, text = kafka_node.storage_tool_command(self.installation(), argument_file, arguments)
        try:
            _write_private(argument_file, text)
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=FORMAT_TIMEOUT_SECONDS, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ProvisioningFailed(f"Cannot format node {node.node_id}: {error}") from error
        finally:
            argument_file.unlink(missing_ok=True)
        if done.returncode != 0:
            output = without_stack_frames((done.stdout + done.stderr).strip().splitlines())
            raise ProvisioningFailed(
                f"Cannot format node {node.node_id} (kafka-storage format exited with {done.returncode}): "
                + "\n".join(output[-JVM_OUTPUT_TAIL_LINES:])
            )

    def _cluster_id(self, node: NodePlan) -> str:
        try:
            return (node.data_dir / "cluster.id").read_text().strip()
        except OSError as error:
            raise ProvisioningFailed(f"Node {node.node_id} has no config yet: {error}") from error

    def _is_formatted(self, node: NodePlan) -> bool:
        return (node.data_dir / "logs" / "meta.properties").exists()

    def format_controller(self, node: NodePlan, *, initial_controllers: str | None) -> None:
        if self._is_formatted(node):
            return
        if initial_controllers:
            security = self._security_from_config(node)
            arguments = kafka_node.format_arguments(
                self.config_path(node),
                self._cluster_id(node),
                quorum="initial",
                initial_controllers=initial_controllers,
                super_user=security[0],
                super_user_password=security[1],
            )
        else:
            arguments = kafka_node.format_arguments(
                self.config_path(node), self._cluster_id(node), quorum="join"
            )
        self._format(node, arguments)

    def _security_from_config(self, node: NodePlan) -> tuple[str, str]:
        """The super user and password from the node's own 0600 config (its inter-broker login)."""
        prefix = (
            f"listener.name.{kafka_node.CLIENT_LISTENER.lower()}.{kafka_node.INTER_BROKER_MECHANISM.lower()}"
        )
        for line in self.config_path(node).read_text().splitlines():
            if line.startswith(f"{prefix}.sasl.jaas.config="):
                parts = line.split('"')
                return parts[1], parts[3]
        raise ProvisioningFailed(f"Node {node.node_id}'s config has no inter-broker login.")

    def start(self, node: NodePlan) -> int:
        installation = self.installation()
        # The node's previous JVM may still be closing its sockets: once its main thread is gone its
        # process reads as a zombie (stopped, or killed), while its other threads still hold the ports.
        ports = [port for port in (node.port, node.controller_port, node.metrics_port) if port]
        deadline = time.monotonic() + PORT_RELEASE_SECONDS
        while (taken := [port for port in ports if not port_is_free(port)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        if taken:
            raise ProvisioningFailed(f"Port {taken[0]} on {HOST} is already in use.")
        if not self._is_formatted(node):
            # A broker-only node (controllers are formatted by the workflow, with the quorum's voters).
            self._format(
                node,
                kafka_node.format_arguments(self.config_path(node), self._cluster_id(node), quorum="broker"),
            )
        try:
            heap = kafka_node.heap_mb()
        except kafka_node.UnwritableProperty as error:
            raise ProvisioningFailed(str(error)) from error
        log4j = runtime.file_log4j_config(node.data_dir / "log4j2.properties", self.log_path(node))
        command = kafka_node.broker_command(
            installation,
            self.config_path(node),
            log4j_config=log4j,
            metrics_port=node.metrics_port,
            metrics_rules=self.metrics_rules_path(node),
            heap=heap,
        )
        return self.launch_detached(node, command, output=self.output_path(node))

    def log_tail(self, node: NodePlan) -> str:
        """The JVM's own output (a missing class, an OutOfMemoryError), then log4j's log, without the Java
        stack frames that would push the reason itself out of the tail."""
        tail = []
        for path, lines in (
            (self.output_path(node), JVM_OUTPUT_TAIL_LINES),
            (self.log_path(node), LOG_TAIL_LINES),
        ):
            with contextlib.suppress(OSError):
                tail += without_stack_frames(path.read_text(errors="replace").strip().splitlines())[-lines:]
        return "\n".join(tail)


def without_stack_frames(lines: list[str]) -> list[str]:
    """Drops a Java stack trace's frames (`\tat ...`, `... 3 more`), keeping its exception lines."""
    return [line for line in lines if not STACK_FRAME.match(line)]
