"""The helpers of the JSON schema inference job (pure Python; the job runs them in executors)."""

from controlplane.spark.jobs.json_schema_inference import (
    PARSE_ERROR,
    suggest_avro,
    suggest_json_schema,
    value_fields,
)


def test_it_lists_nested_fields_with_their_types_and_counts_parse_errors():
    pairs = dict(value_fields(b'{"a": 1, "b": {"c": "x", "d": null}, "e": [1]}', 5))
    assert set(pairs) == {
        ("a", "integer"),
        ("b", "object"),
        ("b.c", "string"),
        ("b.d", "null"),
        ("e", "array"),
    }
    assert value_fields(b"{oops", 5) == [((PARSE_ERROR, "error"), 1)]
    assert value_fields(b"3", 5) == [(("$", "integer"), 1)]


def test_suggested_schemas_mark_optional_fields_and_widen_conflicts():
    fields = {
        "id": {"integer": 3, "string": 1},
        "name": {"string": 2},
        "meta": {"object": 4},
        "meta.v": {"number": 4},
    }
    schema = suggest_json_schema(fields, documents=4)
    assert schema["required"] == ["id", "meta"]
    assert schema["properties"]["id"]["type"] == ["integer", "string"]
    assert schema["properties"]["meta"]["properties"]["v"]["type"] == "number"
    avro = {f["name"]: f for f in suggest_avro(fields, documents=4)["fields"]}
    assert avro["id"]["type"] == "string"
    assert avro["name"] == {"name": "name", "type": ["null", "string"], "default": None}
    assert avro["meta"]["type"]["fields"] == [{"name": "v", "type": "double"}]
