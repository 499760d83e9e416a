"""Request ids on every answer, and JSON bodies nested too deep for the parsers refused as a 400."""

import io
import json
import logging

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.exceptions import ParseError

from controlplane.core.json_limits import (
    MAX_JSON_DEPTH,
    BoundedJSONParser,
    TooDeeplyNested,
    loads_bounded,
    nesting_depth,
)
from controlplane.core.request_ids import RequestIdLogFilter, RequestIdMiddleware, current_request_id


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def test_it_measures_nesting_outside_strings_only() -> None:
    assert nesting_depth(b'{"a": [1, {"b": "[[[[{{{"}]}') == 3
    assert nesting_depth(b'"just a string with ] and ["') == 0
    assert nesting_depth(b'{"escaped \\" [": [[]]}') == 3


def test_the_api_parser_refuses_deep_nesting_as_a_parse_error() -> None:
    with pytest.raises(ParseError, match="nested 5000 levels deep"):
        BoundedJSONParser().parse(io.BytesIO(nested(5000)), "application/json", {})
    within = nested(MAX_JSON_DEPTH)
    assert BoundedJSONParser().parse(io.BytesIO(within), "application/json", {}) == json.loads(within)


def test_the_registry_loader_refuses_deep_nesting_as_a_value_error() -> None:
    with pytest.raises(TooDeeplyNested):
        loads_bounded(b'{"schema": ' + nested(1000) + b"}")
    assert loads_bounded('{"schema": "x"}') == {"schema": "x"}


def test_every_answer_carries_a_request_id_that_log_lines_of_the_request_carry_too() -> None:
    seen: dict[str, str] = {}
    log_filter = RequestIdLogFilter()

    def view(request):
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", (), None)
        log_filter.filter(record)
        seen["inside"], seen["log"] = current_request_id(), record.request_id
        return HttpResponse("ok")

    middleware = RequestIdMiddleware(view)
    response = middleware(RequestFactory().get("/api/v1/topics/"))
    assert len(response["X-Request-ID"]) == 32
    assert seen == {"inside": response["X-Request-ID"], "log": response["X-Request-ID"]}
    assert current_request_id() == ""

    kept = middleware(RequestFactory().get("/", HTTP_X_REQUEST_ID="proxy-id-1234"))
    assert kept["X-Request-ID"] == "proxy-id-1234"
    replaced = middleware(RequestFactory().get("/", HTTP_X_REQUEST_ID="bad id\nwith newline"))
    assert replaced["X-Request-ID"] != "bad id\nwith newline"
