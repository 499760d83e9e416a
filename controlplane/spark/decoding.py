"""Decoding values written by Confluent serializers (Avro, JSON Schema, Protobuf) into columns, in the executors.

    decoded = decode_values(frame, registry_url=".../clusters/3/schema-registry", basic_auth="key:secret",
                            schema="id long, amount double")
    decoded.select("offset", "decoded.*")
    undecodable_count(decoded)

The framing (controlplane/schemas/wire.py, shared with the message browser): magic byte 0, the schema id as 4
big-endian bytes, then Avro binary, JSON text, or a Protobuf message index path and the message. Each executor
asks the registry for a schema id once (the writer's schema, references included) and keeps the decoder. A value that cannot be decoded gets a reason in `decode_error` and is counted, not fatal,
unless `fail_on_error` is set.

Runs without Django: the registry is reached over HTTP with confluent-kafka's SchemaRegistryClient.
"""

from __future__ import annotations

import base64
import io
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import fastavro
import pyarrow as pa
from confluent_kafka.schema_registry import SchemaRegistryClient
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from controlplane.schemas.wire import (
    HEADER_SIZE,
    UndecodablePayload,
    framed_schema_id,
    jsonable,
    read_message_indexes,
)

OUTPUT_COLUMNS = (("schema_id", pa.int32()), ("decoded", pa.string()), ("decode_error", pa.string()))


class RegistryDecoder:
    """Per schema id, a function from the bytes after the header to a JSON-able value."""

    def __init__(self, registry_url: str, basic_auth: str | None = None) -> None:
        config = {"url": registry_url}
        if basic_auth:
            config["basic.auth.user.info"] = basic_auth
        self.client = SchemaRegistryClient(config)
        # The client caches schemas by id whatever the format asked for: Protobuf's serialized form (the
        # FileDescriptorProto, which needs no .proto compiler here) comes through a client of its own.
        self._serialized_client = SchemaRegistryClient(config)
        self._decoders: dict[int, Callable[[bytes], Any]] = {}
        self._lock = threading.Lock()

    def decode(self, payload: bytes) -> tuple[int, Any]:
        """(schema id, decoded value); raises UndecodablePayload."""
        schema_id = framed_schema_id(payload)
        if schema_id is None:
            raise UndecodablePayload("not framed by a schema id (magic byte 0 and 4 bytes)")
        decoder = self._decoder(schema_id)
        try:
            return schema_id, decoder(payload[HEADER_SIZE:])
        except UndecodablePayload:
            raise
        # Avro and Protobuf readers report garbled input with whatever they trip on.
        except Exception as error:
            raise UndecodablePayload(f"does not match schema {schema_id}: {error!r}") from error

    def _decoder(self, schema_id: int) -> Callable[[bytes], Any]:
        with self._lock:
            known = self._decoders.get(schema_id)
        if known is not None:
            return known
        try:
            schema = self.client.get_schema(schema_id)
            decoder = self._build(schema_id, schema)
        except UndecodablePayload:
            raise
        except Exception as error:  # the client raises SchemaRegistryError or a transport error
            raise UndecodablePayload(
                f"schema {schema_id} cannot be loaded from the registry: {error}"
            ) from error
        with self._lock:
            self._decoders[schema_id] = decoder
        return decoder

    def _build(self, schema_id: int, schema: Any) -> Callable[[bytes], Any]:
        kind = (schema.schema_type or "AVRO").upper()
        if kind == "JSON":
            return lambda data: json.loads(data)
        if kind == "AVRO":
            named: dict[str, Any] = {}
            for reference in schema.references or []:
                referenced = self.client.get_version(reference.subject, reference.version).schema
                fastavro.parse_schema(json.loads(referenced.schema_str), named_schemas=named)
            parsed = fastavro.parse_schema(json.loads(schema.schema_str), named_schemas=named)

            def avro(data: bytes) -> Any:
                reader = io.BytesIO(data)
                value = fastavro.schemaless_reader(reader, parsed, None)
                if reader.tell() != len(data):
                    raise UndecodablePayload(
                        f"{len(data) - reader.tell()} bytes left over after the Avro record"
                    )
                return jsonable(value)

            return avro
        if kind == "PROTOBUF":
            return self._protobuf(schema_id)
        raise UndecodablePayload(f"schema {schema_id} has an unknown type {kind}")

    def _protobuf(self, schema_id: int) -> Callable[[bytes], Any]:
        pool = descriptor_pool.DescriptorPool()
        added: set[str] = set()

        def add(serialized: Any, name: str) -> descriptor_pb2.FileDescriptorProto:
            """Adds a file after the files it imports (registered as references, named as imported)."""
            for reference in serialized.references or []:
                if reference.name not in added:
                    added.add(reference.name)
                    version = self._serialized_client.get_version(
                        reference.subject, reference.version, fmt="serialized"
                    )
                    add(version.schema, reference.name)
            file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized.schema_str))
            # The serialized form may leave the file unnamed; imports find their files by name.
            if not file.name:
                file.name = name
            pool.Add(file)
            return file

        file = add(
            self._serialized_client.get_schema(schema_id, fmt="serialized"), f"schema-{schema_id}.proto"
        )
        classes: dict[tuple[int, ...], type] = {}

        def message_class(indexes: tuple[int, ...]) -> type:
            found = classes.get(indexes)
            if found is not None:
                return found
            messages, scope = file.message_type, file.package
            full_name = ""
            for index in indexes:
                if not 0 <= index < len(messages):
                    raise UndecodablePayload(f"schema {schema_id} has no message at index path {indexes}")
                full_name = f"{scope}.{messages[index].name}" if scope else messages[index].name
                messages, scope = messages[index].nested_type, full_name
            found = message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))
            classes[indexes] = found
            return found

        def protobuf(data: bytes) -> Any:
            indexes, start = read_message_indexes(data)
            message = message_class(indexes).FromString(data[start:])
            return json_format.MessageToDict(message, preserving_proto_field_name=True)

        return protobuf


