"""The parts of decode_values that need no registry: framing, Protobuf message indexes, null values."""

import pyarrow as pa
import pytest

from controlplane.spark.decoding import RegistryDecoder, UndecodableValue, decode_batch, message_indexes


def test_message_indexes_read_a_lone_zero_as_the_first_message() -> None:
    assert message_indexes(b"\x00rest") == ([0], 1)


def test_message_indexes_read_a_count_then_zig_zag_indexes() -> None:
    # count 2, then indexes 1 and 3 (zig-zag: 2 and 6)
    assert message_indexes(bytes([4, 2, 6]) + b"msg") == ([1, 3], 3)


def test_message_indexes_refuse_a_cut_short_path() -> None:
    with pytest.raises(UndecodableValue, match="cut short"):
        message_indexes(bytes([4, 2]))


def test_a_batch_gets_schema_id_decoded_and_error_columns_without_failing_on_bad_values() -> None:
    # Nothing here is framed, so the registry (at an address nobody listens on) is never asked.
    decoder = RegistryDecoder("http://127.0.0.1:9")
    batch = pa.RecordBatch.from_pydict({"value": pa.array([None, b"plain", b"\x01abcd"], pa.binary())})
    decoded = decode_batch(batch, "value", decoder, fail_on_error=False)
    assert decoded.schema.names == ["value", "schema_id", "decoded", "decode_error"]
    assert decoded.column("schema_id").to_pylist() == [None, None, None]
    assert decoded.column("decoded").to_pylist() == [None, None, None]
    errors = decoded.column("decode_error").to_pylist()
    assert errors[0] is None
    assert all("not framed" in error for error in errors[1:])


def test_a_bad_value_fails_the_batch_when_asked_to() -> None:
    batch = pa.RecordBatch.from_pydict({"value": pa.array([b"plain"], pa.binary())})
    with pytest.raises(UndecodableValue):
        decode_batch(batch, "value", RegistryDecoder("http://127.0.0.1:9"), fail_on_error=True)
