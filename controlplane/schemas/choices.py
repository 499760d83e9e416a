"""Enumerations of the schema registry, shared by models, services and the API."""

from django.db import models


class SchemaType(models.TextChoices):
    AVRO = "AVRO", "Avro"
    JSON = "JSON", "JSON Schema"
    PROTOBUF = "PROTOBUF", "Protobuf"


class Compatibility(models.TextChoices):
    NONE = "NONE", "None"
    BACKWARD = "BACKWARD", "Backward"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE", "Backward transitive"
    FORWARD = "FORWARD", "Forward"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE", "Forward transitive"
    FULL = "FULL", "Full"
    FULL_TRANSITIVE = "FULL_TRANSITIVE", "Full transitive"


class Mode(models.TextChoices):
    READWRITE = "READWRITE", "Read-write"
    READONLY = "READONLY", "Read-only"
    READONLY_OVERRIDE = "READONLY_OVERRIDE", "Read-only (override)"
    IMPORT = "IMPORT", "Import"


DEFAULT_COMPATIBILITY = Compatibility.BACKWARD
DEFAULT_MODE = Mode.READWRITE
# Confluent's defaults and limits: a version id is a positive 32-bit integer.
MAX_VERSION = 2**31 - 1
