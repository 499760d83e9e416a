"""A node started with no cluster settings: a KRaft combined node (`broker,controller`) of a one-voter quorum.

Kafka has no broker outside a quorum: its quickstart runs one combined node that is the only voter. So do
we: `single_node_overrides` turns a config without `process.roles` into that node's (the same client
listeners, a controller listener on 127.0.0.1, the node itself as the only voter, the data directory's
cluster id), and the node then runs exactly the cluster code (broker/node/roles.py).

A data directory written by a release that ran single nodes outside a quorum (no metadata log; topics,
security state and producer ids in the broker's JSON files, dynamic configs and finalized features in side
files) is adopted once, by `adopt_single_node_data`: the new quorum's first entry holds a record for
everything that was there, with the same topic ids (clients and `partition.metadata` files know them), and
the side files are then renamed `*.adopted`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig, ConfigError
from broker.controller import records as rec
from broker.controller.decisions import Decider, Decision
from broker.controller.image import MetadataImage
from broker.controller.rpc.base import RpcError
from broker.controller.server import ControllerServer
from broker.metadata.features import KRAFT_VERSION, finalized_levels
from broker.metadata.security_records import security_state_records
from broker.metadata.security_registry import SecurityStore
from broker.metadata.topic_registry import MetadataStore
from broker.server.group_storage import offsets_topic_spec
from broker.server.txn_storage import transaction_state_topic_spec

log = logging.getLogger("broker.cluster")

CONTROLLER_LISTENER = "CONTROLLER"
# Kafka's examples put the controller listener next to the client one: 9092 for clients, 9093 for it.
KAFKA_CLIENT_PORT, KAFKA_CONTROLLER_PORT = 9092, 9093
ADOPTED_SUFFIX = ".adopted"
# What the release without a quorum kept beside the broker's own files; renamed once adopted. The broker's
# topic and security files stay: a cluster member keeps them too, as its copy of the metadata image.
DYNAMIC_CONFIGS_FILE = "dynamic-configs.json"
FEATURES_FILE = "finalized-features.json"
PRODUCER_IDS_FILE = "producer-ids.json"
SIDE_FILES = (DYNAMIC_CONFIGS_FILE, FEATURES_FILE, PRODUCER_IDS_FILE)
STARTUP_TIMEOUT_S = 60.0


def is_single_node(config: BrokerConfig) -> bool:
    """No cluster settings: the node is its own one-voter quorum."""
    return not config.get_str("process.roles").strip()


def single_node_overrides(config: BrokerConfig) -> list[str]:
    """The `key=value` overrides that make `config` a combined node whose quorum is itself."""
    names = config.controller_listener_names
    controller = next((item for item in config.listeners if item.name in names), None)
    listeners = [str(item) for item in config.listeners]
    if controller is None:
        listener_name = CONTROLLER_LISTENER if CONTROLLER_LISTENER in names else sorted(names)[0]
        port = _controller_port(config)
        listeners.append(f"{listener_name}://127.0.0.1:{port}")
        host = "127.0.0.1"
    else:
        listener_name, host, port = controller.name, controller.host or "127.0.0.1", controller.port
        if port == 0:
            raise ConfigError(
                "listeners: the controller listener of a single node needs a port (the voter's)"
            )
    protocols = dict(config.security_protocol_map)
    overrides = [
        "process.roles=broker,controller",
        f"listeners={','.join(listeners)}",
        f"controller.listener.names={listener_name}",
        f"controller.quorum.voters={config.node_id}@{host}:{port}",
    ]
    if listener_name not in protocols:
        protocols[listener_name] = "PLAINTEXT"
        overrides.append(
            "listener.security.protocol.map="
            + ",".join(f"{name}:{proto}" for name, proto in protocols.items())
        )
    if not config.get_str("cluster.id").strip():
        # The data directory's own id (a fresh one is created and kept there): clients see the same cluster id
        # across restarts and across the upgrade from a release that ran single nodes outside a quorum.
        data_dir = config.log_dirs[0]
        data_dir.mkdir(parents=True, exist_ok=True)
        store = MetadataStore(data_dir)
        store.load()
        overrides.append(f"cluster.id={store.cluster_id}")
    return overrides


def _controller_port(config: BrokerConfig) -> int:
    """9093 beside a client listener on 9092 (Kafka's examples); otherwise a free port of 127.0.0.1, chosen
    at each start: the only voter of a static quorum is dialled by this process alone. Never a port the
    configuration names for something else: those are free until this process binds them, so the kernel may
    offer one of them here (a broker once chose its own metrics port and died with "address already in use")."""
    if any(item.port == KAFKA_CLIENT_PORT for item in config.listeners):
        return KAFKA_CONTROLLER_PORT
    taken = {item.port for item in config.listeners} | {config.metrics_port}
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port


def single_node_internal_topics(config: BrokerConfig) -> list[dict[str, Any]]:
    """The internal topics a single node creates before it serves (a cluster creates them on first use):
    its first consumer group or transaction finds its coordinator at once, as it always did."""
    return [offsets_topic_spec(config), transaction_state_topic_spec(config)]


# --- adoption of a data directory written outside a quorum ----------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot adopt {path}: {exc}") from None


def adoption_records(data_dir: Path, node_id: int) -> list[rec.MetadataRecord]:
    """Records for everything a single node outside a quorum kept in `data_dir` (empty: nothing to adopt)."""
    topics = MetadataStore(data_dir)
    has_topics = (data_dir / "broker-metadata.json").exists()
    if has_topics:
        topics.load()
    security = SecurityStore(data_dir)
    security.load()
    records: list[rec.MetadataRecord] = list(_topic_records(topics, node_id)) if has_topics else []
    records.extend(security_state_records(security))
    configs_path = data_dir / DYNAMIC_CONFIGS_FILE
    if configs_path.exists():
        saved = _read_json(configs_path)
        for kind in ("broker", "group", "client_metrics"):
            for resource_name, configs in sorted(saved.get(kind, {}).items()):
                records.extend(
                    rec.ConfigRecord(kind, resource_name, k, v) for k, v in sorted(configs.items())
                )
    features_path = data_dir / FEATURES_FILE
    if features_path.exists():
        levels = finalized_levels({str(k): int(v) for k, v in _read_json(features_path)["levels"].items()})
        # The release's static quorum has kraft.version 0, as this node's.
        levels.setdefault(KRAFT_VERSION, 0)
        records.extend(rec.FeatureLevelRecord(name, level) for name, level in sorted(levels.items()))
    producer_ids_path = data_dir / PRODUCER_IDS_FILE
    if producer_ids_path.exists():
        # Ids below the release's last block were handed out: the quorum continues after them.
        records.append(rec.ProducerIdsRecord(node_id, int(_read_json(producer_ids_path)["block_end"])))
    return records


def _topic_records(topics: MetadataStore, node_id: int) -> Iterator[rec.MetadataRecord]:
    for topic in topics.topics():
        yield rec.TopicRecord(topic.name, topic.topic_id, topic.internal)
        for index in range(topic.partitions):
            yield rec.PartitionRecord(
                topic.topic_id, index, (node_id,), (node_id,), node_id, leader_epoch=topic.leader_epoch(index)
            )
        yield from (rec.ConfigRecord("topic", topic.name, k, v) for k, v in sorted(topic.configs.items()))


def _fresh(image: MetadataImage) -> bool:
    """A quorum that never had a broker nor a topic: nothing was decided yet (its first broker finalizes
    the feature levels, see Decider.register_broker)."""
    return not image.features and not image.brokers and not image.topics


async def prepare_single_node(controller: ControllerServer, data_dir: Path, node_id: int) -> None:
    """Before the broker joins: fence the registration of this node's previous process (the controller and
    the broker of a single node live and die together, so it is dead: its session need not run out first),
    then adopt a data directory written outside a quorum (see the module doc)."""
    await _commit(controller, data_dir, _fence_previous_life(node_id))
    await adopt_single_node_data(controller, data_dir, node_id)


def _fence_previous_life(node_id: int) -> Callable[[Decider, MetadataImage], Decision]:
    def fence(_decider: Decider, image: MetadataImage) -> Decision:
        registration = image.brokers.get(node_id)
        if registration is None or registration.fenced:
            return Decision()
        return Decision([rec.FenceBrokerRecord(node_id, registration.epoch)])

    return fence


async def _commit(
    controller: ControllerServer, data_dir: Path, decide: Callable[[Decider, MetadataImage], Decision]
) -> Decision:
    """`decide_and_commit` once the one voter has elected itself (its first tick) and applied its log."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        try:
            decision = await controller.driver.decide_and_commit(decide)
        except RpcError as exc:
            if exc.code not in (ErrorCode.not_controller, ErrorCode.request_timed_out):
                raise
            if time.monotonic() > deadline:
                raise ConfigError(f"{data_dir}: the one-voter quorum never became active") from None
            await asyncio.sleep(0.02)
            continue
        if decision.error_code:
            raise ConfigError(f"{data_dir}: {decision.message}")
        return decision


async def adopt_single_node_data(controller: ControllerServer, data_dir: Path, node_id: int) -> None:
    """Once: the records of a data directory written outside a quorum, committed in one entry, then its side
    files renamed (a crash in between: the next start only renames them)."""
    pending = [name for name in SIDE_FILES if (data_dir / name).exists()]
    if not pending:
        return
    records = adoption_records(data_dir, node_id)

    def adopt(_decider: Decider, image: MetadataImage) -> Decision:
        return Decision(records if _fresh(image) else [])

    decision = await _commit(controller, data_dir, adopt)
    for name in pending:
        path = data_dir / name
        path.replace(path.with_name(name + ADOPTED_SUFFIX))
    if decision.records:
        log.info(
            "adopted %s into the metadata log: %d records (%s renamed *%s)",
            data_dir,
            len(decision.records),
            ", ".join(pending),
            ADOPTED_SUFFIX,
        )
