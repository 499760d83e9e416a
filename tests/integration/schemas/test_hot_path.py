"""The lean WSGI path answers the registry's hot reads byte for byte as Django does (status, headers, body),
and hands every other request to Django untouched."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from django.core.wsgi import get_wsgi_application

from controlplane.schemas.api.hot_path import RegistryHotPath, header_middleware

pytestmark = pytest.mark.integration

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
PAYMENT = json.dumps(
    {
        "type": "record",
        "name": "Payment",
        "namespace": "payments",
        "fields": [{"name": "id", "type": "string"}],
    },
    separators=(",", ":"),  # the registry's canonical form, so answers echo it unchanged
)


def environ(
    method: str,
    path: str,
    *,
    credentials: str | None = None,
    body: bytes = b"",
    query: str = "",
    content_type: str = CONTENT_TYPE,
    host: str = "127.0.0.1:8000",
    raw_path: str | None = None,
    with_raw_uri: bool = True,
    **extra: str,
) -> dict[str, Any]:
    """What a WSGI server hands over: PATH_INFO decoded, and RAW_URI as sent when the server keeps it
    (gunicorn does; granian, the product's server, does not)."""
    raw = raw_path if raw_path is not None else path
    env = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": host,
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        # The same caller-given request id both ways: the answers are then byte for byte the same.
        "HTTP_X_REQUEST_ID": "hot-path-test-0001",
        **extra,
    }
    if with_raw_uri:
        env["RAW_URI"] = f"{raw}?{query}" if query else raw
    if credentials is not None:
        env["HTTP_AUTHORIZATION"] = "Basic " + base64.b64encode(credentials.encode()).decode()
    return env


def run(application: Any, env: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: object = None) -> None:
        started.update(status=status, headers=headers)

    chunks = application(env, start_response)
    try:
        body = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    return started["status"], started["headers"], body


@pytest.fixture
def django_app(transactional_db) -> Any:
    # Committed data: both handlers close connections left in a transaction, as they do in production.
    return get_wsgi_application()


@pytest.fixture
def hot(django_app) -> RegistryHotPath:
    application = RegistryHotPath(django_app)
    assert application.enabled
    return application


@pytest.fixture
def schema_id(local_registry, django_app) -> int:
    body = json.dumps({"schema": PAYMENT, "schemaType": "AVRO", "references": []}).encode()
    status, _, answer = run(
        django_app,
        environ(
            "POST",
            f"{local_registry.url}/subjects/payments.orders-value/versions",
            credentials=local_registry.team_a_developer,
            body=body,
        ),
    )
    assert status == "200 OK", answer
    return json.loads(answer)["id"]


def same_answer(hot: RegistryHotPath, django_app: Any, make_environ: Any) -> tuple[str, bytes]:
    """Answer one request on the hot path (it must take it), then the same request through Django."""
    env = make_environ()
    assert hot.answer(env) is not None, "the hot path handed the request to Django"
    from_hot = run(hot, make_environ())
    from_django = run(django_app, make_environ())
    assert from_hot == from_django
    return from_hot[0], from_hot[2]


def test_schema_by_id_answers_match_django_for_found_missing_forbidden_and_unauthorized(
    local_registry, hot, django_app, schema_id
) -> None:
    base = local_registry.url

    def by_id(credentials: str, schema: int, query: str = "") -> Any:
        return lambda: environ("GET", f"{base}/schemas/ids/{schema}", credentials=credentials, query=query)

    status, body = same_answer(hot, django_app, by_id(local_registry.team_a_viewer, schema_id))
    assert (status, json.loads(body)) == ("200 OK", {"schema": PAYMENT})
    status, body = same_answer(
        hot, django_app, by_id(local_registry.org_admin, schema_id, "fetchMaxId=true&subject=x")
    )
    assert json.loads(body)["maxId"] == schema_id
    status, body = same_answer(hot, django_app, by_id(local_registry.org_admin, schema_id + 5))
    assert (status, json.loads(body)["error_code"]) == ("404 Not Found", 40403)
    status, body = same_answer(hot, django_app, by_id(local_registry.team_b_developer, schema_id))
    assert (status, json.loads(body)["error_code"]) == ("403 Forbidden", 40301)
    key_id = local_registry.team_a_viewer.split(":")[0]
    status, body = same_answer(hot, django_app, by_id(f"{key_id}:wrong", schema_id))
    assert status == "401 Unauthorized"
    status, body = same_answer(
        hot,
        django_app,
        lambda: environ(
            "GET",
            f"/clusters/{local_registry.cluster.pk + 99}/schema-registry/schemas/ids/1",
            credentials=local_registry.org_admin,
        ),
    )
    assert json.loads(body) == {
        "error_code": 404,
        "message": f"Cluster {local_registry.cluster.pk + 99} not found",
    }


