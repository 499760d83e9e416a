"""The provisioner interface: what a provider must do to place, start, watch and remove broker nodes.

Provisioners work on plain values (no Django models): the services module owns the database and the
workflow, the provisioner only owns the machines and processes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.kafka.connection import Connection


class ProvisioningFailed(Exception):
    """A step cannot be completed; `reason` is shown to the user (e.g. a port in use, the broker log tail)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class NodePlan:
    """Where one broker node lives. A node with a controller port also votes in the controller quorum."""

    node_id: int
    host: str
    port: int
    data_dir: Path
    controller_port: int = 0
    # The node's Prometheus endpoint on 127.0.0.1 (0: none).
    metrics_port: int = 0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def is_controller(self) -> bool:
        return self.controller_port > 0


@dataclass(frozen=True)
class ClusterTopology:
    """What every node of a replicated cluster must agree on: the controller voters (their number also
    sets the replication defaults). A cluster without voters runs single-node brokers."""

    voters: tuple[NodePlan, ...] = ()
    # KIP-853: nodes find the quorum through `controller.quorum.bootstrap.servers` and the voters
    # live in the metadata log (each controller formatted once), so controllers can be replaced.
    dynamic: bool = False

    @property
    def replicated(self) -> bool:
        return bool(self.voters)

    @property
    def voters_property(self) -> str:
        return ",".join(f"{node.node_id}@{node.host}:{node.controller_port}" for node in self.voters)

    @property
    def bootstrap_servers_property(self) -> str:
        return ",".join(f"{node.host}:{node.controller_port}" for node in self.voters)


@dataclass(frozen=True)
class ListenerSecurity:
    """How a node's clients authenticate. PLAINTEXT (clusters made before brokers had security) or
    SASL_PLAINTEXT with SCRAM, ACLs on, and the control plane's super user."""

    protocol: str = "PLAINTEXT"
    super_user: str = ""
    super_user_password: str = field(default="", repr=False)

    @property
    def uses_sasl(self) -> bool:
        return self.protocol == "SASL_PLAINTEXT"


class Provisioner(ABC):
    @abstractmethod
    def plan_nodes(
        self,
        *,
        cluster_id: int,
        node_ids: list[int],
        controller_ids: set[int],
        first_port: int,
        reserved_ports: set[int],
    ) -> list[NodePlan]:
        """Chooses an address and a data directory per node, and a controller port for the nodes in
        `controller_ids`; refuses ports that are in use."""

    @abstractmethod
    def write_config(
        self,
        *,
        cluster_id: int,
        node: NodePlan,
        overrides: dict[str, str],
        security: ListenerSecurity,
        topology: ClusterTopology | None = None,
    ) -> None:
        """Writes the node's broker configuration, readable by its owner only since it may hold the super
        user's password (refuses when the disk is full)."""

    @abstractmethod
    def start(self, node: NodePlan) -> int:
        """Starts the node detached from the caller and returns its process id."""

    @abstractmethod
    def running_pid(self, node: NodePlan, pid: int | None) -> int | None:
        """The node's running process: `pid` if it still is this node's (not a reused pid), or one the
        provisioner knows of otherwise; None when the node is not running."""

    def is_alive(self, node: NodePlan, pid: int | None) -> bool:
        return self.running_pid(node, pid) is not None

    @abstractmethod
    def wait_until_ready(
        self, node: NodePlan, pid: int, *, connection: Connection, timeout_seconds: float
    ) -> None:
        """Returns once the node answers Metadata on `connection` (the node's address with the cluster's
        credentials); raises ProvisioningFailed if it dies or times out."""

    @abstractmethod
    def stop(self, node: NodePlan, pid: int | None, *, timeout_seconds: float) -> None:
        """Stops the node gracefully, forcefully after the timeout; a stopped node is fine."""

    @abstractmethod
    def remove(self, *, cluster_id: int) -> None:
        """Removes everything the cluster left on the host (data, configs, logs)."""
