"""The Confluent Schema Registry REST API, one registry per cluster under `/clusters/<id>/schema-registry/`.

Plain Django views rather than DRF: the wire format is Confluent's (its content types, its error bodies,
its paths with percent-encoded subjects), the routes carry no trailing slash, and the hot lookups must stay
cheap. Subjects are routed on the raw request path when the server provides it (RAW_URI or REQUEST_URI, as
gunicorn and uWSGI do), so `a%2Fb` is one subject segment; otherwise (granian, the product's server, hands
over only the decoded path) on the decoded path with the subject matched greedily.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from django.db import DatabaseError, transaction
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from controlplane.audit.choices import Result
from controlplane.audit.services import record_event
from controlplane.core.api.client_address import client_address
from controlplane.core.changes import Change
from controlplane.core.json_limits import loads_bounded
from controlplane.schemas import cache, services
from controlplane.schemas.access import RegistryAccess, UnknownCluster
from controlplane.schemas.api.auth import authenticate, registry_access
from controlplane.schemas.choices import SchemaType
from controlplane.schemas.models import SubjectVersion
from controlplane.schemas.services import RegistryError
from controlplane.tenancy.access import Actor

logger = logging.getLogger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPTED_BODY_TYPES = {
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
    "",
}
MAX_BODY_BYTES = 4 * 1024 * 1024
BASE_MARKER = "/schema-registry"


def respond(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(
        json.dumps(body, separators=(",", ":"), ensure_ascii=False), status=status, content_type=CONTENT_TYPE
    )


class EncodedJson(bytes):
    """A body already encoded, as the hot paths cache it."""


def encode(body: Any) -> EncodedJson:
    return EncodedJson(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())


def error(status: int, error_code: int, message: str) -> HttpResponse:
    return respond({"error_code": error_code, "message": message}, status=status)


@dataclass
class Call:
    request: HttpRequest
    cluster_id: int
    access: RegistryAccess
    params: dict[str, str]
    # The registry's generation as this request read it (see cache.py).
    generation: int

    def flag(self, *names: str) -> bool:
        """Query booleans, spelled `true`/`True`/`false`/`False`; the first name present wins."""
        for name in names:
            if name in self.params:
                return self.params[name].strip().lower() == "true"
        return False

    def integer(self, name: str, default: int) -> int:
        try:
            return int(self.params.get(name, default))
        except ValueError:
            return default

    def require_body_type(self) -> None:
        content_type = self.request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if content_type not in ACCEPTED_BODY_TYPES:
            raise RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: {content_type}")

    def body(self) -> Any:
        self.require_body_type()
        raw = self.request.body
        if not raw:
            return {}
        try:
            return loads_bounded(raw)
        except (ValueError, UnicodeDecodeError) as failure:
            raise RegistryError(400, 400, f"Unrecognized request body: {failure}") from failure

    def require_read(self, subject: str) -> None:
        if not self.access.can_read(subject):
            raise RegistryError(403, 40301, f"User is denied operation Read on Subject: {subject}")

    def require_write(self, subject: str) -> None:
        if not self.access.can_write(subject):
            raise RegistryError(403, 40301, f"User is denied operation Write on Subject: {subject}")

    def require_admin(self) -> None:
        if not self.access.can_administer():
            raise RegistryError(
                403, 40301, "User is denied operation Write on the registry's global settings"
            )

    def page(self, items: list) -> list:
        offset = max(self.integer("offset", 0), 0)
        limit = self.integer("limit", -1)
        items = items[offset:]
        return items if limit < 0 else items[:limit]


def version_body(row: SubjectVersion, output_format: str | None = None) -> dict[str, Any]:
    schema = row.schema
    body: dict[str, Any] = {"subject": row.subject, "version": row.version, "id": schema.schema_id}
    if schema.schema_type != SchemaType.AVRO:
        body["schemaType"] = schema.schema_type
    if schema.references:
        body["references"] = schema.references
    if schema.metadata:
        body["metadata"] = schema.metadata
    if schema.rule_set:
        body["ruleSet"] = schema.rule_set
    body["schema"] = services.render_schema_text(schema, output_format)
    return body


def _output_format(call: Call) -> str | None:
    return call.params.get("format") or None


# -- handlers: each takes the call and the path's named parts, and returns the JSON body


def schema_types(call: Call) -> Any:
    return [SchemaType.JSON, SchemaType.PROTOBUF, SchemaType.AVRO]


def contexts(call: Call) -> Any:
    return call.page(["."])


def associations(call: Call, topic: str) -> Any:
    # No association records exist: the serializers then fall back to the subject name strategy.
    return []


def list_all_schemas(call: Call) -> Any:
    rows = services.list_schemas(
        cluster_id=call.cluster_id,
        prefix=call.params.get("subjectPrefix", ""),
        deleted=call.flag("deleted"),
        latest_only=call.flag("latestOnly", "latest_only"),
    )
    readable = [version_body(row, _output_format(call)) for row in rows if call.access.can_read(row.subject)]
    return call.page(readable)


def _readable_schema(call: Call, schema_id: int):
    schema = services.get_schema(cluster_id=call.cluster_id, schema_id=schema_id)
    subjects = set(schema.subject_versions.values_list("subject", flat=True))
    if not any(call.access.can_read(subject) for subject in subjects):
        raise RegistryError(403, 40301, f"User is denied operation Read on Schema: {schema_id}")
    return schema


def schema_by_id(call: Call, schema_id: str) -> Any:
    key = ("id", schema_id, call.params.get("format"), call.flag("fetchMaxId"), call.params.get("subject"))

    def compute() -> tuple[EncodedJson, frozenset[str]]:
        schema = services.get_schema(cluster_id=call.cluster_id, schema_id=int(schema_id))
        body: dict[str, Any] = {}
        if schema.schema_type != SchemaType.AVRO:
            body["schemaType"] = schema.schema_type
        body["schema"] = services.render_schema_text(schema, _output_format(call))
        if schema.references:
            body["references"] = schema.references
        if schema.metadata:
            body["metadata"] = schema.metadata
        if schema.rule_set:
            body["ruleSet"] = schema.rule_set
        if call.flag("fetchMaxId"):
            body["maxId"] = services.max_schema_id(call.cluster_id)
        subjects = frozenset(schema.subject_versions.values_list("subject", flat=True))
        return encode(body), subjects

    body, subjects = cache.cached(call.cluster_id, call.generation, key, compute)
    if not any(call.access.can_read(subject) for subject in subjects):
        raise RegistryError(403, 40301, f"User is denied operation Read on Schema: {schema_id}")
    return body


def schema_text_by_id(call: Call, schema_id: str) -> HttpResponse:
    schema = _readable_schema(call, int(schema_id))
    text = services.render_schema_text(schema, _output_format(call))
    return HttpResponse(text, content_type=CONTENT_TYPE)


def subjects_of_schema(call: Call, schema_id: str) -> Any:
    _readable_schema(call, int(schema_id))
    rows = services.versions_of_schema(
        cluster_id=call.cluster_id,
        schema_id=int(schema_id),
        subject=call.params.get("subject"),
        deleted=call.flag("deleted"),
    )
    subjects = sorted({row.subject for row in rows if call.access.can_read(row.subject)})
    return call.page(subjects)


def versions_of_schema(call: Call, schema_id: str) -> Any:
    _readable_schema(call, int(schema_id))
    rows = services.versions_of_schema(
        cluster_id=call.cluster_id,
        schema_id=int(schema_id),
        subject=call.params.get("subject"),
        deleted=call.flag("deleted"),
    )
    pairs = [
        {"subject": row.subject, "version": row.version} for row in rows if call.access.can_read(row.subject)
    ]
    return call.page(pairs)


def list_subjects(call: Call) -> Any:
    subjects = services.list_subjects(
        cluster_id=call.cluster_id,
        prefix=call.params.get("subjectPrefix", ""),
        deleted=call.flag("deleted"),
        deleted_only=call.flag("deletedOnly", "deleted_only"),
    )
    return call.page([subject for subject in subjects if call.access.can_read(subject)])


def lookup(call: Call, subject: str) -> Any:
    call.require_read(subject)
    call.require_body_type()  # before the cache, which knows bodies but not their declared types
    raw = call.request.body
    normalize, deleted = call.flag("normalize"), call.flag("deleted")
    key = ("lookup", subject, hashlib.sha256(raw).hexdigest(), normalize, deleted, call.params.get("format"))

    def compute() -> EncodedJson:
        row = services.lookup_schema(
            cluster_id=call.cluster_id,
            subject=subject,
            schema_input=services.parse_schema_input(call.body()),
            normalize=normalize,
            deleted=deleted,
        )
        return encode(version_body(row, _output_format(call)))

    return cache.cached(call.cluster_id, call.generation, key, compute)


def delete_subject(call: Call, subject: str) -> Any:
    call.require_write(subject)
    return services.delete_subject(
        cluster_id=call.cluster_id, subject=subject, permanent=call.flag("permanent")
    )


def list_versions(call: Call, subject: str) -> Any:
    call.require_read(subject)
    versions = services.list_versions(
        cluster_id=call.cluster_id,
        subject=subject,
        deleted=call.flag("deleted"),
        deleted_only=call.flag("deletedOnly", "deleted_only"),
    )
    return call.page(versions)


def register(call: Call, subject: str) -> Any:
    call.require_write(subject)
    row = services.register_schema(
        cluster_id=call.cluster_id,
        subject=subject,
        schema_input=services.parse_schema_input(call.body()),
        normalize=call.flag("normalize"),
    )
    return version_body(row)


def get_version(call: Call, subject: str, version: str) -> Any:
    call.require_read(subject)
    row = services.get_version(
        cluster_id=call.cluster_id,
        subject=subject,
        version=services.parse_version(version),
        include_deleted=call.flag("deleted"),
    )
    return version_body(row, _output_format(call))


def get_version_text(call: Call, subject: str, version: str) -> HttpResponse:
    call.require_read(subject)
    row = services.get_version(
        cluster_id=call.cluster_id,
        subject=subject,
        version=services.parse_version(version),
        include_deleted=call.flag("deleted"),
    )
    return HttpResponse(
        services.render_schema_text(row.schema, _output_format(call)), content_type=CONTENT_TYPE
    )


def referenced_by(call: Call, subject: str, version: str) -> Any:
    call.require_read(subject)
    ids = services.referenced_by(
        cluster_id=call.cluster_id, subject=subject, version=services.parse_version(version)
    )
    return call.page(ids)


def delete_version(call: Call, subject: str, version: str) -> Any:
    call.require_write(subject)
    return services.delete_version(
        cluster_id=call.cluster_id,
        subject=subject,
        version=services.parse_version(version),
        permanent=call.flag("permanent"),
    )


def subject_metadata(call: Call, subject: str) -> Any:
    call.require_read(subject)
    wanted = {
        key: value for key, value in call.params.items() if key not in ("deleted", "format", "key", "value")
    }
    # Confluent's client passes metadata as repeated key=…&value=… pairs.
    keys, values = call.request.GET.getlist("key"), call.request.GET.getlist("value")
    wanted.update(zip(keys, values, strict=False))
    row = services.latest_with_metadata(
        cluster_id=call.cluster_id, subject=subject, wanted=wanted, include_deleted=call.flag("deleted")
    )
    return version_body(row, _output_format(call))


def compatibility(call: Call, subject: str, version: str | None = None) -> Any:
    call.require_read(subject)
    result = services.evaluate_compatibility(
        cluster_id=call.cluster_id,
        subject=subject,
        schema_input=services.parse_schema_input(call.body()),
        version=services.parse_version(version) if version is not None else None,
    )
    body: dict[str, Any] = {"is_compatible": result.is_compatible}
    if call.flag("verbose"):
        body["messages"] = result.messages
    return body


def global_config(call: Call) -> Any:
    method = call.request.method
    if method == "GET":
        return services.get_config(cluster_id=call.cluster_id)
    call.require_admin()
    if method == "PUT":
        return services.set_config(cluster_id=call.cluster_id, body=call.body())
    return services.delete_config(cluster_id=call.cluster_id)


def subject_config(call: Call, subject: str) -> Any:
    method = call.request.method
    if method == "GET":
        call.require_read(subject)
        return services.get_config(
            cluster_id=call.cluster_id, subject=subject, default_to_global=call.flag("defaultToGlobal")
        )
    call.require_write(subject)
    if method == "PUT":
        return services.set_config(cluster_id=call.cluster_id, subject=subject, body=call.body())
    return services.delete_config(cluster_id=call.cluster_id, subject=subject)


def global_mode(call: Call) -> Any:
    if call.request.method == "GET":
        return {"mode": services.get_mode(cluster_id=call.cluster_id)}
    call.require_admin()
    return {"mode": services.set_mode(cluster_id=call.cluster_id, body=call.body(), force=call.flag("force"))}


def subject_mode(call: Call, subject: str) -> Any:
    method = call.request.method
    if method == "GET":
        call.require_read(subject)
        mode = services.get_mode(
            cluster_id=call.cluster_id, subject=subject, default_to_global=call.flag("defaultToGlobal")
        )
        return {"mode": mode}
    call.require_write(subject)
    if method == "PUT":
        mode = services.set_mode(
            cluster_id=call.cluster_id, subject=subject, body=call.body(), force=call.flag("force")
        )
        return {"mode": mode}
    return {"mode": services.delete_mode(cluster_id=call.cluster_id, subject=subject)}


# -- audit: every change the registry accepts is written to the audit log

AUDITED = {
    ("POST", "register"): "schema.register",
    ("DELETE", "delete_subject"): "schema_subject.delete",
    ("DELETE", "delete_version"): "schema_version.delete",
    ("PUT", "global_config"): "schema_registry.config.update",
    ("DELETE", "global_config"): "schema_registry.config.delete",
    ("PUT", "subject_config"): "schema_subject.config.update",
    ("DELETE", "subject_config"): "schema_subject.config.delete",
    ("PUT", "global_mode"): "schema_registry.mode.update",
    ("PUT", "subject_mode"): "schema_subject.mode.update",
    ("DELETE", "subject_mode"): "schema_subject.mode.delete",
}


def _summary(result: Any) -> Any:
    """What the log keeps of an answer: ids and versions, not whole schema texts."""
    if isinstance(result, dict):
        return {key: value for key, value in result.items() if key != "schema"}
    return result


def audit(call: Call, actor: Actor, handler: Callable[..., Any], parts: dict[str, str], result: Any) -> None:
    action = AUDITED.get((call.request.method or "", handler.__name__))
    if action is None:
        return
    subject = parts.get("subject", "")
    change = Change(
        action=action,
        resource_type="schema_subject" if subject else "schema_registry",
        organization_id=call.access.organization_id,
        resource_id=str(call.cluster_id),
        resource_name=subject or f"cluster {call.cluster_id}",
        after={"result": _summary(result), **({"permanent": True} if call.flag("permanent") else {})},
    )
    record_event(
        actor=replace(actor, client_address=client_address(call.request)),
        change=change,
        result=Result.SUCCESS,
    )


# -- routing

SUBJECT = "{subject}"
Route = tuple[frozenset[str], str, Callable[..., Any]]
ROUTES: list[Route] = [
    (frozenset({"GET"}), r"schemas/types", schema_types),
    (frozenset({"GET"}), r"schemas", list_all_schemas),
    (frozenset({"GET"}), r"schemas/ids/(?P<schema_id>\d{1,10})", schema_by_id),
    (frozenset({"GET"}), r"schemas/ids/(?P<schema_id>\d{1,10})/schema", schema_text_by_id),
    (frozenset({"GET"}), r"schemas/ids/(?P<schema_id>\d{1,10})/subjects", subjects_of_schema),
    (frozenset({"GET"}), r"schemas/ids/(?P<schema_id>\d{1,10})/versions", versions_of_schema),
    (frozenset({"GET"}), r"contexts", contexts),
    (frozenset({"GET"}), r"associations/resources/-/(?P<topic>.+)", associations),
    (frozenset({"GET"}), r"subjects", list_subjects),
    (frozenset({"GET"}), rf"subjects/{SUBJECT}/versions/(?P<version>[^/]+)/schema", get_version_text),
    (frozenset({"GET"}), rf"subjects/{SUBJECT}/versions/(?P<version>[^/]+)/referencedby", referenced_by),
    (frozenset({"GET"}), rf"subjects/{SUBJECT}/versions/(?P<version>[^/]+)", get_version),
    (frozenset({"DELETE"}), rf"subjects/{SUBJECT}/versions/(?P<version>[^/]+)", delete_version),
    (frozenset({"GET"}), rf"subjects/{SUBJECT}/versions", list_versions),
    (frozenset({"POST"}), rf"subjects/{SUBJECT}/versions", register),
    (frozenset({"GET"}), rf"subjects/{SUBJECT}/metadata", subject_metadata),
    (frozenset({"POST"}), rf"subjects/{SUBJECT}", lookup),
    (frozenset({"DELETE"}), rf"subjects/{SUBJECT}", delete_subject),
    (frozenset({"POST"}), rf"compatibility/subjects/{SUBJECT}/versions/(?P<version>[^/]+)", compatibility),
    (frozenset({"POST"}), rf"compatibility/subjects/{SUBJECT}/versions", compatibility),
    (frozenset({"GET", "PUT", "DELETE"}), r"config", global_config),
    (frozenset({"GET", "PUT", "DELETE"}), rf"config/{SUBJECT}", subject_config),
    (frozenset({"GET", "PUT"}), r"mode", global_mode),
    (frozenset({"GET", "PUT", "DELETE"}), rf"mode/{SUBJECT}", subject_mode),
]


def _compile(subject_pattern: str) -> list[tuple[frozenset[str], re.Pattern[str], Callable[..., Any]]]:
    return [
        (methods, re.compile(pattern.replace(SUBJECT, f"(?P<subject>{subject_pattern})") + "/?"), handler)
        for methods, pattern, handler in ROUTES
    ]


# Raw paths keep %2F inside a subject segment; decoded paths can only be matched greedily.
RAW_ROUTES = _compile("[^/]+")
DECODED_ROUTES = _compile(".+")


def registry_path(meta: dict[str, Any], decoded_rest: str) -> tuple[str, bool]:
    """The path below the registry's base, raw (still percent-encoded) when the server tells us."""
    raw_uri = meta.get("RAW_URI") or meta.get("REQUEST_URI")
    if raw_uri:
        raw_path = raw_uri.split("?", 1)[0]
        marker = raw_path.find(BASE_MARKER)
        if marker >= 0:
            return raw_path[marker + len(BASE_MARKER) :].lstrip("/"), True
    return decoded_rest.lstrip("/"), False


