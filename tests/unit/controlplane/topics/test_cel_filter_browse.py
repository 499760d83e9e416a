"""The message browser's cursor and its CEL filter sandbox, without a broker."""

import base64
import json

import pytest

from controlplane.core.errors import ServiceError
from controlplane.kafka.reader import Record, merged
from controlplane.topics import cel_filter
from controlplane.topics.browsing import Cursor
from controlplane.topics.cel_filter import FilterError, FilterSandbox, check_expression, record_tuple


def test_a_cursor_goes_back_and_forth_and_only_its_own_shape_is_taken() -> None:
    cursor = Cursor("forward", {0: [5, 7, 10], 2: [0, 3, 3]}, scanned=12, bytes_scanned=400, matched=2)
    again = Cursor.decode(cursor.encode(), partition_count=3)
    assert again == cursor
    forged = [
        "not base64 !",
        base64.urlsafe_b64encode(b"[]").decode(),
        Cursor("forward", {5: [0, 0, 1]}).encode(),  # no partition 5
        Cursor("forward", {0: [4, 2, 9]}).encode(),  # position before its window
        Cursor("sideways", {0: [0, 0, 1]}).encode(),
        Cursor("tail", {0: [1, 2, 3]}).encode(),
        base64.urlsafe_b64encode(
            json.dumps({"k": "tail", "p": {"0": [-1]}, "n": 0, "b": 0, "m": 0}).encode()
        ).decode(),
    ]
    for text in forged:
        with pytest.raises(ServiceError) as refused:
            Cursor.decode(text, partition_count=3)
        assert refused.value.code == "invalid_cursor"


def test_expressions_too_long_or_nested_too_deep_are_refused_before_parsing() -> None:
    check_expression('value.name == "((((((((((((((((((((((((((((((((((((((("')  # brackets in a string
    with pytest.raises(FilterError) as deep:
        check_expression("(" * 33 + "1" + ")" * 33)
    assert (deep.value.code, deep.value.line, deep.value.column) == ("invalid_filter", 1, 33)
    with pytest.raises(FilterError):
        check_expression("true || " * 300 + "true")


def test_the_sandbox_evaluates_decoded_json_text_and_headers_and_counts_failures() -> None:
    records = [
        record_tuple(
            partition=1,
            offset=n,
            timestamp_ms=1_700_000_000_000 + n,
            size=10,
            key=f"order-{n}".encode(),
            value=json.dumps({"amount": n}).encode(),
            headers=[("source", b"web" if n % 2 else b"app")],
        )
        for n in range(10)
    ]
    records.append(
        record_tuple(
            partition=1,
            offset=10,
            timestamp_ms=0,
            size=3,
            key=None,
            value=b"\x00raw",
            headers=[],
            decoded_value=({"amount": 7}, b"\x00raw"),
        )
    )
    with FilterSandbox('value.amount >= 7 && headers["source"] == "web"') as sandbox:
        sandbox.submit(records)
        result = sandbox.result()
    assert result.matches == [7, 9]
    # The decoded record has no headers: the lookup fails, is counted, and the record does not match.
    assert result.errors == 1
    assert "source" in result.first_error

    with pytest.raises(FilterError) as refused:
        FilterSandbox("value.amount >")
    assert (refused.value.code, refused.value.line, refused.value.column) == ("invalid_filter", 1, 15)


def test_a_sandbox_is_reused_for_the_same_filter_and_a_broken_one_is_not() -> None:
    first = cel_filter.acquire("true")
    cel_filter.release(first)
    again = cel_filter.acquire("true")
    assert again is first
    again.close()
    cel_filter.release(again)
    fresh = cel_filter.acquire("true")
    assert fresh is not first
    fresh.close()


def test_merging_keeps_each_partitions_order_even_where_its_times_go_back() -> None:
    def record(partition: int, offset: int, timestamp: int) -> Record:
        return Record(partition, offset, timestamp, None, None, [])

    zero = [record(0, 0, 10), record(0, 1, 5), record(0, 2, 30)]
    one = [record(1, 0, 10), record(1, 1, 20)]
    order = [(r.partition, r.offset) for r in merged({0: zero, 1: one})]
    assert order == [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2)]
