import redis
from django.db import OperationalError as DatabaseOperationalError
from django.http import Http404
from kombu.exceptions import OperationalError
from rest_framework import exceptions

from controlplane.core import request_ids
from controlplane.core.api.errors import error_response_handler


def test_it_wraps_validation_errors_with_field_details() -> None:
    response = error_response_handler(exceptions.ValidationError({"name": ["This field is required."]}), {})

    assert response.status_code == 400
    assert response.data == {
        "error": {
            "code": "invalid",
            "message": "The request is not valid.",
            "details": {"name": ["This field is required."]},
            "request_id": "",  # outside a request; the middleware sets it for every request
        }
    }


def test_it_maps_not_found_to_the_error_shape() -> None:
    response = error_response_handler(Http404("secret detail"), {})

    assert response.status_code == 404
    assert response.data["error"]["code"] == "not_found"
    assert "secret" not in str(response.data)


def test_it_keeps_the_throttle_wait_in_the_details() -> None:
    response = error_response_handler(exceptions.Throttled(wait=12), {})

    assert response.status_code == 429
    assert response.data["error"]["code"] == "throttled"
    assert response.data["error"]["details"] == {"retry_after_seconds": 12}


def test_an_unexpected_error_is_a_500_in_the_error_shape_with_the_request_id_and_is_logged(caplog) -> None:
    token = request_ids._current.set("req-1234abcd")
    try:
        response = error_response_handler(RuntimeError("boom: secret detail"), {})
    finally:
        request_ids._current.reset(token)

    assert response.status_code == 500
    assert response.data["error"]["code"] == "internal_error"
    assert response.data["error"]["request_id"] == "req-1234abcd"
    assert "secret" not in str(response.data)
    (record,) = [r for r in caplog.records if r.name == "controlplane.core.api.errors"]
    assert record.exc_info[1].args == ("boom: secret detail",)


def test_a_locked_or_unreachable_database_is_a_503() -> None:
    response = error_response_handler(DatabaseOperationalError("database is locked"), {})

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.data["error"]["code"] == "service_unavailable"


def test_an_unreachable_redis_is_a_503_not_a_500() -> None:
    response = error_response_handler(redis.ConnectionError("Error 111 connecting to 127.0.0.1:6390."), {})

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.data["error"]["code"] == "service_unavailable"
    assert "Redis" in response.data["error"]["message"]


def test_an_unreachable_task_queue_is_a_503() -> None:
    response = error_response_handler(OperationalError("Error 111 connecting to 127.0.0.1:6390."), {})

    assert response.status_code == 503
    assert response.data["error"]["code"] == "service_unavailable"
