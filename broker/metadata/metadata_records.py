"""What every metadata log record is: a frozen value with a record type (id and name) and a version.

The record types themselves live with what they describe: the security records next to the
`SecurityStore` that applies them (`broker.metadata.security_records`), the controller's own
records (brokers, topics, partitions, configs, features, producer ids) in `broker.controller.records`,
which also frames them into Raft entries. Both register here, so one `decode_record` reads them all.

A record's JSON form is the dict it always had — `"type"` (its name) and its fields — plus `"v"`
when its version is above 0. A record written before records were versioned has no `"v"`: it is
version 0 of the shape it had, so every metadata log written since the first release still decodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from broker.metadata.features import MINIMUM_METADATA_VERSION

RecordJson = dict[str, Any]


class UnsupportedRecordError(ValueError):
    """A record this node cannot read: a type it does not know, or a version newer than it knows.

    Written by a newer release; the node must stop applying there (never skip the record: its image
    would fork from the other nodes')."""

    def __init__(self, type_name: object, version: object) -> None:
        super().__init__(f"metadata record type {type_name!r} version {version!r} is not known to this node")
        self.type_name = type_name
        self.version = version


class MetadataRecord:
    """Base of every record type: subclasses are frozen dataclasses registered with `record_type`.

    `TYPE_ID` is the record's number (stable, as Kafka's `apiKey` in metadata/*.json), `TYPE` its
    name in the JSON form, `VERSION` the newest version this node reads and writes."""

    __slots__ = ()

    TYPE_ID: ClassVar[int]
    TYPE: ClassVar[str]
    VERSION: ClassVar[int] = 0
    # Record version -> the metadata.version level from which a writer may emit it (every node of a
    # cluster at that level reads it); see broker.controller.records.
    SINCE: ClassVar[Mapping[int, int]] = {0: MINIMUM_METADATA_VERSION}

    def fields_json(self, version: int) -> RecordJson:
        """The record's fields as written at `version` (without "type" and "v")."""
        raise NotImplementedError

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> MetadataRecord:
        """The record from its JSON form at `version` (≤ `VERSION`, checked by `decode_record`)."""
        raise NotImplementedError

    def to_json(self, version: int | None = None) -> RecordJson:
        """The JSON form at `version` (the newest when None). Version 0 carries no "v", as before."""
        written = self.VERSION if version is None else version
        if not 0 <= written <= self.VERSION:
            raise ValueError(f"{self.TYPE} has no version {written} (0..{self.VERSION})")
        if written:
            return {"type": self.TYPE, "v": written, **self.fields_json(written)}
        return {"type": self.TYPE, **self.fields_json(written)}


R = TypeVar("R", bound=type[MetadataRecord])

# Record name -> type, every record type of the metadata log.
RECORD_TYPES: dict[str, type[MetadataRecord]] = {}


def record_type(cls: R) -> R:
    """Class decorator: `cls` is a metadata record type (its name and id must be new)."""
    if cls.TYPE in RECORD_TYPES or any(t.TYPE_ID == cls.TYPE_ID for t in RECORD_TYPES.values()):
        raise ValueError(f"metadata record type {cls.TYPE!r} / id {cls.TYPE_ID} is registered twice")
    RECORD_TYPES[cls.TYPE] = cls
    return cls


def decode_record(data: object) -> MetadataRecord:
    """A record from its JSON form. Raises `UnsupportedRecordError` for a type or version this node does
    not know, `ValueError` for anything else malformed."""
    if not isinstance(data, dict):
        raise ValueError(f"a metadata record is a JSON object, not {type(data).__name__}")
    name = data.get("type")
    version = data.get("v", 0)
    cls = RECORD_TYPES.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise UnsupportedRecordError(name, version)
    if version > cls.VERSION:
        raise UnsupportedRecordError(name, version)
    try:
        return cls.from_fields(data, version)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"malformed {name} record: {error!r}") from error
