"""The `local` provisioner: broker processes (`python -m broker`) on this host, bound to 127.0.0.1.

Each node has a directory `DATA_DIR/clusters/<cluster id>/node-<node id>/` (mode 0700) holding
broker.properties (mode 0600), broker.log, broker.pid and the partition logs. New clusters listen
SASL_PLAINTEXT on loopback with SCRAM and ACLs on; the control plane's super user is created by the
broker from `sasl.bootstrap.users` in broker.properties, so its password is never on a command line.

A cluster of more than one node runs KRaft-style: the first three nodes are `broker,controller` with a
CONTROLLER listener on a loopback port of their own, further nodes are brokers only. New clusters have a
dynamic quorum (KIP-853): nodes find it through `controller.quorum.bootstrap.servers`, each controller's
metadata directory is formatted once (`python -m broker format`), and a controller can be replaced. The quorum speaks
mutual TLS with a CA of the cluster's own (`controller-certificates/` in the cluster directory). Brokers
authenticate to each other as the super user (SCRAM-SHA-512, the JAAS line in broker.properties).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

from controlplane.clusters.provisioners.base import (
    ClusterTopology,
    ListenerSecurity,
    NodePlan,
    Provisioner,
    ProvisioningFailed,
)
from controlplane.clusters.provisioners.certificates import NodeCertificates, issue_cluster_certificates
from controlplane.clusters.replication_defaults import replication_defaults
from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError

HOST = "127.0.0.1"
# Below this much free space a broker cannot even write its first segments and indexes.
MIN_FREE_BYTES = 64 * 1024 * 1024
LOG_TAIL_LINES = 15
# Both SCRAM variants, so clients that only speak SHA-256 can authenticate too; PLAIN is not offered.
SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
INTER_BROKER_MECHANISM = "SCRAM-SHA-512"
CONTROLLER_LISTENER = "CONTROLLER"
# At most this many nodes vote in the controller quorum; more voters only slow every metadata commit.
MAX_CONTROLLERS = 3
# Failover timings of replicated clusters, chosen so producers resume within 5 s of a broker's death
# (bench/cluster_failover.py): a broker heartbeats every 0.4 s and is fenced after 2 s of silence, its
# partitions get new leaders at once, and clients need ~1-2 s more to refresh their metadata; a dead
# active controller is replaced after 1-2 s; a follower falls out of the ISR after 10 s without catching up.
FAILOVER_TIMINGS = {
    "broker.heartbeat.interval.ms": "400",
    "broker.session.timeout.ms": "2000",
    "controller.quorum.election.timeout.ms": "1000",
    "replica.lag.time.max.ms": "10000",
}


def controller_ids(broker_count: int) -> set[int]:
    """The nodes that vote in the controller quorum of a new cluster; none for a single-node cluster."""
    return set(range(1, min(broker_count, MAX_CONTROLLERS) + 1)) if broker_count > 1 else set()


def cluster_properties(
    node: NodePlan,
    topology: ClusterTopology,
    security: ListenerSecurity,
    client: dict[str, str],
    certificates: NodeCertificates,
) -> dict[str, str]:
    """The node's roles, quorum and listeners in a replicated cluster, given its client listener
    properties `client` (from security_properties) and its controller-listener certificate."""
    quorum = (
        {"controller.quorum.bootstrap.servers": topology.bootstrap_servers_property}
        if topology.dynamic
        else {"controller.quorum.voters": topology.voters_property}
    )
    properties = {
        "process.roles": "broker,controller" if node.is_controller else "broker",
        **quorum,
        "controller.listener.names": CONTROLLER_LISTENER,
        "inter.broker.listener.name": security.protocol,
        "listener.security.protocol.map": f"{security.protocol}:{security.protocol}",
    }
    # The quorum speaks mutual TLS with the cluster's own CA: another local process cannot reach
    # the controllers (which hold ACLs and SCRAM credentials) even on loopback.
    properties["listener.security.protocol.map"] += f",{CONTROLLER_LISTENER}:SSL"
    properties.update(certificates.controller_properties(CONTROLLER_LISTENER))
    if node.is_controller:
        properties["listeners"] = (
            f"{client['listeners']},{CONTROLLER_LISTENER}://{node.host}:{node.controller_port}"
        )
    if security.uses_sasl:
        properties["sasl.mechanism.inter.broker.protocol"] = INTER_BROKER_MECHANISM
        listener = security.protocol.lower()
        properties[f"listener.name.{listener}.{INTER_BROKER_MECHANISM.lower()}.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{security.super_user}" password="{security.super_user_password}";'
        )
    return properties


def security_properties(security: ListenerSecurity, address: str) -> dict[str, str]:
    """The listener, SASL and ACL properties of a node listening at `address`."""
    if security.protocol == "PLAINTEXT":
        return {"listeners": f"PLAINTEXT://{address}", "advertised.listeners": f"PLAINTEXT://{address}"}
    if not security.uses_sasl:
        raise ProvisioningFailed(f"Local brokers do not listen with {security.protocol}.")
    user, password = security.super_user, security.super_user_password
    if not user or not password or any(char in f"{user}{password}" for char in ':;\r\n\\"'):
        # These would split or escape the `name:MECHANISM:password;...` list, the JAAS line's quoted
        # values or the properties line.
        raise ProvisioningFailed("The cluster's super user name or password cannot be written to its config.")
    return {
        "listeners": f"SASL_PLAINTEXT://{address}",
        "advertised.listeners": f"SASL_PLAINTEXT://{address}",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
        "sasl.bootstrap.users": ";".join(f"{user}:{mechanism}:{password}" for mechanism in SASL_MECHANISMS),
        "super.users": f"User:{user}",
        "authorizer.class.name": "acl",
        "allow.everyone.if.no.acl.found": "false",
    }


def port_is_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # Like the broker's own listener: connections the broker closed (unauthenticated clients, a
        # stopped broker's clients) linger in TIME_WAIT on its port, and they must not block a restart.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _any_free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _proc_state(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()[0]


def _proc_cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _write_private(path: Path, text: str) -> None:
    """Replaces `path` with `text` in a file that is 0600 from its creation (never briefly readable)."""
    temporary = path.with_suffix(".tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    temporary.replace(path)


class LocalProvisioner(Provisioner):
    # How long a started node may take until it answers Metadata.
    start_timeout_seconds = 30.0

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else Path(settings.DATA_DIR) / "clusters"

    def cluster_dir(self, cluster_id: int) -> Path:
        return self.root / str(cluster_id)

    def config_path(self, node: NodePlan) -> Path:
        return node.data_dir / "broker.properties"

    def log_path(self, node: NodePlan) -> Path:
        return node.data_dir / "broker.log"

    def pid_path(self, node: NodePlan) -> Path:
        return node.data_dir / "broker.pid"

    def plan_nodes(
        self,
        *,
        cluster_id: int,
        node_ids: list[int],
        controller_ids: set[int],
        first_port: int,
        reserved_ports: set[int],
    ) -> list[NodePlan]:
        nodes = []
        taken = set(reserved_ports)

        def free_port() -> int:
            port = _any_free_port()
            while port in taken:
                port = _any_free_port()
            taken.add(port)
            return port

        for index, node_id in enumerate(node_ids):
            if first_port:
                port = first_port + index
                if port in taken or not port_is_free(port):
                    raise ProvisioningFailed(f"Port {port} on {HOST} is already in use.")
                taken.add(port)
            else:
                port = free_port()
            # Controller ports are never the requested ones: clients only need the broker ports.
            controller_port = free_port() if node_id in controller_ids else 0
            data_dir = self.cluster_dir(cluster_id) / f"node-{node_id}"
            nodes.append(
                NodePlan(
                    node_id=node_id,
                    host=HOST,
                    port=port,
                    data_dir=data_dir,
                    controller_port=controller_port,
                    metrics_port=free_port(),
                )
            )
        return nodes

    def write_config(
        self,
        *,
        cluster_id: int,
        node: NodePlan,
        overrides: dict[str, str],
        security: ListenerSecurity,
        topology: ClusterTopology | None = None,
    ) -> None:
        topology = topology or ClusterTopology()
        client = security_properties(security, node.address)
        replicated = {}
        if topology.replicated:
            certificates = self.node_certificates(cluster_id, node)
            replicated = cluster_properties(node, topology, security, client, certificates)
        properties = {
            **replication_defaults(len(topology.voters) or 1),
            **(FAILOVER_TIMINGS if topology.replicated else {}),
            **overrides,
            **client,
            **replicated,
            **({"metrics.port": str(node.metrics_port)} if node.metrics_port else {}),
            "node.id": str(node.node_id),
            "log.dirs": str(node.data_dir / "logs"),
            "cluster.id": f"streamhub-{cluster_id}",
        }
        text = "# Written by the StreamHub local provisioner; changes are overwritten.\n" + "".join(
            f"{name}={value}\n" for name, value in sorted(properties.items())
        )
        try:
            node.data_dir.mkdir(parents=True, exist_ok=True)
            node.data_dir.chmod(0o700)
            free = shutil.disk_usage(node.data_dir).free
            if free < MIN_FREE_BYTES:
                raise ProvisioningFailed(
                    f"Only {free // (1024 * 1024)} MiB free on the disk of {node.data_dir}; "
                    f"a broker needs at least {MIN_FREE_BYTES // (1024 * 1024)} MiB."
                )
            _write_private(self.config_path(node), text)
        except OSError as error:
            raise ProvisioningFailed(f"Cannot write the config of broker {node.node_id}: {error}") from error

    def node_certificates(self, cluster_id: int, node: NodePlan) -> NodeCertificates:
        """The node's controller-listener keystore, issued by the cluster's CA (created on first use;
        its key stays in the cluster directory, which only the control plane's user can read)."""
        directory = self.cluster_dir(cluster_id) / "controller-certificates"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(0o700)
            return issue_cluster_certificates(directory, [node.node_id], [node.host])[node.node_id]
        except (OSError, ValueError) as error:
            raise ProvisioningFailed(
                f"Cannot issue the certificate of broker {node.node_id}: {error}"
            ) from error

    def controller_ids(self, broker_count: int) -> set[int]:
        """The nodes of a new cluster of `broker_count` that vote in its controller quorum."""
        return controller_ids(broker_count)

    def start(self, node: NodePlan) -> int:
        for port in (node.port, node.controller_port, node.metrics_port):
            if port and not port_is_free(port):
                raise ProvisioningFailed(f"Port {port} on {HOST} is already in use.")
        command = [sys.executable, "-m", "broker", "--config", str(self.config_path(node))]
        return self.launch_detached(node, command, output=self.log_path(node))

    def launch_detached(self, node: NodePlan, command: list[str], *, output: Path) -> int:
        """Starts `command` through detach.py (its own session, output appended to `output`, pid file)."""
        launcher = [
            sys.executable,
            "-m",
            "controlplane.clusters.provisioners.detach",
            str(output),
            str(self.pid_path(node)),
            *command,
        ]
        try:
            launched = subprocess.run(
                launcher,
                cwd=settings.BASE_DIR,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ProvisioningFailed(f"Cannot start broker {node.node_id}: {error}") from error
        if launched.returncode != 0:
            raise ProvisioningFailed(f"Cannot start broker {node.node_id}: {launched.stderr.strip()}")
        return int(launched.stdout.strip())

    def format_controller(self, node: NodePlan, *, initial_controllers: str | None) -> None:
        """`python -m broker format` of a dynamic quorum's controller, once (a formatted one is left as it
        is): with the initial voters (`id@host:port:directory-id,...`), or None to join as an observer."""
        if (node.data_dir / "logs" / "__cluster_metadata" / "meta.properties").exists():
            return
        mode = (
            ["--initial-controllers", initial_controllers]
            if initial_controllers
            else ["--no-initial-controllers"]
        )
        command = [sys.executable, "-m", "broker", "format", "--config", str(self.config_path(node)), *mode]
        try:
            done = subprocess.run(
                command, cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ProvisioningFailed(f"Cannot format controller {node.node_id}: {error}") from error
        if done.returncode != 0:
            raise ProvisioningFailed(f"Cannot format controller {node.node_id}: {done.stderr.strip()}")

    def _is_node_process(self, node: NodePlan, pid: int) -> bool:
        state = _proc_state(pid)
        if state is None or state in ("Z", "X"):
            return False
        return str(self.config_path(node)) in _proc_cmdline(pid)

    def _pid_from_file(self, node: NodePlan) -> int | None:
        try:
            return int(self.pid_path(node).read_text().strip())
        except (OSError, ValueError):
            return None

    def running_pid(self, node: NodePlan, pid: int | None) -> int | None:
        # The pid file also knows a broker whose starter was killed before it could record the pid.
        for candidate in (pid, self._pid_from_file(node)):
            if candidate and self._is_node_process(node, candidate):
                return candidate
        return None

    def log_tail(self, node: NodePlan) -> str:
        try:
            lines = self.log_path(node).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-LOG_TAIL_LINES:])

    def _died(self, node: NodePlan) -> ProvisioningFailed:
        tail = self.log_tail(node)
        return ProvisioningFailed(
            f"Broker {node.node_id} exited during startup." + (f" Its log ends with:\n{tail}" if tail else "")
        )

    def wait_until_ready(
        self, node: NodePlan, pid: int, *, connection: Connection, timeout_seconds: float
    ) -> None:
        deadline = time.monotonic() + timeout_seconds
        last_error = ""
        while time.monotonic() < deadline:
            if not self.is_alive(node, pid):
                raise self._died(node)
            try:
                description = describe_cluster(connection, timeout_seconds=2)
            except KafkaGatewayError as error:
                last_error = str(error)
                time.sleep(0.2)
                continue
            if any(broker.node_id == node.node_id for broker in description.brokers):
                return
            last_error = f"Metadata does not list node {node.node_id}"
        if not self.is_alive(node, pid):
            raise self._died(node)
        raise ProvisioningFailed(
            f"Broker {node.node_id} did not answer Metadata within {timeout_seconds:.0f}s ({last_error})."
        )

    def stop(self, node: NodePlan, pid: int | None, *, timeout_seconds: float) -> None:
        pid = self.running_pid(node, pid)
        if pid is None:
            return
        # The broker leads its own session and process group (see detach.py).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            if not self.is_alive(node, pid):
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while self.is_alive(node, pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def remove_node(self, node: NodePlan) -> None:
        """Removes one node's directory (a broker that left the cluster)."""
        try:
            shutil.rmtree(node.data_dir)
        except FileNotFoundError:
            return
        except OSError as error:
            raise ProvisioningFailed(f"Cannot remove broker {node.node_id}'s data: {error}") from error

    def remove(self, *, cluster_id: int) -> None:
        try:
            shutil.rmtree(self.cluster_dir(cluster_id), ignore_errors=False)
        except FileNotFoundError:
            return
        except OSError as error:
            raise ProvisioningFailed(f"Cannot remove the cluster's data: {error}") from error