Routed = tuple[Callable[..., Any], dict[str, str]]


def route(method: str, path: str, raw: bool) -> Routed:
    allowed = False
    for methods, pattern, handler in RAW_ROUTES if raw else DECODED_ROUTES:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if method not in methods:
            allowed = True
            continue
        parts = {name: value for name, value in match.groupdict().items() if value is not None}
        if raw:
            parts = {name: unquote(value) for name, value in parts.items()}
        return handler, parts
    if allowed:
        raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
    raise RegistryError(404, 404, "HTTP 404 Not Found")


_csrf = CsrfViewMiddleware(lambda request: HttpResponse())


@csrf_exempt
def registry(request: HttpRequest, cluster_id: str, rest: str = "") -> HttpResponse:
    path, raw = registry_path(request.META, rest)
    try:
        routed: Routed | RegistryError = route(request.method or "GET", path, raw)
    except RegistryError as failure:
        routed = failure  # answered after authentication, like every other request
    return serve(request, int(cluster_id), routed)


def serve(request: HttpRequest, cluster_id: int, routed: Routed | RegistryError) -> HttpResponse:
    """Answer a routed registry request: size limit, authentication, CSRF for sessions, the handler."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_BODY_BYTES:
        return error(413, 413, f"Request body is larger than {MAX_BODY_BYTES} bytes")
    caller = authenticate(request, cluster_id)
    if caller is None:
        response = error(401, 401, "Unauthorized")
        response["WWW-Authenticate"] = 'Basic realm="schema-registry"'
        return response
    actor = caller.actor
    if caller.by_session and request.method not in ("GET", "HEAD", "OPTIONS"):
        # Console sessions are cookie-based: their writes need the CSRF token like any other form.
        refused = _csrf.process_view(request, None, (), {})
        if refused is not None:
            return error(403, 403, "CSRF verification failed")
    try:
        if isinstance(routed, RegistryError):
            raise routed
        handler, parts = routed
        call = Call(
            request=request,
            cluster_id=cluster_id,
            access=registry_access(actor, cluster_id),
            params=request.GET.dict(),
            generation=caller.stamp.generation,
        )
        if (request.method, handler.__name__) in AUDITED:
            with transaction.atomic():  # the change and its audit event land together
                result = handler(call, **parts)
                audit(call, actor, handler, parts, result)
        else:
            result = handler(call, **parts)
    except RegistryError as failure:
        return error(failure.status, failure.error_code, failure.message)
    except UnknownCluster:
        return error(404, 404, f"Cluster {cluster_id} not found")
    except DatabaseError:
        logger.exception("schema registry store error")
        return error(500, 50001, "Error in the backend data store")
    if isinstance(result, HttpResponse):
        return result
    if isinstance(result, EncodedJson):
        return HttpResponse(result, content_type=CONTENT_TYPE)
    return respond(result)
