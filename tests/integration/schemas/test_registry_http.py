"""The registry's HTTP surface through Django's test client: formats, routing, listing, auth paths."""

import base64
import json

import pytest
from django.test import Client
from google.protobuf import descriptor_pb2

pytestmark = pytest.mark.integration

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class Http:
    def __init__(self, base: str, credentials: str | None) -> None:
        self.base = base
        self.client = Client()
        self.headers = {}
        if credentials is not None:
            self.headers["HTTP_AUTHORIZATION"] = "Basic " + base64.b64encode(credentials.encode()).decode()

    def get(self, path: str, **extra):
        return self.client.get(self.base + path, **self.headers, **extra)

    def post(self, path: str, body: object, **extra):
        return self.client.post(
            self.base + path, data=json.dumps(body), content_type=CONTENT_TYPE, **self.headers, **extra
        )

    def delete(self, path: str, **extra):
        return self.client.delete(self.base + path, **self.headers, **extra)


@pytest.fixture
def http(local_registry) -> Http:
    return Http(local_registry.url, local_registry.org_admin)


COMMON_PROTO = (
    'syntax = "proto3";\npackage acme.common;\nmessage Money { int64 cents = 1; string currency = 2; }\n'
)
ORDER_PROTO = (
    'syntax = "proto3";\npackage acme.orders;\nimport "acme/common.proto";\n'
    'import "google/protobuf/timestamp.proto";\n'
    "message Order { string id = 1; acme.common.Money total = 2; google.protobuf.Timestamp at = 3; }\n"
)


def test_protobuf_text_with_an_import_is_stored_as_text_and_served_serialized(http) -> None:
    assert (
        http.post(
            "/subjects/acme%2Fcommon.proto/versions", {"schema": COMMON_PROTO, "schemaType": "PROTOBUF"}
        ).status_code
        == 200
    )
    reference = {"name": "acme/common.proto", "subject": "acme/common.proto", "version": 1}
    response = http.post(
        "/subjects/payments.orders-value/versions",
        {"schema": ORDER_PROTO, "schemaType": "PROTOBUF", "references": [reference]},
    )
    assert response.status_code == 200, response.content
    schema_id = response.json()["id"]
    text = http.get(f"/schemas/ids/{schema_id}").json()
    assert text["schemaType"] == "PROTOBUF"
    assert "message Order" in text["schema"]
    assert text["references"] == [reference]
    serialized = http.get(f"/schemas/ids/{schema_id}", data={"format": "serialized"}).json()["schema"]
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert [message.name for message in file.message_type] == ["Order"]
    assert list(file.dependency) == ["acme/common.proto", "google/protobuf/timestamp.proto"]
    # The same schema sent as a descriptor is the same schema: same id.
    again = http.post(
        "/subjects/payments.orders-value/versions",
        {"schema": serialized, "schemaType": "PROTOBUF", "references": [reference]},
    )
    assert again.json()["id"] == schema_id


def test_an_invalid_protobuf_gets_42201_with_the_reason(http) -> None:
    response = http.post(
        "/subjects/payments.x-value/versions", {"schema": "message {", "schemaType": "PROTOBUF"}
    )
    assert response.status_code == 422
    assert response.json()["error_code"] == 42201
    assert "expected a name" in response.json()["message"]
    missing = http.post(
        "/subjects/payments.x-value/versions", {"schema": ORDER_PROTO, "schemaType": "PROTOBUF"}
    )
    assert missing.json()["error_code"] == 42201
    assert "acme/common.proto" in missing.json()["message"]


def _nested_avro_arrays(depth: int) -> str:
    return '{"type": "array", "items": ' * depth + '"long"' + "}" * depth


def _nested_json_schema(depth: int) -> str:
    schema: object = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return json.dumps(schema)


def _nested_proto_messages(depth: int) -> str:
    body = "int32 x = 1;"
    for level in range(depth):
        body = f"message M{level} {{ {body} }}"
    return f'syntax = "proto3";\n{body}\n'


