"""Decoding record keys and values written by Confluent serializers, for the message browser, with the
schemas of the cluster's registry (the wire format itself is in `wire.py`). Payloads that do not start with
the magic byte are not decoded.

What a decoded payload looks like (the browse API's `decoded` object):

    {"schema_id": 7, "format": "AVRO" | "JSON" | "PROTOBUF" | null, "subject": "orders-value" | null,
     "version": 2 | null, "message_type": "acme.Order" | null, "value": <JSON value> | null,
     "error": "why it could not be decoded" | null}

Decoders are built once per schema and kept per process (schema rows never change); a browse looks each
schema id up once.
"""

from __future__ import annotations

import io
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import fastavro
from google.protobuf import json_format, message_factory

from controlplane.schemas import services
from controlplane.schemas.access import RegistryAccess, load_access
from controlplane.schemas.choices import SchemaType
from controlplane.schemas.formats.proto_text import FDP
from controlplane.schemas.formats.protobuf import build_pool
from controlplane.schemas.models import Schema, SubjectVersion
from controlplane.schemas.wire import (
    HEADER_SIZE,
    UndecodablePayload,
    framed_schema_id,
    jsonable,
    read_message_indexes,
)
from controlplane.tenancy.access import Actor

_DECODERS_LIMIT = 1024


@dataclass(frozen=True)
class Decoded:
    value: Any
    message_type: str | None = None


class SchemaDecoder:
    """Turns the bytes after the schema id into a JSON-able value, for one registered schema."""

    def __init__(self, schema: Schema, dependencies: list[tuple[str, Any]]) -> None:
        self.schema_type = schema.schema_type
        if self.schema_type == SchemaType.AVRO:
            named: dict[str, Any] = {}
            for _, dependency in dependencies:
                named.update(dependency.model.named)
            self._avro = fastavro.parse_schema(json.loads(schema.text), named_schemas=named)
        elif self.schema_type == SchemaType.PROTOBUF:
            file = services.parsed_schema(schema).model.file
            pool = build_pool(file, [(name, dependency.model.file) for name, dependency in dependencies])
            self._file: FDP = file
            self._pool = pool
            self._classes: dict[tuple[int, ...], type] = {}
            self._lock = threading.Lock()

    def decode(self, payload: bytes) -> Decoded:
        if self.schema_type == SchemaType.AVRO:
            return Decoded(self._decode_avro(payload))
        if self.schema_type == SchemaType.JSON:
            try:
                return Decoded(json.loads(payload))
            except (UnicodeDecodeError, ValueError) as error:
                raise UndecodablePayload(f"Not JSON: {error}") from error
        return self._decode_protobuf(payload)

    def _decode_avro(self, payload: bytes) -> Any:
        reader = io.BytesIO(payload)
        try:
            value = fastavro.schemaless_reader(reader, self._avro, None)
        # fastavro reports short or garbled input with whatever its reader trips on.
        except Exception as error:
            raise UndecodablePayload(f"Not Avro data of this schema: {error!r}") from error
        left = len(payload) - reader.tell()
        if left:
            raise UndecodablePayload(f"{left} bytes are left over after the Avro record: another schema?")
        return jsonable(value)

    def _decode_protobuf(self, payload: bytes) -> Decoded:
        indexes, start = read_message_indexes(payload)
        message_class, full_name = self.message_class(indexes)
        try:
            message = message_class.FromString(payload[start:])
        except Exception as error:  # the runtime raises DecodeError or RuntimeError (upb)
            raise UndecodablePayload(f"Not a valid {full_name} message: {error}") from error
        try:
            value = json_format.MessageToDict(
                message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
            )
        except (TypeError, ValueError) as error:  # e.g. an Any holding a type this schema does not import
            raise UndecodablePayload(f"The {full_name} message has no JSON form: {error}") from error
        return Decoded(value, message_type=full_name)

    def message_class(self, indexes: tuple[int, ...]) -> tuple[type, str]:
        with self._lock:
            known = self._classes.get(indexes)
        if known is not None:
            return known, known.DESCRIPTOR.full_name
        messages, scope = self._file.message_type, self._file.package
        full_name = ""
        for depth, index in enumerate(indexes):
            if not 0 <= index < len(messages):
                path = ".".join(str(i) for i in indexes[: depth + 1])
                raise UndecodablePayload(f"The schema has no message at index path {path}")
            full_name = f"{scope}.{messages[index].name}" if scope else messages[index].name
            messages, scope = messages[index].nested_type, full_name
        message_class = message_factory.GetMessageClass(self._pool.FindMessageTypeByName(full_name))
        with self._lock:
            self._classes[indexes] = message_class
        return message_class, full_name


_decoders: OrderedDict[tuple[int, int, str], SchemaDecoder] = OrderedDict()
_decoders_lock = threading.Lock()