_decoders: dict[tuple[str, str | None], RegistryDecoder] = {}


def registry_decoder(registry_url: str, basic_auth: str | None) -> RegistryDecoder:
    """One decoder per registry per process, so a Python worker looks each schema id up once."""
    key = (registry_url, basic_auth)
    if key not in _decoders:
        _decoders[key] = RegistryDecoder(registry_url, basic_auth)
    return _decoders[key]


def _decode_one(
    payload: bytes | None, decoder: RegistryDecoder, fail_on_error: bool
) -> tuple[int | None, str | None, str | None]:
    """(schema id, JSON text, error) of one value; a null value stays null and is no error."""
    if payload is None:
        return None, None, None
    try:
        schema_id, value = decoder.decode(payload)
    except UndecodablePayload as error:
        if fail_on_error:
            raise
        return framed_schema_id(payload), None, str(error)
    return schema_id, json.dumps(value), None


def decode_batch(
    batch: pa.RecordBatch, column: str, decoder: RegistryDecoder, *, fail_on_error: bool
) -> pa.RecordBatch:
    """The batch with schema_id, decoded (JSON text) and decode_error columns appended."""
    rows = [_decode_one(payload, decoder, fail_on_error) for payload in batch.column(column).to_pylist()]
    ids, texts, errors = zip(*rows, strict=True) if rows else ((), (), ())
    columns = [pa.array(ids, pa.int32()), pa.array(texts, pa.string()), pa.array(errors, pa.string())]

    return pa.RecordBatch.from_arrays(
        [*batch.columns, *columns], names=[*batch.schema.names, *(name for name, _ in OUTPUT_COLUMNS)]
    )


def decode_values(
    frame: Any,
    *,
    registry_url: str,
    basic_auth: str | None = None,
    column: str = "value",
    schema: str | None = None,
    fail_on_error: bool = False,
) -> Any:
    """`frame` with `schema_id`, `decoded` and `decode_error` columns for its `column` of framed payloads.

    `decoded` is the value as JSON text, or a struct when `schema` (Spark DDL, e.g. "id long, name string")
    is given. With `fail_on_error` the first undecodable value fails the query instead.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    output = StructType(
        [
            *frame.schema.fields,
            StructField("schema_id", IntegerType()),
            StructField("decoded", StringType()),
            StructField("decode_error", StringType()),
        ]
    )

    def decode_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        decoder = registry_decoder(registry_url, basic_auth)
        for batch in batches:
            yield decode_batch(batch, column, decoder, fail_on_error=fail_on_error)

    decoded = frame.mapInArrow(decode_partition, output)
    if schema is not None:
        decoded = decoded.withColumn("decoded", F.from_json("decoded", schema))
    return decoded


def undecodable_count(decoded: Any) -> int:
    """How many values decode_values could not decode (null values are not counted)."""
    from pyspark.sql import functions as F

    return decoded.where(F.col("decode_error").isNotNull()).count()