@pytest.mark.parametrize(
    ("schema_type", "text"),
    [
        ("AVRO", _nested_avro_arrays(500)),
        ("AVRO", _nested_avro_arrays(5000)),
        ("JSON", _nested_json_schema(250)),
        ("PROTOBUF", _nested_proto_messages(500)),
    ],
    ids=["avro-500", "avro-5000", "json-250", "protobuf-500"],
)
def test_a_schema_nested_too_deeply_gets_42201_never_a_server_error(
    http, schema_type: str, text: str
) -> None:
    for path in ("/subjects/deep-value/versions", "/compatibility/subjects/deep-value/versions/latest"):
        response = http.post(path, {"schema": text, "schemaType": schema_type})

        assert response.status_code == 422, (path, response.content[:300])
        assert response.json()["error_code"] == 42201
        assert "levels deep" in response.json()["message"]


def test_a_schema_nested_a_realistic_depth_is_registered(http) -> None:
    for schema_type, text in (
        ("AVRO", _nested_avro_arrays(100)),
        ("JSON", _nested_json_schema(50)),
        ("PROTOBUF", _nested_proto_messages(40)),
    ):
        response = http.post(
            f"/subjects/{schema_type.lower()}-value/versions", {"schema": text, "schemaType": schema_type}
        )

        assert response.status_code == 200, (schema_type, response.content[:300])


def test_json_schema_references_resolve(http) -> None:
    address = {"type": "object", "properties": {"city": {"type": "string"}}}
    assert (
        http.post(
            "/subjects/payments.address/versions", {"schema": json.dumps(address), "schemaType": "JSON"}
        ).status_code
        == 200
    )
    customer = {"type": "object", "properties": {"home": {"$ref": "address.json"}}}
    reference = {"name": "address.json", "subject": "payments.address", "version": 1}
    response = http.post(
        "/subjects/payments.customers-value/versions",
        {"schema": json.dumps(customer), "schemaType": "JSON", "references": [reference]},
    )
    assert response.status_code == 200, response.content
    assert http.get("/subjects/payments.address/versions/1/referencedby").json() == [response.json()["id"]]


def test_verbose_compatibility_says_which_field_broke(http) -> None:
    old = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "string"}]}
    new = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}]}
    http.post("/subjects/payments.r-value/versions", {"schema": json.dumps(old)})
    response = http.post(
        "/compatibility/subjects/payments.r-value/versions/latest?verbose=true", {"schema": json.dumps(new)}
    )
    body = response.json()
    assert body["is_compatible"] is False
    assert any("TYPE_MISMATCH" in message and "/fields/0/type" in message for message in body["messages"])
    assert (
        "messages"
        not in http.post(
            "/compatibility/subjects/payments.r-value/versions", {"schema": json.dumps(new)}
        ).json()
    )


def test_listing_schemas_with_prefix_latest_only_and_max_id(http) -> None:
    for index in range(3):
        schema = {
            "type": "record",
            "name": "R",
            "fields": [{"name": f"f{n}", "type": "int", "default": 0} for n in range(index)],
        }
        http.post("/subjects/payments.a-value/versions", {"schema": json.dumps(schema)})
    http.post("/subjects/search.b-value/versions", {"schema": '"string"'})
    everything = http.get("/schemas").json()
    assert [(item["subject"], item["version"]) for item in everything] == [
        ("payments.a-value", 1),
        ("payments.a-value", 2),
        ("payments.a-value", 3),
        ("search.b-value", 1),
    ]
    latest = http.get("/schemas", data={"subjectPrefix": "payments.", "latestOnly": "true"}).json()
    assert [(item["subject"], item["version"]) for item in latest] == [("payments.a-value", 3)]
    assert http.get("/schemas", data={"offset": 1, "limit": 2}).json()[0]["version"] == 2
    assert http.get("/schemas/ids/1", data={"fetchMaxId": "true"}).json()["maxId"] == 4
    assert http.get("/schemas/ids/4/schema").content == b'"string"'
    assert http.get("/subjects", data={"subjectPrefix": "search."}).json() == ["search.b-value"]