def schema_decoder(cluster_id: int, schema_id: int) -> SchemaDecoder:
    """Raises services.RegistryError for an unknown schema id or a stored schema that no longer parses."""
    schema = services.get_schema(cluster_id=cluster_id, schema_id=schema_id)
    # The fingerprint too: a database rebuilt from scratch (tests, a restored backup) may reuse ids.
    key = (cluster_id, schema_id, schema.fingerprint)
    with _decoders_lock:
        known = _decoders.get(key)
        if known is not None:
            _decoders.move_to_end(key)
            return known
    references = tuple(services.Reference(**item) for item in schema.references)
    try:
        decoder = SchemaDecoder(schema, services.resolve_references(cluster_id, references))
    except services.RegistryError:
        raise
    except Exception as error:  # a stored schema the runtime refuses is reported, not raised
        raise services.RegistryError(
            500, 50001, f"Schema {schema_id} cannot be loaded for decoding: {error}"
        ) from error
    with _decoders_lock:
        _decoders[key] = decoder
        if len(_decoders) > _DECODERS_LIMIT:
            _decoders.popitem(last=False)
    return decoder


def forget_decoders() -> None:
    with _decoders_lock:
        _decoders.clear()


@dataclass
class PayloadDecoder:
    """Decodes the keys and values of one browse of `topic`.

    `can_read_subject` decides which subjects may be named (a schema id can be shared by other teams'
    subjects); it is asked lazily, so browsing a topic without framed payloads costs no query.
    """

    cluster_id: int
    topic: str
    can_read_subject: Callable[[str], bool]
    _registry_in_use: bool | None = None
    _subjects: dict[int, list[tuple[str, int]]] = field(default_factory=dict)
    _decoders: dict[int, SchemaDecoder | services.RegistryError] = field(default_factory=dict)

    @classmethod
    def for_actor(cls, *, actor: Actor, cluster_id: int, topic: str) -> PayloadDecoder:
        """Names only subjects the actor may read in the registry."""
        loaded: list[RegistryAccess] = []

        def can_read_subject(subject: str) -> bool:
            if not loaded:
                loaded.append(load_access(actor, cluster_id))
            return loaded[0].can_read(subject)

        return cls(cluster_id=cluster_id, topic=topic, can_read_subject=can_read_subject)

    def decode(self, data: bytes | None, *, is_key: bool) -> dict[str, Any] | None:
        """The decoded payload, or None when it carries no schema id (or the registry is empty, so the
        leading zero byte is a coincidence rather than a schema id)."""
        schema_id = framed_schema_id(data)
        if schema_id is None or not self._uses_registry():
            return None
        assert data is not None
        result: dict[str, Any] = {
            "schema_id": schema_id,
            "format": None,
            "subject": None,
            "version": None,
            "message_type": None,
            "value": None,
            "error": None,
        }
        if schema_id not in self._decoders:
            try:
                self._decoders[schema_id] = schema_decoder(self.cluster_id, schema_id)
            except services.RegistryError as error:  # remembered too: one lookup per id and browse
                self._decoders[schema_id] = error
        decoder = self._decoders[schema_id]
        if isinstance(decoder, services.RegistryError):
            result["error"] = decoder.message
            return result
        result["format"] = decoder.schema_type
        result["subject"], result["version"] = self._subject_for(schema_id, is_key=is_key)
        try:
            decoded = decoder.decode(data[HEADER_SIZE:])
        except UndecodablePayload as error:
            result["error"] = str(error)
            return result
        result["value"], result["message_type"] = decoded.value, decoded.message_type
        return result

    def _uses_registry(self) -> bool:
        if self._registry_in_use is None:
            self._registry_in_use = Schema.objects.filter(cluster_id=self.cluster_id).exists()
        return self._registry_in_use

    def _subject_for(self, schema_id: int, *, is_key: bool) -> tuple[str | None, int | None]:
        """The subject version holding the schema that the caller may read: the topic's own subject
        (TopicNameStrategy) first, then other subjects named after the topic, then any other."""
        if schema_id not in self._subjects:
            rows = SubjectVersion.objects.filter(
                cluster_id=self.cluster_id, schema__schema_id=schema_id, deleted=False
            ).order_by("subject", "-version")
            self._subjects[schema_id] = [
                (subject, version)
                for subject, version in rows.values_list("subject", "version")
                if self.can_read_subject(subject)
            ]
        candidates = self._subjects[schema_id]
        own = f"{self.topic}-{'key' if is_key else 'value'}"
        for preferred in (
            lambda subject: subject == own,
            lambda subject: subject.startswith(f"{self.topic}-"),
            lambda subject: True,
        ):
            for subject, version in candidates:
                if preferred(subject):
                    return subject, version
        return None, None
