"""The compatibility corpus (corpus/<format>.json): every rule in both directions, and transitively.

Each pair is checked under BACKWARD (the new schema reads the old's data), FORWARD (the old reads the new's),
FULL (both) and NONE; each transitive case against all earlier versions and against the latest only.
"""

import json
from pathlib import Path

import pytest

from controlplane.schemas.formats import find_incompatibilities, parse_schema
from controlplane.schemas.services import check_against

CORPUS = Path(__file__).parent / "corpus"
FORMATS = {"avro": "AVRO", "json": "JSON", "protobuf": "PROTOBUF"}


def _text(schema: object) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema)


def _load() -> list:
    cases = []
    for file_name, schema_type in FORMATS.items():
        corpus = json.loads((CORPUS / f"{file_name}.json").read_text())
        for pair in corpus["pairs"]:
            expected = {
                "BACKWARD": pair["backward"],
                "FORWARD": pair["forward"],
                "FULL": pair["backward"] and pair["forward"],
                "NONE": True,
            }
            # `error` is the rule the first failing direction breaks (backward, else forward).
            error_levels = {"FULL", "BACKWARD" if not pair["backward"] else "FORWARD"}
            for level, compatible in expected.items():
                error = pair.get("error") if level in error_levels else None
                case = (schema_type, level, [pair["old"]], pair["new"], compatible, error)
                cases.append(pytest.param(*case, id=f"{file_name}: {pair['rule']} ({level})"))
        for item in corpus["transitive"]:
            level = item["level"]
            case = (schema_type, level, item["versions"], item["candidate"], item["compatible"], None)
            cases.append(pytest.param(*case, id=f"{file_name}: {item['rule']} ({level})"))
            latest_level = level.removesuffix("_TRANSITIVE")
            case = (
                schema_type,
                latest_level,
                item["versions"],
                item["candidate"],
                item["latest_only_compatible"],
                None,
            )
            cases.append(pytest.param(*case, id=f"{file_name}: {item['rule']} ({latest_level})"))
    return cases


CASES = _load()


def test_the_corpus_has_at_least_forty_cases_per_format() -> None:
    for schema_type in FORMATS.values():
        assert sum(1 for case in CASES if case.values[0] == schema_type) >= 40


@pytest.mark.parametrize(("schema_type", "level", "previous", "candidate", "compatible", "error_type"), CASES)
def test_compatibility_corpus(
    schema_type: str, level: str, previous: list, candidate: object, compatible: bool, error_type: str | None
) -> None:
    earlier = [
        (number, parse_schema(schema_type, _text(schema))) for number, schema in enumerate(previous, start=1)
    ]
    new = parse_schema(schema_type, _text(candidate))
    messages = check_against(level, new, earlier)
    assert (not messages) == compatible, messages
    if error_type is not None and not compatible:
        assert any(f"errorType:'{error_type}'" in message for message in messages), messages


def test_messages_name_the_field_that_broke() -> None:
    old = parse_schema("AVRO", json.dumps({"type": "record", "name": "R", "fields": []}))
    new = parse_schema(
        "AVRO", json.dumps({"type": "record", "name": "R", "fields": [{"name": "email", "type": "string"}]})
    )
    [problem] = find_incompatibilities(new, old)
    assert problem.error_type == "READER_FIELD_MISSING_DEFAULT_VALUE"
    assert "'email'" in problem.description
    assert problem.path == "/fields/0"
