"""The registry's behaviour, Confluent's semantics: every read and write of the registry goes through here.

Errors are `RegistryError`s carrying Confluent's HTTP status and error code. Parsed schemas are cached by
(registry, schema id) — schema rows never change — and answers built from the database are cached per
process behind the registry's generation counter (see `cache.py`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Max

from controlplane.schemas.choices import (
    DEFAULT_COMPATIBILITY,
    DEFAULT_MODE,
    MAX_VERSION,
    Compatibility,
    Mode,
    SchemaType,
)
from controlplane.schemas.formats import InvalidSchema, ParsedSchema, find_incompatibilities, parse_schema
from controlplane.schemas.models import (
    RegistryConfig,
    RegistryMode,
    RegistryState,
    Schema,
    SchemaReference,
    SubjectVersion,
)

LATEST = -1
CONFIG_FIELDS = (
    "alias",
    "validateFields",
    "validateRules",
    "compatibilityGroup",
    "defaultMetadata",
    "overrideMetadata",
    "defaultRuleSet",
    "overrideRuleSet",
)


class RegistryError(Exception):
    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(schema_id: int | None = None) -> RegistryError:
    return RegistryError(
        404, 40403, f"Schema {schema_id} not found" if schema_id is not None else "Schema not found"
    )


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


@dataclass(frozen=True)
class Reference:
    name: str
    subject: str
    version: int

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class SchemaInput:
    """A schema as a client sends it."""

    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()
    metadata: dict | None = None
    rule_set: dict | None = None
    schema_id: int | None = None  # IMPORT mode only
    version: int | None = None  # IMPORT mode only


@dataclass
class CompatibilityResult:
    is_compatible: bool
    messages: list[str] = field(default_factory=list)


def parse_schema_input(body: Any) -> SchemaInput:
    """The request body of register, lookup and compatibility calls; unknown fields are ignored."""
    if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
        raise RegistryError(422, 42201, "Invalid schema: the body needs a 'schema' string")
    schema_type = body.get("schemaType") or SchemaType.AVRO
    if schema_type not in SchemaType.values:
        raise RegistryError(422, 42201, f"Invalid schema type {schema_type!r}")
    references = []
    for item in body.get("references") or []:
        try:
            references.append(Reference(str(item["name"]), str(item["subject"]), int(item["version"])))
        except (KeyError, TypeError, ValueError) as error:
            raise invalid_schema(
                f"Invalid schema: a reference needs name, subject and version ({error})"
            ) from error
    schema_id, version = body.get("id"), body.get("version")
    for name, value in (("id", schema_id), ("version", version)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise invalid_schema(f"Invalid schema: {name} must be a positive integer")
    return SchemaInput(
        schema_type=schema_type,
        text=body["schema"],
        references=tuple(references),
        metadata=body.get("metadata") if isinstance(body.get("metadata"), dict) else None,
        rule_set=body.get("ruleSet") if isinstance(body.get("ruleSet"), dict) else None,
        schema_id=schema_id or None,
        version=version or None,
    )


# -- parsing with references

_PARSED: OrderedDict[tuple[int, int], ParsedSchema] = OrderedDict()
_PARSED_LIMIT = 2048
_PARSED_LOCK = threading.Lock()  # each web server worker serves requests on several threads


def parsed_schema(schema: Schema) -> ParsedSchema:
    """The parsed form of a stored schema. Rows never change, so the cache never goes stale."""
    key = (schema.cluster_id, schema.schema_id)
    with _PARSED_LOCK:
        cached = _PARSED.get(key)
        if cached is not None:
            _PARSED.move_to_end(key)
            return cached
    references = tuple(Reference(**item) for item in schema.references)
    dependencies = resolve_references(schema.cluster_id, references)
    try:
        parsed = parse_schema(schema.schema_type, schema.text, dependencies)
    except InvalidSchema as error:  # stored under an older parser that accepted it: report, never crash
        raise RegistryError(
            500, 50001, f"Stored schema {schema.schema_id} cannot be parsed: {error}"
        ) from error
    with _PARSED_LOCK:
        _PARSED[key] = parsed
        if len(_PARSED) > _PARSED_LIMIT:
            _PARSED.popitem(last=False)
    return parsed


def forget_parsed(keys: Iterable[tuple[int, int]] | None = None) -> None:
    """Forgets every parsed schema, or those of the (registry, schema id) keys: rows a rolled-back
    transaction stored (a plan's simulation) did change after all."""
    with _PARSED_LOCK:
        if keys is None:
            _PARSED.clear()
        for key in keys or ():
            _PARSED.pop(key, None)


def resolve_references(
    cluster_id: int, references: Sequence[Reference], trail: tuple[str, ...] = ()
) -> list[tuple[str, ParsedSchema]]:
    """The referenced schemas, references of references first, each once."""
    resolved: list[tuple[str, ParsedSchema]] = []
    seen: set[str] = set()
    for reference in references:
        if reference.subject in trail:
            raise invalid_schema(f"Invalid schema: circular reference through subject '{reference.subject}'")
        row = _find_version(cluster_id, reference.subject, reference.version, include_deleted=True)
        if row is None:
            raise invalid_schema(
                f"Invalid schema: reference '{reference.name}' names subject '{reference.subject}' "
                f"version {reference.version}, which does not exist"
            )
        parsed = parsed_schema(row.schema)
        nested = [Reference(**item) for item in row.schema.references]
        for name, dependency in resolve_references(cluster_id, nested, (*trail, reference.subject)):
            if name not in seen:
                seen.add(name)
                resolved.append((name, dependency))
        if reference.name not in seen:
            seen.add(reference.name)
            resolved.append((reference.name, parsed))
    return resolved


def _fingerprint(schema_type: str, text: str, references: Iterable[Reference]) -> str:
    payload = json.dumps([schema_type, text, [ref.as_dict() for ref in references]], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def _parse_input(cluster_id: int, schema_input: SchemaInput) -> ParsedSchema:
    dependencies = resolve_references(cluster_id, schema_input.references)
    try:
        return parse_schema(schema_input.schema_type, schema_input.text, dependencies)
    except InvalidSchema as error:
        raise invalid_schema(str(error)) from error


# -- reading


def _versions(cluster_id: int, subject: str, *, include_deleted: bool = False):
    rows = SubjectVersion.objects.filter(cluster_id=cluster_id, subject=subject)
    return rows if include_deleted else rows.filter(deleted=False)


def _find_version(
    cluster_id: int, subject: str, version: int, *, include_deleted: bool
) -> SubjectVersion | None:
    rows = _versions(cluster_id, subject, include_deleted=include_deleted).select_related("schema")
    if version == LATEST:
        return rows.order_by("-version").first()
    return rows.filter(version=version).first()


def parse_version(raw: str) -> int:
    if raw == "latest":
        return LATEST
    try:
        number = int(raw)
    except ValueError:
        number = 0
    if number == LATEST:
        return LATEST
    if not 1 <= number <= MAX_VERSION:
        raise RegistryError(
            422,
            42202,
            f"The specified version '{raw}' is not a valid version id. Allowed values are between "
            f'[1, 2^31-1] and the string "latest"',
        )
    return number


def get_version(
    *, cluster_id: int, subject: str, version: int, include_deleted: bool = False
) -> SubjectVersion:
    if not _versions(cluster_id, subject, include_deleted=True).exists():
        raise subject_not_found(subject)
    row = _find_version(cluster_id, subject, version, include_deleted=include_deleted)
    if row is None:
        if not include_deleted and not _versions(cluster_id, subject).exists():
            raise subject_not_found(subject)
        raise version_not_found(version if version != LATEST else "latest")
    return row


def get_schema(*, cluster_id: int, schema_id: int) -> Schema:
    """A schema by id, as long as some subject version (soft-deleted included) still holds it."""
    schema = Schema.objects.filter(cluster_id=cluster_id, schema_id=schema_id).first()
    if schema is None or not schema.subject_versions.exists():
        raise schema_not_found(schema_id)
    return schema


def max_schema_id(cluster_id: int) -> int:
    return Schema.objects.filter(cluster_id=cluster_id).aggregate(top=Max("schema_id"))["top"] or 0


def render_schema_text(schema: Schema, output_format: str | None) -> str:
    """Protobuf schemas come as .proto text, or with `format=serialized` as a base64 FileDescriptorProto."""
    if schema.schema_type == SchemaType.PROTOBUF and output_format == "serialized":
        return parsed_schema(schema).model.serialized()
    return schema.text


def list_subjects(
    *, cluster_id: int, prefix: str = "", deleted: bool = False, deleted_only: bool = False
) -> list[str]:
    rows = SubjectVersion.objects.filter(cluster_id=cluster_id)
    if prefix:
        rows = rows.filter(subject__startswith=prefix)
    live = set(rows.filter(deleted=False).values_list("subject", flat=True))
    if deleted_only:
        soft = set(rows.filter(deleted=True).values_list("subject", flat=True))
        return sorted(soft - live)
    if deleted:
        return sorted(set(rows.values_list("subject", flat=True)))
    return sorted(live)


def list_versions(
    *, cluster_id: int, subject: str, deleted: bool = False, deleted_only: bool = False
) -> list[int]:
    rows = _versions(cluster_id, subject, include_deleted=True)
    if deleted_only:
        rows = rows.filter(deleted=True)
    elif not deleted:
        rows = rows.filter(deleted=False)
    versions = list(rows.order_by("version").values_list("version", flat=True))
    if not versions and not (deleted_only and _versions(cluster_id, subject, include_deleted=True).exists()):
        raise subject_not_found(subject)
    return versions


def versions_of_schema(*, cluster_id: int, schema_id: int, subject: str | None = None, deleted: bool = False):
    schema = get_schema(cluster_id=cluster_id, schema_id=schema_id)
    rows = schema.subject_versions.all()
    if not deleted:
        rows = rows.filter(deleted=False)
    if subject:
        rows = rows.filter(subject=subject)
    return list(rows.order_by("subject", "version"))


def referenced_by(*, cluster_id: int, subject: str, version: int) -> list[int]:
    row = get_version(cluster_id=cluster_id, subject=subject, version=version, include_deleted=True)
    ids = SchemaReference.objects.filter(
        cluster_id=cluster_id, subject=subject, version=row.version
    ).values_list("schema__schema_id", flat=True)
    return sorted(set(ids))


def list_schemas(
    *, cluster_id: int, prefix: str = "", deleted: bool = False, latest_only: bool = False
) -> list[SubjectVersion]:
    rows = SubjectVersion.objects.filter(cluster_id=cluster_id).select_related("schema")
    if prefix:
        rows = rows.filter(subject__startswith=prefix)
    if not deleted:
        rows = rows.filter(deleted=False)
    rows = list(rows.order_by("subject", "version"))
    if latest_only:
        latest: dict[str, SubjectVersion] = {}
        for row in rows:
            latest[row.subject] = row
        rows = list(latest.values())
    return rows


def latest_with_metadata(
    *, cluster_id: int, subject: str, wanted: dict[str, str], include_deleted: bool
) -> SubjectVersion:
    rows = list(
        _versions(cluster_id, subject, include_deleted=include_deleted)
        .select_related("schema")
        .order_by("-version")
    )
    if not rows:
        raise subject_not_found(subject)
    for row in rows:
        properties = ((row.schema.metadata or {}).get("properties") or {}) if row.schema.metadata else {}
        if all(properties.get(key) == value for key, value in wanted.items()):
            return row
    raise RegistryError(404, 40403, f"Schema with metadata {wanted} not found in subject '{subject}'")


# -- config and mode


def _subject_config(cluster_id: int, subject: str) -> RegistryConfig | None:
    return RegistryConfig.objects.filter(cluster_id=cluster_id, subject=subject).first()


def config_as_dict(config: RegistryConfig | None, *, key: str = "compatibilityLevel") -> dict[str, Any]:
    if config is None:
        return {key: DEFAULT_COMPATIBILITY.value}
    body: dict[str, Any] = dict(config.extra)
    if config.compatibility:
        body[key] = config.compatibility
    if config.normalize is not None:
        body["normalize"] = config.normalize
    return body


def get_config(*, cluster_id: int, subject: str = "", default_to_global: bool = False) -> dict[str, Any]:
    config = _subject_config(cluster_id, subject)
    if config is None and subject:
        if not default_to_global:
            raise RegistryError(
                404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured"
            )
        config = _subject_config(cluster_id, "")
    return config_as_dict(config)


def effective_compatibility(cluster_id: int, subject: str) -> tuple[str, bool]:
    """The subject's compatibility level and normalize setting, falling back to the registry's."""
    level, normalize = "", None
    for config in (_subject_config(cluster_id, subject), _subject_config(cluster_id, "")):
        if config is None:
            continue
        level = level or config.compatibility
        normalize = config.normalize if normalize is None else normalize
    return level or DEFAULT_COMPATIBILITY, bool(normalize)


def invalid_compatibility() -> RegistryError:
    return RegistryError(
        422,
        42203,
        "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, "
        "forward_transitive, and full_transitive",
    )


def set_config(*, cluster_id: int, subject: str = "", body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid_compatibility()
    level = body.get("compatibility", body.get("compatibilityLevel"))
    if level is not None:
        if not isinstance(level, str) or level.upper() not in Compatibility.values:
            raise invalid_compatibility()
        level = level.upper()
    normalize = body.get("normalize")
    if normalize is not None and not isinstance(normalize, bool):
        raise RegistryError(422, 42203, "Invalid config: normalize must be true or false")
    with transaction.atomic():
        config, _ = RegistryConfig.objects.get_or_create(cluster_id=cluster_id, subject=subject)
        if level is not None:
            config.compatibility = level
        if normalize is not None:
            config.normalize = normalize
        config.extra = {**config.extra, **{key: body[key] for key in CONFIG_FIELDS if key in body}}
        config.save()
        _bump(cluster_id)
    return config_as_dict(config, key="compatibility")


def delete_config(*, cluster_id: int, subject: str = "") -> dict[str, Any]:
    with transaction.atomic():
        config = _subject_config(cluster_id, subject)
        if config is None:
            if subject:
                raise subject_not_found(subject)
            return config_as_dict(None)
        previous = config_as_dict(config)
        config.delete()
        _bump(cluster_id)
    return previous


def _mode_row(cluster_id: int, subject: str) -> RegistryMode | None:
    return RegistryMode.objects.filter(cluster_id=cluster_id, subject=subject).first()


def get_mode(*, cluster_id: int, subject: str = "", default_to_global: bool = False) -> str:
    row = _mode_row(cluster_id, subject)
    if row is None and subject:
        if not default_to_global:
            raise RegistryError(
                404, 40409, f"Subject '{subject}' does not have subject-level mode configured"
            )
        row = _mode_row(cluster_id, "")
    return row.mode if row is not None else DEFAULT_MODE.value


def effective_mode(cluster_id: int, subject: str) -> str:
    row = _mode_row(cluster_id, subject) or _mode_row(cluster_id, "")
    return row.mode if row is not None else DEFAULT_MODE.value


def set_mode(*, cluster_id: int, subject: str = "", body: Any, force: bool = False) -> str:
    mode = body.get("mode") if isinstance(body, dict) else None
    if not isinstance(mode, str) or mode.upper() not in Mode.values:
        raise RegistryError(
            422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT."
        )
    mode = mode.upper()
    if mode == Mode.IMPORT and not force:
        existing = SubjectVersion.objects.filter(cluster_id=cluster_id)
        if subject:
            existing = existing.filter(subject=subject)
        if existing.exists():
            raise RegistryError(
                422,
                42205,
                "Cannot import since found existing subjects; use force=true to switch to IMPORT anyway",
            )
    with transaction.atomic():
        RegistryMode.objects.update_or_create(cluster_id=cluster_id, subject=subject, defaults={"mode": mode})
        _bump(cluster_id)
    return mode


def delete_mode(*, cluster_id: int, subject: str) -> str:
    with transaction.atomic():
        row = _mode_row(cluster_id, subject)
        if row is None:
            raise subject_not_found(subject)
        row.delete()
        _bump(cluster_id)
    return row.mode


def _require_writable(cluster_id: int, subject: str, *, importing: bool = False) -> str:
    mode = effective_mode(cluster_id, subject)
    if mode in (Mode.READONLY, Mode.READONLY_OVERRIDE):
        raise RegistryError(422, 42205, f"Subject {subject} is in read-only mode")
    if importing and mode != Mode.IMPORT:
        raise RegistryError(
            422, 42205, "Overwrite new schema with id is not permitted: the subject is not in IMPORT mode"
        )
    return mode


# -- compatibility


def _directions(level: str) -> tuple[bool, bool, bool]:
    """(new reads old, old reads new, against every version)."""
    backward = level.startswith(("BACKWARD", "FULL"))
    forward = level.startswith(("FORWARD", "FULL"))
    return backward, forward, level.endswith("TRANSITIVE")


def check_against(
    level: str, candidate: ParsedSchema, previous: Sequence[tuple[int, ParsedSchema]]
) -> list[str]:
    """Messages for every rule the candidate breaks against `previous` (oldest first) under `level`."""
    if level == Compatibility.NONE or not previous:
        return []
    backward, forward, transitive = _directions(level)
    targets = previous if transitive else previous[-1:]
    messages: list[str] = []
    for version, old in targets:
        problems = []
        if backward:
            problems += find_incompatibilities(candidate, old)
        if forward:
            problems += [
                problem
                for problem in find_incompatibilities(old, candidate)
                if not backward or problem not in problems
            ]
        for problem in problems:
            messages.append(f"{problem}, {{oldSchemaVersion: {version}}}")
        if problems:
            messages.append(f"{{compatibility: '{level}'}}")
    return messages


def _live_parsed(cluster_id: int, subject: str) -> list[tuple[int, ParsedSchema]]:
    rows = _versions(cluster_id, subject).select_related("schema").order_by("version")
    return [(row.version, parsed_schema(row.schema)) for row in rows]


def evaluate_compatibility(
    *, cluster_id: int, subject: str, schema_input: SchemaInput, version: int | None
) -> CompatibilityResult:
    """`version` None tests against the versions the subject's level names (all of them if transitive)."""
    candidate = _parse_input(cluster_id, schema_input)
    level, _ = effective_compatibility(cluster_id, subject)
    if version is None:
        previous = _live_parsed(cluster_id, subject)
    else:
        row = get_version(cluster_id=cluster_id, subject=subject, version=version)
        previous = [(row.version, parsed_schema(row.schema))]
        level = level.replace("_TRANSITIVE", "")
    messages = check_against(level, candidate, previous)
    return CompatibilityResult(is_compatible=not messages, messages=messages)


# -- writing


def _bump(cluster_id: int) -> None:
    updated = RegistryState.objects.filter(cluster_id=cluster_id).update(generation=F("generation") + 1)
    if not updated:
        try:
            with transaction.atomic():
                RegistryState.objects.create(cluster_id=cluster_id, generation=1)
        except IntegrityError:
            RegistryState.objects.filter(cluster_id=cluster_id).update(generation=F("generation") + 1)


def lookup_schema(
    *,
    cluster_id: int,
    subject: str,
    schema_input: SchemaInput,
    normalize: bool = False,
    deleted: bool = False,
) -> SubjectVersion:
    if not _versions(cluster_id, subject, include_deleted=deleted).exists():
        raise subject_not_found(subject)
    parsed = _parse_input(cluster_id, schema_input)
    fingerprints = {
        _fingerprint(parsed.schema_type, text, schema_input.references)
        for text in ((parsed.normalized, parsed.canonical) if normalize else (parsed.canonical,))
    }
    row = (
        _versions(cluster_id, subject, include_deleted=deleted)
        .filter(schema__fingerprint__in=fingerprints)
        .select_related("schema")
        .order_by("-version")
        .first()
    )
    if row is None:
        raise schema_not_found()
    return row


def _require_compatible(cluster_id: int, subject: str, parsed: ParsedSchema, level: str) -> None:
    previous = _live_parsed(cluster_id, subject)
    if previous and previous[-1][1].schema_type != parsed.schema_type and level != Compatibility.NONE:
        raise RegistryError(
            409,
            409,
            f'Schema being registered is incompatible with an earlier schema for subject "{subject}", details: '
            f"[{{errorType:'TYPE_MISMATCH', description:'The schema type changed from "
            f"{previous[-1][1].schema_type} to {parsed.schema_type}'}}]",
        )
    messages = check_against(level, parsed, previous)
    if messages:
        raise RegistryError(
            409,
            409,
            f'Schema being registered is incompatible with an earlier schema for subject "{subject}", '
            f"details: [{', '.join(messages)}]",
        )


def check_register(
    *, cluster_id: int, subject: str, schema_input: SchemaInput, compatibility: str | None = None
) -> tuple[SubjectVersion | None, SubjectVersion | None]:
    """What registering would do, without writing: (the subject's latest live version, the live version
    already holding an identical schema or None when a new version would be registered). Raises the
    RegistryError register_schema would raise (read-only subject, invalid schema or reference, incompatible
    with earlier versions under `compatibility`, or the subject's level when None)."""
    _require_writable(cluster_id, subject)
    parsed = _parse_input(cluster_id, schema_input)
    level, normalize_by_config = effective_compatibility(cluster_id, subject)
    text = parsed.normalized if normalize_by_config else parsed.canonical
    fingerprint = _fingerprint(parsed.schema_type, text, schema_input.references)
    live = _versions(cluster_id, subject).select_related("schema").order_by("-version")
    latest = live.first()
    identical = live.filter(schema__fingerprint=fingerprint).first()
    if identical is None:
        _require_compatible(cluster_id, subject, parsed, compatibility or level)
    return latest, identical


def check_delete_subject(*, cluster_id: int, subject: str) -> None:
    """The refusals a (soft) delete_subject of a live subject would answer: read-only, referenced."""
    _require_writable(cluster_id, subject)
    versions = _versions(cluster_id, subject, include_deleted=True).values_list("version", flat=True)
    referrers = _references_to(cluster_id, subject, versions)
    if referrers:
        raise RegistryError(
            422, 42206, f"One or more references exist to the schema {{subject={subject}}}: ids {referrers}"
        )


def register_schema(
    *, cluster_id: int, subject: str, schema_input: SchemaInput, normalize: bool = False
) -> SubjectVersion:
    """Register under `subject`, or return the live version that already holds an identical schema."""
    _require_writable(cluster_id, subject, importing=schema_input.schema_id is not None)
    parsed = _parse_input(cluster_id, schema_input)
    level, normalize_by_config = effective_compatibility(cluster_id, subject)
    text = parsed.normalized if normalize or normalize_by_config else parsed.canonical
    fingerprint = _fingerprint(parsed.schema_type, text, schema_input.references)
    existing = (
        _versions(cluster_id, subject)
        .filter(schema__fingerprint=fingerprint)
        .select_related("schema")
        .order_by("-version")
        .first()
    )
    if existing is not None and schema_input.schema_id in (None, existing.schema.schema_id):
        return existing
    if schema_input.schema_id is None:
        _require_compatible(cluster_id, subject, parsed, level)
    attempts_left = 5
    while True:
        try:
            with transaction.atomic():
                row = _store_version(cluster_id, subject, schema_input, parsed.schema_type, text, fingerprint)
                _bump(cluster_id)
            return row
        except IntegrityError:  # a concurrent registration took the id or the version number: try again
            attempts_left -= 1
            if not attempts_left:
                raise RegistryError(
                    500, 50001, "Error while registering the schema: concurrent writes"
                ) from None


def _store_version(
    cluster_id: int, subject: str, schema_input: SchemaInput, schema_type: str, text: str, fingerprint: str
) -> SubjectVersion:
    schema = Schema.objects.filter(cluster_id=cluster_id, fingerprint=fingerprint).first()
    if schema_input.schema_id is not None:
        taken = Schema.objects.filter(cluster_id=cluster_id, schema_id=schema_input.schema_id).first()
        if taken is not None and taken.fingerprint != fingerprint:
            raise RegistryError(
                422, 42205, f"Overwrite new schema with id {schema_input.schema_id} is not permitted."
            )
        if schema is not None and schema.schema_id != schema_input.schema_id:
            raise RegistryError(
                422,
                42205,
                f"The schema is already registered with id {schema.schema_id}, not {schema_input.schema_id}.",
            )
    if schema is None:
        schema = Schema.objects.create(
            cluster_id=cluster_id,
            schema_id=schema_input.schema_id or max_schema_id(cluster_id) + 1,
            schema_type=schema_type,
            text=text,
            fingerprint=fingerprint,
            references=[reference.as_dict() for reference in schema_input.references],
            metadata=schema_input.metadata,
            rule_set=schema_input.rule_set,
        )
        SchemaReference.objects.bulk_create(
            SchemaReference(
                cluster_id=cluster_id, schema=schema, name=ref.name, subject=ref.subject, version=ref.version
            )
            for ref in schema_input.references
        )
    if schema_input.version is not None:
        version = schema_input.version
        if _versions(cluster_id, subject, include_deleted=True).filter(version=version).exists():
            raise RegistryError(422, 42205, f"Version {version} of subject '{subject}' already exists.")
    else:
        top = _versions(cluster_id, subject, include_deleted=True).aggregate(top=Max("version"))["top"] or 0
        version = top + 1
    return SubjectVersion.objects.create(
        cluster_id=cluster_id, subject=subject, version=version, schema=schema
    )


def _references_to(cluster_id: int, subject: str, versions: Iterable[int]) -> list[int]:
    """Ids of live schemas that reference these versions: they must not be deleted from under them."""
    referrers = SchemaReference.objects.filter(
        cluster_id=cluster_id,
        subject=subject,
        version__in=list(versions),
        schema__subject_versions__deleted=False,
    ).values_list("schema__schema_id", flat=True)
    return sorted(set(referrers))


def delete_subject(*, cluster_id: int, subject: str, permanent: bool = False) -> list[int]:
    _require_writable(cluster_id, subject)
    with transaction.atomic():
        rows = list(_versions(cluster_id, subject, include_deleted=True).order_by("version"))
        if not rows:
            raise subject_not_found(subject)
        live = [row for row in rows if not row.deleted]
        if permanent and live:
            raise RegistryError(
                404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted"
            )
        if not permanent and not live:
            raise RegistryError(
                404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
            )
        referrers = _references_to(cluster_id, subject, [row.version for row in rows])
        if referrers:
            raise RegistryError(
                422,
                42206,
                f"One or more references exist to the schema {{subject={subject}}}: ids {referrers}",
            )
        if permanent:
            versions = [row.version for row in rows]
            _versions(cluster_id, subject, include_deleted=True).delete()
            RegistryConfig.objects.filter(cluster_id=cluster_id, subject=subject).delete()
            RegistryMode.objects.filter(cluster_id=cluster_id, subject=subject).delete()
        else:
            versions = [row.version for row in live]
            _versions(cluster_id, subject).update(deleted=True)
        _bump(cluster_id)
    return versions


def delete_version(*, cluster_id: int, subject: str, version: int, permanent: bool = False) -> int:
    _require_writable(cluster_id, subject)
    with transaction.atomic():
        if not _versions(cluster_id, subject, include_deleted=True).exists():
            raise subject_not_found(subject)
        row = _find_version(cluster_id, subject, version, include_deleted=permanent)
        if row is None:
            if (
                not permanent
                and version != LATEST
                and _find_version(cluster_id, subject, version, include_deleted=True)
            ):
                raise RegistryError(
                    404,
                    40406,
                    f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently",
                )
            raise version_not_found(version if version != LATEST else "latest")
        if permanent and not row.deleted:
            raise RegistryError(
                404,
                40407,
                f"Subject '{subject}' Version {row.version} was not deleted first before being permanently deleted",
            )
        referrers = _references_to(cluster_id, subject, [row.version])
        if referrers:
            raise RegistryError(
                422,
                42206,
                f"One or more references exist to the schema {{subject={subject},version={row.version}}}: ids {referrers}",
            )
        if permanent:
            row.delete()
        else:
            row.deleted = True
            row.save(update_fields=["deleted"])
        _bump(cluster_id)
    return row.version
