"""Connector lag, on every lag sampling run (`lag.signals.sampling_run_finished`, connected in ConnectConfig).

A sink connector reads as consumer group `connect-<name>`: the lag sampler already samples it as any group
(GroupLag), and the group row is created with the connector's team when the connector is, so the team sees
it with its groups. A Debezium PostgreSQL connector's lag is read from both ends:
  - the database, by the control plane, as the connector's own database user (its host, port, database and
    user from the config, its password from the 0600 secrets file: no new credential and no host the workers
    do not already reach): one fixed query, `pg_current_wal_lsn()` and the slot's `confirmed_flush_lsn` from
    `pg_replication_slots`, in a read-only session with 5 s connect and statement timeouts;
  - Connect, for the position of the last change committed to the topics (the connector's source offset
    `lsn`, GET /connectors/<name>/offsets), and Kafka, for the records its topics hold.
The lag is the WAL written since that committed position. A failure is kept as the row's error and never
stops the sampling run.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from django.utils import timezone

from controlplane.clusters.connections import connection_for
from controlplane.connect import services
from controlplane.connect.choices import ConnectClusterStatus
from controlplane.connect.models import Connector, ConnectorSourceLag
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.offsets import list_partition_offsets
from controlplane.kafka.topics import list_topics
from controlplane.lag.observations import SamplingRun

logger = logging.getLogger(__name__)

POSTGRES_CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"
DEFAULT_SLOT = "debezium"  # Debezium's default slot.name
TIMEOUT_SECONDS = 5
TLS_FILES = ("sslrootcert", "sslcert", "sslkey")
POSITION_QUERY = (
    "SELECT pg_current_wal_lsn()::text, confirmed_flush_lsn::text, "
    "pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint "
    "FROM pg_replication_slots WHERE slot_name = %s"
)


def lsn_number(text: str) -> int:
    """PostgreSQL's `X/Y` LSN as the 64-bit number Debezium stores in its offsets."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def lsn_text(number: int) -> str:
    return f"{number >> 32:X}/{number & 0xFFFFFFFF:X}"


def database_position(config: dict[str, str], password: str) -> tuple[str, str | None, int | None]:
    """(current WAL LSN, the slot's confirmed flush LSN or None before the slot exists, bytes it retains)."""
    slot = config.get("slot.name") or DEFAULT_SLOT
    with psycopg.connect(
        host=config.get("database.hostname", ""),
        port=config.get("database.port", "5432"),
        user=config.get("database.user", ""),
        password=password,
        dbname=config.get("database.dbname", ""),
        sslmode=config.get("database.sslmode", "prefer"),
        # The connector's TLS files, if it names any (only under the Connect cluster's file directory).
        **{key: config[f"database.{key}"] for key in TLS_FILES if config.get(f"database.{key}")},
        connect_timeout=TIMEOUT_SECONDS,
        application_name="streamhub-connector-lag",
        options=f"-c default_transaction_read_only=on -c statement_timeout={TIMEOUT_SECONDS * 1000}",
        autocommit=True,
    ) as database:
        row = database.execute(POSITION_QUERY, (slot,)).fetchone()
        if row is None:
            current = database.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
            return current, None, None
        return row[0], row[1], row[2]


def committed_position(connector: Connector) -> int | None:
    """The LSN of the last change the connector committed to its topics (Connect's source offset)."""
    offsets = services.connector_offsets(connector=connector)
    positions = [entry.get("offset", {}).get("lsn") for entry in offsets.get("offsets", [])]
    known = [
        int(position) for position in positions if isinstance(position, int | str) and str(position).isdigit()
    ]
    return max(known, default=None)


def topic_records(connector: Connector) -> int:
    """Records in the connector's topics (`<topic.prefix>.<schema>.<table>`), summed end offsets."""
    connection = connection_for(connector.connect_cluster.cluster)
    prefix = connector.config.get("topic.prefix", "") + "."
    partitions = [
        (name, partition.partition)
        for name, info in list_topics(connection).items()
        if name.startswith(prefix)
        for partition in info.partitions
    ]
    return sum(list_partition_offsets(connection, partitions).values())


def sample_source_lag(connector: Connector) -> ConnectorSourceLag:
    values: dict[str, Any] = {"slot_name": connector.config.get("slot.name") or DEFAULT_SLOT, "error": ""}
    try:
        password = services.connector_secrets(connector=connector).get("database.password", "")
        current, confirmed, retained = database_position(connector.config, password)
        committed = committed_position(connector)
        values.update(
            current_lsn=current,
            confirmed_flush_lsn=confirmed or "",
            committed_lsn=lsn_text(committed) if committed is not None else "",
            slot_retained_bytes=retained,
            # Nothing committed yet: everything since the slot's position is still to come.
            lag_bytes=max(
                0,
                lsn_number(current)
                - (committed if committed is not None else lsn_number(confirmed or current)),
            ),
            topic_records=topic_records(connector),
        )
    except (psycopg.Error, KafkaGatewayError, services.ServiceError, ValueError) as error:
        values["error"] = str(error)[:2000]
    row, _ = ConnectorSourceLag.objects.update_or_create(
        connector=connector, defaults={**values, "observed_at": timezone.now()}
    )
    return row


def sample_cluster_connectors(sender: type, *, run: SamplingRun, **kwargs: Any) -> None:
    """Each lag sampling run of a cluster samples its change-data-capture connectors' source lag."""
    connectors = Connector.objects.filter(
        connect_cluster__cluster_id=run.cluster_id, connector_class=POSTGRES_CONNECTOR
    ).exclude(connect_cluster__status=ConnectClusterStatus.DELETED)
    for connector in connectors.select_related("connect_cluster__cluster"):
        row = sample_source_lag(connector)
        if row.error:
            logger.info("source lag of connector %s unknown: %s", connector.pk, row.error)


def connector_lag(connector: Connector) -> dict[str, Any]:
    """The connector's lag as the last sampling run saw it: a sink's consumer group lag, a CDC connector's
    source lag; {"kind": "none"} for a source whose position we cannot read, or before the first run."""
    if services.is_sink(connector.config):
        group = (
            ConsumerGroup.objects.filter(
                cluster_id=connector.connect_cluster.cluster_id, name=services.sink_group_name(connector)
            )
            .select_related("lag")
            .first()
        )
        sampled = getattr(group, "lag", None) if group is not None else None
        if sampled is None:
            return {"kind": "none"}
        return {
            "kind": "consumer_group",
            "group_id": group.pk,
            "group": group.name,
            "status": sampled.status,
            "lag_messages": sampled.lag_messages,
            "lag_seconds": sampled.lag_seconds,
            "observed_at": sampled.observed_at,
        }
    source = ConnectorSourceLag.objects.filter(connector=connector).first()
    if source is None:
        return {"kind": "none"}
    return {
        "kind": "source",
        "slot_name": source.slot_name,
        "current_lsn": source.current_lsn,
        "confirmed_flush_lsn": source.confirmed_flush_lsn,
        "committed_lsn": source.committed_lsn,
        "lag_bytes": source.lag_bytes,
        "slot_retained_bytes": source.slot_retained_bytes,
        "topic_records": source.topic_records,
        "error": source.error,
        "observed_at": source.observed_at,
    }
