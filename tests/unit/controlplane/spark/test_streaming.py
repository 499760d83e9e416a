"""The streaming jobs' helpers without Spark or a broker: progress, checkpoint offsets, sink state, headers."""

import json
from pathlib import Path

import pyarrow as pa
import pytest

from controlplane.spark.jobs import stream_topic_sql
from controlplane.spark.jobs.runtime import parameters_from_json
from controlplane.spark.streaming import (
    SEQUENCE_HEADER,
    SinkState,
    StreamSource,
    batch_end_offsets,
    committed_offsets,
    progress_summary,
    read_progress,
    trigger_interval,
    with_sequence_headers,
    write_progress,
)

PROGRESS = {
    "id": "q",
    "batchId": 12,
    "timestamp": "2026-01-05T10:00:00.000Z",
    "numInputRows": 300,
    "inputRowsPerSecond": 150.12345,
    "processedRowsPerSecond": 600.0,
    "durationMs": {"addBatch": 400, "triggerExecution": 500},
    "sources": [{"startOffset": {"t": {"0": 0}}, "endOffset": '{"t": {"0": 300}}'}],
}


def test_the_progress_summary_keeps_rates_the_batch_and_its_duration(tmp_path: Path) -> None:
    assert progress_summary(PROGRESS) == {
        "batch_id": 12,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "num_input_rows": 300,
        "input_rows_per_second": 150.123,
        "processed_rows_per_second": 600.0,
        "batch_duration_ms": 500,
        "end_offsets": {"t": {"0": 300}},
    }
    assert progress_summary({"batchId": 0})["end_offsets"] is None  # no source reported yet

    class Reported(dict):  # PySpark's StreamingQueryProgress: a dict with a `json` property
        json = json.dumps(PROGRESS)

    write_progress(tmp_path, Reported())
    assert read_progress(tmp_path)["batch_id"] == 12
    assert "sink" not in read_progress(tmp_path)
    write_progress(tmp_path, Reported(), {"mode": "transactional", "last_committed_batch": 12})
    assert read_progress(tmp_path)["sink"] == {"mode": "transactional", "last_committed_batch": 12}
    assert read_progress(tmp_path / "missing") is None


def _checkpoint(root: Path, commits: list[int], offsets: dict[int, dict]) -> Path:
    (root / "commits").mkdir(parents=True)
    (root / "offsets").mkdir()
    for batch in commits:
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    for batch, positions in offsets.items():
        (root / "offsets" / str(batch)).write_text('v1\n{"batchWatermarkMs":0}\n' + json.dumps(positions))
    return root


def test_committed_offsets_are_the_last_committed_batchs_end(tmp_path: Path) -> None:
    assert committed_offsets(tmp_path / "none") is None
    # Batch 3 is planned (offsets written) but not committed: it does not count.
    root = _checkpoint(
        tmp_path / "spark",
        commits=[0, 1, 2],
        offsets={1: {"t": {"0": 5}}, 2: {"t": {"0": 9, "1": 4}}, 3: {"t": {"0": 20, "1": 20}}},
    )
    assert committed_offsets(root) == (2, {("t", 0): 9, ("t", 1): 4})
    # The topic sink's marker: a batch's end offsets as soon as Spark planned it.
    assert batch_end_offsets(root, 3) == {("t", 0): 20, ("t", 1): 20}
    assert batch_end_offsets(root, 4) is None


def test_the_sink_state_survives_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "sink" / "topic-sink.json"
    state = SinkState.load(path)
    assert (state.committed, state.pending) == (-1, None)
    state.pending = {"batch": 4, "log_end": {"0": 17}}
    state.save()
    assert SinkState.load(path).pending == {"batch": 4, "log_end": {"0": 17}}
    assert [p.name for p in path.parent.iterdir()] == ["topic-sink.json"]  # no temporary file left


def test_sequence_headers_name_each_rows_place_and_keep_its_own_headers() -> None:
    header_type = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    table = pa.table(
        {
            "value": [b"a", b"b", b"c"],
            "headers": pa.array([[{"key": "trace", "value": b"1"}], None, None], header_type),
        }
    )
    chosen = with_sequence_headers(table, "7/3/", [0, 2])
    assert chosen.column("value").to_pylist() == [b"a", b"c"]
    assert chosen.column("headers").to_pylist() == [
        [{"key": "trace", "value": b"1"}, {"key": SEQUENCE_HEADER, "value": b"7/3/0"}],
        [{"key": SEQUENCE_HEADER, "value": b"7/3/2"}],
    ]
    plain = with_sequence_headers(pa.table({"value": [b"x"]}), "7/4/", [0])
    assert plain.column("headers").to_pylist() == [[{"key": SEQUENCE_HEADER, "value": b"7/4/0"}]]


def test_stream_parameters_are_checked() -> None:
    parameters = parameters_from_json(
        stream_topic_sql.Parameters,
        {"source": {"topic": "t", "max_offsets_per_trigger": 50}, "target_topic": "u"},
    )
    assert parameters.source == StreamSource("t", max_offsets_per_trigger=50)
    with pytest.raises(ValueError, match="max_offsets_per_trigger"):
        StreamSource("t", max_offsets_per_trigger=0)
    with pytest.raises(ValueError, match="unknown parameters: ending_offsets"):
        parameters_from_json(
            stream_topic_sql.Parameters, {"source": {"topic": "t", "ending_offsets": "latest"}}
        )
    assert trigger_interval(1.5) == "1500 milliseconds"
    with pytest.raises(ValueError, match="trigger_seconds"):
        trigger_interval(0)