def test_subjects_are_routed_on_the_raw_path_when_the_server_gives_it(http) -> None:
    # Decoded, "payments.a/versions/1" would read as version 1 of subject "payments.a".
    raw = "/subjects/payments.a%2Fversions%2F1/versions"
    response = http.post(raw, {"schema": '"string"'}, RAW_URI=http.base + raw)
    assert response.status_code == 200
    listed = http.get(
        "/subjects/payments.a%2Fversions%2F1/versions",
        RAW_URI=http.base + "/subjects/payments.a%2Fversions%2F1/versions",
    )
    assert listed.json() == [1]
    assert http.get("/subjects").json() == ["payments.a/versions/1"]


def test_normalized_registration_finds_the_same_schema_written_differently(http) -> None:
    first = {"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "x", "type": "int"}]}
    second = {"type": "record", "name": "n.R", "fields": [{"name": "x", "type": "int"}]}
    one = http.post(
        "/subjects/payments.n-value/versions?normalize=true", {"schema": json.dumps(first)}
    ).json()
    two = http.post(
        "/subjects/payments.n-value/versions?normalize=true", {"schema": json.dumps(second)}
    ).json()
    assert one["id"] == two["id"]


def test_a_console_session_reads_and_needs_csrf_to_write(local_registry) -> None:
    session = Client(enforce_csrf_checks=True)
    session.force_login(local_registry.org_admin_user)
    assert session.get(f"{local_registry.url}/subjects").status_code == 200
    refused = session.post(
        f"{local_registry.url}/subjects/payments.s-value/versions",
        data=json.dumps({"schema": '"int"'}),
        content_type=CONTENT_TYPE,
    )
    assert refused.status_code == 403


def test_an_unknown_cluster_is_not_found(local_registry) -> None:
    http = Http("/clusters/999999/schema-registry", local_registry.org_admin)
    assert http.get("/subjects").status_code == 404


def test_metadata_lookup_finds_the_latest_matching_version(http) -> None:
    body = {"schema": '"string"', "metadata": {"properties": {"owner": "payments"}}}
    http.post("/subjects/payments.m-value/versions", body)
    found = http.get("/subjects/payments.m-value/metadata", data={"key": "owner", "value": "payments"})
    assert found.status_code == 200
    assert found.json()["metadata"] == {"properties": {"owner": "payments"}}
    assert (
        http.get("/subjects/payments.m-value/metadata", data={"key": "owner", "value": "x"}).json()[
            "error_code"
        ]
        == 40403
    )


def test_changing_the_schema_type_of_a_subject_is_incompatible(http) -> None:
    http.post("/subjects/payments.t-value/versions", {"schema": '"string"'})
    response = http.post(
        "/subjects/payments.t-value/versions", {"schema": '{"type": "string"}', "schemaType": "JSON"}
    )
    assert response.status_code == 409


def test_registry_changes_are_audited(http, local_registry) -> None:
    from controlplane.audit.models import AuditEvent

    http.post("/subjects/payments.audit-value/versions", {"schema": '"string"'})
    http.delete("/subjects/payments.audit-value")
    http.get("/subjects")
    events = list(AuditEvent.objects.filter(resource_name="payments.audit-value").order_by("id"))
    assert [event.action for event in events] == ["schema.register", "schema_subject.delete"]
    assert events[0].after["result"]["version"] == 1
    assert events[0].actor_name == "olga"
    assert events[0].organization_id == local_registry.cluster.organization_id


def test_the_key_is_accepted_exactly_as_the_key_api_returns_it(local_registry) -> None:
    """`basic.auth.user.info` = `<key_id>:<secret>` where `secret` is the key API's field as returned (the
    whole `shk_…` key), or the whole key as the user name, or key id and the secret part alone."""
    key_id, secret_part = local_registry.org_admin.split(":", 1)
    whole_key = f"shk_{key_id}_{secret_part}"
    for credentials in (f"{key_id}:{whole_key}", f"{whole_key}:", f"{key_id}:{secret_part}"):
        assert Http(local_registry.url, credentials).get("/subjects").status_code == 200, credentials
    for credentials in (f"aaaaaaaaaaaa:{whole_key}", f"{key_id}:shk_{key_id}_wrong"):
        refused = Http(local_registry.url, credentials).get("/subjects")
        assert refused.status_code == 401, credentials
        assert refused["WWW-Authenticate"] == 'Basic realm="schema-registry"'
