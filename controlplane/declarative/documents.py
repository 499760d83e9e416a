"""The declarative format: one document per resource (`kind`, `metadata`, `spec`), its JSON Schema (served at
`/api/v1/declarative/schema/` and kept as `streamhub-resources.schema.json` for editors), and reading
documents into typed values. Spec fields are camelCase, as in Kubernetes-style manifests; topic config
names stay Kafka's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from controlplane.acls.choices import GrantTemplate
from controlplane.alerts.choices import ChannelKind, Comparison, Granularity, Metric, Severity
from controlplane.core.errors import ServiceError
from controlplane.declarative.choices import Kind
from controlplane.jobs.choices import DesiredState, StreamingJobName
from controlplane.lag.observations import Health
from controlplane.quotas.choices import QuotaKey
from controlplane.schemas.choices import MAX_VERSION, Compatibility, SchemaType

API_VERSION = "streamhub.io/v1"
SCHEMA_ID = "https://streamhub.io/schemas/resources-v1.json"

_NAME = {"type": "string", "minLength": 1, "maxLength": 249}
_PREFIX = {"type": "string", "maxLength": 249}
# A label's name is free text like its value, so it refuses NUL too (PostgreSQL's jsonb stores none: the
# claim recording the labels failed after the change had been made).
_LABEL_NAME = {"type": "string", "pattern": "^[^\\x00]*$"}


def _document(
    kind: str, spec: dict[str, Any], *, cluster_required: bool = True, name_max: int = 249
) -> dict[str, Any]:
    metadata_properties: dict[str, Any] = {
        "name": {**_NAME, "maxLength": name_max},
        "team": {"type": "string", "minLength": 1, "description": "the owning team's slug"},
        "labels": {
            "type": "object",
            "propertyNames": _LABEL_NAME,
            "additionalProperties": {"type": "string", "maxLength": 63},
        },
    }
    if cluster_required:
        metadata_properties["cluster"] = {
            "type": "string",
            "minLength": 1,
            "description": "the cluster's name",
        }
    return {
        "type": "object",
        "required": ["kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": API_VERSION},
            "kind": {"const": kind},
            "metadata": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": metadata_properties,
            },
            "spec": spec,
        },
    }


def _spec(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": properties,
    }


# A rule's durations: at most a week, as the alert rules' API takes them.
WEEK_SECONDS = 7 * 24 * 3600
_CONFIG_VALUE = {"type": ["string", "integer", "number", "boolean"]}

KIND_SCHEMAS: dict[str, dict[str, Any]] = {
    Kind.TOPIC: _document(
        Kind.TOPIC,
        _spec(
            {
                "partitions": {"type": "integer", "minimum": 1},
                "replicationFactor": {"type": "integer", "minimum": 1},
                "configs": {"type": "object", "additionalProperties": _CONFIG_VALUE},
            },
            ["partitions"],
        ),
    ),
    Kind.SERVICE_ACCOUNT: _document(
        Kind.SERVICE_ACCOUNT,
        _spec({"description": {"type": "string", "maxLength": 500}}),
        cluster_required=False,
    ),
    Kind.ACCESS_GRANT: _document(
        Kind.ACCESS_GRANT,
        _spec(
            {
                "serviceAccount": _NAME,
                "template": {"enum": list(GrantTemplate.values)},
                "topicPrefix": {**_PREFIX, "minLength": 1},
                "groupPrefix": _PREFIX,
                "transactionalIdPrefix": _PREFIX,
            },
            ["serviceAccount", "template", "topicPrefix"],
        ),
    ),
    Kind.QUOTA: _document(
        Kind.QUOTA,
        _spec(
            {
                "user": {**_NAME, "description": "a service account's name"},
                "clientId": {"type": "string", "minLength": 1},
                "values": {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": False,
                    "properties": {key: {"type": "number", "exclusiveMinimum": 0} for key in QuotaKey.values},
                },
            },
            ["values"],
        ),
    ),
    Kind.SCHEMA: _document(
        Kind.SCHEMA,
        _spec(
            {
                "schemaType": {"enum": list(SchemaType.values), "description": "AVRO when not given"},
                "schema": {"type": "string", "minLength": 1, "description": "the schema's text"},
                "references": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["name", "subject", "version"],
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "subject": {"type": "string", "minLength": 1},
                            "version": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
                        },
                    },
                },
                "compatibility": {
                    "enum": list(Compatibility.values),
                    "description": "the subject's own level; the registry's when not given",
                },
            },
            ["schema"],
        ),
    ),
    Kind.ALERT_CHANNEL: _document(
        Kind.ALERT_CHANNEL,
        _spec(
            {
                "type": {"enum": list(ChannelKind.values)},
                "url": {
                    "type": "string",
                    "maxLength": 2000,
                    "description": "webhook and slack: a credential; write ${ENV_VAR} or ${file:path}, which "
                    "the CLI resolves, never the URL itself",
                },
                "emailRecipients": {
                    "type": "array",
                    "maxItems": 20,
                    # Whitespace spelled out: `\s` means more characters in Python (which validates) than in
                    # ECMA-262 (which OpenAPI clients and schemathesis read), e.g. \x1c.
                    "items": {
                        "type": "string",
                        "pattern": "^[^@ \\t\\n\\r\\f\\v]+@[^@ \\t\\n\\r\\f\\v]+$",
                        "maxLength": 254,
                    },
                },
                "enabled": {"type": "boolean"},
            },
            ["type"],
        ),
        cluster_required=False,
        name_max=100,
    ),
    # metadata.cluster is optional: a rule without one watches every cluster of the organization.
    Kind.ALERT_RULE: _document(
        Kind.ALERT_RULE,
        _spec(
            {
                "description": {"type": "string", "maxLength": 1000},
                "metric": {"enum": list(Metric.values)},
                "comparison": {"enum": list(Comparison.values)},
                "threshold": {"type": "number", "minimum": 0},
                "resolveThreshold": {"type": "number", "minimum": 0},
                "statuses": {"type": "array", "items": {"enum": list(Health.values)}},
                "groupPattern": {"type": "string", "minLength": 1, "maxLength": 255},
                "topicPattern": {"type": "string", "minLength": 1, "maxLength": 255},
                "allTeams": {"type": "boolean"},
                "granularity": {"enum": list(Granularity.values)},
                "forSeconds": {"type": "integer", "minimum": 0, "maximum": WEEK_SECONDS},
                "severity": {"enum": list(Severity.values)},
                "channels": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "uniqueItems": True,
                },
                "renotifyIntervalSeconds": {"type": "integer", "minimum": 60, "maximum": WEEK_SECONDS},
                "sendResolved": {"type": "boolean"},
                "enabled": {"type": "boolean"},
            },
            ["metric"],
        ),
        name_max=100,
    ),
    Kind.STREAMING_JOB: _document(
        Kind.STREAMING_JOB,
        _spec(
            {
                "job": {
                    "enum": list(StreamingJobName.values),
                    "description": "a job of the streaming catalog",
                },
                "parameters": {
                    "type": "object",
                    "description": "the job's parameters, as the API takes them",
                },
                "serviceAccount": {**_NAME, "description": "the team's service account the job reads as"},
                "password": {
                    "type": "string",
                    "maxLength": 1000,
                    "description": "the service account's password: write ${ENV_VAR} or ${file:path}, which the "
                    "CLI resolves, never the password itself",
                },
                "computeTarget": {"type": "string", "minLength": 1, "maxLength": 500},
                "desiredState": {"enum": list(DesiredState.values)},
            },
            ["job"],
        ),
        name_max=100,
    ),
}


def _refusing_nul(schema: Any) -> Any:
    """`schema` with every free text refusing a NUL character: no database column stores one (PostgreSQL
    refuses it), so the format says so instead of the server failing on a name it looks up."""
    if isinstance(schema, list):
        return [_refusing_nul(child) for child in schema]
    if not isinstance(schema, dict):
        return schema
    refused = {key: _refusing_nul(value) for key, value in schema.items()}
    if refused.get("type") == "string" and not {"pattern", "enum", "const"} & set(refused):
        refused["pattern"] = "^[^\\x00]*$"
    return refused


KIND_SCHEMAS = {kind: _refusing_nul(schema) for kind, schema in KIND_SCHEMAS.items()}


def json_schema() -> dict[str, Any]:
    """The whole format: one document, of any kind."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "StreamHub resources",
        "description": "One resource a team declares: kind, metadata (name, team, cluster, labels) and spec.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(Kind.values)}},
        "allOf": [
            {"if": {"properties": {"kind": {"const": kind}}}, "then": schema}
            for kind, schema in KIND_SCHEMAS.items()
        ],
    }


