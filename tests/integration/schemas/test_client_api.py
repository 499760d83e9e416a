"""confluent-kafka's SchemaRegistryClient against our registry: the calls and the errors it relies on."""

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference
from confluent_kafka.schema_registry.error import SchemaRegistryError

pytestmark = pytest.mark.integration

ORDER_V1 = json.dumps(
    {"type": "record", "name": "Order", "namespace": "com.acme", "fields": [{"name": "id", "type": "string"}]}
)
ORDER_V2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "com.acme",
        "fields": [{"name": "id", "type": "string"}, {"name": "qty", "type": "int", "default": 1}],
    }
)
ORDER_BREAKING = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "com.acme",
        "fields": [{"name": "id", "type": "string"}, {"name": "email", "type": "string"}],
    }
)


def error_of(call) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as raised:
        call()
    return raised.value


def test_it_registers_looks_up_and_versions_a_subject(registry) -> None:
    client = registry.client(registry.team_a_developer)
    first = client.register_schema("payments.orders-value", Schema(ORDER_V1, "AVRO"))
    again = client.register_schema("payments.orders-value", Schema(ORDER_V1, "AVRO"))
    second = client.register_schema("payments.orders-value", Schema(ORDER_V2, "AVRO"))
    assert first == again
    assert second == first + 1
    assert client.get_subjects() == ["payments.orders-value"]
    assert client.get_versions("payments.orders-value") == [1, 2]
    latest = client.get_latest_version("payments.orders-value")
    assert (latest.version, latest.schema_id) == (2, second)
    assert json.loads(latest.schema.schema_str)["fields"][1]["name"] == "qty"
    found = registry.client(registry.team_a_developer).lookup_schema(
        "payments.orders-value", Schema(ORDER_V1, "AVRO")
    )
    assert (found.version, found.schema_id) == (1, first)
    assert registry.client(registry.team_a_developer).get_schema(first).schema_type == "AVRO"
    assert client.get_version("payments.orders-value", 1).schema_id == first
    assert set(client.get_schema_types()) == {"AVRO", "JSON", "PROTOBUF"}


def test_identical_schemas_share_one_id_across_subjects(registry) -> None:
    client = registry.client(registry.org_admin)
    left = client.register_schema("payments.a-value", Schema(ORDER_V1, "AVRO"))
    right = client.register_schema("search.b-value", Schema(ORDER_V1, "AVRO"))
    assert left == right
    assert sorted(client.get_subjects_by_schema_id(left)) == ["payments.a-value", "search.b-value"]
    pairs = sorted((item.subject, item.version) for item in client.get_schema_versions(left))
    assert pairs == [("payments.a-value", 1), ("search.b-value", 1)]


def test_it_answers_the_errors_the_client_expects(registry) -> None:
    client = registry.client(registry.team_a_developer)
    assert error_of(lambda: client.get_versions("payments.none-value")).error_code == 40401
    assert error_of(lambda: client.get_schema(9999)).error_code == 40403
    client.register_schema("payments.orders-value", Schema(ORDER_V1, "AVRO"))
    assert error_of(lambda: client.get_version("payments.orders-value", 7)).error_code == 40402
    assert error_of(lambda: client.get_version("payments.orders-value", 0)).error_code == 42202
    invalid = error_of(
        lambda: client.register_schema("payments.orders-value", Schema('{"type": "nope"}', "AVRO"))
    )
    assert (invalid.http_status_code, invalid.error_code) == (422, 42201)
    assert "nope" in invalid.error_message
    conflict = error_of(
        lambda: client.register_schema("payments.orders-value", Schema(ORDER_BREAKING, "AVRO"))
    )
    assert (conflict.http_status_code, conflict.error_code) == (409, 409)
    assert "email" in conflict.error_message
    unknown = error_of(lambda: client.lookup_schema("payments.orders-value", Schema(ORDER_V2, "AVRO")))
    assert unknown.error_code == 40403


