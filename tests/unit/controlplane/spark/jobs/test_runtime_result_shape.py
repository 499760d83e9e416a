"""The stored result of a job run: lists in the job's order, in the shape the console reads."""

from controlplane.spark.jobs.runtime import Chart, Result, Table


def test_a_result_is_stored_as_named_tables_charts_and_documents_in_order() -> None:
    result = Result(
        tables={"b": Table(["k", "n"], [["x", 1]]), "a": Table(["n"], [])},
        charts={"per_partition": Chart("bar", [0, 1], {"records": [3, 4], "late": [0, None]}, "partition")},
        documents={"json_schema": {"type": "object"}},
        files=["parquet/part-0.parquet"],
        metrics={"records_read": 7},
    )
    assert result.as_json() == {
        "tables": [
            {"name": "b", "columns": ["k", "n"], "rows": [["x", 1]]},
            {"name": "a", "columns": ["n"], "rows": []},
        ],
        "charts": [
            {
                "name": "per_partition",
                "kind": "bar",
                "x_label": "partition",
                "x": [0, 1],
                "series": [{"name": "records", "values": [3, 4]}, {"name": "late", "values": [0, None]}],
            }
        ],
        "documents": [{"name": "json_schema", "content": {"type": "object"}}],
        "files": ["parquet/part-0.parquet"],
        "metrics": {"records_read": 7},
    }
