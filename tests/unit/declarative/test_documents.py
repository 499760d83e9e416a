"""The declarative format: its JSON Schema (published for editors, kept in step with the server's) and how
documents are read, with every problem named by its document and path."""

import json
from pathlib import Path

import pytest

from controlplane.core.api.errors import ServiceError
from controlplane.declarative.documents import config_value, json_schema, read_documents

REPO = Path(__file__).resolve().parents[3]


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
                _topic(team="payments", cluster="dev"),
                {"kind": "Topic", "metadata": {"name": "z"}, "spec": {"partitions": 1, "replicas": 3}},
            ]
        )
    assert raised.value.get_codes() == "invalid_documents"
    problems = {(p["document"], p["path"]) for p in raised.value.details["problems"]}
    assert problems == {(1, "spec/partitions"), (2, "kind"), (4, "spec")}
    with pytest.raises(ServiceError) as twice:
        read_documents([_topic(team="payments", cluster="dev"), _topic(team="payments", cluster="dev")])
    assert twice.value.details["problems"] == [
        {
            "document": 1,
            "path": "metadata/name",
            "message": "Topic 'pay.orders' is declared twice (also document 0)",
        }
    ]
    with pytest.raises(ServiceError, match="no cluster given"):
        read_documents([_topic(team="payments")])


def test_config_values_are_spelled_as_kafka_spells_them() -> None:
    assert [config_value(v) for v in (True, False, 86400000, 0.5, "compact")] == [
        "true",
        "false",
        "86400000",
        "0.5",
        "compact",
    ]