def test_lookups_match_django_for_found_missing_bad_bodies_and_encoded_subjects(
    local_registry, hot, django_app, schema_id
) -> None:
    base = local_registry.url
    registered = json.dumps({"schema": PAYMENT, "schemaType": "AVRO", "references": []}).encode()

    def lookup(subject: str, body: bytes, **options: Any) -> Any:
        return lambda: environ(
            "POST",
            f"{base}/subjects/{subject}",
            credentials=local_registry.team_a_developer,
            body=body,
            query="normalize=False&deleted=false",
            **options,
        )

    status, body = same_answer(hot, django_app, lookup("payments.orders-value", registered))
    assert json.loads(body) == {
        "subject": "payments.orders-value",
        "version": 1,
        "id": schema_id,
        "schema": PAYMENT,
    }
    status, body = same_answer(hot, django_app, lookup("payments.other-value", registered))
    assert json.loads(body)["error_code"] == 40401
    other = json.dumps({"schema": json.dumps("string")}).encode()
    status, body = same_answer(hot, django_app, lookup("payments.orders-value", other))
    assert json.loads(body)["error_code"] == 40403
    status, body = same_answer(hot, django_app, lookup("payments.orders-value", b"{not json"))
    assert status == "400 Bad Request"
    status, body = same_answer(
        hot, django_app, lookup("payments.orders-value", registered, content_type="text/plain")
    )
    assert status == "415 Unsupported Media Type"
    status, body = same_answer(hot, django_app, lookup("search.results-value", registered))
    assert json.loads(body)["error_code"] == 40301
    # A percent-encoded slash stays inside one subject segment when the raw path is known.
    status, body = same_answer(
        hot,
        django_app,
        lookup(
            "payments.a/b",
            registered,
            raw_path=f"{base}/subjects/payments.a%2Fb",
        ),
    )
    assert json.loads(body) == {"error_code": 40401, "message": "Subject 'payments.a/b' not found."}
    # Without the raw path (granian) the decoded path still names the same subject.
    status, body = same_answer(hot, django_app, lookup("payments.a/b", registered, with_raw_uri=False))
    assert json.loads(body) == {"error_code": 40401, "message": "Subject 'payments.a/b' not found."}


def test_other_routes_sessions_and_requests_middleware_refuse_go_to_django(
    local_registry, hot, schema_id, settings
) -> None:
    base = local_registry.url
    admin = local_registry.org_admin
    to_django = [
        environ("GET", f"{base}/schemas/ids/{schema_id}"),  # no API key: maybe a console session
        environ("GET", f"{base}/schemas/ids/{schema_id}/versions", credentials=admin),
        environ("GET", f"{base}/subjects", credentials=admin),
        environ("POST", f"{base}/subjects/payments.orders-value/versions", credentials=admin),
        environ("DELETE", f"{base}/subjects/payments.orders-value", credentials=admin),
        environ("GET", f"{base}/schemas/ids/{schema_id}", credentials=admin, host="evil.example.com"),
        environ("GET", "/api/v1/topics/", credentials=admin),
    ]
    assert [hot.answer(env) for env in to_django] == [None] * len(to_django)
    # HTTPS redirects are Django's to send.
    settings.SECURE_SSL_REDIRECT = True
    assert (
        RegistryHotPath(hot.django_app).answer(
            environ("GET", f"{base}/schemas/ids/{schema_id}", credentials=admin)
        )
        is None
    )


def test_an_unknown_middleware_switches_the_hot_path_off() -> None:
    assert header_middleware(["django.middleware.common.CommonMiddleware"]) is not None
    assert header_middleware(["django.middleware.common.CommonMiddleware", "acme.TimingMiddleware"]) is None
