"""The declarative format: its JSON Schema (published for editors, kept in step with the server's) and how
documents are read, with every problem named by its document and path."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

from controlplane.core.errors import ServiceError
from controlplane.declarative.choices import Kind
from controlplane.declarative.documents import (
    KIND_SCHEMAS,
    config_value,
    json_schema,
    openapi_schemas,
    read_documents,
    to_openapi,
)

REPO = Path(__file__).resolve().parents[4]


def test_the_schema_file_for_editors_is_the_one_the_server_checks_with() -> None:
    published = json.loads((REPO / "cli" / "streamhub-resources.schema.json").read_text())
    assert published == json_schema(), (
        "cli/streamhub-resources.schema.json is stale: write json_schema() of "
        "controlplane/declarative/documents.py to it"
    )


def _topic(**metadata: object) -> dict:
    return {"kind": "Topic", "metadata": {"name": "pay.orders", **metadata}, "spec": {"partitions": 3}}


def test_documents_take_their_placement_from_the_request_when_it_gives_one() -> None:
    (own,) = read_documents([_topic(team="payments", cluster="dev")])
    assert (own.team, own.cluster, own.spec["partitions"]) == ("payments", "dev", 3)
    (moved,) = read_documents([_topic(team="payments", cluster="dev")], team="billing", cluster="prod")
    assert (moved.team, moved.cluster) == ("billing", "prod")


def test_every_problem_is_named_by_document_and_path() -> None:
    with pytest.raises(ServiceError) as raised:
        read_documents(
            [
                _topic(team="payments", cluster="dev"),
                {
                    "kind": "Topic",
                    "metadata": {"name": "x", "team": "t", "cluster": "c"},
                    "spec": {"partitions": 0},
                },
                {"kind": "Nope", "metadata": {"name": "y"}, "spec": {}},
                {"kind": "Topic", "metadata": {"name": "z"}, "spec": {"partitions": 1, "replicas": 3}},
            ]
        )
    assert raised.value.code == "invalid_documents"
    problems = {(p["document"], p["path"]) for p in raised.value.details["problems"]}
    assert problems == {(1, "spec/partitions"), (2, "kind"), (3, "spec")}


def test_the_api_describes_each_kind_exactly_as_the_format_does() -> None:
    """The OpenAPI 3.0 rendering (a draft-4 dialect: boolean exclusive bounds, no const nor type lists)
    accepts and refuses the same documents as the format's JSON Schema."""
    rendered = openapi_schemas()
    assert set(rendered) == set(Kind.values)
    documents = [
        _topic(team="payments", cluster="dev"),
        {
            "kind": "Topic",
            "metadata": {"name": "t"},
            "spec": {"partitions": 1, "configs": {"a": 1, "b": True}},
        },
        {"kind": "Topic", "metadata": {"name": "t"}, "spec": {"partitions": 1, "configs": {"a": None}}},
        {"kind": "Topic", "metadata": {"name": "t"}, "spec": {"partitions": 0}},
        {
            "kind": "Topic",
            "apiVersion": "streamhub.io/v2",
            "metadata": {"name": "t"},
            "spec": {"partitions": 1},
        },
        {"kind": "Quota", "metadata": {"name": "q"}, "spec": {"values": {"producer_byte_rate": 1}}},
        {"kind": "Quota", "metadata": {"name": "q"}, "spec": {"values": {"producer_byte_rate": 0}}},
        {"kind": "Quota", "metadata": {"name": "q"}, "spec": {"values": {}}},
        {"kind": "ServiceAccount", "metadata": {"name": "s", "cluster": "dev"}, "spec": {}},
        {"kind": "ServiceAccount", "metadata": {"name": "s", "labels": {"a": "x" * 64}}, "spec": {}},
        {"kind": "AccessGrant", "metadata": {"name": "g"}, "spec": {"serviceAccount": "s"}},
    ]
    for document in documents:
        by_format = Draft202012Validator(KIND_SCHEMAS[document["kind"]]).is_valid(document)
        by_api = Draft4Validator(rendered[document["kind"]]).is_valid(document)
        assert by_api == by_format, document
    assert [Draft4Validator(rendered[d["kind"]]).is_valid(d) for d in documents] == [
        True, True, False, False, False, True, False, False, False, False, False,
    ]  # fmt: skip


def test_a_keyword_the_api_document_cannot_state_is_refused_when_rendering() -> None:
    with pytest.raises(ValueError, match="prefixItems"):
        to_openapi({"type": "array", "prefixItems": [{"type": "string"}]})


def test_config_values_are_spelled_as_kafka_spells_them() -> None:
    assert [config_value(v) for v in (True, False, 86400000, 0.5, "compact")] == [
        "true",
        "false",
        "86400000",
        "0.5",
        "compact",
    ]


def test_a_label_name_with_a_nul_character_is_refused_with_its_path() -> None:
    """As a label's value is: PostgreSQL's jsonb stores no NUL, and the claim that records the labels is
    written after the change was made."""
    with pytest.raises(ServiceError) as raised:
        read_documents([_topic(team="payments", labels={"owner\x00": "ops"})])
    (problem,) = raised.value.details["problems"]
    assert (problem["document"], problem["path"]) == (0, "metadata/labels")
    assert problem["message"].startswith("a label's name 'owner\\x00'")
    (kept,) = read_documents([_topic(team="payments", labels={"owner": "ops\N{SNOWMAN}"})])
    assert kept.labels == {"owner": "ops\N{SNOWMAN}"}


def test_the_api_document_says_in_words_what_it_cannot_state_of_label_names() -> None:
    labels = openapi_schemas()["Topic"]["properties"]["metadata"]["properties"]["labels"]
    assert "propertyNames" not in labels
    assert "NUL" in labels["description"]
