"""The security records of the metadata log — ACL bindings, SCRAM credentials, delegation tokens and
client quotas — and the one place they are applied.

The broker's handlers build them, the controller commits them, and both the controller's
`MetadataImage` and each broker's `SecurityStore` fold them with `apply_to` into the same
`SecurityState` shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from broker.metadata.metadata_records import MetadataRecord, RecordJson, record_type

# (entity type, entity name or None for the default entity), sorted by entity type.
QuotaEntity = tuple[tuple[str, str | None], ...]
# resource type, resource name, pattern type, principal, host, operation, permission
AclTuple = tuple[int, str, int, str, str, int, int]


class SecurityState(Protocol):
    """The security part of a metadata image."""

    acls: set[AclTuple]
    # user -> mechanism name -> {"salt", "stored_key", "server_key" (hex), "iterations"}
    scram: dict[str, dict[str, dict[str, Any]]]
    # token id -> DelegationToken.to_json() (broker/auth/delegation_tokens.py); never the HMAC
    tokens: dict[str, dict[str, Any]]
    quotas: dict[QuotaEntity, dict[str, float]]


class SecurityRecord(MetadataRecord):
    __slots__ = ()

    def apply_to(self, state: SecurityState) -> None:
        raise NotImplementedError


def _acl(data: Sequence[Any]) -> AclTuple:
    resource_type, resource_name, pattern, principal, host, operation, permission = data
    return (
        int(resource_type),
        str(resource_name),
        int(pattern),
        str(principal),
        str(host),
        int(operation),
        int(permission),
    )


@record_type
@dataclass(frozen=True, slots=True)
class CreateAclRecord(SecurityRecord):
    TYPE_ID = 100
    TYPE = "create_acl"
    acl: AclTuple

    def fields_json(self, version: int) -> RecordJson:
        return {"acl": list(self.acl)}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> CreateAclRecord:
        return cls(_acl(data["acl"]))

    def apply_to(self, state: SecurityState) -> None:
        state.acls.add(self.acl)


@record_type
@dataclass(frozen=True, slots=True)
class DeleteAclRecord(SecurityRecord):
    TYPE_ID = 101
    TYPE = "delete_acl"
    acl: AclTuple

    def fields_json(self, version: int) -> RecordJson:
        return {"acl": list(self.acl)}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> DeleteAclRecord:
        return cls(_acl(data["acl"]))

    def apply_to(self, state: SecurityState) -> None:
        state.acls.discard(self.acl)


@record_type
@dataclass(frozen=True, slots=True)
class UpsertScramRecord(SecurityRecord):
    """A user's salted, iterated SCRAM keys for one mechanism (never the password)."""

    TYPE_ID = 102
    TYPE = "upsert_scram"
    user: str
    mechanism: str
    credential: Mapping[str, Any]

    def fields_json(self, version: int) -> RecordJson:
        return {"user": self.user, "mechanism": self.mechanism, "credential": dict(self.credential)}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> UpsertScramRecord:
        return cls(str(data["user"]), str(data["mechanism"]), dict(data["credential"]))

    def apply_to(self, state: SecurityState) -> None:
        state.scram.setdefault(self.user, {})[self.mechanism] = dict(self.credential)


@record_type
@dataclass(frozen=True, slots=True)
class DeleteScramRecord(SecurityRecord):
    TYPE_ID = 103
    TYPE = "delete_scram"
    user: str
    mechanism: str

    def fields_json(self, version: int) -> RecordJson:
        return {"user": self.user, "mechanism": self.mechanism}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> DeleteScramRecord:
        return cls(str(data["user"]), str(data["mechanism"]))

    def apply_to(self, state: SecurityState) -> None:
        mechanisms = state.scram.get(self.user, {})
        mechanisms.pop(self.mechanism, None)
        if not mechanisms:
            state.scram.pop(self.user, None)


@record_type
@dataclass(frozen=True, slots=True)
class AlterQuotaRecord(SecurityRecord):
    """Sets and removes quota values of one entity; an entity left without values is dropped."""

    TYPE_ID = 104
    TYPE = "alter_quota"
    entity: QuotaEntity
    set: Mapping[str, float]
    remove: tuple[str, ...] = ()

    def fields_json(self, version: int) -> RecordJson:
        return {
            "entity": [list(component) for component in self.entity],
            "set": dict(self.set),
            "remove": list(self.remove),
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> AlterQuotaRecord:
        entity = tuple((str(kind), None if name is None else str(name)) for kind, name in data["entity"])
        values = {str(k): float(v) for k, v in data["set"].items()}
        return cls(entity, values, tuple(str(k) for k in data["remove"]))

    def apply_to(self, state: SecurityState) -> None:
        values = dict(state.quotas.get(self.entity, {}))
        values.update(self.set)
        for key in self.remove:
            values.pop(key, None)
        if values:
            state.quotas[self.entity] = values
        else:
            state.quotas.pop(self.entity, None)


@record_type
@dataclass(frozen=True, slots=True)
class UpsertTokenRecord(SecurityRecord):
    TYPE_ID = 105
    TYPE = "upsert_token"
    token: Mapping[str, Any]  # DelegationToken.to_json(): never the HMAC

    def fields_json(self, version: int) -> RecordJson:
        return {"token": dict(self.token)}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> UpsertTokenRecord:
        return cls(dict(data["token"]))

    def apply_to(self, state: SecurityState) -> None:
        state.tokens[str(self.token["token_id"])] = dict(self.token)


@record_type
@dataclass(frozen=True, slots=True)
class DeleteTokenRecord(SecurityRecord):
    TYPE_ID = 106
    TYPE = "delete_token"
    token_id: str

    def fields_json(self, version: int) -> RecordJson:
        return {"token_id": self.token_id}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> DeleteTokenRecord:
        return cls(str(data["token_id"]))

    def apply_to(self, state: SecurityState) -> None:
        state.tokens.pop(self.token_id, None)


def security_state_records(state: SecurityState) -> list[SecurityRecord]:
    """Records that rebuild `state` from an empty one (a snapshot's, a broker adopting the image's)."""
    records: list[SecurityRecord] = [CreateAclRecord(acl) for acl in sorted(state.acls, key=repr)]
    for user, mechanisms in state.scram.items():
        records.extend(UpsertScramRecord(user, m, c) for m, c in mechanisms.items())
    records.extend(UpsertTokenRecord(token) for token in state.tokens.values())
    records.extend(AlterQuotaRecord(entity, values) for entity, values in state.quotas.items())
    return records
