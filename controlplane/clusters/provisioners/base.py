"""The provisioner interface: what a provider must do to place, start, watch and remove broker nodes.

Provisioners work on plain values (no Django models): the services module owns the database and the
workflow, the provisioner only owns the machines and processes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path


class ProvisioningFailed(Exception):
    """A step cannot be completed; `reason` is shown to the user (e.g. a port in use, the broker log tail)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class NodePlan:
    """Where one broker node lives."""

    node_id: int
    host: str
    port: int
    data_dir: Path

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class Provisioner(ABC):
    @abstractmethod
    def plan_nodes(
        self, *, cluster_id: int, broker_count: int, first_port: int, reserved_ports: set[int]
    ) -> list[NodePlan]:
        """Chooses an address and a data directory per node; refuses ports that are in use."""

    @abstractmethod
    def write_config(self, *, cluster_id: int, node: NodePlan, overrides: dict[str, str]) -> None:
        """Writes the node's broker configuration (refuses when the disk is full)."""

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
    def wait_until_ready(self, node: NodePlan, pid: int, *, timeout_seconds: float) -> None:
        """Returns once the node answers Metadata; raises ProvisioningFailed if it dies or times out."""

    @abstractmethod
    def stop(self, node: NodePlan, pid: int | None, *, timeout_seconds: float) -> None:
        """Stops the node gracefully, forcefully after the timeout; a stopped node is fine."""

    @abstractmethod
    def remove(self, *, cluster_id: int) -> None:
        """Removes everything the cluster left on the host (data, configs, logs)."""
