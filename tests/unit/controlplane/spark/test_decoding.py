"""The parts of decode_values that need no registry: values without the framing, and null values."""

import pyarrow as pa
import pytest

from controlplane.schemas.wire import UndecodablePayload
from controlplane.spark.decoding import RegistryDecoder, decode_batch


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
    with pytest.raises(UndecodablePayload):
        decode_batch(batch, "value", RegistryDecoder("http://127.0.0.1:9"), fail_on_error=True)
