"""Client quotas per user and client id (protocol client: librdkafka has no call for them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kio.schema.alter_client_quotas.v1 import request as alter_quotas
from kio.schema.describe_client_quotas.v1 import request as describe_quotas
from kio.static.primitive import f64, i8

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    protocol_connection,
    raise_for_code,
)

QUOTA_ENTITY_TYPES = ("user", "client-id")


@dataclass(frozen=True)
class QuotaEntry:
    """A quota entity ({"user": "app"}, {"user": None} for the default user, ...) and its values."""

    entity: dict[str, str | None]
    values: dict[str, float]


def describe_client_quotas(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[QuotaEntry]:
    """Every user / client-id quota on the cluster (non-strict match of any user, then any client id)."""
    entries: dict[tuple, QuotaEntry] = {}
    with protocol_connection(connection, timeout_seconds) as wire:
        for entity_type in QUOTA_ENTITY_TYPES:
            request = describe_quotas.DescribeClientQuotasRequest(
                components=(
                    describe_quotas.ComponentData(entity_type=entity_type, match_type=i8(2), match=None),
                ),
                strict=False,
            )
            response = wire.request(request)
            raise_for_code(int(response.error_code), response.error_message, "DescribeClientQuotas")
            for entry in response.entries or ():
                entity = {e.entity_type: e.entity_name for e in entry.entity}
                if set(entity) - set(QUOTA_ENTITY_TYPES):
                    continue
                key = tuple(sorted(entity.items(), key=lambda item: item[0]))
                entries[key] = QuotaEntry(entity=entity, values={v.key: float(v.value) for v in entry.values})
    return list(entries.values())


def alter_client_quota(
    connection: Connection,
    *,
    entity: Mapping[str, str | None],
    set_values: Mapping[str, float],
    remove_keys: Iterable[str] = (),
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    ops = [
        alter_quotas.OpData(key=key, value=f64(float(value)), remove=False)
        for key, value in set_values.items()
    ]
    ops += [alter_quotas.OpData(key=key, value=f64(0.0), remove=True) for key in remove_keys]
    request = alter_quotas.AlterClientQuotasRequest(
        entries=(
            alter_quotas.EntryData(
                entity=tuple(
                    alter_quotas.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()
                ),
                ops=tuple(ops),
            ),
        ),
        validate_only=validate_only,
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(request)
    for entry in response.entries:
        raise_for_code(int(entry.error_code), entry.error_message, "AlterClientQuotas")