_VALIDATOR = Draft202012Validator(json_schema())

# The JSON Schema keywords a kind's schema may use: those OpenAPI 3.0's schema object has too, and those
# openapi_schema() rewrites (const, a list of types, a numeric exclusive bound).
_OPENAPI_KEYWORDS = {
    "type", "enum", "const", "required", "properties", "additionalProperties", "items", "minItems",
    "maxItems", "uniqueItems", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
    "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "anyOf",
    "oneOf", "allOf", "not", "description", "title", "default", "propertyNames",
}  # fmt: skip


_PROPERTY_NAMES_SAID = "No name contains a NUL character."


def to_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema (2020-12) written in OpenAPI 3.0's dialect, meaning the same; ValueError for a keyword
    that dialect cannot state."""
    unknown = set(schema) - _OPENAPI_KEYWORDS
    if unknown:
        # A keyword OpenAPI 3.0 lacks would make the API document promise more than the server accepts.
        raise ValueError(f"no OpenAPI 3.0 rendering for the JSON Schema keyword(s) {sorted(unknown)}")
    rendered: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "const" and isinstance(value, str):
            rendered.update(
                type="string", enum=[str(value)]
            )  # str(): a Kind is a str subclass YAML cannot write
        elif keyword == "const":
            rendered["enum"] = [value]
        elif keyword == "type" and isinstance(value, list):
            rendered["anyOf"] = [{"type": name} for name in value]
        elif keyword in ("exclusiveMinimum", "exclusiveMaximum"):
            rendered[keyword.replace("exclusiveM", "m")] = value
            rendered[keyword] = True
        elif keyword == "required" and not value:
            continue  # OpenAPI 3.0 wants a list of at least one name; none required says the same
        elif keyword == "propertyNames":
            # OpenAPI 3.0 cannot constrain an object's keys (3.1 can): said in words; read_documents()
            # refuses such a document with its path, as it refuses any other.
            rendered["description"] = _PROPERTY_NAMES_SAID
        elif keyword == "properties":
            rendered[keyword] = {name: to_openapi(child) for name, child in value.items()}
        elif keyword in ("additionalProperties", "items", "not") and isinstance(value, dict):
            rendered[keyword] = to_openapi(value)
        elif keyword in ("anyOf", "oneOf", "allOf"):
            rendered[keyword] = [to_openapi(child) for child in value]
        else:
            rendered[keyword] = value
    return rendered


def openapi_schemas() -> dict[str, dict[str, Any]]:
    """Each kind's document schema rendered for the API's OpenAPI 3.0 document, from the same definitions
    as json_schema(): what the API describes is what read_documents() accepts."""
    return {str(kind): to_openapi(schema) for kind, schema in KIND_SCHEMAS.items()}


@dataclass(frozen=True)
class Document:
    index: int
    kind: str
    name: str
    team: str | None
    cluster: str | None
    labels: Mapping[str, str] = field(default_factory=dict)
    spec: Mapping[str, Any] = field(default_factory=dict)


def _problems(index: int, raw: Any) -> list[dict[str, Any]]:
    return [
        {
            "document": index,
            "path": "/".join(str(part) for part in error.absolute_path),
            "message": f"a label's name {error.message}"
            if "propertyNames" in error.schema_path
            else error.message,
        }
        for error in sorted(_VALIDATOR.iter_errors(raw), key=lambda e: list(map(str, e.absolute_path)))
    ]


def read_documents(
    raw_documents: Sequence[Any], *, team: str | None = None, cluster: str | None = None
) -> list[Document]:
    """Checks every document against the schema (all problems at once, each with its document's position)
    and reads them. `team`/`cluster`, when given, place every document there (applying a team's export to
    another team or cluster); otherwise each document names its own. Well-formed documents that place a
    resource nowhere, or declare it twice, are the plan's to refuse (planning.py), next to its other changes."""
    problems = [problem for index, raw in enumerate(raw_documents) for problem in _problems(index, raw)]
    if problems:
        raise ServiceError(
            f"{len(problems)} problem(s) in the documents; the first: document {problems[0]['document']}"
            f" at '{problems[0]['path']}': {problems[0]['message']}",
            code="invalid_documents",
            details={"problems": problems},
        )
    return [
        Document(
            index=index,
            kind=raw["kind"],
            name=raw["metadata"]["name"],
            team=team or raw["metadata"].get("team"),
            cluster=cluster or raw["metadata"].get("cluster"),
            labels=dict(raw["metadata"].get("labels") or {}),
            spec=dict(raw["spec"]),
        )
        for index, raw in enumerate(raw_documents)
    ]


def config_value(value: object) -> str:
    """A topic config as Kafka spells it: YAML's true/false and numbers become Kafka's strings."""
    return str(value).lower() if isinstance(value, bool) else str(value)
