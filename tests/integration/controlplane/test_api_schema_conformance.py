"""Answers match the published OpenAPI schema field by field (schemathesis' response_schema_conformance), for
shapes the generated requests rarely reach: a key that was never rotated (`rotated_from` is null)."""

from __future__ import annotations

import jsonschema
import pytest
import schemathesis
from schemathesis.checks import response_schema_conformance

from console.wsgi import application
from tests.fixtures.servers import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

schema = schemathesis.openapi.from_path(REPO_ROOT / "frontend" / "openapi.yaml")


def test_a_key_never_rotated_matches_the_published_schema(world, in_process) -> None:
    headers = {"Authorization": f"Bearer {world.org_admin.token}"}
    for path, parameters in (
        ("/api/v1/api-keys/", {}),
        ("/api/v1/api-keys/{key_id}/", {"key_id": world.org_admin.api_key.key_id}),
    ):
        case = schema[path]["GET"].Case(path_parameters=parameters)
        response = case.call(app=application, headers=headers)

        assert response.status_code == 200
        case.validate_response(response, checks=[response_schema_conformance])


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/alerts/",
        "/api/v1/audit-events/",
        "/api/v1/people/",
        "/api/v1/api-keys/",
        "/api/v1/lag/groups/",
    ],
)
def test_an_id_filter_beyond_a_database_integer_is_a_400_not_an_overflow(world, path: str) -> None:
    client = world.org_admin.client()

    for name in ("team", "organization"):
        response = client.get(path, {name: "-34570309557197342648154718208"})

        assert response.status_code in (200, 400), (path, name, response.status_code)


def test_an_unknown_api_path_answers_in_the_error_shape(world) -> None:
    client = world.org_admin.client()

    for path in ("/api/v1/no-such-thing/", "/api/v1/topics/1/no-such-action/", "/api/v2/"):
        response = client.get(path)

        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "not_found"


def test_an_id_in_a_body_that_names_nothing_visible_is_a_404_naming_the_field(world) -> None:
    client = world.org_admin.client()
    body = {"team": world.team_a.id, "name": "payments.orders", "partitions": 1}

    response = client.post("/api/v1/topics/", {**body, "cluster": 987654}, format="json")
    other_team = world.team_b_admin.client().post(
        "/api/v1/service-accounts/", {"team": world.team_a.id, "name": "not-mine"}, format="json"
    )

    assert response.status_code == 404, response.json()
    assert list(response.json()["error"]["details"]) == ["cluster"]
    assert other_team.status_code == 404, other_team.json()
    assert "team" in other_team.json()["error"]["details"]


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ({"clustre": "1"}, "clustre"),  # misspelled: never the whole list
        ({"cluster": ""}, "cluster"),  # a typed filter may not be empty
        ({"cluster": ["1", "2"]}, "cluster"),  # nor given twice
        ({"cluster": "1.5"}, "cluster"),
        ({"managed": "yes"}, "managed"),
        ({"limit": "0"}, "limit"),
        ({"offset": "-1"}, "offset"),
    ],
)
def test_a_query_the_operation_does_not_document_is_refused(world, query: dict, refused: str) -> None:
    response = world.org_admin.client().get("/api/v1/topics/", query)

    assert response.status_code == 400, response.json()
    assert refused in response.json()["error"]["details"]


@pytest.mark.parametrize(
    ("path", "filter_name"),
    [("/api/v1/service-accounts/", "team"), ("/api/v1/scram-credentials/", "cluster")],
)
def test_a_filter_by_an_id_nobody_can_see_lists_nothing(world, path: str, filter_name: str) -> None:
    response = world.team_a_viewer.client().get(path, {filter_name: world.team_b.id + 1000})

    assert response.status_code == 200, response.json()
    assert response.json()["count"] == 0


def test_json_values_are_not_converted_into_another_type(world) -> None:
    client = world.org_admin.client()
    membership = client.get("/api/v1/org-memberships/").json()["results"][0]

    response = client.patch(
        f"/api/v1/org-memberships/{membership['id']}/", {"is_org_admin": 0}, format="json"
    )

    assert response.status_code == 400, response.json()
    assert response.json()["error"]["details"] == {"is_org_admin": ["Expected a boolean."]}


def test_a_patch_changes_only_what_it_names(world) -> None:
    client = world.org_admin.client()
    person = client.get("/api/v1/people/", {"search": "vera"}).json()["results"][0]

    response = client.patch(f"/api/v1/people/{person['id']}/", {}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["email"] == person["email"]


@pytest.mark.parametrize(
    ("path", "name", "value"),
    [
        ("/api/v1/alerts/", "rule", 2**63),
        ("/api/v1/operations/", "team", -(2**63) - 1),
        ("/api/v1/scram-credentials/", "cluster", 2**63),
        ("/api/v1/organizations/", "slug", "a\x00b"),
        ("/api/v1/topics/", "search", "\x00"),
    ],
)
def test_a_query_value_the_server_refuses_is_one_the_published_schema_refuses(
    world, path: str, name: str, value: object
) -> None:
    # Found by schemathesis' positive_data_acceptance: an id beyond bigint and a NUL in a text filter were
    # valid by the document and refused with 400.
    (parameter,) = [p for p in schema.raw_schema["paths"][path]["get"]["parameters"] if p["name"] == name]

    assert not jsonschema.Draft4Validator(parameter["schema"]).is_valid(value)
    response = world.org_admin.client().get(path, {name: value})
    assert response.status_code == 400, response.json()
    assert list(response.json()["error"]["details"]) == [name]


@pytest.mark.parametrize(("path", "name"), [("/api/v1/topics/", "name"), ("/api/v1/alert-channels/", "url")])
def test_a_body_text_with_a_nul_is_refused_by_the_published_schema_as_by_the_server(
    world, path: str, name: str
) -> None:
    # Found by schemathesis' positive_data_acceptance: DRF's text fields refuse a NUL character with 400.
    reference = schema.raw_schema["paths"][path]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]
    component = schema.raw_schema["components"]["schemas"][reference["$ref"].rsplit("/", 1)[1]]

    assert not jsonschema.Draft4Validator(component["properties"][name]).is_valid("a\x00b")
    assert jsonschema.Draft4Validator(component["properties"][name]).is_valid("ab")
    response = world.team_a_admin.client().post(path, {name: "a\x00b"}, format="json")
    assert response.status_code == 400, response.json()
    assert "Null characters are not allowed." in response.json()["error"]["details"][name]