def test_soft_then_permanent_deletes_behave_like_confluent(registry) -> None:
    client = registry.client(registry.team_a_developer)
    client.register_schema("payments.orders-value", Schema(ORDER_V1, "AVRO"))
    client.register_schema("payments.orders-value", Schema(ORDER_V2, "AVRO"))
    assert (
        error_of(lambda: client.delete_version("payments.orders-value", 2, permanent=True)).error_code
        == 40407
    )
    assert client.delete_version("payments.orders-value", 2) == 2
    assert error_of(lambda: client.delete_version("payments.orders-value", 2)).error_code == 40406
    assert client.get_versions("payments.orders-value") == [1]
    assert client.get_versions("payments.orders-value", deleted=True) == [1, 2]
    # A new version after a soft delete takes the next number, like Confluent.
    assert (
        client.register_schema_full_response("payments.orders-value", Schema(ORDER_V2, "AVRO")).version == 3
    )
    assert (
        error_of(lambda: client.delete_subject("payments.orders-value", permanent=True)).error_code == 40405
    )
    assert client.delete_subject("payments.orders-value") == [1, 3]
    assert error_of(lambda: client.delete_subject("payments.orders-value")).error_code == 40404
    assert client.get_subjects() == []
    assert client.get_subjects(deleted=True) == ["payments.orders-value"]
    assert client.delete_subject("payments.orders-value", permanent=True) == [1, 2, 3]
    assert error_of(lambda: client.get_versions("payments.orders-value")).error_code == 40401


def test_config_mode_and_compatibility_calls(registry) -> None:
    admin = registry.client(registry.org_admin)
    assert admin.get_compatibility() == "BACKWARD"
    assert admin.set_compatibility(level="FULL") == {"compatibility": "FULL"}
    assert admin.get_compatibility() == "FULL"
    assert error_of(lambda: admin.get_compatibility("payments.orders-value")).error_code == 40408
    assert admin.set_compatibility("payments.orders-value", "NONE") == {"compatibility": "NONE"}
    assert admin.get_config("payments.orders-value").compatibility_level == "NONE"
    assert error_of(lambda: admin.set_compatibility("payments.orders-value", "SIDEWAYS")).error_code == 42203
    admin.register_schema("payments.orders-value", Schema(ORDER_V1, "AVRO"))
    assert admin.register_schema("payments.orders-value", Schema(ORDER_BREAKING, "AVRO")) > 0
    admin.delete_config("payments.orders-value")
    assert admin.test_compatibility("payments.orders-value", Schema(ORDER_V2, "AVRO")) is False  # FULL vs v2
    assert (
        admin.test_compatibility("payments.orders-value", Schema(ORDER_BREAKING, "AVRO"), version=2) is True
    )

    assert admin.get_global_mode() == "READWRITE"
    assert error_of(lambda: admin.get_mode("payments.orders-value")).error_code == 40409
    assert admin.update_mode("payments.orders-value", "READONLY") == "READONLY"
    refused = error_of(lambda: admin.register_schema("payments.orders-value", Schema(ORDER_V2, "AVRO")))
    assert refused.error_code == 42205
    assert error_of(lambda: admin.update_mode("payments.orders-value", "SOMETIMES")).error_code == 42204
    assert admin.delete_mode("payments.orders-value") == "READONLY"
    assert admin.get_contexts() == ["."]


def test_import_mode_keeps_explicit_ids(registry) -> None:
    admin = registry.client(registry.org_admin)
    assert admin.update_global_mode("IMPORT") == "IMPORT"
    import httpx2 as httpx

    response = httpx.post(
        f"{registry.url}/subjects/payments.imported-value/versions",
        json={"schema": ORDER_V1, "id": 42, "version": 7},
        auth=tuple(registry.org_admin.split(":", 1)),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["id"] == 42
    assert admin.get_version("payments.imported-value", 7).schema_id == 42
    admin.update_global_mode("READWRITE")
    assert admin.register_schema("payments.imported-value", Schema(ORDER_V2, "AVRO")) == 43


def test_references_and_referenced_by(registry) -> None:
    client = registry.client(registry.team_a_developer)
    money = json.dumps(
        {
            "type": "record",
            "name": "Money",
            "namespace": "com.acme.payments",
            "fields": [{"name": "cents", "type": "long"}],
        }
    )
    client.register_schema("com.acme.payments.Money", Schema(money, "AVRO"))
    invoice = json.dumps(
        {
            "type": "record",
            "name": "Invoice",
            "namespace": "com.acme",
            "fields": [{"name": "total", "type": "com.acme.payments.Money"}],
        }
    )
    reference = SchemaReference("com.acme.payments.Money", "com.acme.payments.Money", 1)
    invoice_id = client.register_schema("payments.invoices-value", Schema(invoice, "AVRO", [reference]))
    assert client.get_referenced_by("com.acme.payments.Money", 1) == [invoice_id]
    assert error_of(lambda: client.delete_subject("com.acme.payments.Money")).error_code == 42206
    missing = SchemaReference("com.acme.payments.Money", "com.acme.payments.Money", 9)
    assert (
        error_of(
            lambda: client.register_schema("payments.x-value", Schema(invoice, "AVRO", [missing]))
        ).error_code
        == 42201
    )
    without = error_of(lambda: client.register_schema("payments.y-value", Schema(invoice, "AVRO")))
    assert without.error_code == 42201


def test_tenants_keep_to_their_own_subjects(registry) -> None:
    team_b = registry.client(registry.team_b_developer)
    registry.client(registry.team_a_developer).register_schema(
        "payments.orders-value", Schema(ORDER_V1, "AVRO")
    )
    denied = error_of(lambda: team_b.register_schema("payments.orders-value", Schema(ORDER_V2, "AVRO")))
    assert (denied.http_status_code, denied.error_code) == (403, 40301)
    assert error_of(lambda: team_b.delete_subject("payments.orders-value")).http_status_code == 403
    assert team_b.get_subjects() == []
    assert team_b.register_schema("search.queries-value", Schema(ORDER_V1, "AVRO")) > 0
    viewer = registry.client(registry.team_a_viewer)
    assert viewer.get_versions("payments.orders-value") == [1]
    assert (
        error_of(lambda: viewer.register_schema("payments.orders-value", Schema(ORDER_V2, "AVRO"))).error_code
        == 40301
    )
    assert error_of(lambda: registry.client("nokey:nosecret").get_subjects()).http_status_code == 401
    assert error_of(lambda: registry.client().get_subjects()).http_status_code == 401
    assert (
        error_of(
            lambda: registry.client(registry.team_a_developer).set_compatibility(level="NONE")
        ).http_status_code
        == 403
    )


def test_subjects_with_a_slash_are_routed_on_the_raw_path(registry) -> None:
    client = registry.client(registry.org_admin)
    client.register_schema("payments.a/b-value", Schema(ORDER_V1, "AVRO"))
    assert client.get_versions("payments.a/b-value") == [1]
    assert client.get_latest_version("payments.a/b-value").subject == "payments.a/b-value"


def test_the_wire_details_raw_http_clients_see(registry) -> None:
    import httpx2 as httpx

    auth = tuple(registry.team_a_developer.split(":", 1))
    associations = httpx.get(
        f"{registry.url}/associations/resources/-/payments.orders",
        params={"resourceType": "topic", "associationType": "value"},
        auth=auth,
    )
    assert (associations.status_code, associations.json()) == (200, [])
    assert associations.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    not_json = httpx.post(
        f"{registry.url}/subjects/payments.x-value/versions",
        content=b"{not json",
        auth=auth,
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    assert not_json.status_code == 400
    assert not_json.json()["error_code"] == 400
    huge = httpx.post(
        f"{registry.url}/subjects/payments.x-value/versions",
        content=b" " * (5 * 1024 * 1024),
        auth=auth,
        headers={"Content-Type": "application/json"},
    )
    assert huge.status_code == 413
    wrong_method = httpx.put(f"{registry.url}/schemas/types", auth=auth)
    assert (wrong_method.status_code, wrong_method.json()["error_code"]) == (405, 405)
    deleted_only = httpx.get(f"{registry.url}/subjects", params={"deleted_only": "True"}, auth=auth)
    assert deleted_only.json() == []
